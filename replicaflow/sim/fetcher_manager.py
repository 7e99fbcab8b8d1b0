"""Kafka's ReplicaFetcherManager for every broker at once: who fetches from whom, how much, the `fetchers` table.

Each follower replica is fetched by the thread (follower broker, leader broker, fetcher id) (§4).
One fetch round per tick carries ``max(1, tick / fetch_rtt)`` round trips' worth of data: 1 MiB per
partition (``replica.fetch.max.bytes``) and 10 MiB per response (``replica.fetch.response.max.bytes``)
each; a response over its cap or a broker over its network capacity scales every share down
proportionally (docs/simulator.md). The leader sees one fetch per tick, at the follower's
pre-append log end offset.

The manager also keeps the fetcher failures of §4: KIP-461 failed partitions (2.3+) and, up to
2.2, dead threads, which stop every partition of the thread until the broker restarts.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from replicaflow.model import quota
from replicaflow.model.configs import FETCH_MAX_BYTES, FETCH_RESPONSE_MAX_BYTES
from replicaflow.model.rows import repeat_slots
from replicaflow.model.version import KafkaVersion
from replicaflow.sim.emitter import Emitter
from replicaflow.sim.quota_manager import ReplicationQuotaManager, Throttle
from replicaflow.sim.scenario import KafkaSpec
from replicaflow.sim.state import FETCH_ADDED, FETCH_FAILED, FETCH_NONE, FETCH_REMOVED, ClusterState

# traffic rows of ClusterState.traffic, in TRAFFIC_METRICS order
REPLICATION_IN, REPLICATION_OUT, REASSIGNMENT_IN, REASSIGNMENT_OUT = range(4)



def rounds_per_tick(tick_ms: int, fetch_rtt_ms: int) -> int:
    """Fetch round trips one tick's fetch carries (``replica.fetch.max.bytes`` each): ``tick / fetch_rtt``, at least 1."""
    return max(1, tick_ms // max(1, fetch_rtt_ms))

class Topology(NamedTuple):
    """What changes only with leaders, assignments, broker states and fetcher failures (cached between changes)."""

    leader_mask: np.ndarray       # [P, S] the leader slot
    leader_bi: np.ndarray         # [P] leader broker index, -1 offline
    lb: np.ndarray                # [P] leader broker index, 0 for offline (for gathers)
    leader_up: np.ndarray         # [P] a leader that is up: it takes writes and answers fetches
    rbi: np.ndarray               # [P, S] replica broker index, 0 for empty slots (for gathers)
    fetch_ok: np.ndarray          # [P, S] followers that fetch unless stalled or throttled
    fetch_everywhere: bool        # every slot is a leader or a fetching follower: nothing to mask
    stalls: bool                  # some follower has been stalled (stall_until is set): mask by time
    thread: np.ndarray            # [P·S] fetcher thread (follower, leader, fetcher id) of each slot
    leader_flat: np.ndarray       # [P] flat index of the leader slot (slot 0 of offline partitions)
    adding_flat: np.ndarray       # flat indices of the adding replicas (KIP-542 reassignment traffic, §5.2)
    adding_bi: np.ndarray         # their broker index and their leader's, for the reassignment meters
    adding_lb: np.ndarray
    leader_down: np.ndarray       # partitions without a live leader
    offline: np.ndarray           # partitions without a leader


class FetchRound(NamedTuple):
    """One tick's fetches: who fetched (the leader records it) and how many messages each got."""

    fetched: np.ndarray           # [P, S] fetches the leader sees (§1.1 bookkeeping)
    msgs: np.ndarray              # [P, S] messages each follower appends
    leader_leo_grid: np.ndarray   # [P, S] the leader's log end offset in every slot
    throttle: Throttle | None     # the quotas' decision, None when no quota is set


class ReplicaFetcherManager:
    """The fetch topology, the fetch round, its byte accounting, fetcher failures and the `fetchers` rows."""

    def __init__(self, state: ClusterState, kafka: KafkaSpec, tick_ms: int, quotas: ReplicationQuotaManager,
                 emit: Emitter, version: KafkaVersion):
        s = state
        self.s, self.quotas, self.emit = s, quotas, emit
        # 2.3+ (KIP-461) a partition out of the thread is in the failed set; 2.1 – 2.2 a fenced one is just removed
        self.out_of_thread = FETCH_FAILED if version.fetcher_failure_isolated else FETCH_REMOVED
        self.response_max_bytes = FETCH_RESPONSE_MAX_BYTES if version.fetch_response_capped else np.inf
        self.tick_ms = tick_ms
        self.num_fetchers = kafka.num_replica_fetchers
        self.rounds = rounds_per_tick(tick_ms, kafka.fetch_rtt_ms)
        self.dead_threads: set[tuple[int, int, int]] = set()  # (follower, leader, fetcher id) broker indices
        self._topo: Topology | None = None
        self._topo_version = -1
        self._synced: Topology | None = None  # the Topology the `fetchers` rows were last synced to
        self._msg_grid = repeat_slots(s.msg_size, s.slots)
        self._cap_msgs = repeat_slots((FETCH_MAX_BYTES * self.rounds) // s.msg_size, s.slots)
        # per-tick [P, S] work arrays, reused: fresh megabyte temporaries cost page faults whenever the heap shrinks
        self._w_leader_leo = np.empty_like(s.log_leo)
        self._w_msgs = np.empty_like(s.log_leo)
        self._w_bytes = np.empty_like(s.log_leo)
        self._w_bytes_f = np.empty(s.rbi.shape, dtype=np.float64)

    # ------------------------------------------------------------------ topology
    def topology(self) -> Topology:
        """The cached Topology, rebuilt when the state's layout version moved."""
        s = self.s
        if self._topo is None or self._topo_version != s.layout_version:
            s.log_leo = np.ascontiguousarray(s.log_leo)  # produce appends through a flat view
            leader_mask = s.leader_mask()
            leader_bi = s.leader_bi()
            lb = np.maximum(leader_bi, 0).astype(np.intp)
            leader_up = (s.lslot >= 0) & s.up[lb]
            rbi = np.maximum(s.rbi, 0)
            fetch_ok = ((s.rbi >= 0) & ~leader_mask & s.up[rbi] & leader_up[:, None] & ~s.failed & ~s.thread_dead
                        & ~s.offline_replica)
            n_b, nf = s.n_brokers, self.num_fetchers
            thread = ((rbi * n_b + lb[:, None]) * nf + s.fid[:, None]).ravel().astype(np.intp)
            leader_flat = np.arange(s.n_partitions) * s.slots + np.maximum(s.lslot, 0)
            adding_flat = np.flatnonzero(quota.kip542_is_reassignment_traffic(s.adding))
            self._topo = Topology(
                leader_mask=leader_mask, leader_bi=leader_bi, lb=lb, leader_up=leader_up, rbi=rbi, fetch_ok=fetch_ok,
                fetch_everywhere=bool((fetch_ok | leader_mask).all()), stalls=bool((s.stall_until > 0).any()),
                thread=thread, leader_flat=leader_flat, adding_flat=adding_flat, adding_bi=rbi.reshape(-1)[adding_flat],
                adding_lb=lb[adding_flat // s.slots], leader_down=np.nonzero(~leader_up)[0],
                offline=np.nonzero(s.lslot < 0)[0])
            self._topo_version = s.layout_version
        return self._topo

    # ------------------------------------------------------------------ the fetch round
    def fetch(self, now: int, topo: Topology, leader_leo: np.ndarray, produce_in: np.ndarray) -> FetchRound:
        """Every follower that can fetch asks for what its leader has beyond its LEO (§1.1, §4, §5).

        The leader records the fetches in ``fetched`` and sends data to the ``served`` ones; a throttled
        replica that is not in the ISR gets nothing while its quota is exceeded. Reuses the ``_w_*`` arrays.
        """
        s = self.s
        fetch_ok = topo.fetch_ok & (s.stall_until <= now) if topo.stalls else topo.fetch_ok
        fetched = served = fetch_ok
        throttle = None
        if self.quotas.active:
            throttle = self.quotas.throttle(now, self.tick_ms, s, topo.leader_mask, topo.lb, topo.rbi)
            fetched = fetch_ok & ~throttle.held_follower
            served = fetched & ~throttle.held_leader
        leader_leo_grid = repeat_slots(leader_leo, s.slots, out=self._w_leader_leo)
        avail = np.subtract(leader_leo_grid, s.log_leo, out=self._w_msgs)
        np.maximum(avail, 0, out=avail)
        if topo.stalls or throttle is not None or not topo.fetch_everywhere:
            np.putmask(avail, ~served, 0)  # (else only leader slots don't fetch, and they have nothing available)
        want = np.multiply(avail, self._msg_grid, out=self._w_bytes)
        np.minimum(want, FETCH_MAX_BYTES * self.rounds, out=want)
        np.copyto(self._w_bytes_f, want)
        roomed = throttle is not None and self.quotas.cap_to_room(self._w_bytes_f, throttle, s.in_isr)
        granted = self._share(self._w_bytes_f, topo, produce_in)
        if granted is None and roomed:  # whole messages: a fetch returns at least one (KIP-74)
            granted = np.ceil(self._w_bytes_f).astype(np.int64)
            msgs = np.minimum(-(-granted // self._msg_grid), avail, out=avail)
        elif granted is None:  # want // msg_size, without the division (min(a·m, C) // m == min(a, C // m))
            msgs = np.minimum(avail, self._cap_msgs, out=avail)
        else:
            msgs = np.minimum(granted // self._msg_grid, avail, out=avail)
        return FetchRound(fetched, msgs, leader_leo_grid, throttle)

    def append(self, fetch: FetchRound, topo: Topology, now: int) -> None:
        """Followers append what they got; the bytes count against the quotas and the traffic meters (§3, A14)."""
        s = self.s
        s.log_leo += fetch.msgs
        n_b = s.n_brokers
        moved = self._w_bytes_f
        np.copyto(moved, np.multiply(fetch.msgs, self._msg_grid, out=self._w_bytes))
        if fetch.throttle is not None:
            self.quotas.record_moved(fetch.throttle, moved, now)
        _, inbound, outbound = self._sums(moved, topo)
        s.traffic[REPLICATION_IN] += inbound.astype(np.int64)
        s.traffic[REPLICATION_OUT] += outbound.astype(np.int64)
        if len(topo.adding_flat):
            add = moved.reshape(-1)[topo.adding_flat]
            s.traffic[REASSIGNMENT_IN] += np.bincount(topo.adding_bi, weights=add, minlength=n_b).astype(np.int64)
            s.traffic[REASSIGNMENT_OUT] += np.bincount(topo.adding_lb, weights=add, minlength=n_b).astype(np.int64)

    def _share(self, want: np.ndarray, topo: Topology, produce_in: np.ndarray) -> np.ndarray | None:
        """Grant each fetch its share of the response cap and of both brokers' network capacity.

        ``want`` is in bytes (float). Returns the granted bytes, or None when no cap binds (every
        fetch gets what it wants: each scale below would be exactly 1).
        """
        s = self.s
        dt = self.tick_ms
        per_thread, inbound, outbound = self._sums(want, topo)
        cap = self.response_max_bytes * self.rounds
        room_in = np.maximum(s.net_in_bps * dt / 1000.0 - produce_in, 0.0)
        room_out = s.net_out_bps * dt / 1000.0
        if (per_thread <= cap).all() and (inbound <= room_in).all() and (outbound <= room_out).all():
            return None
        scale = np.minimum(1.0, cap / np.maximum(per_thread, 1.0))[topo.thread].reshape(want.shape)
        scale_in = np.minimum(1.0, room_in / np.maximum(inbound, 1.0))
        scale_out = np.minimum(1.0, room_out / np.maximum(outbound, 1.0))
        scale = np.minimum(scale, np.minimum(scale_in[topo.rbi], scale_out[topo.lb][:, None]))
        return np.floor(want * scale).astype(np.int64)

    def _sums(self, grid: np.ndarray, topo: Topology) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Sums of a float [P, S] byte grid per fetcher thread, per follower broker and per leader broker.

        One bincount per thread; the broker sums fold the (follower, leader, fetcher) cube. That is
        exact: every entry is a whole number of bytes ≤ FETCH_MAX_BYTES·rounds, and float64 sums of
        integers are exact in any order below 2**53 bytes per tick (petabytes).
        """
        n_b, nf = self.s.n_brokers, self.num_fetchers
        per_thread = np.bincount(topo.thread, weights=grid.reshape(-1), minlength=n_b * n_b * nf)
        cube = per_thread.reshape(n_b, n_b, nf)
        return per_thread, cube.sum(axis=(1, 2)), cube.sum(axis=(0, 2))

    # ------------------------------------------------------------------ fetcher failures (§4)
    def mark_failed(self, p: int, slot: int) -> None:
        """KIP-461: the partition is failed on that follower until the leader epoch changes or it restarts. On
        2.1 – 2.2 a fenced partition leaves the thread the same way, outside any failed set (§4)."""
        self.s.failed[p, slot] = True
        self.s.layout_changed()

    def thread_died(self, follower: int, leader: int, fetcher_id: int) -> None:
        """≤ 2.2: the thread (follower, leader, fetcher id) died; its partitions stop until the broker restarts."""
        self.dead_threads.add((follower, leader, fetcher_id))
        self.refresh_dead_threads()

    def refresh_dead_threads(self) -> None:
        """Mark every replica whose (follower, current leader, fetcher id) thread is dead."""
        s = self.s
        s.thread_dead[:] = False
        s.layout_changed()
        if not self.dead_threads:
            return
        leader = s.leader_bi()
        for f, lead, fid in self.dead_threads:
            s.thread_dead |= (s.rbi == f) & ((leader == lead) & (s.fid == fid))[:, None]

    def broker_restarted(self, b: int) -> None:
        """Failed partitions and dead threads are process state: a restart clears them."""
        s = self.s
        s.failed[s.rbi == b] = False
        self.dead_threads = {k for k in self.dead_threads if k[0] != b}
        self.refresh_dead_threads()

    # ------------------------------------------------------------------ the fetchers table (§4)
    def stop_replicas(self, p: int, slots: list[int], now: int) -> None:
        """StopReplica for the dropped replicas ``slots`` of ``p``: those with a fetcher leave it."""
        s = self.s
        fetching = [slot for slot in slots
                    if s.fetch_state[p, slot] in (FETCH_ADDED, FETCH_FAILED) and s.up[s.rbi[p, slot]]]
        if fetching:
            self.emit.replicas_stopped(p, fetching, now)

    def sync(self, now: int) -> None:
        """Announce a `fetchers` row wherever a live follower's fetch state or leader changed.

        The wanted state follows from the Topology alone, so a sync under an unchanged Topology finds nothing.
        """
        topo = self.topology()
        if self._synced is topo:
            return
        self._synced = topo
        s = self.s
        leader_bi = topo.leader_bi
        follower = (s.rbi >= 0) & ~topo.leader_mask
        fetching = follower & (leader_bi >= 0)[:, None] & ~s.offline_replica
        desired = np.where(fetching & s.failed, self.out_of_thread, np.where(fetching, FETCH_ADDED, FETCH_REMOVED))
        desired = np.where((desired == FETCH_REMOVED) & (s.fetch_state == FETCH_NONE), FETCH_NONE, desired)
        lead = np.broadcast_to(leader_bi[:, None], s.rbi.shape)
        alive = s.up[np.maximum(s.rbi, 0)] & (s.rbi >= 0)
        changed = alive & ((desired != s.fetch_state) | ((desired == FETCH_ADDED) & (lead != s.fetch_leader)))
        if not changed.any():
            return
        ps, sl = np.nonzero(changed)
        actions = desired[ps, sl]
        leaders = np.where(lead[ps, sl] >= 0, s.broker_ids[np.maximum(lead[ps, sl], 0)], -1)
        self.emit.fetchers_changed(ps, sl, actions, leaders, now, by_manager=~(fetching & s.failed)[ps, sl])
        s.fetch_state[ps, sl] = actions
        s.fetch_leader[ps, sl] = lead[ps, sl]
