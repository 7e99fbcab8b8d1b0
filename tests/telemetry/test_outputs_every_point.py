"""Kill a commit at every point between two of its filesystem operations, one after the other
(``REPLICAFLOW_FAULT_AT=#n``): a reader always sees the whole previous outputs or the whole new ones,
and the next command leaves nothing behind -- no staging folder, no temporary link, in OUT or in
OUT/.replicaflow (telemetry/outputs.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from itertools import count
from pathlib import Path

import pytest

from replicaflow.telemetry.outputs import ANALYSIS, HOME, REPORT, SIMULATION
from tests.telemetry.test_outputs import SCENARIO, digest
from tests.telemetry.test_outputs_owned import analyze_like, report_like

pytestmark = pytest.mark.slow
NAMES = (*SIMULATION, *ANALYSIS, *REPORT)
CLI = [sys.executable, "-m", "replicaflow.cli", "-q"]


def cli(*args, fault: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "REPLICAFLOW_FAULT_AT"}
    if fault is not None:
        env["REPLICAFLOW_FAULT_AT"] = fault
    return subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, env=env, timeout=300)


def bookkeeping(out: Path) -> list[str]:
    """Everything of the tool's besides the current generation, its link and the links of its outputs."""
    home = out / HOME
    current = os.readlink(home / "current") if (home / "current").is_symlink() else None
    stray = [p.name for p in home.iterdir() if p.name not in ("current", current)] if home.is_dir() else []
    return sorted(stray + [p.name for p in out.iterdir() if p.name.startswith(".") and p.name != HOME])


def test_simulate_over_a_whole_run_killed_at_every_point(tmp_path):
    old, new = tmp_path / "old.yaml", tmp_path / "new.yaml"
    old.write_text(SCENARIO.format(duration="1m"))
    new.write_text(SCENARIO.format(duration="90s"))
    base = tmp_path / "base"
    assert cli("simulate", old, "--out", base, "--logs").returncode == 0
    analyze_like(base, "a1")
    report_like(base, "r1")
    (base / "notes.txt").write_text("mine")
    before = digest(base, NAMES)
    reference = tmp_path / "reference"
    shutil.copytree(base, reference, symlinks=True)
    # the new run has no --logs: it replaces telemetry and truth and drops logs, analysis and report
    assert cli("simulate", new, "--out", reference).returncode == 0
    after = digest(reference, NAMES)
    assert after and before != after and not any(k.startswith(("logs", "analysis", "report")) for k in after)
    work = tmp_path / "work"
    for point in count():
        if work.exists():
            shutil.rmtree(work)
        shutil.copytree(base, work, symlinks=True)
        done = cli("simulate", new, "--out", work, fault=f"#{point}")
        assert done.returncode in (0, 137), done.stderr[-2000:]
        assert digest(work, NAMES) in (before, after), f"killed at point {point}: neither the old nor the new whole"
        if done.returncode == 0:
            assert digest(work, NAMES) == after and bookkeeping(work) == []
            assert (work / "notes.txt").read_text() == "mine"
            break
        assert cli("simulate", old, "--out", work, "--logs").returncode == 0, f"point {point}: the next run failed"
        assert bookkeeping(work) == [], f"killed at point {point}: left behind after the next command"
        assert (work / "notes.txt").read_text() == "mine"
    assert point >= 12  # carry, seal, links, switch and each removal are separate points


def test_a_first_run_killed_at_every_point_leaves_nothing_or_everything(tmp_path):
    scenario = tmp_path / "s.yaml"
    scenario.write_text(SCENARIO.format(duration="1m"))
    reference = tmp_path / "reference"
    assert cli("simulate", scenario, "--out", reference, "--logs").returncode == 0
    after = digest(reference, NAMES)
    for point in count():
        work = tmp_path / f"work{point}"
        work.mkdir()
        done = cli("simulate", scenario, "--out", work, "--logs", fault=f"#{point}")
        assert digest(work, NAMES) in ({}, after), f"killed at point {point}: part of the outputs"
        if done.returncode == 0:
            break
        assert done.returncode == 137, done.stderr[-2000:]
        assert cli("simulate", scenario, "--out", work, "--logs").returncode == 0
        assert digest(work, NAMES) == after and bookkeeping(work) == [], f"killed at point {point}: leftovers"
    assert point >= 8  # three links are created, each its own point
