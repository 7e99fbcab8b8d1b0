"""Kafka's default replica placement for a new topic (``AdminUtils.assignReplicasToBrokers``).

The simulator places the replicas of topics that give no explicit ``assignment`` the way
``kafka-topics --create`` would, so partition leaders and followers spread like a real cluster's.
"""

from __future__ import annotations


def assign_replicas(broker_ids: list[int], n_partitions: int, rf: int, start_index: int = 0) -> list[list[int]]:
    """Kafka's rack-unaware ``assignReplicasToBrokersRackUnaware`` with fixedStartIndex = startPartitionId shift.

    Brokers are taken in id order; the first replica walks the brokers round-robin from
    ``start_index`` and the followers are shifted by ``nextReplicaShift``, which grows by one every
    full round of brokers (Kafka's ``replicaIndex``).
    """
    brokers = sorted(broker_ids)
    n = len(brokers)
    if rf > n:
        raise ValueError(f"replication factor {rf} is larger than the {n} available brokers")
    start = start_index % n
    shift = start_index
    out = []
    for p in range(n_partitions):
        if p > 0 and p % n == 0:
            shift += 1
        first = (p + start) % n
        replicas = [brokers[first]]
        for j in range(rf - 1):
            replicas.append(brokers[(first + 1 + (shift + j) % (n - 1)) % n])
        out.append(replicas)
    return out
