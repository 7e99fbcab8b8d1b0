"""An election after changes no line shows (ingest/holders.isr_before_unseen_changes): the new leader's line names
the ISR it was elected from, so a leader outside the stale ISR the logs last told is no unclean election, through
`replicaflow analyze --logs`'s function (docs/real-cluster.md, ``isr``); and an election at a whole cluster's
restart, in the summary as in the table (``brokers``)."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from replicaflow.ingest.rebuild import rebuild
from replicaflow.ingest.sources import ClusterInputs, RebuildOptions
from replicaflow.jobs.analyze import analyze_logs

pytestmark = pytest.mark.spark

SC = "(state.change.logger)"
# Kafka 3.9 in KRaft, verbatim (BetrajJ/kafka-kraft@8496c2c, kafka/logs/state-change.log.2025-02-27-15 and
# .2025-02-28-10): broker 3 leads kafka-topic-1 alone at partition epoch 217; broker 3's expansions (218, 219) and
# the controller's removal of broker 2 (220) are in no leader's line here, only in the followers' "Skipped" lines;
# then broker 3 shuts down and the controller elects broker 1, in the ISR [3, 1] of epoch 220 (unclean leader
# election is off on that cluster, and no controller line says UNCLEAN).
ALONE_AT_217 = (
    "[2025-02-27 18:35:30,777] INFO [Broker id=3] Leader kafka-topic-1 with topic id Some(DUc4knVDQMGKcHKxYw3MQQ) "
    "starts at leader epoch 112 from offset 0 with partition epoch 217, high watermark 0, ISR [3], adding replicas [] "
    f"and removing replicas [] . Previous leader Some(-1) and previous leader epoch was 111. {SC}\n")
SKIPPED_AT_220 = (
    "[2025-02-28 12:00:25,258] INFO [Broker id=1] Skipped the become-follower state change for kafka-topic-1 with "
    "topic id Some(DUc4knVDQMGKcHKxYw3MQQ) and partition state LeaderAndIsrPartitionState(topicName='kafka-topic', "
    "partitionIndex=1, controllerEpoch=-1, leader=3, leaderEpoch=112, isr=[3, 1], partitionEpoch=220, replicas=[3, "
    "1, 2], addingReplicas=[], removingReplicas=[], isNew=false, leaderRecoveryState=0) since it is already a "
    f"follower with leader epoch 112. {SC}\n")
ELECTED_AT_221 = (
    "[2025-02-28 12:00:25,499] INFO [Broker id=1] Leader kafka-topic-1 with topic id Some(DUc4knVDQMGKcHKxYw3MQQ) "
    "starts at leader epoch 113 from offset 0 with partition epoch 221, high watermark 0, ISR [1], adding replicas [] "
    f"and removing replicas [] . Previous leader Some(3) and previous leader epoch was 112. {SC}\n")
# the same election with nothing unseen: the ISR of epoch 220, as leader 3 logged it, holds broker 3 alone
ALONE_AT_220 = ("[2025-02-28 12:00:20,000] INFO [Partition kafka-topic-1 broker=3] ISR updated to 3  and version "
                "updated to 220 (kafka.cluster.Partition)\n")
# ZooKeeper 2.8, whose leader lines name no partition epoch: leader epochs 5 to 8, the three between unseen
ZK_ALONE = ("[2021-06-01 10:00:00,000] INFO [Broker id=3] Leader orders-0 starts at leader epoch 5 from offset 40 with "
            f"high watermark 40 ISR [3] addingReplicas [] removingReplicas []. Previous leader epoch was 4. {SC}\n")
ZK_ELECTED = ("[2021-06-01 11:00:00,000] INFO [Broker id=1] Leader orders-0 starts at leader epoch {e} from offset 40 "
              f"with high watermark 40 ISR [1] addingReplicas [] removingReplicas []. Previous leader epoch was 4. {SC}\n")
# zk-seen's election at a whole cluster's restart: both brokers shut down at 10:30 and log "started" after it (a
# KafkaServer registers, and the controller among them elects, before that line); broker 1 expands the ISR at 11:00:02
ZK_ISR_BACK = ("[2021-06-01 11:00:02,000] INFO [Partition orders-0 broker=1] ISR updated to [1,3] and zkVersion "
               "updated to [9] (kafka.cluster.Partition)\n")


def _restarted(broker: int) -> str:
    return (f"[2021-06-01 10:30:00,000] INFO [KafkaServer id={broker}] shut down completed (kafka.server.KafkaServer)\n"
            f"[2021-06-01 11:00:05,000] INFO [KafkaServer id={broker}] started (kafka.server.KafkaServer)\n")


CLUSTERS = {
    "unseen": {"broker-3": ALONE_AT_217, "broker-1": SKIPPED_AT_220 + ELECTED_AT_221},
    "seen": {"broker-3": ALONE_AT_217 + ALONE_AT_220, "broker-1": SKIPPED_AT_220 + ELECTED_AT_221},
    "zk-unseen": {"broker-3": ZK_ALONE, "broker-1": ZK_ELECTED.format(e=8)},
    "zk-seen": {"broker-3": ZK_ALONE, "broker-1": ZK_ELECTED.format(e=6)},
    "zk-restart": {"broker-3": ZK_ALONE, "broker-1": ZK_ELECTED.format(e=6) + ZK_ISR_BACK},
}
SERVER_LOGS = {"zk-restart": {"broker-3": _restarted(3), "broker-1": _restarted(1)}}


@pytest.fixture(scope="module")
def analyzed(spark, tmp_path_factory) -> tuple[dict[str, list[tuple[int, int]]], dict]:
    """The clusters as one fleet (a folder each), analyzed by ``analyze --logs``'s own function in the tests' Spark
    session: each one's unclean elections (leader, leader epoch), and the summary."""
    root = tmp_path_factory.mktemp("unseen")
    for name, files in (("state-change.log", CLUSTERS), ("server.log", SERVER_LOGS)):
        for cluster, brokers in files.items():
            for broker, text in brokers.items():
                path = root / "logs" / cluster / broker / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
    analyze_logs([str(root / "logs")], root / "out", cluster_from_path=True, spark=spark)
    rows = pq.read_table(root / "out" / "analysis" / "unclean_elections").to_pylist()
    summary = json.loads((root / "out" / "analysis" / "_summary.json").read_text(encoding="utf-8"))
    return {c: sorted((r["leader"], r["leader_epoch"]) for r in rows if r["cluster"] == c) for c in CLUSTERS}, summary


@pytest.fixture(scope="module")
def elections(analyzed) -> dict[str, list[tuple[int, int]]]:
    return analyzed[0]


def test_a_leader_elected_after_unseen_partition_epochs_is_no_unclean_election(elections):
    """KRaft: partition epoch 221 comes four after 217, the last epoch whose ISR a line names (Partition.makeLeader's
    `Leader … starts at leader epoch E … with partition epoch P, … ISR [..]`, `ISR updated to … version updated to
    P`): the ISR [3] is stale, and broker 1 was elected from the ISR its line names. With epoch 220's ISR [3] logged,
    the same line is an election outside the ISR (PartitionChangeBuilder's unclean election leaves the leader alone
    in the ISR)."""
    assert elections["unseen"] == []
    assert elections["seen"] == [(1, 113)]


def test_a_leader_elected_after_unseen_leader_epochs_is_no_unclean_election(elections):
    """ZooKeeper 2.8: leader epoch 8 after 5 (KafkaController bumps it at every election and ISR removal it
    writes): three decisions unseen. Epoch 6 right after 5 with the leader outside [3] is an unclean election."""
    assert elections["zk-unseen"] == []
    assert elections["zk-seen"] == [(1, 6)]


def test_an_election_at_a_whole_clusters_restart_is_in_the_headline_and_its_isr_change_in_the_meter(analyzed):
    """Both brokers shut down ("shut down completed", KafkaServer.shutdown); broker 1 is elected outside the ISR [3]
    at 11:00:00 and expands the ISR at 11:00:02, before its "started" line at 11:00:05: KafkaServer.startup
    registers the broker, and the controller among the brokers elects, before that line. No lifecycle line had a
    broker up then, so the meters missed both and the summary said no unclean election while the table listed one
    (ingest/broker_sessions.serving_while_down; pipeline/summary.py: from logs, the headline is the table's count)."""
    elections, summary = analyzed
    assert elections["zk-restart"] == elections["zk-seen"] == [(1, 6)]
    restart = summary["zk-restart"]
    assert (restart["unclean_elections"], restart["isr_expands"], restart["isr_shrinks"]) == (1, 1, 0)
    assert [summary[c]["unclean_elections"] for c in CLUSTERS] == [len(elections[c]) for c in CLUSTERS]


@pytest.mark.spark
def test_a_kraft_followers_own_log_gives_the_leader_isr_and_replicas_of_its_skipped_state_changes(spark, tmp_path):
    """Broker 1's state-change.log alone (KRaft 3.9, verbatim): Partition.makeFollower logs the state it skips as
    already applied, LeaderAndIsrPartitionState(leader=3, leaderEpoch=112, isr=[3, 1], …, replicas=[3, 1, 2]) — the
    leader, ISR and whole assignment of a partition its own lines name no leader or ISR change of
    (holders.requested_state; docs/real-cluster.md, "Logs alone")."""
    path = tmp_path / "broker-1" / "state-change.log"
    path.parent.mkdir()
    path.write_text(SKIPPED_AT_220, encoding="utf-8")
    tables = rebuild(spark, [ClusterInputs("c", (str(path),))], RebuildOptions(scrape_interval_ms=1000)).tables
    assert [(r["leader"], r["leader_epoch"]) for r in tables["leaders"].collect()] == [(3, 112)]
    assert [r["isr"] for r in tables["isr"].collect()] == [[3, 1]]
    assert [r["replicas"] for r in tables["assignments"].collect()] == [[3, 1, 2]]
