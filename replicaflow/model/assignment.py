"""Kafka's default replica placement (``AdminUtils.assignReplicasToBrokers``).

The simulator places the replicas of topics that give no explicit ``assignment`` the way
``kafka-topics --create`` would, and ``replicaflow plan --generate`` lays partitions out again the way
``kafka-reassign-partitions --generate`` does; both call this one rule. Kafka draws the start index and
the replica shift at random when no fixed start index is given (``rand.nextInt(brokers)`` each);
:func:`random_start` draws them from a seed so a plan can be reproduced.
"""

from __future__ import annotations

import random
from collections.abc import Mapping


def _replica_index(first: int, shift: int, j: int, n: int) -> int:
    """Kafka's ``AdminUtils.replicaIndex``: the j-th follower candidate after the first replica."""
    return (first + 1 + (shift + j) % (n - 1)) % n


def rack_alternated_brokers(racks: Mapping[int, str]) -> list[int]:
    """``AdminUtils.getRackAlternatedBrokerList``: one broker of each rack in turn (racks sorted by name,
    brokers by id within a rack), so round-robin over the list alternates racks."""
    by_rack: dict[str, list[int]] = {}
    for broker, rack in racks.items():
        by_rack.setdefault(rack, []).append(broker)
    queues = [sorted(by_rack[r]) for r in sorted(by_rack)]
    out: list[int] = []
    for i in range(max(len(q) for q in queues)):
        out.extend(q[i] for q in queues if i < len(q))
    return out


def random_start(n_brokers: int, rng: random.Random) -> tuple[int, int]:
    """Kafka's two random draws when no start index is fixed: the start index, then the replica shift."""
    return rng.randrange(n_brokers), rng.randrange(n_brokers)


def assign_replicas(broker_ids: list[int], n_partitions: int, rf: int, start_index: int = 0,
                    replica_shift: int | None = None,
                    racks: Mapping[int, str] | None = None) -> list[list[int]]:
    """Kafka's ``assignReplicasToBrokers`` with ``startPartitionId`` 0.

    Without ``racks`` (``assignReplicasToBrokersRackUnaware``) brokers are taken in id order; the first
    replica walks them round-robin from ``start_index`` and the followers are shifted by
    ``replica_shift`` (``nextReplicaShift``, by default ``start_index`` as with a fixed start index),
    which grows by one every full round of brokers. With ``racks`` (``assignReplicasToBrokersRackAware``,
    every broker must have one) the brokers are first interleaved by rack
    (:func:`rack_alternated_brokers`), the shift is scaled by the number of racks, and a follower
    candidate is skipped while its rack already holds a replica and some rack holds none, or while its
    broker already holds one and some broker holds none.
    """
    n = len(broker_ids)
    if rf > n:
        raise ValueError(f"replication factor {rf} is larger than the {n} available brokers")
    shift = start_index if replica_shift is None else replica_shift
    if racks is None:
        return _rack_unaware(sorted(broker_ids), n_partitions, rf, start_index, shift)
    missing = [b for b in broker_ids if b not in racks]
    if missing:
        raise ValueError(f"broker {missing[0]} has no rack: Kafka needs a rack for every broker")
    return _rack_aware({b: racks[b] for b in broker_ids}, n_partitions, rf, start_index, shift)


def _rack_unaware(brokers: list[int], n_partitions: int, rf: int, start_index: int, shift: int) -> list[list[int]]:
    n = len(brokers)
    out = []
    for p in range(n_partitions):
        if p > 0 and p % n == 0:
            shift += 1
        first = (p + start_index) % n
        out.append([brokers[first]] + [brokers[_replica_index(first, shift, j, n)] for j in range(rf - 1)])
    return out


def _rack_aware(racks: Mapping[int, str], n_partitions: int, rf: int, start_index: int,
                shift: int) -> list[list[int]]:
    brokers = rack_alternated_brokers(racks)
    n, n_racks = len(brokers), len(set(racks.values()))
    out = []
    for p in range(n_partitions):
        if p > 0 and p % n == 0:
            shift += 1
        first = (p + start_index) % n
        replicas = [brokers[first]]
        racks_used = {racks[brokers[first]]}
        k = 0
        while len(replicas) < rf:
            broker = brokers[_replica_index(first, shift * n_racks, k, n)]
            k += 1
            rack_ok = racks[broker] not in racks_used or len(racks_used) == n_racks
            broker_ok = broker not in replicas or len(replicas) == n
            if rack_ok and broker_ok:
                replicas.append(broker)
                racks_used.add(racks[broker])
        out.append(replicas)
    return out
