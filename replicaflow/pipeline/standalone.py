"""A Spark standalone master and one worker on 127.0.0.1, started with this installation's ``spark-class``.

The tests and benchmarks that check the cluster path (``--master spark://…``) against local mode run the real
thing; this is the one place that starts it, waits for the worker and stops both (docs/pipeline.md).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

BIN = Path(sys.executable).parent
START_TIMEOUT_S = 180


class Standalone(NamedTuple):
    url: str          # spark://127.0.0.1:PORT
    worker_pid: int   # the worker's JVM (spark-class execs it)
    work: Path        # SPARK_WORKER_DIR: app-*/N/stderr holds each executor's command line and log


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


@contextlib.contextmanager
def standalone(folder: Path, cores: int = 2, memory: str = "1g") -> Iterator[Standalone]:
    """A master and one ``cores``-core worker of ``memory``, logging into ``folder``; both stopped on exit.
    A worker not ALIVE within START_TIMEOUT_S, or a process that exited, raises RuntimeError naming its log."""
    port, ui, worker_ui = free_ports(3)
    work = folder / "worker"
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable,
           "SPARK_LOG_DIR": str(folder / "logs"), "SPARK_WORKER_DIR": str(work)}
    spark_class = str(BIN / "spark-class")
    logs = (folder / "master.log").open("w"), (folder / "worker.log").open("w")
    procs = [subprocess.Popen([spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                               "--port", str(port), "--webui-port", str(ui)], env=env, stdout=logs[0],
                              stderr=subprocess.STDOUT)]
    try:
        procs.append(subprocess.Popen([spark_class, "org.apache.spark.deploy.worker.Worker",
                                       f"spark://127.0.0.1:{port}", "--cores", str(cores), "--memory", memory,
                                       "--webui-port", str(worker_ui)], env=env, stdout=logs[1],
                                      stderr=subprocess.STDOUT))
        deadline = time.monotonic() + START_TIMEOUT_S
        while alive_workers(ui) < 1:
            if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                raise RuntimeError(f"the standalone worker did not start: see {folder / 'worker.log'} and "
                                   f"{folder / 'master.log'}")
            time.sleep(1)
        yield Standalone(f"spark://127.0.0.1:{port}", procs[1].pid, work)
    finally:
        for proc in reversed(procs):
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for f in logs:
            f.close()
