"""`replicaflow analyze --logs` on logs alone, with no describe snapshot (ingest/holders.py,
docs/real-cluster.md "Logs alone"): the replicas, leaders and brokers the lines show, through the CLI.

Three brokers' files as a bug report would attach them, in Kafka 2.4's forms: broker 1's and broker 4's
``server.log``, broker 4's ``state-change.log`` (one LeaderAndIsr request), broker 2's stale ISR update and
the controller's (broker 9) state change of a partition it does not host.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq
import pytest

pytestmark = pytest.mark.spark

P = "(kafka.cluster.Partition)"
BROKER_1 = f"""\
[2021-03-01 10:00:00,000] INFO [KafkaServer id=1] started (kafka.server.KafkaServer)
[2021-03-01 10:00:05,000] INFO [Partition orders-0 broker=1] Shrinking ISR from 1,2,3 to 1,2. Leader: (highWatermark: 100, endOffset: 120). Out of sync replicas: (brokerId: 3, endOffset: 90). {P}
[2021-03-01 10:00:05,010] INFO [Partition orders-0 broker=1] ISR updated to [1,2] and zkVersion updated to [5] {P}
[2021-03-01 10:00:06,000] INFO [Partition orders-1 broker=1] Shrinking ISR from 1,3 to 1. Leader: (highWatermark: 100, endOffset: 120). Out of sync replicas: (brokerId: 3, endOffset: 90). {P}
[2021-03-01 10:00:06,010] INFO [Partition orders-1 broker=1] ISR updated to [1] and zkVersion updated to [7] {P}
[2021-03-01 10:02:00,000] INFO [Partition orders-0 broker=1] Expanding ISR from 1,2 to 1,2,3 {P}
[2021-03-01 10:02:00,010] INFO [Partition orders-0 broker=1] ISR updated to [1,2,3] and zkVersion updated to [6] {P}
[2021-03-01 10:05:00,000] INFO [KafkaServer id=1] shutting down (kafka.server.KafkaServer)
"""
BROKER_2 = f"""\
[2021-03-01 10:01:29,990] INFO [Partition orders-0 broker=2] Shrinking ISR from 2,1,3 to 2,1. Leader: (highWatermark: 90, endOffset: 95). Out of sync replicas: (brokerId: 3, endOffset: 90). {P}
[2021-03-01 10:01:30,000] INFO [Partition orders-0 broker=2] Cached zkVersion [4] not equal to that in zookeeper, skip updating ISR {P}
"""
BROKER_4_STATE = """\
[2021-03-01 10:00:01,000] TRACE [Broker id=4] Received LeaderAndIsr request LeaderAndIsrPartitionState(topicName='payments', partitionIndex=0, controllerEpoch=3, leader=4, leaderEpoch=7, isr=[4, 5], zkVersion=11, replicas=[4, 5, 6], addingReplicas=[], removingReplicas=[], isNew=false) correlation id 8 from controller 9 epoch 3 (state.change.logger)
"""
BROKER_4 = f"""\
[2021-03-01 10:01:00,000] INFO [Partition payments-0 broker=4] Shrinking ISR from 4,5 to 4. Leader: (highWatermark: 50, endOffset: 60). Out of sync replicas: (brokerId: 5, endOffset: 40). {P}
[2021-03-01 10:01:00,010] INFO [Partition payments-0 broker=4] ISR updated to [4] and zkVersion updated to [12] {P}
"""
CONTROLLER_9 = """\
[2021-03-01 10:03:00,000] TRACE [Controller id=9 epoch=3] Changed partition orders-1 state from OnlinePartition to OnlinePartition with state LeaderAndIsr(leader=1, leaderEpoch=2, isr=List(1), zkVersion=7) (state.change.logger)
"""
MS = 1614592800000  # 2021-03-01 10:00:00 UTC
# A few seconds pasted from a LinkedIn broker (its layout: yyyy/MM/dd, [logger] [thread] [app] [context]): the shrink
# and the expansion fall after the 10 s grid's point at or before the last line
EXCERPT = """\
2023/05/23 21:09:35.182 INFO [DefaultAlterIsrManager] [data-plane-kafka-request-handler-7] [kafka-server] [] Sending to controller org.apache.kafka.common.requests.AlterIsrRequest$Builder of ~274 bytes (1 items)
2023/05/23 21:09:36.000 INFO [Partition] [data-plane-kafka-request-handler-7] [kafka-server] [] [Partition payments-2 broker=78001] Shrinking ISR from 78001,78002,78003 to 78001,78003. Leader: (highWatermark: 5, endOffset: 9). Out of sync replicas: (brokerId: 78002, endOffset: 5).
2023/05/23 21:09:38.250 INFO [Partition] [data-plane-kafka-request-handler-3] [kafka-server] [] [Partition payments-2 broker=78001] Expanding ISR from 78001,78003 to 78001,78003,78002
"""
EXCERPT_MS = 1684876170000  # 2023-05-23 21:09:30 UTC, the grid point before the first line
RM = "(kafka.server.ReplicaManager)"
NOT_ENOUGH = ("org.apache.kafka.common.errors.NotEnoughReplicasException: The size of the current ISR Set(1, 2) is "
              "insufficient to satisfy the min.isr requirement of 3 for partition orders-3")
# A leader refusing acks=all writes with a min ISR of 3 the lines alone tell (no describe, the fleet's default 2),
# until the topic's override is removed at 08:00:30; the ISR grows back at 08:00:40. Two `Kafka version` lines: the
# broker's 2.4.1, and a client's 3.0.0 that the broker's line forms rule out (zkVersion writes end with 2.7)
REJECTED = f"""\
[2022-05-10 07:59:58,000] INFO Kafka version: 2.4.1 (org.apache.kafka.common.utils.AppInfoParser)
[2022-05-10 07:59:59,000] INFO Kafka version: 3.0.0 (org.apache.kafka.common.utils.AppInfoParser)
[2022-05-10 08:00:00,100] ERROR [ReplicaManager broker=1] Error processing append operation on partition orders-3 {RM}
{NOT_ENOUGH}
[2022-05-10 08:00:05,000] ERROR [ReplicaManager broker=1] Error processing append operation on partition orders-3 {RM}
{NOT_ENOUGH}
[2022-05-10 08:00:30,000] INFO Processing override for entityPath: topics/orders with config: Map(retention.ms -> 1000) (kafka.server.DynamicConfigManager)
[2022-05-10 08:00:40,000] INFO [Partition orders-3 broker=1] Expanding ISR from 1,2 to 1,2,3 {P}
[2022-05-10 08:00:40,010] INFO [Partition orders-3 broker=1] ISR updated to [1,2,3] and zkVersion updated to [9] {P}
"""
REJECTED_MS = 1652169600000  # 2022-05-10 08:00:00 UTC


REAL = Path(__file__).resolve().parent / "data" / "real_files"


@dataclass(frozen=True)
class Run:
    out: Path
    cluster: str


@pytest.fixture(scope="module")
def fleet(tmp_path_factory) -> Path:
    """The three sets of files below as one fleet (`--cluster-from-path`): one JVM for the module."""
    root = tmp_path_factory.mktemp("alone")
    files = {"bug/logs/broker-1/server.log": BROKER_1, "bug/logs/broker-2/server.log": BROKER_2,
             "bug/logs/broker-4/server.log": BROKER_4, "bug/logs/broker-4/state-change.log": BROKER_4_STATE,
             "bug/logs/broker-9/state-change.log": CONTROLLER_9,
             "roleplay/logs/broker-1/server.log": (REAL / "roleplay-2.4-broker-1.log").read_text(),
             "excerpt/logs/broker-78001/server.log": EXCERPT, "rejected/logs/broker-1/server.log": REJECTED,
             **{f"churn/logs/{name}": text for name, text in DELETION.items()}}
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    logs = [arg for name in ("bug", "roleplay", "churn", "excerpt", "rejected") for arg in ("--logs", str(root / name))]
    run = subprocess.run([sys.executable, "-m", "replicaflow.cli", "-q", "analyze", *logs, "--cluster-from-path",
                          "--min-insync-replicas", "2", "--out", str(root / "out")],
                         env={**os.environ, "COLUMNS": "100"}, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr
    return root / "out"


@pytest.fixture(scope="module")
def out(fleet) -> Run:
    return Run(fleet, "bug")


def table(run: Run, name: str, group: str = "telemetry") -> list[dict]:
    return [r for r in pq.read_table(run.out / group / name).to_pylist() if r["cluster"] == run.cluster]


def summary(run: Run) -> dict:
    return json.loads((run.out / "analysis" / "_summary.json").read_text())[run.cluster]


def meta(run: Run) -> dict:
    metas = json.loads((run.out / "telemetry" / "_metas.json").read_text())  # a fleet's: one per cluster
    return next(m for m in (metas if isinstance(metas, list) else metas.values()) if m["cluster"] == run.cluster)


def test_replicas_are_every_broker_the_lines_show_holding_one_or_the_first_line_naming_them_all(out):
    """Partition.maybeShrinkIsr / maybeExpandIsr (both ISRs of the line are replicas), ReplicaManager.
    becomeLeaderOrFollower (the LeaderAndIsr request names the whole assignment: broker 6 appears nowhere
    else). The controller (PartitionStateMachine) logs partitions it does not host: broker 9 is no replica."""
    rows = {(r["topic"], r["partition"]): r for r in table(out, "assignments")}
    assert {k: r["replicas"] for k, r in rows.items()} == {
        ("orders", 0): [1, 2, 3], ("orders", 1): [1, 3], ("payments", 0): [4, 5, 6]}
    assert all(r["adding"] == [] and r["removing"] == [] for r in rows.values())
    assert meta(out)["provenance"]["assignments"] == "logs (replicas as far as the lines show)"


def test_the_broker_changing_the_isr_is_the_leader_until_a_leader_line_says_otherwise(out):
    """Only the leader runs Partition.maybeShrinkIsr / maybeExpandIsr; broker 2's shrink that ZooKeeper
    refused ("Cached zkVersion … skip updating ISR", Partition.updateIsr before 2.7) is a broker that lost
    leadership without knowing it (KAFKA-2729), never a leader."""
    leaders = sorted((r["topic"], r["partition"], r["ts_ms"] - MS, r["leader"], r["leader_epoch"])
                     for r in table(out, "leaders"))
    assert ("orders", 0, 5000, 1, None) in leaders
    assert ("orders", 1, 6000, 1, None) in leaders
    assert {(t, p, b) for t, p, _, b, _ in leaders} == {("orders", 0, 1), ("orders", 1, 1), ("payments", 0, 4)}
    assert [x for x in leaders if x[:2] == ("orders", 0)] == [("orders", 0, 5000, 1, None)]  # one row: no change


def test_every_replica_the_lines_show_is_a_broker_up_from_the_start(out):
    brokers = {r["broker"]: r for r in table(out, "brokers")}
    assert set(brokers) >= {1, 2, 3, 4, 5, 6}
    assert all(brokers[b]["ts_ms"] == MS and brokers[b]["state"] == "up" for b in (2, 3, 5, 6))


def test_isr_meters_and_gauges_count_the_partitions_the_lines_show(out):
    """IsrShrinksPerSec / IsrExpandsPerSec on the leader (Partition), UnderReplicatedPartitions and
    UnderMinIsrPartitionCount (Partition.isUnderReplicated / isUnderMinIsr) at min.insync.replicas 2."""
    got = summary(out)
    assert (got["isr_shrinks"], got["isr_expands"]) == (3, 1)
    assert got["peak_urp"] == 3            # 10:01:00-10:02:00: orders-0, orders-1 and payments-0
    assert got["peak_under_min_isr"] == 2  # orders-1 [1] and payments-0 [4]
    incidents = table(out, "incidents", "analysis")
    urp = {(r["topic"], r["partition"]): (r["start_ms"] - MS, r["end_ms"]) for r in incidents if r["kind"] == "urp"}
    assert urp[("orders", 0)] == (5000, MS + 120_000)
    assert urp[("orders", 1)][0] == 6000 and urp[("orders", 1)][1] is None


KRAFT_AND_MOVES = """\
[2026-05-27 13:32:45,000] INFO [QuorumController id=0] Replayed PartitionRecord for new partition events-0 with topic ID x1 and PartitionRegistration(replicas=[2, 3], directories=[d1, d2], isr=[2], removingReplicas=[], addingReplicas=[], elr=[], lastKnownElr=[], leader=2, leaderRecoveryState=RECOVERED, leaderEpoch=0, partitionEpoch=0). (org.apache.kafka.controller.ReplicationControlManager)
[2026-05-27 13:32:46,000] INFO [ReplicaFetcherManager on broker 3] Added fetcher to broker 2 for partitions HashMap(events-1 -> InitialFetchState(topicId=Some(x1), leader=BrokerEndPoint(id=2, host=h:9092), currentLeaderEpoch=0, initOffset=0)) (kafka.server.ReplicaFetcherManager)
[2026-05-27 13:32:48,000] INFO [QuorumController id=0] Removed topic events with ID x1. (org.apache.kafka.controller.ReplicationControlManager)
[2026-05-27 13:32:47,000] INFO [Controller id=9] Successfully updated assignment of partition orders-5 to ReplicaAssignment(replicas=7,8,1, addingReplicas=7, removingReplicas=1) (kafka.controller.KafkaController)
"""


def test_seen_replicas_anchor_on_a_partition_record_and_leave_reassignment_targets_to_the_replay(spark, tmp_path):
    """ReplicationControlManager.replay(PartitionRecord) names the whole assignment (the controller, node 0,
    hosts nothing by logging it); ReplicaFetcherManager.addFetcherForPartitions: the follower and the
    leader it fetches from hold replicas; KafkaController.updateReplicaAssignmentForPartition's target
    list is played in time by ingest/replay.py, not taken as replicas."""
    from replicaflow.ingest.holders import Whole, seen_replicas, topic_deletions
    from replicaflow.ingest.logs import read_logs
    from replicaflow.ingest.replay import Assignment

    (tmp_path / "mixed.log").write_text(KRAFT_AND_MOVES)
    events = read_logs(spark, str(tmp_path), cluster="c")["log_events"]
    seen = seen_replicas(events)
    assert topic_deletions(events).deleted == {("c", "events"): (1779888768000,)}  # ReplicationControlManager.replay
    assert set(seen) == {("c", "events", 0), ("c", "events", 1)}
    assert seen[("c", "events", 0)].wholes == (Whole(1779888765000, Assignment((2, 3)), 0),)  # node 0's record
    assert seen[("c", "events", 0)].holders == (2, 3)
    assert seen[("c", "events", 1)].wholes == ()
    assert seen[("c", "events", 1)].holders == (2, 3)


ROLEPLAY_MS = 1598226890000  # 2020-08-23 23:54:50 UTC, the first line's scrape


@pytest.fixture(scope="module")
def roleplay(fleet) -> Run:
    return Run(fleet, "roleplay")


def test_a_followers_log_alone_tells_a_reassignment_from_its_leader_and_isr_requests(roleplay):
    """A real 2.4 broker's log (tests/ingest/data/real_files/README.md): the replica being added receives
    LeaderAndIsr requests (ReplicaManager.becomeLeaderOrFollower logs each at TRACE) naming the KIP-455
    assignment [2,1,3] adding 1 removing 3, then [2,1]; their leader, epoch and ISR are the controller's.
    The reassignment completes in 404 ms, as the walk-through's `--verify` said; the release is 2.4 from
    `addingReplicas=[` (LeaderAndIsrPartitionState, KIP-455)."""
    rows = sorted(table(roleplay, "assignments"), key=lambda r: r["ts_ms"])
    assert [(r["ts_ms"] - ROLEPLAY_MS, r["replicas"], r["adding"], r["removing"]) for r in rows] == [
        (3601, [2, 1, 3], [1], [3]), (4005, [2, 1], [], [])]
    # the first request's own lines are before the file's first line; its fetcher (epoch 1) tells leader 3 first
    leaders = sorted(table(roleplay, "leaders"), key=lambda r: r["ts_ms"])
    assert [(r["ts_ms"] - ROLEPLAY_MS, r["leader"], r["leader_epoch"]) for r in leaders] == [
        (3592, 3, None), (3601, 3, 1), (4005, 2, 2), (4013, 2, 3)]
    isr = sorted(table(roleplay, "isr"), key=lambda r: r["ts_ms"])
    assert [(r["isr"], r["leader_epoch"]) for r in isr] == [([3, 2], 1), ([3, 2, 1], 2), ([2, 1], 3)]
    # 2.2-2.x name the fetcher's leader as `to broker BrokerEndPoint(id=L, host=h:p)` (AbstractFetcherManager)
    added = sorted((r["ts_ms"] - ROLEPLAY_MS, r["leader"]) for r in table(roleplay, "fetchers") if r["action"] == "added")
    assert added == [(3592, 3), (4007, 2), (4015, 2)]
    moves = table(roleplay, "reassignments", "analysis")
    assert [(m["replica"], m["start_ms"] - ROLEPLAY_MS, m["end_ms"] - ROLEPLAY_MS, m["status"]) for m in moves] == [
        (1, 3601, 4005, "completed")]
    assert moves[0]["throttled"] is None  # no offsets in logs: no sample of the move to tell a throttle at
    assert meta(roleplay)["kafka_version"] == "2.4"
    # 404 ms between the 10 s grid's points: 2.4 counts the move as under-replicated (no KIP-352 yet)
    got = summary(roleplay)
    assert (got["peak_urp"], got["peak_urp_kip352"], got["peak_reassignment_induced_urp"],
            got["peak_reassigning"]) == (1, 0, 1, 1)


SC = "(state.change.logger)"
DELETION = {
    "broker-0/state-change.log": f"""\
[2025-04-09 11:00:00,954] INFO [Controller id=0 epoch=1] Changed partition gone-0 state from NonExistentPartition to NewPartition with assigned replicas 0,1 {SC}
[2025-04-09 11:00:01,049] INFO [Controller id=0 epoch=1] Changed partition gone-0 from NewPartition to OnlinePartition with state LeaderAndIsr(leader=0, leaderEpoch=0, isrWithBrokerEpoch=List(BrokerState(brokerId=0, brokerEpoch=-1), BrokerState(brokerId=1, brokerEpoch=-1)), leaderRecoveryState=RECOVERED, partitionEpoch=0) {SC}
[2025-04-09 11:00:01,057] INFO [Broker id=0] Leader gone-0 with topic id Some(2-3qO3o8RgetP5oocXJFcQ) starts at leader epoch 0 from offset 0 with partition epoch 0, high watermark 0, ISR [0,1], adding replicas [] and removing replicas [] . Previous leader None and previous leader epoch was -1. {SC}
[2025-04-09 11:00:01,058] INFO [Broker id=0] Leader kept-0 with topic id Some(UMhZ98XWTvGoFWbHZCtfZA) starts at leader epoch 0 from offset 0 with partition epoch 0, high watermark 0, ISR [0,1], adding replicas [] and removing replicas [] . Previous leader None and previous leader epoch was -1. {SC}
[2025-04-09 11:00:30,587] INFO [Controller id=0 epoch=1] Partition gone-0 state changed to (Leader:-1,ISR:1,LeaderRecoveryState:RECOVERED,LeaderEpoch:1,ZkVersion:1,ControllerEpoch:1) after removing replica 0 from the ISR as part of transition to OfflineReplica {SC}
[2025-04-09 11:00:30,588] INFO [Controller id=0 epoch=1] Partition gone-0 state changed to (Leader:-1,ISR:1,LeaderRecoveryState:RECOVERED,LeaderEpoch:2,ZkVersion:2,ControllerEpoch:1) after removing replica 1 from the ISR as part of transition to OfflineReplica {SC}
[2025-04-09 11:00:30,650] INFO [Controller id=0 epoch=1] Changed partition gone-0 state from OfflinePartition to NonExistentPartition {SC}
""",
    "broker-0/server.log": """\
[2025-04-09 11:00:30,600] INFO Log for partition gone-0 is renamed to /kafka-logs/gone-0.80f365eb04284e4a945e6c0438bdaa82-delete and is scheduled for deletion (kafka.log.LogManager)
[2025-04-09 11:01:00,000] INFO [Partition kept-0 broker=0] ISR updated to [0] and version updated to 1 (kafka.cluster.Partition)
""",
    "broker-1/server.log": """\
[2025-04-09 11:00:30,602] INFO Log for partition gone-0 is renamed to /kafka-logs/gone-0.4e4f4975cd6d47cb85e1663ffae7be6f-delete and is scheduled for deletion (kafka.log.LogManager)
""",
    "broker-0/controller.log": """\
[2025-04-09 11:00:30,700] INFO [Topic Deletion Manager 0] Deletion of topic gone successfully completed (kafka.controller.TopicDeletionManager)
""",
}
DELETION_MS = 1744196430602  # 2025-04-09 11:00:30.602 UTC: the last replica's log renamed for deletion


@pytest.fixture(scope="module")
def deletion(fleet) -> Run:
    return Run(fleet, "churn")


def test_a_deleted_topic_stops_existing_instead_of_going_offline(deletion):
    """A ZooKeeper topic deletion (3.6 forms): the controller takes each replica out of the ISR as it goes
    OfflineReplica (ReplicaStateMachine), leaving no leader; each replica's log is renamed for deletion
    (LogManager.asyncDelete), then the partition is NonExistentPartition (PartitionStateMachine) and the
    topic's deletion done (TopicDeletionManager). Kafka counts no partition of a topic being deleted as
    offline (KafkaController's OfflinePartitionsCount leaves them out): the partition ends when its last
    replica's log is gone, and the other topic is untouched."""
    rows = sorted((r for r in table(deletion, "assignments") if r["topic"] == "gone"), key=lambda r: r["ts_ms"])
    assert [r["replicas"] for r in rows] == [[0, 1], []]
    assert rows[-1]["ts_ms"] == DELETION_MS
    state = table(deletion, "partition_state", "analysis")
    gone = [s for s in state if s["topic"] == "gone"]
    assert max(s["to_ms"] for s in gone) == DELETION_MS and all(s["to_ms"] is not None for s in gone)
    assert [s["to_ms"] for s in state if s["topic"] == "kept"][-1] is None  # still there at the end
    got = summary(deletion)
    assert got["peak_offline"] == 0 and got["offline_minutes"] == 0.0


def test_the_grid_ends_at_or_after_the_last_event_so_every_event_counts(fleet):
    """The scrape grid ended at the last grid point at or before the last event: the shrink (Partition.maybeShrinkIsr)
    and the expansion (Partition.maybeExpandIsr) of a few seconds' excerpt were in log_events and in no meter total
    (`ISR shrinks / expands: 0 / 0`). It ends at the first point at or after it."""
    run = Run(fleet, "excerpt")
    assert (meta(run)["start_ms"], meta(run)["end_ms"]) == (EXCERPT_MS, EXCERPT_MS + 10_000)
    got = summary(run)
    assert (got["isr_shrinks"], got["isr_expands"]) == (1, 1)
    urp = [(r["topic"], r["partition"], r["start_ms"] - EXCERPT_MS, r["end_ms"] - EXCERPT_MS)
           for r in table(run, "incidents", "analysis") if r["kind"] == "urp"]
    assert urp == [("payments", 2, 6000, 8250)]
    # neither grid point (0 s, 10 s) falls in it, and a cluster rebuilt from logs peaks at any instant
    assert (got["peak_urp"], got["peak_under_min_isr"], got["urp_minutes"]) == (1, 0, 0.037)


def test_the_report_of_a_fleet_shows_each_clusters_inputs_from_its_metas(fleet):
    """A fleet rebuilt from its logs has one meta per cluster in ``telemetry/_metas.json``; the report read only
    ``_meta.json``, so every cluster's inputs panel said the Kafka version was "not recorded"."""
    from replicaflow.report.data import load_analysis
    from replicaflow.report.inputs import panel

    analysis = load_analysis(fleet)
    assert set(analysis.meta) == {"bug", "roleplay", "churn", "excerpt", "rejected"}
    version = next(r["value"] for r in panel(analysis, "roleplay", [], None) if r["what"] == "Kafka version")
    assert version == "2.4 (inferred from the log lines' forms: 2.4)"


def test_the_charts_say_what_the_grid_missed_where_a_cards_peak_is_above_them(fleet):
    """The summary of a cluster rebuilt from logs peaks at any instant (pipeline/summary.py), its charts are drawn on
    the 10 s grid: the roleplay move (404 ms) and the excerpt's ISR flap (Partition.maybeShrinkIsr, then
    maybeExpandIsr 2.25 s later) fall between two points. A chart reading "0 throughout" under a card of 1 says
    what the logs show between the points; the bug report's drawn charts, whose points reach the peaks, do not."""
    from replicaflow.report.data import load_analysis
    from replicaflow.report.sections import health_chart, urp_chart

    analysis = load_analysis(fleet)
    health = health_chart(analysis, "roleplay", "r", [])  # drawn: at min ISR 2 after the move
    assert health.drawn and health.notes == [
        "Between the 10s grid's points the logs show up to 1 under-replicated, 1 reassigning (the cards' peaks)."]
    assert urp_chart(analysis, "roleplay", "r", []).sentence == (
        "Under-replicated partitions, KIP-352 and legacy: 0 at every point of the 10s grid; between them the logs "
        "show up to 1 legacy (the cards' peaks).")
    assert "up to 1 under-replicated (the cards' peaks)" in health_chart(analysis, "excerpt", "e", []).sentence
    bug = health_chart(analysis, "bug", "b", [])
    assert bug.drawn and not bug.notes


def test_a_leaders_rejections_tell_its_isr_and_min_isr_and_count_the_refused_writes(fleet):
    """ReplicaManager.appendToLocalLog logs every append Partition.appendRecordsToLeader refuses with
    NotEnoughReplicasException and marks FailedProduceRequestsPerSec for it: two lines, two refused requests. The
    exception names the committed ISR (2.1+: `Set(1, 2)`) and the topic's effective min ISR (3, above the fleet's
    default of 2): the partition is under min ISR from the first refusal until DynamicConfigManager logs the topic's
    overrides without min.insync.replicas (`Processing override for entityPath: topics/orders`), the default again."""
    run = Run(fleet, "rejected")
    got = summary(run)
    assert (got["produce_requests_rejected"], got["peak_under_min_isr"], got["under_min_isr_minutes"]) == (2, 1, 0.498)
    incidents = sorted((r["kind"], r["start_ms"] - REJECTED_MS, r["end_ms"] - REJECTED_MS)
                       for r in table(run, "incidents", "analysis"))
    assert incidents == [("under_min_isr", 100, 30_000), ("urp", 100, 40_000)]
    configs = sorted((r["ts_ms"] - REJECTED_MS, r["entity_type"], r["entity"], r["name"], r["value"])
                     for r in table(run, "configs"))
    # the listing at 30 s has no min ISR nor throttled-replica list: none is in force from then
    assert configs == [(0, "broker", "<default>", "min.insync.replicas", "2"),
                       (100, "topic", "orders", "min.insync.replicas", "3"),
                       (30_000, "topic", "orders", "follower.replication.throttled.replicas", None),
                       (30_000, "topic", "orders", "leader.replication.throttled.replicas", None),
                       (30_000, "topic", "orders", "min.insync.replicas", None)]
    assert [r["isr"] for r in sorted(table(run, "isr"), key=lambda r: r["seq"])] == [[1, 2], [1, 2, 3]]
    assert meta(run)["provenance"]["produce_errors"] == "logs"
    assert (meta(run)["kafka_version"], meta(run)["kafka_version_source"]) == ("2.4.1", "version line")
