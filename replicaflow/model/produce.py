"""What producers feel (docs/semantics.md §1.5): acks, NotEnoughReplicas rejections, produce requests.

Pure functions over NumPy arrays (scalars work too), used by the simulator's produce path and by the
tests; the pipeline recomputes the meters from the rejected requests the telemetry records.
"""

from __future__ import annotations

import numpy as np

from replicaflow.model import predicates
from replicaflow.model.version import KafkaVersion

ACKS_ALL, ACKS_LEADER = "all", "1"
# The producer's batch.size default (ProducerConfig, every release): one produce request carries
# one batch of a partition, so batch.size // message size messages (at least one) make a request.
DEFAULT_BATCH_SIZE_BYTES = 16_384
NOT_ENOUGH_REPLICAS = "NOT_ENOUGH_REPLICAS"


def default_acks(version: KafkaVersion) -> str:
    """The Java producer's ``acks`` default: ``all`` from 3.0 (KIP-679), ``1`` before."""
    return ACKS_ALL if version.at_least("3.0") else ACKS_LEADER


def messages_per_request(batch_size_bytes, message_size_bytes):
    """Messages in one produce request of a partition: a full ``batch.size`` batch, at least one message."""
    return np.maximum(np.asarray(batch_size_bytes) // np.asarray(message_size_bytes), 1)


def requests_sent(sent_before, produced, per_request):
    """Produce requests completed while the partition's cumulative message count goes from
    ``sent_before`` to ``sent_before + produced`` (a request leaves every ``per_request`` messages)."""
    return (np.asarray(sent_before) + produced) // per_request - np.asarray(sent_before) // per_request


def rejects_acks_all(acks_all, n_isr, min_isr, n_replicas, capped: bool):
    """Partition.appendRecordsToLeader: an ``acks=all`` append fails with NotEnoughReplicasException
    while |ISR| (the committed ISR) < the effective min ISR (§2: capped at |replicas| from 3.7)."""
    return acks_all & predicates.under_min_isr(n_isr, min_isr, n_replicas, capped)
