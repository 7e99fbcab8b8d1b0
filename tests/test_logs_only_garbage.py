"""`replicaflow analyze --logs` without telemetry on hostile input, through the CLI: no crash, rejects
counted, exit 0 when anything was read, one sentence and a non-zero exit when nothing was or a path is
missing (refused before Spark starts)."""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from replicaflow.model.units import counted
from replicaflow.sim.runner import DESCRIBE_START, SNAPSHOTS, simulate

STORY = """name: garbage
duration: 60s
tick: 1s
kafka: {version: "3.7"}
cluster: {brokers: 3}
topics: [{name: orders, partitions: 3, replication_factor: 3, produce_rate: 100KB/s}]
events: [{at: 5s, stall_follower: {broker: 2, for: 45s}}]
"""
LINE_10MB = 10 * 2**20


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "100"}
    return subprocess.run([sys.executable, "-m", "replicaflow.cli", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=900)


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> Path:
    """A simulated cluster's logs, plus every kind of garbage beside them under broker-N folders."""
    root = tmp_path_factory.mktemp("garbage")
    (root / "s.yaml").write_text(STORY)
    simulate(root / "s.yaml", root / "sim", logs=True)
    logs = root / "logs"
    shutil.copytree(root / "sim" / "logs", logs)
    shutil.copy(root / "sim" / SNAPSHOTS / DESCRIBE_START, root / "describe.txt")
    junk = logs / "broker-9"
    junk.mkdir()
    (junk / "binary.log").write_bytes(bytes(range(256)) * 64 + b"\x00\xff\xfe" * 100)
    (junk / "long.log").write_text("x" * LINE_10MB + "\n")
    shaped = "[2026-01-01 00:00:05,000] INFO [Partition orders-0 broker=9] Shrinking ISR from " + "1," * (LINE_10MB // 2)
    (junk / "shaped.log").write_text(shaped + "\n")
    (junk / "empty.log").write_text("")
    line = "[2026-01-01 00:00:07,000] INFO [KafkaServer id=9] started (kafka.server.KafkaServer)\n"
    with gzip.open(junk / "server.log.gz", "wt") as f:
        f.write(line)
    (junk / "utf16.log").write_bytes(line.encode("utf-16"))
    many = logs / "broker-8"
    many.mkdir()
    for i in range(2000):
        (many / f"server.log.{i}").write_text(f"[2026-01-01 00:00:{i % 60:02d},000] INFO unrelated line {i} (x.Y)\n")
    return root


def progress_lines(stderr: str) -> list[str]:
    """The step texts a command logged (rich's ``[HH:MM:SS]`` column, printed once a second, stripped)."""
    return [re.sub(r"^\[\d\d:\d\d:\d\d\]", "", line).strip() for line in stderr.splitlines()]


def test_garbage_beside_real_logs_is_counted_and_the_run_succeeds(logs):
    """Without ``-q`` every phase says what it does before it runs: the silent minute before the analysis's
    own steps (Spark starting, the logs read, the tables rebuilt and written) is gone."""
    out = logs / "out"
    run = cli("analyze", "--logs", str(logs / "logs"), "--topics", str(logs / "describe.txt"), "--topics-at",
              "start", "--cluster", "garbage", "--out", str(out), cwd=logs)
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr
    steps = progress_lines(run.stderr)
    files = sum(1 for p in (logs / "logs").rglob("*") if p.is_file())
    expected = ["analyze: starting Spark", f"analyze: reading {counted(files, 'log file')} of cluster 'garbage'",
                "analyze: writing the rebuilt telemetry", "analyze: reading telemetry",
                "analyze: building and writing 10 tables", "analyze: summary"]
    assert [s for s in steps if s in expected] == expected, run.stderr
    rebuilding = [s for s in steps if s.startswith("analyze: rebuilding telemetry from ")]
    assert len(rebuilding) == 1 and steps.index(rebuilding[0]) == steps.index(expected[1]) + 1
    rejects = pq.read_table(out / "analysis" / "rejects").to_pylist()
    by_file = {Path(r["source"]).name for r in rejects}
    assert {"binary.log", "long.log", "shaped.log"} <= by_file
    assert all(len(r["raw_line"]) < 1100 for r in rejects)  # a 10 MB line stays a line
    events = pq.read_table(out / "analysis" / "log_events").to_pylist()
    assert any(e["kind"] == "isr_shrink" for e in events)
    assert any(Path(e["source"]).name == "server.log.gz" and e["broker"] == 9 for e in events)  # .gz read
    assert any(Path(e["source"]).name == "utf16.log" and e["broker"] == 9 for e in events)  # its ASCII read
    meta = json.loads((out / "telemetry" / "_meta.json").read_text())
    assert meta["source"] == "logs" and meta["kafka_version"] == "3.6" and meta["kafka_version_source"] == "logs"
    report = cli("report", str(out), cwd=logs)
    assert report.returncode == 0, report.stderr
    html = (out / "report.html").read_text()
    assert "inferred from the log lines" in html and "unknown: replica_offsets, traffic" in html


def test_nothing_readable_is_one_sentence_and_non_zero(logs):
    only = logs / "only-garbage" / "broker-1"
    only.mkdir(parents=True)
    shutil.copy(logs / "logs" / "broker-9" / "binary.log", only)
    (only / "empty.log").write_text("")
    run = cli("analyze", "--logs", str(only), "--out", str(logs / "out2"), cwd=logs)
    assert run.returncode != 0
    assert "Traceback" not in run.stderr
    *steps, last = progress_lines(run.stderr.strip())
    assert "no replication event in 2 files of cluster" in last and "analyze:" not in last
    # rejects are written with an analysis only: the sentence names the first unreadable line and why
    assert re.search(r"; [\d,]+ lines unreadable, the first \S*binary\.log:1 \(", last), last
    assert steps == ["analyze: starting Spark", "analyze: reading 2 log files of cluster 'cluster'"], run.stderr


@pytest.mark.parametrize(("args", "sentence"), [
    (["--logs", "missing/*.log"], "--logs: 'missing/*.log' matches no file"),
    (["--logs", "logs", "--topics", "nope.txt"], "--topics: nope.txt does not exist"),
    (["--logs", "logs", "--topics", ""], "--topics: expected a file, found an empty path"),
    (["--logs", "logs", "--cluster", "a\nb"], "--cluster: expected a cluster name of printable characters"),
    (["--logs", "logs", "--min-insync-replicas", "99999999999"], "--min-insync-replicas: expected at least 1 and at "
                                                                  "most 32,767, found 99999999999"),
    (["--logs", "logs", "--topics", "s.yaml"], "s.yaml:1: expected a line starting with 'Topic:'"),
    (["--logs", "logs", "--log-dirs", "describe.txt"], "describe.txt"),
    (["--logs", "logs", "--topics", "describe.txt", "--topics", "describe.txt"],
     "--topics: describe.txt is given twice; give it once"),
    (["--logs", "logs", "--kafka-version", "3.10"], "--kafka-version: Kafka 3.x ended with 3.9"),
    (["--logs", "logs", "--kafka-version", "3.7.99"], "--kafka-version: Kafka 3.7's releases were 3.7.0, 3.7.1 and "
     "3.7.2, found '3.7.99', which was never released"),
    (["--logs", "logs", "--log-timezone", "Mars/Olympus"], "--log-timezone: unknown time zone"),
    (["--logs", "logs", "--scrape-interval", "400d"], "--scrape-interval: at most 1h (the grid starts at the first "
                                                        "logged event rounded down to it), found '400d'"),
    (["--logs", "logs", "--topics-at", "noon"], "--topics-at: expected 'start', 'end' or epoch milliseconds"),
    (["--logs", "logs", "--topics-at", "1767225600"], "found '1767225600' (epoch seconds? give milliseconds)"),
    (["--logs", "logs", "--topics-at", "9999999999999999"], "epoch milliseconds from 2011 (Kafka's first release) "
                                                            "to 9999, found '9999999999999999'"),
    (["--logs", "logs", "--cluster", "a", "--cluster-from-path"], "--cluster and --cluster-from-path"),
    # both were taken and did nothing (a master that is not one: were they taken again, no Spark starts)
    (["--logs", "logs", "--topics-at", "start", "--master", "nonsense://x"], "--topics-at: only with --topics (it "
                                                                             "says when that describe output was taken)"),
    (["--logs", "logs", "--allow-empty", "--master", "nonsense://x"], "--allow-empty: only with a telemetry DIR"),
])
def test_bad_input_refused_before_spark(logs, args, sentence):
    out = logs / "refused"
    run = cli("analyze", *args, "--out", str(out), cwd=logs)
    assert run.returncode == 2, run.stderr
    assert sentence in run.stderr and len(run.stderr.strip().splitlines()) == 1
    assert not out.exists()  # refused before the output (and Spark) was touched


def test_a_scrape_grid_beyond_the_bound_is_one_sentence(tmp_path):
    """Three hours of logs at --scrape-interval 1ms are 10.8 million scrapes, each recomputing every gauge: the
    run ground for hours. The logged period is known once the logs are read, the grid is refused then."""
    log = tmp_path / "broker-1" / "state-change.log"
    log.parent.mkdir()
    leader = ("INFO [Broker id=1] Leader orders-0 with topic id Some(EsUA7Qt4eRBftGrw8ka-hw) starts at leader epoch "
              "{} from offset 0 with partition epoch {}, high watermark 0, ISR [1,2,3], adding replicas [] and "
              "removing replicas [] . Previous leader None and previous leader epoch was -1. (state.change.logger)\n")
    log.write_text(f"[2026-01-01 00:00:00,000] {leader.format(0, 0)}[2026-01-01 03:00:00,000] {leader.format(1, 1)}")
    run = cli("analyze", "--logs", str(log.parent), "--scrape-interval", "1ms", "--out", str(tmp_path / "out"),
              cwd=tmp_path)
    assert run.returncode == 2, run.stderr[-3000:]
    assert ("--scrape-interval: 1ms over the 3h logged by cluster 'cluster' makes 10,800,001 scrapes (at most "
            "10,000,000); give a longer interval") in run.stderr, run.stderr[-3000:]
    assert "Traceback" not in run.stderr and not (tmp_path / "out").exists()
