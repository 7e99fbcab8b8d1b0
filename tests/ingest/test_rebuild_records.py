"""A KRaft controller's PartitionRecord lines as a partition's leader and ISR before any broker's line
(holders.recorded_state): an hour of a quorum's files in which the brokers log nothing until the controller fences
them all, as a public 3.9 cluster's logs show (BetrajJ/kafka-kraft, 2025-02-07 11:00-12:09: 29 partitions without
a leader for ten minutes, read as none offline)."""

from __future__ import annotations

import pytest

from replicaflow.ingest.rebuild import rebuild
from replicaflow.ingest.sources import ClusterInputs, RebuildOptions
from tests.ingest.log_cases import write_files

pytestmark = pytest.mark.spark

RCM = "(org.apache.kafka.controller.ReplicationControlManager)"
MS = 1738922400000  # 2025-02-07 10:00:00 UTC


def record(ts: str, node: int, epoch: int) -> str:
    return (f"[2025-02-07 {ts}] INFO [QuorumController id={node}] Replayed PartitionRecord for new partition t-0 with "
            "topic ID DUc4knVDQMGKcHKxYw3MQQ and PartitionRegistration(replicas=[1, 2], directories=[4SvYonARtmIsmjtA1FO"
            "evg, B_s3M5qvrILHbTrqu_tnLg], isr=[1, 2], removingReplicas=[], addingReplicas=[], elr=[], lastKnownElr=[], "
            f"leader=1, leaderRecoveryState=RECOVERED, leaderEpoch={epoch}, partitionEpoch=7). {RCM}\n")


def started(ts: str, node: int) -> str:
    return (f"[2025-02-07 {ts}] INFO [QuorumController id={node}] Creating new QuorumController with clusterId "
            "IAwvuCRtQFikmbSEMsgQFw. (org.apache.kafka.controller.QuorumController)\n")


FILES = {
    # two controllers start and replay the snapshot's record of t-0 (leader 1, epoch 4); then controller 2 fences
    # both brokers whose sessions timed out; broker 2 leads t-0 again a minute later
    "logs/controller.log": started("10:00:00,000", 1) + record("10:00:00,100", 1, 4) + started("10:00:30,000", 2)
    + record("10:00:30,100", 2, 4) + record("10:00:30,200", 2, 3)
    + f"[2025-02-07 10:01:00,000] INFO [QuorumController id=2] Fencing broker 1 because its session has timed out. {RCM}\n"
    + f"[2025-02-07 10:01:00,010] INFO [QuorumController id=2] Fencing broker 2 because its session has timed out. {RCM}\n",
    "logs/state-change.log":
        "[2025-02-07 10:01:59,000] INFO [Broker id=2] Follower t-0 starts at leader epoch 6 from offset 0 with partition "
        "epoch 9 and high watermark 0. Current leader is -1. Previous leader Some(-1) and previous leader epoch was 6. "
        "(state.change.logger)\n"
        "[2025-02-07 10:02:00,000] INFO [Broker id=2] Leader t-0 with topic id Some(DUc4knVDQMGKcHKxYw3MQQ) starts at "
        "leader epoch 7 from offset 0 with partition epoch 10, high watermark 0, ISR [2], adding replicas [] and removing "
        "replicas [] . Previous leader Some(-1) and previous leader epoch was 6. (state.change.logger)\n",
}


def test_a_controllers_partition_record_leads_until_the_fencing_leaves_no_leader(spark, tmp_path):
    """ReplicationControlManager.replay(PartitionRecord) logs the partition as the metadata log holds it: leader 1,
    epoch 4, ISR [1, 2]. Each controller restates it at its start (the same epoch: no new row; an older one: none
    either). handleBrokerFenced then moves the leadership off broker 1 to the ISR's other member, and at broker 2's
    fencing leaves no leader (PartitionChangeBuilder: the ISR keeps its last member, leader -1) until broker 2's
    line of epoch 7. Without the record, no leader was known before that line, and no fencing made t-0 offline.
    ReplicationControlManager.handleBrokerUnfenced, not the broker's start, elects the first ISR member back."""
    paths = write_files(tmp_path, FILES)
    tables = rebuild(spark, [ClusterInputs("c", tuple(paths))], RebuildOptions(scrape_interval_ms=1000)).tables
    leaders = [(r["ts_ms"] - MS, r["leader"], r["leader_epoch"])
               for r in tables["leaders"].orderBy("ts_ms", "seq").collect()]
    # broker 2's first line after its fencing is a follower's with no leader: it is back but still fenced, so it
    # leads nothing before its own leader line (no unfence line of the controller's: not elected at its return)
    assert leaders == [(100, 1, 4), (60_000, 2, None), (60_010, -1, None), (119_000, -1, None), (120_000, 2, 7)]
    isr = [(r["ts_ms"] - MS, sorted(r["isr"])) for r in tables["isr"].orderBy("ts_ms", "seq").collect()]
    assert isr[0] == (100, [1, 2]) and isr[-1] == (120_000, [2])
