"""Kafka's tool outputs as each release prints them: what an operator would have collected.

``simulate --logs`` writes, beside the broker logs, the ``kafka-topics --describe`` output at the
start and at the end of the run and a ``kafka-log-dirs --describe`` at the end, so that an analysis
from logs alone has the same inputs it would have on a real cluster (docs/kafka-tools.md). The forms
follow ``TopicCommand`` and ``LogDirsCommand`` at the release tags:

- up to 2.1 the operator's tool read ZooKeeper: header ``Topic:t\\tPartitionCount:N…`` without
  spaces, ``Leader: -1`` for a partition without a leader (the znode's leader field);
- 2.2 and 2.3 (the admin-client path) print ``Leader: none``, the header still without spaces;
- 2.4+ put a space after every colon; 2.6+ add ``Adding Replicas:`` / ``Removing Replicas:`` while a
  partition is reassigned; 2.8+ add ``TopicId:``; 3.8+ add ``Elr:`` / ``LastKnownElr:``;
- ``kafka-log-dirs`` exists from 1.0 (KIP-113). Its ``offsetLag`` is the replica's own high
  watermark minus its log end offset, floored at 0 (``ReplicaManager.getLogEndOffsetLag``): a
  follower's own HW never passes its LEO, so it is 0 for every current replica, as on a real cluster.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from replicaflow.model.version import KafkaVersion

LOG_DIR = "/tmp/kafka-logs"  # Kafka's default log.dirs


@dataclass(frozen=True)
class TopicRow:
    topic: str
    topic_id: str
    partition_count: int
    replication_factor: int
    configs: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class PartitionRow:
    topic: str
    partition: int
    leader: int | None
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    adding: tuple[int, ...]
    removing: tuple[int, ...]
    elr: tuple[int, ...] = ()
    last_known_elr: tuple[int, ...] = ()


@dataclass(frozen=True)
class ReplicaSize:
    broker: int
    topic: str
    partition: int
    size_bytes: int
    log_dir: str = LOG_DIR


def replication_factor(version: KafkaVersion, p: PartitionRow) -> int:
    """The ReplicationFactor kafka-topics prints from a topic's first partition (TopicCommand.getReplicationFactor):
    its replicas; from 2.5, while a reassignment of it is in progress, less the replicas being added (2.5 tells one
    in progress by a replica being removed still there, 2.6+ by one being added or removed)."""
    moving = set(p.removing) | (set(p.adding) if version.at_least("2.6") else set())
    if version.at_least("2.5") and moving & set(p.replicas):
        return len(p.replicas) - len(p.adding)
    return len(p.replicas)


def has_log_dirs_tool(version: KafkaVersion) -> bool:
    return version.at_least("1.0")


def describe_text(version: KafkaVersion, topics: list[TopicRow], partitions: list[PartitionRow]) -> str:
    """The whole ``kafka-topics --describe`` output: topics by name, each header then its partitions."""
    spaced = version.at_least("2.4")
    sep = ": " if spaced else ":"
    by_topic: dict[str, list[PartitionRow]] = {}
    for p in partitions:
        by_topic.setdefault(p.topic, []).append(p)
    lines = []
    for t in sorted(topics, key=lambda t: t.topic):
        head = [f"Topic{sep}{t.topic}"]
        if version.at_least("2.8"):
            head.append(f"TopicId: {t.topic_id}")
        configs = ",".join(f"{k}={v}" for k, v in t.configs)
        head += [f"PartitionCount{sep}{t.partition_count}", f"ReplicationFactor{sep}{t.replication_factor}",
                 f"Configs{sep}{configs}"]
        lines.append("\t".join(head))
        for p in sorted(by_topic.get(t.topic, []), key=lambda p: p.partition):
            lines.append(_partition_line(version, p))
    return "".join(line + "\n" for line in lines)


def _partition_line(version: KafkaVersion, p: PartitionRow) -> str:
    none = "none" if version.at_least("2.2") else "-1"
    cells = ["", f"Topic: {p.topic}", f"Partition: {p.partition}",
             f"Leader: {none if p.leader is None else p.leader}",
             f"Replicas: {_ids(p.replicas)}", f"Isr: {_ids(p.isr)}"]
    if version.at_least("2.6") and (p.adding or p.removing):
        cells += [f"Adding Replicas: {_ids(p.adding)}", f"Removing Replicas: {_ids(p.removing)}"]
    if version.at_least("3.8"):
        cells += [f"Elr: {_ids(p.elr)}", f"LastKnownElr: {_ids(p.last_known_elr)}"]
    return "\t".join(cells)


def log_dirs_text(live_brokers: list[int], replicas: list[ReplicaSize], offline: frozenset[tuple[int, str]] = frozenset(),
                  log_dirs: dict[int, tuple[str, ...]] | None = None) -> str:
    """The whole ``kafka-log-dirs --describe`` output for the live brokers (a down broker does not answer),
    each broker's directories in ``log.dirs`` order (``log_dirs``; one ``LOG_DIR`` when not given); a
    (broker, directory) in ``offline`` answers ``KafkaStorageException`` and no partitions."""
    dirs = {b: (log_dirs or {}).get(b, (LOG_DIR,)) for b in live_brokers}
    held: dict[tuple[int, str], list[ReplicaSize]] = {(b, d): [] for b in live_brokers for d in dirs[b]}
    for r in replicas:
        if (r.broker, r.log_dir) in held:
            held[(r.broker, r.log_dir)].append(r)

    def one(b: int, d: str) -> dict:
        if (b, d) in offline:
            return {"logDir": d, "error": "KafkaStorageException", "partitions": []}
        return {"logDir": d, "error": None, "partitions": [
            {"partition": f"{r.topic}-{r.partition}", "size": r.size_bytes, "offsetLag": 0, "isFuture": False}
            for r in sorted(held[(b, d)], key=lambda r: (r.topic, r.partition))]}

    doc = {"version": 1, "brokers": [{"broker": b, "logDirs": [one(b, d) for d in dirs[b]]} for b in live_brokers]}
    return ("Querying brokers for log directories information\n"
            f"Received log directory information from brokers {_ids(live_brokers)}\n"
            + json.dumps(doc, separators=(",", ":")) + "\n")


def _ids(ids) -> str:
    return ",".join(str(i) for i in ids)
