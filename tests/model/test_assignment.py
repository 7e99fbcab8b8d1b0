"""Kafka's default replica placement and topic-name rule (model/assignment.py, model/topic.py)."""

from __future__ import annotations

import pytest

from replicaflow.model.assignment import assign_replicas
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
