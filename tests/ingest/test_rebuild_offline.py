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
SELECTOR = "(kafka.controller.OfflinePartitionLeaderSelector)"
RCM = "(org.apache.kafka.controller.ReplicationControlManager)"
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
    # ZooKeeper 0.10.2 (andreinedelciu's and devicehive/devicehive-java-server#259's lines): a new controller finds
    # every replica of two partitions on dead broker 1002; unclean election is on for `orders`, off for `logs`. When
    # 1002 comes back, `orders-0` is led by it through an unclean election, `logs-0` through a clean one.
    "k010/broker-1001/controller.log": (
        "[2017-06-01 10:00:00,000] INFO [Controller 1001]: Controller 1001 incremented epoch to 5 "
        "(kafka.controller.KafkaController)\n"
        "[2017-06-01 10:10:00,020] INFO [Controller 1001]: New broker startup callback for 1002 "
        "(kafka.controller.KafkaController)\n"
        "[2017-06-01 10:10:00,030] WARN [OfflinePartitionLeaderSelector]: No broker in ISR is alive for [orders,0]. "
        f"Elect leader 1002 from live brokers 1002. There's potential data loss. {SELECTOR}\n"
        "[2017-06-01 10:10:00,031] INFO [OfflinePartitionLeaderSelector]: Selected new leader and ISR "
        f'{{"leader":1002,"leader_epoch":3,"isr":[1002]}} for offline partition [orders,0] {SELECTOR}\n'
        "[2017-06-01 10:10:00,050] INFO [OfflinePartitionLeaderSelector]: Selected new leader and ISR "
        f'{{"leader":1002,"leader_epoch":4,"isr":[1002]}} for offline partition [logs,0] {SELECTOR}\n'),
    "k010/broker-1001/state-change.log": (
        "[2017-06-01 10:00:01,000] ERROR Controller 1001 epoch 5 initiated state change for partition [orders,0] from "
        "OfflinePartition to OnlinePartition failed (state.change.logger)\n"
        "kafka.common.NoReplicaOnlineException: No replica for partition [orders,0] is alive. Live brokers are: "
        "[Set(1001)], Assigned replicas are: [List(1002)]\n"
        "\tat kafka.controller.OfflinePartitionLeaderSelector.selectLeader(PartitionLeaderSelector.scala:73)\n"
        "[2017-06-01 10:00:01,002] ERROR Controller 1001 epoch 5 initiated state change for partition [logs,0] from "
        "OfflinePartition to OnlinePartition failed (state.change.logger)\n"
        "kafka.common.NoReplicaOnlineException: No broker in ISR for partition [logs,0] is alive. Live brokers are: "
        "[Set(1001)], ISR brokers are: [1002]\n"
        "\tat kafka.controller.OfflinePartitionLeaderSelector.selectLeader(PartitionLeaderSelector.scala:66)\n"),
    # KRaft 3.4 (AutoMQ/automq#686's controller lines): broker 1 leads t-1 alone in its ISR, broker 0 follows; the
    # controller fences 1 and, unclean election on, elects 0 in the same record
    "kraft/broker-1/state-change.log": (
        "[2024-01-16 23:20:00,000] INFO [Broker id=1] Leader t-1 with topic id Some(Fs3yVbY9S2qtNEF8A-xMSA) starts at "
        "leader epoch 85 from offset 100 with partition epoch 85, high watermark 100, ISR [1], adding replicas [] and "
        "removing replicas []. Previous leader epoch was 84. (state.change.logger)\n"),
    "kraft/broker-0/state-change.log": (
        "[2024-01-16 23:20:00,010] INFO [Broker id=0] Follower t-1 starts at leader epoch 85 from offset 100 with "
        "partition epoch 85 and high watermark 100. Current leader is 1. Previous leader epoch was 84. "
        "(state.change.logger)\n"
        "[2024-01-16 23:32:00,000] INFO [Broker id=0] Leader t-1 with topic id Some(Fs3yVbY9S2qtNEF8A-xMSA) starts at "
        "leader epoch 87 from offset 300 with partition epoch 87, high watermark 300, ISR [0], adding replicas [] and "
        "removing replicas []. Previous leader epoch was 86. (state.change.logger)\n"),
    "kraft/broker-0/controller.log": (
        "[2024-01-16 23:28:50,746] INFO [Controller 0] Fencing broker 1 because its session has timed out. "
        f"{RCM}\n"
        "[2024-01-16 23:28:50,747] INFO [Controller 0] UNCLEAN partition change for t-1 with topic ID "
        "Fs3yVbY9S2qtNEF8A-xMSA: isr: [1] -> [0], leader: 1 -> 0, leaderEpoch: 85 -> 86, partitionEpoch: 85 -> 86 "
        f"{RCM}\n"
        "[2024-01-16 23:30:00,000] INFO [Controller 0] Fencing broker 1 because its session has timed out. "
        f"{RCM}\n"
        "[2024-01-16 23:35:00,000] INFO [Controller 0] UNCLEAN partition change for t-1 with topic ID "
        "Fs3yVbY9S2qtNEF8A-xMSA: isr: [1] -> [0], leader: 1 -> 0, leaderEpoch: 85 -> 86, partitionEpoch: 85 -> 86 "
        f"{RCM}\n"),
    # ZooKeeper 2.6 in docker compose (getsentry/self-hosted#1321): a one-broker cluster's controller fails to elect a
    # leader at its start, and no line names the partition's replicas or ISR; the broker logs on for 17 minutes
    "alone/broker-1002/server.log": (
        "kafka_1  | [2022-02-13 04:12:42,920] ERROR [Controller id=1002 epoch=520] Controller 1002 epoch 520 failed to "
        "change state for partition ingest-metrics-0 from OfflinePartition to OnlinePartition (state.change.logger)\n"
        "kafka_1  | kafka.common.StateChangeFailedException: Failed to elect leader for partition ingest-metrics-0 "
        "under strategy OfflinePartitionLeaderElectionStrategy(false)\n"
        "kafka_1  |   at kafka.controller.ZkPartitionStateMachine.$anonfun$doElectLeaderForPartitions$7("
        "PartitionStateMachine.scala:427)\n"
        "kafka_1  | [2022-02-13 04:30:00,000] INFO [GroupMetadataManager brokerId=1002] Removed 0 expired offsets in 0 "
        "milliseconds. (kafka.coordinator.group.GroupMetadataManager)\n"
        "kafka_1  | [2099-02-13 04:40:00,000] INFO [GroupMetadataManager brokerId=1002] Removed 0 expired offsets in 0 "
        "milliseconds. (kafka.coordinator.group.GroupMetadataManager)\n"),
    # KRaft 3.4, a controller's file alone (AutoMQ/automq#686): no line but the fencing and the unclean change tells
    # of testOther-1
    "unclean/broker-0/controller.log": (
        "[2024-01-16 23:28:50,746] INFO [Controller 0] Fencing broker 1 because its session has timed out. "
        f"{RCM}\n"
        "[2024-01-16 23:28:50,747] INFO [Controller 0] UNCLEAN partition change for testOther-1 with topic ID "
        "Fs3yVbY9S2qtNEF8A-xMSA: isr: [1] -> [0], leader: 1 -> 0, leaderEpoch: 85 -> 86, partitionEpoch: 85 -> 86 "
        f"{RCM}\n"
        "[2024-01-16 23:28:50,747] INFO [Controller 0] UNCLEAN partition change for testOther-3 with topic ID "
        "Fs3yVbY9S2qtNEF8A-xMSA: replicas: [1] -> [0], isr: [1] -> [0], leader: 1 -> 0, leaderEpoch: 73 -> 74, "
        f"partitionEpoch: 73 -> 74 {RCM}\n"),
    # ZooKeeper 2.4: broker 1 leads events-0 alone in its ISR and fails; the controller cannot elect a leader until
    # the topic allows an unclean election, then elects broker 2, outside the ISR
    "zkback/broker-1/server.log": (
        "[2021-04-26 16:00:00,000] INFO [Partition events-0 broker=1] Shrinking ISR from 1,2 to 1 "
        "(kafka.cluster.Partition)\n"),
    "zkback/broker-3/controller.log": (
        "[2021-04-26 16:04:00,000] INFO [Controller id=3] Broker failure callback for 1 "
        "(kafka.controller.KafkaController)\n"
        "[2021-04-26 16:10:00,000] TRACE [Controller id=3] Checking need to trigger auto leader balancing "
        "(kafka.controller.KafkaController)\n"),
    "zkback/broker-3/state-change.log": (
        "[2021-04-26 16:04:00,010] ERROR [Controller id=3 epoch=4] Controller 3 epoch 4 failed to change state for "
        "partition events-0 from OfflinePartition to OnlinePartition (state.change.logger)\n"
        "kafka.common.StateChangeFailedException: Failed to elect leader for partition events-0 under strategy "
        "OfflinePartitionLeaderElectionStrategy(false)\n"
        "[2021-04-26 16:05:00,000] INFO [Controller id=3 epoch=4] Changed partition events-0 from OfflinePartition to "
        "OnlinePartition with state LeaderAndIsr(leader=2, leaderEpoch=8, isr=List(2), zkVersion=12) "
        "(state.change.logger)\n"),
}


def _clock(ms: int) -> str:
    return f"{ms // 3_600_000 % 24:02d}:{ms // 60_000 % 60:02d}:{ms // 1000 % 60:02d}.{ms % 1000:03d}"


@pytest.fixture(scope="module")
def analyzed(spark, tmp_path_factory) -> tuple[dict, dict]:
    """{cluster: [(from HH:MM:SS.mmm, leader, offline, urp, replicas)]} of analysis/partition_state, and the
    summary."""
    root = tmp_path_factory.mktemp("offline")
    write_files(root / "logs", FILES)
    analyze_logs([str(root / "logs")], root / "out", cluster_from_path=True, spark=spark)
    rows = sorted(pq.read_table(root / "out" / "analysis" / "partition_state").to_pylist(),
                  key=lambda r: (r["cluster"], r["from_ms"], r["topic"], r["partition"]))
    states: dict = {}
    for r in rows:
        states.setdefault(r["cluster"], []).append((_clock(r["from_ms"]), r["leader"], r["offline"], r["urp"], r["replicas"]))
    return states, json.loads((root / "out" / "analysis" / "_summary.json").read_text(encoding="utf-8"))


def test_a_zookeeper_controllers_failed_election_leaves_the_partition_offline(analyzed):
    """PartitionStateMachine.doElectLeaderForPartitions logs `… failed to change state for partition t-p from
    OfflinePartition to OnlinePartition` when no ISR member is alive: OfflinePartitionsCount counts it until an
    election succeeds (the leader's next line; its repeat at the next broker change is the same state). Before, the
    partition stayed under its dead leader, under-replicated. A new partition that no live replica can lead (`… from
    NewPartition to OnlinePartition`, fede1024/rust-rdkafka#242) stays NewPartition, which the gauge does not count."""
    states, summary = analyzed
    assert states["zk"] == [("10:40:00.000", 1, False, True, [1, 2]), ("10:47:27.429", -1, True, False, [1, 2]),
                            ("10:50:00.000", 1, False, False, [1, 2])]
    zk = summary["zk"]
    assert (zk["peak_offline"], zk["incidents"]["offline"], zk["offline_minutes"]) == (1, 1, 2.543)


def test_a_failed_election_names_the_dead_replicas_and_the_selector_the_unclean_leader(analyzed):
    """Up to 1.0 the failed election's record is followed by OfflinePartitionLeaderSelector.selectLeader's
    NoReplicaOnlineException, which names the assigned replicas (`No replica for partition … Assigned replicas are:
    [List(1002)]`, unclean election on) or the ISR (`No broker in ISR for partition … ISR brokers are: [1002]`, off).
    The selector throws before it writes: the ISR is as it was, unknown for `orders-0` (and its replicas with it)
    until the WARN of its unclean election says that no ISR member was alive. No other line names these partitions,
    so before they had no state at all: 0 offline partitions where Kafka's gauge showed 2 for ten minutes
    (andreinedelciu's 0.10.2 controller: 70). The selector's `Selected new leader and ISR {…}` gives the elected
    leader's epoch, which no 0.10 broker line does: 1002 leads `orders-0` from outside the ISR, the unclean
    election its WARN told. `logs-0` is led again as 1002 comes back, its ISR's only member."""
    states, summary = analyzed
    assert states["k010"] == [("10:00:01.000", -1, True, False, None), ("10:00:01.002", -1, True, False, [1002]),
                              ("10:10:00.020", 1002, False, False, [1002]), ("10:10:00.030", -1, True, False, [1002]),
                              ("10:10:00.031", 1002, False, False, [1002]), ("10:10:00.050", 1002, False, False, [1002])]
    k010 = summary["k010"]
    assert (k010["peak_offline"], k010["incidents"]["offline"], k010["offline_minutes"]) == (2, 2, 19.967)
    assert k010["unclean_elections"] == 1


def test_a_kraft_controllers_unclean_election_at_a_fencing_leads_at_once(analyzed):
    """ReplicationControlManager.generateLeaderAndIsrUpdates fences a broker with one PartitionChangeRecord per
    partition it is in the ISR of, and where the topic allows an unclean election the record elects one
    (PartitionChangeBuilder.Election.UNCLEAN): PartitionRegistration.maybeLogPartitionChange logs it as `UNCLEAN
    partition change … leader: 1 -> 0, leaderEpoch: 85 -> 86`. Before, the line was read but no leader came of it:
    the fencing left t-1 without a leader (its ISR had no other member) for the rest of the logs, an offline
    incident that never was, and no unclean election counted. Broker 0 leads from 23:28:50.747, epoch 86, still
    under-replicated (ISR [0] of [0, 1]); the fencing's -1 a millisecond before is the same record, and no row. A
    controller that starts replays its log and logs the change again (23:35, after epoch 87): an epoch not past the
    partition's last is no election."""
    states, summary = analyzed
    assert states["kraft"] == [("23:20:00.000", 1, False, True, [0, 1]), ("23:28:50.747", 0, False, True, [0, 1]),
                               ("23:32:00.000", 0, False, True, [0, 1])]
    kraft = summary["kraft"]
    assert (kraft["peak_offline"], kraft["incidents"]["offline"], kraft["unclean_elections"]) == (0, 0, 1)
    assert kraft["incidents"]["urp"] == 1


def test_a_failed_election_that_names_nothing_else_is_an_offline_partition_until_the_last_line(analyzed):
    """From 1.1, ZkPartitionStateMachine.doElectLeaderForPartitions puts a partition with no live ISR member in
    its failed elections and logFailedStateChange writes `… failed to change state for partition t-p from
    OfflinePartition to OnlinePartition` with `Failed to elect leader … under strategy
    OfflinePartitionLeaderElectionStrategy(false)`: neither names a replica. The partition stays OfflinePartition,
    which ControllerContext's offline count (OfflinePartitionsCount) counts whatever its replicas. Before, a
    partition's state began only once its replicas were known, so this log, a common bug-report paste, had no offline
    partition at all; and its period ended at the failed election, not at the broker's last line 17 minutes later.
    A line stamped after a day without any (a broken clock: 2099) is not the logged run: the period would have been
    76 years of scrapes, refused."""
    states, summary = analyzed
    assert states["alone"] == [("04:12:42.920", -1, True, False, None)]
    alone = summary["alone"]
    assert (alone["peak_offline"], alone["incidents"]["offline"], alone["offline_minutes"]) == (1, 1, 17.285)
    assert (alone["start"], alone["end"]) == ("2022-02-13 04:12:40", "2022-02-13 04:30:00")


def test_an_unclean_change_alone_is_an_unclean_election(analyzed):
    """PartitionRegistration.maybeLogPartitionChange writes `UNCLEAN partition change … isr: [1] -> [0], leader: 1 ->
    0, leaderEpoch: 85 -> 86` where the new leader is not in the record's previous ISR (electionWasClean false), the
    old value before each arrow. Where the controller's file is all the logs hold of the partition, no ISR was known
    before the line, and the election counted as clean: 0 unclean elections on AutoMQ#686's controller log, whose
    three such lines are three. The old ISR is now the one in force just before (the controller's, no shrink on a
    leader's meter), and its members held replicas where the record changes no assignment: broker 0 leads
    testOther-1 under-replicated, its ISR [0] of replicas [0, 1] (before, the replicas were [0], and the partition
    fully replicated). AutoMQ's controller moves the replica in the same record (`replicas: [1] -> [0]`): testOther-3
    is elected uncleanly too, onto replicas [0]."""
    states, summary = analyzed
    assert states["unclean"] == [("23:28:50.747", 0, False, True, [0, 1]), ("23:28:50.747", 0, False, False, [0])]
    unclean = summary["unclean"]
    assert (unclean["unclean_elections"], unclean["peak_urp"], unclean["peak_offline"], unclean["isr_shrinks"]) \
        == (2, 1, 0, 0)


def test_a_zookeeper_controllers_election_from_1_1_is_a_leader_row(analyzed):
    """From 1.1, PartitionStateMachine.doHandleStateChanges logs each successful election (TRACE up to 2.5, INFO from
    2.6, ZkPartitionStateMachine from 2.4): `Changed
    partition t-p from OfflinePartition to OnlinePartition with state LeaderAndIsr(leader=2, leaderEpoch=8,
    isr=List(2), zkVersion=12)`, the controller's only line of an unclean election (OfflinePartitionLeaderSelector's
    WARN is gone). Before, the line was read but no leader came of it: events-0 stayed offline from its failed
    election to the end of the logs (16:10), and no unclean election counted. Now broker 2 leads it from 16:05, from
    outside the ISR [1] it was elected from, under-replicated."""
    states, summary = analyzed
    assert states["zkback"] == [("16:00:00.000", 1, False, True, [1, 2]), ("16:04:00.010", -1, True, False, [1, 2]),
                                ("16:05:00.000", 2, False, True, [1, 2])]
    zkback = summary["zkback"]
    assert (zkback["peak_offline"], zkback["offline_minutes"], zkback["unclean_elections"]) == (1, 1.0, 1)


def test_a_0_10_controllers_election_line_without_epoch_ends_the_outage(spark, tmp_path):
    """Up to 1.0 PartitionStateMachine.electLeaderForPartition logs `Controller C epoch E changed partition [t,p] from
    OfflinePartition to OnlinePartition with leader L` (state-change.log, TRACE) once the leader is in ZooKeeper; it
    names no leader epoch and no ISR. A public 0.10.2 cluster's state-change.log held it without controller.log: the
    partition stayed offline from its failed election 5 s before to the end of the logs (51 minutes for 34
    partitions). The failed election's exception (`No replica … is alive`, unclean election on) leaves the ISR as it
    was: the selector throws before it writes (it was read as an empty ISR, and the next clean election as unclean).
    Broker 2, the ISR's last member, is gone; OfflinePartitionLeaderSelector elects 1 from outside the ISR and makes
    it the ISR alone: leader 1, ISR [1], not 1 under the ISR [2] it was never in."""
    sc = "[2017-06-26 20:22:{t}] {lv} Controller 0 epoch 5 {m} (state.change.logger)\n"
    write_files(tmp_path / "logs", {
        "broker-2/server.log": "[2017-06-26 20:20:00,000] INFO Partition [t,4] on broker 2: Shrinking ISR for partition "
                               "[t,4] from 2,1 to 2 (kafka.cluster.Partition)\n",
        "broker-0/state-change.log": "".join([
            sc.format(t="54,391", lv="ERROR", m="initiated state change for partition [t,4] from OfflinePartition to "
                                               "OnlinePartition failed"),
            "kafka.common.NoReplicaOnlineException: No replica for partition [t,4] is alive. Live brokers are: "
            "[Set()], Assigned replicas are: [List(2, 1)]\n",
            "\tat kafka.controller.OfflinePartitionLeaderSelector.selectLeader(PartitionLeaderSelector.scala:73)\n",
            sc.format(t="59,591", lv="TRACE", m="changed partition [t,4] from OfflinePartition to OnlinePartition with "
                                               "leader 1")])})
    analyze_logs([str(tmp_path / "logs")], tmp_path / "out", spark=spark)
    rows = sorted(pq.read_table(tmp_path / "out" / "analysis" / "partition_state").to_pylist(), key=lambda r: r["from_ms"])
    assert [(_clock(r["from_ms"]), r["leader"], r["isr"], r["offline"]) for r in rows] == [
        ("20:20:00.000", 2, [2], False), ("20:22:54.391", -1, [2], True), ("20:22:59.591", 1, [1], False)]
    summary = json.loads((tmp_path / "out" / "analysis" / "_summary.json").read_text(encoding="utf-8"))
    assert summary["cluster"]["unclean_elections"] == 0  # an election with no epoch is no counted election


def test_a_4_1_election_from_the_eligible_replicas_ends_the_outage_a_fencing_began(spark, tmp_path):
    """PartitionChangeBuilder.tryElection (4.1) logs at INFO an election from the eligible leader replicas (KIP-966):
    `Setting new leader for topicId X, partition p to L using ELR. Previous partition: PartitionRegistration(…,
    leader=-1, …, leaderEpoch=E, …), change record: PartitionChangeRecord(…, isr=[L], leader=L, …)`. Brokers 2 and 1
    are fenced in turn (ReplicationControlManager.maybeFenceOneStaleBroker, 4.0+ `… at epoch N …`): no ISR member is
    left, the partition has no leader. Broker 2, in the ELR, is unfenced 288 ms later and elected, the ISR itself
    alone, clean (its ELR seat counts as the ISR it was elected from). The line names the partition by topic id
    only; the PartitionRecord names that id's topic. Before, the line was neither read nor rejected: the partition
    stayed offline until broker 1 came back 54 s later (0.9 offline minutes for 0.005) and then read as led by 1, and
    with no `Kafka version:` line the release was inferred as 3.7; now 4.1, as the forms allow."""
    rcm, pcb = "(org.apache.kafka.controller.ReplicationControlManager)", "(org.apache.kafka.controller.PartitionChangeBuilder)"
    bhm, tid, d = "(org.apache.kafka.controller.BrokerHeartbeatManager)", "Fs3yVbY9S2qtNEF8A-xMSA", "AAAAAAAAAAAAAAAAAAAAAQ"

    def reg(isr: str, elr: str, known: str, leader: int, epoch: int, partition_epoch: int) -> str:
        return (f"PartitionRegistration(replicas=[1, 2], directories=[{d}, {d}], isr=[{isr}], removingReplicas=[], "
                f"addingReplicas=[], elr=[{elr}], lastKnownElr=[{known}], leader={leader}, leaderRecoveryState=RECOVERED, "
                f"leaderEpoch={epoch}, partitionEpoch={partition_epoch})")
    qc = "[2025-11-27 07:{t}] INFO [QuorumController id=3] "
    write_files(tmp_path / "logs", {"broker-3/controller.log": "".join([
        qc.format(t="40:00,000") + f"Replayed PartitionRecord for new partition orders-0 with topic ID {tid} and "
        f"{reg('1, 2', '', '', 1, 0, 0)}. {rcm}\n",
        qc.format(t="40:05,000") + f"Fencing broker 2 at epoch 10 because its session has timed out. {rcm}\n",
        qc.format(t="40:06,000") + f"Fencing broker 1 at epoch 11 because its session has timed out. {rcm}\n",
        qc.format(t="40:06,288") + "The request from broker 2 to unfence has been granted because it has caught up with "
        f"the offset of its register broker record 40. {bhm}\n",
        qc.format(t="40:06,288") + f"Setting new leader for topicId {tid}, partition 0 to 2 using ELR. Previous partition: "
        f"{reg('', '2', '1', -1, 2, 3)}, change record: PartitionChangeRecord(partitionId=0, topicId={tid}, isr=[2], "
        "leader=2, replicas=null, removingReplicas=null, addingReplicas=null, leaderRecoveryState=-1, directories=null, "
        f"eligibleLeaderReplicas=[], lastKnownElr=null) {pcb}\n",
        qc.format(t="41:00,000") + "The request from broker 1 to unfence has been granted because it has caught up with "
        f"the offset of its register broker record 44. {bhm}\n"])})
    analyze_logs([str(tmp_path / "logs")], tmp_path / "out", spark=spark)
    rows = sorted(pq.read_table(tmp_path / "out" / "analysis" / "partition_state").to_pylist(), key=lambda r: r["from_ms"])
    assert [(_clock(r["from_ms"]), r["leader"], r["isr"], r["offline"], r["urp"]) for r in rows] == [
        ("07:40:00.000", 1, [1, 2], False, False), ("07:40:05.000", 1, [1], False, True),
        ("07:40:06.000", -1, [1], True, False), ("07:40:06.288", 2, [2], False, True)]
    summary = json.loads((tmp_path / "out" / "analysis" / "_summary.json").read_text(encoding="utf-8"))["cluster"]
    assert (summary["offline_minutes"], summary["incidents"]["offline"], summary["unclean_elections"]) == (0.005, 1, 0)
    assert summary["kafka_version"] == "4.1"
    events = pq.read_table(tmp_path / "out" / "analysis" / "log_events").to_pylist()
    assert [(e["kind"], e["topic"], e["partition"], e["leader"], e["leader_epoch"], e["isr"]) for e in events
            if e["kind"] == "elr_election"] == [("elr_election", "orders", 0, 2, 3, [2])]


def test_an_unclean_election_line_without_an_epoch_ends_the_outage(spark, tmp_path):
    """PartitionChangeBuilder.tryElection (3.6-4.0) logs an unclean election as `Setting new leader for topicId X,
    partition p to L using an unclean election`, with no epoch: the PartitionChangeRecord the controller writes next
    sets leader L (PartitionRegistration.merge raises the leader epoch by one) and the ISR [L]. Brokers 2 and 1 are
    fenced in turn, the partition has no leader (ISR [1]); broker 2 is unfenced at 07:40:20 and elected from outside
    the ISR. Before, the line gave no leader row: offline until broker 1 came back at 07:41:00 (54 s, 0.9
    partition-minutes) and then read as led by 1; now 14 s (0.233), led by 2 at epoch 1, one unclean election. Where
    the record's replay follows (`UNCLEAN partition change … leaderEpoch: 1 -> 2`, maybeLogPartitionChange, 1 ms
    later), it is the same election: one row and one unclean election, not two (its old ISR [1] before it read as a
    second one); before, only that line led, 1 ms later."""
    rcm, pcb = "(org.apache.kafka.controller.ReplicationControlManager)", "(org.apache.kafka.controller.PartitionChangeBuilder)"
    bhm, tid, d = "(org.apache.kafka.controller.BrokerHeartbeatManager)", "Fs3yVbY9S2qtNEF8A-xMSA", "AAAAAAAAAAAAAAAAAAAAAQ"
    qc = "[2025-11-27 07:{t}] INFO [QuorumController id=3] "
    lines = [
        qc.format(t="40:00,000") + f"Replayed PartitionRecord for new partition orders-0 with topic ID {tid} and "
        f"PartitionRegistration(replicas=[1, 2], directories=[{d}, {d}], isr=[1, 2], removingReplicas=[], "
        "addingReplicas=[], elr=[], lastKnownElr=[], leader=1, leaderRecoveryState=RECOVERED, leaderEpoch=0, "
        f"partitionEpoch=0). {rcm}\n",
        qc.format(t="40:05,000") + f"Fencing broker 2 because its session has timed out. {rcm}\n",
        qc.format(t="40:06,000") + f"Fencing broker 1 because its session has timed out. {rcm}\n",
        qc.format(t="40:20,000") + "The request from broker 2 to unfence has been granted because it has caught up with "
        f"the offset of its register broker record 40. {bhm}\n",
        qc.format(t="40:20,000") + f"Setting new leader for topicId {tid}, partition 0 to 2 using an unclean election "
        f"{pcb}\n"]
    replay = (qc.format(t="40:20,001") + f"UNCLEAN partition change for orders-0 with topic ID {tid}: isr: [1] -> [2], "
              f"leader: -1 -> 2, leaderEpoch: 1 -> 2, partitionEpoch: 2 -> 3 {rcm}\n")
    back = (qc.format(t="41:00,000") + "The request from broker 1 to unfence has been granted because it has caught up "
            f"with the offset of its register broker record 44. {bhm}\n")
    write_files(tmp_path / "logs", {"alone/broker-3/controller.log": "".join([*lines, back]),
                                    "replayed/broker-3/controller.log": "".join([*lines, replay, back])})
    analyze_logs([str(tmp_path / "logs")], tmp_path / "out", cluster_from_path=True, spark=spark)
    rows = sorted(pq.read_table(tmp_path / "out" / "analysis" / "partition_state").to_pylist(),
                  key=lambda r: (r["cluster"], r["from_ms"]))
    summary = json.loads((tmp_path / "out" / "analysis" / "_summary.json").read_text(encoding="utf-8"))
    leaders = pq.read_table(tmp_path / "out" / "telemetry" / "leaders").to_pylist()
    for cluster in ("alone", "replayed"):
        assert [(_clock(r["from_ms"]), r["leader"], r["isr"], r["offline"]) for r in rows if r["cluster"] == cluster] == [
            ("07:40:00.000", 1, [1, 2], False), ("07:40:05.000", 1, [1], False), ("07:40:06.000", -1, [1], True),
            ("07:40:20.000", 2, [2], False)]
        assert (summary[cluster]["offline_minutes"], summary[cluster]["unclean_elections"]) == (0.233, 1)
        assert [(_clock(r["ts_ms"]), r["leader_epoch"]) for r in leaders
                if r["cluster"] == cluster and r["leader"] == 2] == [("07:40:20.000", 1)]
