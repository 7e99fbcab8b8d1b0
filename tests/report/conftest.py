"""One tiny analysis (clusters alpha and beta) and its report, built once for the report tests; and one
`replicaflow demo` run shared by the demo and Chromium tests (the slow part: simulate + one Spark job)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from replicaflow.report.build import build_report
from tests.report.tiny import write_analysis


@pytest.fixture(scope="session")
def built(tmp_path_factory):
    """(directory, tiny data) after `build_report` wrote report.html, metrics.om and summary.json."""
    root = tmp_path_factory.mktemp("report")
    data = write_analysis(root, ("alpha", "beta"))
    build_report(root)
    return root, data


@pytest.fixture(scope="session")
def built_alpha(tmp_path_factory):
    """Only cluster alpha (one controller, so Strimzi's cluster-wide `sum()` rules apply unchanged)."""
    root = tmp_path_factory.mktemp("alpha")
    data = write_analysis(root, ("alpha",))
    build_report(root)
    return root, data


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory):
    """`replicaflow demo` as an operator runs it, in an 80-column terminal (rich told it is one); the JVM's
    own output, with the flags it started with, goes to ``<out>-spark.log`` beside ``out``."""
    out = tmp_path_factory.mktemp("demo")
    env = {**os.environ, "COLUMNS": "80", "TTY_COMPATIBLE": "1", "TTY_INTERACTIVE": "0",
           "REPLICAFLOW_SPARK_LOG": str(out.parent / f"{out.name}-spark.log"),
           "REPLICAFLOW_JAVA_OPTIONS": "-XX:+PrintCommandLineFlags"}
    done = subprocess.run([str(Path(sys.executable).parent / "replicaflow"), "demo", "--out", str(out)], env=env,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return out, done.stdout + done.stderr


@pytest.fixture(scope="session")
def demo(demo_run):
    out, _ = demo_run
    return out, out / "report.html"
