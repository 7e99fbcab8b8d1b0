"""The one place a SparkSession is built, with settings sized for replicaflow's jobs.

An operator sees replicaflow's output, not the JVM's: Spark starts with replicaflow's log4j2
configuration (errors only) and its JVM writes to a log file instead of the terminal — the JVM's
own warnings (incubator modules, the loopback hostname, native libraries) cannot be configured
away. ``REPLICAFLOW_SPARK_LOG`` names that file, or ``-`` to keep the JVM on the terminal (``-v``).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import shutil
import socket
import tempfile
from pathlib import Path

from pyspark import SparkConf, SparkContext
from pyspark.errors import PySparkRuntimeError
from pyspark.java_gateway import launch_gateway
from pyspark.sql import SparkSession

from replicaflow.errors import ReplicaflowError, quote

LOG4J2 = Path(__file__).with_name("log4j2.properties")


def get_spark(master: str = "local[2]", app_name: str = "replicaflow") -> SparkSession:
    """Return a SparkSession on ``master`` (reuses an active one), quiet and with UTC time.

    Shuffle partitions default to twice the cores Spark sees (``REPLICAFLOW_SHUFFLE_PARTITIONS``
    overrides): replicaflow's tables are narrow, and Spark's 200 would make hundreds of tiny tasks
    per stage on a laptop; adaptive execution coalesces further. Spark's console progress bar is
    off because the CLI shows its own (rich) progress.
    """
    os.environ.setdefault("PYARROW_IGNORE_TIMEZONE", "1")
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    check_environment(master)
    conf = (SparkConf().setMaster(master).setAppName(app_name)
            .set("spark.sql.session.timeZone", "UTC")
            .set("spark.sql.adaptive.enabled", "true")
            .set("spark.ui.enabled", "false")
            .set("spark.ui.showConsoleProgress", "false")
            .set("spark.sql.execution.arrow.pyspark.enabled", "true")
            .set("spark.driver.memory", os.environ.get("REPLICAFLOW_DRIVER_MEMORY", "4g"))
            .set("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={LOG4J2.as_uri()}")
            .set("spark.executor.extraJavaOptions", f"-Dlog4j2.configurationFile={LOG4J2.as_uri()}"))
    if SparkContext._gateway is None:
        SparkContext._ensure_initialized(gateway=_quiet_gateway(conf), conf=conf)
    session = SparkSession(SparkContext.getOrCreate(conf))
    partitions = os.environ.get("REPLICAFLOW_SHUFFLE_PARTITIONS") or str(2 * session.sparkContext.defaultParallelism)
    session.conf.set("spark.sql.shuffle.partitions", partitions)
    return session


LOCAL = re.compile(r"local(\[(\*|[1-9]\d*)(,\s*\d+)?\])?|local-cluster\[\d+,\s*\d+,\s*\d+\]")
CONNECT_TIMEOUT_S = 3.0


def check_environment(master: str) -> None:
    """What Spark needs before its JVM starts: a usable master URL and Java; called before a command's
    expensive work so either is refused within seconds."""
    check_master(master)
    check_java()


def check_master(master: str) -> None:
    """Refuse a master URL Spark cannot use within seconds, before the JVM starts: the form of the URL,
    and for a standalone ``spark://host:port`` master that something answers on that port (Spark
    itself retries an unreachable master for more than a minute before it fails)."""
    if LOCAL.fullmatch(master) or master == "yarn" or master.startswith(("k8s://", "mesos://")):
        return
    if not master.startswith("spark://"):
        raise ReplicaflowError(f"--master {quote(master)}: not a Spark master URL; use local[N], "
                               "spark://host:port, yarn or k8s://host:port")
    for hostport in master.removeprefix("spark://").split(","):
        host, _, port = hostport.rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ReplicaflowError(f"--master {quote(master)}: expected spark://host:port")
        try:
            socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S).close()
        except OSError as exc:
            raise ReplicaflowError(f"--master {quote(master)}: cannot reach {quote(hostport)} "
                                   f"({exc.strerror or type(exc).__name__}); is the Spark master running?") from None


def check_java() -> None:
    """Spark needs a JVM: without one pyspark fails with a trace about a gateway; say what is missing."""
    home = os.environ.get("JAVA_HOME")
    if home:
        if not os.access(Path(home) / "bin" / "java", os.X_OK):
            raise ReplicaflowError(f"JAVA_HOME={quote(home)} holds no bin/java: Spark needs Java 17+; point "
                                   "JAVA_HOME at a JDK or JRE, or unset it to use java on PATH")
    elif shutil.which("java") is None:
        raise ReplicaflowError("Java was not found on PATH: Spark needs Java 17+ (e.g. apt-get install "
                               "openjdk-17-jre-headless, or set JAVA_HOME)")


def _quiet_gateway(conf: SparkConf):
    """Start the JVM with its stdout and stderr in the Spark log file (see the module docstring)."""
    target = os.environ.get("REPLICAFLOW_SPARK_LOG")
    if target == "-":
        return None  # SparkContext starts it on the terminal
    log = Path(target) if target else Path(tempfile.gettempdir()) / f"replicaflow-spark-{os.getpid()}.log"
    if not target:
        atexit.register(lambda: log.unlink(missing_ok=True))
    with open(log, "ab") as sink:
        try:
            return launch_gateway(conf, popen_kwargs={"stdout": sink, "stderr": sink})
        except (PySparkRuntimeError, OSError) as exc:
            tail = ""
            with contextlib.suppress(OSError):
                lines = [ln for ln in log.read_text(errors="replace").splitlines() if ln.strip()]
                tail = f": {lines[-1][:200]}" if lines else ""
            raise ReplicaflowError(f"Spark could not start its JVM ({type(exc).__name__}){tail} — the JVM's "
                                   f"output is in {log}") from None
