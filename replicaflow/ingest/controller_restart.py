"""A KRaft controller's replay of its metadata log at start, which restates old records as new lines.

A controller that starts loads its latest snapshot and replays the records after it (up to
``metadata.log.max.snapshot.interval.ms``, an hour by default, of them). ReplicationControlManager.replay logs
each one at INFO as it does when the record is committed: every partition of the snapshot as `Replayed
PartitionRecord for new partition …` (3.6+; `Created partition …` 3.0–3.5), then each later reassignment record
as `Replayed partition assignment change …`. Read as new lines, a move that ended before the restart would
start and end again at it, and a partition would go back, for a millisecond, to its replicas when the snapshot
was taken. A line is such a replay when its node logged a start within ``STARTUP_REPLAY_MS`` of it and the logs
told of the partition before (docs/real-cluster.md, ``assignments``). A start is the controller's own `Creating new
QuorumController with clusterId …` (3.3+, controller.log: logged just before the replay), or the process's
`Kafka Server started` (server.log), for logs that hold only one of the two files.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from replicaflow.ingest.holders import Seen

KRAFT_RECORD = "Replayed partition assignment change "  # a record's text, the same in every controller's log
START_KINDS = ("controller_started", "broker_started")  # the log_events kinds of a node's start
STARTUP_REPLAY_MS = 60_000  # how far from a controller's start line its replay of the metadata log may be logged

Started = dict[tuple[str, int], list[int]]


def started_at(starts: Iterable) -> Started:
    """Each node's start instants, by (cluster, node), from its rows of ``START_KINDS``."""
    out: Started = {}
    for s in starts:
        out.setdefault((s["cluster"], s["broker"]), []).append(s["ts_ms"])
    return out


def _near_start(started: Started, cluster: str, node: int | None, ts_ms: int) -> bool:
    return any(abs(ts_ms - t) <= STARTUP_REPLAY_MS for t in started.get((cluster, node), ()))


def startup_replays(rows: list, started: Started) -> set[int]:
    """Indexes of ``rows`` (the reassignment lines, in time order) that restate an earlier line's record within
    ``STARTUP_REPLAY_MS`` of their own node's start. A record restated at any other time (a standby's, at commit)
    is kept: the assignment replay drops its repeat."""
    seen: set[tuple[str, str]] = set()
    out = set()
    for n, r in enumerate(rows):
        at = r["message"].find(KRAFT_RECORD)
        if at < 0:
            continue
        record = (r["cluster"], r["message"][at:])
        if record in seen and _near_start(started, r["cluster"], r["broker"], r["ts_ms"]):
            out.add(n)
        seen.add(record)
    return out


def without_restated_partitions(seen: Seen, cluster: str, started: Started, first_move_ms: int | None) -> Seen:
    """``seen`` less the snapshot's PartitionRecords a controller restates at its start: a record line
    (``Seen.wholes``' node) within ``STARTUP_REPLAY_MS`` of its node's start, after an earlier line naming the
    partition's whole assignment or a reassignment line of it (``first_move_ms``). The snapshot is older than
    what those lines told; the record of a partition first known at the restart is kept."""
    if not seen.wholes:
        return seen
    known = seen.wholes[0].ts_ms if first_move_ms is None else min(seen.wholes[0].ts_ms, first_move_ms)
    return replace(seen, wholes=tuple(w for w in seen.wholes if w.node is None or w.ts_ms <= known
                                      or not _near_start(started, cluster, w.node, w.ts_ms)))
