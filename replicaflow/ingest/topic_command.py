"""``kafka-topics --describe`` text output, 0.10 to 4.x (Kafka's ``TopicCommand``), as a snapshot.

The snapshot anchors what logs cannot say: the assignment, the leader and ISR at one moment, and the
topic configs (``min.insync.replicas``). Kafka prints one header line per topic and one tab-separated
line per partition; the layout changed across releases and the reader takes every form:

- up to 2.4 the header has no space after the colons (``Topic:t\\tPartitionCount:3\\t…``);
- 2.8+ adds ``TopicId:``; 2.5+ adds ``Adding Replicas:`` / ``Removing Replicas:`` during a
  reassignment; 3.7+ adds ``Elr:`` / ``LastKnownElr:`` (``N/A`` where the broker does not know);
- ``Leader: none`` (and ``Leader: -1`` from ZooKeeper-era tools) is a partition without a leader;
- ``Configs:`` joins ``key=value`` with commas, and values may themselves hold commas
  (``leader.replication.throttled.replicas=0:1,0:2``);
- ``MarkedForDeletion: true`` may end either line.

A header holds no other cell: every release prints ``Topic``, ``TopicId`` (2.8+), ``PartitionCount``,
``ReplicationFactor``, ``Configs`` and ``MarkedForDeletion`` there and nothing else, so an unknown one is an
error. ``ReplicationFactor`` is the replica count of one partition (the first in the metadata's order up to
2.4, partition 0 from 2.5), less the replicas a reassignment is adding (2.5+): a header whose factor no
partition line of its topic can give is an error too. A partition line's other cells are read past (a later
release may add one, as 2.5 and 3.7 did); Confluent Server's ``Offline:`` is checked as ``Isr:`` is (its replicas
are outside the ISR, which already says so), and ``MarkedForDeletion:`` is ``true`` or ``false``.

Partition lines may come without their header (``--under-replicated-partitions``). Output the tool's
JVM wrote around the table (SLF4J or log4j warnings) is skipped; any other line is an error naming
file:line, as is a partition whose leader, ISR or reassignment sets are not among its replicas.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from replicaflow.errors import ReplicaflowError, quote
from replicaflow.model.configs import MAX_MIN_ISR, MIN_ISR
from replicaflow.model.topic import topic_name_problem
from replicaflow.model.units import INT32_MAX, counted, parse_id
from replicaflow.telemetry.textfile import read_text

WHAT = "kafka-topics --describe output"
MAX_LINE = 1_000_000  # characters; a describe line of a 10,000-replica ISR is about 60,000
_NOISE = re.compile(r"(SLF4J: |log4j:|WARNING: |\[\d{4}-\d\d-\d\d |\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d)")
_CONFIG_START = re.compile(r"[A-Za-z0-9._-]+=")
_SPACED_CELL = re.compile(r" (PartitionCount|Partition|TopicId|Leader|Replicas|Isr|Configs):")
_NO_LEADER = ("none", "-1")
_INT = re.compile(r"-?[0-9]{1,10}")  # ASCII digits only (str.isdigit takes '²'); Kafka's ids are int32
# the cells of a topic's header line, at every release (TopicCommand's describe, 0.8 Scala to 4.x Java)
HEADER_CELLS = ("Topic", "TopicId", "PartitionCount", "ReplicationFactor", "Configs", "MarkedForDeletion")


@dataclass(frozen=True)
class TopicDescription:
    """One header line: the topic, its id (2.8+), partition count, replication factor, overridden configs."""

    topic: str
    topic_id: str | None
    partition_count: int
    replication_factor: int
    configs: dict[str, str]
    marked_for_deletion: bool = False
    line: int = 0


@dataclass(frozen=True)
class PartitionDescription:
    """One partition line; ``leader`` None when Kafka prints ``none``; ``elr`` None when absent or N/A."""

    topic: str
    partition: int
    leader: int | None
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    adding: tuple[int, ...] = ()
    removing: tuple[int, ...] = ()
    elr: tuple[int, ...] | None = None
    last_known_elr: tuple[int, ...] | None = None
    marked_for_deletion: bool = False
    line: int = 0


@dataclass
class TopicsSnapshot:
    """What one describe output says: topics by name, partitions by (topic, partition)."""

    topics: dict[str, TopicDescription] = field(default_factory=dict)
    partitions: dict[tuple[str, int], PartitionDescription] = field(default_factory=dict)

    def brokers(self) -> set[int]:
        """Every broker id the snapshot names as a replica."""
        return {b for p in self.partitions.values() for b in (*p.replicas, *p.adding)}


def read_topic_describe(path: Path) -> TopicsSnapshot:
    """The snapshot in ``path``; the first problem is one sentence naming ``path:line``."""
    return parse_topic_describe(read_text(path, WHAT), str(path))


def parse_topic_describe(text: str, where: str) -> TopicsSnapshot:
    """The snapshot in ``text`` (``where`` names the file in error sentences)."""
    snap = TopicsSnapshot()
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        if not line.strip() or _NOISE.match(line.lstrip()):
            continue
        if len(line) > MAX_LINE:
            raise ReplicaflowError(f"{where}:{n}: a line of {len(line):,} characters (at most {MAX_LINE:,})")
        fields = _fields(line, f"{where}:{n}")
        if "Partition" in fields:
            part = _partition(fields, f"{where}:{n}", n)
            key = (part.topic, part.partition)
            if key in snap.partitions:
                raise ReplicaflowError(f"{where}:{n}: partition {part.topic}-{part.partition} is described twice "
                                       f"(first at line {snap.partitions[key].line})")
            snap.partitions[key] = part
        elif "PartitionCount" in fields:
            topic = _topic(fields, f"{where}:{n}", n)
            if topic.topic in snap.topics:
                raise ReplicaflowError(f"{where}:{n}: topic {quote(topic.topic)} is described twice")
            snap.topics[topic.topic] = topic
        else:
            raise ReplicaflowError(f"{where}:{n}: expected a 'Topic: …' line of kafka-topics --describe, "
                                   f"found {quote(line.strip())}")
    if not snap.partitions:
        raise ReplicaflowError(f"{where}: no partition lines ('Topic: t  Partition: 0  Leader: …'); "
                               "is this the output of kafka-topics --describe?")
    _check_counts(snap, where)
    return snap


def _fields(line: str, at: str) -> dict[str, str]:
    """``Key: value`` pairs of one tab-separated line (the first key starts the line)."""
    out: dict[str, str] = {}
    for cell in line.strip().split("\t"):
        if not cell.strip():
            continue
        key, sep, value = cell.partition(":")
        if not sep:
            raise ReplicaflowError(f"{at}: expected 'Key: value' cells separated by tabs, found {quote(cell)}")
        if key.strip() in out:  # Kafka prints each once: two lines run together, and one would be lost
            raise ReplicaflowError(f"{at}: '{key.strip()}:' appears twice in the line; were two lines joined?")
        out[key.strip()] = value.strip()
    if "Topic" not in out:
        raise ReplicaflowError(f"{at}: expected a line starting with 'Topic:', found {quote(line.strip())}")
    # a terminal's copy turns the tabs into spaces, all of them or some: a cell then holds the next one
    if any(_SPACED_CELL.search(value) for value in out.values()):
        raise ReplicaflowError(f"{at}: expected cells separated by tabs as kafka-topics prints them, found spaces; "
                               "save the tool's output to a file (kafka-topics --describe … > describe.txt)")
    return out


def _topic_name(value: str, at: str) -> str:
    problem = topic_name_problem(value)
    if problem:
        raise ReplicaflowError(f"{at}: Topic: {problem}, found {quote(value)}")
    return value


def _int(fields: dict[str, str], key: str, at: str, minimum: int = 0) -> int:
    value = fields.get(key)
    if value is None:
        raise ReplicaflowError(f"{at}: the line has no '{key}:'")
    if not _INT.fullmatch(value) or not minimum <= int(value) <= INT32_MAX:
        raise ReplicaflowError(f"{at}: {key}: expected an integer ≥ {minimum} and at most {INT32_MAX:,} "
                               f"(Kafka's int32), found {quote(value)}")
    return int(value)


def _brokers(fields: dict[str, str], key: str, at: str) -> tuple[int, ...] | None:
    """A comma-joined broker list ('' is empty, 'N/A' is None); duplicates and non-ids are errors."""
    value = fields.get(key)
    if value is None or value == "N/A":
        return None
    items = [v.strip() for v in value.split(",")] if value.strip() else []
    ids = [parse_id(item) if item else None for item in items]  # `1,,2`: a list cut or pasted wrong
    if None in ids:
        raise ReplicaflowError(f"{at}: {key}: expected broker ids joined by commas, found {quote(value)}")
    if len(set(ids)) != len(ids):
        raise ReplicaflowError(f"{at}: {key}: a broker appears twice in {quote(value)}")
    return tuple(ids)


def _partition(fields: dict[str, str], at: str, n: int) -> PartitionDescription:
    topic = _topic_name(fields["Topic"], at)
    leader_text = fields.get("Leader")
    if leader_text is None:
        raise ReplicaflowError(f"{at}: the line has no 'Leader:'")
    leader = None if leader_text in _NO_LEADER else _int(fields, "Leader", at)
    replicas = _brokers(fields, "Replicas", at)
    isr = _brokers(fields, "Isr", at)
    if replicas is None or isr is None:
        raise ReplicaflowError(f"{at}: the line has no '{'Replicas' if replicas is None else 'Isr'}:'")
    if not replicas:
        raise ReplicaflowError(f"{at}: Replicas: expected at least one broker id (Kafka assigns every partition "
                               "a replica), found none")
    part = PartitionDescription(
        topic=topic, partition=_int(fields, "Partition", at), leader=leader, replicas=replicas, isr=isr,
        adding=_brokers(fields, "Adding Replicas", at) or (), removing=_brokers(fields, "Removing Replicas", at) or (),
        elr=_brokers(fields, "Elr", at), last_known_elr=_brokers(fields, "LastKnownElr", at),
        marked_for_deletion=_marked(fields, at), line=n)
    name = f"partition {topic}-{part.partition}"
    for what, ids in (("Isr", isr), ("Adding Replicas", part.adding), ("Removing Replicas", part.removing),
                      ("Elr", part.elr or ()), ("LastKnownElr", part.last_known_elr or ()),
                      ("Offline", _brokers(fields, "Offline", at) or ())):  # Confluent Server's
        stray = [b for b in ids if b not in replicas]
        if stray:
            raise ReplicaflowError(f"{at}: {name}: {what} names broker {stray[0]}, which is not among its "
                                   f"Replicas {','.join(map(str, replicas))}")
    if leader is not None and leader not in replicas:
        raise ReplicaflowError(f"{at}: {name}: Leader {leader} is not among its Replicas "
                               f"{','.join(map(str, replicas))}")
    return part


def _topic(fields: dict[str, str], at: str, n: int) -> TopicDescription:
    stray = next((key for key in fields if key not in HEADER_CELLS), None)
    if stray is not None:  # read past, it was lost; Kafka never prints it there
        raise ReplicaflowError(f"{at}: {quote(stray + ':')} is no cell of a kafka-topics --describe topic line "
                               f"(Kafka prints {', '.join(HEADER_CELLS)})")
    configs = parse_configs(fields.get("Configs", ""), at)
    min_isr = configs.get(MIN_ISR)
    if min_isr is not None and not (_INT.fullmatch(min_isr) and 1 <= int(min_isr) <= MAX_MIN_ISR):
        raise ReplicaflowError(f"{at}: Configs: {MIN_ISR}: expected an integer from 1 to {MAX_MIN_ISR:,}, "
                               f"found {quote(min_isr)}")
    return TopicDescription(
        topic=_topic_name(fields["Topic"], at), topic_id=fields.get("TopicId") or None,
        partition_count=_int(fields, "PartitionCount", at, 1),
        replication_factor=_int(fields, "ReplicationFactor", at, 1), configs=configs,
        marked_for_deletion=_marked(fields, at), line=n)


def _marked(fields: dict[str, str], at: str) -> bool:
    """``MarkedForDeletion:``, which the tool prints as ``true`` only; any other value was read as false."""
    value = fields.get("MarkedForDeletion", "false")
    if value not in ("true", "false"):
        raise ReplicaflowError(f"{at}: MarkedForDeletion: expected true or false, found {quote(value)}")
    return value == "true"


def parse_configs(text: str, at: str) -> dict[str, str]:
    """``k=v,k=v`` as TopicCommand joins overridden configs; a comma not followed by ``name=`` belongs to the
    value before it (replica lists such as ``0:1,0:2`` contain commas)."""
    out: dict[str, str] = {}
    key = None
    for token in text.split(",") if text.strip() else []:
        if _CONFIG_START.match(token.strip()):
            key, _, value = token.strip().partition("=")
            if key in out:  # Kafka prints each config once; either value kept would be a guess
                raise ReplicaflowError(f"{at}: Configs: {key} is given twice in {quote(text)}")
            out[key] = value
        elif key is None:
            raise ReplicaflowError(f"{at}: Configs: expected name=value pairs, found {quote(text)}")
        else:
            out[key] += "," + token
    return out


def _check_counts(snap: TopicsSnapshot, where: str) -> None:
    """A header's PartitionCount against the partition lines that follow it (a cut paste is not a snapshot)."""
    for (name, number), part in snap.partitions.items():
        topic = snap.topics.get(name)
        if topic is not None and number >= topic.partition_count:
            raise ReplicaflowError(f"{where}:{part.line}: partition {name}-{number} is beyond the topic's "
                                   f"PartitionCount: {topic.partition_count} (partitions are 0 to "
                                   f"{topic.partition_count - 1})")
    lines: dict[str, int] = {}
    factors: dict[str, set[int]] = {}  # the ReplicationFactor each partition line could give its header
    for (name, _), part in snap.partitions.items():  # once, not once per topic: 50,000 one-partition topics took minutes
        lines[name] = lines.get(name, 0) + 1
        # the partition's replicas, whole (up to 2.4, and 2.5+ outside a reassignment) or less its adding ones
        # (toolformat.replication_factor; the release is not known here)
        n = len(part.replicas)
        factors.setdefault(name, set()).update((n, n - len(part.adding)))
    for name, topic in snap.topics.items():
        seen = lines.get(name, 0)
        if seen != topic.partition_count:
            raise ReplicaflowError(f"{where}: topic {quote(name)} has PartitionCount: {topic.partition_count} "
                                   f"but {counted(seen, 'partition line')}; was the output cut?")
        if seen and topic.replication_factor not in factors[name]:
            counts = sorted({len(p.replicas) for (t, _), p in snap.partitions.items() if t == name})
            raise ReplicaflowError(f"{where}:{topic.line}: topic {quote(name)} has ReplicationFactor: "
                                   f"{topic.replication_factor}, but its partitions have {' or '.join(map(str, counts))} "
                                   "replicas (kafka-topics prints one partition's count, less the replicas a "
                                   "reassignment is adding)")
