"""A partition the controller left without a leader, from the line that tells it (log_changes.told_leaders): the
ZooKeeper controller's failed election. Through `replicaflow analyze --logs`'s function: the partition is offline, not
under-replicated, until a leader's line (docs/real-cluster.md, ``leaders``)."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from replicaflow.jobs.analyze import analyze_logs
from tests.ingest.log_cases import write_files

pytestmark = pytest.mark.spark

FAILED = ("[2020-02-07 10:{t}] ERROR [Controller id=1004 epoch=12] Controller 1004 epoch 12 failed to change state for "
          "partition __consumer_offsets-40 from OfflinePartition to OnlinePartition (state.change.logger)\n")
FILES = {
    # ZooKeeper 2.1-2.3 (getsentry/self-hosted#383's controller lines): the leader shrinks its ISR to itself, goes, and
    # the controller fails to elect another, twice; the leader comes back and expands its ISR
    "zk/broker-1/server.log": (
        "[2020-02-07 10:40:00,000] INFO [Partition __consumer_offsets-40 broker=1] Shrinking ISR from 1,2 to 1 "
        "(kafka.cluster.Partition)\n"
        "[2020-02-07 10:50:00,000] INFO [Partition __consumer_offsets-40 broker=1] Expanding ISR from 1 to 1,2 "
        "(kafka.cluster.Partition)\n"),
    "zk/broker-1004/state-change.log": (
        FAILED.format(t="47:27,429") + "kafka.common.StateChangeFailedException: Failed to elect leader for partition "
        "__consumer_offsets-40 under strategy OfflinePartitionLeaderElectionStrategy\n"
        "        at kafka.controller.PartitionStateMachine$$anonfun$doElectLeaderForPartitions$3.apply("
        "PartitionStateMachine.scala:366)\n" + FAILED.format(t="48:00,000")
        + FAILED.format(t="49:00,000").replace("__consumer_offsets-40 from OfflinePartition", "orders-2 from NewPartition")),
}


def _clock(ms: int) -> str:
    return f"{ms // 3_600_000 % 24:02d}:{ms // 60_000 % 60:02d}:{ms // 1000 % 60:02d}.{ms % 1000:03d}"


@pytest.fixture(scope="module")
def analyzed(spark, tmp_path_factory) -> tuple[dict, dict]:
    """{cluster: [(from HH:MM:SS.mmm, leader, offline, urp)]} of analysis/partition_state, and the summary."""
    root = tmp_path_factory.mktemp("offline")
    write_files(root / "logs", FILES)
    analyze_logs([str(root / "logs")], root / "out", cluster_from_path=True, spark=spark)
    rows = sorted(pq.read_table(root / "out" / "analysis" / "partition_state").to_pylist(),
                  key=lambda r: (r["cluster"], r["from_ms"]))
    states: dict = {}
    for r in rows:
        states.setdefault(r["cluster"], []).append((_clock(r["from_ms"]), r["leader"], r["offline"], r["urp"]))
    return states, json.loads((root / "out" / "analysis" / "_summary.json").read_text(encoding="utf-8"))


def test_a_zookeeper_controllers_failed_election_leaves_the_partition_offline(analyzed):
    """PartitionStateMachine.doElectLeaderForPartitions logs `… failed to change state for partition t-p from
    OfflinePartition to OnlinePartition` when no ISR member is alive: OfflinePartitionsCount counts it until an
    election succeeds (the leader's next line; its repeat at the next broker change is the same state). Before, the
    partition stayed under its dead leader, under-replicated. A new partition that no live replica can lead (`… from
    NewPartition to OnlinePartition`, fede1024/rust-rdkafka#242) stays NewPartition, which the gauge does not count."""
    states, summary = analyzed
    assert states["zk"] == [("10:40:00.000", 1, False, True), ("10:47:27.429", -1, True, False),
                            ("10:50:00.000", 1, False, False)]
    zk = summary["zk"]
    assert (zk["peak_offline"], zk["incidents"]["offline"], zk["offline_minutes"]) == (1, 1, 2.543)
