"""What ``kafka-reassign-partitions --verify`` and ``--cancel`` decide about throttles, per release
(docs/semantics.md §5.1); ``model.quota`` has what ``--execute --throttle`` writes."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from replicaflow.model.version import KafkaVersion


def verify_clears_throttles(version: KafkaVersion, plan_done: bool, any_in_progress: bool) -> bool:
    """Whether ``--verify`` clears the throttles: up to 2.5 when every partition of the plan is done (its
    replicas equal the plan's, ``ReassignPartitionsCommand.removeThrottle``), from 2.6 when no
    reassignment at all is in progress (``verifyAssignment``: ``!partsOngoing``, which counts every
    ongoing reassignment of the cluster, the plan's or not)."""
    if version.verify_waits_for_every_reassignment:
        return not any_in_progress
    return plan_done


def throttle_cleared_brokers(version: KafkaVersion, live_brokers: Iterable[int],
                             plan: Mapping[object, Iterable[int]]) -> set[int]:
    """Brokers whose throttle rates the tool deletes: every registered broker up to 2.5
    (``zkClient.getAllBrokersInCluster``); from 2.6 those plus the plan's target replicas
    (``clearAllThrottles``: ``activeBrokers ++ targetParts.replicas``)."""
    brokers = {int(b) for b in live_brokers}
    if version.verify_waits_for_every_reassignment:
        brokers |= {int(b) for replicas in plan.values() for b in replicas}
    return brokers
