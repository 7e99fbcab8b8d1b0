"""KafkaController (sim/controller.py) on hand-made states: elections, ISR removal, sessions, reassignments.

Kafka (ZooKeeper era): KafkaController.onBrokerFailure / onBrokerStartup, PartitionStateMachine's
OfflinePartitionLeaderElectionStrategy (first live ISR member in assignment order), the controlled
shutdown, and KIP-455 reassignments (KafkaController.onPartitionReassignment; docs/semantics.md §6).
"""

from __future__ import annotations

import numpy as np
import pytest

from replicaflow.model import predicates
from replicaflow.sim.scenario import ElectLeadersEvent, parse_scenario
from tests.sim.conftest import SCENARIOS, rows, small, started


def cluster(partitions: int = 1, brokers: int = 4, assignment=None, moves: dict | None = None, **over):
    """A started engine; ``moves`` ({partition: replicas}) is a reassign event kept for the test to apply
    (at the end of the scenario, so its slots exist: the grid is as wide as the widest reassignment)."""
    assignment = assignment or [[1, 2, 3]] * partitions
    events = [{"at": "1m", "reassign": {"version": 1, "partitions": [
        {"topic": "t", "partition": p, "replicas": r} for p, r in moves.items()]}}] if moves else []
    engine, writer, logs = started(small(
        cluster={"brokers": brokers, "network_in": "1GB/s", "network_out": "1GB/s"},
        topics=[{"name": "t", "partitions": partitions, "replication_factor": len(assignment[0]),
                 "assignment": assignment, "message_size": "1KB", "initial_size": "1MB"}], events=events, **over))
    return engine, engine.s, engine.controller, writer, logs


def test_election_takes_the_first_live_isr_member_in_assignment_order():
    engine, s, controller, writer, logs = cluster()
    now = engine.scenario.start_ms + 100
    s.in_isr[0] = [True, False, True]
    controller.elect(0, now, exclude=0)
    assert s.leader_id(0) == 3 and s.leader_epoch[0] == 1 and s.partition_epoch[0] == 1
    assert rows(writer, "leaders")[-1] == {"ts_ms": now, "topic": "t", "partition": 0, "leader": 3, "leader_epoch": 1,
                                           "start_offset": 1000, "replicas_end_offset": 1000}
    assert rows(writer, "isr")[-1]["isr"] == [1, 3] and rows(writer, "isr")[-1]["leader_epoch"] == 1
    start = logs[-1]
    assert (start["kind"], start["broker"], start["prev_leader"], start["prev_leader_epoch"]) == ("leader_start", 3, 1, 0)
    s.up[2] = False
    controller.elect(0, now + 100, exclude=0)
    assert s.lslot[0] == -1 and rows(writer, "leaders")[-1]["leader"] == -1  # no live ISR member: offline


@pytest.mark.parametrize(("listed", "leaders", "epochs"), [(None, [1, 2, 1], [2, 1, 2]),
                                                          ((("t", 2),), [2, 2, 1], [1, 1, 2])])
def test_preferred_election_moves_leadership_back_to_the_first_replica(listed, leaders, epochs):
    """``kafka-leader-election --election-type preferred`` over every partition, or the listed one only."""
    engine, s, controller, writer, _ = cluster(partitions=3)
    now = engine.scenario.start_ms + 100
    for p in range(3):
        controller.elect(p, now, exclude=0)
    s.in_isr[1, 0] = False  # partition 1's preferred replica is out of the ISR: it stays where it is
    controller.elect_leaders(now + 100, ElectLeadersEvent(at=0, kind="elect_leaders", partitions=listed), "<t>")
    assert [s.leader_id(p) for p in range(3)] == leaders
    assert s.leader_epoch.tolist() == epochs


def test_removing_a_broker_keeps_the_last_isr_member_and_reelects_where_it_led():
    engine, s, controller, writer, _ = cluster(partitions=3, assignment=[[1, 2, 3], [2, 1, 3], [1, 4, 2]])
    now = engine.scenario.start_ms + 100
    s.in_isr[2] = [True, False, False]  # partition 2: broker 1 is its last ISR member
    s.up[0] = False
    controller.remove_broker_from_isrs(0, now)
    assert s.in_isr.tolist() == [[False, True, True], [True, False, True], [True, False, False]]
    assert [s.leader_id(p) for p in range(3)] == [2, 2, -1]
    assert s.leader_epoch.tolist() == [1, 1, 1]  # a led partition re-elects, a followed one bumps the epoch
    assert [(r["partition"], r["isr"]) for r in rows(writer, "isr")[-3:]] == [(0, [2, 3]), (1, [2, 3]), (2, [1])]


def test_a_crashed_brokers_session_expires_after_the_timeout_unless_it_is_back():
    engine, s, controller, writer, _ = cluster()
    start = engine.scenario.start_ms
    clock = engine.clock
    s.up[1] = False
    controller.broker_failed(1, start + 1000)
    clock.run_due(start + 1000 + 17_900)
    assert s.in_isr[0].all()
    clock.run_due(start + 1000 + 18_000)  # session_timeout 18 s
    assert s.in_isr[0].tolist() == [True, False, True]
    assert rows(writer, "isr")[-1]["ts_ms"] == start + 19_000
    # a bounce inside the session: the controller handles the failure when the broker registers again
    s.up[2] = False
    controller.broker_failed(2, start + 30_000)
    controller.broker_registering(2, start + 35_000)
    assert s.in_isr[0].tolist() == [True, False, False] and controller.session_deadline[2] == -1
    s.up[2] = True
    n = len(rows(writer, "isr"))
    clock.run_due(start + 60_000)  # the stale session timer finds nothing to do
    assert len(rows(writer, "isr")) == n


def test_the_active_controller_is_kept_until_its_broker_goes():
    """``model.election.next_controller`` at each broker state change: the lowest live id takes the role only
    from a controller that is gone; none while no broker is up."""
    engine, s, controller, _, _ = cluster()
    assert controller.controller_id() == 1
    s.state[0] = "down"
    controller.broker_state_changed(0)
    assert controller.controller_id() == 2
    s.state[0] = "up"
    controller.broker_state_changed(0)
    assert controller.controller_id() == 2
    s.state[:] = ["down"] * 4
    controller.broker_state_changed(0)
    assert controller.active_controller() == -1 and controller.controller_id() == -1


@pytest.mark.parametrize(("controller_mode", "epoch"), [("zookeeper", 1), ("kraft", 0)])
def test_reassignment_lays_out_target_then_origin(controller_mode, epoch):
    """KIP-455: replicas = target + the rest of the origin (predicates.reassignment_state), adding and removing.

    The ZooKeeper controller bumps the leader epoch at the start (KafkaController.onPartitionReassignment →
    updateLeaderEpochAndSendRequest); KRaft does not, the replicas only grow
    (PartitionChangeBuilder.triggerLeaderEpochBumpIfNeeded)."""
    engine, s, controller, writer, logs = cluster(brokers=6, partitions=8, moves={0: [4, 2, 5]},
                                                  kafka={"version": "3.7", "controller": controller_mode})
    now = engine.scenario.start_ms + 1000
    before = controller.start_reassignment(now, engine.scenario.events[0], "<t>")
    assert before == {("t", 0): ([1, 2, 3], [], [])}
    assert s.replica_ids(0) == [4, 2, 5, 1, 3]
    replicas, adding, removing = predicates.reassignment_state([1, 2, 3], [4, 2, 5])
    assert s.replica_ids(0, s.adding[0]) == adding == [4, 5]
    assert s.replica_ids(0, s.removing[0]) == removing == [1, 3]
    assert s.leader_id(0) == 1 and s.leader_epoch[0] == epoch and s.partition_epoch[0] == epoch
    assert s.in_isr[0].tolist() == [False, True, False, True, True] and s.v_leo[0, 0] == -1
    assert rows(writer, "assignments")[-1] == {"ts_ms": now, "topic": "t", "partition": 0,
                                               "replicas": [4, 2, 5, 1, 3], "adding": [4, 5], "removing": [1, 3],
                                               "log_dirs": ["/tmp/kafka-logs"] * 5}
    assert logs[-1]["kind"] == "reassignment_started" and logs[-1]["broker"] == 1


def test_completion_checks_every_reassignment_on_the_grid_and_finishes_in_partition_order():
    """Only partitions whose every target replica is in the ISR complete; the rest keep reassigning."""
    engine, s, controller, writer, logs = cluster(brokers=6, partitions=8, moves={p: [4, 5, 6] for p in range(8)})
    now = engine.scenario.start_ms + 1000
    controller.start_reassignment(now, engine.scenario.events[0], "<t>")
    for p in (6, 1, 3):  # the new replicas caught up on these partitions
        s.in_isr[p] = s.rbi[p] >= 0
    s.in_isr[5, :2] = True  # partition 5: two of the three targets
    controller.complete_reassignments(now + 100)
    assert sorted(s.reassignments) == [0, 2, 4, 5, 7]
    done = rows(writer, "assignments")[-3:]
    assert [(r["partition"], r["replicas"], r["adding"]) for r in done] == [
        (1, [4, 5, 6], []), (3, [4, 5, 6], []), (6, [4, 5, 6], [])]
    assert [s.leader_id(p) for p in (1, 3, 6)] == [4, 4, 4]  # the leader left: elected from the target
    assert np.all(s.rbi[[1, 3, 6], 3:] == -1)
    assert [e["partition"] for e in logs if e["kind"] == "reassignment_completed"] == [1, 3, 6]
    controller.complete_reassignments(now + 200)  # nothing more is complete
    assert len(s.reassignments) == 5


def test_cancellation_shrinks_back_to_the_origin():
    engine, s, controller, writer, _ = cluster(brokers=6, partitions=8, moves={2: [1, 2, 6]})
    now = engine.scenario.start_ms + 1000
    controller.start_reassignment(now, engine.scenario.events[0], "<t>")
    s.in_isr[2] = s.rbi[2] >= 0  # 6 is in sync, but the operator cancels first
    cancel = parse_scenario(small(events=[{"at": "1s", "cancel_reassignment": {}}]), SCENARIOS, "<t>").events[0]
    controller.cancel_reassignment(now + 100, cancel, "<t>")
    assert not s.reassignments and s.replica_ids(2) == [1, 2, 3]
    assert not s.adding[2].any() and not s.removing[2].any()
    # the leader stayed: ZooKeeper bumped at the start, then once for the new assignment and once for
    # removing the in-sync replica 6 from the ISR (onPartitionReassignment B3, B4)
    assert s.leader_id(2) == 1 and s.leader_epoch[2] == 3
    assert rows(writer, "assignments")[-1]["replicas"] == [1, 2, 3]
