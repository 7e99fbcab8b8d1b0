"""Replication throttles: KIP-73 quotas and lists, and the KIP-542 proposal (docs/semantics.md §5).

The quota rate is Kafka's sampled ``Rate``: bytes in the retained 1 s windows divided by the time
since the oldest retained window started (at least one window). "Exceeded" is strictly above.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from replicaflow.errors import ReplicaflowError, quote
from replicaflow.model.units import parse_id

ALL_REPLICAS = "*"
UNLIMITED = float("inf")
_THROTTLED_PAIR = re.compile(r"([0-9]+):([0-9]+)")


def rate_bps(total_bytes, oldest_window_start_ms, now_ms, window_ms):
    """Bytes/s over the retained windows: elapsed since the oldest window start, at least one window."""
    elapsed_ms = np.maximum(np.asarray(now_ms) - oldest_window_start_ms, window_ms)
    return np.asarray(total_bytes, dtype=np.float64) * 1000.0 / elapsed_ms


def oldest_window_start_ms(now_ms, quota_start_ms, window_ms, samples, overlapping=False, any_retained=True):
    """Start of the oldest retained window: windows are aligned to ``quota_start_ms``; ``samples`` kept, and
    where ``overlapping`` (3.8+, :func:`overlapping_window_kept`) the one before them too. Where no retained
    window holds a record (``any_retained`` false: the quota recorded nothing for a whole retention), ``now``:
    ``SampledStat.purgeObsoleteSamples`` has reset every sample to the instant asked (``Sample.reset(now)``),
    so ``SimpleRate`` measures over one window. Counting the empty windows since the sensor's start let a
    quota idle that long (a leader between two batches of a move) pass ten windows' worth at once."""
    current = np.floor_divide(np.asarray(now_ms) - quota_start_ms, window_ms)
    first = current - (samples - 1) - np.asarray(overlapping, dtype=np.int64)
    return np.where(any_retained, quota_start_ms + np.maximum(first, 0) * window_ms, now_ms)


def overlapping_window_kept(last_record_ms, now_ms, window_ms, samples):
    """Whether the window just before the ``samples`` retained ones still counts, from 3.8: Kafka's
    ``SampledStat.purgeObsoleteSamples`` drops a sample once ``samples`` windows have passed since its last
    event (apache/kafka#15889, in 3.8.0), not since its start as up to 3.7, and keeps one slot more for it;
    ``SimpleRate`` then measures from that sample's start. A quota recording all along thus rates over 11
    to 12 windows instead of 10 to 11."""
    return (np.asarray(now_ms) - last_record_ms) < samples * window_ms


def quota_exceeded(rate, limit_bps):
    """§5.1: exceeded only when the rate is **strictly above** the limit; ≤ 0 or inf means unlimited."""
    limit = np.asarray(limit_bps, dtype=np.float64)
    return (limit > 0) & np.isfinite(limit) & (np.asarray(rate) > limit)


def room_bytes(total_bytes, oldest_window_start_ms, end_ms, window_ms, limit_bps, one_fetch_bytes):
    """Bytes that may still be recorded before ``end_ms`` with the rate at most the limit, plus one fetch.

    The rate at ``end_ms`` is ``(total + x) / elapsed`` (:func:`rate_bps`); ``x`` is the largest value that
    keeps it at the limit, floored at 0, and one fetch may overshoot it as the last fetch before the check
    does in Kafka. Infinite where the quota is unlimited (limit ≤ 0 or inf).
    """
    limit = np.asarray(limit_bps, dtype=np.float64)
    elapsed_ms = np.maximum(np.asarray(end_ms) - oldest_window_start_ms, window_ms)
    headroom = np.maximum(limit * elapsed_ms / 1000.0 - total_bytes, 0.0) + one_fetch_bytes
    unlimited = (limit <= 0) | ~np.isfinite(limit)
    return np.where(unlimited, np.inf, headroom)


def throttle_holds_back(throttled, exceeded, in_isr):
    """§5.1: a throttled replica is held back only when the quota is exceeded and it is not in the ISR."""
    return np.asarray(throttled, dtype=bool) & np.asarray(exceeded, dtype=bool) & ~np.asarray(in_isr, dtype=bool)


def kip542_is_reassignment_traffic(replica_is_adding):
    """§5.2: reassignment traffic is exactly the fetches of (leader side) / for (follower side) an adding replica."""
    return np.asarray(replica_is_adding, dtype=bool)


def parse_throttled_replicas(text: str | None, field: str = "throttled.replicas") -> frozenset[tuple[int, int]] | str:
    """Parse a ``*.replication.throttled.replicas`` value: ``"0:1,1:2"`` → {(0, 1), (1, 2)}; ``"*"`` → ALL.

    Kafka's ``ThrottledReplicaListValidator`` rule: each comma-separated item, trimmed, is empty or
    ``[0-9]+:[0-9]+`` (no sign, no space around the colon); the ids are Java ints."""
    if text is None or not text.strip():
        return frozenset()
    if text.strip() == ALL_REPLICAS:
        return ALL_REPLICAS
    pairs = set()
    for item in filter(None, (i.strip() for i in text.split(","))):
        m = _THROTTLED_PAIR.fullmatch(item)
        ids = (parse_id(m[1]), parse_id(m[2])) if m else (None, None)
        if None in ids:
            raise ReplicaflowError(f"{field}: expected 'partition:broker,...' or '*', found item {quote(item)}")
        pairs.add(ids)
    return frozenset(pairs)


def format_throttled_replicas(pairs: Iterable[tuple[int, int]] | str) -> str:
    """Inverse of :func:`parse_throttled_replicas`, sorted by partition then broker."""
    if pairs == ALL_REPLICAS:
        return ALL_REPLICAS
    return ",".join(f"{p}:{b}" for p, b in sorted(set(pairs)))


def is_throttled(pairs: frozenset[tuple[int, int]] | str, partition: int, broker: int) -> bool:
    return pairs == ALL_REPLICAS or (partition, broker) in pairs


Replicas = tuple[Sequence[int], Sequence[int], Sequence[int]]  # a partition's (replicas, adding, removing)


def tool_moves(current: Mapping[tuple[str, int], Replicas], proposed: Mapping[tuple[str, int], Sequence[int]],
               running: Mapping[tuple[str, int], Replicas] | None = None) -> dict[tuple[str, int], tuple[set, set]]:
    """(sources, destinations) per partition, as ``ReassignPartitionsCommand.calculateMoveMap`` (2.6) builds them
    (A13, Kafka's testMoveMap): each reassignment in progress (``running``, with ``--additional``) from its replicas
    less the adding ones to its target (replicas less the removing ones); then each proposed partition, which
    replaces it, from its ``current`` replicas less the adding ones to the proposal; destinations less sources."""
    moves: dict[tuple[str, int], tuple[set, set]] = {}
    for key, (replicas, adding, removing) in (running or {}).items():
        moves[key] = (set(replicas) - set(adding), set(replicas) - set(removing))
    for key, target in proposed.items():
        replicas, adding, _removing = current[key]
        moves[key] = (set(replicas) - set(adding), set(target))
    return {key: (sources, destinations - sources) for key, (sources, destinations) in moves.items()}


def tool_throttle_lists(current: Mapping[tuple[str, int], Replicas], proposed: Mapping[tuple[str, int], Sequence[int]],
                        moving_only: bool = False, running: Mapping[tuple[str, int], Replicas] | None = None,
                        ) -> dict[str, tuple[str, str]]:
    """What ``kafka-reassign-partitions --execute --throttle`` writes per topic (§5.1, A13): the sources of each
    move (``tool_moves``) as the leader list, its destinations as the follower list. With ``moving_only`` (the
    tool up to 2.5) a partition that gains no replica adds no sources. Returns topic → (leader list, follower
    list) as Kafka strings, for every topic of a move: a topic of a running move gets its lists rewritten too."""
    leader: dict[str, set[tuple[int, int]]] = {}
    follower: dict[str, set[tuple[int, int]]] = {}
    for (topic, partition), (sources, destinations) in tool_moves(current, proposed, running).items():
        leader.setdefault(topic, set()).update((partition, b) for b in sources if destinations or not moving_only)
        follower.setdefault(topic, set()).update((partition, b) for b in destinations)
    return {t: (format_throttled_replicas(leader[t]), format_throttled_replicas(follower[t])) for t in sorted(leader)}


def tool_throttled_brokers(current: Mapping[tuple[str, int], Replicas], proposed: Mapping[tuple[str, int], Sequence[int]],
                           running: Mapping[tuple[str, int], Replicas] | None = None) -> list[int]:
    """Brokers that get the rate configs from ``--throttle``: sources ∪ destinations of every move
    (``calculateReassigningBrokers``)."""
    return sorted({int(b) for sources, destinations in tool_moves(current, proposed, running).values()
                   for b in sources | destinations})
