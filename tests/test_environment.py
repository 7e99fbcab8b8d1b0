"""Environment errors through the CLI: one sentence naming the path or URL, exit 2, no traceback, within
seconds and before the expensive work; Spark never globs a path with ``[1]`` in it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.pipeline.test_checks import tele
from tests.test_kill import scenario

PYTHON_ONLY = {"PATH": "/nonexistent", "COLUMNS": "300"}  # no java on PATH, no JAVA_HOME


def cli(*args: str, env: dict | None = None) -> tuple[subprocess.CompletedProcess, float]:
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "replicaflow.cli", "-q", *args], capture_output=True, text=True,
                          timeout=120, env=env or {**os.environ, "COLUMNS": "300"})
    return done, time.monotonic() - start


def unwritable(tmp_path: Path) -> Path:
    if os.geteuid() == 0:  # root writes through permission bits; /sys refuses even root
        return Path("/sys/replicaflow-test-out")
    (tmp_path / "ro").mkdir()
    (tmp_path / "ro").chmod(0o555)
    return tmp_path / "ro" / "out"


CASES = [
    ("bad master", lambda d: ["analyze", str(d["run"]), "--out", str(d["out"]), "--master", "foo"], None,
     "error: --master 'foo': not a Spark master URL; use local[N], spark://host:port, yarn or k8s://host:port"),
    ("unreachable master", lambda d: ["analyze", str(d["run"]), "--out", str(d["out"]), "--master",
                                      "spark://127.0.0.1:1"], None,
     "error: --master 'spark://127.0.0.1:1': cannot reach '127.0.0.1:1' (Connection refused)"),
    ("unreachable master of run", lambda d: ["run", str(d["yaml"]), "--out", str(d["out"]), "--master",
                                             "spark://127.0.0.1:1"], None, "cannot reach '127.0.0.1:1'"),
    ("java missing", lambda d: ["analyze", str(d["run"]), "--out", str(d["out"])], PYTHON_ONLY,
     "error: Java was not found on PATH: Spark needs Java 17+"),
    ("output is a file", lambda d: ["simulate", str(d["yaml"]), "--out", str(d["file"])], None,
     "{file}: is a file, not a directory; choose another --out"),
    ("analyze output is a file", lambda d: ["analyze", str(d["run"]), "--out", str(d["file"])], None,
     "{file}: is a file, not a directory"),
    ("unwritable output", lambda d: ["simulate", str(d["yaml"]), "--out", str(d["ro"])], None,
     "{ro}"),
    ("empty output", lambda d: ["simulate", str(d["yaml"]), "--out", ""], None,
     "Invalid value for '--out' / '-o': the directory is empty"),
    ("foreign file in the way", lambda d: ["simulate", str(d["yaml"]), "--logs", "--out", str(d["user"])], None,
     "{user}/logs/kafka-0/server.log: not written by replicaflow and in the way of logs"),
]


@pytest.mark.parametrize(("argv", "env", "sentence"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_environment_errors_are_one_sentence_within_seconds(tmp_path, argv, env, sentence):
    d = {"run": tele().write(tmp_path / "run"), "out": tmp_path / "out", "yaml": scenario(tmp_path, "s", 1),
         "file": tmp_path / "afile", "ro": unwritable(tmp_path), "user": tmp_path / "user"}
    d["file"].write_text("x")
    (d["user"] / "logs" / "kafka-0").mkdir(parents=True)
    (d["user"] / "logs" / "kafka-0" / "server.log").write_text("mine")
    done, took = cli(*argv(d), env=env)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "py4j" not in done.stderr
    assert sentence.format(**d) in done.stderr
    assert took < 30  # the JVM never started (it takes longer to start than the checks run)
    assert not (tmp_path / "out").exists() and (d["user"] / "logs" / "kafka-0" / "server.log").read_text() == "mine"


@pytest.mark.spark
def test_paths_with_brackets_are_read_literally(spark, tmp_path):
    """Spark expands ``[1]`` in an input path as a glob; replicaflow escapes it."""
    from replicaflow.jobs.analyze import analyze
    from replicaflow.sim.runner import simulate

    run = simulate(scenario(tmp_path, "s", 1), tmp_path / "run[1]", logs=True)
    analyze(run, tmp_path / "out{a}[2]", spark=spark, logs=[str(run / "logs")])
    events = pq.read_table(tmp_path / "out{a}[2]" / "analysis" / "log_events").to_pylist()
    assert events and {Path(e["source"]).parts[-3] for e in events} == {"logs"}
    assert all(e["source"].startswith(str(run / "logs")) for e in events)
