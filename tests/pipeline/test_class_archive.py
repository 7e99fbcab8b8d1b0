"""The class archive that `replicaflow setup` records and later driver JVMs map (pipeline/class_archive.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from replicaflow.pipeline import class_archive as CA
from replicaflow.pipeline.session import JAVA_OPTIONS, java_options


def fake_install(root: Path) -> tuple[Path, Path]:
    jdk, jars = root / "jdk", root / "jars"
    (jdk / "lib" / "server").mkdir(parents=True)
    (jdk / "release").write_text('JAVA_VERSION="17.0.15"\n')
    (jdk / "lib" / "server" / "libjvm.so").write_bytes(b"x" * 10)
    jars.mkdir()
    (jars / "spark-core.jar").write_bytes(b"a" * 5)
    return jdk, jars


def test_the_archive_name_changes_with_the_jvm_build_and_the_spark_jars(tmp_path):
    """An archive is valid for one JVM build and one class path (HotSpot's ``FileMapInfo::validate_shared_path_table``
    refuses another): the digest in its name follows the JDK's release file and libjvm, the jars' folder and every
    jar's name and size, so an upgrade of either, or another virtual environment, gets a new name instead of a
    mismatched archive."""
    jdk, jars = fake_install(tmp_path)
    first = CA.digest(jdk, jars)
    assert first == CA.digest(jdk, jars) and len(first) == 16
    (jars / "spark-sql.jar").write_bytes(b"b")
    added = CA.digest(jdk, jars)
    (jars / "spark-sql.jar").write_bytes(b"bb")
    resized = CA.digest(jdk, jars)
    (jdk / "release").write_text('JAVA_VERSION="17.0.16"\n')
    upgraded = CA.digest(jdk, jars)
    other_venv = tmp_path / "other" / "jars"
    shutil.copytree(jars, other_venv)
    assert len({first, added, resized, upgraded, CA.digest(jdk, other_venv)}) == 5


def test_where_the_archive_lives(tmp_path, monkeypatch):
    """``REPLICAFLOW_CLASS_ARCHIVE`` names the file or turns it off; else the user's cache folder, named by digest."""
    monkeypatch.setenv(CA.ARCHIVE_ENV, "off")
    assert CA.archive_path() is None and CA.use_option() == ""
    monkeypatch.setenv(CA.ARCHIVE_ENV, str(tmp_path / "mine.jsa"))
    assert CA.archive_path() == tmp_path / "mine.jsa"
    monkeypatch.delenv(CA.ARCHIVE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    path = CA.archive_path()
    assert path.parent == tmp_path / "cache" / "replicaflow"
    assert path.name == f"{CA.PREFIX}{CA.digest(CA.java_home(), CA.spark_jars())}.jsa"


def test_only_a_whole_archive_is_used(tmp_path, monkeypatch):
    """HotSpot maps the archive without checking that the file is whole, and a truncated one killed the JVM
    with SIGBUS in ``FileMapInfo::relocate_pointers_in_core_regions``; so an archive is used only when its
    size file, written after the JVM finished writing it, matches."""
    path = tmp_path / f"{CA.PREFIX}0123456789abcdef.jsa"
    monkeypatch.setenv(CA.ARCHIVE_ENV, str(path))
    assert CA.use_option() == ""
    path.write_bytes(b"\0" * 100)
    assert CA.use_option() == ""  # no size file: the recording did not finish
    CA.size_file(path).write_text("100")
    assert CA.use_option() == f"-XX:SharedArchiveFile={path}"
    path.write_bytes(b"\0" * 60)  # truncated
    assert CA.use_option() == ""
    CA.size_file(path).write_text("sixty")
    assert CA.use_option() == ""


def test_setup_removes_only_its_own_older_archives(tmp_path, monkeypatch):
    """Archives of older JVMs or jars, and their size files, in replicaflow's cache folder are its own; nothing
    else there is, and nothing beside an archive that ``REPLICAFLOW_CLASS_ARCHIVE`` names elsewhere."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    ours, elsewhere = tmp_path / "replicaflow", tmp_path / "elsewhere"
    for folder in (ours, elsewhere):
        folder.mkdir()
        for name in (f"{CA.PREFIX}aaaa.jsa", f"{CA.PREFIX}aaaa.jsa.size", f"{CA.PREFIX}bbbb.jsa",
                     f"{CA.PREFIX}bbbb.jsa.size", "other.jsa", "notes.txt"):
            (folder / name).write_text("x")
    stale = CA.stale(ours / f"{CA.PREFIX}aaaa.jsa")
    assert sorted(p.name for p in stale) == [f"{CA.PREFIX}bbbb.jsa", f"{CA.PREFIX}bbbb.jsa.size"]
    assert {p.parent for p in stale} == {ours}
    assert CA.stale(elsewhere / f"{CA.PREFIX}aaaa.jsa") == []
    assert CA.stale(ours / "named-by-the-user.jsa") == []


def test_setup_keeps_the_archive_of_another_virtual_environment(tmp_path, monkeypatch):
    """Two virtual environments' archives share the cache folder under two digests (their jars' paths differ).
    Recording one must not remove the other while its jars are there (before, it did: a CI clone's setup took
    the archive of the checkout beside it); an archive whose jars are gone, or that was recorded for this
    install's jars (a PySpark upgraded in place), is removed with its size and jars files, and so are the size
    and jars files of an archive removed by hand."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cache, other_venv = tmp_path / "replicaflow", tmp_path / "venv2" / "jars"
    cache.mkdir()
    other_venv.mkdir(parents=True)
    here = str(CA.spark_jars().resolve())
    for name, jars in (("ours", here), ("older", here), ("other", str(other_venv)), ("gone", str(tmp_path / "nope"))):
        archive = cache / f"{CA.PREFIX}{name}.jsa"
        archive.write_text("x")
        CA.size_file(archive).write_text("1")
        CA.jars_file(archive).write_text(jars + "\n")
    (cache / f"{CA.PREFIX}byhand.jsa.size").write_text("1")
    stale = CA.stale(cache / f"{CA.PREFIX}ours.jsa")
    removed = [f"{CA.PREFIX}{n}.jsa{s}" for n in ("older", "gone") for s in ("", ".size", ".jars")]
    assert sorted(p.name for p in stale) == sorted([*removed, f"{CA.PREFIX}byhand.jsa.size"])


def test_the_archive_option_comes_before_the_users_options():
    """``REPLICAFLOW_JAVA_OPTIONS`` still comes last and wins (a ``-XX:SharedArchiveFile`` of the user's own)."""
    assert java_options(archive="-XX:SharedArchiveFile=/a.jsa") == f"{JAVA_OPTIONS} -XX:SharedArchiveFile=/a.jsa"
    assert java_options(archive="") == JAVA_OPTIONS


RECORD = """
import sys
from replicaflow.pipeline.session import record_class_archive
def train(spark):
    assert spark.range(1000).selectExpr("id % 7 as k").groupBy("k").count().count() == 7
print(record_class_archive(train))
"""

USE = """
from replicaflow.pipeline.session import get_spark
spark = get_spark()
assert spark.range(10).count() == 10
"""


def loaded_from(log: Path, cls: str) -> str:
    """Where ``-Xlog:class+load`` says the JVM took ``cls`` from."""
    for line in log.read_text().splitlines():
        if f" {cls} source: " in line:
            return line.split(" source: ", 1)[1]
    raise AssertionError(f"{cls} not in {log}")


@pytest.mark.slow
def test_a_recorded_archive_serves_the_next_jvm_and_a_truncated_one_is_left_alone(tmp_path):
    """Application Class-Data Sharing (JEP 350, dynamic archives): a JVM started with ``-XX:ArchiveClassesAtExit``
    writes the classes it loaded when it exits (``DynamicArchive::dump``, at PySpark's gateway server's
    ``System.exit`` once its stdin closes), and a JVM started with ``-XX:SharedArchiveFile`` takes them from
    the archive instead of the jars. A truncated archive is not passed to the JVM, which starts as before."""
    archive = tmp_path / f"{CA.PREFIX}test.jsa"
    env = {**os.environ, CA.ARCHIVE_ENV: str(archive), "REPLICAFLOW_SPARK_LOG": str(tmp_path / "jvm.log")}
    env.pop("REPLICAFLOW_JAVA_OPTIONS", None)
    done = subprocess.run([sys.executable, "-c", RECORD], env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == str(archive)
    assert CA.usable(archive) and archive.stat().st_size > 10_000_000
    assert CA.jars_file(archive).read_text().strip() == str(CA.spark_jars().resolve())
    assert [p.name for p in tmp_path.glob(".*.tmp")] == []

    def start(path: Path, log: Path) -> str:
        use = {**env, CA.ARCHIVE_ENV: str(path), "REPLICAFLOW_JAVA_OPTIONS": f"-Xlog:class+load=info:file={log}"}
        done = subprocess.run([sys.executable, "-c", USE], env=use, cwd=tmp_path, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        return loaded_from(log, "org.apache.spark.SparkContext")

    assert start(archive, tmp_path / "mapped.log") == "shared objects file (top)"
    # a copy: the JVM above may still be exiting, and a mapped file cut short under it kills it (SIGBUS)
    truncated = tmp_path / f"{CA.PREFIX}truncated.jsa"
    truncated.write_bytes(archive.read_bytes()[: archive.stat().st_size // 2])
    CA.size_file(truncated).write_text(str(archive.stat().st_size))
    assert start(truncated, tmp_path / "truncated.log").startswith(("jar:", "file:"))
    assert list(tmp_path.glob("hs_err_pid*.log")) == []


def test_setup_if_missing_keeps_a_whole_archive_and_starts_nothing(tmp_path, monkeypatch):
    """`replicaflow setup --if-missing` (run by `make install`, `make test` and `make demo`) returns at once
    when this JVM and these jars already have a whole archive."""
    from replicaflow.jobs.setup import setup

    path = tmp_path / f"{CA.PREFIX}kept.jsa"
    path.write_bytes(b"\0" * 10)
    CA.size_file(path).write_text("10")
    monkeypatch.setenv(CA.ARCHIVE_ENV, str(path))
    assert setup(progress=False, if_missing=True) == (path, False)
    assert path.read_bytes() == b"\0" * 10
