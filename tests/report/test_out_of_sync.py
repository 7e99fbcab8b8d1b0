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


# Kafka 2.8 with ZooKeeper: broker 3 leads orders-0 and is audit-0's only replica; 1 and 2 die first, then 3.
OUTAGE = """\
name: outage3
duration: 1m30s
tick: 1s
scrape_interval: 10s
kafka: {version: "2.8"}
cluster: {brokers: 3}
topics:
  - {name: orders, partitions: 1, replication_factor: 3, produce_rate: 100KB/s, assignment: [[3, 1, 2]]}
  - {name: audit, partitions: 1, replication_factor: 1, produce_rate: 10KB/s, assignment: [[3]]}
events:
  - {at: 10s, broker_down: 1}
  - {at: 20s, broker_down: 2}
  - {at: 40s, broker_down: 3}
  - {at: 70s, broker_up: 3}
"""
ELR = Path(__file__).parents[1] / "pipeline" / "scenarios" / "kraft-41-elr.yaml"


def _incident_cells(root: Path, scenario: Path) -> list[tuple[str, str, str]]:
    """(kind, partition, out-of-ISR cell) of each incident in the report of `replicaflow run SCENARIO`, sorted."""
    done = subprocess.run([str(Path(sys.executable).parent / "replicaflow"), "run", str(scenario), "--out", "out"],
                          cwd=root, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    html = (root / "out" / "report.html").read_text()
    data = json.loads(html.split('<script type="application/json" id="report-data">')[1].split("</script>")[0])
    (grid,) = [t for t in data["tables"] if t["id"].endswith("-incidents")]
    return sorted((r["kind"], r["partition"], r["out_of_sync"]) for r in grid["rows"])


def test_an_offline_incident_names_the_offline_isr_it_waits_for(tmp_path):
    """ZooKeeper keeps the last ISR member of a partition whose leader dies with no live ISR member left, and sets
    leader -1 (``ReplicaStateMachine.doRemoveReplicasFromIsr`` keeps a one-member ISR; docs/semantics.md §6): audit-0
    (one replica) had nobody out of its ISR, and its cell read '–'; orders-0 named only 1 and 2, not broker 3 it waits
    for. Broker 1's death is noticed at 28 s (the 18 s session timeout of 2.5+, KIP-537), 2's at 38 s, 3's at 58 s."""
    (tmp_path / "s.yaml").write_text(OUTAGE)
    cells = _incident_cells(tmp_path, tmp_path / "s.yaml")
    assert cells == [("offline", "audit-0", "ISR 3 offline"), ("offline", "orders-0", "1, 2; ISR 3 offline"),
                     ("urp", "orders-0", "1"), ("urp", "orders-0", "1, 2")]  # URP before and after the outage


def test_with_eligible_leader_replicas_an_offline_incident_names_the_elr(tmp_path):
    """KRaft 4.1 with ELR (KIP-966, ``PartitionChangeBuilder``, docs/semantics.md §6): the ISR empties when its last
    member dies and the ELR keeps who may still lead cleanly. clean-0's follower 3 is stalled, 2 shuts down at 30 s
    (ISR 1, ELR 2), 1 crashes at 40 s (noticed 9 s later: ISR empty, ELR 1, 2) until 2 returns and leads from the ELR."""
    cells = _incident_cells(tmp_path, ELR)
    assert [c for c in cells if c[0] == "offline"] == [("offline", "clean-0", "1, 2, 3; ELR 1, 2 offline")]
