"""One atomic commit per command (telemetry/outdir.py): all outputs or none, only the tool's own files
replaced, a path in the way named before any work, leftovers of killed runs collected."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from replicaflow.errors import ReplicaflowError
from replicaflow.telemetry.outdir import ANALYZE, REPORT, SIMULATE, STATE, output


def simulate_like(out: Path, version: str, logs: bool = True) -> None:
    writes = SIMULATE if logs else ("telemetry", "truth")
    with output(out, writes, drops=SIMULATE) as staging:
        for name in writes:
            (staging / name / "t").mkdir(parents=True)
            (staging / name / "t" / "part.parquet").write_text(f"{name} {version}")


def analyze_like(out: Path, version: str) -> None:
    with output(out, ANALYZE) as staging:
        (staging / "analysis").mkdir()
        (staging / "analysis" / "_summary.json").write_text(version)


def report_like(out: Path, version: str) -> None:
    with output(out, REPORT) as staging:
        for name in REPORT:
            (staging / name).write_text(version)


def leftovers(out: Path) -> list[str]:
    """Everything in the bookkeeping folder except the current generation, its link and the lock."""
    state = out / STATE
    current = os.readlink(state / "current") if (state / "current").is_symlink() else None
    return sorted(p.name for p in state.iterdir() if p.name not in ("current", "lock", current))


def test_all_outputs_appear_together_and_others_are_carried(tmp_path):
    simulate_like(tmp_path, "v1")
    analyze_like(tmp_path, "a1")
    report_like(tmp_path, "r1")
    assert (tmp_path / "telemetry" / "t" / "part.parquet").read_text() == "telemetry v1"
    assert (tmp_path / "analysis" / "_summary.json").read_text() == "a1"
    assert (tmp_path / "report.html").read_text() == "r1"
    simulate_like(tmp_path, "v2", logs=False)
    assert (tmp_path / "truth" / "t" / "part.parquet").read_text() == "truth v2"
    assert not (tmp_path / "logs").exists() and not (tmp_path / "logs").is_symlink()  # dropped with the old run
    assert (tmp_path / "analysis" / "_summary.json").read_text() == "a1"             # carried, untouched
    assert (tmp_path / "summary.json").read_text() == "r1"
    assert leftovers(tmp_path) == []


def test_a_failing_command_leaves_the_previous_outputs_and_no_staging(tmp_path):
    simulate_like(tmp_path, "v1")
    with pytest.raises(RuntimeError), output(tmp_path, SIMULATE, drops=SIMULATE) as staging:
        (staging / "telemetry").mkdir()
        (staging / "telemetry" / "half").write_text("x")
        raise RuntimeError("the logs could not be rendered")
    assert (tmp_path / "telemetry" / "t" / "part.parquet").read_text() == "telemetry v1"
    assert (tmp_path / "logs" / "t" / "part.parquet").read_text() == "logs v1"
    assert not (tmp_path / "telemetry" / "half").exists() and leftovers(tmp_path) == []


def _put(path: Path, text: str = "mine") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.mark.parametrize(("user_file", "command", "named"), [
    ("logs/kafka-0/server.log", simulate_like, "logs/kafka-0/server.log"),
    ("telemetry", simulate_like, "telemetry"),
    ("analysis/notes.md", analyze_like, "analysis/notes.md"),
    ("report.html", report_like, "report.html"),
    ("summary.json", report_like, "summary.json"),
])
def test_a_foreign_path_in_the_way_is_named_before_any_work(tmp_path, user_file, command, named):
    _put(tmp_path / user_file)
    with pytest.raises(ReplicaflowError, match=rf"^{tmp_path / named}: not written by replicaflow"):
        command(tmp_path, "v1")
    assert (tmp_path / user_file).read_text() == "mine" and leftovers(tmp_path) == []


def test_a_file_put_into_an_output_of_the_tool_is_named_and_kept(tmp_path):
    simulate_like(tmp_path, "v1")
    _put(tmp_path / "telemetry" / "scenario.yaml")
    with pytest.raises(ReplicaflowError, match=r"telemetry/scenario.yaml: not written by replicaflow"):
        simulate_like(tmp_path, "v2")
    assert (tmp_path / "telemetry" / "scenario.yaml").read_text() == "mine"
    analyze_like(tmp_path, "a1")  # analyze does not replace telemetry/: the file is carried along
    assert (tmp_path / "telemetry" / "scenario.yaml").read_text() == "mine"


def test_user_files_elsewhere_survive_every_command(tmp_path):
    _put(tmp_path / "notes.txt")
    _put(tmp_path / "scenarios" / "mine.yaml")
    for command in (simulate_like, analyze_like, report_like, simulate_like):
        command(tmp_path, "v")
    assert (tmp_path / "notes.txt").read_text() == "mine"
    assert (tmp_path / "scenarios" / "mine.yaml").read_text() == "mine"


def test_simulate_without_logs_leaves_a_users_logs_folder_alone(tmp_path):
    _put(tmp_path / "logs" / "kafka-0" / "server.log")
    simulate_like(tmp_path, "v1", logs=False)
    assert (tmp_path / "logs" / "kafka-0" / "server.log").read_text() == "mine"


def test_output_that_is_a_file_or_unwritable_is_one_sentence(tmp_path):
    _put(tmp_path / "afile")
    with pytest.raises(ReplicaflowError, match=rf"^{tmp_path / 'afile'}: is a file, not a directory"):
        simulate_like(tmp_path / "afile", "v1")
    with pytest.raises(ReplicaflowError, match=r"afile/sub: cannot write the output \(Not a directory\)"):
        simulate_like(tmp_path / "afile" / "sub", "v1")
    _put(tmp_path / "x" / STATE)
    with pytest.raises(ReplicaflowError, match=r"\.replicaflow: not written by replicaflow"):
        simulate_like(tmp_path / "x", "v1")


def test_unwritable_output_is_one_sentence(tmp_path):
    if os.geteuid() == 0:  # root writes through permission bits; /sys refuses even root
        target = Path("/sys/replicaflow-test-out")
    else:
        (tmp_path / "ro").mkdir()
        (tmp_path / "ro").chmod(0o555)
        target = tmp_path / "ro" / "out"
    with pytest.raises(ReplicaflowError, match=r": cannot write the output \((Permission denied|Operation not "
                                               r"permitted|Read-only file system)\)$"):
        simulate_like(target, "v1")


def test_leftovers_of_killed_runs_are_collected_by_the_next_command(tmp_path):
    simulate_like(tmp_path, "v1")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    state = tmp_path / STATE
    (state / f"staging-{pid}-00000000" / "telemetry").mkdir(parents=True)
    (state / f"gen-{pid}-11111111" / "telemetry").mkdir(parents=True)
    os.symlink("gen-x", state / f"current.tmp-{pid}-22222222")
    live = state / f"staging-{os.getpid()}-33333333"  # a run still going: not touched
    live.mkdir()
    os.symlink(f"{STATE}/current/analysis", tmp_path / "analysis")  # a link left by a kill, dangling
    analyze_like(tmp_path, "a1")
    assert leftovers(tmp_path) == [live.name]
    simulate_like(tmp_path, "v2", logs=False)
    os.symlink(f"{STATE}/current/logs", tmp_path / "logs")
    report_like(tmp_path, "r1")
    assert not (tmp_path / "logs").is_symlink()
