"""Kafka's ReplicationQuotaManager for every broker at once: sampled windows, "exceeded", record (§5).

Four quota types per broker, in the order of ``model.configs.QUOTA_RATES``: leader and follower
replication (KIP-73) and leader and follower reassignment (KIP-542). Each keeps Kafka's sampled
``Rate``: ``quota_window_samples`` windows of ``quota_window_ms``, aligned to the first byte
recorded (Kafka creates the sensor on first use). The rules themselves — the rate, "strictly
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


class Throttle(NamedTuple):
    """One tick's throttle decision over the [P, S] grid."""

    held_leader: np.ndarray       # the leader answers the fetch with no data (§5.1, leader side)
    held_follower: np.ndarray     # the follower leaves the partition out of its request (follower side)
    classes: tuple                # per quota row, the [P, S] fetches its bytes are recorded against


class ReplicationQuotaManager:
    """The quota windows of every broker, the limits and throttled-replica lists the configs set."""

    def __init__(self, n_brokers: int, window_ms: int, samples: int, kip542: bool):
        self.window_ms, self.samples, self.kip542 = window_ms, samples, kip542
        n_q = len(QUOTA_RATES)
        self.limit_bps = np.full((n_q, n_brokers), np.inf)
        self.leader_listed: np.ndarray | None = None    # [P, S] replicas in leader.replication.throttled.replicas
        self.follower_listed: np.ndarray | None = None  # [P, S] ... follower.replication.throttled.replicas
        self.t0 = np.full((n_q, n_brokers), -1, dtype=np.int64)             # sensor start, -1 not created
        self.bytes = np.zeros((n_q, n_brokers, samples), dtype=np.float64)  # bytes per window slot
        self.wid = np.full((n_q, n_brokers, samples), -1, dtype=np.int64)   # window id held by each slot

    # ------------------------------------------------------------------ what the configs set
    def update_quota(self, limit_bps: np.ndarray) -> None:
        """[quota row, broker] limits in bytes/s; inf = unlimited."""
        self.limit_bps = limit_bps

    def mark_throttled(self, leader_listed: np.ndarray, follower_listed: np.ndarray) -> None:
        self.leader_listed, self.follower_listed = leader_listed, follower_listed

    @property
    def active(self) -> bool:
        """Some broker has a finite quota: the tick must ask who is throttled."""
        return bool(np.isfinite(self.limit_bps).any())

    # ------------------------------------------------------------------ the sampled rate
    def _retained(self, now: int) -> tuple[np.ndarray, np.ndarray]:
        """[quota row, broker] bytes in the windows retained at ``now``, and the oldest one's start."""
        win, n = self.window_ms, self.samples
        wid = np.where(self.t0 >= 0, (now - self.t0) // win, 0)
        valid = (self.wid > (wid - n)[..., None]) & (self.wid >= 0)
        return (self.bytes * valid).sum(axis=-1), quota.oldest_window_start_ms(now, self.t0, win, n)

    def rates_bps(self, now: int) -> np.ndarray:
        """[quota row, broker] the sampled rate Kafka's quota sees at ``now`` (0 before the sensor exists)."""
        total, oldest = self._retained(now)
        return np.where(self.t0 >= 0, quota.rate_bps(total, oldest, now, self.window_ms), 0.0)

    def exceeded(self, now: int) -> np.ndarray:
        """[quota row, broker] the quota's rate is strictly above its limit (§5.1, A11)."""
        total, oldest = self._retained(now)
        rate = quota.rate_bps(total, oldest, now, self.window_ms)
        return (self.t0 >= 0) & quota.quota_exceeded(rate, self.limit_bps)

    def room_bytes(self, now: int, tick_ms: int) -> np.ndarray:
        """[quota row, broker] bytes the throttled fetches of one tick may move (§5.1, Kafka's bound).

        Kafka checks the quota before every fetch, many times a tick: fetches go on until the rate
        passes the limit, and the last one overshoots by at most one fetch (``replica.fetch.max.bytes``).
        So a tick may move what brings the rate at its end up to the limit, plus that one fetch — not a
        tick's worth of fetches, which would make the achieved rate depend on the step
        (``quota.room_bytes``). Unlimited quotas have infinite room.
        """
        end = now + tick_ms
        total, oldest = self._retained(end)
        total = np.where(self.t0 >= 0, total, 0.0)
        oldest = np.where(self.t0 >= 0, oldest, now)
        return quota.room_bytes(total, oldest, end, self.window_ms, self.limit_bps, FETCH_MAX_BYTES)

    def record(self, q: int, bytes_by_broker: np.ndarray, now: int) -> None:
        """Add each broker's bytes to quota row ``q``'s current window (creating the sensor on first use)."""
        win, n = self.window_ms, self.samples
        hit = bytes_by_broker > 0
        self.t0[q] = np.where(hit & (self.t0[q] < 0), now, self.t0[q])
        bs = np.nonzero(hit)[0]
        if len(bs) == 0:
            return
        wid = (now - self.t0[q, bs]) // win
        slot = wid % n
        stale = self.wid[q, bs, slot] != wid
        self.bytes[q, bs[stale], slot[stale]] = 0
        self.wid[q, bs, slot] = wid
        self.bytes[q, bs, slot] += bytes_by_broker[bs]

    def reset_broker(self, b: int) -> None:
        """A restarted broker's sensors are gone (process state)."""
        self.t0[:, b] = -1
        self.wid[:, b] = -1
        self.bytes[:, b] = 0

    # ------------------------------------------------------------------ the grid
    def throttle(self, now: int, s: ClusterState, leader_mask: np.ndarray, lb: np.ndarray,
                 rbi: np.ndarray) -> Throttle:
        """Which fetches the quotas hold back this tick (§5.1 not-in-ISR rule, §5.2 KIP-542 classes).

        ``lb`` is each partition's leader broker index and ``rbi`` each replica's broker index (0 for
        offline partitions and empty slots, for gathers). KIP-542 counts an adding replica's traffic
        against the reassignment quotas of brokers that have one, everything else against KIP-73's.
        """
        exceeded = self.exceeded(now)
        leader_listed = np.take_along_axis(self.leader_listed, np.maximum(s.lslot, 0)[:, None], axis=1)[:, 0]
        leader_listed = leader_listed & (s.lslot >= 0)
        follower = (s.rbi >= 0) & ~leader_mask
        if self.kip542:
            reassignment = quota.kip542_is_reassignment_traffic(s.adding)
            rea_l = reassignment & np.isfinite(self.limit_bps[LEADER_REASSIGNMENT])[lb][:, None]
            rea_f = reassignment & np.isfinite(self.limit_bps[FOLLOWER_REASSIGNMENT])[rbi]
        else:
            rea_l = rea_f = np.zeros_like(s.adding)
        rep_l = ~rea_l & leader_listed[:, None] & follower
        rep_f = ~rea_f & self.follower_listed & follower
        rea_l = rea_l & follower
        rea_f = rea_f & follower
        held_leader = (quota.throttle_holds_back(rep_l, exceeded[LEADER_REPLICATION][lb][:, None], s.in_isr)
                       | quota.throttle_holds_back(rea_l, exceeded[LEADER_REASSIGNMENT][lb][:, None], s.in_isr))
        held_follower = (quota.throttle_holds_back(rep_f, exceeded[FOLLOWER_REPLICATION][rbi], s.in_isr)
                         | quota.throttle_holds_back(rea_f, exceeded[FOLLOWER_REASSIGNMENT][rbi], s.in_isr))
        return Throttle(held_leader, held_follower, (rep_l, rep_f, rea_l, rea_f))

    def cap_to_room(self, want: np.ndarray, throttle: Throttle, in_isr: np.ndarray, lb: np.ndarray,
                    rbi: np.ndarray, now: int, tick_ms: int) -> bool:
        """Scale down, in place, the bytes [P, S] that throttled out-of-sync fetches ``want`` this tick so that
        each broker's quota moves no more than its room; in-sync replicas are never held back (§5.1).
        Returns whether any fetch was scaled."""
        room = self.room_bytes(now, tick_ms)
        n_b = self.limit_bps.shape[1]
        leader = np.broadcast_to(lb[:, None], want.shape)
        scaled = False
        for q, mask in enumerate(throttle.classes):
            if not np.isfinite(room[q]).any():
                continue
            capped = mask & ~in_isr & (want > 0)
            if not capped.any():
                continue
            owner = leader if q in LEADER_SIDE else rbi
            asked = np.bincount(owner[capped], weights=want[capped], minlength=n_b)
            scale = np.minimum(1.0, room[q] / np.maximum(asked, 1.0))
            if (scale < 1.0).any():
                want[capped] *= scale[owner[capped]]
                scaled = True
        return scaled

    def record_moved(self, throttle: Throttle, moved_bytes: np.ndarray, lb: np.ndarray, rbi: np.ndarray,
                     now: int) -> None:
        """Bytes moved this tick against the quota of each throttled fetch (in sync or not, §5.1, A14)."""
        n_b = self.limit_bps.shape[1]
        leader = np.broadcast_to(lb[:, None], moved_bytes.shape)
        for q, mask in enumerate(throttle.classes):
            if mask.any():
                owner = leader if q in LEADER_SIDE else rbi
                self.record(q, np.bincount(owner[mask], weights=moved_bytes[mask], minlength=n_b), now)
