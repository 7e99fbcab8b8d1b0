"""Hostile and broken inputs through the real command line: one sentence, exit status 2, no traceback,
in seconds, under a 6 GB address-space cap where no JVM is involved (table-driven)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent / "replicaflow"
GOOD = """\
name: t
duration: 2m
kafka: {version: "3.7"}
cluster: {brokers: 3}
topics: [{name: orders, partitions: 3, replication_factor: 3}]
"""
BOMB = "a: &a [1,1,1,1,1,1,1,1,1,1]\n" + "".join(
    f"{c}: &{c} [{','.join(['*' + p] * 10)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True))
CAP = 6 * 2**30


def _cap() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (CAP, CAP))


def _run(args, cwd, env=None, capped=True, timeout=60) -> subprocess.CompletedProcess:
    """The command in a fresh process; one that hangs fails the test at ``timeout`` (no timed assertion)."""
    return subprocess.run([str(BIN), *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env=env or os.environ.copy(), preexec_fn=_cap if capped else None)


SCENARIOS = [
    ("alias bomb", BOMB, "expands to more than 1,000,000 values"),
    ("deep nesting", "x: " + "[" * 100_000 + "]" * 100_000, "nested deeper than 64 levels"),
    ("a billion brokers", GOOD.replace("brokers: 3", "brokers: 1000000000"), "expected 1 to 10,000 brokers"),
    ("a billion partitions", GOOD.replace("partitions: 3", "partitions: 1000000000"), "at most 20,000,000 replicas"),
    ("a thousand days at 1 ms", GOOD.replace("duration: 2m", "duration: 1000d\ntick: 1ms\nscrape_interval: 1s"),
     "raise --max-work"),
    ("NaN produce rate", GOOD.replace("replication_factor: 3}", "replication_factor: 3, produce_rate: .nan}"),
     "expected a rate that fits in 64 bits"),
    ("markup in a value", GOOD.replace("duration: 2m", "duration: '[/bold]'"),
     "found '[/bold]'"),
    ("newline in a topic name", GOOD.replace("name: orders", 'name: "a\\nb"'),
     "expected a topic name of ASCII letters"),
    ("UTF-16 file", None, "is UTF-16; save it as UTF-8"),
    ("a 10 MB number", GOOD.replace("duration: 2m", "duration: " + "9" * 10_000_000),
     ":2: a number of 10,000,000 characters (at most 100)"),
    ("a 10 MB value", GOOD.replace("duration: 2m", "duration: " + "x" * 10_000_000), "more characters"),
    ("min ISR beyond int32", GOOD.replace("replication_factor: 3}", "replication_factor: 3, min_insync_replicas: "
                                          "2147483648}"), ":5: topics[0].min_insync_replicas: expected less than or "
                                                          "equal to 32767, found 2147483648"),
    ("cluster min ISR of 20 digits", GOOD.replace("brokers: 3}", "brokers: 3, min_insync_replicas: "
                                                  "99999999999999999999}"), ":4: cluster.min_insync_replicas"),
]


@pytest.mark.parametrize(("what", "text", "sentence"), SCENARIOS, ids=[s[0] for s in SCENARIOS])
def test_hostile_scenarios(tmp_path, what, text, sentence):
    path = tmp_path / "s.yaml"
    if text is None:
        path.write_bytes(GOOD.encode("utf-16"))
    else:
        path.write_text(text)
    done = _run(["simulate", path, "--out", "out"], tmp_path)
    assert done.returncode == 2 and sentence in done.stderr, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and len(done.stderr) < 2000
    assert not (tmp_path / "out").exists()


@pytest.fixture(scope="module")
def telemetry(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("tele")
    (root / "s.yaml").write_text(GOOD)
    done = _run(["-q", "simulate", "s.yaml", "--out", "run[1]"], root)
    assert done.returncode == 0, done.stderr
    return root


@pytest.mark.parametrize(("args", "env", "sentence"), [
    (["--master", "foo"], {}, "--master: expected local[N], local[*] or spark://host:port, found 'foo'"),
    (["--master", "spark://127.0.0.1:1"], {}, "no Spark master answers at 127.0.0.1:1"),
    ([], {"PATH": "/nonexistent", "JAVA_HOME": ""}, "Spark needs Java 17+ and none was found"),
    (["--out", ""], {}, "--out: expected a folder path, found an empty one"),
    (["--master", "local[0]"], {}, "--master: local[N] needs 1 to 2147483647 threads, found 'local[0]'"),
    (["--master", "yarn-client"], {}, "--master: expected local[N], local[*] or spark://host:port, found 'yarn-client'"),
    (["--master", "local[" + "9" * 5000 + "]"], {}, "--master: local[N] needs 1 to 2147483647 threads, found 'local[999"),
    (["--master", "spark://127.0.0.1:99999"], {}, "--master: expected a port from 1 to 65535, found "
                                                  "'spark://127.0.0.1:99999'"),
    (["--master", "mesos://127.0.0.1:5050"], {}, "--master: expected local[N], local[*] or spark://host:port, found "
                                                 "'mesos://127.0.0.1:5050'"),
], ids=["bad master", "unreachable master", "no java", "empty out", "zero threads", "spark 2's yarn-client",
        "5000-digit threads", "port beyond 65535", "mesos, gone from Spark 4"])
def test_environment_errors_are_one_sentence_in_seconds(telemetry, args, env, sentence):
    argv = ["analyze", "run[1]", *(args if "--out" in args else ["--out", "run[1]", *args])]
    done = _run(argv, telemetry, env={**os.environ, **env}, capped=False)
    assert done.returncode == 2 and sentence in done.stderr, done.stderr[-2000:]
    assert "Traceback" not in done.stderr


def test_a_master_the_jvm_refuses_is_named_by_the_jvms_own_sentence(telemetry):
    """`--master yarn` passes the URL check and spark-submit refuses it; the sentence quoted the last line
    of the JVM's output, a stack frame ('at org.apache.spark.deploy.SparkSubmit.main(...)')."""
    env = {k: v for k, v in os.environ.items() if k not in ("HADOOP_CONF_DIR", "YARN_CONF_DIR")}
    done = _run(["analyze", "run[1]", "--out", "x", "--master", "yarn"], telemetry, env=env, capped=False)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert "When running with master 'yarn' either HADOOP_CONF_DIR or YARN_CONF_DIR must be set" in done.stderr
    assert " at org.apache" not in done.stderr and "Exception in thread" not in done.stderr


def test_a_master_whose_context_the_jvm_cannot_create_is_one_sentence(telemetry):
    """`--master k8s://…` passes the URL check and the JVM starts; creating the context then fails (no API
    server answers): that Py4JJavaError was a Java traceback with exit 1. The sentence names the innermost cause."""
    done = _run(["analyze", "run[1]", "--out", "x", "--master", "k8s://https://127.0.0.1:1"], telemetry, capped=False)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert ("--master 'k8s://https://127.0.0.1:1': Spark could not start on it: 'io.fabric8.kubernetes.client."
            "KubernetesClientException: An error has occurred.' (caused by 'java.net.ConnectException: Connection "
            "refused')") in done.stderr
    assert not (telemetry / "x").exists()


@pytest.mark.parametrize(("argv", "sentence"), [
    (["analyze", "s.yaml", "--out", "x"], "s.yaml: is a file, expected a folder holding telemetry/ (the output of "
                                          "`simulate`)"),
    (["report", "s.yaml"], "s.yaml: is a file, expected a folder holding analysis/ (the output of `analyze`)"),
    (["report", "nothing"], "nothing: report directory does not exist"),
], ids=["analyze a file", "report a file", "report a missing folder"])
def test_a_file_given_for_a_folder_is_named_as_a_file(telemetry, argv, sentence):
    """analyze said a file 'does not exist'; report put the path in quotes after 'report directory'."""
    done = _run(argv, telemetry)
    assert done.returncode == 2 and done.stderr == f"error: {sentence}\n", done.stderr


@pytest.mark.slow
def test_a_path_spark_would_glob_is_read_literally(telemetry):
    """`run[1]` is a Hadoop glob for `run1`: the reader escapes it."""
    done = _run(["-q", "analyze", "run[1]", "--out", "run[1]"], telemetry, capped=False, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (telemetry / "run[1]" / "analysis" / "partition_state").is_dir()


DESCRIBE = "".join(f"\tTopic: orders\tPartition: {p}\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2,3\n" for p in range(3))
MOVE = '{"version": 1, "partitions": [{"topic": "orders", "partition": 0, "replicas": [2, 3, 4]}]}'


def _plan_files(root: Path, describe: str = DESCRIBE, plan: str = MOVE) -> list:
    (root / "d.txt").write_text(describe)
    (root / "p.json").write_text(plan)
    return ["plan", "--topics", "d.txt", "--reassignment", "p.json", "--brokers", "1,2,3,4", "--master", "nonsense://x"]


def test_a_describe_line_of_partition_2_billion_is_one_sentence_in_seconds(tmp_path):
    """plan looked for the missing partitions by counting up to the largest id: 2^31 lookups, gigabytes."""
    argv = _plan_files(tmp_path, DESCRIBE.replace("Partition: 0", "Partition: 2147483647"))
    done = _run(argv, tmp_path)
    assert done.returncode == 2 and "d.txt: topic 'orders' lacks the line of partition 0" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_the_same_telemetry_directory_twice_is_named_as_such(telemetry):
    """It used to read as two clusters sharing a name ('run[1]: cluster name 't' is also used by run[1]')."""
    done = _run(["analyze", "run[1]", "./run[1]/", "--out", "x", "--master", "nonsense://x"], telemetry)
    assert done.returncode == 2 and "run[1]: this telemetry directory is given twice" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and not (telemetry / "x").exists()


def test_an_endless_input_is_refused_at_the_size_bound(tmp_path):
    """/dev/zero reports size 0: reading it whole used to grow without end (a pipe is read the same way)."""
    argv = _plan_files(tmp_path)
    argv[argv.index("d.txt")] = "/dev/zero"
    done = _run(argv, tmp_path)
    assert done.returncode == 2, done.stderr
    assert "/dev/zero: the kafka-topics --describe output is larger than 256 MiB" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_a_named_pipe_nobody_writes_to_is_one_sentence_and_a_pipe_with_a_writer_is_read(tmp_path):
    """open() of a named pipe waits for a writer: simulate and plan hung forever on one (telemetry/textfile.py
    opens without waiting). A pipe that has a writer, as bash's ``<(...)`` gives, is still read to its end."""
    os.mkfifo(tmp_path / "fifo")
    done = _run(["simulate", "fifo", "--out", "o"], tmp_path, timeout=30)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == "error: fifo: the scenario file is a pipe that gave no data (no program writes to it)"
    argv = _plan_files(tmp_path)
    argv[argv.index("p.json")] = "fifo"
    done = _run(argv, tmp_path, timeout=30)
    assert "fifo: the reassignment file is a pipe that gave no data" in done.stderr and done.returncode == 2
    read, write = os.pipe()
    with os.fdopen(write, "w") as w:
        w.write(MOVE)
    argv = _plan_files(tmp_path)
    argv[argv.index("p.json")] = f"/dev/fd/{read}"
    done = subprocess.run([str(BIN), *argv], cwd=tmp_path, capture_output=True, text=True, timeout=60, pass_fds=(read,))
    os.close(read)
    assert "--master: expected local[N]" in done.stderr, done.stderr  # the files passed; only the master is refused


@pytest.mark.parametrize(("argv", "sentence"), [
    (["run[1]", "--logs", "nope/*.log"], "--logs: 'nope/*.log' matches no file"),
    (["--logs", ""], "--logs: expected a file, directory or glob, found an empty one"),
    (["--logs", "/dev/zero"], "--logs: /dev/zero is not a regular file (a device, pipe or socket)"),
], ids=["logs matching nothing, with telemetry", "empty logs (the current folder)", "a device"])
def test_logs_are_checked_before_spark(telemetry, argv, sentence):
    """With telemetry, --logs was resolved after Spark started; '' resolved to every file under the cwd."""
    done = _run(["analyze", *argv, "--out", "x", "--master", "nonsense://x"], telemetry)
    assert done.returncode == 2 and sentence in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and not (telemetry / "x").exists()


def test_report_names_no_out_flag_it_does_not_have(tmp_path):
    """`report DIR` writes into DIR: a report.html of the user's is kept and the sentence offers no --out."""
    (tmp_path / "report.html").write_text("mine")
    done = _run(["report", tmp_path], tmp_path)
    assert done.returncode == 2 and "report.html: not written by replicaflow; move it away (" in done.stderr
    assert "--out" not in done.stderr and (tmp_path / "report.html").read_text() == "mine"


TOO_LONG = "y" * 300  # over the 255 bytes a file name may have: stat() fails with ENAMETOOLONG


@pytest.mark.parametrize("argv", [
    ["analyze", "--logs", TOO_LONG, "--out", "x"],
    ["analyze", "--logs", "s.yaml", "--topics", TOO_LONG, "--out", "x"],
    ["analyze", "--logs", "s.yaml", "--out", TOO_LONG],
    ["report", TOO_LONG],
    ["simulate", "s.yaml", "--out", TOO_LONG],
    ["run", "s.yaml", "--out", TOO_LONG],
], ids=["logs", "topics", "analyze out", "report dir", "simulate out", "run out"])
def test_a_path_the_system_refuses_is_one_sentence(tmp_path, argv):
    """A name too long for the file system was an OSError traceback from the first stat() of it."""
    (tmp_path / "s.yaml").write_text(GOOD)
    done = _run([*argv, "--master", "nonsense://x"] if argv[0] in ("analyze", "run") else argv, tmp_path)
    assert done.returncode == 2 and "(100 more characters): File name too long" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.splitlines()) == 1


@pytest.mark.parametrize("with_telemetry", [False, True], ids=["logs alone", "with telemetry"])
def test_a_log_file_over_2_gib_is_refused_before_spark(telemetry, with_telemetry):
    """Each file is read whole into one Java array: a 3 GiB server.log killed the JVM (a py4j traceback)."""
    big = telemetry / "big" / "broker-1" / "server.log"
    big.parent.mkdir(parents=True, exist_ok=True)
    with big.open("wb") as f:
        f.truncate(3 * 2**30)  # sparse: no disk used
    argv = ["analyze", *(["run[1]"] if with_telemetry else []), "--logs", "big", "--out", "x", "--master", "local[1]"]
    done = _run(argv, telemetry)
    assert done.returncode == 2, done.stderr
    assert "--logs: big/broker-1/server.log is 3.0 GiB; a log file is read whole, so at most 2 GiB" in done.stderr
    assert "Traceback" not in done.stderr and not (telemetry / "x").exists()


def test_a_jvm_that_dies_reading_logs_is_one_sentence():
    """A 1.9 GB log file is under the size bound but kills a 4 GB JVM: py4j's refused connection was a
    traceback (measured once; the JVM's death is simulated here)."""
    from replicaflow.errors import ReplicaflowError
    from replicaflow.ingest.sources import ClusterInputs
    from replicaflow.jobs.analyze import _spark_failure

    with pytest.raises(ReplicaflowError) as caught, _spark_failure([ClusterInputs("c", ("a.log",))],
                                                                     Path("out/telemetry")):
        raise ConnectionRefusedError(111, "Connection refused")
    assert str(caught.value) == ("--logs: Spark failed analyzing 1 log file of cluster c: the JVM stopped "
                                 "answering (out of memory?)")
