"""``kafka-reassign-partitions --verify`` and ``--list`` output (Kafka's ``ReassignPartitionsCommand``).

``--verify`` says, per partition of the plan, whether its move is done. Up to 2.4 (the ZooKeeper
tool) the lines read ``Reassignment of partition t-0 completed successfully`` / ``failed`` / ``is
still in progress``; from 2.5 (KIP-455's admin API) ``… is completed.`` / ``… is still in progress.``
/ ``There is no active reassignment of partition t-0, but replica set is 1,2 rather than 3,4.``,
then ``Clearing broker-level throttles on brokers 1,2,3`` and ``Clearing topic-level throttles on
topics t`` when the tool removed them (older: ``Throttle was removed.``). Intra-broker moves print
``Reassignment of replica …`` lines, which are read as such and do not name a partition state.
``--list`` (2.5+) prints ``Current partition reassignments:`` then ``t-1: replicas: 1,2,3. adding:
4. removing: 1.`` per moving partition, or ``No partition reassignments found.``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from replicaflow.errors import ReplicaflowError, quote
from replicaflow.ingest.log_dirs_command import split_topic_partition
from replicaflow.model.units import parse_id
from replicaflow.telemetry.textfile import read_text

WHAT = "kafka-reassign-partitions output"
COMPLETED, IN_PROGRESS, FAILED, DIFFERENT = "completed", "in progress", "failed", "replica set differs"

_PARTITION = r"(?P<tp>\S{1,260}?)"
_LINES = [
    (re.compile(rf"Reassignment of partition {_PARTITION} (?:is completed\.|completed successfully)"), COMPLETED),
    (re.compile(rf"Reassignment of partition {_PARTITION} is still in progress\.?"), IN_PROGRESS),
    (re.compile(rf"Reassignment of partition {_PARTITION} failed"), FAILED),
    (re.compile(rf"There is no active reassignment of partition {_PARTITION}, but replica set is "
                r"(?P<current>[0-9,]{0,100000}) rather than (?P<target>[0-9,]{0,100000})\."), DIFFERENT),
]
_LIST_ROW = re.compile(rf"{_PARTITION}: replicas: (?P<replicas>[0-9,]{{0,100000}})\."
                       r"(?: adding: (?P<adding>[0-9,]{1,100000})\.)?(?: removing: (?P<removing>[0-9,]{1,100000})\.)?")
_THROTTLES = re.compile(r"Clearing broker-level throttles on brokers? (?P<brokers>[0-9,]{0,100000})")
_OTHER = ("Status of partition reassignment", "Status of replica reassignment", "Reassignment of replica ",
          "Clearing topic-level throttles", "Throttle was removed", "Current partition reassignments:",
          "SLF4J:", "log4j:", "WARNING:")
MAX_LINE = 1_000_000


@dataclass(frozen=True)
class ListedReassignment:
    """One ``--list`` row: the replicas (targets and sources together) and the adding/removing sets."""

    replicas: tuple[int, ...]
    adding: tuple[int, ...]
    removing: tuple[int, ...]


@dataclass
class ReassignStatus:
    """What a ``--verify`` or ``--list`` output says: per (topic, partition) a state or a listed move."""

    states: dict[tuple[str, int], str] = field(default_factory=dict)
    differs: dict[tuple[str, int], tuple[tuple[int, ...], tuple[int, ...]]] = field(default_factory=dict)
    listed: dict[tuple[str, int], ListedReassignment] = field(default_factory=dict)
    throttles_cleared_on: tuple[int, ...] | None = None
    none_listed: bool = False


def read_reassign_output(path: Path) -> ReassignStatus:
    """The status in ``path``; an unreadable line is one sentence naming ``path:line``."""
    return parse_reassign_output(read_text(path, WHAT), str(path))


def parse_reassign_output(text: str, where: str) -> ReassignStatus:
    """The status in ``text`` (``where`` names the file in error sentences)."""
    status = ReassignStatus()
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        at = f"{where}:{n}"
        if len(line) > MAX_LINE:
            raise ReplicaflowError(f"{at}: a line of {len(line):,} characters (at most {MAX_LINE:,})")
        if not line:
            continue
        if line == "No partition reassignments found.":
            status.none_listed = True
            continue
        if m := _THROTTLES.fullmatch(line):
            status.throttles_cleared_on = _ids(m["brokers"], at)
            continue
        if _verify_line(line, at, status):
            continue
        if m := _LIST_ROW.fullmatch(line):
            key = split_topic_partition(m["tp"], at)
            status.listed[key] = ListedReassignment(_ids(m["replicas"], at), _ids(m["adding"] or "", at),
                                                    _ids(m["removing"] or "", at))
            continue
        if line.startswith(_OTHER):
            continue
        raise ReplicaflowError(f"{at}: expected a line of kafka-reassign-partitions --verify or --list, "
                               f"found {quote(line)}")
    if not (status.states or status.listed or status.none_listed):
        raise ReplicaflowError(f"{where}: no partition status ('Reassignment of partition t-0 is completed.') "
                               "and no listed reassignment; is this the output of --verify or --list?")
    return status


def _verify_line(line: str, at: str, status: ReassignStatus) -> bool:
    for pattern, state in _LINES:
        if m := pattern.fullmatch(line):
            key = split_topic_partition(m["tp"], at)
            status.states[key] = state
            if state == DIFFERENT:
                status.differs[key] = (_ids(m["current"], at), _ids(m["target"], at))
            return True
    return False


def _ids(text: str, at: str) -> tuple[int, ...]:
    ids = tuple(parse_id(t) for t in text.split(",") if t)
    if None in ids:
        raise ReplicaflowError(f"{at}: expected broker ids, found {quote(text)}")
    return ids
