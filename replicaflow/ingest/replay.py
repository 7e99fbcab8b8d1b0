"""A partition's assignment history from a describe snapshot and the controller's reassignment lines.

``kafka-topics --describe`` gives the assignment at one instant (the anchor); the controller's lines give
each change: a start ("Handling reassignment …" before 2.4 names only the target; "Successfully updated
assignment … ReplicaAssignment(replicas=…, addingReplicas=…, removingReplicas=…)" from 2.4 and KRaft's
"Replayed partition assignment change PartitionChangeRecord(…)" name the whole assignment) and a
completion (the final replicas, or only the partition). The history replays forward from the anchor and
backward as far as the lines allow (docs/real-cluster.md, "Anchoring"):

- backward over a start that names the whole assignment: the assignment before it is the origin
  (replicas − adding); over a start naming only the target (before 2.4) the origin cannot be known;
- backward over a completion: the assignment before it is what the preceding start set, known when
  that start is (else unknown);
- where it becomes unknown, the history begins at the first instant it is known again.

The events are few (one or two lines per moved partition), so this runs on the driver over the
collected reassignment events; the KIP-455 layout of a move is ``model.predicates.reassignment_state``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from replicaflow.model.predicates import reassignment_state

Ids = tuple[int, ...]


@dataclass(frozen=True)
class Assignment:
    replicas: Ids
    adding: Ids = ()
    removing: Ids = ()

    @property
    def target(self) -> Ids:
        return tuple(r for r in self.replicas if r not in self.removing)

    @property
    def origin(self) -> Ids:
        return tuple(r for r in self.replicas if r not in self.adding)


@dataclass(frozen=True)
class Move:
    """One controller line: ``kind`` 'started' or 'completed'; ``target`` (started, or completed with a
    list), ``whole`` (the full assignment a 2.4+/KRaft start names)."""

    ts_ms: int
    order: int
    kind: str
    target: Ids | None = None
    whole: Assignment | None = None


def _after(move: Move, before: Assignment | None) -> Assignment | None:
    """The assignment a move leaves, from the one before it (None: unknown)."""
    if move.whole is not None:
        return move.whole
    if move.kind == "started":
        if before is None or move.target is None:
            return None
        replicas, adding, removing = reassignment_state(list(before.origin), list(move.target))
        return Assignment(tuple(replicas), tuple(adding), tuple(removing))
    final = move.target if move.target is not None else (before.target if before is not None else None)
    return None if final is None else Assignment(tuple(final))


def _before(moves: list[Move], i: int) -> Assignment | None:
    """The assignment before ``moves[i]`` as far as the lines tell, walking backward (None: unknown)."""
    move = moves[i]
    if move.kind == "started":
        return Assignment(move.whole.origin) if move.whole is not None else None
    if i == 0:
        return None
    prev = moves[i - 1]
    # a completion right after a start, or the same completion told twice (KRaft: the AlterPartition line, then the
    # record that empties the adding and removing lists)
    if prev.kind == "started" or (prev.kind == "completed" and prev.target in (None, move.target)):
        return _after(prev, _before(moves, i - 1))
    return None


def history(anchor: Assignment | None, anchor_ms: int, moves: Iterable[Move],
            start_ms: int) -> list[tuple[int, Assignment]]:
    """``[(from_ms, assignment), …]`` of one partition: the first entry is the earliest known instant
    (``start_ms`` when known back to the start of the logs), then one entry per change."""
    moves = sorted(moves, key=lambda m: (m.ts_ms, m.order))
    if anchor is None:
        out: list[tuple[int, Assignment]] = []
        current = None
        for m in moves:
            current = _after(m, current)
            if current is not None:
                out.append((m.ts_ms, current))
        return out
    early = [m for m in moves if m.ts_ms <= anchor_ms]
    late = [m for m in moves if m.ts_ms > anchor_ms]
    # backward: the last early move whose prior assignment the lines cannot tell
    unknown = next((i for i in range(len(early) - 1, -1, -1) if _before(early, i) is None), None)
    if unknown is None:
        out = [(start_ms, _before(early, 0) if early else anchor)]
        replay = early
    else:
        first = _before(early, unknown + 1) if unknown + 1 < len(early) else anchor
        out = [(early[unknown].ts_ms, first)]
        replay = early[unknown + 1:]
    current = out[-1][1]
    for m in replay:
        current = _after(m, current) or current
        out.append((m.ts_ms, current))
    out[-1] = (out[-1][0], anchor)  # at its instant the snapshot is the truth
    current = anchor
    for m in late:
        current = _after(m, current) or current
        out.append((m.ts_ms, current))
    return out
