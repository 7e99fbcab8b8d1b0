"""A real Spark standalone cluster on 127.0.0.1: `replicaflow analyze --master spark://…` == local mode."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from replicaflow.pipeline.runner import OUTPUTS, analyze
from replicaflow.pipeline.session import C1_ONLY
from tests.pipeline.tele import table_rows
from tests.pipeline.test_steps import reassigning, ties

BIN = Path(sys.executable).parent


def free_ports(n: int) -> list[int]:
    """``n`` distinct free ports: held open together while chosen, so no two are the same."""
    with contextlib.ExitStack() as stack:
        socks = [stack.enter_context(socket.socket()) for _ in range(n)]
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]


def alive_workers(webui: int) -> int:
    """ALIVE workers on the master's UI; 0 while it cannot say. A master still starting its UI answered
    ``/json/`` with an HTML page once (CI, 2026-12-02), which is not yet, not an error."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{webui}/json/", timeout=2) as r:
            return sum(w.get("state") == "ALIVE" for w in json.load(r).get("workers", []))
    except (OSError, ValueError):
        return 0


@pytest.mark.cluster
@pytest.mark.slow
def test_standalone_cluster_matches_local_mode(spark, tmp_path):
    """Every output of the CLI on a standalone master equals local mode's. The runs are short (a few hundred
    telemetry rows), so the driver and the executors the worker starts are compiled by C1 alone
    (``session.java_options``): the driver's flags (``-XX:+PrintCommandLineFlags``, in its log) and the
    executor's command line (the worker writes it first in the executor's stderr) both carry it."""
    dirs = [ties().write(tmp_path / "ties"), reassigning("2.5").write(tmp_path / "v25")]
    port, ui, worker_ui = free_ports(3)
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable,
           "SPARK_LOG_DIR": str(tmp_path / "logs"), "SPARK_WORKER_DIR": str(tmp_path / "work")}
    spark_class = str(BIN / "spark-class")
    logs = (tmp_path / "master.log").open("w"), (tmp_path / "worker.log").open("w")
    master = subprocess.Popen([spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                               "--port", str(port), "--webui-port", str(ui)], env=env, stdout=logs[0],
                              stderr=subprocess.STDOUT)
    worker = None
    try:
        worker = subprocess.Popen([spark_class, "org.apache.spark.deploy.worker.Worker", f"spark://127.0.0.1:{port}",
                                   "--cores", "2", "--memory", "1g", "--webui-port", str(worker_ui)], env=env,
                                  stdout=logs[1], stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 180
        while alive_workers(ui) < 1:
            assert time.monotonic() < deadline, (tmp_path / "worker.log").read_text()[-2000:]
            assert master.poll() is None and worker.poll() is None, "master or worker exited"
            time.sleep(1)
        # the CLI takes one telemetry directory: analyze each cluster on the standalone cluster
        for d in dirs:
            flags = {"REPLICAFLOW_SPARK_LOG": str(tmp_path / f"driver-{d.name}.log"),
                     "REPLICAFLOW_JAVA_OPTIONS": "-XX:+PrintCommandLineFlags"}
            done = subprocess.run([str(BIN / "replicaflow"), "analyze", str(d), "--out", str(tmp_path / "remote" / d.name),
                                   "--master", f"spark://127.0.0.1:{port}"], env={**env, **flags},
                                  capture_output=True, text=True, timeout=900)
            assert done.returncode == 0, done.stderr[-3000:]
            assert C1_ONLY in (tmp_path / f"driver-{d.name}.log").read_text().split()
    finally:
        for proc in (worker, master):
            if proc is not None:
                proc.terminate()
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        for f in logs:
            f.close()
    commands = [line for f in (tmp_path / "work").glob("app-*/*/stderr") for line in f.read_text().splitlines()
                if line.startswith("Spark Executor Command:")]
    assert len(commands) == len(dirs) and all(C1_ONLY in c for c in commands), commands
    for d in dirs:
        local = tmp_path / "local" / d.name
        summary = analyze(d, local, spark=spark)
        remote = tmp_path / "remote" / d.name / "analysis"
        for name in OUTPUTS:
            assert table_rows(remote / name) == table_rows(local / "analysis" / name), f"{d.name}: {name}"
        assert json.loads((remote / "_summary.json").read_text()) == summary
