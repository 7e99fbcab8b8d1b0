"""What ``kafka-topics --describe`` and ``kafka-log-dirs --describe`` would have printed at a moment of
the run, read off the cluster state (formats: telemetry/toolformat.py).

Topic ids are derived from the scenario's seed and the topic name, so a rerun prints the same ids
(Kafka draws them at random). Sizes are the replica's log end offset times the topic's message size.
"""

from __future__ import annotations

import base64
import hashlib

import numpy as np

from replicaflow.sim.configs import DynamicConfigs
from replicaflow.sim.state import ClusterState
from replicaflow.telemetry.toolformat import (
    PartitionRow,
    ReplicaSize,
    TopicRow,
    describe_text,
    log_dirs_text,
    replication_factor,
)


def topic_id(seed: int, topic: str) -> str:
    """A stable 22-character id in the form of Kafka's ``Uuid.toString`` (URL-safe base64, no padding)."""
    digest = hashlib.sha256(f"{seed}/{topic}".encode()).digest()[:16]
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def describe_now(s: ClusterState, configs: DynamicConfigs, seed: int) -> str:
    """The describe output of every topic at this moment, in the formats of ``configs.version``."""
    partitions = []
    for p in range(s.n_partitions):
        topic, number = s.tp(p)
        leader = s.leader_id(p)
        partitions.append(PartitionRow(
            topic=topic, partition=number, leader=None if leader < 0 else leader,
            replicas=tuple(s.replica_ids(p)), isr=tuple(s.replica_ids(p, s.in_isr[p])),
            adding=tuple(s.replica_ids(p, s.adding[p])), removing=tuple(s.replica_ids(p, s.removing[p])),
            elr=tuple(s.replica_ids(p, s.elr[p])), last_known_elr=tuple(s.replica_ids(p, s.last_known_elr[p]))))
    by_topic: dict[str, list[PartitionRow]] = {}
    for row in partitions:
        by_topic.setdefault(row.topic, []).append(row)
    topics = []
    for name in s.topics:
        rows = by_topic[name]
        first = min(rows, key=lambda r: r.partition)
        own = tuple(sorted((k, v) for (entity, k), v in configs.topic.items() if entity == name))
        topics.append(TopicRow(topic=name, topic_id=topic_id(seed, name), partition_count=len(rows),
                               replication_factor=replication_factor(configs.version, first), configs=own))
    return describe_text(configs.version, topics, partitions)


def log_dirs_now(s: ClusterState) -> str:
    """The log-dirs output of the live brokers at this moment."""
    rows, slots = np.nonzero(s.rbi >= 0)
    sizes = s.log_leo[rows, slots] * s.msg_size[rows]
    replicas = [ReplicaSize(broker=int(s.broker_ids[s.rbi[p, k]]), topic=s.topics[s.topic_idx[p]],
                            partition=int(s.pnum[p]), size_bytes=int(size),
                            log_dir=s.log_dirs[s.rbi[p, k]][s.log_dir[p, k]])
                for p, k, size in zip(rows, slots, sizes, strict=True)]
    live = [int(b) for b, up in zip(s.broker_ids, s.up, strict=True) if up]
    offline = frozenset((int(s.broker_ids[b]), s.log_dirs[b][d]) for b, d in zip(*np.nonzero(s.dir_offline), strict=True))
    return log_dirs_text(live, replicas, offline, {int(b): d for b, d in zip(s.broker_ids, s.log_dirs, strict=True)})
