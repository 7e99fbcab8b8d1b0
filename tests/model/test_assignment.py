"""Kafka's default replica placement and topic-name rule (model/assignment.py, model/topic.py)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from replicaflow.model.assignment import assign_replicas, rack_alternated_brokers, random_start
from replicaflow.model.topic import topic_name_problem


def test_assign_replicas_matches_kafka():
    """kafka.admin.AdminUtils.assignReplicasToBrokersRackUnaware, as AdminTest.testReplicaAssignment asserts:
    brokers 0..4, 10 partitions, RF 3, fixed start index 0."""
    assert assign_replicas([0, 1, 2, 3, 4], 10, 3) == [
        [0, 1, 2], [1, 2, 3], [2, 3, 4], [3, 4, 0], [4, 0, 1], [0, 2, 3], [1, 3, 4], [2, 4, 0], [3, 0, 1], [4, 1, 2]]
    assert assign_replicas([3, 1, 2], 4, 2, start_index=1) == [[2, 1], [3, 2], [1, 3], [2, 3]]
    assert assign_replicas([7], 2, 1) == [[7], [7]]
    with pytest.raises(ValueError):
        assign_replicas([1, 2], 1, 3)


@pytest.mark.parametrize("name", ["orders", "a.b_c-D9", "x" * 249, "__consumer_offsets"])
def test_legal_topic_names(name):
    """org.apache.kafka.common.internals.Topic.validate accepts [a-zA-Z0-9._-]{1,249}."""
    assert topic_name_problem(name) is None


@pytest.mark.parametrize(("name", "why"), [
    ("", "non-empty"), (".", "other than '.' and '..'"), ("..", "other than"), ("x" * 250, "at most 249"),
    ("a b", "legal characters"), ("a\nb", "legal characters"), ("[/bold]", "legal characters"),
    ("é", "legal characters"), ("a/b", "legal characters"),
])
def test_illegal_topic_names(name, why):
    """Topic.validate: empty, '.', '..', over 249 characters or outside [a-zA-Z0-9._-] is refused."""
    assert why in topic_name_problem(name)


SIX_RACKED = {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1"}


def test_rack_alternated_broker_list_and_fixed_rack_aware_assignment():
    """AdminRackAwareTest.testGetRackAlternatedBrokerListAndAssignReplicasToBrokers (AdminUtils,
    getRackAlternatedBrokerList and assignReplicasToBrokersRackAware): racks interleaved in name order,
    and Kafka's exact assignment for 7 partitions, RF 3, fixed start index 0."""
    racks = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
    assert rack_alternated_brokers(racks) == [0, 3, 1, 5, 4, 2]
    assert rack_alternated_brokers({b: r for b, r in racks.items() if b != 5}) == [0, 3, 1, 4, 2]
    assert assign_replicas(list(racks), 7, 3, racks=racks) == [
        [0, 3, 1], [3, 1, 5], [1, 5, 4], [5, 4, 2], [4, 2, 0], [2, 0, 3], [0, 4, 2]]


def _distribution(assignment, racks):
    leaders = Counter(r[0] for r in assignment)
    replicas = Counter(b for r in assignment for b in r)
    return leaders, replicas


@pytest.mark.parametrize(("racks", "n_partitions", "rf", "even_leaders", "even_replicas"), [
    (SIX_RACKED, 6, 3, True, True),           # testAssignmentWithRackAware(WithRandomStartIndex)
    (SIX_RACKED, 13, 3, False, False),        # testAssignmentWithRackAwareWithUnevenReplicas
    ({0: "rack1", 1: "rack1", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1"}, 12, 3, True, False),  # UnevenRacks
    (SIX_RACKED, 12, 2, True, True),          # testAssignmentWith2ReplicasRackAware
    (SIX_RACKED, 6, 2, True, True),           # testAssignmentWith2ReplicasRackAwareWith6Partitions
    ({0: "rack1", 1: "rack2", 2: "rack3"}, 6, 3, True, True),  # one broker per rack
])
@pytest.mark.parametrize("seed", range(8))
def test_rack_aware_distribution_like_kafka(racks, n_partitions, rf, even_leaders, even_replicas, seed):
    """RackAwareTest.checkReplicaDistribution on AdminRackAwareTest's cases, at random start indexes and
    shifts as Kafka draws them: no broker twice in a partition, every partition on RF distinct racks,
    and (where Kafka checks it) leaders and replicas spread evenly over the brokers."""
    start, shift = random_start(len(racks), random.Random(seed))
    assignment = assign_replicas(list(racks), n_partitions, rf, start, shift, racks=racks)
    assert len(assignment) == n_partitions
    for replicas in assignment:
        assert len(set(replicas)) == rf
        assert len({racks[b] for b in replicas}) == rf
    leaders, replicas = _distribution(assignment, racks)
    if even_leaders:
        assert sorted(leaders.values()) == [n_partitions // len(racks)] * len(racks)
    if even_replicas:
        assert sorted(replicas.values()) == [n_partitions * rf // len(racks)] * len(racks)


def test_rack_aware_needs_every_rack_and_fewer_racks_than_rf_still_places():
    """assignReplicasToBrokers refuses racks on only some brokers (AdminOperationException); with fewer
    racks than RF the rack-aware rule still gives distinct brokers, every rack used."""
    with pytest.raises(ValueError, match="broker 2 has no rack"):
        assign_replicas([0, 1, 2], 3, 2, racks={0: "a", 1: "b"})
    racks = {0: "a", 1: "a", 2: "b", 3: "b"}
    for replicas in assign_replicas(list(racks), 8, 3, 1, 3, racks=racks):
        assert len(set(replicas)) == 3 and {racks[b] for b in replicas} == {"a", "b"}
