"""Partition health predicates (docs/semantics.md §2), written once for NumPy arrays and Spark Columns.

The arguments are counts (|replicas|, |adding|, |ISR|, min.insync.replicas); the functions use only
comparison, arithmetic and boolean operators, which NumPy arrays and ``pyspark.sql.Column`` both
overload. The one exception, ``min``, goes through ``model.columns.minimum``, which picks ``F.least``
for Columns. Counting "only on the current leader" is the caller's grouping (by leader), not a predicate.
"""

from __future__ import annotations

from collections.abc import Sequence

from replicaflow.model.columns import minimum as _minimum
from replicaflow.model.version import KafkaVersion


def urp_legacy(n_replicas, n_isr):
    """≤ 2.4: under-replicated when |ISR| < |replicas| (adding replicas included)."""
    return n_isr < n_replicas


def urp_kip352(n_replicas, n_adding, n_isr):
    """KIP-352 (2.5+): (|replicas| − |adding|) − |ISR| > 0; adding replicas in the ISR still count."""
    return (n_replicas - n_adding - n_isr) > 0


def under_replicated(version: KafkaVersion, n_replicas, n_adding, n_isr):
    """URP in the semantics of ``version``."""
    if version.urp_semantics == "kip352":
        return urp_kip352(n_replicas, n_adding, n_isr)
    return urp_legacy(n_replicas, n_isr)


def effective_min_isr(min_isr, n_replicas, capped: bool):
    """min.insync.replicas, capped at |replicas| from 3.7 (``capped``)."""
    return _minimum(min_isr, n_replicas) if capped else min_isr


def under_min_isr(n_isr, min_isr, n_replicas, capped: bool):
    """KIP-164: |ISR| < effective min ISR (acks=all producers are rejected)."""
    return n_isr < effective_min_isr(min_isr, n_replicas, capped)


def at_min_isr(n_isr, min_isr, n_replicas, capped: bool):
    """KIP-427: |ISR| == effective min ISR (one more loss stops acks=all writes)."""
    return n_isr == effective_min_isr(min_isr, n_replicas, capped)


def reassigning(n_adding, n_removing):
    """KIP-352 ReassigningPartitions: adding or removing replicas present."""
    return (n_adding > 0) | (n_removing > 0)


def reassignment_state(origin: Sequence[int], target: Sequence[int]) -> tuple[list[int], list[int], list[int]]:
    """KIP-455 assignment during a move: replicas = target then the rest of origin; adding/removing.

    For Spark, the same result is ``array_union(target, origin)``, ``array_except(replicas, origin)``
    and ``array_except(replicas, target)`` (see :func:`reassignment_state_columns`).
    """
    replicas = list(dict.fromkeys([*target, *origin]))
    origin_set, target_set = set(origin), set(target)
    adding = [r for r in replicas if r not in origin_set]
    removing = [r for r in replicas if r not in target_set]
    return replicas, adding, removing


def reassignment_state_columns(origin, target):
    """:func:`reassignment_state` on Spark array Columns (order-preserving, duplicate-free)."""
    from pyspark.sql import functions as F

    replicas = F.array_union(target, origin)
    return replicas, F.array_except(replicas, origin), F.array_except(replicas, target)
