"""The controller per release and per controller kind (docs/semantics.md §4, §5.1, §6), on whole runs.

Each test states the numbers Kafka's code gives and where: session timeouts, leader-epoch bumps,
KIP-461 failed partitions cleared by a new epoch, ``kafka-reassign-partitions --verify``/``--cancel``,
unclean leader election and the preferred-leader rebalance.
"""

from __future__ import annotations

import numpy as np
import pytest

from replicaflow.errors import ReplicaflowError
from replicaflow.model import election
from replicaflow.model.configs import (
    FOLLOWER_REPLICATION_RATE,
    FOLLOWER_THROTTLED_REPLICAS,
    LEADER_REPLICATION_RATE,
    LEADER_THROTTLED_REPLICAS,
)
from replicaflow.model.units import parse_duration_ms
from replicaflow.model.version import KafkaVersion
from replicaflow.sim.scenario import parse_scenario
from replicaflow.telemetry.log_lines import topic_id
from replicaflow.telemetry.logformat import render_event
from tests.sim.conftest import SCENARIOS, rows, small, started


def run_until(engine, seconds: float) -> None:
    sc = engine.scenario
    for now in range(sc.start_ms + sc.tick_ms, sc.start_ms + int(seconds * 1000) + 1, sc.tick_ms):
        engine.step(now)


def messages(lines: list[tuple[str, str]]) -> list[str]:
    """The message of each rendered ``(path, line)``: after time and level, before ` (logger)`."""
    return [line.split(" ", 3)[3].rsplit(" (", 1)[0] for _, line in lines]


def crash(version: str, controller: str | None = None, broker: int = 3, **over):
    kafka = {"version": version, **({"controller": controller} if controller else {})}
    return started(small(kafka=kafka, events=[{"at": "1s", "broker_down": broker}], **over))


# ------------------------------------------------------------------ sessions
@pytest.mark.parametrize(("version", "controller", "timeout_ms"), [
    ("2.4", None, 6_000), ("2.5", None, 18_000), ("3.7", "kraft", 9_000), ("4.0", None, 9_000)])
def test_a_crashed_broker_leaves_the_isr_after_the_release_session_timeout(version, controller, timeout_ms):
    """ZooKeeper ``zookeeper.session.timeout.ms`` 6 s up to 2.4 and 18 s from 2.5 (KafkaConfig.ZkSessionTimeoutMs,
    KIP-537); KRaft ``broker.session.timeout.ms`` 9 s (KafkaConfig.BrokerSessionTimeoutMs): the follower on
    the crashed broker 3 leaves the ISR exactly that long after the crash at 1 s."""
    engine, writer, _ = crash(version, controller, tick="100ms")
    assert engine.controller.session_timeout_ms == timeout_ms
    run_until(engine, 1 + timeout_ms / 1000 + 1)
    shrink = [r for r in rows(writer, "isr") if r["isr"] == [1, 2]][0]
    assert shrink["ts_ms"] - engine.scenario.start_ms == 1_000 + timeout_ms


def restart(version: str, controller: str | None, up_at: str, *more_events):
    """Broker 3 crashes at 1 s and is started again at ``up_at`` (tick 100 ms)."""
    kafka = {"version": version, **({"controller": controller} if controller else {})}
    events = [{"at": "1s", "broker_down": 3}, {"at": up_at, "broker_up": 3}, *more_events]
    return started(small(kafka=kafka, events=events))


def up_rows(engine, writer) -> list[int]:
    return [r["ts_ms"] - engine.scenario.start_ms for r in rows(writer, "brokers") if r["broker"] == 3]


@pytest.mark.parametrize(("version", "controller", "up_at", "registered_ms"), [
    # KRaft: refused (DUPLICATE_BROKER_REGISTRATION) until the session's deadline, 1 s + 9 s; BrokerLifecycleManager
    # tries again after 0.1, 0.2, 0.4, 0.8, 1.6, 3.2 s, then 6.4 s (cap 9 s): 4 + 6.3 = 10.3 s is the first try
    # past 10 s. From 4.0 the cap is 4.5 s: tries at 4 s + 6.3 s = 10.3 s too; started at 2 s, 2 + 6.3 = 8.3 s,
    # then + min(6.4, 4.5) = 12.8 s (3.9: + 6.4 = 14.7 s)
    ("3.7", "kraft", "4s", 10_300), ("4.0", None, "2s", 12_800), ("3.9", "kraft", "2s", 14_700),
    # ZooKeeper 0.8: its own node of the old session, so it sleeps a session timeout (6 s) between tries: 4 s, 10 s
    ("0.8.2", None, "4s", 10_000), ("0.8.2", None, "3500ms", 9_500),
    # after the session expired, at once on every release
    ("2.4", None, "7s", 7_000), ("3.7", "kraft", "10100ms", 10_100), ("0.8.2", None, "7s", 7_000),
])
def test_a_crashed_broker_registers_once_its_old_session_expired(version, controller, up_at, registered_ms):
    """model.election.registration_ms: KRaft's ClusterControlManager.registerBroker refuses a new incarnation while
    BrokerHeartbeatManager.hasValidSession holds (to its deadline, inclusive) and BrokerLifecycleManager retries with
    ExponentialBackoff(100, 2, broker.session.timeout.ms (/2 from 4.0)); ZooKeeper 0.8's
    ZkUtils.createEphemeralPathExpectConflictHandleZKBug sleeps a session timeout while its own node stands. The
    broker's up row is written when it registers, and it joins the ISR only after."""
    engine, writer, logs = restart(version, controller, up_at)
    run_until(engine, 20)
    assert up_rows(engine, writer) == [0, 1_000, registered_ms]
    back = [r["ts_ms"] - engine.scenario.start_ms for r in rows(writer, "isr") if 3 in r["isr"]][-1]
    assert back >= registered_ms
    # the broker logs each refused try: KRaft's BrokerLifecycleManager the controller's error, ZooKeeper 0.8's ZkUtils
    # its own node of the old session
    tries = election.registration_tries(KafkaVersion.parse(version), engine.scenario.kafka.controller, 1_000,
                                        parse_duration_ms(up_at), engine.controller.session_timeout_ms)
    refused = [e for e in logs if e["kind"] == "registration_refused"]
    error = "DUPLICATE_BROKER_REGISTRATION" if engine.scenario.kafka.controller == election.KRAFT else None
    assert tries[-1] == registered_ms and [(e["ts_ms"] - engine.scenario.start_ms, e["broker"], e["error"])
                                           for e in refused] == [(t, 3, error) for t in tries[:-1]]
    if version == "0.8.2":
        texts = [text for e in refused for _, text in render_event(e, KafkaVersion.parse(version))]
        assert [t.split(" at ", 1)[1] for t in texts] == ["/brokers/ids/3 a while back in a different session, hence I "
                                                          "will backoff for this node to be deleted by Zookeeper and "
                                                          "retry (kafka.utils.ZkUtils$)"] * (len(tries) - 1)


@pytest.mark.parametrize("version", ["0.9.0", "1.0", "2.4", "3.7"])
def test_a_zookeeper_broker_started_within_its_crashs_session_exits(version):
    """0.9+ ZooKeeper: the old session's /brokers/ids/3 still stands, the registration fails with NodeExists
    (ZkUtils.registerBrokerInZk at 0.9–1.0: "restarted it faster than the zookeeper timeout"; 1.1+
    KafkaZkClient.getAfterNodeExists) and KafkaServer.startup exits. The broker stays down (its session expires at
    7 s, 1 s + 6 s up to 2.4 and 19 s from 2.5), the scenario is told so, and a later start works. The process logs its
    failed start: KafkaServer.startup's fatal line over the registration's exception, then its shutdown."""
    timeout_s = 18 if version == "3.7" else 6
    later = f"{1 + timeout_s + 1}s"
    engine, writer, logs = restart(version, None, "3s", {"at": later, "broker_up": 3})
    run_until(engine, 1 + timeout_s + 2)
    assert up_rows(engine, writer) == [0, 1_000, (1 + timeout_s + 1) * 1000]
    (failed,) = [e for e in logs if e["kind"] == "startup_failed"]
    assert (failed["ts_ms"] - engine.scenario.start_ms, failed["broker"], failed["state"]) == (3_000, 3,
                                                                                              "already registered")
    ident = "[Kafka Server 3], " if version == "0.9.0" else "[KafkaServer id=3] "
    error = ("java.lang.RuntimeException: A broker is already registered on the path /brokers/ids/3. This probably"
             if version in ("0.9.0", "1.0") else
             "org.apache.zookeeper.KeeperException$NodeExistsException: KeeperErrorCode = NodeExists")
    texts = [text for _, text in render_event(failed, KafkaVersion.parse(version))]
    fatal = "FATAL" if version in ("0.9.0", "1.0") else "ERROR"
    assert f"{fatal} {ident}Fatal error during KafkaServer startup. Prepare to shutdown (kafka.server.KafkaServer)" in \
        texts[-5] and texts[-4].startswith(error) and texts[-1].endswith(f"{ident}shut down completed "
                                                                          "(kafka.server.KafkaServer)")
    (warning,) = engine.scenario.warnings
    assert (f"broker 3 starts 2s after it crashed (events[0]), before its ZooKeeper session ({timeout_s}s) expired: "
            f"Kafka {KafkaVersion.parse(version)} refuses the registration (NodeExists on /brokers/ids/3) and the "
            f"broker exits, so it stays down; start it at {1 + timeout_s}s or later") in warning


def test_a_refused_start_leaves_the_broker_down_for_the_checks():
    """The scenario checks walk the same rule: after a refused start a second broker_down is refused (the broker
    never ran again), and a controlled shutdown's quick restart is not refused (the session closed with it)."""
    with pytest.raises(ReplicaflowError, match=r"expected a running broker, found broker 3 down since events\[0\]"):
        restart("2.4", None, "3s", {"at": "30s", "broker_down": 3})
    engine, writer, _ = started(small(kafka={"version": "2.4"}, events=[
        {"at": "1s", "broker_down": {"broker": 3, "controlled": True}}, {"at": "2s", "broker_up": 3}]))
    run_until(engine, 3)
    assert up_rows(engine, writer)[-1] == 2_000 and not engine.scenario.warnings


def test_a_broker_killed_while_its_registration_waits_never_joins():
    """KRaft: killed at 5 s while its registration waited for the old session (to 10 s): it stays down, and its
    retries stop with the process."""
    engine, writer, logs = restart("3.7", "kraft", "3s", {"at": "5s", "broker_down": 3})
    run_until(engine, 30)
    assert up_rows(engine, writer) == [0, 1_000]
    # tries at 3, 3.1, 3.3, 3.7, 4.5 s, the next (6.1 s) after the kill
    assert [e["ts_ms"] - engine.scenario.start_ms for e in logs if e["kind"] == "registration_refused"] == [
        3_000, 3_100, 3_300, 3_700, 4_500]
    texts = [text for e in logs if e["kind"] == "registration_refused"
             for _, text in render_event(e, KafkaVersion.parse("3.7"))]
    assert texts[0] == ("[2026-01-01 00:00:03,000] INFO [BrokerLifecycleManager id=3] Unable to register broker 3 "
                        "because the controller returned error DUPLICATE_BROKER_REGISTRATION "
                        "(kafka.server.BrokerLifecycleManager)")


def test_the_controller_default_and_refusals_per_release():
    """ZooKeeper up to 3.9, KRaft in 4.x; ZooKeeper mode refused on 4.x (KIP-833 removed it), KRaft before 3.3."""
    defaults = {v: parse_scenario(small(kafka={"version": v}), SCENARIOS, "<t>").kafka.controller
                for v in ("0.10.2", "2.8", "3.3", "3.9", "4.0", "4.1")}
    assert defaults == {"0.10.2": "zookeeper", "2.8": "zookeeper", "3.3": "zookeeper", "3.9": "zookeeper",
                        "4.0": "kraft", "4.1": "kraft"}
    for version, controller, words in (("4.0", "zookeeper", "removed ZooKeeper mode"),
                                       ("3.2", "kraft", "production-ready from Kafka 3.3")):
        with pytest.raises(ReplicaflowError, match=words):
            parse_scenario(small(kafka={"version": version, "controller": controller}), SCENARIOS, "<t>")


# ------------------------------------------------------------------ leader epochs
@pytest.mark.parametrize(("version", "controller", "leader_epoch"), [
    ("3.7", "zookeeper", 1), ("3.5", "kraft", 1), ("3.6", "kraft", 0), ("4.0", None, 0)])
def test_removing_a_dead_follower_bumps_the_leader_epoch_by_controller(version, controller, leader_epoch):
    """Follower 3 dies; the leader (1) stays. ZooKeeper writes a new leader epoch with the smaller ISR
    (ZkReplicaStateMachine OfflineReplica → removeReplicasFromIsr → LeaderAndIsr.newLeaderAndIsr); KRaft
    bumps it only before metadata version 3.6 (PartitionChangeBuilder.triggerLeaderEpochBumpIfNeeded,
    MetadataVersion.isLeaderEpochBumpRequiredOnIsrShrink, KAFKA-15021). The partition epoch moves in all."""
    engine, writer, _ = crash(version, controller)
    run_until(engine, 20)
    s = engine.s
    assert s.in_isr[0].tolist() == [True, True, False] and s.leader_id(0) == 1
    assert int(s.leader_epoch[0]) == leader_epoch and int(s.partition_epoch[0]) == 1
    assert rows(writer, "leaders")[-1]["leader_epoch"] == leader_epoch


@pytest.mark.parametrize(("controller", "start_epoch", "end_epoch"), [("zookeeper", 1, 3), ("kraft", 0, 1)])
def test_reassignment_epochs_by_controller(controller, start_epoch, end_epoch):
    """[1,2,3] → [1,2,4]. ZooKeeper: a new epoch at the start (onPartitionReassignment A1,
    updateLeaderEpochAndSendRequest), one for the target assignment (B3) and one per removed in-sync
    replica (B4, removeReplicasFromIsr): 0 → 1 → 3. KRaft: none while replicas are only added, one record
    when the reassignment completes and 3 leaves (triggerLeaderEpochBumpIfNeeded): 0 → 0 → 1."""
    engine, writer, _ = started(small(
        kafka={"version": "3.7", "controller": controller}, cluster={"brokers": 4, "network_in": "1GB/s",
                                                                    "network_out": "1GB/s"},
        events=[{"at": "1s", "reassign": {"version": 1, "partitions": [
            {"topic": "t", "partition": 0, "replicas": [1, 2, 4]}]}}]))
    run_until(engine, 1)
    assert int(engine.s.leader_epoch[0]) == start_epoch and engine.s.reassignments
    run_until(engine, 10)
    assert not engine.s.reassignments and engine.s.replica_ids(0) == [1, 2, 4]
    assert int(engine.s.leader_epoch[0]) == end_epoch and engine.s.leader_id(0) == 1


@pytest.mark.parametrize(("version", "controller", "epochs"), [
    ("2.4", None, [(1, 0, 1)]), ("3.7", "zookeeper", [(1, 0, 1)]), ("3.5", "kraft", [(1, 0, 1)]),
    ("3.6", "kraft", [])])
def test_the_kept_leader_logs_each_new_leader_epoch(version, controller, epochs):
    """Follower 3 dies and the controller removes it from the ISR, leader 1 stays. Where that bumps the
    leader epoch, broker 1 receives it and logs its start line again (Partition.makeLeader: every new
    epoch in 2.4, ``isNewLeaderEpoch`` in 3.x), naming itself as the previous leader; KRaft from 3.6
    bumps no leader epoch on a shrink, so no line."""
    engine, _, logged = crash(version, controller)
    run_until(engine, 20)
    starts = [e for e in logged if e["kind"] == "leader_start" and e["ts_ms"] > engine.scenario.start_ms]
    assert [(e["broker"], e["prev_leader_epoch"], e["leader_epoch"]) for e in starts] == epochs
    assert all(e["prev_leader"] == 1 and e["isr"] == [1, 2] for e in starts)


@pytest.mark.parametrize(("controller", "cleared"), [("zookeeper", True), ("kraft", False)])
def test_a_failed_partition_is_cleared_by_the_controllers_epoch_bump(controller, cleared):
    """KIP-461: follower 2 marks the partition failed at 1 s (2.3+); follower 3 crashes at 2 s and its session
    expires at 20 s (ZooKeeper 18 s) or 11 s (KRaft 9 s). The ZooKeeper controller's ISR removal carries a new
    leader epoch, so broker 2's Partition.makeFollower returns true and
    AbstractFetcherManager.addFetcherForPartitions drops it from the failed set: it fetches again. KRaft 3.7
    keeps the epoch on a shrink (KAFKA-15021): broker 2 stays failed."""
    engine, writer, logs = started(small(
        kafka={"version": "3.7", "controller": controller},
        events=[{"at": "1s", "fail_partition": {"topic": "t", "partition": 0, "broker": 2, "error": "unexpected"}},
                {"at": "2s", "broker_down": 3}]))
    run_until(engine, 25)
    s = engine.s
    assert bool(s.failed[0, 1]) is not cleared
    actions = [(r["broker"], r["action"]) for r in rows(writer, "fetchers") if r["broker"] == 2]
    assert actions[-1] == (2, "added" if cleared else "failed")
    assert s.log_leo[0, 1] == s.log_leo[0, 0] if cleared else s.log_leo[0, 1] < s.log_leo[0, 0]


@pytest.mark.parametrize(("version", "controller", "leader_epoch", "shrinks"), [
    ("3.5", "zookeeper", 0, 1), ("3.3", "kraft", 1, 0), ("3.5", "kraft", 1, 0), ("3.6", "kraft", 0, 1)])
def test_the_leaders_own_shrink_bumps_the_leader_epoch_on_kraft_before_3_6(version, controller, leader_epoch,
                                                                          shrinks):
    """Follower 3 stalls at 0 s; leader 1's ISR-expiration check drops it at 15 s (lag 10 s, checks every 5 s).
    KRaft before metadata version 3.6 runs the leader's AlterPartition through
    PartitionChangeBuilder.triggerLeaderEpochBumpIfNeeded (ReplicationControlManager.alterPartition), which
    sets the leader for any ISR shrink: leader epoch 0 → 1. The answer then carries an epoch the leader does
    not have (Partition.handleAlterPartitionUpdate ignores it) and the leader takes the shrink from the
    metadata record (makeLeader), so IsrShrinksPerSec stays 0 and the leaders + isr rows are the
    controller's. 3.6 (KAFKA-15021, isLeaderEpochBumpRequiredOnIsrShrink) and ZooKeeper's AlterIsr
    (KafkaController.processAlterIsr stores the leader's own epoch) keep epoch 0 and count the shrink."""
    engine, writer, logged = started(small(kafka={"version": version, "controller": controller,
                                                  "replica_lag_time_max": "10s"},
                                           events=[{"at": "0s", "stall_follower": {"broker": 3}}]))
    run_until(engine, 14)
    assert engine.s.in_isr[0].all()
    run_until(engine, 16)
    s = engine.s
    assert s.replica_ids(0, s.in_isr[0]) == [1, 2] and s.leader_id(0) == 1
    assert (int(s.leader_epoch[0]), int(s.partition_epoch[0]), int(s.shrinks[0])) == (leader_epoch, 1, shrinks)
    shrink_at = engine.scenario.start_ms + 15_000
    assert [r["leader_epoch"] for r in rows(writer, "leaders") if r["ts_ms"] == shrink_at] == [1] * (1 - shrinks)
    assert [(r["isr"], r["leader_epoch"]) for r in rows(writer, "isr") if r["ts_ms"] == shrink_at] == [
        ([1, 2], leader_epoch)]
    kinds = [e["kind"] for e in logged if e["ts_ms"] == shrink_at]
    assert kinds == (["isr_shrink", "leader_start"] if leader_epoch else ["isr_shrink", "isr_updated"])


def test_a_kraft_3_5_leader_shrink_clears_a_failed_partition():
    """KIP-461 on KRaft 3.5: follower 2 marks the partition failed at 1 s; follower 3 stalls and leader 1
    shrinks it out at 15 s with a new leader epoch, so broker 2's makeFollower sees a new epoch and fetches
    again (AbstractFetcherManager.addFetcherForPartitions); on 3.6 the shrink keeps the epoch: 2 stays failed."""
    for version, cleared in (("3.5", True), ("3.6", False)):
        engine, _, _ = started(small(
            kafka={"version": version, "controller": "kraft", "replica_lag_time_max": "10s"},
            events=[{"at": "0s", "stall_follower": {"broker": 3}},
                    {"at": "1s", "fail_partition": {"topic": "t", "partition": 0, "broker": 2, "error": "unexpected"}}]))
        run_until(engine, 16)
        assert bool(engine.s.failed[0, 1]) is not cleared, version


# ------------------------------------------------------------------ kafka-reassign-partitions
def two_plans(version: str) -> list[dict]:
    """Partition 1 to [1,2,5] at 1 s, then (``--additional`` from 2.6) partition 0's no-op plan at 2 s, throttled."""
    additional = {"additional": True} if KafkaVersion.parse(version).execute_adds_to_ongoing_reassignments else {}
    return [
        {"at": "0s", "config": {"broker": 4, "leader.replication.throttled.rate": "5MB/s"}},
        {"at": "1s", "reassign": {"version": 1, "partitions": [{"topic": "t", "partition": 1, "replicas": [1, 2, 5]}]}},
        {"at": "2s", "reassign": {"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [1, 2, 3]}]},
         "throttle": "10MB/s", **additional},
        {"at": "5s", "verify": {}},
    ]


def reassigning(version: str, events, stall_for: str | None = None):
    """Partition 1 moves to broker 5, whose new follower stalls at once (for ``stall_for``, else for good);
    partition 0's plan is a no-op reassignment that completes at once (its target replicas are all in the ISR)."""
    stall = {"at": "1s", "stall_follower": {"broker": 5, **({"for": stall_for} if stall_for else {})}}
    events = list(events)
    return started(small(kafka={"version": version}, cluster={"brokers": 5, "network_in": "1GB/s",
                                                               "network_out": "1GB/s"},
                         topics=[{"name": "t", "partitions": 2, "replication_factor": 3,
                                  "assignment": [[1, 2, 3], [1, 2, 3]], "initial_size": "1MB"}],
                         events=events[:2] + [stall] + events[2:]))


@pytest.mark.parametrize(("version", "clears"), [("2.5", True), ("2.6", False)])
def test_verify_clears_when_the_plan_is_done_up_to_2_5_and_when_nothing_moves_from_2_6(version, clears):
    """--verify with partition 0's plan while partition 1 still moves: 2.5 clears once the plan's partitions are
    done (ReassignPartitionsCommand.removeThrottle: every status ReassignmentCompleted); 2.6 waits while any
    reassignment is in progress (verifyAssignment: !partsOngoing from listPartitionReassignments)."""
    engine, writer, _ = reassigning(version, two_plans(version))
    run_until(engine, 6)
    configs = engine.configs
    assert engine.s.reassignments and engine.s.replica_ids(0) == [1, 2, 3]
    if clears:  # every live broker's rates, broker 4's operator-set one too, and the plan's topic lists
        assert not configs.broker and not configs.topic
        assert np.isinf(engine.quotas.limit_bps).all()
    else:
        assert configs.broker[("4", LEADER_REPLICATION_RATE)] == "5000000"
        assert configs.topic[("t", LEADER_THROTTLED_REPLICAS)] == "0:1,0:2,0:3,1:1,1:2,1:3"  # with the running move


def test_verify_on_2_6_deletes_every_live_brokers_rates_once_nothing_moves():
    """2.6 clearAllThrottles: both rates on every live broker plus the plan's targets — broker 4's rate, set by
    the operator on a broker the tool never throttled, goes too — and the plan's topic lists."""
    engine, writer, _ = reassigning("2.6", two_plans("2.6") + [{"at": "8s", "verify": {}}], stall_for="5s")
    run_until(engine, 5)
    assert engine.configs.broker  # partition 1 still moving at 5 s (broker 5 stalls until 6 s)
    run_until(engine, 8)
    assert not engine.s.reassignments
    deleted = [(r["entity"], r["name"]) for r in rows(writer, "configs") if r["value"] is None]
    assert ("4", LEADER_REPLICATION_RATE) in deleted and not engine.configs.broker and not engine.configs.topic
    assert {e for e, n in deleted if n == FOLLOWER_REPLICATION_RATE} == {"1", "2", "3", "5"}


@pytest.mark.parametrize(("version", "clears"), [("2.5", False), ("2.6", True)])
def test_cancel_clears_the_throttles_from_2_6(version, clears):
    """ReassignPartitionsCommand.cancelAssignment (2.6+) ends with clearAllThrottles; before 2.6 the tool has
    no --cancel and the throttles stay until a finished --verify."""
    events = [{"at": "1s", "reassign": {"version": 1, "partitions": [{"topic": "t", "partition": 1,
                                                                       "replicas": [1, 2, 5]}]}, "throttle": "10MB/s"},
              {"at": "4s", "cancel_reassignment": {}}]
    engine, writer, _ = reassigning(version, events)
    run_until(engine, 3)
    assert engine.configs.topic[("t", LEADER_THROTTLED_REPLICAS)] == "1:1,1:2,1:3"
    run_until(engine, 5)
    assert not engine.s.reassignments
    assert (not engine.configs.broker) is clears and (not engine.configs.topic) is clears


@pytest.mark.parametrize(("version", "additional", "moving", "rates", "lists"), [
    ("2.5", False, False, {"1", "2", "3", "4", "5"}, {}),
    ("2.6", False, False, set(), {}),
    ("2.6", True, True, {"1", "2", "3", "4", "5"}, {LEADER_THROTTLED_REPLICAS: "0:1,0:2,0:3,1:1,1:2,1:3",
                                                    FOLLOWER_THROTTLED_REPLICAS: "0:4,1:5"})])
def test_execute_while_a_reassignment_runs_per_release_and_additional(version, additional, moving, rates, lists):
    """ReassignPartitionsCommand.executeAssignment at 2.5.1: `if (zkClient.reassignPartitionsInProgress())
    { println("There is an existing assignment running."); reassignPartitionsCommand.maybeLimit(throttle) }` —
    nothing starts, and maybeLimit sets both rates on every replica of the plan's topics (existingAssignment:
    partition 1's 1,2,5,3 and partition 0's 1,2,3) and the proposed ones (4), writing no lists. 2.6.0 without
    --additional throws cannotExecuteBecauseOfExistingMessage before any write; with it,
    AlterPartitionReassignments adds the move, and calculateMoveMap throttles the sources and destinations of the
    move in progress (listPartitionReassignments: partition 1, [1,2,3] → 5) beside the new one's
    (calculateReassigningBrokers, calculateLeaderThrottles / calculateFollowerThrottles). Partition 1 moves to 5
    (stalled) from 1 s; at 2 s --execute moves partition 0 to [1,2,4] with --throttle 10MB/s."""
    events = [{"at": "1s", "reassign": {"version": 1, "partitions": [{"topic": "t", "partition": 1,
                                                                       "replicas": [1, 2, 5]}]}},
              {"at": "2s", "reassign": {"version": 1, "partitions": [{"topic": "t", "partition": 0,
                                                                       "replicas": [1, 2, 4]}]}, "throttle": "10MB/s",
               **({"additional": True} if additional else {})}]
    engine, _, _ = reassigning(version, events)
    run_until(engine, 2)
    s = engine.s
    assert (0 in s.reassignments) is moving and 1 in s.reassignments
    assert s.replica_ids(0) == ([1, 2, 4, 3] if moving else [1, 2, 3])
    assert {b for b, n in engine.configs.broker if n == LEADER_REPLICATION_RATE} == rates
    assert {n: v for (t, n), v in engine.configs.topic.items()} == lists


# ------------------------------------------------------------------ unclean leader election
def unclean_cluster(version: str, unclean: bool | None, controller: str | None = None):
    kafka = {"version": version, "replica_lag_time_max": "10s",
             **({"unclean_leader_election": unclean} if unclean is not None else {}),
             **({"controller": controller} if controller else {})}
    return started(small(duration="11m", kafka=kafka, events=[
        {"at": "0s", "stall_follower": {"broker": 3}},   # 3 falls behind and out of the ISR (lag 10 s)
        {"at": "20s", "broker_down": 2}, {"at": "20s", "broker_down": 1}]))


@pytest.mark.parametrize(("version", "unclean", "leader"), [
    ("0.10.2", None, 3), ("0.11", None, -1), ("3.7", True, 3), ("3.7", False, -1)])
def test_unclean_election_elects_the_live_out_of_sync_replica_and_counts_the_lost_messages(version, unclean, leader):
    """No live ISR member after 1 and 2 die: ``unclean.leader.election.enable`` (default true before 0.11,
    false from it, KafkaConfig.UncleanLeaderElectionEnable) elects the first live replica, 3
    (PartitionLeaderElectionAlgorithms.offlinePartitionLeaderElection), with the ISR [3]; everything beyond
    its log end is lost: the 100 messages/s written from the start to the crash at the 20 s boundary, whose
    tick the leader no longer writes (19.9 s), that 3 (stalled from the start) never fetched."""
    engine, writer, logs = unclean_cluster(version, unclean)
    run_until(engine, 40)
    s = engine.s
    assert s.leader_id(0) == leader
    lost = int(engine.controller.messages_lost[0])
    if leader < 0:
        assert lost == 0 and engine.controller.unclean_elections == 0
        return
    assert s.replica_ids(0, s.in_isr[0]) == [3] and engine.controller.unclean_elections == 1
    assert lost == 1990  # 100 messages/s for 19.9 s beyond 3's log end of 1000 (the 1 MB it started with)
    record = [e for e in logs if e["kind"] == "unclean_leader_election"][0]
    assert (record["leader"], record["messages_lost"], record["live"]) == (3, lost, [3])
    # the telemetry holds both ends of the loss: the leaders row's offsets (before 1 and 2 truncate) ...
    elected = [r for r in rows(writer, "leaders") if r["leader"] == 3][0]
    assert (elected["start_offset"], elected["replicas_end_offset"]) == (1000, 2990)
    # ... and the truth row the pipeline's analysis/unclean_elections must equal
    truth = writer.tables()["truth"]["unclean_elections"].to_pylist()
    assert [(r["topic"], r["partition"], r["leader"], r["leader_epoch"], r["messages_lost"]) for r in truth] == [
        ("t", 0, 3, elected["leader_epoch"], 1990)]


def test_enabling_unclean_election_on_a_topic_elects_its_offline_partitions_from_2_1():
    """KafkaController.processTopicUncleanLeaderElectionEnable (2.1+): the topic config elects at once."""
    engine, writer, logs = unclean_cluster("3.7", False)
    engine.clock.add_events(parse_scenario(small(events=[{"at": "45s", "config": {
        "topic": "t", "unclean.leader.election.enable": "true"}}]), SCENARIOS, "<t>").events, "<t>")
    run_until(engine, 44)
    assert engine.s.leader_id(0) == -1
    run_until(engine, 46)
    assert engine.s.leader_id(0) == 3 and engine.controller.messages_lost[0] == 1990


@pytest.mark.parametrize(("version", "leader"), [("3.8", -1), ("3.9", 3), ("4.1", 3)])
def test_kraft_reads_the_unclean_config_from_3_9(version, leader):
    """ConfigurationControlManager.uncleanLeaderElectionEnabledForTopic returns false in 3.3 – 3.8 (`// TODO:
    support configuring unclean leader election`, read at 3.3.0, 3.6.0, 3.8.0 and the 3.8 branch, 3.8.1-SNAPSHOT)
    and the topic's effective config from 3.9 (KAFKA-12670; 3.9.0-rc3, Confluent v8.0.0 and v8.1.0). With
    ``unclean.leader.election.enable`` true, KRaft 3.8 leaves the partition offline when 1 and 2 die; 3.9 elects 3
    as soon as it fences the last ISR member (ReplicationControlManager.generateLeaderAndIsrUpdates, Election.UNCLEAN),
    at 20 s + the 9 s session, losing what 3 never fetched; ZooKeeper reads it in every release (the test above)."""
    engine, writer, logs = unclean_cluster(version, True, "kraft")
    run_until(engine, 40)
    assert engine.s.leader_id(0) == leader
    assert engine.controller.unclean_elections == (leader > 0)
    assert [r["ts_ms"] - engine.scenario.start_ms for r in rows(writer, "leaders") if r["leader"] == 3] == (
        [29_000] if leader > 0 else [])
    assert (engine.controller.messages_lost[0] > 0) == (leader > 0)


def test_kraft_elects_uncleanly_at_its_periodic_check_after_the_config_is_enabled():
    """KRaft 3.9: a topic config enabling unclean election elects nothing at once (ZooKeeper's
    processTopicUncleanLeaderElectionEnable has no KRaft counterpart). QuorumController.maybeScheduleNextElectUncleanLeaders
    runs after the controller write that left partition t-0 without a leader (the fencing at 29 s) and schedules
    maybeElectUncleanLeaders one ``unclean.leader.election.interval.ms`` (300 s, ReplicationConfigs) later: at 329 s
    the check finds the topic's config on and elects 3 (ReplicationControlManager.
    maybeTriggerUncleanLeaderElectionForLeaderlessPartitions)."""
    engine, writer, logs = unclean_cluster("3.9", False, "kraft")
    engine.clock.add_events(parse_scenario(small(events=[{"at": "45s", "config": {
        "topic": "t", "unclean.leader.election.enable": "true"}}]), SCENARIOS, "<t>").events, "<t>")
    run_until(engine, 328.9)
    assert engine.s.leader_id(0) == -1
    run_until(engine, 330)
    assert engine.s.leader_id(0) == 3 and engine.controller.messages_lost[0] > 0
    assert [r["ts_ms"] - engine.scenario.start_ms for r in rows(writer, "leaders") if r["leader"] == 3] == [329_000]
    assert [text for e in logs for _, text in render_event(e, KafkaVersion.parse("3.9")) if "Triggering" in text] == [
        "[2026-01-01 00:05:29,000] ERROR Triggering unclean leader election for offline partition t-0. "
        "(org.apache.kafka.controller.ReplicationControlManager)"]


def test_kraft_checks_again_an_interval_later_while_partitions_stay_leaderless():
    """The check at 329 s finds unclean election off and reschedules itself (ImbalanceSchedule.DEFERRED: another
    300 s) while t-0 stays leaderless; enabling the config at 400 s elects 3 at the check of 629 s."""
    engine, writer, logs = unclean_cluster("3.9", False, "kraft")
    engine.clock.add_events(parse_scenario(small(duration="11m", events=[{"at": "400s", "config": {
        "topic": "t", "unclean.leader.election.enable": "true"}}]), SCENARIOS, "<t>").events, "<t>")
    run_until(engine, 628.9)
    assert engine.s.leader_id(0) == -1
    run_until(engine, 630)
    assert [r["ts_ms"] - engine.scenario.start_ms for r in rows(writer, "leaders") if r["leader"] == 3] == [629_000]


@pytest.mark.parametrize(("version", "controller", "line"), [
    ("2.4", "zookeeper", None), ("3.5", "kraft", None),
    ("3.7", "kraft", "Setting new leader for topicId {id}, partition 0 to 3 using an unclean election")])
def test_the_unclean_election_tool_elects_whatever_the_config_says(version, controller, line):
    """``kafka-leader-election --election-type unclean`` (2.4+, KIP-460) with ``unclean.leader.election.enable``
    false, 25 s after 1 and 2 died: t-0 has no leader, so it elects (``KafkaController.processReplicaLeaderElection``:
    no leader or a dead one; KRaft ``ReplicationControlManager.electLeader``: ``hasLeader()`` false) the first live
    replica, 3, outside the ISR (``OfflinePartitionLeaderElectionStrategy(allowUnclean = true)``,
    ``PartitionChangeBuilder.Election.UNCLEAN``, which KRaft before 3.9 honours though it never reads the config),
    losing the 1990 messages 3 never fetched (100/s up to 19.9 s). KRaft logs the election from 3.6."""
    engine, writer, logs = unclean_cluster(version, False, controller)
    engine.clock.add_events(parse_scenario(small(kafka={"version": version}, events=[
        {"at": "45s", "elect_leaders": {"election_type": "unclean", "partitions": [{"topic": "t", "partition": 0}]}}]),
        SCENARIOS, "<t>").events, "<t>")
    run_until(engine, 44)
    assert engine.s.leader_id(0) == -1
    run_until(engine, 45)
    assert engine.s.leader_id(0) == 3 and engine.controller.unclean_elections == 1
    assert engine.controller.messages_lost[0] == 1990
    assert [r["ts_ms"] - engine.scenario.start_ms for r in rows(writer, "leaders") if r["leader"] == 3] == [45_000]
    texts = [text for e in logs for _, text in render_event(e, KafkaVersion.parse(version))]
    elected = [t for t in texts if "using an unclean election" in t]
    assert elected == ([] if line is None else [elected[0]]) and (line is None or line.format(
        id=topic_id("t")) in elected[0])


def test_the_unclean_election_tool_leaves_partitions_with_a_leader_alone():
    """ELECTION_NOT_NEEDED where the partition has a live leader: an unclean election asked for at 15 s, while 1
    leads with 3 stalled out of the ISR, changes nothing."""
    engine, writer, _ = unclean_cluster("3.7", False)
    engine.clock.add_events(parse_scenario(small(events=[
        {"at": "15s", "elect_leaders": {"election_type": "unclean"}}]), SCENARIOS, "<t>").events, "<t>")
    before = len(rows(writer, "leaders"))
    run_until(engine, 16)
    assert engine.s.leader_id(0) == 1 and engine.controller.unclean_elections == 0
    assert len(rows(writer, "leaders")) == before


def test_the_unclean_election_tool_is_refused_before_2_4():
    """Before 2.4 ``kafka-leader-election`` does not exist and the ElectLeaders request has no election type."""
    with pytest.raises(ReplicaflowError, match=r"election_type.*expected preferred: kafka-leader-election "
                                               r"--election-type unclean exists from 2\.4 \(KIP-460\), this cluster "
                                               r"runs 2\.3"):
        parse_scenario(small(kafka={"version": "2.3"}, events=[
            {"at": "5s", "elect_leaders": {"election_type": "unclean"}}]), SCENARIOS, "<t>")


@pytest.mark.parametrize(("version", "topic_elects", "default_elects"),
                         [("1.1", False, False), ("2.0", False, True), ("2.1", True, True)])
def test_enabling_unclean_election_elects_at_once_per_release_and_entity(version, topic_elects, default_elects):
    """Two commits: the cluster-wide default from 2.0 (KAFKA-6526: DynamicLogConfig.reconfigure calls
    KafkaController.enableDefaultUncleanLeaderElection, whose UncleanLeaderElectionEnable event runs
    triggerOnlinePartitionStateChange), the topic config from 2.1 (KAFKA-6835, TopicUncleanLeaderElectionEnable).
    1.1 has neither: the partition stays offline until a replica's broker starts."""
    for entity, elects in (({"topic": "t"}, topic_elects), ({"broker": "all"}, default_elects)):
        engine, writer, logs = unclean_cluster(version, False)
        engine.clock.add_events(parse_scenario(small(kafka={"version": version}, events=[{"at": "45s", "config": {
            **entity, "unclean.leader.election.enable": "true"}}]), SCENARIOS, "<t>").events, "<t>")
        run_until(engine, 46)
        assert engine.s.leader_id(0) == (3 if elects else -1), (version, entity)


# ------------------------------------------------------------------ preferred-leader rebalance
def _rebalance_during_a_move(version: str, controller: str) -> tuple:
    """a-0 [1,2] led by 2 after broker 1's controlled shutdown and return; c-0 [2,3] moved to [3,1] at 30 s under a
    1MB/s throttle (1 GB: still moving at 400 s, replicas [3,1,2], ISR [2,3]). Leaders of a-0 and c-0 at 400 s."""
    t = {"replication_factor": 2, "partitions": 1, "produce_rate": "0B/s", "message_size": "1KB"}
    engine, _, _ = started(small(
        duration="400s", tick="1s", kafka={"version": version, "controller": controller, "auto_leader_rebalance": True},
        topics=[{**t, "name": "a", "assignment": [[1, 2]], "initial_size": "1MB"},
                {**t, "name": "c", "assignment": [[2, 3]], "initial_size": "1GB"}],
        events=[{"at": "10s", "broker_down": {"broker": 1, "controlled": True}}, {"at": "20s", "broker_up": 1},
                {"at": "30s", "throttle": "1MB/s", "reassign": {"version": 1, "partitions": [
                    {"topic": "c", "partition": 0, "replicas": [3, 1]}]}}]))
    run_until(engine, 400)
    assert engine.s.reassignments, "c-0 still moving"
    return engine.s.leader_id(0), engine.s.leader_id(1)


@pytest.mark.parametrize(("version", "controller", "leaders"), [
    ("3.3", "zookeeper", (2, 2)),   # partitionsBeingReassigned.isEmpty fails: no automatic election at all
    ("3.4", "zookeeper", (1, 3)),   # KAFKA-10149: a-0 back to 1, and c-0 to the head of [3,1,2], in its ISR
    ("3.7", "kraft", (1, 3)),       # maybeBalancePartitionLeaders never looks at reassignments
])
def test_auto_rebalance_while_a_partition_is_being_reassigned(version, controller, leaders):
    """KafkaController.checkAndTriggerAutoLeaderRebalance up to 3.3.2 keeps a candidate only while
    `controllerContext.partitionsBeingReassigned.isEmpty`; 3.4.0 dropped the condition (KAFKA-10149), so a
    reassigning partition whose preferred replica (its assignment's head) is alive and in the ISR is elected too.
    KRaft's ReplicationControlManager.maybeBalancePartitionLeaders has no such condition in any release."""
    assert _rebalance_during_a_move(version, controller) == leaders


def _leader_back_at_s(controller: str, events: list[dict], assignment: list[int], duration: str = "8m") -> int:
    """Seconds from the start until the preferred replica (``assignment[0]``) leads partition 0 again after an
    earlier leader change, with ``auto.leader.rebalance.enable`` on."""
    engine, writer, _ = started(small(
        duration=duration, tick="1s", kafka={"version": "3.7", "controller": controller, "auto_leader_rebalance": True},
        topics=[{"name": "t", "partitions": 1, "replication_factor": 3, "assignment": [assignment],
                 "produce_rate": "100KB/s", "message_size": "1KB", "initial_size": "1MB"}], events=events))
    run_until(engine, int(duration[:-1]) * 60)
    start = engine.scenario.start_ms
    led = [((r["ts_ms"] - start) // 1000, r["leader"]) for r in rows(writer, "leaders") if r["ts_ms"] > start]
    assert led[0][1] != assignment[0], led
    return next(t for t, b in led if b == assignment[0])


@pytest.mark.parametrize(("controller", "broker", "back_at_s"), [
    ("zookeeper", 2, 305), ("kraft", 2, 310), ("zookeeper", 1, 315), ("kraft", 1, 310)])
def test_auto_leader_rebalance_moves_leadership_back_on_the_check_interval(controller, broker, back_at_s):
    """``broker`` (the preferred leader) shuts down at 10 s and returns at 20 s; its partition stays led by
    another replica until the balance check. ZooKeeper's auto-leader-rebalance task runs 5 s after the
    controller takes over, then every 300 s (KafkaController.onControllerFailover → scheduleAutoLeaderRebalanceTask):
    305 s while broker 1 keeps the role; when broker 1 is the controller that shuts down, broker 2 takes over at
    10 s and its own task runs at 15 s and 315 s. KRaft schedules a balance 300 s after it sees the imbalance
    (QuorumController.maybeScheduleNextBalancePartitionLeaders), and a new active controller 300 s after it takes
    over with one (CompleteActivationEvent): 310 s either way."""
    assignment = [broker] + [b for b in (1, 2, 3) if b != broker]
    events = [{"at": "10s", "broker_down": {"broker": broker, "controlled": True}}, {"at": "20s", "broker_up": broker}]
    assert _leader_back_at_s(controller, events, assignment) == back_at_s


@pytest.mark.parametrize(("controller", "back_at_s"), [("zookeeper", 105), ("kraft", 400)])
def test_a_new_controller_runs_its_own_balance_checks(controller, back_at_s):
    """Broker 2, the preferred leader, shuts down at 10 s and returns at 20 s, while broker 1 holds the controller
    role; broker 1 crashes at 100 s, before its check at 305 s (ZooKeeper) or 310 s (KRaft), and broker 2 takes the
    role. The old controller's checks end with it (ZooKeeper's ``onControllerResignation`` shuts its scheduler
    down, KRaft's ``renounce`` cancels the deferred event); the new one checks 5 s after it takes over
    (ZooKeeper: 105 s, an earlier check than the old controller's), or 300 s after it takes over with partitions
    imbalanced (KRaft: 400 s, a later one)."""
    events = [{"at": "10s", "broker_down": {"broker": 2, "controlled": True}}, {"at": "20s", "broker_up": 2},
              {"at": "100s", "broker_down": 1}]
    assert _leader_back_at_s(controller, events, [2, 3, 1]) == back_at_s


def test_the_zookeeper_rebalance_needs_more_than_10_percent_imbalance():
    """checkAndTriggerAutoLeaderRebalance: per preferred broker, partitions led elsewhere / its partitions must
    exceed leader.imbalance.per.broker.percentage (10): 1 of 10 (10 %) stays, 2 of 10 (20 %) moves; KRaft has
    no threshold (ReplicationControlManager.maybeBalancePartitionLeaders)."""
    preferred = np.array([1] * 10)
    ready = np.ones(10, dtype=bool)
    one_off = np.array([2] + [1] * 9)
    two_off = np.array([2, 2] + [1] * 8)
    assert not election.imbalanced_partitions("zookeeper", preferred, one_off, ready).any()
    assert election.imbalanced_partitions("zookeeper", preferred, two_off, ready).sum() == 2
    assert election.imbalanced_partitions("kraft", preferred, one_off, ready).sum() == 1
    assert election.next_rebalance_check_ms("zookeeper", 0, 0) == 5_000
    assert election.next_rebalance_check_ms("zookeeper", 0, 5_000) == 305_000
    assert KafkaVersion.parse("0.10.2").default_unclean_leader_election


@pytest.mark.parametrize(("version", "controller", "line"), [
    ("1.0", "zookeeper", "WARN [OfflinePartitionLeaderSelector]: No broker in ISR is alive for [t,0]. Elect leader 3 "
                         "from live brokers 3. There's potential data loss. "
                         "(kafka.controller.OfflinePartitionLeaderSelector)"),
    ("2.8", "zookeeper", None), ("3.5", "kraft", None),
    ("3.6", "kraft", "INFO Setting new leader for topicId {id}, partition 0 to 3 using an unclean election "
                     "(org.apache.kafka.controller.PartitionChangeBuilder)")])
def test_the_unclean_election_log_line_per_release_and_controller(version, controller, line):
    """ZooKeeper ≤ 1.0 OfflinePartitionLeaderSelector.selectLeader warns; 1.1 – 3.x ZooKeeper
    (PartitionLeaderElectionAlgorithms) and KRaft before 3.6 only mark the meter; KRaft 3.6+
    PartitionChangeBuilder.electLeader logs INFO."""
    record = {"ts_ms": 0, "broker": 1, "kind": "unclean_leader_election", "topic": "t", "partition": 0,
              "leader": 3, "live": [3], "messages_lost": 1990, "controller": controller}
    lines = render_event(record, KafkaVersion.parse(version))
    if line is None:
        assert lines == []
        return
    assert len(lines) == 1 and lines[0][0] == "broker-1/controller.log"
    assert lines[0][1].endswith(line.format(id=topic_id("t")))


def test_a_zookeeper_cluster_on_3_7_logs_zookeeper_controller_lines():
    """The controller kind, not the release alone, decides the wording: a 3.7 ZooKeeper cluster's reassignment is
    KafkaController's `Successfully updated assignment`, a KRaft cluster's is the QuorumController's record."""
    version = KafkaVersion.parse("3.7")
    record = {"ts_ms": 0, "broker": 1, "kind": "reassignment_started", "topic": "t", "partition": 0,
              "replicas": [1, 2, 4], "adding": [4], "removing": [3]}
    zk = render_event({**record, "controller": "zookeeper"}, version)[0][1]
    kraft = render_event({**record, "controller": "kraft"}, version)[0][1]
    assert "[Controller id=1] Successfully updated assignment of partition t-0" in zk
    assert "[QuorumController id=1] Replayed partition assignment change" in kraft


@pytest.mark.parametrize(("version", "controller", "leaves_at_s"), [
    ("2.4", None, 20.0), ("3.7", "kraft", 15.0)])
def test_the_controllers_epoch_bump_restarts_the_kept_leaders_caught_up_clocks(version, controller, leaves_at_s):
    """Partition.makeLeader runs for every new leader epoch its broker receives, the leader staying (2.4.0
    ReplicaManager.makeLeaders for `partitionLeaderEpoch < requestLeaderEpoch`; 3.3.0+ `isNewLeaderEpoch`), and
    resets each follower (`resetLastCaughtUpTime` / `Replica.resetReplicaState`: lastCaughtUpTimeMs = now in the ISR).
    Follower 2 stops fetching at 0 s, broker 3 crashes at 1 s; lag 10 s, checks every 5 s. ZooKeeper (6 s session)
    removes 3 at 7 s with a new leader epoch: 2 counts as caught up at 7 s and leaves at the 20 s check. KRaft 3.7
    (9 s session) removes 3 at 10 s keeping the epoch (KAFKA-15021): 2 leaves at the 15 s check, lag after 0 s."""
    kafka = {"version": version, "replica_lag_time_max": "10s", **({"controller": controller} if controller else {})}
    engine, _, _ = started(small(kafka=kafka, events=[{"at": "0s", "stall_follower": {"broker": 2}},
                                                      {"at": "1s", "broker_down": 3}]))
    s, sc = engine.s, engine.scenario
    left = None
    for now in range(sc.start_ms + sc.tick_ms, sc.start_ms + 30_001, sc.tick_ms):
        engine.step(now)
        if left is None and not s.in_isr[0, 1]:
            left = (now - sc.start_ms) / 1000
    assert left == leaves_at_s
    assert s.leader_id(0) == 1 and int(s.leader_epoch[0]) == (1 if controller is None else 0)


@pytest.mark.parametrize(("version", "controller", "texts"), [
    ("0.11", None, ["[Controller 1]: Shutting down broker 1", "[Controller 2]: Shutting down broker 3"]),
    ("2.4", None, ["[Controller id=1] Shutting down broker 1", "[Controller id=2] Shutting down broker 3"]),
    ("3.7", "kraft", ["[QuorumController id=1] Unfenced broker 1 has requested and been granted a controlled shutdown.",
                      "[QuorumController id=2] Unfenced broker 3 has requested and been granted an immediate "
                      "shutdown."])])
def test_the_controller_logs_each_controlled_shutdown_it_takes(version, controller, texts):
    """KafkaController.doControlledShutdown logs the request before it moves the broker's leaderships
    (`[Controller N]: ` before 1.0); KRaft's BrokerHeartbeatManager.calculateNextBrokerState grants a broker that
    still leads partitions a controlled shutdown, and one that leads none an immediate one. Broker 1 leads the
    partition when it stops; broker 3, stopping later, leads nothing. The lines go to the active controller's log:
    broker 1's own first, as a controller keeps its role through its broker's controlled shutdown (KafkaServer.shutdown
    runs controlledShutdown before kafkaController.shutdown; KafkaRaftServer shuts its broker down before its
    controller), then broker 2's, the lowest live id once broker 1 stopped (the reader's side: tests/ingest/
    test_log_rules.py)."""
    kafka = {"version": version, **({"controller": controller} if controller else {})}
    engine, _, logs = started(small(kafka=kafka, events=[
        {"at": "10s", "broker_down": {"broker": 1, "controlled": True}},
        {"at": "20s", "broker_down": {"broker": 3, "controlled": True}}]))
    run_until(engine, 21)
    records = [r for r in logs if r["kind"] == "controlled_shutdown"]
    assert [(r["ts_ms"] - engine.scenario.start_ms, r["target_broker"]) for r in records] == [(10_000, 1), (20_000, 3)]
    assert messages([pair for r in records for pair in render_event(r, KafkaVersion.parse(version))]) == texts


@pytest.mark.parametrize("version", ["0.11", "2.4", "3.7"])
def test_the_next_controller_logs_the_failure_of_its_predecessors_broker(version):
    """A ZooKeeper controller whose broker stops in a controlled way keeps its session, and the ``/controller``
    znode, until the broker is down: KafkaServer.shutdown runs controlledShutdown, then kafkaController.shutdown
    resigns, and only then does the ZooKeeper client close. So the broker's failure (KafkaController.onBrokerFailure,
    ``Broker failure callback for 1``) is logged by broker 2, once it holds the role, at broker 1's down row, the
    instant the reader takes broker 1's leaderships off (docs/real-cluster.md). Broker 3, stopping later, is not the
    controller: broker 2 logs its failure as it stops."""
    engine, _, logs = started(small(kafka={"version": version}, events=[
        {"at": "10s", "broker_down": {"broker": 1, "controlled": True}},
        {"at": "20s", "broker_down": {"broker": 3, "controlled": True}}]))
    run_until(engine, 21)
    start = engine.scenario.start_ms
    failed = [(r["ts_ms"] - start, r["broker"], r["target_broker"]) for r in logs if r["kind"] == "broker_failed"]
    assert failed == [(10_000, 2, 1), (20_000, 2, 3)]
    shutdowns = [(r["ts_ms"] - start, r["broker"]) for r in logs if r["kind"] == "controlled_shutdown"]
    assert shutdowns == [(10_000, 1), (20_000, 2)]


@pytest.mark.parametrize(("version", "controller", "cancelled", "texts"), [
    ("2.4", None, False, ["[Controller id=1] Target replicas ArrayBuffer(2, 3, 4) have all caught up with the leader "
                          "for reassigning partition t-0",
                          "[Controller id=1] Successfully updated assignment of partition t-0 to ReplicaAssignment("
                          "replicas=2,3,4, addingReplicas=, removingReplicas=)"]),
    ("2.4", None, True, ["[Controller id=1] Successfully updated assignment of partition t-0 to ReplicaAssignment("
                         "replicas=2,3,4, addingReplicas=, removingReplicas=)"]),
    ("3.7", "kraft", False, ["[QuorumController id=1] AlterPartition request from node 2 for t-0 completed the ongoing "
                             "partition reassignment.",
                             "[QuorumController id=1] Replayed partition assignment change PartitionChangeRecord("
                             "partitionId=0, topicId={id}, isr=[2, 3, 4], leader=-2, replicas=[2, 3, 4], "
                             "removingReplicas=[], addingReplicas=[], leaderRecoveryState=-1) for topic t"]),
    ("3.7", "kraft", None, ["[QuorumController id=1] AlterPartition request from node 2 for t-0 completed the ongoing "
                            "partition reassignment and triggered a leadership change. Returning NEW_LEADER_ELECTED.",
                            "[QuorumController id=1] Replayed partition assignment change PartitionChangeRecord("
                            "partitionId=0, topicId={id}, isr=[2, 3, 4], leader=3, replicas=[2, 3, 4], "
                            "removingReplicas=[], addingReplicas=[], leaderRecoveryState=-1) for topic t"]),
    ("3.7", "kraft", True, ["[QuorumController id=1] Replayed partition assignment change PartitionChangeRecord("
                            "partitionId=0, topicId={id}, isr=[2, 3, 4], leader=3, replicas=[2, 3, 4], "
                            "removingReplicas=[], addingReplicas=[], leaderRecoveryState=-1) for topic t"])])
def test_the_end_of_a_reassignment_per_controller_completed_or_cancelled(version, controller, cancelled, texts):
    """KafkaController 2.4+: a completion logs `Target replicas ... have all caught up` (onPartitionReassignment from
    the ISR change handler), a cancel does not (the origin replicas are in sync: it completes at once); both write
    the assignment. KRaft: the leader's AlterPartition completes it (ReplicationControlManager.alterPartition), a
    cancel has none, and a completion that moves the leadership away from the sender answers it NEW_LEADER_ELECTED
    (AlterPartition v2+, 3.3+; `cancelled` None: such a completion); both replay the PartitionChangeRecord that
    empties the lists, with the ISR and the new leader where it changed (-2: none)."""
    record = {"ts_ms": 0, "broker": 1, "kind": "reassignment_completed", "topic": "t", "partition": 0,
              "replicas": [2, 3, 4], "cancelled": bool(cancelled), "isr": [2, 3, 4], "leader": 2,
              "new_leader": 2 if cancelled is False else 3, **({"controller": controller} if controller else {})}
    assert messages(render_event(record, KafkaVersion.parse(version))) == [t.format(id=topic_id("t")) for t in texts]


def test_a_cancel_and_a_completion_are_told_apart_in_the_simulators_records():
    """The simulator's end of a move says whether it was cancelled (the controller's lines differ, above), with the
    ISR and the leaders before and after."""
    move = {"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [2, 3, 4]}]}
    engine, _, logs = started(small(kafka={"version": "3.7", "controller": "kraft"},
                                    cluster={"brokers": 4, "network_in": "1GB/s", "network_out": "1GB/s"},
                                    events=[{"at": "1s", "reassign": move, "throttle": "10KB/s"},
                                            {"at": "2s", "cancel_reassignment": {}}, {"at": "3s", "reassign": move}]))
    run_until(engine, 10)
    ended = [r for r in logs if r["kind"] == "reassignment_completed"]
    assert [(r["replicas"], r["cancelled"], r["isr"], r["leader"], r["new_leader"]) for r in ended] == [
        ([1, 2, 3], True, [1, 2, 3], 1, 1), ([2, 3, 4], False, [2, 3, 4], 1, 2)]


@pytest.mark.parametrize("controller", ["zookeeper", "kraft"])
def test_the_controller_keeps_its_role_when_a_lower_id_broker_returns(controller):
    """ZooKeeper: the broker that wins ``/controller`` keeps it until its session ends (``KafkaController.elect``
    returns where the znode exists: a broker coming back does not take it); KRaft: the quorum leader stays until it
    fails. Broker 1 crashes at 1 s, broker 2 takes over and stays when 1 returns at 20 s (after its session, 18 s
    or 9 s, expired: ``registration_ms``); when 2 shuts down at 25 s the lowest live id, 1, takes it
    (``model.election.next_controller``)."""
    engine, writer, _ = started(small(duration="30s", kafka={"version": "3.7", "controller": controller},
                                      events=[{"at": "1s", "broker_down": 1}, {"at": "20s", "broker_up": 1},
                                              {"at": "25s", "broker_down": {"broker": 2, "controlled": True}}]))
    assert engine.controller.controller_id() == 1
    run_until(engine, 2)
    assert engine.controller.controller_id() == 2
    run_until(engine, 21)
    assert engine.controller.controller_id() == 2 and engine.s.up[0]
    run_until(engine, 26)
    assert engine.controller.controller_id() == 1


@pytest.mark.parametrize(("version", "controller", "line"), [
    ("2.4", "zookeeper", "Starting replica leader election (PREFERRED) for partitions t-0 triggered by AutoTriggered"),
    ("2.3", "zookeeper", "Starting preferred replica leader election for partitions t-0"),
    ("3.7", "kraft", None)])
def test_the_automatic_rebalance_writes_the_controllers_election_start(version, controller, line):
    """KafkaController.checkAndTriggerAutoLeaderRebalance → onReplicaElection(..., PREFERRED, AutoTriggered) (2.4.0;
    onPreferredReplicaElection up to 2.3.1, whose line names no trigger): the controller's line at the 305 s check that
    moves t-0 back to broker 2, before the election. KRaft's maybeBalancePartitionLeaders writes no such line."""
    engine, writer, logs = started(small(
        duration="6m", tick="1s", kafka={"version": version, "controller": controller, "auto_leader_rebalance": True},
        topics=[{"name": "t", "partitions": 1, "replication_factor": 3, "assignment": [[2, 1, 3]],
                 "produce_rate": "100KB/s", "message_size": "1KB", "initial_size": "1MB"}],
        events=[{"at": "10s", "broker_down": {"broker": 2, "controlled": True}}, {"at": "20s", "broker_up": 2}]))
    run_until(engine, 360)
    start = engine.scenario.start_ms
    started_at = [(e["ts_ms"] - start, e["broker"], e["partitions"], e["trigger"]) for e in logs
                  if e["kind"] == "election_started"]
    back = [r["ts_ms"] - start for r in rows(writer, "leaders") if r["ts_ms"] > start and r["leader"] == 2]
    at = 305_000 if controller == "zookeeper" else 310_000
    assert back == [at]
    assert started_at == [(at, 1, [("t", 0)], "AutoTriggered")]
    rendered = [text for e in logs if e["kind"] == "election_started"
                for _, text in render_event(e, KafkaVersion.parse(version))]
    assert [text.split("] ", 2)[2].rsplit(" (", 1)[0] for text in rendered] == ([line] if line else [])


def test_an_operators_election_writes_what_it_elects_for():
    """KafkaController.processReplicaLeaderElection (2.4.0): onReplicaElection(electablePartitions, PREFERRED,
    AdminClientTriggered), the partitions not led by their preferred replica: t-0 and t-1 (led by 2 since broker 1's
    shutdown), not t-2, whose preferred replica 2 leads it. The record keeps what the operator asked for, which a 2.1
    controller lists instead (tests/telemetry/test_logformat_boundaries.py)."""
    engine, writer, logs = started(small(
        duration="2m", tick="1s", kafka={"version": "2.4", "controller": "zookeeper"},
        topics=[{"name": "t", "partitions": 3, "replication_factor": 2, "assignment": [[1, 2], [1, 2], [2, 1]],
                 "produce_rate": "0B/s", "message_size": "1KB", "initial_size": "1MB"}],
        events=[{"at": "10s", "broker_down": {"broker": 1, "controlled": True}}, {"at": "20s", "broker_up": 1},
                {"at": "30s", "elect_leaders": {}}]))
    run_until(engine, 40)
    got = [(e["ts_ms"] - engine.scenario.start_ms, e["partitions"], e.get("requested"), e["election_type"],
            e["trigger"]) for e in logs if e["kind"] == "election_started"]
    everything = [("t", 0), ("t", 1), ("t", 2)]
    assert got == [(30_000, [("t", 0), ("t", 1)], everything, "PREFERRED", "AdminClientTriggered")]
    assert [engine.s.leader_id(p) for p in range(3)] == [1, 1, 2]
