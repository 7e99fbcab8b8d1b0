"""ingest/replay.py: a partition's assignment history from a describe snapshot taken at any time and the
controller's reassignment lines (docs/real-cluster.md, "Anchoring")."""

from __future__ import annotations

import re

import pytest

from replicaflow.ingest.controller_restart import STARTUP_REPLAY_MS, started_at, startup_replays
from replicaflow.ingest.log_version import FORMS, infer_version, release_of
from replicaflow.ingest.logs import PRINTED_VERSION
from replicaflow.ingest.rebuild import WHOLE_24, broker_ids, rebuild
from replicaflow.ingest.replay import Assignment, Move, history
from replicaflow.ingest.sources import ClusterInputs, RebuildOptions, cluster_of_path, options
from replicaflow.model.version import printed_release

ORIGIN, TARGET = (1, 2, 3), (4, 2, 3)
ORIGIN_BACK = (2, 3, 1)  # read back from "replicas=4,2,3,1, addingReplicas=4": the origin's order is not in the line
MOVING = Assignment((4, 2, 3, 1), adding=(4,), removing=(1,))
START_24 = Move(100, 0, "started", target=TARGET, whole=MOVING)     # 2.4+ / KRaft: the whole assignment
START_OLD = Move(100, 0, "started", target=TARGET)                   # before 2.4: the target only
DONE = Move(200, 1, "completed", target=TARGET)
DONE_BARE = Move(200, 1, "completed")                                 # ZooKeeper < 2.4 / KRaft: partition only


def test_snapshot_at_the_end_replays_backward_to_the_origin_when_the_start_names_the_whole_assignment():
    assert history(Assignment(TARGET), 1000, [START_24, DONE_BARE], start_ms=0) == [
        (0, Assignment(ORIGIN_BACK)), (100, MOVING), (200, Assignment(TARGET))]


def test_snapshot_at_the_end_before_2_4_knows_the_assignment_only_from_the_completion():
    """'Handling reassignment … to new replicas' does not name the origin: nothing before the completion is known."""
    assert history(Assignment(TARGET), 1000, [START_OLD, DONE], start_ms=0) == [(200, Assignment(TARGET))]


def test_snapshot_at_the_start_replays_forward_with_the_kip455_layout():
    assert history(Assignment(ORIGIN), 0, [START_OLD, DONE_BARE], start_ms=0) == [
        (0, Assignment(ORIGIN)), (100, MOVING), (200, Assignment(TARGET))]


def test_snapshot_during_the_move_is_the_truth_at_its_instant():
    assert history(MOVING, 150, [START_24, DONE_BARE], start_ms=0) == [
        (0, Assignment(ORIGIN_BACK)), (100, MOVING), (200, Assignment(TARGET))]


def test_no_snapshot_starts_at_the_first_line_naming_the_whole_assignment():
    assert history(None, 0, [START_OLD, DONE], start_ms=0) == [(200, Assignment(TARGET))]
    assert history(None, 0, [START_24, DONE_BARE], start_ms=0) == [(100, MOVING), (200, Assignment(TARGET))]


def test_no_move_keeps_the_snapshot_from_the_start():
    assert history(Assignment(ORIGIN), 500, [], start_ms=0) == [(0, Assignment(ORIGIN))]


def test_cluster_from_path_skips_logs_folders():
    assert cluster_of_path("/data/logs/prod-eu/broker-3/server.log") == "prod-eu"
    assert cluster_of_path("/out/v37/logs/broker-1/state-change.log") == "v37"
    assert cluster_of_path("/somewhere/server.log") is None


def test_version_forms_pick_the_earliest_release_they_allow():
    def seen(*patterns: str) -> list[bool]:
        return [p in patterns for p, _, _ in FORMS]
    assert infer_version(seen()) == ("0.10", None)
    assert infer_version(seen(r"ISR updated from AlterIsr to", r"zkVersion updated to")) == ("2.7", "2.7")
    # 2.7.0 Partition.updateIsr still writes ZooKeeper (`... and zkVersion updated to [..]`) under an older IBP
    assert infer_version(seen(r"Added fetcher to broker ", r"zkVersion updated to")) == ("2.1", "2.7")
    # Partition.makeLeader/makeFollower name the previous leader from 3.6.0 (3.5.x: `Previous leader epoch was`)
    assert infer_version(seen(r"with topic id ", r"Previous leader (?:Some|None)")) == ("3.6", None)
    # Partition.makeLeader: `starts at Leader Epoch` 0.11.0.0 - 2.4.0, 2.4.1 - 2.5 `... with high watermark H. Previous`
    assert infer_version(seen(r"Successfully updated assignment of partition", r"starts at Leader Epoch")) == \
        ("2.4", "2.4")
    two_five = next(p for p, first, _ in FORMS if first == "2.4" and "high watermark" in p)
    assert infer_version(seen(r"Successfully updated assignment of partition", two_five)) == ("2.4", "2.5")
    assert infer_version(seen(r"Added fetcher to broker \d", two_five)) == ("2.5", "2.5")
    # a public 2.4.1 cluster (sweep 7) was read as 2.5 over its brokers' own `Kafka version: 2.4.1` lines
    assert release_of(seen(two_five), ["2.4.1"]) == ("2.4.1", "version line", "2.4.1")
    assert re.search(two_five, "[Partition t-0 broker=1] t-0 starts at leader epoch 5 from offset 12 with high "
                               "watermark 10. Previous leader epoch was 4.")
    for topic in ("t-0", "test2-2"):  # a real 2.7 follower line: the topic is a whole word, not its tail `est2-2`
        assert not re.search(two_five, f"[Broker id=1] Follower {topic} starts at leader epoch 0 from offset 0 with "
                                       "high watermark 0. Previous leader epoch was -1.")
    # 3.1 - 3.4 drop the brackets of 2.8 - 3.0; 3.5 adds a space or the under-min-isr mark before "and"
    one, five = (next(p for p, first, _ in FORMS if first == f and "ISR updated to" in p) for f in ("3.1", "3.5"))
    assert re.search(one, "ISR updated to 1,2 and version updated to 7") and \
        not re.search(five, "ISR updated to 1,2 and version updated to 7")
    assert re.search(five, "ISR updated to 1,2  and version updated to 7")
    # PartitionRegistration.toString: `replicas=[..], isr=[..]` up to 3.6, `replicas=[..], directories=[..]` from 3.7
    seven = next(p for p, first, _ in FORMS if first == "3.7" and "directories=" in p)
    assert infer_version(seen(r"with topic id ", r"lastCaughtUpTimeMs", seven)) == ("3.7", None)
    assert re.search(seven, "PartitionRegistration(replicas=[3, 1, 2], directories=[B_s3M5qvrILHbTrqu_tnLg], isr=[2]")
    assert not re.search(seven, "PartitionRegistration(replicas=[1, 2], isr=[1], removingReplicas=[], addingReplicas=[]")

    def release(*lines: str) -> tuple[str, str | None]:
        return infer_version([any(re.search(p, line) for line in lines) for p, _, _ in FORMS])
    # logIdents (public logs read as 0.10 or 0.11 before): KafkaController and StateChangeLogger from 1.0, KRaft's
    # QuorumController `[Controller N] ` 2.8-3.4 (ZooKeeper's before 1.0 ends in a colon), `[QuorumController id=N] ` 3.5+
    assert release("[Controller id=1004 epoch=12] Controller 1004 epoch 12 became active") == ("1.0", None)
    # PartitionStateMachine.logFailedStateChange's words from 1.1 (1.0: `Initiated state change … failed`)
    assert release("[Controller id=1004 epoch=12] Controller 1004 epoch 12 failed to change state for partition "
                   "t-0 from OfflinePartition to OnlinePartition") == ("1.1", None)
    # PartitionStateMachine.handleStateChanges names the LeaderAndIsr it wrote from 1.1.0 (line 169; 1.0.0 line 170:
    # `… with leader L`)
    assert release("[Controller id=0 epoch=1] Changed partition t-0 from OnlinePartition to OnlinePartition with "
                   "state LeaderAndIsr(leader=1, leaderEpoch=2, isr=List(0, 2, 1), zkVersion=3)") == ("1.1", None)
    assert release("Controller 0 epoch 5 changed partition [t,4] from OfflinePartition to OnlinePartition with "
                   "leader 1") == ("0.10", None)
    assert release("[Partition t-0 broker=2] t-0 starts at Leader Epoch 4 from offset 7. Previous Leader Epoch was: 3"
                   ) == ("1.0", "2.4")
    # a shrink's failed ZooKeeper write escapes Partition.updateIsr from 1.1 (KafkaZkClient); ReplicaManager's
    # logIdent from 1.0 and its failed-directory line naming the logs it stopped moving from 1.1
    assert release("Uncaught exception in scheduled task 'isr-expiration' org.apache.zookeeper.KeeperException$"
                   "SessionExpiredException: KeeperErrorCode = Session expired for /brokers/topics/t/partitions/0/state"
                   ) == ("1.1", None)
    assert release("[ReplicaManager broker=0] Stopping serving replicas in dir /data") == ("1.0", None)
    assert release("[ReplicaManager broker=0] Broker 0 stopped fetcher for partitions t-0 and stopped moving logs for "
                   "partitions  because they are in the failed log directory /data.") == ("1.1", None)
    assert release("[Controller 0] UNCLEAN partition change for t-1 with topic ID Fs3yVbY9S2qtNEF8A-xMSA: leader: 1 -> 0"
                   ) == ("2.8", "3.4")
    assert release("[Controller 1]: Controller 1 incremented epoch to 5") == ("0.10", None)
    # Partition.maybeShrinkIsr names the partition in its message up to 0.10.2 (0.11: `Shrinking ISR from …`)
    assert release("Partition [t,0] on broker 1: Shrinking ISR for partition [t,0] from 1,2 to 1") == ("0.10", "0.10")
    assert release("[QuorumController id=1] Fencing broker 2 because its session has timed out.") == ("3.5", None)
    assert release("Failed to elect leader for partition t-0 under strategy OfflinePartitionLeaderElectionStrategy("
                   "false)") == ("2.4", None)


def test_kraft_4_forms_bound_the_release():
    """ReplicationControlManager.maybeFenceOneStaleBroker writes `Fencing broker N at epoch E because its session has
    timed out.` from 4.0.0 (3.9.0: `Fencing broker N because …`); PartitionChangeBuilder.tryElection logs an election
    from the eligible leader replicas at TRACE from 3.7.0 (`… using ELR`, absent in 3.6.0), and from 4.1.0 that line
    and the unclean one name the registration before the change (`… Previous partition: PartitionRegistration(…),
    change record: …`, not in 4.0). Kafka 4.1.1 logs without a `Kafka version:` line were read as 3.6."""
    def release(*lines: str) -> tuple[str, str | None]:
        return infer_version([any(re.search(p, line) for line in lines) for p, _, _ in FORMS])
    reg = ("PartitionRegistration(replicas=[1, 2], directories=[AAAAAAAAAAAAAAAAAAAAAQ, AAAAAAAAAAAAAAAAAAAAAQ], "
           "isr=[], removingReplicas=[], addingReplicas=[], elr=[2], lastKnownElr=[1], leader=-1, "
           "leaderRecoveryState=RECOVERED, leaderEpoch=2, partitionEpoch=3), change record: PartitionChangeRecord("
           "partitionId=0, topicId=Fs3yVbY9S2qtNEF8A-xMSA, isr=[2], leader=2, replicas=null, removingReplicas=null, "
           "addingReplicas=null, leaderRecoveryState=-1, directories=null, eligibleLeaderReplicas=[], lastKnownElr=null)")
    fence = "[QuorumController id=3] Fencing broker 2 at epoch 10 because its session has timed out."
    elr = "[QuorumController id=3] Setting new leader for topicId Fs3yVbY9S2qtNEF8A-xMSA, partition 0 to 2 using ELR"
    unclean = elr.replace("using ELR", "using an unclean election")
    assert release(fence) == ("4.0", None)
    assert release(elr) == ("3.7", None)
    assert release(f"{elr}. Previous partition: {reg}") == ("4.1", None)
    assert release(f"{unclean}. Previous partition: {reg}") == ("4.1", None)
    assert release(unclean) == ("3.5", None)  # 3.6+ in fact: the line alone bounds nothing beyond its logIdent
    assert release(fence.replace(" at epoch 10", "")) == ("3.5", None)
    # a 4.1.1 controller's excerpt, no `Kafka version:` line: its earliest release, not 3.6 (as before)
    excerpt = [fence, f"{elr}. Previous partition: {reg}", "[Broker id=1] Leader t-0 with topic id Some(Fs3yVbY9S2qtN"
               "EF8A-xMSA) starts at leader epoch 3 from offset 7 with partition epoch 4, high watermark 7, ISR [2], "
               "adding replicas [] and removing replicas [] . Previous leader Some(-1) and previous leader epoch was 2."]
    forms = [any(re.search(p, line) for line in excerpt) for p, _, _ in FORMS]
    assert release_of(forms, []) == ("4.1", "logs", None)
    assert release_of(forms, ["4.1.1"]) == ("4.1.1", "version line", "4.1.1")
    assert release_of(forms, ["4.0.0"]) == ("4.1", "logs", None)  # a client of 4.0 logging beside it


def test_the_brokers_kafka_version_line_names_the_release_within_the_forms():
    """AppInfoParser logs `Kafka version: X` at every start (`Kafka version : X` up to 0.10); Confluent's builds print
    their own number (7.3.5-ccs is Kafka 3.3). The earliest release named that the forms allow is taken, a rolling
    upgrade's latest as the last; a release the forms rule out (another product's client) is not."""
    assert [printed_release(t) for t in ("3.6.1", "2.7.0", "0.10.2.1", "7.3.5-ccs", "6.2.1-ce", "8.1.0-ccs",
                                         "3.7.0-SNAPSHOT", "9.9.9", "3.10.0", "2.4.1.37", "abc")] == \
        ["3.6.1", "2.7", "0.10.2", "3.3", "2.8", "4.1", "3.7", None, None, None, None]
    assert re.search(PRINTED_VERSION, "Kafka version : 0.10.0.1").group(1) == "0.10.0.1"

    def seen(*patterns: str) -> list[bool]:
        return [p in patterns for p, _, _ in FORMS]
    kraft = seen(r"with topic id ", r"Previous leader (?:Some|None)")  # 3.6 or later
    assert release_of(kraft, ["3.6.1"]) == ("3.6.1", "version line", "3.6.1")
    assert release_of(kraft, ["3.9.0", "3.6.1", "2.8.2"]) == ("3.6.1", "version line", "3.9")
    assert release_of(kraft, ["2.8.2"]) == ("3.6", "logs", None)
    assert release_of(seen(r"zkVersion updated to"), ["3.6.1"]) == ("0.10", "logs", "2.7")
    assert release_of(seen(), ["4.1.1"]) == ("4.1.1", "version line", "4.1.1")


def test_snapshot_cluster_is_its_folder_as_given_not_the_link_target(tmp_path):
    """simulate --logs writes OUT/snapshots as a link into OUT/.replicaflow/gen-*; the cluster is OUT's name."""
    from replicaflow.ingest.sources import _snapshot_cluster

    gen = tmp_path / "v37" / ".replicaflow" / "gen-1" / "snapshots"
    gen.mkdir(parents=True)
    (tmp_path / "v37" / "snapshots").symlink_to(gen)
    assert _snapshot_cluster(tmp_path / "v37" / "snapshots" / "describe.txt") == "v37"


def test_a_whole_assignment_with_an_id_no_broker_has_is_not_taken():
    """The controller's 2.4+ line (KafkaController.onPartitionReassignment: ``addingReplicas=4,
    removingReplicas=1)``) names the whole assignment; a hostile line whose list holds 5,000 digits, or an id
    over Java's int, is no assignment (``int()`` of the former was a traceback that ended ``analyze --logs``)."""
    line = "replicas=4,2,3,1, addingReplicas={}, removingReplicas=1)"
    assert broker_ids(re.search(WHOLE_24, line.format("4")).group(1)) == (4,)
    assert broker_ids(re.search(WHOLE_24, line.format("4,5")).group(1)) == (4, 5)
    assert broker_ids(re.search(WHOLE_24, line.format("")).group(1)) == ()
    assert broker_ids(re.search(WHOLE_24, line.format("9" * 5000)).group(1)) is None
    assert broker_ids(re.search(WHOLE_24, line.format("2147483648")).group(1)) is None
    assert broker_ids("1, 2") == (1, 2)


def test_the_release_given_is_kept_without_its_spaces():
    """``--kafka-version ' 3.7'`` (a shell's quoting) is the release 3.7, and _meta.json says ``3.7``."""
    assert options(" 3.7 ", "10s", "end", None, None).kafka_version == "3.7"
    assert options(None, "10s", "end", None, None).kafka_version is None


def test_a_kraft_completion_told_twice_keeps_the_move_before_it():
    """KRaft writes `AlterPartition request ... completed the ongoing partition reassignment` (no replicas), then the
    PartitionChangeRecord that empties both lists (ReplicationControlManager.replay, with `replicas`): one completion.
    Read as two, the second must not hide the start before them (ingest/replay.py ``_before``)."""
    record = Move(200, 2, "completed", target=TARGET)
    out = history(Assignment(TARGET), 1000, [START_24, DONE_BARE, record], start_ms=0)
    assert out[:3] == [(0, Assignment(ORIGIN_BACK)), (100, MOVING), (200, Assignment(TARGET))]
    assert {a for _, a in out[3:]} == {Assignment(TARGET)}
    # two completions naming different replicas with no start between them: what came before is not known
    other = Move(300, 3, "completed", target=ORIGIN)
    assert history(Assignment(ORIGIN), 1000, [DONE, other], start_ms=0) == [(300, Assignment(ORIGIN))]


def _record(at: str, node: int, adding: str, removing: str, replicas: str, isr: str = "null") -> str:
    """ReplicationControlManager.replay's INFO for a PartitionChangeRecord with reassignment lists (KRaft 3.5+)."""
    return (f"[2024-05-01 {at}] INFO [QuorumController id={node}] Replayed partition assignment change "
            f"PartitionChangeRecord(partitionId=0, topicId=AAAAAAAAAAAAAAAAAAAAAA, isr={isr}, leader=-2, "
            f"replicas=[{replicas}], removingReplicas=[{removing}], addingReplicas=[{adding}], leaderRecoveryState=-1) "
            f"for topic orders (org.apache.kafka.controller.ReplicationControlManager)\n")


def _start(at: str, node: int) -> str:
    return _record(at, node, "4", "3", "1, 2, 4, 3")


def _done(at: str, node: int) -> str:
    return _record(at, node, "", "", "1, 2, 4", isr="[1, 2, 4]")


def test_a_record_a_controller_replays_at_its_start_is_no_new_line_but_a_repeat_elsewhere_is():
    """``controller_restart.startup_replays``: a line restating an earlier line's record within a minute of its node's start
    is the replay of the metadata log (QuorumController loads its snapshot and replays the records after it); a
    restated record far from any start of its node (a standby's at commit, or the same move asked for again) is
    kept."""
    record = "Replayed partition assignment change PartitionChangeRecord(partitionId=0, addingReplicas=[4])"
    rows = [{"cluster": "c", "ts_ms": t, "broker": b, "message": f"[QuorumController id={b}] {record}"}
            for t, b in [(0, 1), (20, 2), (3_600_000, 2), (3_600_000 + STARTUP_REPLAY_MS + 1, 1)]]
    starts = [{"cluster": "c", "broker": 2, "ts_ms": 3_600_000 - STARTUP_REPLAY_MS},
              {"cluster": "c", "broker": 1, "ts_ms": 0}]
    # row 0 is the first statement (its node's start beside it changes nothing); row 3 is a minute and 1 ms past
    # node 1's start; row 1 is node 2's at commit
    assert startup_replays(rows, started_at(starts)) == {2}
    assert startup_replays(rows, {}) == set()


@pytest.mark.spark
def test_a_standby_controller_restarting_after_a_move_does_not_move_it_again(spark, tmp_path):
    """Controller 2 is a standby: it logs each record the active controller 1 commits, ms later, and at its restart
    an hour later replays both records of the move, which ended at 10:05. One reassignment, not a second one of a
    millisecond at 11:00."""
    (tmp_path / "controller-1.log").write_text(_start("10:00:00,000", 1) + _done("10:05:00,000", 1))
    (tmp_path / "controller-2.log").write_text(
        _start("10:00:00,020", 2) + _done("10:05:00,020", 2)
        + "[2024-05-01 11:00:00,000] INFO [KafkaRaftServer nodeId=2] Kafka Server started "
          "(kafka.server.KafkaRaftServer)\n" + _start("11:00:00,100", 2) + _done("11:00:00,101", 2))
    (tmp_path / "broker-1.log").write_text(
        "[2024-05-01 09:59:00,000] INFO [Partition orders-0 broker=1] ISR updated to 1,2,3 and version updated to 5 "
        "(kafka.cluster.Partition)\n"
        "[2024-05-01 11:20:00,000] INFO [Partition orders-0 broker=1] ISR updated to 1,2,4 and version updated to 9 "
        "(kafka.cluster.Partition)\n")
    files = tuple(str(tmp_path / f) for f in ("controller-1.log", "controller-2.log", "broker-1.log"))
    rows = (rebuild(spark, [ClusterInputs("c", files)], RebuildOptions(scrape_interval_ms=1000)).tables["assignments"]
            .orderBy("seq").collect())
    changes = [(r["ts_ms"] % 86_400_000, tuple(r["replicas"]), tuple(r["adding"])) for r in rows]
    # the standby's statements at commit repeat the assignment in force (no change to the pipeline's replay)
    assert changes == [(36_000_000, (1, 2, 4, 3), (4,)), (36_000_020, (1, 2, 4, 3), (4,)),
                       (36_300_000, (1, 2, 4), ()), (36_300_020, (1, 2, 4), ())]


def _partition_record(at: str, node: int) -> str:
    """ReplicationControlManager.replay's INFO for a PartitionRecord (3.6+): a partition created, or each partition
    of the snapshot a controller loads at its start."""
    return (f"[2024-05-01 {at}] INFO [QuorumController id={node}] Replayed PartitionRecord for new partition orders-0 "
            "with topic ID AAAAAAAAAAAAAAAAAAAAAA and PartitionRegistration(replicas=[1, 2, 3], directories=[], "
            "isr=[1, 2, 3], removingReplicas=[], addingReplicas=[], elr=[], lastKnownElr=[], leader=1, "
            "leaderRecoveryState=RECOVERED, leaderEpoch=3, partitionEpoch=5).\n")


def _isr(at: str) -> str:
    """The leader's line that makes the partition's leader and ISR known (its state begins there)."""
    return (f"[2024-05-01 {at}] INFO [Partition orders-0 broker=1] ISR updated to 1,2,3 and version updated to 5 "
            "(kafka.cluster.Partition)\n")


_RESTART_2 = "[2024-05-01 11:00:00,000] INFO [KafkaRaftServer nodeId=2] Kafka Server started (kafka.server.KafkaRaftServer)\n"
# the controller's own start line (controller.log), logged just before it loads its snapshot
_QUORUM_2 = ("[2024-05-01 11:00:00,040] INFO [QuorumController id=2] Creating new QuorumController with clusterId "
             "MkU3OEVBNTcwNTJENDM2Qk. (org.apache.kafka.controller.QuorumController)\n")


def _assignments(spark, tmp_path, logs: dict[str, str]) -> list[tuple[int, tuple[int, ...], tuple[int, ...]]]:
    for name, text in logs.items():
        (tmp_path / name).write_text(text)
    files = tuple(str(tmp_path / f) for f in logs)
    rows = (rebuild(spark, [ClusterInputs("c", files)], RebuildOptions(scrape_interval_ms=1000)).tables["assignments"]
            .orderBy("seq").collect())
    return [(r["ts_ms"] % 86_400_000, tuple(r["replicas"]), tuple(r["adding"])) for r in rows]


@pytest.mark.spark
@pytest.mark.parametrize("restart", [_RESTART_2, _QUORUM_2], ids=["server.log", "controller.log"])
def test_a_restart_that_restates_the_snapshots_partition_moves_nothing(spark, tmp_path, restart):
    """Without a describe, the lines naming a partition's whole assignment set it (docs/real-cluster.md, "Logs
    alone"). Controller 2 starts at 11:00, loads its snapshot, taken before the move, and logs its PartitionRecord
    (replicas 1,2,3; ReplicationControlManager.replay(PartitionRecord)), then replays the move's records. Both are
    that replay (``controller_restart``): the partition keeps 1,2,4, with no move of a millisecond at 11:00 and no
    return to the snapshot's replicas. The start is the process's (KafkaRaftServer, server.log) or the
    controller's own (QuorumController's constructor, controller.log): a bug report often holds one file. The
    partition's state begins at controller 1's PartitionRecord, which names its leader and ISR too
    (holders.recorded_state), not at broker 1's first ISR line a second later."""
    assert _assignments(spark, tmp_path, {
        "controller-1.log": _partition_record("09:00:00,000", 1) + _start("10:00:00,000", 1) + _done("10:05:00,000", 1),
        "controller-2.log": restart + _partition_record("11:00:00,050", 2) + _start("11:00:00,100", 2)
        + _done("11:00:00,101", 2),
        "broker-1.log": _isr("09:00:01,000")}) == [
        (32_400_000, (1, 2, 3), ()), (36_000_000, (1, 2, 4, 3), (4,)), (36_300_000, (1, 2, 4), ())]


@pytest.mark.spark
def test_a_restart_restating_a_partition_the_logs_knew_only_from_its_move_does_not_undo_the_move(spark, tmp_path):
    """The partition was created before the logs begin: controller 1's log holds its move only. Controller 2's
    restart restates the snapshot's PartitionRecord (1,2,3), which is older than the move, so the partition stays at
    1,2,4; it is known from the move's whole assignment on."""
    assert _assignments(spark, tmp_path, {
        "controller-1.log": _start("10:00:00,000", 1) + _done("10:05:00,000", 1),
        "controller-2.log": _RESTART_2 + _partition_record("11:00:00,050", 2) + _start("11:00:00,100", 2)
        + _done("11:00:00,101", 2),
        "broker-1.log": _isr("09:00:01,000")}) == [(36_000_000, (1, 2, 4, 3), (4,)), (36_300_000, (1, 2, 4), ())]


@pytest.mark.spark
def test_a_restart_that_is_the_first_the_logs_tell_of_a_partition_is_taken(spark, tmp_path):
    """Only controller 2's log, from its restart: the snapshot's PartitionRecord is the first the logs say of the
    partition, so it is its assignment from the start of the logs; the records replayed after it restate nothing
    earlier and are the move (this log's only account of it, at the instants of the replay)."""
    assert _assignments(spark, tmp_path, {
        "controller-2.log": _RESTART_2 + _partition_record("11:00:00,050", 2) + _start("11:00:00,100", 2)
        + _done("11:00:00,101", 2),
        "broker-1.log": _isr("11:00:00,000")}) == [
        (39_600_000, (1, 2, 3), ()), (39_600_100, (1, 2, 4, 3), (4,)), (39_600_101, (1, 2, 4), ())]
