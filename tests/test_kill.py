"""Kill tests: a command killed at any instant leaves the previous complete outputs or the new complete
ones, never neither, and the next command leaves no staging folder behind (docs/outputs.md).

``REPLICAFLOW_FAULT_AT=<n>`` exits the n-th step of the commit with status 137, so every point
between two filesystem operations of the commit is tried, deterministically; one real ``kill -9``
of ``run`` (and its JVM) while Spark writes checks the work before the commit.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
from itertools import count
from pathlib import Path

import pytest

from replicaflow.sim.runner import simulate
from replicaflow.telemetry.outdir import ANALYZE, REPORT, SIMULATE, STATE

CLI = [sys.executable, "-m", "replicaflow.cli", "-q"]
TINY = """\
name: tiny
seed: {seed}
duration: {duration}
tick: 1s
scrape_interval: 5s
kafka: {{version: "3.7"}}
cluster: {{brokers: 3}}
topics:
  - {{name: t, partitions: 2, replication_factor: 3, produce_rate: 1MB/s}}
events:
  - {{at: 5s, broker_down: 2}}
  - {{at: 15s, broker_up: 2}}
"""


def scenario(tmp_path: Path, name: str, seed: int, duration: str = "30s") -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(TINY.format(seed=seed, duration=duration))
    return path


def visible(out: Path) -> dict[str, str]:
    """What a reader sees: sha256 of every file under every output name, following the links."""
    seen = {}
    for name in (*SIMULATE, *ANALYZE, *REPORT):
        top = out / name
        files = [top] if top.is_file() else sorted(p for p in top.rglob("*") if p.is_file()) if top.is_dir() else []
        for f in files:
            seen[str(f.relative_to(out))] = hashlib.sha256(f.read_bytes()).hexdigest()
    return seen


def stale(out: Path) -> list[str]:
    """Bookkeeping that should not outlive the next command: staging folders, old generations, temporaries."""
    state = out / STATE
    if not state.is_dir():
        return []
    current = os.readlink(state / "current") if (state / "current").is_symlink() else None
    return sorted(p.name for p in state.iterdir() if p.name not in ("current", "lock", current))


def every_fault(base: Path, work: Path, command: list[str], before: dict, after: dict, recover) -> int:
    """Run ``command`` on a fresh copy of ``base`` killed at step 0, 1, ... until it completes; after each
    kill the outputs are ``before`` or ``after`` whole, and ``recover(out)`` leaves no staging. Returns the
    number of kill points."""
    for step in count():
        if work.exists():
            shutil.rmtree(work)
        shutil.copytree(base, work, symlinks=True)
        env = {**os.environ, "REPLICAFLOW_FAULT_AT": str(step)}
        done = subprocess.run([*command, str(work)], env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode in (0, 137), done.stderr[-2000:]
        seen = visible(work)
        assert seen in (before, after), f"kill at step {step}: a mixed or missing output"
        if done.returncode == 0:
            assert seen == after and stale(work) == []
            return step
        recover(work)
        assert stale(work) == [], f"kill at step {step}: leftovers after the next command"


def test_simulate_killed_at_every_commit_step(tmp_path):
    old, new = scenario(tmp_path, "old", 1), scenario(tmp_path, "new", 2, "40s")
    base = tmp_path / "base"
    simulate(old, base, logs=True)
    (base / "notes.txt").write_text("mine")
    before = visible(base)
    expected = tmp_path / "expected"
    simulate(new, expected, logs=False)
    after = visible(expected)
    assert before and after and before != after

    def recover(out: Path) -> None:
        simulate(old, out, logs=True)

    # the new run drops logs/, so the unlink step is reached too
    steps = every_fault(base, tmp_path / "work", [*CLI, "simulate", str(new), "--out"], before, after, recover)
    assert steps >= 6
    assert (tmp_path / "work" / "notes.txt").read_text() == "mine"


def test_first_simulate_killed_at_every_commit_step_leaves_nothing_or_everything(tmp_path):
    new = scenario(tmp_path, "new", 2)
    base = tmp_path / "base"
    base.mkdir()
    expected = tmp_path / "expected"
    simulate(new, expected, logs=True)
    after = visible(expected)
    steps = every_fault(base, tmp_path / "work", [*CLI, "simulate", str(new), "--logs", "--out"], {}, after,
                        lambda out: simulate(new, out, logs=True))
    assert steps >= 8  # three links are created on a first run


@pytest.mark.spark
def test_report_killed_at_every_commit_step(spark, tmp_path):
    """One analysis reused: report (no Spark) is killed at every step, carrying telemetry, logs and analysis."""
    from replicaflow.pipeline.runner import analyze
    from replicaflow.report.build import build_report

    base = tmp_path / "base"
    simulate(scenario(tmp_path, "s", 1), base, logs=True)
    analyze(base, base, spark=spark)
    build_report(base, naming="strimzi")
    before = visible(base)
    expected = tmp_path / "work"  # where the killed runs go: report.html names its directory
    shutil.copytree(base, expected, symlinks=True)
    build_report(expected, naming="confluent")
    after = visible(expected)
    assert before["metrics.om"] != after["metrics.om"] and before["analysis/_summary.json"]
    steps = every_fault(base, tmp_path / "work", [*CLI, "report", "--naming", "confluent"], before, after,
                        lambda out: build_report(out, naming="strimzi"))
    assert steps >= 9


@pytest.mark.spark
def test_kill_9_of_run_and_its_jvm_while_spark_writes(tmp_path):
    """A real SIGKILL of the whole process group (Python and the JVM) in the middle of the analysis."""
    sc = scenario(tmp_path, "s", 1)
    out = tmp_path / "out"
    simulate(sc, out, logs=False)
    before = visible(out)
    proc = subprocess.Popen([*CLI, "run", str(sc), "--out", str(out)], start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 240
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            if any((out / STATE).glob("staging-*/analysis/*")):
                break
            time.sleep(0.05)
        assert proc.poll() is None, "run ended before it was killed: " + proc.stderr.read().decode()[-2000:]
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
    assert visible(out) == before
    assert [p.name.split("-")[0] for p in (out / STATE).glob("staging-*")] == ["staging"]
    simulate(sc, out, logs=False)
    assert stale(out) == [] and visible(out) == before
