"""The controller's UncleanLeaderElectionsPerSec meter (docs/semantics.md §6, docs/metrics.md): which releases
and controller kinds have it, and what it counts in the simulator's scrape."""

from __future__ import annotations

import numpy as np

from replicaflow.model import election
from replicaflow.model.metrics import available
from replicaflow.model.version import KafkaVersion
from tests.sim.test_controller_releases import run_until, unclean_cluster
from tests.sim.test_eligible_leader_replicas import elr_story

METER = "UncleanLeaderElectionsPerSec"


def meter(engine) -> dict[int, float]:
    values = engine.scraper.broker_values(engine.partition.flags())[METER]
    return {int(b): float(v) for b, v in zip(engine.s.broker_ids, values, strict=True)}


def test_the_meter_exists_on_zookeeper_in_every_release_and_on_kraft_from_3_9():
    """ZooKeeper: KafkaController's ControllerStats ``UncleanLeaderElectionsPerSec`` (0.8.2 … 3.9); KRaft:
    ControllerMetadataMetrics registers the same name from 3.9 (KAFKA-12670), not in 3.3 – 3.8."""
    v = KafkaVersion.parse
    assert available(METER, v("0.10.2")) and available(METER, v("3.9"), election.ZOOKEEPER)
    assert not available(METER, v("3.8"), election.KRAFT)
    assert available(METER, v("3.9"), election.KRAFT) and available(METER, v("4.1"))


def test_election_was_clean_is_the_previous_isr_rule():
    """PartitionRegistration.electionWasClean: no leader or a previous ISR member is clean."""
    prev = np.array([[1, 2, -1], [1, 2, -1], [-1, -1, -1], [1, -1, -1]])
    assert election.election_was_clean([2, 3, 2, -1], prev).tolist() == [True, False, False, True]


def test_an_unclean_election_marks_the_active_controllers_meter():
    """0.10.2 (unclean election on by default): 3 is elected outside the ISR
    (PartitionStateMachine.electLeaderForPartition marks ControllerStats.uncleanLeaderElectionRate) on the
    active controller, 3 (the only live broker)."""
    engine, _, _ = unclean_cluster("0.10.2", None)
    run_until(engine, 40)
    assert meter(engine) == {1: 0.0, 2: 0.0, 3: 1.0}


def test_an_elr_election_from_an_empty_isr_is_counted_by_the_kraft_meter():
    """4.1: electing ELR member 2 from the empty ISR is a clean election for the controller, yet
    ControllerMetricsChanges.handlePartitionChange counts it (the leader is not in the previous, empty ISR),
    on the active controller 3: the only live broker once 1 crashed at 25 s, it keeps the role when 2 returns at
    40 s and 1 at 50 s (``model.election.next_controller``)."""
    engine, _, _ = elr_story("4.1")
    run_until(engine, 41)
    assert engine.controller.unclean_elections == 0
    assert meter(engine) == {1: 0.0, 2: 0.0, 3: 1.0}
    run_until(engine, 51)
    assert engine.controller.controller_id() == 3 and meter(engine) == {1: 0.0, 2: 0.0, 3: 1.0}
