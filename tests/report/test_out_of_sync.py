"""Incidents name the brokers whose replicas were out of the ISR as they began: an operator's first question on
an under-replicated partition is "which broker?" (docs/report.md, the incidents table)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

CRASH = """\
name: crash2
duration: 2m
kafka: {version: "3.7"}
cluster: {brokers: 3, min_insync_replicas: 2}
topics: [{name: orders, partitions: 3, replication_factor: 3, min_insync_replicas: 2, produce_rate: 100KB/s}]
events:
  - {at: 20s, broker_down: 2}
"""


@pytest.fixture(scope="module")
def crashed(tmp_path_factory):
    """`replicaflow run` of three brokers, broker 2 crashing at 20 s, piped at 80 columns."""
    root = tmp_path_factory.mktemp("crash2")
    (root / "s.yaml").write_text(CRASH)
    done = subprocess.run([str(Path(sys.executable).parent / "replicaflow"), "run", "s.yaml", "--out", "out"],
                          cwd=root, capture_output=True, text=True, timeout=600, env={**os.environ, "COLUMNS": "80"})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return root / "out", done.stderr  # the measures table is printed with the progress steps, on stderr


def test_every_incident_of_the_crash_names_broker_2(crashed):
    """Broker 2 holds a replica of every partition (RF 3 of 3 brokers): once the controller drops it from each ISR
    (KafkaController.onBrokerFailure → onReplicasBecomeOffline, ISR without the dead replica), each partition is
    under-replicated with exactly broker 2's replica out of the ISR, and nothing else is."""
    out, _ = crashed
    rows = pq.read_table(out / "analysis" / "incidents").to_pylist()
    urp = [r for r in rows if r["kind"] == "urp"]
    assert sorted(r["partition"] for r in urp) == [0, 1, 2]
    assert {tuple(r["out_of_sync_replicas"]) for r in rows} == {(2,)}
    summary = json.loads((out / "analysis" / "_summary.json").read_text())["crash2"]
    assert [x["out_of_sync_replicas"] for x in summary["longest_incidents"]] == [[2], [2], [2]]


def test_the_console_and_the_report_say_broker_2(crashed):
    """Piped at 80 columns the longest incidents end with the broker; the report's incidents table has a column."""
    out, stdout = crashed
    lines = stdout[stdout.index("replicaflow analyze: crash2"):].splitlines()
    assert max(map(len, lines)) <= 80, stdout
    at = next(i for i, x in enumerate(lines) if x.startswith("  longest incidents: under-replicated orders-0"))
    assert " ".join(x.strip() for x in lines[at:at + 2]).endswith(", still at the end, broker 2 out of the ISR")
    html = (out / "report.html").read_text()
    assert '"title":"out of ISR at start (broker)"' in html and html.count('"out_of_sync":"2"') == 3
