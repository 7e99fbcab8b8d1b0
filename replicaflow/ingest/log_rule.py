"""The pieces every reading rule is built of (ingest/log_messages.py): the ``Rule`` type and the patterns of the
values Kafka prints in many messages (partitions, broker lists, the keys of its records and registrations).

Patterns use only character classes and single optional groups, never a repeated group, so Java's regex engine
neither recurses nor backtracks catastrophically on a long ISR list (docs/logs.md, "Hostile input").
"""

from __future__ import annotations

from dataclasses import dataclass, field

TP = r"(\[[^\[\]]+,\d+\]|\S+-\d+)"  # TopicAndPartition `[t,p]` (<= 0.11, old controller) or TopicPartition `t-p`
L = r"((?:\d[\d,]*)?(?<!,))"  # `1,2,3` (mkString(",")), possibly empty, never ending in a comma
LS = r"([\d, ]*)"    # `1, 2, 3` (List/Set toString, Java lists)
N = r"(-?\d+)"
PARTITION_KEY = r"\bpartition(?:Index|Id)=(\d+)"
MIN_ISR_SET = r"(?:^|[\s(,{])min\.insync\.replicas(?: -> |=)(\d+)"  # in a config listing: `k -> v` or `k=v`


@dataclass(frozen=True)
class Rule:
    """One message form. ``fields`` maps a log_events field to a group of ``pattern``, or to
    (group, sub-pattern, sub-group) for a key inside a captured structure such as ``LeaderAndIsr(...)``.
    ``explode``: a field holding several partitions (one event row each); ``where``: 'body' or 'attached'
    (a stack-trace line continuing a record whose body matches ``parent``); ``ident``: the logIdent the
    record must carry, where other classes write the same body (``[ReplicaFetcherManager on broker 1]
    shutting down`` is not the broker shutting down)."""

    kind: str
    pattern: str
    fields: dict = field(default_factory=dict)
    state: str | None = None
    explode: str | None = None
    parent: str | None = None
    ident: str | None = None
    sparse: bool = False  # unchanged fields are left out of the message: an empty list group is unknown, not []
    states: dict | None = None  # the state as the rule's text spells it -> the state kept (None: no state)


# PartitionChangeRecord prints LeaderRecoveryState as its byte (-1: no change), PartitionRegistration by its name
RECOVERY_BYTE = {"-1": None, "0": "RECOVERED", "1": "RECOVERING"}
KV = {  # keys of LeaderAndIsr(...), PartitionState(...), PartitionChangeRecord(...), PartitionRegistration(...)
    "leader": r"\bleader[=:](-?\d+)",
    "leader_epoch": r"\b[lL]eaderEpoch[=:](-?\d+)",  # `LeaderEpoch:E` in LeaderIsrAndControllerEpoch.toString
    "partition_epoch": r"\b(?:[zZ]kVersion|partitionEpoch)[=:](-?\d+)",
    "isr": r"\bisr[=:](\[[\d, ]*\]|List\([\d, ]*\)|[\d,]+)",
    "replicas": r"\breplicas[=:](\[[\d, ]*\]|List\([\d, ]*\)|[\d,]+)",
    "adding": r"\baddingReplicas[=:](\[[\d, ]*\]|List\([\d, ]*\)|[\d,]+)",
    "removing": r"\bremovingReplicas[=:](\[[\d, ]*\]|List\([\d, ]*\)|[\d,]+)",
    "state": r"\bleaderRecoveryState=([\w-]+)",
}


def kv(group: int, *keys: str) -> dict:
    """Fields read as keys (``KV``) of the structure a rule captures in ``group``."""
    return {k: (group, KV[k], 1) for k in keys}


# `. Previous partition: PartitionRegistration(…), change record: PartitionChangeRecord(…)` after a KRaft controller's
# election line (PartitionChangeBuilder.tryElection, 4.1+): neither structure holds parentheses of its own
ELECTION_TAIL = r"(?:\. Previous partition: ?(PartitionRegistration\([^()]*\)), change record: ?(PartitionChangeRecord\([^()]*\)))?"
# the fields of such a line (topic_id, partition_index, leader) and of its tail: the registration's replicas and
# leader epoch (the record's leader raises it by one, PartitionRegistration.merge), the ISR the record sets
ELECTION_FIELDS = {"topic_id": 1, "partition_index": 2, "leader": 3, "replicas": (4, KV["replicas"], 1),
                   "prev_leader_epoch": (4, KV["leader_epoch"], 1), "isr": (5, KV["isr"], 1)}
