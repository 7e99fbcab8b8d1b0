"""Where a log line came from is named by the path a reader can open: not the staging folder a `run`
read it from, not the generation behind the `OUT/logs` link, and not Spark's URL form of a path
with a space or `[1]` in it (ingest/logs.py, jobs/run.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from replicaflow.jobs.analyze import analyze
from replicaflow.jobs.run import run

pytestmark = pytest.mark.spark

SCENARIO = """\
name: tiny
duration: 30s
tick: 1s
scrape_interval: 5s
kafka: {version: "3.7"}
cluster: {brokers: 3}
topics: [{name: t, partitions: 2, replication_factor: 3, produce_rate: 1MB/s}]
events: [{at: 5s, broker_down: 2}, {at: 15s, broker_up: 2}]
"""


def sources(out: Path) -> set[str]:
    return set(pq.read_table(out / "analysis" / "log_events").column("source").to_pylist())


@pytest.fixture(scope="module")
def ran(spark, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("sources")
    (root / "s.yaml").write_text(SCENARIO)
    run(root / "s.yaml", root / "out", logs=True, progress=False)
    return root / "out"


def test_run_names_logs_by_their_committed_path(ran):
    found = sources(ran)
    assert found and all(s.startswith(f"{ran.resolve()}/logs/broker-") for s in found), sorted(found)[:3]
    assert all(Path(s).is_file() for s in found)
    assert f"1 cluster · {ran.resolve()} ·" in (ran / "report.html").read_text()


def test_analyze_through_the_logs_link_keeps_the_name_given(spark, ran):
    analyze(ran, ran, spark=spark, logs=[str(ran / "logs")])
    found = sources(ran)
    assert found and all(s.startswith(f"{ran}/logs/broker-") and ".replicaflow" not in s for s in found)


def test_a_log_folder_with_brackets_and_a_space_is_read_literally(spark, ran, tmp_path):
    odd = tmp_path / "broker logs[1]"
    shutil.copytree(ran / "logs", odd)
    analyze(ran, ran, spark=spark, logs=[str(odd)])
    found = sources(ran)
    assert found and all(s.startswith(f"{odd}/broker-") for s in found), sorted(found)[:3]
