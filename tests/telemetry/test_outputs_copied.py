"""An output folder copied with its links resolved (``cp -rL``, ``rsync -L``, a zip): ``.replicaflow/current`` is a
folder and the outputs are real files. The tool refuses before writing anything, and a switch that fails anyway
leaves no trace (telemetry/outputs.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from replicaflow.errors import ReplicaflowError
from replicaflow.telemetry.outputs import CURRENT, HOME, REPORT, SIMULATION, Commit
from tests.telemetry.test_outputs_owned import analyze_like, report_like, simulate_like

RESOLVED = "was copied with its links resolved"


def _tree(root: Path) -> dict[str, str]:
    """Every entry under ``root``: links with their target, files with their text, folders as such."""
    out = {}
    for p in sorted(root.rglob("*")):
        rel = str(p.relative_to(root))
        out[rel] = ("-> " + os.readlink(p)) if p.is_symlink() else ("dir" if p.is_dir() else p.read_bytes().hex()[:64])
    return out


def _copied(tmp_path: Path, moved: tuple[str, ...]) -> Path:
    """``cp -rL`` of a simulated, analyzed and reported output, with the refused top-level names moved away."""
    simulate_like(tmp_path / "orig", "v1")
    analyze_like(tmp_path / "orig", "a1")
    report_like(tmp_path / "orig", "r1")
    backup = tmp_path / "backup"
    shutil.copytree(tmp_path / "orig", backup, symlinks=False)
    assert not (backup / HOME / CURRENT).is_symlink()
    (tmp_path / "moved").mkdir()
    for name in moved:
        shutil.move(backup / name, tmp_path / "moved" / name)
    return backup


@pytest.mark.parametrize(("command", "moved"), [
    (report_like, REPORT),
    (simulate_like, ("telemetry", "truth", "logs", "snapshots", "analysis") + REPORT),
], ids=["report", "simulate"])
def test_a_copy_with_links_resolved_is_refused_before_anything_is_written(tmp_path, command, moved):
    backup = _copied(tmp_path, moved)
    before = _tree(backup)
    with pytest.raises(ReplicaflowError, match=rf"^{backup / HOME} {RESOLVED} .*copy outputs with `cp -a`, "
                                               rf"or remove {backup / HOME}$"):
        command(backup, "v2")
    assert _tree(backup) == before


def test_the_copy_is_named_before_the_top_level_files_it_turned_into_real_ones(tmp_path):
    """The first sentence names the cause: moving report.html away, as the old first refusal told, did not help."""
    backup = _copied(tmp_path, ())
    with pytest.raises(ReplicaflowError, match=RESOLVED):
        report_like(backup, "v2")


@pytest.mark.parametrize("entry", ["notes.txt", ".current-1-", "gen-1-1"])
def test_anything_else_in_the_home_folder_is_named(tmp_path, entry):
    simulate_like(tmp_path, "v1")
    path = tmp_path / HOME / entry
    path.write_text("mine")  # a file where replicaflow keeps links or folders
    with pytest.raises(ReplicaflowError, match=rf"^{path}: not written by replicaflow"):
        report_like(tmp_path, "r1")
    assert path.read_text() == "mine"


def test_a_dangling_current_is_still_ours(tmp_path):
    simulate_like(tmp_path, "v1")
    shutil.rmtree((tmp_path / HOME / CURRENT).resolve())
    simulate_like(tmp_path, "v2")
    assert (tmp_path / "truth" / "t" / "part-0.parquet").read_text() == "truth v2"


def test_a_switch_that_fails_undoes_what_the_commit_staged(tmp_path):
    """The switch refused (``current`` turned into a folder after the checks): no stray temporary link, no new
    generation, no new OUT/<name> link pointing at data this commit did not write."""
    simulate_like(tmp_path, "v1")
    commit = Commit(tmp_path, writes=REPORT)
    current = tmp_path / HOME / CURRENT
    gen = current.resolve()
    current.unlink()
    gen.rename(current)
    before = _tree(tmp_path)
    with pytest.raises(ReplicaflowError, match="cannot write the output"), commit.staged() as stage:
        for name in REPORT:
            (stage / name).write_text("new")
    assert _tree(tmp_path) == before


CLI = [sys.executable, "-m", "replicaflow.cli"]
GOOD = """\
name: t
duration: 10s
kafka: {version: "3.7"}
cluster: {brokers: 3}
topics: [{name: orders, partitions: 1, replication_factor: 3}]
"""


def test_the_cli_refuses_a_resolved_copy_in_one_sentence(tmp_path):
    """The probe's recipe through the real command line: simulate, ``cp -rL``, move the outputs away, retry."""
    (tmp_path / "s.yaml").write_text(GOOD)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    run = subprocess.run([*CLI, "-q", "simulate", "s.yaml", "--out", "good"], cwd=tmp_path, env=env, text=True,
                         capture_output=True, timeout=120)
    assert run.returncode == 0, run.stderr
    shutil.copytree(tmp_path / "good", tmp_path / "backup", symlinks=False)
    (tmp_path / "moved").mkdir()
    for name in SIMULATION[:2]:
        shutil.move(tmp_path / "backup" / name, tmp_path / "moved" / name)
    before = _tree(tmp_path / "backup")
    for argv in (["simulate", "s.yaml", "--out", "backup"], ["report", "backup"]):
        run = subprocess.run([*CLI, *argv], cwd=tmp_path, env=env, text=True, capture_output=True, timeout=120)
        assert run.returncode == 2 and "error: backup/.replicaflow was copied with its links resolved" in run.stderr
        assert "Traceback" not in run.stderr and len(run.stderr.strip().splitlines()) == 1, run.stderr
        assert _tree(tmp_path / "backup") == before
