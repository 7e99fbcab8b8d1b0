"""Kafka's ReplicationQuotaManager for every broker at once: sampled windows, "exceeded", record (§5).

Four quota types per broker, in the order of ``model.configs.QUOTA_RATES``: leader and follower
replication (KIP-73) and leader and follower reassignment (KIP-542). Each keeps Kafka's sampled
``Rate``: ``quota_window_samples`` windows of ``quota_window_ms``, aligned to the first byte
recorded (Kafka creates the sensor on first use), and from 3.8 the window before them while it
has a record younger than them (``overlapping``). The rules themselves — the rate, "strictly
above", which fetch a quota holds back, which traffic is reassignment traffic — are
``model.quota``'s; this class holds the windows and applies the rules to the [P, S] grid.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from replicaflow.model import quota
from replicaflow.model.configs import FETCH_MAX_BYTES, QUOTA_RATES
from replicaflow.sim.state import ClusterState

# quota rows: leader / follower replication (KIP-73), leader / follower reassignment (KIP-542)
LEADER_REPLICATION, FOLLOWER_REPLICATION, LEADER_REASSIGNMENT, FOLLOWER_REASSIGNMENT = range(len(QUOTA_RATES))
LEADER_SIDE = (LEADER_REPLICATION, LEADER_REASSIGNMENT)


class QuotaClasses(NamedTuple):
    """Per quota row, the fetches its bytes are recorded against: they change only with the layout
    (leaders, assignments, adding replicas) and the configs (limits, throttled-replica lists)."""

    masks: tuple                  # [P, S] bool per quota row
    flat: tuple                   # their flat indices into the [P, S] grid, in row-major order
    owner: tuple                  # the broker index each is recorded against (leader or follower side)
    rows: tuple                   # the quota rows that count any fetch
    all_flat: np.ndarray          # every row's flat indices one after the other
    all_key: np.ndarray           # quota row · brokers + owner of each: its cell in a [quota row, broker] array
    follower_side: np.ndarray     # each is counted on the follower's side


class Throttle(NamedTuple):
    """One tick's throttle decision over the [P, S] grid."""

    held_leader: np.ndarray       # the leader answers the fetch with no data (§5.1, leader side)
    held_follower: np.ndarray     # the follower leaves the partition out of its request (follower side)
    classes: QuotaClasses         # per quota row, the fetches its bytes are recorded against
    room_bytes: np.ndarray        # [quota row, broker] what throttled fetches may move this tick


class ReplicationQuotaManager:
    """The quota windows of every broker, the limits and throttled-replica lists the configs set."""

    def __init__(self, n_brokers: int, window_ms: int, samples: int, kip542: bool, overlapping: bool = False):
        self.window_ms, self.samples, self.kip542, self.overlapping = window_ms, samples, kip542, overlapping
        n_q, slots = len(QUOTA_RATES), samples + overlapping
        self.limit_bps = np.full((n_q, n_brokers), np.inf)
        self.leader_listed: np.ndarray | None = None    # [P, S] replicas in leader.replication.throttled.replicas
        self.follower_listed: np.ndarray | None = None  # [P, S] ... follower.replication.throttled.replicas
        self.t0 = np.full((n_q, n_brokers), -1, dtype=np.int64)             # sensor start, -1 not created
        self.bytes = np.zeros((n_q, n_brokers, slots), dtype=np.float64)  # bytes per window slot
        self.wid = np.full((n_q, n_brokers, slots), -1, dtype=np.int64)   # window id held by each slot
        self.last = np.full((n_q, n_brokers, slots), -1, dtype=np.int64)  # its last record (3.8+ retention)
        self.active = False           # some broker has a finite quota: the tick must ask who is throttled
        self._configs = 0             # bumped whenever the limits or the lists change
        self._classes: QuotaClasses | None = None
        self._classes_key: tuple[int, int] | None = None

    # ------------------------------------------------------------------ what the configs set
    def update_quota(self, limit_bps: np.ndarray) -> None:
        """[quota row, broker] limits in bytes/s; inf = unlimited."""
        self.limit_bps = limit_bps
        self.active = bool(np.isfinite(limit_bps).any())
        self._configs += 1

    def mark_throttled(self, leader_listed: np.ndarray, follower_listed: np.ndarray) -> None:
        self.leader_listed, self.follower_listed = leader_listed, follower_listed
        self._configs += 1

    # ------------------------------------------------------------------ the sampled rate
    def _retained(self, times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """[time, quota row, broker] bytes in the windows retained at each of ``times``, and the oldest one's start."""
        win, n = self.window_ms, self.samples
        at = times[:, None, None]
        wid = np.where(self.t0 >= 0, (at - self.t0) // win, 0)
        valid = self.wid > (wid - n)[..., None]  # a slot never written (window id -1) holds no bytes
        overlapping = False
        if self.overlapping:  # 3.8+: the window before them, while its last record is younger than them
            before = (self.wid >= 0) & (self.wid == (wid - n)[..., None])
            before &= quota.overlapping_window_kept(self.last, at[..., None], win, n)
            valid |= before
            overlapping = before.any(axis=-1)
        recorded = (valid & (self.wid >= 0)).any(axis=-1)  # some retained window holds a record
        return (self.bytes * valid).sum(axis=-1), quota.oldest_window_start_ms(at, self.t0, win, n, overlapping,
                                                                               recorded)

    def rates_bps(self, now: int) -> np.ndarray:
        """[quota row, broker] the sampled rate Kafka's quota sees at ``now`` (0 before the sensor exists)."""
        total, oldest = self._retained(np.array([now]))
        return np.where(self.t0 >= 0, quota.rate_bps(total[0], oldest[0], now, self.window_ms), 0.0)

    def exceeded(self, now: int) -> np.ndarray:
        """[quota row, broker] the quota's rate is strictly above its limit (§5.1, A11)."""
        total, oldest = self._retained(np.array([now]))
        return self._exceeded(total[0], oldest[0], now)

    def _exceeded(self, total: np.ndarray, oldest: np.ndarray, now: int) -> np.ndarray:
        rate = quota.rate_bps(total, oldest, now, self.window_ms)
        return (self.t0 >= 0) & quota.quota_exceeded(rate, self.limit_bps)

    def _room_bytes(self, total: np.ndarray, oldest: np.ndarray, now: int, end: int,
                    exceeded_now: np.ndarray) -> np.ndarray:
        """[quota row, broker] bytes the throttled fetches of the tick ending at ``end`` may move (§5.1, Kafka's
        bound), from the windows retained at ``end``.

        Kafka checks the quota before every fetch, many times a tick: fetches go on until the rate
        passes the limit, and the last one overshoots by at most one fetch (``replica.fetch.max.bytes``).
        So a tick may move what brings the rate at its end up to the limit, plus that one fetch — not a
        tick's worth of fetches, which would make the achieved rate depend on the step
        (``quota.room_bytes``). A quota already over its limit at ``now`` (``exceeded_now``) has paid
        its overshoot and gets no second one until its rate is back within the limit; else every tick
        that crosses back would add a fetch. Unlimited quotas have infinite room.
        """
        started = self.t0 >= 0
        return quota.room_bytes(np.where(started, total, 0.0), np.where(started, oldest, now), end, self.window_ms,
                                self.limit_bps, np.where(exceeded_now, 0, FETCH_MAX_BYTES))

    def record(self, q: int, bytes_by_broker: np.ndarray, now: int) -> None:
        """Add each broker's bytes to quota row ``q``'s current window (creating the sensor on first use)."""
        grid = np.zeros_like(self.bytes[:, :, 0])
        grid[q] = bytes_by_broker
        self._record(grid, now)

    def _record(self, bytes_qb: np.ndarray, now: int) -> None:
        """Add [quota row, broker] bytes to the current windows; a sensor starts with its first byte, and again with
        the first after a whole retention without one: ``SampledStat.purgeObsoleteSamples`` has reset every sample
        to the instant asked, so Kafka's windows run from there (``model.quota.oldest_window_start_ms``)."""
        hit = np.flatnonzero(bytes_qb > 0)
        if len(hit) == 0:
            return
        t0 = self.t0.reshape(-1)  # views: [quota row · broker] and [quota row · broker, window slot]
        wids, window_bytes = self.wid.reshape(len(t0), -1), self.bytes.reshape(len(t0), -1)
        last = self.last.reshape(len(t0), -1)
        start = t0[hit]
        purged = (start >= 0) & ~(wids[hit] > ((now - start) // self.window_ms - self.samples)[:, None]).any(axis=1)
        if self.overlapping:  # 3.8+: the window just before the retained ones holds on while its record is young
            purged &= ~((now - last[hit]) < self.samples * self.window_ms).any(axis=1)
        if purged.any():  # nothing recorded for a whole retention: the sensor starts again with this byte
            gone = hit[purged]
            t0[gone], wids[gone], window_bytes[gone], last[gone] = -1, -1, 0.0, -1
            start = t0[hit]
        if (start < 0).any():
            start = np.where(start < 0, now, start)
            t0[hit] = start
        wid = (now - start) // self.window_ms
        slot = wid % wids.shape[1]
        stale = wids[hit, slot] != wid
        if stale.any():
            window_bytes[hit[stale], slot[stale]] = 0
            wids[hit, slot] = wid
        window_bytes[hit, slot] += bytes_qb.reshape(-1)[hit]
        last[hit, slot] = now

    def reset_broker(self, b: int) -> None:
        """A restarted broker's sensors are gone (process state)."""
        self.t0[:, b] = -1
        self.wid[:, b] = -1
        self.last[:, b] = -1
        self.bytes[:, b] = 0

    # ------------------------------------------------------------------ the grid
    def classes(self, s: ClusterState, leader_mask: np.ndarray, lb: np.ndarray, rbi: np.ndarray) -> QuotaClasses:
        """Which fetches each quota row counts (§5.1 lists, §5.2 KIP-542), cached until the layout or configs change.

        ``lb`` is each partition's leader broker index and ``rbi`` each replica's broker index (0 for
        offline partitions and empty slots, for gathers). KIP-542 counts an adding replica's traffic
        against the reassignment quotas of brokers that have one, everything else against KIP-73's.
        """
        key = (s.layout_version, self._configs)
        if self._classes is not None and self._classes_key == key:
            return self._classes
        leader_listed = np.take_along_axis(self.leader_listed, np.maximum(s.lslot, 0)[:, None], axis=1)[:, 0]
        leader_listed = leader_listed & (s.lslot >= 0)
        follower = (s.rbi >= 0) & ~leader_mask
        if self.kip542:
            reassignment = quota.kip542_is_reassignment_traffic(s.adding)
            rea_l = reassignment & np.isfinite(self.limit_bps[LEADER_REASSIGNMENT])[lb][:, None]
            rea_f = reassignment & np.isfinite(self.limit_bps[FOLLOWER_REASSIGNMENT])[rbi]
        else:
            rea_l = rea_f = np.zeros_like(s.adding)
        masks = (~rea_l & leader_listed[:, None] & follower, ~rea_f & self.follower_listed & follower,
                 rea_l & follower, rea_f & follower)
        flat = tuple(np.flatnonzero(m) for m in masks)
        leader = np.broadcast_to(lb[:, None], rbi.shape).reshape(-1)
        owner = tuple((leader if q in LEADER_SIDE else rbi.reshape(-1))[f] for q, f in enumerate(flat))
        n_b = self.limit_bps.shape[1]
        self._classes = QuotaClasses(
            masks, flat, owner, rows=tuple(q for q, f in enumerate(flat) if len(f)), all_flat=np.concatenate(flat),
            all_key=np.concatenate([q * n_b + o for q, o in enumerate(owner)]),
            follower_side=np.concatenate([np.full(len(f), q not in LEADER_SIDE) for q, f in enumerate(flat)]))
        self._classes_key = key
        return self._classes

    def throttle(self, now: int, tick_ms: int, s: ClusterState, leader_mask: np.ndarray, lb: np.ndarray,
                 rbi: np.ndarray) -> Throttle:
        """Which fetches the quotas hold back this tick (§5.1 not-in-ISR rule, §5.2 KIP-542 classes), and each
        quota's room over the tick (:meth:`_room_bytes`); the windows are read once for both instants.

        A quota over its limit holds its fetches back for the whole tick only if its rate is still over
        at the tick's end: Kafka waits only until the rate falls back, so a quota exceeded at ``now``
        but not at the end lets the fetches move the room that is left. (Holding them for the whole
        tick made a quota-bound move 5-10% too long at 1 s ticks, docs/semantics.md §5.1.)"""
        classes = self.classes(s, leader_mask, lb, rbi)
        total, oldest = self._retained(np.array([now, now + tick_ms]))
        exceeded_now = self._exceeded(total[0], oldest[0], now)
        exceeded = exceeded_now & self._exceeded(total[1], oldest[1], now + tick_ms)
        room = self._room_bytes(total[1], oldest[1], now, now + tick_ms, exceeded_now)
        held_leader, held_follower = np.zeros(leader_mask.shape, dtype=bool), np.zeros(leader_mask.shape, dtype=bool)
        if exceeded.any():
            hold = quota.throttle_holds_back(True, exceeded.reshape(-1)[classes.all_key],
                                             s.in_isr.reshape(-1)[classes.all_flat])
            side = classes.follower_side[hold]
            held = classes.all_flat[hold]
            held_leader.reshape(-1)[held[~side]] = True
            held_follower.reshape(-1)[held[side]] = True
        return Throttle(held_leader, held_follower, classes, room)

    def cap_to_room(self, want: np.ndarray, throttle: Throttle, in_isr: np.ndarray) -> bool:
        """Scale down, in place, the bytes [P, S] that throttled out-of-sync fetches ``want`` this tick so that
        each broker's quota moves no more than its room; in-sync replicas are never held back (§5.1), and
        their bytes of the same tick count against the quota first, as Kafka records them fetch by fetch.
        Returns whether any fetch was scaled."""
        classes = throttle.classes
        room = throttle.room_bytes
        n_b = self.limit_bps.shape[1]
        flat_want, flat_isr = want.reshape(-1), in_isr.reshape(-1)
        scaled = False
        for q in classes.rows:
            if not np.isfinite(room[q]).any():
                continue
            f = classes.flat[q]
            out = ~flat_isr[f]
            if not out.any():
                continue
            capped, owner = f[out], classes.owner[q][out]
            asked_bytes = flat_want[capped]
            asked = np.bincount(owner, weights=asked_bytes, minlength=n_b)
            in_sync = np.bincount(classes.owner[q][~out], weights=flat_want[f[~out]], minlength=n_b)
            scale = np.minimum(1.0, np.maximum(room[q] - in_sync, 0.0) / np.maximum(asked, 1.0))
            if (scale < 1.0).any():
                flat_want[capped] = asked_bytes * scale[owner]
                scaled = True
        return scaled

    def record_moved(self, throttle: Throttle, moved_bytes: np.ndarray, now: int) -> None:
        """Bytes moved this tick against the quota of each throttled fetch (in sync or not, §5.1, A14)."""
        classes = throttle.classes
        cells = self.t0.size  # one bincount over [quota row, broker]: each cell sums its fetches in grid order
        bytes_qb = np.bincount(classes.all_key, weights=moved_bytes.reshape(-1)[classes.all_flat], minlength=cells)
        self._record(bytes_qb.reshape(self.t0.shape), now)
