"""The one place a SparkSession is built, with settings sized for replicaflow's jobs.

An operator sees replicaflow's output, not the JVM's: Spark starts with replicaflow's log4j2
configuration (errors only) and its JVM writes to a log file instead of the terminal — the JVM's
own warnings (incubator modules, the loopback hostname, native libraries) cannot be configured
away. ``REPLICAFLOW_SPARK_LOG`` names that file, or ``-`` to keep the JVM on the terminal (``-v``), and with it
py4j's tracebacks of calls to a JVM that died.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from py4j.java_gateway import JavaClass, JavaMember
from py4j.protocol import Py4JError, Py4JJavaError, Py4JNetworkError
from pyspark import SparkConf, SparkContext
from pyspark.errors import PySparkRuntimeError
from pyspark.java_gateway import launch_gateway
from pyspark.sql import SparkSession

from replicaflow.errors import ReplicaflowError, quote
from replicaflow.model.units import INT32_MAX, parse_id
from replicaflow.pipeline import class_archive
from replicaflow.telemetry.outputs import NO_ROOM

LOG4J2 = Path(__file__).with_name("log4j2.properties")
_LOCAL = re.compile(r"^local(\[([0-9]+|\*)(?:,([0-9]+))?\])?$")  # local[N,F]: F task failures allowed
_STANDALONE = re.compile(r"^spark://([^:/,]+):([0-9]+)(,[^:/,]+:[0-9]+)*$")
_STACK_FRAME = re.compile(r"^\s+(at |\.\.\. \d+ more)")
MASTER_CONNECT_TIMEOUT_S = 3.0
# what a call to a JVM that died raises: the refused (or reset) socket, or py4j's error on an empty answer
JVM_GONE = (ConnectionError, Py4JNetworkError)
# py4j's client turns a socket that broke while it waited for the answer into this bare error, with no
# Java trace (GatewayClient.send_command retries only a failed send); an error the JVM sent has a trace. The
# target is an object (`o39.sc`) or, for a static method, `z:` and its class (`z:org.apache.spark.sql.functions.col`)
_PY4J_NO_ANSWER = re.compile(r"An error occurred while calling (?:z:)?[\w.$]+\Z")
JVM_STOPPED = "the JVM stopped answering (out of memory?)"
# replicaflow's log4j2 configuration, and the throughput collector: analyze is a batch job, and G1's
# concurrent threads took cores from it (demo 28 s against 32 s, 8 h of the benchmark 48 s against
# 57 s on 2 cores, docs/pipeline.md)
JAVA_OPTIONS = f"-Dlog4j2.configurationFile={LOG4J2.as_uri()} -XX:+UseParallelGC"
C1_ONLY = "-XX:TieredStopAtLevel=1"
# C1 alone makes HotSpot reserve 48 MB of code cache instead of the 240 MB of tiered compilation, and the
# log reader's generated code filled it: the compiler stopped, then a task failed with "Out of space in
# CodeCache for adapters" (ten small clusters' logs read as one fleet). 128 MB holds it; 240 MB, which
# turns on the segmented cache, made a fresh demo slower (docs/pipeline.md)
C1_CODE_CACHE = "-XX:ReservedCodeCacheSize=128m"
# a driver that only schedules Python tasks (plan): the C1 JIT alone and the serial collector (docs/plan.md)
PLAN_JVM_OPTIONS = f"-Dlog4j2.configurationFile={LOG4J2.as_uri()} {C1_ONLY} -XX:+UseSerialGC"
# A JVM that lives for one small analysis spends more CPU in the C2 compiler than C2's code saves it. A
# fresh `analyze` on 2 cores, C1 alone against C1 and C2: the ten demo clusters (20,000 rows) 19.7 s against
# 27.3 s, 18.6 M rows 26.4 s against 30.5 s, 37.1 M rows 37.3 s against 41.6 s; at 55.6 M a draw (43.5 s
# against 42.4 s), at 148 M C2 pays (61.5 s against 86.5 s). Below this many rows, C1 alone (docs/pipeline.md)
SHORT_RUN_ROWS = 40_000_000
# The same for broker logs, which the JVM itself parses: a fresh `analyze --logs` on 2 cores, C1 alone against
# C1 and C2: 9 small files 59.1 s and 59.7 s against 65.2 s and 66.3 s, 38 MB (150 files) a draw (122.5 s and
# 121.7 s against 127.5 s and 123.0 s), 150 MB 103.2 s against 75.5 s (docs/pipeline.md). Below this many
# bytes of log text, and fewer than SHORT_RUN_ROWS telemetry rows, C1 alone
SHORT_RUN_LOG_BYTES = 32_000_000


# PySpark records the Python call site of every DataFrame and Column call for its error messages: five
# JVM round trips per call, a third of the 28,000 it took to build the log reader's query (docs/pipeline.md)
DATAFRAME_DEBUGGING = "spark.python.sql.dataFrameDebugging.enabled"
LOCAL_LISTING_PATHS = 100_000
# Spark keeps the classes it compiles for a query's generated code in a cache of 100 by default; one
# `analyze` compiles about 400, so a second analysis in the same JVM compiled them all again
# (docs/pipeline.md, settings)
CODEGEN_CACHE = "spark.sql.codegen.cache.maxEntries"
CODEGEN_CACHE_ENTRIES = 2000
# and a query's classes are named after their codegen stage's number, which depends on the order in which
# concurrent queries are planned: without it in the name, the same code hits that cache (24 classes
# compiled again per warm `analyze` at 1 h against 2, docs/pipeline.md)
CODEGEN_ID_IN_CLASS_NAME = "spark.sql.codegen.useIdInClassName"
# The JVM classes PySpark looks up by name at each Column and DataFrame call (``sc._jvm.functions.col``): every
# lookup is a JVM round trip, and a short name is first tried as a class of no package and in the gateway's
# imported packages, each miss a search of every jar on the class path. Building `analyze`'s tables made about
# 2,000 of them, a fifth of the planning threads' CPU (docs/pipeline.md)
PYSPARK_JVM_CLASSES = ("functions", "PythonUtils", "org.apache.spark.sql.functions",
                       "org.apache.spark.sql.expressions.Window")


def java_options(python_tasks_only: bool = False, rows: int | None = None, archive: str = "",
                 log_bytes: int | None = 0) -> str:
    """The JVM options of the driver and the executors: ours, then ``REPLICAFLOW_JAVA_OPTIONS`` (which win:
    ``-XX:TieredStopAtLevel=4`` there brings C2 back). ``rows``: the telemetry rows the JVM will analyze,
    and ``log_bytes`` the bytes of broker logs it will read, when known before it starts (None: not known);
    fewer than ``SHORT_RUN_ROWS`` and ``SHORT_RUN_LOG_BYTES`` make a short run, compiled by C1 alone.
    ``archive``: the driver's class-archive option (class_archive.py)."""
    if python_tasks_only:
        ours = PLAN_JVM_OPTIONS
    elif rows is not None and rows < SHORT_RUN_ROWS and log_bytes is not None and log_bytes < SHORT_RUN_LOG_BYTES:
        ours = f"{JAVA_OPTIONS} {C1_ONLY} {C1_CODE_CACHE}"
    else:
        ours = JAVA_OPTIONS
    return " ".join(filter(None, (ours, archive, os.environ.get("REPLICAFLOW_JAVA_OPTIONS", ""))))


def jvm_gone(exc: BaseException) -> bool:
    """Whether ``exc`` is a call to a JVM that died (killed, out of memory): which of py4j's errors it
    raises depends on whether the socket broke while sending the call or while waiting for its answer."""
    return isinstance(exc, JVM_GONE) or (type(exc) is Py4JError and bool(_PY4J_NO_ANSWER.match(str(exc))))


def java_reason(exc: BaseException) -> str:
    """The JVM's own exception class and first message line; a JVM that died cannot say (its
    ``str()`` fails), which is itself the reason."""
    if jvm_gone(exc):
        return JVM_STOPPED
    try:
        java = getattr(exc, "java_exception", None)
        text = java.toString() if java is not None else str(exc)
    except Exception:  # noqa: BLE001 -- a dead JVM gateway raises anything
        return JVM_STOPPED
    first = (text.strip().splitlines() or [type(exc).__name__])[0]
    return quote(first, 160)


HADOOP_FS_ERROR = "org.apache.hadoop.fs.FSError"  # Hadoop's local file system refusing a write: the outputs'


def java_no_room(exc: BaseException) -> int | None:
    """The errno (``NO_ROOM``: a full disk, a file too large, a quota) of a write of the outputs that the file
    system refused, found in the Java exception chain of ``exc``; None for any other failure or a JVM that
    cannot say. Spark names it nowhere near the top: a full disk under ``df.write.parquet`` is
    ``ExecutionException: Boxed Exception`` caused by ``FSError: java.io.IOException: No space left on device``.
    Only a refusal through Hadoop's file system (``FSError``, which boxes every ``IOException`` of its local
    writes) is the outputs'; Spark's own scratch files (``spark.local.dir``) are written without it."""
    texts = java_texts(exc)
    if not any(HADOOP_FS_ERROR in t for t in texts):
        return None
    return refused_errno(texts)


def refused_errno(texts: list[str]) -> int | None:
    """The first ``NO_ROOM`` errno (a full disk, a file too large, a quota) whose message is in ``texts``."""
    return next((e for e in sorted(NO_ROOM) if any(os.strerror(e) in t for t in texts)), None)


def java_texts(exc: BaseException, limit: int = 64) -> list[str]:
    """`Class: message` of the Java exception under ``exc`` and of its causes and suppressed exceptions (a failed
    stage materialization carries each stage's failure as suppressed); empty without one or with a dead JVM."""
    texts: list[str] = []
    try:
        todo = [exc.java_exception]
        while todo and len(texts) < limit:
            java = todo.pop()
            if java is None:
                continue
            texts.append(f"{java.getClass().getName()}: {java.getMessage()}")
            todo.extend([*java.getSuppressed(), java.getCause()])
    except Exception:  # noqa: BLE001 -- no Java exception, or a dead JVM gateway, which raises anything
        pass
    return texts


def _root_cause(exc: Py4JJavaError) -> str:
    """`` (caused by …)``: the innermost Java cause, which names what failed (``UnknownHostException: x`` under
    the Kubernetes client's 'An error has occurred.'); empty when there is none or the JVM cannot say."""
    try:
        cause, root = exc.java_exception.getCause(), None
        while cause is not None:
            root, cause = cause, cause.getCause()
        return f" (caused by {quote(root.toString(), 160)})" if root is not None else ""
    except Exception:  # noqa: BLE001 -- a dead JVM gateway raises anything
        return ""


def check_master(master: str) -> str:
    """``--master`` checked in seconds, before any work: a URL Spark understands, and for a standalone
    master one that answers (Spark itself would retry for over a minute before failing)."""
    local = _LOCAL.match(master)
    if local and local.group(2) not in (None, "*") and not parse_id(local.group(2)):
        raise ReplicaflowError(f"--master: local[N] needs 1 to {INT32_MAX} threads, found {quote(master)}")
    if local and local.group(3) is not None and parse_id(local.group(3)) is None:  # Spark's toInt: a JVM traceback
        raise ReplicaflowError(f"--master: local[N,F] needs 0 to {INT32_MAX} task failures F, found {quote(master)}")
    if local or master == "yarn" or re.match(r"k8s://.", master):  # Spark 4 has no Mesos: its JVM refused mesos://
        return master
    m = _STANDALONE.match(master)
    if not m:
        raise ReplicaflowError(f"--master: expected local[N], local[*] or spark://host:port, found {quote(master)}")
    host, port = m.group(1), parse_id(m.group(2))
    if port is None or not 0 < port <= 65535:
        raise ReplicaflowError(f"--master: expected a port from 1 to 65535, found {quote(master)}")
    try:
        socket.create_connection((host, port), timeout=MASTER_CONNECT_TIMEOUT_S).close()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ReplicaflowError(f"--master {master}: no Spark master answers at {host}:{port} ({reason})") from None
    return master


def get_spark(master: str = "local[2]", app_name: str = "replicaflow", python_tasks_only: bool = False,
              rows: int | None = None, archive: str | None = None, log_bytes: int | None = 0) -> SparkSession:
    """Return a SparkSession on ``master`` (reuses an active one), quiet and with UTC time.

    ``python_tasks_only``: the job only runs Python tasks, no Spark SQL (``plan``), so the driver JVM only
    schedules and ships pickled bytes. It then starts with the C1 JIT alone and the serial collector
    (``PLAN_JVM_OPTIONS``): about 5 CPU seconds to start instead of 8, which on 2 cores the Python
    workers get instead. SQL jobs keep the C2 JIT that their long queries need, unless ``rows`` (and
    ``log_bytes``, the broker logs it will read) say that the one analysis this JVM starts for is short
    (``java_options``); a session started without ``rows`` (the benchmark's, the tests', a notebook's) may run
    many analyses and keeps C2.

    Shuffle partitions default to twice the cores Spark sees (``REPLICAFLOW_SHUFFLE_PARTITIONS``
    overrides): replicaflow's tables are narrow, and Spark's 200 would make hundreds of tiny tasks
    per stage on a laptop; adaptive execution coalesces further. Spark's console progress bar is
    off because the CLI shows its own (rich) progress. On a cluster, set
    ``REPLICAFLOW_SHUFFLE_PARTITIONS`` (executors may register after the session starts) and
    ``REPLICAFLOW_EXECUTOR_MEMORY`` (docs/pipeline.md, "On a cluster").

    The driver JVM maps the class archive that ``replicaflow setup`` recorded, if there is one
    (class_archive.py); ``archive`` replaces that option (``record_class_archive``). Executors on a
    cluster's workers load their classes from other paths, so they start without it.
    """
    os.environ.setdefault("PYARROW_IGNORE_TIMEZONE", "1")
    # Python workers (plan's candidate tasks) run this interpreter, with its packages, not `python3` on PATH
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    check_master(master)
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    conf = (SparkConf().setMaster(master).setAppName(app_name)
            .set("spark.sql.session.timeZone", "UTC")
            .set("spark.sql.adaptive.enabled", "true")
            .set("spark.ui.enabled", "false")
            .set("spark.ui.showConsoleProgress", "false")
            .set("spark.sql.execution.arrow.pyspark.enabled", "true")
            .set(DATAFRAME_DEBUGGING, "false")
            .set(CODEGEN_CACHE, str(CODEGEN_CACHE_ENTRIES))
            .set(CODEGEN_ID_IN_CLASS_NAME, "false")
            .set("spark.driver.memory", os.environ.get("REPLICAFLOW_DRIVER_MEMORY", "4g"))
            .set("spark.executor.memory", os.environ.get("REPLICAFLOW_EXECUTOR_MEMORY", "1g"))
            .set("spark.driver.extraJavaOptions", java_options(python_tasks_only, rows, class_archive.use_option()
                                                               if archive is None else archive, log_bytes))
            .set("spark.executor.extraJavaOptions", java_options(rows=rows, log_bytes=log_bytes)))
    if _LOCAL.match(master):
        # the files a command reads lie on this machine: Spark lists more than 32 paths with a job of a
        # task per path (1.5 s for 600 log files on 2 cores), where the driver lists them in 0.1 s
        conf.set("spark.sql.sources.parallelPartitionDiscovery.threshold", str(LOCAL_LISTING_PATHS))
    ctrl_c = signal.getsignal(signal.SIGINT) if threading.current_thread() is threading.main_thread() else None
    if SparkContext._gateway is None:
        SparkContext._ensure_initialized(gateway=_quiet_gateway(conf), conf=conf)
    try:
        session = SparkSession(SparkContext.getOrCreate(conf))
    except Py4JJavaError as exc:  # the JVM is up and refuses the master: a k8s:// API server that is not there …
        raise ReplicaflowError(f"--master {quote(master)}: Spark could not start on it: {java_reason(exc)}"
                               f"{_root_cause(exc)}") from None
    finally:
        if ctrl_c not in (None, signal.default_int_handler):  # the command line's Ctrl-C (cli.main), not PySpark's
            signal.signal(signal.SIGINT, ctrl_c)
    remember_jvm_classes(session.sparkContext._jvm)
    partitions = os.environ.get("REPLICAFLOW_SHUFFLE_PARTITIONS") or str(2 * session.sparkContext.defaultParallelism)
    session.conf.set("spark.sql.shuffle.partitions", partitions)
    return session


def remember_jvm_classes(jvm) -> None:
    """Keep ``PYSPARK_JVM_CLASSES`` on the gateway's view of the JVM, so that PySpark finds each in Python.

    py4j asks the JVM only for a name the view lacks (``JVMView.__getattr__``); a class reference holds
    its name and the gateway, which outlive every session of this process. A class named two ways
    (``functions``) is one reference, so it asks for each of its methods once.
    """
    kept: dict[str, StaticMethodsKept] = {}
    for name in PYSPARK_JVM_CLASSES:
        if name not in vars(jvm):
            found = getattr(jvm, name)
            vars(jvm)[name] = kept.setdefault(found._fqn, StaticMethodsKept(found._fqn, found._gateway_client))


class StaticMethodsKept(JavaClass):
    """A py4j class reference that keeps each static method it has looked up.

    py4j asks the JVM what ``functions.col`` is at every ``F.col`` (``JavaClass.__getattr__``), one round trip
    before the call itself: about 4,500 of them in `analyze --logs` of a few small files, 3 s of py4j call
    time over its threads (docs/pipeline-measurements.md). A static method of a loaded class stays what it
    is, and py4j's ``JavaMember`` holds only its name and the gateway, so one serves every later call from
    any thread. Fields are not kept: their values may change.
    """

    def __getattr__(self, name: str):
        member = super().__getattr__(name)
        if isinstance(member, JavaMember):
            vars(self)[name] = member
        return member


def get_spark_soon(master: str = "local[2]", rows: int | None = None) -> Callable[[], SparkSession]:
    """Start the SparkSession on another thread and return a call that waits for it.

    Starting the JVM takes seconds that a job which first does Python work (simulating, in ``run``
    and ``demo``) need not wait for. ``master`` is checked here, before anything starts; a failure
    to start is raised by the call, as ``get_spark`` would raise it. ``rows``: as for ``get_spark``.
    """
    check_master(master)
    result: dict[str, object] = {}

    def start() -> None:
        try:
            result["session"] = get_spark(master, rows=rows)
        except BaseException as exc:  # noqa: BLE001 -- handed to the caller's thread
            result["error"] = exc

    thread = threading.Thread(target=start, name="replicaflow-spark-start", daemon=True)
    thread.start()

    def wait() -> SparkSession:
        thread.join()
        if "error" in result:
            raise result["error"]
        return result["session"]

    return wait


def record_class_archive(train: Callable[[SparkSession], object], rows: int | None = None,
                         timeout_s: float = 600.0) -> Path | None:
    """Run ``train`` on a fresh driver JVM that writes the classes it loaded into the class archive as it exits
    (class_archive.py); the archive, or None when this JVM could not write one (the JVM's reason is in its log).

    Needs a process that has not started a JVM yet, and stops the session and its JVM: the archive is written
    at the JVM's exit, into a temporary file that replaces the archive only when complete. ``rows``: as for
    ``get_spark`` (the JIT does not change which classes load).
    """
    target = class_archive.archive_path()
    if target is None:
        raise ReplicaflowError(f"setup: no class archive to record ({class_archive.ARCHIVE_ENV}=off, or no Java)")
    if SparkContext._gateway is not None:
        raise RuntimeError("record_class_archive needs a process without a JVM")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        session = get_spark(rows=rows, archive=class_archive.record_option(tmp))
        try:
            train(session)
        finally:
            exited = stop_jvm(session, timeout_s)
        if not exited or not tmp.is_file() or tmp.stat().st_size == 0:
            return None
        size = class_archive.size_file(target)
        os.replace(tmp, target)  # a size file of another archive, or none, keeps it unused until the next line
        size.write_text(str(target.stat().st_size))
        class_archive.jars_file(target).write_text(f"{class_archive.spark_jars().resolve()}\n")
    finally:
        tmp.unlink(missing_ok=True)
    for old in class_archive.stale(target):
        old.unlink(missing_ok=True)
    return target


def stop_jvm(session: SparkSession, timeout_s: float = 60.0) -> bool:
    """Stop the session and let its JVM exit (PySpark's gateway server exits when its stdin closes); whether
    it exited within ``timeout_s`` (else it is killed). The next ``get_spark`` starts a fresh JVM, which
    ``spark.stop()`` alone does not: the gateway, and the JIT's work in it, would be reused."""
    gateway = session.sparkContext._gateway
    proc = gateway.proc
    session.stop()
    gateway.shutdown()
    SparkContext._gateway = None
    SparkContext._jvm = None
    proc.stdin.close()
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        return False
    return proc.returncode == 0


def stop_jvm_now(timeout_s: float = 10.0) -> None:
    """End this process's JVM, if it started one, and wait until it is gone: the command line's Ctrl-C and
    SIGTERM (cli.main). Cancelled jobs would run on for seconds (their tasks stop only between records, and
    threads still planning submit new ones), and a JVM still writing after the output commit removed its
    staging folder could make it again. SIGTERM runs Spark's shutdown hooks, which remove its scratch folders;
    a JVM not gone within ``timeout_s`` is killed. Its py4j calls then fail, which cli.main does not report, and
    py4j, whose call the signal interrupted, would log the traceback of closing that call's socket: its logger is
    silenced first."""
    gateway = SparkContext._gateway
    proc = getattr(gateway, "proc", None)
    if proc is None or proc.poll() is not None:
        return
    logging.getLogger("py4j").setLevel(logging.CRITICAL + 1)
    proc.terminate()
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def jvm_last_words(output: str) -> str:
    """The last line of a JVM's output that is not a stack frame: its exception's own message (a failed
    spark-submit ends with the frames of its exception, whose last one said nothing), at most 200 characters."""
    lines = [ln.strip() for ln in output.splitlines() if ln.strip() and not _STACK_FRAME.match(ln)]
    return lines[-1].removeprefix('Exception in thread "main" ')[:200] if lines else ""


def _not_py4j(record: logging.LogRecord) -> bool:
    """Drops py4j's own log records on the root logger: each call to a JVM that died logs its traceback there
    (``java_gateway.send_command`` calls ``logging.exception``), before the sentence that ends the command
    says what happened. Kept with ``-v``, as the JVM's own output is."""
    return f"{os.sep}py4j{os.sep}" not in record.pathname


def _quiet_gateway(conf: SparkConf):
    """Start the JVM with its stdout and stderr in the Spark log file (see the module docstring)."""
    if class_archive.java_home() is None:
        raise ReplicaflowError("Spark needs Java 17+ and none was found (JAVA_HOME unset and no `java` on PATH): "
                               "install it, e.g. `apt-get install openjdk-17-jre-headless`")
    target = os.environ.get("REPLICAFLOW_SPARK_LOG")
    if target == "-":
        return None  # SparkContext starts it on the terminal
    logging.getLogger().addFilter(_not_py4j)  # once: addFilter keeps one of each
    log = Path(target) if target else Path(tempfile.gettempdir()) / f"replicaflow-spark-{os.getpid()}.log"
    with open(log, "ab") as sink:
        try:
            gateway = launch_gateway(conf, popen_kwargs={"stdout": sink, "stderr": sink})
            if not target:  # kept when the JVM did not start, so the sentence can point at it
                atexit.register(lambda: log.unlink(missing_ok=True))
            return gateway
        except (PySparkRuntimeError, OSError) as exc:
            tail = ""
            with contextlib.suppress(OSError):
                said = jvm_last_words(log.read_text(errors="replace"))
                tail = f": {said}" if said else ""
            raise ReplicaflowError(f"Spark could not start its JVM ({type(exc).__name__}){tail} — the JVM's "
                                   f"output is in {log}") from None
