"""The class archive: the JVM classes a Spark job loads, recorded once so that later JVMs map them.

A fresh `replicaflow demo` or `analyze` spends seconds loading, parsing and verifying Spark's classes
from its jars (about 16,000 of them in a demo). HotSpot can write the classes one run loaded into an archive at
its exit (``-XX:ArchiveClassesAtExit``, Java 13+) and map that archive into later JVMs
(``-XX:SharedArchiveFile``): Application Class-Data Sharing. ``replicaflow setup`` records it from the
demo's analysis (session.record_class_archive); every driver JVM started afterwards uses it, and a fresh
demo starts seconds sooner (measured in docs/pipeline.md, "The class archive").

An archive is valid for one JVM build and one set of Spark jars (the JVM checks the class path itself and
runs without an archive that does not match), so its name carries a digest of both: after an upgrade of
Java or PySpark the old one is ignored until ``replicaflow setup`` records a new one.
``REPLICAFLOW_CLASS_ARCHIVE`` names another file, or ``off`` for none.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

ARCHIVE_ENV = "REPLICAFLOW_CLASS_ARCHIVE"
PREFIX = "spark-classes-"


def java_home() -> Path | None:
    """The JDK that Spark's launcher runs: ``$JAVA_HOME/bin/java``, else ``java`` on PATH (spark-class's rule)."""
    home = os.environ.get("JAVA_HOME")
    java = Path(home, "bin", "java") if home and Path(home, "bin", "java").exists() else None
    if java is None:
        found = shutil.which("java")
        java = Path(found) if found else None
    return java.resolve().parent.parent if java is not None else None


def spark_jars() -> Path:
    """The jars Spark's JVM loads its classes from (``$SPARK_HOME/jars``, PySpark's own by default)."""
    from pyspark.find_spark_home import _find_spark_home

    return Path(_find_spark_home()) / "jars"


def digest(jdk: Path, jars: Path) -> str:
    """16 hex digits that change with the JVM build, the jars' folder (the JVM checks the class path by its
    paths: two virtual environments each need their own archive) or any Spark jar (name and size)."""
    h = hashlib.sha256(f"{jdk}\0{jars.resolve()}".encode())
    for part in ("release", "lib/server/libjvm.so", "lib/server/libjvm.dylib"):
        f = jdk / part
        if f.is_file():
            st = f.stat()
            h.update(f"{part}:{st.st_size}:{st.st_mtime_ns}".encode())
    for jar in sorted(jars.glob("*.jar")):
        h.update(f"{jar.name}:{jar.stat().st_size}".encode())
    return h.hexdigest()[:16]


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/replicaflow``, else ``~/.cache/replicaflow``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "replicaflow"


def archive_path() -> Path | None:
    """Where this JVM and these jars' archive lives; None when ``REPLICAFLOW_CLASS_ARCHIVE=off`` or no Java."""
    named = os.environ.get(ARCHIVE_ENV, "")
    if named.lower() == "off":
        return None
    if named:
        return Path(named)
    jdk = java_home()
    return cache_dir() / f"{PREFIX}{digest(jdk, spark_jars())}.jsa" if jdk is not None else None


def size_file(path: Path) -> Path:
    """The archive's expected size in bytes, written once the archive is complete: the JVM does not check that
    the file it maps is whole, and a truncated archive crashes it (SIGBUS) instead of being ignored."""
    return path.with_name(path.name + ".size")


def usable(path: Path) -> bool:
    """The archive exists and is as long as when it was recorded."""
    try:
        return path.stat().st_size == int(size_file(path).read_text())
    except (OSError, ValueError):
        return False


def use_option() -> str:
    """The driver JVM option that maps the archive, when a whole one has been recorded; else nothing."""
    path = archive_path()
    return f"-XX:SharedArchiveFile={path}" if path is not None and usable(path) else ""


def record_option(tmp: Path) -> str:
    """The JVM option that writes the classes it loaded into ``tmp`` when it exits."""
    return f"-XX:ArchiveClassesAtExit={tmp}"


def jars_file(path: Path) -> Path:
    """The Spark jars' folder the archive was recorded for: another virtual environment's archive lies in the
    same cache folder under another digest, and is not this one's to remove."""
    return path.with_name(path.name + ".jars")


def stale(path: Path) -> list[Path]:
    """The other archives replicaflow recorded beside ``path`` for this install's jars (older JVMs or jars) or for
    jars that are gone, with their size and jars files: ``replicaflow setup`` removes them. An archive of
    another virtual environment that still exists is kept, as is anything but replicaflow's own files, and
    only in replicaflow's own cache folder: a file that ``REPLICAFLOW_CLASS_ARCHIVE`` names lies among files
    replicaflow did not write. An archive recorded before its jars' folder was noted counts as this
    install's."""
    if path.parent != cache_dir() or not path.name.startswith(PREFIX):
        return []
    here = str(spark_jars().resolve())
    out: list[Path] = []
    for archive in sorted(path.parent.glob(f"{PREFIX}*.jsa")):
        if archive == path:
            continue
        try:
            jars = jars_file(archive).read_text().strip()
        except OSError:
            jars = here
        if jars == here or not Path(jars).is_dir():
            out += [p for p in (archive, size_file(archive), jars_file(archive)) if p.exists()]
    for pattern in (f"{PREFIX}*.jsa.size", f"{PREFIX}*.jsa.jars"):  # left by an archive removed by hand
        out += [p for p in sorted(path.parent.glob(pattern)) if not p.with_suffix("").exists()]
    return out
