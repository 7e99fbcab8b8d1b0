"""Kafka's config names that replicaflow reads or writes, and the entity of the cluster-wide default.

The one home of these strings: the scenario loader, the simulator's dynamic configs, the
reassignment tool model and the pipeline's config replay all import them from here.
"""

from __future__ import annotations

# `kafka-configs --entity-type brokers --entity-default` stores broker defaults under this entity name.
DEFAULT_BROKER = "<default>"

MIN_ISR = "min.insync.replicas"
MAX_MIN_ISR = 2**15 - 1  # beyond any replica count; the simulator and the config replay hold it in a small int
# Follower fetch sizes at Kafka's defaults (docs/semantics.md §1.7, §4): per partition and per response.
FETCH_MAX_BYTES = 1 << 20            # replica.fetch.max.bytes
FETCH_RESPONSE_MAX_BYTES = 10 << 20  # replica.fetch.response.max.bytes
REPLICA_LAG_TIME_MAX_MS = "replica.lag.time.max.ms"
UNCLEAN_LEADER_ELECTION_ENABLE = "unclean.leader.election.enable"  # topic or broker config (§6)

# KIP-73 replication throttles (docs/semantics.md §5.1): broker rates and topic replica lists.
LEADER_REPLICATION_RATE = "leader.replication.throttled.rate"
FOLLOWER_REPLICATION_RATE = "follower.replication.throttled.rate"
LEADER_THROTTLED_REPLICAS = "leader.replication.throttled.replicas"
FOLLOWER_THROTTLED_REPLICAS = "follower.replication.throttled.replicas"
# KIP-542 reassignment throttles (§5.2, proposed, never shipped by Kafka).
LEADER_REASSIGNMENT_RATE = "leader.reassignment.throttled.rate"
FOLLOWER_REASSIGNMENT_RATE = "follower.reassignment.throttled.rate"

REPLICATION_RATES = (LEADER_REPLICATION_RATE, FOLLOWER_REPLICATION_RATE)
REASSIGNMENT_RATES = (LEADER_REASSIGNMENT_RATE, FOLLOWER_REASSIGNMENT_RATE)
# The four quota rates in the order of the simulator's quota rows (leader/follower × replication/reassignment).
QUOTA_RATES = (*REPLICATION_RATES, *REASSIGNMENT_RATES)
THROTTLED_REPLICAS_LISTS = (LEADER_THROTTLED_REPLICAS, FOLLOWER_THROTTLED_REPLICAS)
