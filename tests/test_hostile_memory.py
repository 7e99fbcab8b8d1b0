"""A scenario inside the replica bound that needs more memory than the machine has: one sentence naming its size,
exit status 2, no traceback and no output folder (the probe's 20,000,000 replicas under a 6 GB cap died with four
chained MemoryError tracebacks after 72 s). The engine is patched to run out of memory at once, after writing a
part of its output, so the test takes seconds; the process, its exit and its stderr are real."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = """\
name: t
duration: 10s
kafka: {version: "3.7"}
cluster: {brokers: 4}
topics: [{name: orders, partitions: 5, replication_factor: 3}]
"""
ENGINE_OUT_OF_MEMORY = """
import sys
import replicaflow.jobs.simulate as job
def out_of_memory(loaded, stage, **kw):
    (stage / "telemetry").mkdir()
    (stage / "telemetry" / "part-0.parquet").write_bytes(b"half")
    raise MemoryError
job.run_simulation = out_of_memory
from replicaflow.cli import main
sys.argv = ["replicaflow", *sys.argv[1:]]
main()
"""
LOADER_OUT_OF_MEMORY = """
import sys
import replicaflow.jobs.simulate as job
def out_of_memory(*a, **kw):
    raise MemoryError
job.load_scenario = out_of_memory
from replicaflow.cli import main
sys.argv = ["replicaflow", *sys.argv[1:]]
main()
"""


def _run(code: str, argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", code, *argv], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize("existing", [False, True], ids=["new out", "over an earlier output"])
def test_simulate_out_of_memory_is_one_sentence_and_no_output(tmp_path, existing):
    (tmp_path / "s.yaml").write_text(SCENARIO)
    if existing:
        done = _run(ENGINE_OUT_OF_MEMORY.replace("job.run_simulation = out_of_memory", ""),
                    ["-q", "simulate", "s.yaml", "--out", "out"], tmp_path)
        assert done.returncode == 0, done.stderr
        before = sorted(str(p.relative_to(tmp_path)) for p in (tmp_path / "out").rglob("*"))
    done = _run(ENGINE_OUT_OF_MEMORY, ["simulate", "s.yaml", "--out", "out"], tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == ("error: s.yaml: the scenario needs more memory than this machine has (4 brokers, "
                                   "15 replicas); reduce the partitions or brokers"), done.stderr
    if existing:
        assert sorted(str(p.relative_to(tmp_path)) for p in (tmp_path / "out").rglob("*")) == before
        assert not list((tmp_path / "out").rglob("*.tmp"))
    else:
        assert not (tmp_path / "out").exists()


def test_out_of_memory_anywhere_else_is_one_sentence(tmp_path):
    (tmp_path / "s.yaml").write_text(SCENARIO)
    done = _run(LOADER_OUT_OF_MEMORY, ["simulate", "s.yaml", "--out", "out"], tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip() == ("error: the command needs more memory than this machine has; give it smaller "
                                   "inputs (fewer partitions, brokers or files)")
    assert not (tmp_path / "out").exists()


def test_run_out_of_memory_in_the_engine_is_one_sentence_and_no_output(tmp_path):
    """`run` stages the simulation, the analysis and the report in one commit (jobs.run.run): the engine running out
    of memory, with the JVM already starting beside it, leaves the same sentence as `simulate` and no folder."""
    (tmp_path / "s.yaml").write_text(SCENARIO)
    code = ENGINE_OUT_OF_MEMORY.replace("replicaflow.jobs.simulate", "replicaflow.jobs.run")
    done = _run(code, ["run", "s.yaml", "--out", "out", "--master", "local[1]"], tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == ("error: s.yaml: the scenario needs more memory than this machine has (4 brokers, "
                                   "15 replicas); reduce the partitions or brokers"), done.stderr
    assert not (tmp_path / "out").exists()
    assert not [p for p in tmp_path.iterdir() if p.name not in ("s.yaml",)], list(tmp_path.iterdir())
