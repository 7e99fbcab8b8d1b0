"""A real Spark standalone cluster on 127.0.0.1: `replicaflow analyze --master spark://…` == local mode."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from replicaflow.pipeline.runner import OUTPUTS, analyze
from replicaflow.pipeline.session import C1_ONLY
from replicaflow.pipeline.standalone import BIN, standalone
from tests.pipeline.tele import table_rows
from tests.pipeline.test_steps import reassigning, ties


@pytest.mark.cluster
@pytest.mark.slow
def test_standalone_cluster_matches_local_mode(spark, tmp_path):
    """Every output of the CLI on a standalone master equals local mode's. The runs are short (a few hundred
    telemetry rows), so the driver and the executors the worker starts are compiled by C1 alone
    (``session.java_options``): the driver's flags (``-XX:+PrintCommandLineFlags``, in its log) and the
    executor's command line (the worker writes it first in the executor's stderr) both carry it."""
    dirs = [ties().write(tmp_path / "ties"), reassigning("2.5").write(tmp_path / "v25")]
    with standalone(tmp_path) as cluster:
        # the CLI takes one telemetry directory: analyze each cluster on the standalone cluster
        for d in dirs:
            flags = {"REPLICAFLOW_SPARK_LOG": str(tmp_path / f"driver-{d.name}.log"),
                     "REPLICAFLOW_JAVA_OPTIONS": "-XX:+PrintCommandLineFlags"}
            done = subprocess.run([str(BIN / "replicaflow"), "analyze", str(d), "--out", str(tmp_path / "remote" / d.name),
                                   "--master", cluster.url], env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", **flags},
                                  capture_output=True, text=True, timeout=900)
            assert done.returncode == 0, done.stderr[-3000:]
            assert C1_ONLY in (tmp_path / f"driver-{d.name}.log").read_text().split()
    commands = [line for f in cluster.work.glob("app-*/*/stderr") for line in f.read_text().splitlines()
                if line.startswith("Spark Executor Command:")]
    assert len(commands) == len(dirs) and all(C1_ONLY in c for c in commands), commands
    for d in dirs:
        local = tmp_path / "local" / d.name
        summary = analyze(d, local, spark=spark)
        remote = tmp_path / "remote" / d.name / "analysis"
        for name in OUTPUTS:
            assert table_rows(remote / name) == table_rows(local / "analysis" / name), f"{d.name}: {name}"
        assert json.loads((remote / "_summary.json").read_text()) == summary
