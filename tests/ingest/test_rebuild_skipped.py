"""ISR rows from the state changes a KRaft broker skipped as already applied (log_changes._skipped):
Partition.makeLeader/makeFollower (3.3+) log `Skipped the become-leader|follower state change for t-p …` with the
partition's registration. From metadata 3.6 the controller takes a shutting-down or fenced broker out of the ISR
under the same leader epoch (PartitionChangeBuilder.triggerLeaderEpochBumpForIsrShrinkIfNeeded), so these lines of
the replicas are the only ones of it where the controller's own file is missing."""

from __future__ import annotations

import pytest

from replicaflow.ingest.rebuild import rebuild
from replicaflow.ingest.sources import ClusterInputs, RebuildOptions
from replicaflow.telemetry.schema import CONTROLLER_ISR_EPOCH
from tests.ingest.log_cases import write_files

SC = "(state.change.logger)"
MS = 1772445600000  # 2026-03-02 10:00:00 UTC
TID = "Some(G4lSZgn5SQKyRsPFZLbhGw)"


def t(clock: str) -> str:
    return f"[2026-03-02 {clock}] INFO "


def leader(clock: str, p: int, epoch: int) -> str:
    return (f"{t(clock)}[Broker id=1] Leader orders-{p} with topic id {TID} starts at leader epoch 4 from offset 100 "
            f"with partition epoch {epoch}, high watermark 100, ISR [1,2,3], adding replicas [] and removing replicas "
            f"[] . Previous leader None and previous leader epoch was -1. {SC}\n")


def skipped39(clock: str, broker: int, p: int, isr: str, epoch: int) -> str:  # 3.3-4.0: LeaderAndIsrPartitionState
    role = "leader state change" if broker == 1 else "follower state change"
    already = "the leader" if broker == 1 else "a follower"
    return (f"{t(clock)}[Broker id={broker}] Skipped the become-{role} for orders-{p} with topic id {TID} and "
            f"partition state LeaderAndIsrPartitionState(topicName='orders', partitionIndex={p}, controllerEpoch=-1, "
            f"leader=1, leaderEpoch=4, isr=[{isr}], partitionEpoch={epoch}, replicas=[1, 2, 3], addingReplicas=[], "
            f"removingReplicas=[], isNew=false, leaderRecoveryState=0) since it is already {already} with leader "
            f"epoch 4. {SC}\n")


def skipped42(clock: str, p: int, isr: str, epoch: int) -> str:  # 4.2 (KAFKA-19447): a PartitionRegistration
    return (f"{t(clock)}[Broker id=2] Skipped the become-follower state change for orders-{p} with topic id {TID}, "
            f"partition registration PartitionRegistration(replicas=[1, 2, 3], directories=[AAAAAAAAAAAAAAAAAAAAAA, "
            f"AAAAAAAAAAAAAAAAAAAAAA, AAAAAAAAAAAAAAAAAAAAAA], isr=[{isr}], removingReplicas=[], addingReplicas=[], "
            f"elr=[], lastKnownElr=[], leader=1, leaderRecoveryState=RECOVERED, leaderEpoch=4, "
            f"partitionEpoch={epoch}) and isNew=false since it is already a follower with leader epoch 4. {SC}\n")


# Broker 3 stops at 10:05 (a controlled shutdown) and is back at 10:07, no controller's file. orders-0: the 3.9
# lines of the leader and of a follower, and the leader's `ISR updated` of the expansion; orders-1: a 4.2
# follower's lines alone after the leader's.
ROLL = {
    "broker-1/state-change.log":
        leader("10:00:00,100", 0, 8) + leader("10:00:00,100", 1, 3)
        + skipped39("10:05:00,500", 1, 0, "1, 2", 9) + skipped39("10:07:30,020", 1, 0, "1, 2, 3", 10),
    "broker-1/server.log":
        f"{t('09:59:00,100')}[KafkaRaftServer nodeId=1] Kafka Server started (kafka.server.KafkaRaftServer)\n"
        f"{t('10:07:30,000')}[Partition orders-0 broker=1] ISR updated to 1,2,3  and version updated to 10 "
        "(kafka.cluster.Partition)\n",
    "broker-2/state-change.log":
        skipped39("10:05:00,501", 2, 0, "1, 2", 9) + skipped39("10:07:30,021", 2, 0, "1, 2, 3", 10)
        + skipped42("10:05:00,600", 1, "1, 2", 4) + skipped42("10:07:40,000", 1, "1, 2, 3", 5),
    "broker-3/server.log":
        f"{t('09:59:00,100')}[KafkaRaftServer nodeId=3] Kafka Server started (kafka.server.KafkaRaftServer)\n"
        f"{t('10:05:02,000')}[BrokerServer id=3] shut down completed (kafka.server.BrokerServer)\n"
        f"{t('10:07:01,000')}[KafkaRaftServer nodeId=3] Kafka Server started (kafka.server.KafkaRaftServer)\n",
}


@pytest.mark.spark
def test_a_rolling_restart_without_the_controllers_file_shrinks_and_expands_the_isr(spark, tmp_path):
    """ReplicationControlManager.handleBrokerInControlledShutdown (3.9) writes ISR [1, 2] under leader epoch 4
    (partition epoch 9); leader and follower both log it as a skipped change, one row. Before, the ISR stayed
    [1, 2, 3] and the restart showed no under-replicated partition. The row is the controller's
    (CONTROLLER_ISR_EPOCH: no IsrShrinksPerSec of the leader counts it); the leader's expansion at 10:07:30 is its own
    `ISR updated` line, and the skipped lines repeating it are none. orders-1 is told by a 4.2 follower alone: its
    expansion, in no leader's line of the files, keeps the leader epoch (the controller adds no member)."""
    paths = write_files(tmp_path, ROLL)
    tables = rebuild(spark, [ClusterInputs("c", tuple(paths))], RebuildOptions(scrape_interval_ms=1000)).tables
    got: dict[int, list] = {}
    for r in tables["isr"].orderBy("ts_ms", "seq").collect():
        got.setdefault(r["partition"], []).append((r["ts_ms"] - MS, sorted(r["isr"]), r["leader_epoch"]))
    assert got[0] == [(100, [1, 2, 3], 4), (300_500, [1, 2], CONTROLLER_ISR_EPOCH), (450_000, [1, 2, 3], 4)]
    assert got[1] == [(100, [1, 2, 3], 4), (300_600, [1, 2], CONTROLLER_ISR_EPOCH), (460_000, [1, 2, 3], 4)]
