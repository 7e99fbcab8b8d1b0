"""All outputs of a command appear together or not at all (telemetry/outputs.py), and nothing the tool did
not write is touched: kill tests at every step of the commit, a real `kill -9`, foreign files, user files."""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from replicaflow.errors import ReplicaflowError
from replicaflow.telemetry.outputs import HOME, REPORT, STEPS, Commit, check_out_dir
from tests.report.tiny import write_analysis

BIN = Path(sys.executable).parent / "replicaflow"
SCENARIO = """\
name: tiny
duration: {duration}
kafka: {{version: "3.7"}}
cluster: {{brokers: 3}}
topics: [{{name: orders, partitions: 3, replication_factor: 3, produce_rate: 1MB/s}}]
events: [{{at: 30s, broker_down: 2}}, {{at: 50s, broker_up: 2}}]
"""


def _cli(*args, fault: str | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "REPLICAFLOW_FAULT_AT"}
    if fault:
        env["REPLICAFLOW_FAULT_AT"] = fault
    return subprocess.run([str(BIN), "-q", *map(str, args)], capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=600)


def digest(out: Path, names) -> dict[str, str]:
    """Relative path → sha256 of every file under ``out/<name>`` (through the links), for the given names."""
    found = {}
    for name in names:
        root = out / name
        if root.is_file():
            found[name] = hashlib.sha256(root.read_bytes()).hexdigest()
        elif root.is_dir():
            for dirpath, _, files in os.walk(root, followlinks=True):
                for f in files:
                    p = Path(dirpath) / f
                    found[str(p.relative_to(out))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return found


@pytest.fixture(scope="module")
def scenarios(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("scenarios")
    out = {}
    for key, duration in (("old", "2m"), ("new", "3m")):
        path = root / f"{key}.yaml"
        path.write_text(SCENARIO.format(duration=duration))
        out[key] = path
    return out


@pytest.fixture(scope="module")
def references(scenarios, tmp_path_factory) -> dict[str, dict[str, str]]:
    """What a complete `simulate --logs` of each scenario holds."""
    refs = {}
    for key, path in scenarios.items():
        out = tmp_path_factory.mktemp(f"ref-{key}")
        assert _cli("simulate", path, "--out", out, "--logs").returncode == 0
        refs[key] = digest(out, ("telemetry", "truth", "logs"))
    assert refs["old"] != refs["new"]
    return refs


def _leftovers(out: Path) -> list[str]:
    return sorted(p.name for p in (out / HOME).iterdir() if p.name.endswith(".tmp") or p.name.startswith("."))


@pytest.mark.parametrize("step", STEPS)
def test_simulate_killed_at_any_step_leaves_old_or_new(scenarios, references, tmp_path, step):
    out = tmp_path / "out"
    assert _cli("simulate", scenarios["old"], "--out", out, "--logs").returncode == 0
    (out / "notes.txt").write_text("mine")
    killed = _cli("simulate", scenarios["new"], "--out", out, "--logs", fault=step)
    assert killed.returncode == 137, killed.stderr
    assert digest(out, ("telemetry", "truth", "logs")) in (references["old"], references["new"])
    done = _cli("simulate", scenarios["new"], "--out", out, "--logs")
    assert done.returncode == 0, done.stderr
    assert digest(out, ("telemetry", "truth", "logs")) == references["new"]
    assert _leftovers(out) == [] and len([p for p in (out / HOME).iterdir() if p.name.startswith("gen-")]) == 1
    assert (out / "notes.txt").read_text() == "mine"


@pytest.mark.parametrize("step", STEPS)
def test_report_killed_at_any_step_leaves_old_or_new(tmp_path, step):
    write_analysis(tmp_path, ("alpha",))
    (tmp_path / "notes.txt").write_text("mine")
    assert _cli("report", tmp_path).returncode == 0
    old = digest(tmp_path, REPORT)
    killed = _cli("report", tmp_path, "--naming", "confluent", fault=step)
    assert killed.returncode == 137
    now = digest(tmp_path, REPORT)
    assert _cli("report", tmp_path, "--naming", "confluent").returncode == 0
    new = digest(tmp_path, REPORT)
    assert old != new and now in (old, new)
    assert (tmp_path / "analysis").is_dir() and _leftovers(tmp_path) == []
    assert (tmp_path / "notes.txt").read_text() == "mine"


def analysis_digest(out: Path) -> dict[str, str]:
    """An analysis by content: Spark names its Parquet files anew on every run, so the tables are compared
    through the headline numbers and the set of tables."""
    root = out / "analysis"
    if not root.is_dir():
        return {}
    return {"tables": ",".join(sorted(p.name for p in root.iterdir() if p.is_dir())),
            "summary": hashlib.sha256((root / "_summary.json").read_bytes()).hexdigest()}


@pytest.fixture(scope="module")
def analyzed(scenarios, tmp_path_factory) -> tuple[Path, dict, Path]:
    """An OUT holding a user file and the analysis of the 'old' telemetry, and the 'new' telemetry."""
    root = tmp_path_factory.mktemp("analyzed")
    for key in ("old", "new"):
        assert _cli("simulate", scenarios[key], "--out", root / key).returncode == 0
    out = root / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    assert _cli("analyze", root / "old", "--out", out).returncode == 0
    return out, analysis_digest(out), root / "new"


@pytest.mark.slow
@pytest.mark.parametrize("step", ["switch", "clean"])
def test_analyze_killed_at_commit_steps_leaves_old_or_new(analyzed, tmp_path, step):
    """Killed just before the switch: the old analysis; just after it: the new one; never neither."""
    template, old, new_telemetry = analyzed
    out = tmp_path / "out"
    shutil.copytree(template, out, symlinks=True)
    assert _cli("analyze", new_telemetry, "--out", out, fault=step).returncode == 137
    now = analysis_digest(out)
    assert now and (now == old) == (step == "switch")
    assert (out / "notes.txt").read_text() == "mine"
    if step == "clean":
        assert _cli("analyze", new_telemetry, "--out", out).returncode == 0
        assert analysis_digest(out) == now and _leftovers(out) == []


@pytest.mark.slow
def test_analyze_killed_mid_run_then_rerun(scenarios, tmp_path):
    """A real SIGKILL of `analyze` (and its JVM) while Spark writes: no analysis appears, the next run
    collects the staging folder and commits."""
    out = tmp_path / "out"
    assert _cli("simulate", scenarios["old"], "--out", out).returncode == 0
    before = digest(out, ("telemetry", "truth"))
    proc = subprocess.Popen([str(BIN), "-q", "analyze", str(out), "--out", str(out)], start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    # Spark writes the tables into a hidden folder of the staging generation, renamed to analysis/ at the end
    while time.time() < deadline and not any((out / HOME).glob("gen-*.tmp/.analysis.tmp-*/*")):
        time.sleep(0.05)
    assert proc.poll() is None, "analyze ended before it could be killed mid-run"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not (out / "analysis").exists()
    assert digest(out, ("telemetry", "truth")) == before
    assert _cli("analyze", out, "--out", out).returncode == 0
    assert (out / "analysis" / "partition_state").is_dir() and _leftovers(out) == []
    assert digest(out, ("telemetry", "truth")) == before


def _session_procs(session_id: int, needle: bytes) -> list[int]:
    """The processes of a process session whose command line holds ``needle``."""
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            cmdline = (stat.parent / "cmdline").read_bytes()
        except OSError:  # ended meanwhile
            continue
        if int(fields[3]) == session_id and needle in cmdline:
            pids.append(int(stat.parent.name))
    return pids


def _last_words_with_jvm_killed(args: list, ready) -> str:
    """Run the CLI in a session of its own; once ``ready(pid)``, SIGKILL only its JVMs (spark-submit's java,
    started by PySpark). The command must then end with exit 2 and one sentence, no traceback: returns it."""
    proc = subprocess.Popen([str(BIN), *map(str, args)], start_new_session=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None and not ready(proc.pid):
        time.sleep(0.02)
    assert proc.poll() is None, "the command ended before its JVM could be killed"
    jvms = _session_procs(proc.pid, b"org.apache.spark.deploy.SparkSubmit")
    assert jvms, "no JVM found under the command"
    for pid in jvms:
        os.kill(pid, signal.SIGKILL)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 2, stderr
    assert "Traceback" not in stderr and "py4j" not in stderr, stderr
    return stderr.strip().splitlines()[-1]


@pytest.mark.slow
def test_a_jvm_that_dies_mid_analysis_is_one_sentence_and_no_output(scenarios, tmp_path):
    """Only the JVM killed (as the kernel's OOM killer does) while Spark writes: one sentence and exit 2,
    where py4j's refused connection was a traceback (from unpersisting the caches of a JVM that was gone,
    with py4j's own tracebacks logged before it); no analysis appears, the telemetry is untouched."""
    out = tmp_path / "out"
    assert _cli("simulate", scenarios["old"], "--out", out).returncode == 0
    before = digest(out, ("telemetry", "truth"))
    last = _last_words_with_jvm_killed(["analyze", out, "--out", out],
                                       lambda _: any((out / HOME).glob("gen-*.tmp/.analysis.tmp-*/*")))
    assert last == f"error: analyze: Spark failed reading {out}: the JVM stopped answering (out of memory?)", last
    assert not (out / "analysis").exists()
    assert digest(out, ("telemetry", "truth")) == before


@pytest.mark.slow
def test_a_jvm_that_dies_while_plan_simulates_is_one_sentence_and_no_output(tmp_path):
    """``plan``'s candidates run as Spark tasks; the JVM killed once its Python workers run them: one sentence
    and exit 2 (it was py4j's refused connection as a traceback), and no ``plan/`` written."""
    examples = Path(__file__).resolve().parents[2] / "docs" / "examples" / "plan"
    out = tmp_path / "out"
    last = _last_words_with_jvm_killed(
        ["plan", "--reassignment", examples / "reassignment.json", "--topics", examples / "describe.txt",
         "--log-dirs", examples / "logdirs.json", "--throttle", "20MB/s", "--throttle", "40MB/s", "-o", out],
        lambda pid: _session_procs(pid, b"pyspark.daemon"))  # the candidates' Python workers run
    assert last == "error: plan: Spark failed running 4 candidates: the JVM stopped answering (out of memory?)"
    assert not out.exists()


def test_foreign_entries_are_never_replaced(scenarios, tmp_path):
    out = tmp_path / "out"
    (out / "logs" / "kafka-0").mkdir(parents=True)
    (out / "logs" / "kafka-0" / "server.log").write_text("my broker's log")
    done = _cli("simulate", scenarios["old"], "--out", out, "--logs")
    assert done.returncode == 2
    assert f"{out / 'logs'}: not written by replicaflow" in done.stderr and "Traceback" not in done.stderr
    assert (out / "logs" / "kafka-0" / "server.log").read_text() == "my broker's log"
    assert not (out / "telemetry").exists()


def test_out_must_be_a_writable_folder(scenarios, tmp_path):
    (tmp_path / "file").write_text("x")
    for out, sentence in (("", "--out: expected a folder path, found an empty one"),
                          (tmp_path / "file", "--out is a file, expected a folder"),
                          (tmp_path / "file" / "below", "file: is a file, so --out"),
                          # Latin-1 bytes: pyarrow's traceback (UnicodeEncodeError), Spark's "out of memory?"
                          (os.fsdecode(bytes(tmp_path) + b"/lat\xe9n"), "--out: the path '")):
        done = _cli("simulate", scenarios["old"], "--out", out, cwd=tmp_path)
        assert done.returncode == 2 and sentence in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]
    with pytest.raises(ReplicaflowError, match="is a file"):
        check_out_dir(tmp_path / "file")


def test_out_inside_another_output_is_refused(scenarios, tmp_path):
    """``simulate --out o/telemetry`` wrote a whole output through the link into o's current generation
    (``o/.replicaflow/gen-…/telemetry/telemetry``, a second ``.replicaflow/`` beside the tables): files o's
    manifest does not list. An --out inside another output, or inside ``.replicaflow/``, is one sentence and
    nothing is written; a sibling folder, or o itself, is fine."""
    out = tmp_path / "o"
    assert _cli("simulate", scenarios["old"], "--out", out).returncode == 0
    before = digest(out, ["telemetry", "truth"])
    for nested in (out / "telemetry", out / "truth" / "x", out / HOME / "current" / "telemetry", out / HOME):
        done = _cli("simulate", scenarios["old"], "--out", nested, cwd=tmp_path)
        assert done.returncode == 2, done.stderr
        assert f"--out {nested}: inside {out / nested.relative_to(out).parts[0]}, an output replicaflow wrote " \
               f"into {out}; choose a folder outside it" in done.stderr, done.stderr
    assert digest(out, ["telemetry", "truth"]) == before
    assert not (out / "telemetry" / HOME).exists() and not (out / "truth" / "x").exists()
    assert _cli("simulate", scenarios["old"], "--out", tmp_path / "o2").returncode == 0
    assert _cli("simulate", scenarios["old"], "--out", out).returncode == 0


def test_commit_abort_changes_nothing(tmp_path):
    out = tmp_path / "out"
    with Commit(out, writes=["telemetry"]).staged() as stage:
        (stage / "telemetry").mkdir()
        (stage / "telemetry" / "a").write_text("1")
    with pytest.raises(RuntimeError), Commit(out, writes=["telemetry"]).staged() as stage:
        (stage / "telemetry").mkdir()
        (stage / "telemetry" / "a").write_text("2")
        raise RuntimeError("boom")
    assert (out / "telemetry" / "a").read_text() == "1" and _leftovers(out) == []


@pytest.mark.parametrize("text", ["\xff{", "[" * 100_000], ids=["not JSON", "nested deeply"])
def test_a_corrupt_manifest_is_one_sentence(tmp_path, text):
    out = tmp_path / "out"
    with Commit(out, writes=("telemetry",)).staged() as stage:
        (stage / "telemetry").mkdir()
    current = (out / HOME / "current").resolve()
    (current / ".manifest.json").write_text(text)
    with pytest.raises(ReplicaflowError, match=r"\.manifest\.json: unreadable; remove .* to start over"):
        Commit(out, writes=("telemetry",))
