"""The cluster as NumPy arrays: replicas are a [partitions, slots] grid, brokers are indices.

A partition's replicas occupy the first slots of its row in assignment order; a reassignment may
add slots (up to ``slots`` = the largest |origin ∪ target| the scenario can produce). Broker ids
are mapped to indices 0..B-1 so per-broker sums are ``np.bincount`` calls. Two views of a follower
are kept apart, as in Kafka: ``log_leo`` is the replica's own log end offset, ``v_*`` is what the
leader remembers about it (docs/semantics.md §1.1).

Every module of ``replicaflow.sim`` works on this one state; what a module keeps for itself (quota
windows, cached views, timers) lives in that module.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from replicaflow.errors import ReplicaflowError
from replicaflow.model.fetcher import fetcher_ids, java_string_hash
from replicaflow.model.isr import UNKNOWN_OFFSET
from replicaflow.model.log_dirs import initial_log_dirs
from replicaflow.sim.scenario import Scenario

NEVER = np.iinfo(np.int64).max
FETCH_NONE, FETCH_ADDED, FETCH_FAILED, FETCH_REMOVED = 0, 1, 2, 3
FETCH_ACTIONS = {FETCH_ADDED: "added", FETCH_FAILED: "failed", FETCH_REMOVED: "removed"}
STATE_UP, STATE_DOWN, STATE_SHUTTING_DOWN = "up", "down", "shutting_down"
# The [P, S] arrays that travel with their replica when a partition's row is re-laid, and the value of a new replica.
FRESH_REPLICA = {"rbi": -1, "log_leo": 0, "v_leo": UNKNOWN_OFFSET, "v_lfl": 0, "v_lft": 0, "v_lcu": 0,
                 "in_isr": False, "adding": False, "removing": False, "failed": False, "thread_dead": False,
                 "stall_until": 0, "fetch_state": FETCH_NONE, "fetch_leader": -1, "pending_isr": False,
                 "elr": False, "last_known_elr": False, "log_dir": -1, "offline_replica": False}


@dataclass
class Reassignment:
    """One ongoing partition reassignment (KIP-455): origin and target broker indices."""

    origin: list[int]
    target: list[int]


@dataclass
class ClusterState:
    # --- static layout ---
    broker_ids: np.ndarray            # [B] Kafka broker ids
    topics: list[str]                 # topic names, index = topic_idx
    topic_idx: np.ndarray             # [P]
    pnum: np.ndarray                  # [P] partition number within its topic
    msg_size: np.ndarray              # [P] bytes per message
    fid: np.ndarray                   # [P] fetcher thread index (same on every follower broker)
    slots: int
    # --- replicas [P, S] ---
    rbi: np.ndarray                   # broker index or -1
    log_leo: np.ndarray               # the replica's own log end offset
    v_leo: np.ndarray                 # leader's view: follower LEO (-1 unknown)
    v_lfl: np.ndarray                 # leader's view: lastFetchLeaderLogEndOffset
    v_lft: np.ndarray                 # leader's view: lastFetchTimeMs
    v_lcu: np.ndarray                 # leader's view: lastCaughtUpTimeMs
    in_isr: np.ndarray
    adding: np.ndarray
    removing: np.ndarray
    failed: np.ndarray                # KIP-461 failed partition on that follower
    thread_dead: np.ndarray           # ≤ 2.2: the follower's fetcher thread died
    stall_until: np.ndarray           # follower stops fetching until this time (stuck follower)
    fetch_state: np.ndarray           # last `fetchers` action written for the replica
    fetch_leader: np.ndarray          # leader broker index of that `fetchers` row, -1 none
    pending_isr: np.ndarray           # proposed ISR of an AlterPartition in flight
    elr: np.ndarray                   # eligible leader replicas (KIP-966, docs/semantics.md §6)
    last_known_elr: np.ndarray        # replicas that left the ISR/ELR while under min ISR (KIP-966)
    log_dir: np.ndarray               # index of the replica's directory in its broker's log.dirs (-1 none)
    offline_replica: np.ndarray       # its directory failed (KIP-112): not served, cannot lead or fetch
    # --- partitions [P] ---
    lslot: np.ndarray                 # leader slot or -1 (no leader: offline)
    leader_epoch: np.ndarray
    partition_epoch: np.ndarray
    hw: np.ndarray
    epoch_start: np.ndarray           # leader LEO when its current epoch started (§1.4)
    produce_acc: np.ndarray           # fractional messages carried to the next tick
    base_rate: np.ndarray             # messages/ms from the topic's produce rate
    burst_rate: np.ndarray            # extra messages/ms during a produce burst
    burst_until: np.ndarray
    topic_min_isr: np.ndarray         # topic min.insync.replicas, -1 = not set
    pending_at: np.ndarray            # AlterPartition in flight: commit time, -1 none
    # --- brokers [B] ---
    up: np.ndarray
    log_dirs: list[tuple[str, ...]]   # each broker's log.dirs
    dir_offline: np.ndarray           # [B, D] that directory failed (KIP-112), until the broker restarts
    state: list[str]
    start_ms: np.ndarray              # process start (ISR check schedule, meter reset)
    net_in_bps: np.ndarray
    net_out_bps: np.ndarray
    base_net_in_bps: np.ndarray
    base_net_out_bps: np.ndarray
    shrinks: np.ndarray               # IsrShrinksPerSec count since process start
    unclean_meter: np.ndarray         # UncleanLeaderElectionsPerSec count of the broker as controller, since start
    expands: np.ndarray               # IsrExpandsPerSec count since process start
    traffic: np.ndarray               # [4, B] bytes this scrape interval (TRAFFIC_METRICS order)
    traffic_total: np.ndarray         # [4, B] the same meters' counts since process start
    # --- controller ---
    reassignments: dict[int, Reassignment] = field(default_factory=dict)
    # --- lookups and the layout version ---
    index: dict[int, int] = field(default_factory=dict)         # broker id → index
    topic_index: dict[str, int] = field(default_factory=dict)   # topic name → topic_idx
    layout_version: int = 0           # bumped whenever leaders, assignments or fetchability may have changed
    isr_version: int = 0              # bumped whenever an ISR is written outside a layout change

    @property
    def n_partitions(self) -> int:
        return len(self.pnum)

    @property
    def n_brokers(self) -> int:
        return len(self.broker_ids)

    def layout_changed(self) -> None:
        """Views derived from leaders, assignments and broker liveness (the fetch Topology) are stale."""
        self.layout_version += 1

    def isr_changed(self) -> None:
        """Views derived from the ISRs (with the layout: completed reassignments, producers' rejections) are stale."""
        self.isr_version += 1

    def leader_bi(self) -> np.ndarray:
        """Leader broker index per partition, -1 when offline."""
        has = self.lslot >= 0
        out = np.full(self.n_partitions, -1, dtype=np.int32)
        rows = np.nonzero(has)[0]
        out[rows] = self.rbi[rows, self.lslot[rows]]
        return out

    def leader_mask(self) -> np.ndarray:
        """[P, S] True on each partition's leader slot."""
        mask = np.zeros_like(self.in_isr)
        rows = np.nonzero(self.lslot >= 0)[0]
        mask[rows, self.lslot[rows]] = True
        return mask

    def leader_leo(self) -> np.ndarray:
        out = np.zeros(self.n_partitions, dtype=np.int64)
        rows = np.nonzero(self.lslot >= 0)[0]
        out[rows] = self.log_leo[rows, self.lslot[rows]]
        return out

    # --- names of things, for events and telemetry ---
    def broker_index(self, broker: int, where: str) -> int:
        if broker not in self.index:
            raise ReplicaflowError(f"{where}: unknown broker {broker}")
        return self.index[broker]

    def partition_row(self, topic: str, partition: int, where: str) -> int:
        if topic not in self.topic_index:
            raise ReplicaflowError(f"{where}: unknown topic '{topic}'")
        hit = np.nonzero((self.topic_idx == self.topic_index[topic]) & (self.pnum == partition))[0]
        if len(hit) == 0:
            raise ReplicaflowError(f"{where}: topic '{topic}' has no partition {partition}")
        return int(hit[0])

    def ids(self, bis) -> list[int]:
        return [int(self.broker_ids[b]) for b in bis]

    def replica_ids(self, p: int, mask: np.ndarray | None = None) -> list[int]:
        """Broker ids of partition ``p``'s replicas in assignment order (those under ``mask`` if given)."""
        row = self.rbi[p]
        keep = row >= 0 if mask is None else (row >= 0) & mask
        return self.ids(row[keep])

    def replica_sets(self, p: int) -> tuple[list[int], list[int], list[int]]:
        """Partition ``p``'s (replicas, adding, removing) in broker ids: what ``kafka-reassign-partitions`` reads."""
        return self.replica_ids(p), self.replica_ids(p, self.adding[p]), self.replica_ids(p, self.removing[p])

    def leader_id(self, p: int) -> int:
        slot = self.lslot[p]
        return -1 if slot < 0 else int(self.broker_ids[self.rbi[p, slot]])

    def tp(self, p: int) -> tuple[str, int]:
        return self.topics[self.topic_idx[p]], int(self.pnum[p])

    def replica_dirs(self, p: int) -> list[str]:
        """The directory of each of partition ``p``'s replicas, in assignment order (as ``replica_ids``)."""
        keep = self.rbi[p] >= 0
        return [self.log_dirs[b][d] for b, d in zip(self.rbi[p][keep], self.log_dir[p][keep], strict=True)]

    def logs_per_dir(self, b: int) -> np.ndarray:
        """[D] how many replicas broker ``b`` holds in each of its directories."""
        return np.bincount(self.log_dir[(self.rbi == b) & (self.log_dir >= 0)], minlength=self.dir_offline.shape[1])


def max_slots(scenario: Scenario) -> int:
    """The widest replica set any reassignment in the scenario can create (origin ∪ target)."""
    widest = max(t.replication_factor for t in scenario.topics)
    for event in scenario.events:
        if event.kind == "reassign":
            for move in event.partitions:
                origin = scenario.topic(move.topic).assignment[move.partition]
                widest = max(widest, len(set(origin) | set(move.replicas)))
    return widest


def initial_state(scenario: Scenario) -> ClusterState:
    """Every replica in sync at the start: logs hold the initial messages, HW = LEO, leader = first replica."""
    broker_ids = np.array(scenario.cluster.broker_ids, dtype=np.int32)
    index = {int(b): i for i, b in enumerate(broker_ids)}
    topics = [t.name for t in scenario.topics]
    rows = [(ti, p, t) for ti, t in enumerate(scenario.topics) for p in range(t.partitions)]
    n_p, slots = len(rows), max_slots(scenario)
    topic_idx = np.array([r[0] for r in rows], dtype=np.int32)
    pnum = np.array([r[1] for r in rows], dtype=np.int32)
    msg_size = np.array([r[2].message_size_bytes for r in rows], dtype=np.int64)
    base_rate = np.array([r[2].partition_rate_bps / r[2].message_size_bytes / 1000.0 for r in rows])
    initial = np.array([r[2].initial_messages for r in rows], dtype=np.int64)
    rbi = np.full((n_p, slots), -1, dtype=np.int32)
    for i, (_ti, p, t) in enumerate(rows):
        replicas = [index[b] for b in t.assignment[p]]
        rbi[i, : len(replicas)] = replicas
    assigned = rbi >= 0
    dirs = [b.log_dirs for b in scenario.cluster.brokers]
    n_dirs = np.array([len(d) for d in dirs], dtype=np.int64)
    log_dir = np.full((n_p, slots), -1, dtype=np.int16)
    log_dir[assigned] = initial_log_dirs(rbi[assigned], n_dirs)
    hashes = np.array([java_string_hash(name) for name in topics], dtype=np.int64)
    fid = fetcher_ids(hashes[topic_idx], pnum, scenario.kafka.num_replica_fetchers).astype(np.int32)
    start = scenario.start_ms
    log_leo = np.where(assigned, initial[:, None], 0).astype(np.int64)
    zeros_ps = np.zeros((n_p, slots), dtype=np.int64)
    min_isr = np.array([t.min_insync_replicas if t.min_insync_replicas is not None else -1 for _, _, t in rows],
                       dtype=np.int32)
    n_b = len(broker_ids)
    net_in = np.array([b.network_in_bps for b in scenario.cluster.brokers], dtype=np.float64)
    net_out = np.array([b.network_out_bps for b in scenario.cluster.brokers], dtype=np.float64)
    return ClusterState(
        broker_ids=broker_ids, topics=topics, topic_idx=topic_idx, pnum=pnum, msg_size=msg_size, fid=fid,
        slots=slots, rbi=rbi, log_leo=log_leo,
        v_leo=np.where(assigned, initial[:, None], -1).astype(np.int64),
        v_lfl=np.where(assigned, initial[:, None], 0).astype(np.int64),
        v_lft=np.where(assigned, start, 0).astype(np.int64),
        v_lcu=np.where(assigned, start, 0).astype(np.int64),
        in_isr=assigned.copy(), adding=np.zeros_like(assigned), removing=np.zeros_like(assigned),
        failed=np.zeros_like(assigned), thread_dead=np.zeros_like(assigned), stall_until=zeros_ps.copy(),
        fetch_state=np.zeros((n_p, slots), dtype=np.int8), fetch_leader=np.full_like(rbi, -1),
        pending_isr=np.zeros_like(assigned), elr=np.zeros_like(assigned), last_known_elr=np.zeros_like(assigned),
        log_dir=log_dir, offline_replica=np.zeros_like(assigned),
        lslot=np.zeros(n_p, dtype=np.int32), leader_epoch=np.zeros(n_p, dtype=np.int32),
        partition_epoch=np.zeros(n_p, dtype=np.int32), hw=initial.copy(), epoch_start=np.zeros(n_p, dtype=np.int64),
        produce_acc=np.zeros(n_p), base_rate=base_rate, burst_rate=np.zeros(n_p),
        burst_until=np.zeros(n_p, dtype=np.int64), topic_min_isr=min_isr,
        pending_at=np.full(n_p, -1, dtype=np.int64),
        up=np.ones(n_b, dtype=bool), log_dirs=dirs, dir_offline=np.zeros((n_b, int(n_dirs.max())), dtype=bool),
        state=[STATE_UP] * n_b, start_ms=np.full(n_b, start, dtype=np.int64),
        net_in_bps=net_in.copy(), net_out_bps=net_out.copy(), base_net_in_bps=net_in, base_net_out_bps=net_out,
        shrinks=np.zeros(n_b, dtype=np.int64), expands=np.zeros(n_b, dtype=np.int64),
        unclean_meter=np.zeros(n_b, dtype=np.int64),
        traffic=np.zeros((4, n_b), dtype=np.int64), traffic_total=np.zeros((4, n_b), dtype=np.int64),
        index=index, topic_index={name: i for i, name in enumerate(topics)},
    )
