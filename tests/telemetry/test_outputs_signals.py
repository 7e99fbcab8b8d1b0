"""Ctrl-C (SIGINT to the process group, as a terminal sends it) and SIGTERM (``kill``, ``timeout``, a service
manager) stop a command with nothing of its outputs left behind: no output folder it created, no staging
generation, the previous outputs as they were; no traceback; exit 130 and 143 (telemetry/outputs.py, cli.main).
``simulate`` needs no Spark, and its commit is the one every command uses."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from replicaflow.telemetry.outputs import HOME
from tests.telemetry.test_outputs import SCENARIO, _cli, _leftovers, digest

BIN = Path(sys.executable).parent / "replicaflow"
# 2 h of 30 partitions: ~10 s of simulation on 2 cores, so the signal lands while the engine runs
LONG = SCENARIO.format(duration="2h").replace("partitions: 3,", "partitions: 30,")


def _signalled_mid_simulate(scenario: Path, out: Path, sig: int, group: bool) -> subprocess.CompletedProcess:
    """Start ``simulate``, wait until its staging generation exists (the engine runs from then on), signal it."""
    proc = subprocess.Popen([str(BIN), "simulate", str(scenario), "--out", str(out)], start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while time.time() < deadline and proc.poll() is None and not any(out.glob(f"{HOME}/gen-*.tmp")):
        time.sleep(0.02)
    time.sleep(0.5)
    assert proc.poll() is None, "simulate ended before it could be signalled"
    (os.killpg if group else os.kill)(proc.pid, sig)
    stdout, stderr = proc.communicate(timeout=60)
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


@pytest.mark.parametrize(("sig", "status", "group"), [(signal.SIGINT, 130, True), (signal.SIGTERM, 143, True),
                                                      (signal.SIGTERM, 143, False)],
                         ids=["ctrl-c", "sigterm-group", "sigterm-process"])
def test_a_signal_mid_simulate_leaves_no_output_folder(tmp_path, sig, status, group):
    """A fresh --out: the command created it, so nothing of it stays. SIGTERM killed Python without unwinding
    before (status -15): ``out/.replicaflow/gen-….tmp`` stayed, a half-written output folder."""
    scenario = tmp_path / "long.yaml"
    scenario.write_text(LONG)
    out = tmp_path / "new" / "out"
    done = _signalled_mid_simulate(scenario, out, sig, group)
    assert done.returncode == status, done.stderr
    assert "Traceback" not in done.stderr and done.stdout == "", done.stderr
    assert not (tmp_path / "new").exists(), sorted(str(p) for p in (tmp_path / "new").rglob("*"))
    (tmp_path / "short.yaml").write_text(SCENARIO.format(duration="2m"))
    assert _cli("simulate", tmp_path / "short.yaml", "--out", out).returncode == 0
    assert (out / "telemetry" / "isr").is_dir() and _leftovers(out) == []


@pytest.mark.parametrize(("sig", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["ctrl-c", "sigterm"])
def test_a_signal_mid_simulate_keeps_the_previous_output_and_the_users_files(tmp_path, sig, status):
    """An --out holding the previous outputs and a file of the user's: both as they were, no staging left."""
    (tmp_path / "short.yaml").write_text(SCENARIO.format(duration="2m"))
    (tmp_path / "long.yaml").write_text(LONG)
    out = tmp_path / "out"
    assert _cli("simulate", tmp_path / "short.yaml", "--out", out).returncode == 0
    (out / "notes.md").write_text("mine")
    before = digest(out, ("telemetry", "truth"))
    done = _signalled_mid_simulate(tmp_path / "long.yaml", out, sig, group=True)
    assert done.returncode == status and "Traceback" not in done.stderr, done.stderr
    assert digest(out, ("telemetry", "truth")) == before and _leftovers(out) == []
    assert sorted(p.name for p in out.iterdir()) == [HOME, "notes.md", "telemetry", "truth"]
    assert (out / "notes.md").read_text() == "mine"


@pytest.mark.parametrize("at", ["collect", "stage", "carry", "seal", "link", "link:truth", "switch", "switch:rename"])
def test_an_interrupt_inside_the_commit_leaves_old_or_nothing(tmp_path, monkeypatch, at):
    """Ctrl-C or SIGTERM landing while the commit makes its folders or switches (``Commit.begin``/``done``):
    the previous output stays, and what this commit made (folders, the sealed generation, its ``OUT/<name>``
    links) goes. Only an ``OSError`` there was undone before: the interrupt left ``OUT/truth`` dangling and
    the sealed generation beside the current one."""
    from replicaflow.telemetry import outputs

    out = tmp_path / "out"
    with outputs.Commit(out, writes=["telemetry"]).staged() as stage:
        (stage / "telemetry").mkdir()
        (stage / "telemetry" / "a").write_text("1")
    step = outputs._step

    def interrupted(name: str) -> None:
        if name == at:
            raise KeyboardInterrupt
        step(name)

    monkeypatch.setattr(outputs, "_step", interrupted)
    with pytest.raises(KeyboardInterrupt), outputs.Commit(out, writes=["telemetry", "truth"]).staged() as stage:
        for name in ("telemetry", "truth"):
            (stage / name).mkdir()
            (stage / name / "a").write_text("2")
    assert (out / "telemetry" / "a").read_text() == "1" and not (out / "truth").is_symlink()
    assert sorted(p.name for p in out.iterdir()) == [HOME, "telemetry"]
    assert len([p for p in (out / HOME).iterdir() if p.name.startswith("gen-")]) == 1 and _leftovers(out) == []
    if at in ("collect", "stage"):  # a fresh --out: the folders this commit created go too
        with pytest.raises(KeyboardInterrupt), outputs.Commit(tmp_path / "fresh" / "out", ["telemetry"]).staged():
            pass
        assert not (tmp_path / "fresh").exists()


def _plan_args(out: Path) -> list:
    examples = Path(__file__).resolve().parents[2] / "docs" / "examples" / "plan"
    return ["plan", "--reassignment", examples / "reassignment.json", "--topics", examples / "describe.txt",
            "--log-dirs", examples / "logdirs.json", "--throttle", "20MB/s", "--throttle", "40MB/s", "-o", out]


@pytest.mark.slow
@pytest.mark.parametrize("command", ["analyze", "plan"])
def test_sigterm_to_the_process_group_mid_spark_is_143_and_no_output(tmp_path, command):
    """``kill -TERM -- -PGID`` reaches Spark's JVM too, so what cleans up after the interrupt meets a JVM that is
    gone: ``analyze`` said ``error: analyze: Spark failed reading OUT: the JVM stopped answering (out of
    memory?)`` with exit 2, ``plan`` (in ``collect``) printed py4j's traceback with exit 1 -- once SIGTERM
    unwound at all (it killed Python outright before: status -15, the staging folder left). Now exit 143 and
    nothing said (cli.main); no output appears, the inputs stay."""
    from tests.telemetry.test_outputs import _session_procs

    out = tmp_path / "out"
    if command == "analyze":
        (tmp_path / "short.yaml").write_text(SCENARIO.format(duration="3m"))
        assert _cli("simulate", tmp_path / "short.yaml", "--out", out).returncode == 0
        args: list = ["analyze", out, "--out", out]

        def ready(_pid: int) -> bool:
            return any(out.glob(f"{HOME}/gen-*.tmp/.analysis.tmp-*/*"))
    else:
        args = _plan_args(out)

        def ready(pid: int) -> bool:  # the candidates' Python workers run
            return bool(_session_procs(pid, b"pyspark.daemon"))
    before = digest(out, ("telemetry", "truth"))
    proc = subprocess.Popen([str(BIN), *map(str, args)], start_new_session=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None and not ready(proc.pid):
        time.sleep(0.02)
    assert proc.poll() is None, f"{command} ended before Spark ran"
    os.killpg(proc.pid, signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 143, stderr
    assert "error:" not in stderr and "Traceback" not in stderr and "py4j" not in stderr and stdout == "", stderr
    assert not (out / "analysis").exists() and not (out / "plan").exists()
    assert digest(out, ("telemetry", "truth")) == before
    if command == "analyze":
        assert _leftovers(out) == []
    else:
        assert not out.exists()


@pytest.mark.slow
def test_ctrl_c_mid_spark_ends_the_jvm_first_and_exits_in_seconds(tmp_path):
    """Ctrl-C while Spark writes the analysis: PySpark's own handler cancelled the jobs and the command waited for
    them (their tasks stop only between records, threads still planning submit more), 9.7-16.7 s on 2 busy cores,
    and its JVM, which ignores SIGINT, outlived it by 2 s more, still running the jobs of a staging folder
    already removed. Now cli.main ends the JVM (SIGTERM, its shutdown hooks remove Spark's scratch folders) and
    waits for it, then unwinds: exit 130, nothing said, no JVM left when the command has exited, no output and
    the previous one as it was (docs/pipeline.md, Outputs)."""
    from tests.telemetry.test_outputs import _session_procs

    out = tmp_path / "out"
    (tmp_path / "short.yaml").write_text(SCENARIO.format(duration="3m"))
    assert _cli("simulate", tmp_path / "short.yaml", "--out", out).returncode == 0
    before = digest(out, ("telemetry", "truth"))
    proc = subprocess.Popen([str(BIN), "analyze", str(out), "--out", str(out)], start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None and not any(out.glob(f"{HOME}/gen-*.tmp/.analysis.tmp-*/*")):
        time.sleep(0.02)
    assert proc.poll() is None and _session_procs(proc.pid, b"java"), "analyze ended before Spark wrote"
    signalled = time.time()
    os.killpg(proc.pid, signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    took = time.time() - signalled
    assert _session_procs(proc.pid, b"java") == []  # gone before the command exited, not after
    assert proc.returncode == 130, stderr
    assert "error:" not in stderr and "Traceback" not in stderr and "py4j" not in stderr and stdout == "", stderr
    assert took < 10, f"{took:.1f} s from Ctrl-C to exit"
    assert not (out / "analysis").exists() and _leftovers(out) == []
    assert digest(out, ("telemetry", "truth")) == before
