"""The log lines of docs/semantics.md §7 at every release boundary where Kafka changed their text, pinned on both
sides, as apache/kafka's source reads at the release tags (Partition, KafkaController, AbstractFetcherManager,
AbstractFetcherThread, ShutdownableThread). Each test names the class and the tag(s) read."""

from __future__ import annotations

import pytest

from replicaflow.model.version import KafkaVersion
from replicaflow.telemetry.logformat import render_event

V = KafkaVersion.parse

# ---------------------------------------------------------------------------------------------- §7 log lines
T = 1698412345678
PREFIX = "[Partition orders-3 broker=1] "


def _msg(event: dict, version: str) -> str:
    lines = render_event({"ts_ms": T, "broker": 1, **event}, V(version))
    assert len(lines) == 1, lines
    line = lines[0][1]
    return line[line.index("] ", 1) + 2:].split(" ", 1)[1].rsplit(" (", 1)[0]


UPDATED = {"kind": "isr_updated", "topic": "orders", "partition": 3, "isr": [1, 2], "partition_epoch": 7,
           "under_min_isr": False}


@pytest.mark.parametrize(("version", "text"), [
    ("2.3", "ISR updated to [1,2] and zkVersion updated to [7]"),
    ("2.6", "ISR updated to [1,2] and zkVersion updated to [7]"),
    ("2.7", "ISR updated from AlterIsr to 1,2 and version updated to [7]"),
    ("2.8", "ISR updated to 1,2 and version updated to [7]"),
    ("3.0", "ISR updated to 1,2 and version updated to [7]"),
    ("3.5", "ISR updated to 1,2  and version updated to 7"),
])
def test_isr_updated_line_at_its_boundaries(version, text):
    """Partition: 2.3.0 trace / 2.4.0-2.6.0 info("ISR updated to [%s] and zkVersion updated to [%d]"); 2.7.0
    handleAlterIsrResponse "ISR updated from AlterIsr to ... and version updated to [$zkVersion]"; 2.8.0 and
    3.0.0 "ISR updated to ... and version updated to [$zkVersion]"; 3.5.0 "ISR updated to ... ${marker} and version
    updated to $partitionEpoch"."""
    assert _msg(UPDATED, version) == PREFIX + text


@pytest.mark.parametrize("version", ["3.1", "3.4"])
def test_isr_updated_line_3_1_to_3_4_has_no_brackets(version):
    assert _msg(UPDATED, version) == PREFIX + "ISR updated to 1,2 and version updated to 7"


LEADER = {"kind": "leader_start", "topic": "orders", "partition": 3, "leader_epoch": 5, "prev_leader_epoch": 4,
          "prev_leader": 1, "leo": 1200, "hw": 1190, "isr": [1, 2], "adding": [4], "removing": [3],
          "partition_epoch": 9, "topic_id": "Lx8P2XwCT8aH0a5u8yB5tg"}


@pytest.mark.parametrize(("version", "text"), [
    ("2.4", PREFIX + "orders-3 starts at Leader Epoch 5 from offset 1200. Previous Leader Epoch was: 4"),
    ("2.6", "[Broker id=1] Leader orders-3 starts at leader epoch 5 from offset 1200 with high watermark 1190 "
            "ISR [1,2] addingReplicas [4] removingReplicas [3]. Previous leader epoch was 4."),
    ("3.2", "[Broker id=1] Leader orders-3 starts at leader epoch 5 from offset 1200 with high watermark 1190 "
            "ISR [1,2] addingReplicas [4] removingReplicas [3]. Previous leader epoch was 4."),
    ("3.3", "[Broker id=1] Leader orders-3 with topic id Some(Lx8P2XwCT8aH0a5u8yB5tg) starts at leader epoch 5 "
            "from offset 1200 with partition epoch 9, high watermark 1190, ISR [1,2], adding replicas [4] and "
            "removing replicas [3]. Previous leader epoch was 4."),
    ("3.5", "[Broker id=1] Leader orders-3 with topic id Some(Lx8P2XwCT8aH0a5u8yB5tg) starts at leader epoch 5 "
            "from offset 1200 with partition epoch 9, high watermark 1190, ISR [1,2], adding replicas [4] and "
            "removing replicas [3] . Previous leader epoch was 4."),
    ("3.6", "[Broker id=1] Leader orders-3 with topic id Some(Lx8P2XwCT8aH0a5u8yB5tg) starts at leader epoch 5 "
            "from offset 1200 with partition epoch 9, high watermark 1190, ISR [1,2], adding replicas [4] and "
            "removing replicas [3] . Previous leader Some(1) and previous leader epoch was 4."),
])
def test_leader_start_line_at_its_boundaries(version, text):
    """Partition.makeLeader: 0.11.0.0-2.4.0 info("$tp starts at Leader Epoch ... Previous Leader Epoch was: $e");
    2.6.0-3.2.0 stateChangeLogger "Leader $tp starts at leader epoch ... removingReplicas [..]. Previous leader epoch
    was $e."; 3.3.0 "... with topic id $topicId ... and removing replicas [..]. Previous ..."; 3.5.0 adds
    ` ${if (isUnderMinIsr) "(under-min-isr)" else ""}`; 3.6.0 "Previous leader $leaderReplicaIdOpt and ..."."""
    assert _msg(LEADER, version) == text


@pytest.mark.parametrize("version", ["2.4.1", "2.5"])
def test_leader_start_line_2_4_1_and_2_5(version):
    """Partition.makeLeader at 2.4.1 and 2.5.0: info(s"$topicPartition starts at leader epoch ... from offset
    $leaderEpochStartOffset with high watermark ${leaderLog.highWatermark}. Previous leader epoch was $leaderEpoch.")
    (KAFKA-9491, commit a692a18e6b8 on the 2.4 branch, first tagged 2.4.1); 2.4.0 still writes `Leader Epoch`
    (the "2.4" row above)."""
    assert _msg(LEADER, version) == PREFIX + (
        "orders-3 starts at leader epoch 5 from offset 1200 with high watermark 1190. Previous leader epoch was 4.")


@pytest.mark.parametrize(("version", "named"), [("0.10.1", "[orders,3]"), ("0.10.2", "orders-3")])
def test_no_partition_leader_line_before_0_11(version, named):
    """git grep 'starts at' in core/src/main/scala finds nothing at 0.10.2.0 (the line came with KIP-101 in 0.11.0.0):
    the new leader's record is ReplicaManager.makeLeaders' TRACE line in state-change.log, naming a TopicAndPartition
    up to 0.10.1.0 and a TopicPartition from 0.10.2.0."""
    ((path, line),) = render_event({"ts_ms": T, "broker": 1, "controller": 2, **LEADER}, V(version))
    assert path == "broker-1/state-change.log"
    assert ("TRACE Broker 1 completed LeaderAndIsr request correlationId 5 from controller 2 epoch 1 for the "
            f"become-leader transition for partition {named} (state.change.logger)") in line


SHRINK = {"kind": "isr_shrink", "topic": "orders", "partition": 3, "old_isr": [1, 2, 3], "new_isr": [1, 2],
          "hw": 150, "leo": 150, "out_of_sync": [{"broker": 3, "leo": -1, "last_caught_up_ms": 1698412345678}]}


@pytest.mark.parametrize(("version", "text"), [
    ("2.1", "Shrinking ISR from 1,2,3 to 1,2"),
    ("2.2", "Shrinking ISR from 1,2,3 to 1,2. Leader: (highWatermark: 150, endOffset: 150). "
            "Out of sync replicas: (brokerId: 3, endOffset: -1)."),
    ("2.8", "Shrinking ISR from 1,2,3 to 1,2. Leader: (highWatermark: 150, endOffset: 150). "
            "Out of sync replicas: (brokerId: 3, endOffset: -1)."),
    ("3.0", "Shrinking ISR from 1,2,3 to 1,2. Leader: (highWatermark: 150, endOffset: 150). "
            "Out of sync replicas: (brokerId: 3, endOffset: unknown)."),
    ("3.5", "Shrinking ISR from 1,2,3 to 1,2. Leader: (highWatermark: 150, endOffset: 150). "
            "Out of sync replicas: (brokerId: 3, endOffset: unknown)."),
    ("3.6", "Shrinking ISR from 1,2,3 to 1,2. Leader: (highWatermark: 150, endOffset: 150). "
            "Out of sync replicas: (brokerId: 3, endOffset: unknown, lastCaughtUpTimeMs: 1698412345678)."),
])
def test_shrink_line_at_its_boundaries(version, text):
    """Partition.maybeShrinkIsr/shrinkIsr: 2.1.0 "Shrinking ISR from %s to %s"; 2.2.0 adds ". Leader: (highWatermark:
    %d, endOffset: %d). Out of sync replicas: %s." with "(brokerId: ..., endOffset: ${replica.logEndOffset})";
    3.0.0 logEndOffsetMessage ("unknown" for an unknown LEO); 3.6.0 adds ", lastCaughtUpTimeMs: ..."."""
    assert _msg(SHRINK, version) == PREFIX + text


@pytest.mark.parametrize(("version", "lines"), [("2.7", 1), ("2.8", 0)])
def test_expand_line_until_2_7(version, lines):
    """Partition.expandIsr: info("Expanding ISR from ... to ...") at 2.7.0 (line 1338); no such line at 2.8.0."""
    ev = {"ts_ms": T, "broker": 1, "kind": "isr_expand", "topic": "orders", "partition": 3, "old_isr": [1, 2],
          "new_isr": [1, 2, 3]}
    assert len(render_event(ev, V(version))) == lines


@pytest.mark.parametrize(("version", "text"), [
    ("0.11", "Partition [orders,3] on broker 1: "), ("1.0", PREFIX)])
def test_partition_log_ident_across_1_0(version, text):
    """Partition.logIdent: "Partition [%s,%d] on broker %d: " at 0.11.0.0; s"[Partition $topicPartition
    broker=$localBrokerId] " at 1.0.0."""
    ev = {"kind": "isr_expand", "topic": "orders", "partition": 3, "old_isr": [1, 2], "new_isr": [1, 2, 3]}
    assert _msg(ev, version).startswith(text)


@pytest.mark.parametrize(("version", "text"), [
    ("2.3", "Cached zkVersion [7] not equal to that in zookeeper, skip updating ISR"),
    ("2.4", "Cached zkVersion 7 not equal to that in zookeeper, skip updating ISR")])
def test_cached_zk_version_line_across_2_4(version, text):
    """Partition.updateIsr: info("Cached zkVersion [%d] not equal ...") at 2.3.0, s"Cached zkVersion $zkVersion ..."
    at 2.4.0."""
    ev = {"kind": "isr_update_failed", "topic": "orders", "partition": 3, "partition_epoch": 7}
    assert _msg(ev, version) == PREFIX + text


REASSIGNED = {"kind": "reassignment_completed", "broker": 0, "topic": "orders", "partition": 3, "replicas": [1, 2, 4],
              "controller": "zookeeper"}


def _controller_msg(event: dict, version: str) -> list[str]:
    return [line for _, line in render_event({"ts_ms": T, **event}, V(version))]


def test_reassignment_lines_across_2_4():
    """KafkaController at 2.3.0: info(s"Handling reassignment of partition $tp to new replicas ...") at the start;
    2.4.0: "Target replicas ... have all caught up with the leader for reassigning partition $tp" and
    "Successfully updated assignment of partition $tp to $assignment" at the end."""
    started = {**REASSIGNED, "kind": "reassignment_started", "adding": [4], "removing": [3]}
    assert "Handling reassignment of partition orders-3 to new replicas 1,2,4" in _controller_msg(started, "2.3")[0]
    done = _controller_msg(REASSIGNED, "2.4")
    assert "Target replicas ArrayBuffer(1, 2, 4) have all caught up with the leader for reassigning partition orders-3" in \
        done[0]
    assert done[1].endswith("Successfully updated assignment of partition orders-3 to ReplicaAssignment("
                            "replicas=1,2,4, addingReplicas=, removingReplicas=) (kafka.controller.KafkaController)")


def test_reassignment_completed_line_up_to_1_0():
    """KafkaController.removePartitionFromReassignedPartitions at 1.0.0: info("Removed partition %s from the list of
    reassigned partitions in zookeeper")."""
    assert "Removed partition orders-3 from the list of reassigned partitions in zookeeper" in \
        _controller_msg(REASSIGNED, "1.0")[0]


@pytest.mark.parametrize(("version", "text"), [
    ("1.1", "Removing partition orders-3 from the list of reassigned partitions in zookeeper"),
    ("2.3", "Removing partitions Set(orders-3) from the list of reassigned partitions in zookeeper")])
def test_reassignment_completed_line_1_1_to_2_3(version, text):
    assert text in _controller_msg(REASSIGNED, version)[0]


@pytest.mark.parametrize(("version", "kind"), [("2.2", "thread_died"), ("2.3", "partition_failed")])
def test_fetcher_failure_line_across_2_3(version, kind):
    """AbstractFetcherThread at 2.3.0: warn(s"Partition $topicPartition marked as failed"); up to 2.2.0 the
    thread's doWork ends with "Error due to" and KafkaException("Error processing data for partition ...")."""
    ev = {"ts_ms": T, "broker": 2, "leader": 1, "fetcher_id": 0, "topic": "orders", "partition": 3, "offset": 1234}
    lines = render_event({**ev, "kind": kind}, V(version))
    assert ("marked as failed" in lines[0][1]) is (kind == "partition_failed")
    other = "partition_failed" if kind == "thread_died" else "thread_died"
    with pytest.raises(ValueError):
        render_event({**ev, "kind": other}, V(version))


REMOVED = {"ts_ms": T, "broker": 2, "kind": "fetcher_removed", "partitions": [["orders", 3], ["orders", 4]]}


@pytest.mark.parametrize(("version", "listed"), [
    ("0.10.0", "[orders,3],[orders,4]"), ("2.0", "orders-3,orders-4"), ("2.2", "Set(orders-3, orders-4)")])
def test_removed_fetcher_line(version, listed):
    """AbstractFetcherManager.removeFetcherForPartitions: `partitions.mkString(",")` of kafka.common.TopicAndPartition
    (`[t,p]`) at 0.10.0.0, of TopicPartition (`t-p`) at 1.0.0-2.0.0; s"... $partitions" (a Scala Set) at 2.2.0."""
    line = render_event(REMOVED, V(version))[0][1]
    assert f"Removed fetcher for partitions {listed} (" in line


def test_removed_fetcher_line_2_1():
    assert "Removed fetcher for partitions Set(orders-3, orders-4) (" in render_event(REMOVED, V("2.1"))[0][1]


@pytest.mark.parametrize("version", ["0.10.1", "0.11"])
def test_fetcher_manager_lines_use_topic_partition_from_0_10_1(version):
    assert "Removed fetcher for partitions orders-3,orders-4 (" in render_event(REMOVED, V(version))[0][1]


def test_thread_death_prefix_0_11():
    ev = {"ts_ms": T, "broker": 2, "kind": "thread_died", "leader": 1, "fetcher_id": 0, "topic": "orders",
          "partition": 3, "offset": 1234}
    assert "ERROR [ReplicaFetcherThread-0-1]: Error due to" in render_event(ev, V("0.11"))[0][1]


@pytest.mark.parametrize(("version", "levels"), [("3.9", ["INFO", "ERROR"]), ("4.0", ["INFO", "INFO"])])
def test_the_periodic_unclean_election_line_by_release(version, levels):
    """ReplicationControlManager.maybeTriggerUncleanLeaderElectionForLeaderlessPartitions (3.9.0-rc3: log.error;
    Confluent v8.0.0 = 4.0: log.info) after PartitionChangeBuilder's own line; an election outside the periodic
    check (a fenced last ISR member, the operator's tool) has only the latter."""
    event = {"ts_ms": T, "broker": 1, "kind": "unclean_leader_election", "controller": "kraft", "topic": "orders",
             "partition": 3, "leader": 2, "live": [2], "messages_lost": 5, "topic_id": "AAAAAAAAAAAAAAAAAAAAAA"}
    lines = [line for _, line in render_event({**event, "periodic": True}, V(version))]
    assert [line.split(" ", 3)[2] for line in lines] == levels
    assert lines[1].endswith("Triggering unclean leader election for offline partition orders-3. "
                             "(org.apache.kafka.controller.ReplicationControlManager)")
    assert len(render_event(event, V(version))) == 1


ELECTION = {"kind": "election_started", "broker": 0, "partitions": [["orders", 3], ["orders", 1], ["pay", 0]],
            "preferred": [2, 1, 2], "election_type": "PREFERRED", "trigger": "AutoTriggered", "controller": "zookeeper"}


@pytest.mark.parametrize(("version", "texts"), [
    # 0.11.0.2 checkAndTriggerPartitionRebalance: onPreferredReplicaElection(Set(topicPartition), true), a TopicAndPartition
    ("0.11", ["[Controller 0]: Starting preferred replica leader election for partitions [orders,3]",
              "[Controller 0]: Starting preferred replica leader election for partitions [orders,1]",
              "[Controller 0]: Starting preferred replica leader election for partitions [pay,0]"]),
    ("1.1", ["[Controller id=0] Starting preferred replica leader election for partitions orders-3",
             "[Controller id=0] Starting preferred replica leader election for partitions orders-1",
             "[Controller id=0] Starting preferred replica leader election for partitions pay-0"]),
    # 2.0.1 checkAndTriggerAutoLeaderRebalance: onPreferredReplicaElection(candidatePartitions.toSet, ...) per broker
    ("2.0", ["[Controller id=0] Starting preferred replica leader election for partitions orders-1",
             "[Controller id=0] Starting preferred replica leader election for partitions orders-3,pay-0"]),
    ("2.3", ["[Controller id=0] Starting preferred replica leader election for partitions orders-1",
             "[Controller id=0] Starting preferred replica leader election for partitions orders-3,pay-0"]),
    # 2.4.0 onReplicaElection: info(s"Starting replica leader election ($electionType) for partitions ... triggered by
    # $electionTrigger")
    ("2.4", ["[Controller id=0] Starting replica leader election (PREFERRED) for partitions orders-1 triggered by "
             "AutoTriggered",
             "[Controller id=0] Starting replica leader election (PREFERRED) for partitions orders-3,pay-0 triggered by "
             "AutoTriggered"]),
    ("3.7", ["[Controller id=0] Starting replica leader election (PREFERRED) for partitions orders-1 triggered by "
             "AutoTriggered",
             "[Controller id=0] Starting replica leader election (PREFERRED) for partitions orders-3,pay-0 triggered by "
             "AutoTriggered"]),
])
def test_automatic_election_start_lines_across_1_1_2_0_and_2_4(version, texts):
    """KafkaController's automatic rebalance: one onPreferredReplicaElection per partition up to 1.1.1, per preferred
    broker from 2.0.1; the 2.4.0 line names the type and the trigger (KIP-460)."""
    assert _election_texts(ELECTION, version) == texts


def _election_texts(event: dict, version: str) -> list[str]:
    """The controller's message of each line ``event`` renders, its logIdent kept."""
    return [line.split("] ", 1)[1].split(" ", 1)[1].rsplit(" (kafka.controller.KafkaController)", 1)[0]
            for _, line in render_event({"ts_ms": T, **event}, V(version))]


@pytest.mark.parametrize(("version", "listed"), [("2.1", "orders-3,orders-1,pay-0,pay-1"), ("2.2", "orders-3,pay-0")])
def test_an_operators_election_lists_what_it_asked_up_to_2_1_and_what_needs_electing_from_2_2(version, listed):
    """KafkaController 2.1.1's PreferredReplicaLeaderElection: onPreferredReplicaElection(partitions --
    partitionsForTopicsToBeDeleted), every partition of the znode; 2.2.0's processPreferredReplicaLeaderElection only
    the electablePartitions (not led by their preferred replica)."""
    event = {**ELECTION, "trigger": "AdminClientTriggered", "partitions": [["orders", 3], ["pay", 0]],
             "preferred": [2, 2], "requested": [["orders", 3], ["orders", 1], ["pay", 0], ["pay", 1]]}
    assert _election_texts(event, version) == [
        f"[Controller id=0] Starting preferred replica leader election for partitions {listed}"]


def test_an_unclean_election_start_names_its_type_and_a_kraft_controller_writes_none():
    """KafkaController 2.4.0 onReplicaElection with ElectionType.UNCLEAN (KIP-460, an admin's election); QuorumController
    (KRaft) has no such line."""
    event = {**ELECTION, "election_type": "UNCLEAN", "trigger": "AdminClientTriggered", "partitions": [["pay", 0]],
             "preferred": [2]}
    assert _election_texts(event, "3.5") == [
        "[Controller id=0] Starting replica leader election (UNCLEAN) for partitions pay-0 triggered by "
        "AdminClientTriggered"]
    assert render_event({"ts_ms": T, **event, "controller": "kraft"}, V("3.7")) == []
