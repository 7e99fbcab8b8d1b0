"""The replication engine: one vectorized tick advances every partition at once (SEMANTICS §1, §4, §5).

A tick at ``now`` covers ``(now - tick, now]``: due events and controller timers first, then
produce, one follower fetch round (with fetch caps, quotas and network shares), ISR expansion on
fetch, the ISR-expiration check of brokers whose ``lag/2`` timer fires, the high watermark, and
reassignment completion. Everything per replica is an array operation over the [partitions, slots]
grid; Python loops run only over the partitions an ISR/leader change touches (rare events).

Modelling choices where Kafka leaves room (docs/simulator.md):
- a tick carries ``max(1, tick / fetch_rtt)`` fetch round trips' worth of data (1 MiB per partition
  and 10 MiB per response each), but the leader sees one fetch per tick, at the follower's
  pre-append log end offset;
- a response over 10 MiB or a broker over its network capacity scales every partition's share
  proportionally;
- producers use acks=1 semantics (writes continue under min ISR; the HW freeze of 3.7 still applies).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from replicaflow.errors import ReplicaflowError
from replicaflow.model import isr as isr_rules
from replicaflow.model import predicates, quota
from replicaflow.model.fetcher import fetch_error_outcome
from replicaflow.model.metrics import TRAFFIC_METRICS, broker_metrics_for
from replicaflow.model.rows import repeat_slots, row_any, row_sum
from replicaflow.sim.scenario import Scenario
from replicaflow.sim.state import (
    FETCH_ACTIONS,
    FETCH_ADDED,
    FETCH_FAILED,
    FETCH_NONE,
    FETCH_REMOVED,
    NEVER,
    STATE_DOWN,
    STATE_SHUTTING_DOWN,
    STATE_UP,
    ClusterState,
    Reassignment,
    initial_state,
)

FETCH_MAX_BYTES = 1 << 20            # replica.fetch.max.bytes (§1.7)
FETCH_RESPONSE_MAX_BYTES = 10 << 20  # replica.fetch.response.max.bytes
DEFAULT_BROKER = "<default>"
# quota rows: leader / follower replication (KIP-73), leader / follower reassignment (KIP-542)
Q_LREP, Q_FREP, Q_LREA, Q_FREA = range(4)
QUOTA_CONFIGS = ("leader.replication.throttled.rate", "follower.replication.throttled.rate",
                 "leader.reassignment.throttled.rate", "follower.reassignment.throttled.rate")
LEADER_LIST, FOLLOWER_LIST = "leader.replication.throttled.replicas", "follower.replication.throttled.replicas"
# traffic rows: index into TRAFFIC_METRICS
T_REP_IN, T_REP_OUT, T_REA_IN, T_REA_OUT = range(4)
SLOT_ARRAYS = ("rbi", "log_leo", "v_leo", "v_lfl", "v_lft", "v_lcu", "in_isr", "adding", "removing", "failed",
               "thread_dead", "stall_until", "fetch_state", "fetch_leader", "pending_isr")


class Topology(NamedTuple):
    """What changes only with leaders, assignments, broker states and fetcher failures (cached between events)."""

    leader_mask: np.ndarray       # [P, S] the leader slot
    leader_bi: np.ndarray         # [P] leader broker index, -1 offline
    lb: np.ndarray                # [P] leader broker index, 0 for offline (for gathers)
    leader_up: np.ndarray         # [P] a leader that is up: it takes writes and answers fetches
    rbi: np.ndarray               # [P, S] replica broker index, 0 for empty slots (for gathers)
    fetch_ok: np.ndarray          # [P, S] followers that fetch unless stalled or throttled
    fetch_everywhere: bool        # every slot is a leader or a fetching follower: nothing to mask
    thread: np.ndarray            # [P·S] fetcher thread (follower, leader, fetcher id) of each slot
    leader_flat: np.ndarray       # [P] flat index of the leader slot (slot 0 of offline partitions)
    leader_down: np.ndarray       # partitions without a live leader
    offline: np.ndarray           # partitions without a leader


class IsrView(NamedTuple):
    """What changes only with the ISR and the topology (cached until the next ISR change or event)."""

    isr_full: bool                # every replica is in the ISR: no expansion, no caught-up outsiders
    members: np.ndarray | None    # [P, S] leader and ISR (§1.5); None when that is every slot
    outside: np.ndarray | None    # [P, S] live replicas outside the ISR; None when there are none
    freeze: np.ndarray            # [P] HW frozen: offline, or 3.7+ under min ISR (§1.5)


class Engine:
    """Owns the ClusterState and turns scenario events and ticks into telemetry, truth and log events."""

    def __init__(self, scenario: Scenario, writer, log_events: list | None = None):
        self.scenario = scenario
        self.version = scenario.version
        self.kafka = scenario.kafka
        self.writer = writer
        self.logs = log_events
        self.s: ClusterState = initial_state(scenario)
        s = self.s
        s.fetch_leader = np.full_like(s.rbi, -1)
        self.index = {int(b): i for i, b in enumerate(s.broker_ids)}
        self.topic_index = {name: i for i, name in enumerate(s.topics)}
        self.tick_ms = scenario.tick_ms
        self.rounds = max(1, scenario.tick_ms // max(1, self.kafka.fetch_rtt_ms))
        self.metrics = broker_metrics_for(self.version)
        self.traffic_names = [n for n in TRAFFIC_METRICS if any(m.short == n for m in self.metrics)]
        self.timers: list[tuple[int, int, str, tuple]] = []
        self._timer_seq = 0
        self.session_deadline = np.full(s.n_brokers, -1, dtype=np.int64)
        n_b, n_win = s.n_brokers, self.kafka.quota_window_samples
        self.q_t0 = np.full((4, n_b), -1, dtype=np.int64)
        self.q_bytes = np.zeros((4, n_b, n_win), dtype=np.float64)
        self.q_wid = np.full((4, n_b, n_win), -1, dtype=np.int64)
        self.meter_traffic = np.zeros((4, n_b), dtype=np.int64)
        self.prev_pmetrics: np.ndarray | None = None
        self.prev_pleader: np.ndarray | None = None
        self.broker_configs: dict[tuple[str, str], str] = {}
        self.topic_configs: dict[tuple[str, str], str] = {}
        self._derive_configs()
        self._leo_is_max = self.version.fetch_leader_leo_is_max  # (a version property parses a string)
        self._topo: Topology | None = None
        self._isr: IsrView | None = None
        self._fetchers_topo: Topology | None = None  # the Topology the `fetchers` rows were last synced to
        self._stalls = False
        self._proposals = False  # AlterPartition proposals may be in flight (pending_at >= 0)
        self._burst_end = int(s.burst_until.max(initial=0))
        self._base_step = s.base_rate * self.tick_ms
        self._msg_grid = repeat_slots(s.msg_size, s.slots)
        self._cap_msgs = repeat_slots((FETCH_MAX_BYTES * self.rounds) // s.msg_size, s.slots)
        # per-tick [P, S] work arrays, reused: fresh megabyte temporaries cost page faults whenever the heap shrinks
        self._w_leader_leo = np.empty_like(s.log_leo)
        self._w_msgs = np.empty_like(s.log_leo)
        self._w_bytes = np.empty_like(s.log_leo)
        self._w_bytes_f = np.empty(s.rbi.shape, dtype=np.float64)

    # ------------------------------------------------------------------ configuration
    def _broker_config(self, b: int, name: str) -> str | None:
        own = self.broker_configs.get((str(int(self.s.broker_ids[b])), name))
        return own if own is not None else self.broker_configs.get((DEFAULT_BROKER, name))

    def _derive_configs(self) -> None:
        """Recompute everything that depends on dynamic configs (§5): quota limits, throttled lists, min ISR, lag."""
        s = self.s
        self.q_limit = np.full((4, s.n_brokers), np.inf)
        for q, name in enumerate(QUOTA_CONFIGS):
            for b in range(s.n_brokers):
                value = self._broker_config(b, name)
                if value is not None and float(value) > 0:
                    self.q_limit[q, b] = float(value)
        default_min = self.broker_configs.get((DEFAULT_BROKER, "min.insync.replicas"))
        self.default_min_isr = int(default_min) if default_min is not None else 1
        lag = self.broker_configs.get((DEFAULT_BROKER, "replica.lag.time.max.ms"))
        self.lag_ms = int(lag) if lag is not None else self.kafka.replica_lag_time_max_ms
        self._derive_throttle_lists()

    def _derive_throttle_lists(self) -> None:
        s = self.s
        self.leader_listed = np.zeros_like(s.in_isr)
        self.follower_listed = np.zeros_like(s.in_isr)
        for (topic, name), value in self.topic_configs.items():
            if name not in (LEADER_LIST, FOLLOWER_LIST) or topic not in self.topic_index:
                continue
            pairs = quota.parse_throttled_replicas(value, f"config {topic} {name}")
            rows = s.topic_idx == self.topic_index[topic]
            target = self.leader_listed if name == LEADER_LIST else self.follower_listed
            if pairs == quota.ALL_REPLICAS:
                target[rows] = s.rbi[rows] >= 0
                continue
            for partition, broker in pairs:
                b = self.index.get(broker)
                hit = rows & (s.pnum == partition)
                if b is not None and hit.any():
                    target[hit] |= s.rbi[hit] == b

    def min_isr(self) -> np.ndarray:
        return np.where(self.s.topic_min_isr >= 1, self.s.topic_min_isr, self.default_min_isr)

    # ------------------------------------------------------------------ telemetry helpers
    def _ids(self, bis) -> list[int]:
        return [int(self.s.broker_ids[b]) for b in bis]

    def _replicas(self, p: int, mask: np.ndarray | None = None) -> list[int]:
        row = self.s.rbi[p]
        keep = row >= 0 if mask is None else (row >= 0) & mask
        return self._ids(row[keep])

    def _leader_id(self, p: int) -> int:
        slot = self.s.lslot[p]
        return -1 if slot < 0 else int(self.s.broker_ids[self.s.rbi[p, slot]])

    def _tp(self, p: int) -> tuple[str, int]:
        return self.s.topics[self.s.topic_idx[p]], int(self.s.pnum[p])

    def _write_assignment(self, p: int, now: int) -> None:
        s = self.s
        topic, partition = self._tp(p)
        self.writer.change("assignments", now, topic=topic, partition=partition, replicas=self._replicas(p),
                           adding=self._replicas(p, s.adding[p]), removing=self._replicas(p, s.removing[p]))

    def _write_leader_and_isr(self, p: int, now: int) -> None:
        """A controller decision: leaders row, then the ISR under the new epoch (so later same-epoch ISR rows
        are the leader's own shrinks/expands, docs/metrics.md)."""
        s = self.s
        topic, partition = self._tp(p)
        self.writer.change("leaders", now, topic=topic, partition=partition, leader=self._leader_id(p),
                           leader_epoch=int(s.leader_epoch[p]))
        self.writer.change("isr", now, topic=topic, partition=partition, isr=self._replicas(p, s.in_isr[p]),
                           leader_epoch=int(s.leader_epoch[p]))

    def _write_broker(self, b: int, state: str, now: int) -> None:
        self.s.state[b] = state
        self.writer.change("brokers", now, broker=int(self.s.broker_ids[b]), state=state)

    def _log(self, kind: str, now: int, broker: int, **fields) -> None:
        if self.logs is not None:
            self.logs.append({"ts_ms": int(now), "broker": int(broker), "kind": kind, **fields})

    def _controller_bi(self) -> int:
        live = [b for b in range(self.s.n_brokers) if self.s.state[b] == STATE_UP]
        return min(live, key=lambda b: self.s.broker_ids[b]) if live else -1

    def emit_initial(self, now: int) -> None:
        """The state at the start: brokers up, every assignment, leader and ISR, configs, fetchers."""
        s, w = self.s, self.writer
        w.changes("brokers", now, {"broker": s.broker_ids.tolist(), "state": [STATE_UP] * s.n_brokers})
        if self.scenario.cluster.min_insync_replicas != 1:
            self._set_config("broker", DEFAULT_BROKER, "min.insync.replicas",
                             str(self.scenario.cluster.min_insync_replicas), now)
        for t in self.scenario.topics:
            if t.min_insync_replicas is not None:
                self._set_config("topic", t.name, "min.insync.replicas", str(t.min_insync_replicas), now)
        topics = [s.topics[i] for i in s.topic_idx]
        replicas = [self._replicas(p) for p in range(s.n_partitions)]
        empty = [[] for _ in range(s.n_partitions)]
        w.changes("assignments", now, {"topic": topics, "partition": s.pnum, "replicas": replicas,
                                       "adding": empty, "removing": empty})
        leaders = s.broker_ids[s.rbi[:, 0]]
        w.changes("leaders", now, {"topic": topics, "partition": s.pnum, "leader": leaders,
                                   "leader_epoch": s.leader_epoch})
        w.changes("isr", now, {"topic": topics, "partition": s.pnum, "isr": replicas,
                               "leader_epoch": s.leader_epoch})
        for b in range(s.n_brokers):
            self._log("broker_started", now, s.broker_ids[b])
        if self.logs is not None:
            for p in range(s.n_partitions):
                topic, partition = self._tp(p)
                self._log("leader_start", now, s.broker_ids[s.rbi[p, 0]], topic=topic, partition=partition,
                          leader_epoch=0, prev_leader_epoch=-1, prev_leader=-1, leo=int(s.log_leo[p, 0]),
                          hw=int(s.hw[p]), isr=replicas[p], adding=[], removing=[], partition_epoch=0)
        self.sync_fetchers(now)

    # ------------------------------------------------------------------ configs
    def _set_config(self, entity_type: str, entity: str, name: str, value: str | None, now: int) -> None:
        store = self.broker_configs if entity_type == "broker" else self.topic_configs
        if value is None:
            store.pop((entity, name), None)
        else:
            store[(entity, name)] = value
        if entity_type == "topic" and name == "min.insync.replicas" and entity in self.topic_index:
            rows = self.s.topic_idx == self.topic_index[entity]
            self.s.topic_min_isr[rows] = -1 if value is None else int(value)
        self.writer.change("configs", now, entity_type=entity_type, entity=entity, name=name, value=value)

    # ------------------------------------------------------------------ timers
    def schedule(self, at_ms: int, kind: str, *args) -> None:
        self.timers.append((int(at_ms), self._timer_seq, kind, args))
        self._timer_seq += 1
        self.timers.sort()

    def run_timers(self, now: int) -> None:
        while self.timers and self.timers[0][0] <= now:
            at, _seq, kind, args = self.timers.pop(0)
            getattr(self, "_timer_" + kind)(at, *args)
            self._topo = None

    def _timer_session_expired(self, at: int, b: int, incarnation: int) -> None:
        if not self.s.up[b] and self.session_deadline[b] == incarnation:
            self.session_deadline[b] = -1
            self._remove_broker_from_isrs(b, at)

    def _timer_restore_network(self, at: int, b: int) -> None:
        self.s.net_in_bps[b] = self.s.base_net_in_bps[b]
        self.s.net_out_bps[b] = self.s.base_net_out_bps[b]

    # ------------------------------------------------------------------ events (§6 controller, faults)
    def apply(self, event, now: int, where: str) -> None:
        handler = getattr(self, "_on_" + event.kind)
        handler(event, now, where)
        self._topo = None
        self._stalls = bool((self.s.stall_until > 0).any())

    def _bi(self, broker: int, where: str) -> int:
        if broker not in self.index:
            raise ReplicaflowError(f"{where}: unknown broker {broker}")
        return self.index[broker]

    def _partition(self, topic: str, partition: int, where: str) -> int:
        s = self.s
        if topic not in self.topic_index:
            raise ReplicaflowError(f"{where}: unknown topic '{topic}'")
        hit = np.nonzero((s.topic_idx == self.topic_index[topic]) & (s.pnum == partition))[0]
        if len(hit) == 0:
            raise ReplicaflowError(f"{where}: topic '{topic}' has no partition {partition}")
        return int(hit[0])

    def _on_broker_down(self, event, now: int, where: str) -> None:
        s, b = self.s, self._bi(event.broker, where)
        if not s.up[b]:
            return
        if event.controlled:
            self._write_broker(b, STATE_SHUTTING_DOWN, now)
            self._log("broker_shutdown", now, s.broker_ids[b])
            self._remove_broker_from_isrs(b, now, shutting_down=True)
            s.up[b] = False
            self._write_broker(b, STATE_DOWN, now)
            return
        s.up[b] = False
        self._write_broker(b, STATE_DOWN, now)
        self.session_deadline[b] = now
        self.schedule(now + self.kafka.session_timeout_ms, "session_expired", b, now)

    def _on_broker_up(self, event, now: int, where: str) -> None:
        s, b = self.s, self._bi(event.broker, where)
        if s.up[b]:
            return
        if self.session_deadline[b] >= 0:  # bounced before the session expired: the controller sees a failure first
            self.session_deadline[b] = -1
            self._remove_broker_from_isrs(b, now)
        s.up[b] = True
        s.start_ms[b] = now
        s.shrinks[b] = s.expands[b] = 0
        s.traffic[:, b] = 0
        self.meter_traffic[:, b] = 0
        self.q_t0[:, b] = -1
        self.q_wid[:, b] = -1
        self.q_bytes[:, b] = 0
        mine = s.rbi == b
        s.failed[mine] = False
        s.stall_until[mine] = 0
        s.dead_threads = {k for k in s.dead_threads if k[0] != b}
        self._refresh_thread_dead()
        self._write_broker(b, STATE_UP, now)
        self._log("broker_started", now, s.broker_ids[b])
        # its logs survive on disk; truncate follower replicas to the current leader LEO (divergence)
        leader_leo = s.leader_leo()
        follower = mine & ~s.leader_mask() & (s.lslot >= 0)[:, None]
        s.log_leo = np.where(follower, np.minimum(s.log_leo, leader_leo[:, None]), s.log_leo)
        # offline partitions whose last ISR member is this broker get it back as leader
        offline = np.nonzero((s.lslot < 0) & (mine & s.in_isr).any(axis=1))[0]
        for p in offline:
            self._elect(int(p), now)

    def _on_slow_network(self, event, now: int, where: str) -> None:
        b = self._bi(event.broker, where)
        if event.network_in_bps is not None:
            self.s.net_in_bps[b] = event.network_in_bps
        if event.network_out_bps is not None:
            self.s.net_out_bps[b] = event.network_out_bps
        self.schedule(now + event.for_ms, "restore_network", b)

    def _on_produce_burst(self, event, now: int, where: str) -> None:
        s = self.s
        spec = self.scenario.topic(event.topic)
        parts = event.partitions if event.partitions is not None else range(spec.partitions)
        rows = [self._partition(event.topic, p, where) for p in parts]
        s.burst_rate[rows] = event.rate_bps / len(rows) / spec.message_size_bytes / 1000.0
        s.burst_until[rows] = now + event.for_ms
        self._burst_end = max(self._burst_end, now + event.for_ms)

    def _on_stall_follower(self, event, now: int, where: str) -> None:
        s, b = self.s, self._bi(event.broker, where)
        mask = s.rbi == b
        if event.topic is not None:
            rows = s.topic_idx == self.topic_index[event.topic]
            if event.partition is not None:
                rows &= s.pnum == event.partition
            mask &= rows[:, None]
        s.stall_until[mask] = NEVER if event.for_ms is None else now + event.for_ms

    def _on_fail_partition(self, event, now: int, where: str) -> None:
        s = self.s
        b, p = self._bi(event.broker, where), self._partition(event.topic, event.partition, where)
        slots = np.nonzero(s.rbi[p] == b)[0]
        if len(slots) == 0 or s.lslot[p] == slots[0]:
            raise ReplicaflowError(f"{where}: broker {event.broker} is not a follower of "
                                   f"{event.topic}-{event.partition} at {now - self.scenario.start_ms}ms")
        slot, leader = int(slots[0]), s.rbi[p, s.lslot[p]] if s.lslot[p] >= 0 else -1
        outcome = fetch_error_outcome(self.version, event.error)
        fields = {"leader": int(s.broker_ids[leader]) if leader >= 0 else -1, "fetcher_id": int(s.fid[p]),
                  "topic": event.topic, "partition": event.partition}
        if outcome == "failed":
            s.failed[p, slot] = True
            self._log("partition_failed", now, event.broker, **fields)
        elif outcome == "thread_died":
            s.dead_threads.add((b, int(leader), int(s.fid[p])))
            self._refresh_thread_dead()
            self._log("thread_died", now, event.broker, offset=int(s.log_leo[p, slot]), **fields)
        else:
            s.stall_until[p, slot] = max(int(s.stall_until[p, slot]), now + 1000)

    def _on_config(self, event, now: int, where: str) -> None:
        for name, value in event.configs:
            self._set_config(event.entity_type, event.entity, name, value, now)
        self._derive_configs()

    def _on_elect_leaders(self, event, now: int, where: str) -> None:
        s = self.s
        preferred = s.rbi[:, 0]
        ok = (s.lslot != 0) & s.in_isr[:, 0] & s.up[np.maximum(preferred, 0)] & (preferred >= 0)
        for p in np.nonzero(ok)[0]:
            self._elect(int(p), now, prefer_slot=0)

    def _on_reassign(self, event, now: int, where: str) -> None:
        s = self.s
        current, proposed = {}, {}
        for i, move in enumerate(event.partitions):
            p = self._partition(move.topic, move.partition, f"{where}.partitions[{i}]")
            target = [self._bi(r, f"{where}.partitions[{i}].replicas") for r in move.replicas]
            ongoing = s.reassignments.get(p)
            origin = ongoing.origin if ongoing else [int(b) for b in s.rbi[p][s.rbi[p] >= 0]]
            current[(move.topic, move.partition)] = (self._replicas(p), self._replicas(p, s.adding[p]),
                                                     self._replicas(p, s.removing[p]))
            proposed[(move.topic, move.partition)] = list(move.replicas)
            replicas = target + [o for o in origin if o not in target]
            self._set_row(p, replicas, now)
            row = s.rbi[p]
            s.adding[p] = (row >= 0) & ~np.isin(row, origin)
            s.removing[p] = (row >= 0) & ~np.isin(row, target)
            s.reassignments[p] = Reassignment(origin=origin, target=target, started_ms=now)
            self._write_assignment(p, now)
            self._log("reassignment_started", now, self._controller_id(), topic=move.topic,
                      partition=move.partition, replicas=list(move.replicas), adding=self._replicas(p, s.adding[p]),
                      removing=self._replicas(p, s.removing[p]))
        self._derive_throttle_lists()
        if event.throttle_bps is not None:
            self._tool_throttle(current, proposed, event.throttle_bps, now)

    def _controller_id(self) -> int:
        c = self._controller_bi()
        return int(self.s.broker_ids[c]) if c >= 0 else -1

    def _tool_throttle(self, current, proposed, rate_bps: float, now: int) -> None:
        """What ``kafka-reassign-partitions --execute --throttle`` writes (§5.1), or the KIP-542 rates (§5.2)."""
        brokers = quota.tool_throttled_brokers(current, proposed)
        value = str(int(rate_bps))
        names = QUOTA_CONFIGS[2:] if self.version.kip542 else QUOTA_CONFIGS[:2]
        written = self.s.tool_throttles.setdefault("brokers", set())
        for broker in brokers:
            for name in names:
                self._set_config("broker", str(broker), name, value, now)
                written.add((str(broker), name))
        if not self.version.kip542:
            topics = self.s.tool_throttles.setdefault("topics", set())
            for topic, (leader_list, follower_list) in quota.tool_throttle_lists(current, proposed).items():
                self._set_config("topic", topic, LEADER_LIST, leader_list, now)
                self._set_config("topic", topic, FOLLOWER_LIST, follower_list, now)
                topics.update({(topic, LEADER_LIST), (topic, FOLLOWER_LIST)})
        self._derive_configs()

    def _on_verify(self, event, now: int, where: str) -> None:
        """``--verify`` removes the tool's throttles only when no reassignment is in progress (§5.1)."""
        if self.s.reassignments:
            return
        for entity, name in sorted(self.s.tool_throttles.get("brokers", ())):
            self._set_config("broker", entity, name, None, now)
        for topic, name in sorted(self.s.tool_throttles.get("topics", ())):
            self._set_config("topic", topic, name, None, now)
        self.s.tool_throttles = {}
        self._derive_configs()

    def _on_cancel_reassignment(self, event, now: int, where: str) -> None:
        s = self.s
        if event.partitions is None:
            targets = sorted(s.reassignments)
        else:
            targets = [self._partition(t, p, where) for t, p in event.partitions]
        for p in targets:
            move = s.reassignments.pop(p, None)
            if move is None:
                continue
            self._finish_reassignment(p, move.origin, now)

    # ------------------------------------------------------------------ controller mechanics
    def _set_row(self, p: int, brokers: list[int], now: int) -> None:
        """Re-lay a partition's slots in assignment order; new brokers get empty replicas, dropped ones StopReplica."""
        s = self.s
        old = s.rbi[p].copy()
        saved = {name: getattr(s, name)[p].copy() for name in SLOT_ARRAYS}
        old_leader = int(old[s.lslot[p]]) if s.lslot[p] >= 0 else -1
        topic, partition = self._tp(p)
        for slot, b in enumerate(old):
            if b >= 0 and b not in brokers and saved["fetch_state"][slot] in (FETCH_ADDED, FETCH_FAILED) and s.up[b]:
                self.writer.change("fetchers", now, broker=int(s.broker_ids[b]), leader=self._leader_id(p),
                                   fetcher_id=int(s.fid[p]), topic=topic, partition=partition, action="removed")
                self._log("fetcher_removed", now, s.broker_ids[b], partitions=[[topic, partition]])
        fresh = {"rbi": -1, "log_leo": 0, "v_leo": isr_rules.UNKNOWN_OFFSET, "v_lfl": 0, "v_lft": 0, "v_lcu": 0,
                 "in_isr": False, "adding": False, "removing": False, "failed": False, "thread_dead": False,
                 "stall_until": 0, "fetch_state": FETCH_NONE, "fetch_leader": -1, "pending_isr": False}
        for name in SLOT_ARRAYS:
            getattr(s, name)[p] = fresh[name]
        for slot, b in enumerate(brokers):
            was = np.nonzero(old == b)[0]
            if len(was):
                for name in SLOT_ARRAYS:
                    getattr(s, name)[p, slot] = saved[name][was[0]]
            else:
                s.rbi[p, slot] = b
        s.lslot[p] = brokers.index(old_leader) if old_leader in brokers else -1
        self._topo = None

    def _finish_reassignment(self, p: int, final: list[int], now: int) -> None:
        """Completion (final = target) or cancellation (final = origin): shrink to ``final`` (KIP-455)."""
        s = self.s
        old_leader = int(s.rbi[p, s.lslot[p]]) if s.lslot[p] >= 0 else -1
        self._set_row(p, final, now)
        s.adding[p] = False
        s.removing[p] = False
        self._write_assignment(p, now)
        topic, partition = self._tp(p)
        if old_leader in final:
            s.leader_epoch[p] += 1
            s.partition_epoch[p] += 1
            self._write_leader_and_isr(p, now)
        else:
            self._elect(p, now)
        self._derive_throttle_lists()
        self._log("reassignment_completed", now, self._controller_id(), topic=topic, partition=partition,
                  replicas=self._ids(final))

    def _elect(self, p: int, now: int, prefer_slot: int | None = None, exclude: int = -1) -> None:
        """New leader epoch: the first live ISR member in assignment order, or none (offline) (§6)."""
        s = self.s
        row = s.rbi[p]
        live = (row >= 0) & s.in_isr[p] & s.up[np.maximum(row, 0)] & (row != exclude)
        old_slot = int(s.lslot[p])
        if prefer_slot is not None and live[prefer_slot]:
            new_slot = prefer_slot
        else:
            cands = np.nonzero(live)[0]
            new_slot = int(cands[0]) if len(cands) else -1
        prev_leader = self._leader_id(p)
        prev_epoch = int(s.leader_epoch[p])
        s.lslot[p] = new_slot
        self._topo = None
        s.leader_epoch[p] += 1
        s.partition_epoch[p] += 1
        s.pending_at[p] = -1
        if new_slot >= 0:
            leader_leo = s.log_leo[p, new_slot]
            followers = (row >= 0) & (np.arange(s.slots) != new_slot)
            s.log_leo[p] = np.where(followers, np.minimum(s.log_leo[p], leader_leo), s.log_leo[p])
            was_leader = new_slot == old_slot
            leo, lfl, lft, lcu = isr_rules.reset_on_new_leader_epoch(
                now, s.in_isr[p], was_leader, leader_leo, s.v_leo[p], s.v_lfl[p], s.v_lft[p], s.v_lcu[p])
            s.v_leo[p], s.v_lfl[p], s.v_lft[p], s.v_lcu[p] = leo, lfl, lft, lcu
            s.v_leo[p, new_slot] = leader_leo
            s.epoch_start[p] = leader_leo
            s.hw[p] = min(int(s.hw[p]), int(leader_leo))
            s.failed[p] = False
        self._write_leader_and_isr(p, now)
        if new_slot >= 0:
            topic, partition = self._tp(p)
            self._log("leader_start", now, s.broker_ids[row[new_slot]], topic=topic, partition=partition,
                      leader_epoch=int(s.leader_epoch[p]), prev_leader_epoch=prev_epoch, prev_leader=prev_leader,
                      leo=int(s.log_leo[p, new_slot]), hw=int(s.hw[p]), isr=self._replicas(p, s.in_isr[p]),
                      adding=self._replicas(p, s.adding[p]), removing=self._replicas(p, s.removing[p]),
                      partition_epoch=int(s.partition_epoch[p]))
        self._refresh_thread_dead()

    def _remove_broker_from_isrs(self, b: int, now: int, shutting_down: bool = False) -> None:
        """The controller takes a dead or shutting-down broker out of every ISR, re-electing where it led (§6).

        As Kafka's controller does, the last ISR member stays in the ISR (the partition goes offline).
        """
        s = self.s
        member = (s.rbi == b) & s.in_isr
        led = s.leader_bi() == b
        touched = np.nonzero(member.any(axis=1) | led)[0]
        for p in touched:
            p = int(p)
            slot = np.nonzero(s.rbi[p] == b)[0][0]
            if s.in_isr[p].sum() > 1:
                s.in_isr[p, slot] = False
            if led[p]:
                self._elect(p, now, exclude=b)
            else:
                s.leader_epoch[p] += 1
                s.partition_epoch[p] += 1
                s.pending_at[p] = -1
                self._write_leader_and_isr(p, now)

    def _refresh_thread_dead(self) -> None:
        s = self.s
        s.thread_dead[:] = False
        if not s.dead_threads:
            return
        leader = s.leader_bi()
        for f, lead, fid in s.dead_threads:
            s.thread_dead |= (s.rbi == f) & ((leader == lead) & (s.fid == fid))[:, None]

    # ------------------------------------------------------------------ the tick
    def tick(self, now: int) -> None:
        """Advance every partition over ``(now - tick, now]`` (module docstring); reuses the ``_w_*`` work arrays."""
        s = self.s
        if self._proposals:
            self._commit_pending(now)
        topo = self._topology()
        leader_leo, produce_in = self._produce(now, topo)
        # fetch (§1.1, §4, §5): the leader records the `fetched` fetches and sends data to the `served` ones
        fetch_ok = topo.fetch_ok & (s.stall_until <= now) if self._stalls else topo.fetch_ok
        fetched = served = fetch_ok
        q_class = None
        if np.isfinite(self.q_limit).any():
            held_leader, held_follower, q_class = self._throttle(now, topo.lb, topo.rbi, topo.leader_mask)
            fetched = fetch_ok & ~held_follower
            served = fetched & ~held_leader
        leader_leo_grid = repeat_slots(leader_leo, s.slots, out=self._w_leader_leo)
        avail = np.subtract(leader_leo_grid, s.log_leo, out=self._w_msgs)
        np.maximum(avail, 0, out=avail)
        if self._stalls or q_class is not None or not topo.fetch_everywhere:
            np.putmask(avail, ~served, 0)  # (else only leader slots don't fetch, and they have nothing available)
        want = np.multiply(avail, self._msg_grid, out=self._w_bytes)
        np.minimum(want, FETCH_MAX_BYTES * self.rounds, out=want)
        np.copyto(self._w_bytes_f, want)
        granted = self._share(self._w_bytes_f, topo, produce_in)
        if granted is None:  # want // msg_size, without the division (min(a·m, C) // m == min(a, C // m))
            msgs = np.minimum(avail, self._cap_msgs, out=avail)
        else:
            msgs = np.minimum(granted // self._msg_grid, avail, out=avail)
        self._record_fetch(fetched, leader_leo_grid, now)
        s.log_leo += msgs
        self._account(msgs, q_class, topo, now)
        self._expand(fetched, topo.leader_mask, now)
        self._shrink(now, topo.leader_bi, topo.leader_up, topo.leader_mask, leader_leo)
        self._advance_hw(now, topo.leader_mask)
        self._complete_reassignments(now)

    def _produce(self, now: int, topo: Topology) -> tuple[np.ndarray, np.ndarray]:
        """§1: messages arrive at live leaders only; returns the leaders' LEO after the append (0 when offline)
        and the produced bytes per leader broker."""
        s = self.s
        dt = self.tick_ms
        if self._burst_end > now - dt:
            rate = s.base_rate + np.where(s.burst_until > now - dt, s.burst_rate, 0.0)
            s.produce_acc += rate * dt
        else:
            s.produce_acc += self._base_step
        whole = np.floor(s.produce_acc)
        s.produce_acc -= whole
        produced = whole.astype(np.int64)
        if len(topo.leader_down):
            produced[topo.leader_down] = 0
            s.produce_acc[topo.leader_down] = 0.0
        leo_flat = s.log_leo.reshape(-1)  # a view: _topology keeps log_leo C-contiguous
        leader_leo = leo_flat[topo.leader_flat] + produced
        leo_flat[topo.leader_flat] = leader_leo
        leader_leo[topo.offline] = 0
        produce_in = np.bincount(topo.lb, weights=produced * s.msg_size, minlength=s.n_brokers)
        return leader_leo, produce_in

    def _topology(self) -> Topology:
        """The cached Topology; recomputing it also drops the IsrView."""
        if self._topo is None:
            s = self.s
            s.log_leo = np.ascontiguousarray(s.log_leo)  # _produce appends through a flat view
            leader_mask = s.leader_mask()
            leader_bi = s.leader_bi()
            lb = np.maximum(leader_bi, 0).astype(np.intp)
            leader_up = (s.lslot >= 0) & s.up[lb]
            rbi = np.maximum(s.rbi, 0)
            fetch_ok = ((s.rbi >= 0) & ~leader_mask & s.up[rbi] & leader_up[:, None] & ~s.failed & ~s.thread_dead)
            n_b, nf = s.n_brokers, self.kafka.num_replica_fetchers
            thread = ((rbi * n_b + lb[:, None]) * nf + s.fid[:, None]).ravel().astype(np.intp)
            leader_flat = np.arange(s.n_partitions) * s.slots + np.maximum(s.lslot, 0)
            self._topo = Topology(
                leader_mask=leader_mask, leader_bi=leader_bi, lb=lb, leader_up=leader_up, rbi=rbi, fetch_ok=fetch_ok,
                fetch_everywhere=bool((fetch_ok | leader_mask).all()), thread=thread, leader_flat=leader_flat,
                leader_down=np.nonzero(~leader_up)[0], offline=np.nonzero(s.lslot < 0)[0])
            self._isr = None
        return self._topo

    def _isr_view(self) -> IsrView:
        """The cached IsrView (ISR changes drop it in _commit)."""
        topo = self._topology()
        if self._isr is None:
            s = self.s
            assigned = s.rbi >= 0
            members = (s.in_isr | topo.leader_mask) & assigned
            outside = assigned & ~s.in_isr
            freeze = s.lslot < 0
            if self.version.hw_frozen_under_min_isr:
                freeze |= predicates.under_min_isr(row_sum(s.in_isr), self.min_isr(), row_sum(assigned), True)
            live_outside = outside & s.up[topo.rbi]
            self._isr = IsrView(isr_full=not outside.any(), members=None if members.all() else members,
                                outside=live_outside if live_outside.any() else None, freeze=freeze)
        return self._isr

    def _throttle(self, now, lb, rbi, leader_mask):
        """Which fetches the quotas hold back this tick (§5.1 not-in-ISR rule, §5.2 KIP-542 classes)."""
        s = self.s
        exceeded = self._quota_exceeded(now)
        leader_listed = np.take_along_axis(self.leader_listed, np.maximum(s.lslot, 0)[:, None], axis=1)[:, 0]
        leader_listed = leader_listed & (s.lslot >= 0)
        follower = (s.rbi >= 0) & ~leader_mask
        if self.version.kip542:
            rea_l = s.adding & np.isfinite(self.q_limit[Q_LREA])[lb][:, None]
            rea_f = s.adding & np.isfinite(self.q_limit[Q_FREA])[rbi]
        else:
            rea_l = rea_f = np.zeros_like(s.adding)
        rep_l = ~rea_l & leader_listed[:, None] & follower
        rep_f = ~rea_f & self.follower_listed & follower
        rea_l &= follower
        rea_f &= follower
        out = ~s.in_isr
        held_leader = out & ((rep_l & exceeded[Q_LREP][lb][:, None]) | (rea_l & exceeded[Q_LREA][lb][:, None]))
        held_follower = out & ((rep_f & exceeded[Q_FREP][rbi]) | (rea_f & exceeded[Q_FREA][rbi]))
        return held_leader, held_follower, (rep_l, rep_f, rea_l, rea_f)

    def _quota_exceeded(self, now: int) -> np.ndarray:
        win, n = self.kafka.quota_window_ms, self.kafka.quota_window_samples
        started = self.q_t0 >= 0
        wid = np.where(started, (now - self.q_t0) // win, 0)
        valid = (self.q_wid > (wid - n)[..., None]) & (self.q_wid >= 0)
        total = (self.q_bytes * valid).sum(axis=-1)
        oldest = quota.oldest_window_start_ms(now, self.q_t0, win, n)
        rate = quota.rate_bps(total, oldest, now, win)
        return started & quota.quota_exceeded(rate, self.q_limit)

    def _record_quota(self, q: int, bytes_by_broker: np.ndarray, now: int) -> None:
        win, n = self.kafka.quota_window_ms, self.kafka.quota_window_samples
        hit = bytes_by_broker > 0
        self.q_t0[q] = np.where(hit & (self.q_t0[q] < 0), now, self.q_t0[q])
        bs = np.nonzero(hit)[0]
        if len(bs) == 0:
            return
        wid = (now - self.q_t0[q, bs]) // win
        slot = wid % n
        stale = self.q_wid[q, bs, slot] != wid
        self.q_bytes[q, bs[stale], slot[stale]] = 0
        self.q_wid[q, bs, slot] = wid
        self.q_bytes[q, bs, slot] += bytes_by_broker[bs]

    def _share(self, want: np.ndarray, topo: Topology, produce_in: np.ndarray) -> np.ndarray | None:
        """Grant each fetch its share of the response cap and of both brokers' network capacity.

        ``want`` is in bytes (float). Returns the granted bytes, or None when no cap binds (every
        fetch gets what it wants: each scale below would be exactly 1).
        """
        s = self.s
        dt = self.tick_ms
        per_thread, inbound, outbound = self._sums(want, topo)
        cap = FETCH_RESPONSE_MAX_BYTES * self.rounds
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
        s = self.s
        n_b, nf = s.n_brokers, self.kafka.num_replica_fetchers
        per_thread = np.bincount(topo.thread, weights=grid.reshape(-1), minlength=n_b * n_b * nf)
        cube = per_thread.reshape(n_b, n_b, nf)
        return per_thread, cube.sum(axis=(1, 2)), cube.sum(axis=(0, 2))

    def _record_fetch(self, fetched, leader_leo_grid, now) -> None:
        """The leader's bookkeeping of each fetch at the follower's pre-append offset (§1.1), in place."""
        s = self.s
        s.v_lcu = isr_rules.last_caught_up_after_fetch(s.log_leo, leader_leo_grid, now, s.v_lfl, s.v_lft, s.v_lcu,
                                                       fetched)
        lfl = isr_rules.fetch_leader_leo_after_fetch(leader_leo_grid, s.v_lfl, self._leo_is_max)
        np.putmask(s.v_lfl, fetched, lfl)
        np.putmask(s.v_lft, fetched, now)
        np.putmask(s.v_leo, fetched, s.log_leo)

    def _account(self, msgs, q_class, topo: Topology, now) -> None:
        """Bytes against the quotas (throttled partitions, in sync or not) and the traffic meters (§3, A14)."""
        s = self.s
        n_b = s.n_brokers
        rbi, lbb = topo.rbi, np.broadcast_to(topo.lb[:, None], msgs.shape)
        movedf = self._w_bytes_f
        np.copyto(movedf, np.multiply(msgs, self._msg_grid, out=self._w_bytes))
        if q_class is not None:
            rep_l, rep_f, rea_l, rea_f = q_class
            for q, mask, owner in ((Q_LREP, rep_l, lbb), (Q_FREP, rep_f, rbi), (Q_LREA, rea_l, lbb),
                                   (Q_FREA, rea_f, rbi)):
                if mask.any():
                    self._record_quota(q, np.bincount(owner[mask], weights=movedf[mask], minlength=n_b), now)
        _, inbound, outbound = self._sums(movedf, topo)
        s.traffic[T_REP_IN] += inbound.astype(np.int64)
        s.traffic[T_REP_OUT] += outbound.astype(np.int64)
        if s.reassignments:
            add = s.adding & (movedf > 0)
            s.traffic[T_REA_IN] += np.bincount(rbi[add], weights=movedf[add], minlength=n_b).astype(np.int64)
            s.traffic[T_REA_OUT] += np.bincount(lbb[add], weights=movedf[add], minlength=n_b).astype(np.int64)

    # ------------------------------------------------------------------ ISR changes (§1.3, §1.4)
    def _expand(self, fetched, leader_mask, now) -> None:
        s = self.s
        if self._isr_view().isr_full:
            return
        outside = fetched & ~s.in_isr
        if not outside.any():
            return
        cand = (outside & ~leader_mask
                & isr_rules.expansion_eligible(s.v_leo, s.hw[:, None], s.epoch_start[:, None], True))
        cand &= (s.pending_at < 0)[:, None]
        rows = np.nonzero(row_any(cand))[0]
        if len(rows) == 0:
            return
        first = cand[rows].argmax(axis=1)
        proposal = s.in_isr[rows].copy()
        proposal[np.arange(len(rows)), first] = True
        self._propose(rows, proposal, now, "expand")

    def _shrink(self, now, leader_bi, leader_up, leader_mask, leader_leo) -> None:
        s = self.s
        due = isr_rules.isr_check_due(now, s.start_ms, self.lag_ms, self.tick_ms) & s.up
        if not due.any():
            return
        check = leader_up & due[np.maximum(leader_bi, 0)] & (s.pending_at < 0)
        if not check.any():
            return
        rows = np.nonzero(check)[0]
        leader_leo = leader_leo[rows][:, None]
        if self.version.lag_rule == "time":
            out = isr_rules.is_out_of_sync(s.v_leo[rows], leader_leo, s.v_lcu[rows], now, self.lag_ms)
        else:
            out = isr_rules.is_out_of_sync_legacy(s.v_leo[rows], leader_leo, s.v_lft[rows], now, self.lag_ms,
                                                  self.kafka.replica_lag_max_messages)
        out &= s.in_isr[rows] & ~leader_mask[rows]
        hit = row_any(out)
        if hit.any():
            self._propose(rows[hit], s.in_isr[rows[hit]] & ~out[hit], now, "shrink")

    def _propose(self, rows, proposal, now, kind) -> None:
        """Leader-driven ISR change: written at once (≤ 2.6, or delay 0) or via AlterPartition after the delay."""
        s = self.s
        delay = self.kafka.isr_commit_delay_ms if self.version.alter_partition else 0
        if delay <= 0:
            self._commit(rows, proposal, now)
            return
        s.pending_isr[rows] = proposal
        s.pending_at[rows] = now + delay
        self._proposals = True

    def _commit_pending(self, now: int) -> None:
        s = self.s
        due = np.nonzero((s.pending_at >= 0) & (s.pending_at <= now))[0]
        if len(due):
            s.pending_at[due] = -1
            self._commit(due, s.pending_isr[due].copy(), now)
        self._proposals = bool((s.pending_at >= 0).any())

    def _commit(self, rows, proposal, now) -> None:
        s = self.s
        min_isr = self.min_isr()
        for i, p in enumerate(rows):
            p = int(p)
            old, new = s.in_isr[p].copy(), proposal[i]
            if (old == new).all() or s.lslot[p] < 0:
                continue
            leader = int(s.rbi[p, s.lslot[p]])
            s.in_isr[p] = new
            self._isr = None
            s.partition_epoch[p] += 1
            shrink = bool((old & ~new).any())
            if shrink:
                s.shrinks[leader] += 1
            else:
                s.expands[leader] += 1
            topic, partition = self._tp(p)
            self.writer.change("isr", now, topic=topic, partition=partition, isr=self._replicas(p, new),
                               leader_epoch=int(s.leader_epoch[p]))
            if self.logs is not None:
                broker = s.broker_ids[leader]
                old_ids, new_ids = self._replicas(p, old), self._replicas(p, new)
                if shrink:
                    gone = np.nonzero(old & ~new)[0]
                    self._log("isr_shrink", now, broker, topic=topic, partition=partition, old_isr=old_ids,
                              new_isr=new_ids, hw=int(s.hw[p]), leo=int(s.log_leo[p, s.lslot[p]]),
                              out_of_sync=[{"broker": int(s.broker_ids[s.rbi[p, g]]), "leo": int(s.v_leo[p, g]),
                                            "last_caught_up_ms": int(s.v_lcu[p, g])} for g in gone])
                else:
                    self._log("isr_expand", now, broker, topic=topic, partition=partition, old_isr=old_ids,
                              new_isr=new_ids)
                n_isr, n_rep = int(new.sum()), int((s.rbi[p] >= 0).sum())
                under = bool(predicates.under_min_isr(n_isr, int(min_isr[p]), n_rep, self.version.min_isr_capped))
                self._log("isr_updated", now, broker, topic=topic, partition=partition, isr=new_ids,
                          partition_epoch=int(s.partition_epoch[p]), under_min_isr=under)

    def _advance_hw(self, now, leader_mask) -> None:
        """§1.5: min LEO over leader, ISR (with a proposed expansion) and caught-up eligible followers."""
        s = self.s
        view = self._isr_view()
        leo = np.where(leader_mask, s.log_leo, s.v_leo)
        members = view.members
        if members is not None and self._proposals:
            members = members | (s.pending_isr & (s.pending_at >= 0)[:, None] & (s.rbi >= 0))
        if members is not None and view.outside is not None:
            members = members | (view.outside & (s.v_leo >= 0) & ((now - s.v_lcu) <= self.lag_ms))
        s.hw = isr_rules.high_watermark(s.hw, leo, members, view.freeze)

    def _complete_reassignments(self, now: int) -> None:
        s = self.s
        if not s.reassignments:
            return
        for p in sorted(s.reassignments):
            move = s.reassignments[p]
            in_isr = set(int(b) for b in s.rbi[p][s.in_isr[p] & (s.rbi[p] >= 0)])
            if all(t in in_isr for t in move.target):
                del s.reassignments[p]
                self._finish_reassignment(p, move.target, now)

    # ------------------------------------------------------------------ fetchers table (§4)
    def sync_fetchers(self, now: int) -> None:
        """Write a `fetchers` row wherever a live follower's fetch state or leader changed.

        The wanted state follows from the Topology alone, so a sync under an unchanged Topology finds nothing.
        """
        topo = self._topology()
        if self._fetchers_topo is topo:
            return
        self._fetchers_topo = topo
        s = self.s
        leader_bi = topo.leader_bi
        follower = (s.rbi >= 0) & ~topo.leader_mask
        fetching = follower & (leader_bi >= 0)[:, None]
        desired = np.where(fetching & s.failed, FETCH_FAILED, np.where(fetching, FETCH_ADDED, FETCH_REMOVED))
        desired = np.where((desired == FETCH_REMOVED) & (s.fetch_state == FETCH_NONE), FETCH_NONE, desired)
        lead = np.broadcast_to(leader_bi[:, None], s.rbi.shape)
        alive = s.up[np.maximum(s.rbi, 0)] & (s.rbi >= 0)
        changed = alive & ((desired != s.fetch_state) | ((desired == FETCH_ADDED) & (lead != s.fetch_leader)))
        if not changed.any():
            return
        ps, sl = np.nonzero(changed)
        actions = desired[ps, sl]
        leaders = np.where(lead[ps, sl] >= 0, s.broker_ids[np.maximum(lead[ps, sl], 0)], -1)
        self.writer.changes("fetchers", now, {
            "broker": s.broker_ids[s.rbi[ps, sl]], "leader": leaders, "fetcher_id": s.fid[ps],
            "topic": [s.topics[i] for i in s.topic_idx[ps]], "partition": s.pnum[ps],
            "action": [FETCH_ACTIONS[int(a)] for a in actions]})
        s.fetch_state[ps, sl] = actions
        s.fetch_leader[ps, sl] = lead[ps, sl]
        if self.logs is not None:
            for p, slot, action, leader in zip(ps, sl, actions, leaders, strict=True):
                topic, partition = self._tp(int(p))
                broker = s.broker_ids[s.rbi[p, slot]]
                if action == FETCH_ADDED:
                    self._log("fetcher_added", now, broker, leader=int(leader), fetcher_id=int(s.fid[p]),
                              partitions=[[topic, partition, int(s.log_leo[p, slot])]])
                elif action == FETCH_REMOVED:
                    self._log("fetcher_removed", now, broker, partitions=[[topic, partition]])

    # ------------------------------------------------------------------ scrape (docs/metrics.md)
    def scrape(self, now: int) -> None:
        """Sample replica offsets and traffic, and take every live broker's metrics (the ground truth)."""
        s, w = self.s, self.writer
        leader_mask = s.leader_mask()
        ps, sl = np.nonzero(s.rbi >= 0)
        hw = np.where(leader_mask[ps, sl], s.hw[ps], -1)
        w.samples("telemetry", "replica_offsets", now, {
            "topic": np.array(s.topics, dtype=object)[s.topic_idx[ps]], "partition": s.pnum[ps],
            "broker": s.broker_ids[s.rbi[ps, sl]], "log_end_offset": s.log_leo[ps, sl],
            "high_watermark": np.ma.masked_array(hw, mask=~leader_mask[ps, sl]),
            "size_bytes": s.log_leo[ps, sl] * s.msg_size[ps]})
        self.meter_traffic += s.traffic
        names = [n for n in TRAFFIC_METRICS if n in self.traffic_names]
        idx = [TRAFFIC_METRICS.index(n) for n in names]
        w.samples("telemetry", "traffic", now, {
            "broker": np.tile(s.broker_ids, len(names)), "name": np.repeat(np.array(names, dtype=object), s.n_brokers),
            "bytes": s.traffic[idx].ravel()})
        s.traffic[:] = 0
        values = self.broker_values(now, leader_mask)
        live = np.array([st != STATE_DOWN for st in s.state])
        names, rows = [], []
        for m in self.metrics:
            names.extend([m.jmx] * int(live.sum()))
            rows.append(values[m.short][live])
        w.samples("truth", "broker_metrics", now, {
            "broker": np.tile(s.broker_ids[live], len(self.metrics)), "name": np.array(names, dtype=object),
            "value": np.concatenate(rows).astype(np.float64)})
        self._scrape_partitions(now, leader_mask)

    def partition_flags(self) -> dict[str, np.ndarray]:
        s = self.s
        n_rep = row_sum(s.rbi >= 0)
        n_add, n_rem, n_isr = row_sum(s.adding), row_sum(s.removing), row_sum(s.in_isr)
        min_isr, capped = self.min_isr(), self.version.min_isr_capped
        return {
            "n_rep": n_rep, "n_add": n_add, "n_isr": n_isr,
            "urp": predicates.under_replicated(self.version, n_rep, n_add, n_isr),
            "urp_legacy": predicates.urp_legacy(n_rep, n_isr),
            "urp_kip352": predicates.urp_kip352(n_rep, n_add, n_isr),
            "under_min_isr": predicates.under_min_isr(n_isr, min_isr, n_rep, capped),
            "at_min_isr": predicates.at_min_isr(n_isr, min_isr, n_rep, capped),
            "reassigning": predicates.reassigning(n_add, n_rem),
            "offline": s.lslot < 0,
        }

    def broker_values(self, now: int, leader_mask: np.ndarray) -> dict[str, np.ndarray]:
        s = self.s
        n_b = s.n_brokers
        flags = self.partition_flags()
        leader_bi = s.leader_bi()
        led = leader_bi >= 0
        lb = leader_bi[led]

        def count(flag):
            return np.bincount(lb, weights=flag[led].astype(np.float64), minlength=n_b)

        reassign_lag = np.zeros(n_b)
        add_rows = np.nonzero(led & (flags["n_add"] > 0))[0]
        if len(add_rows):
            lag = np.where(s.adding[add_rows], np.maximum(s.hw[add_rows, None] - s.log_leo[add_rows], 0), 0).max(axis=1)
            np.maximum.at(reassign_lag, leader_bi[add_rows], lag.astype(np.float64))
        max_lag = np.zeros(n_b)
        active = s.fetch_state == FETCH_ADDED
        if active.any():
            ps, sl = np.nonzero(active)
            np.maximum.at(max_lag, s.rbi[ps, sl], np.maximum(s.hw[ps] - s.log_leo[ps, sl], 0).astype(np.float64))
        failed = np.bincount(s.rbi[s.fetch_state == FETCH_FAILED], minlength=n_b).astype(np.float64)
        offline = np.zeros(n_b)
        controller = self._controller_bi()
        if controller >= 0:
            offline[controller] = float((s.lslot < 0).sum())
        values = {
            "UnderReplicatedPartitions": count(flags["urp"]),
            "UnderMinIsrPartitionCount": count(flags["under_min_isr"]),
            "AtMinIsrPartitionCount": count(flags["at_min_isr"]),
            "ReassigningPartitions": count(flags["reassigning"]),
            "ReassignmentMaxLag": reassign_lag,
            "LeaderCount": np.bincount(lb, minlength=n_b).astype(np.float64),
            "PartitionCount": np.bincount(s.rbi[s.rbi >= 0], minlength=n_b).astype(np.float64),
            "OfflineReplicaCount": np.zeros(n_b),
            "IsrShrinksPerSec": s.shrinks.astype(np.float64),
            "IsrExpandsPerSec": s.expands.astype(np.float64),
            "FailedIsrUpdatesPerSec": np.zeros(n_b),
            "FailedPartitionsCount": failed,
            "MaxLag": max_lag,
            "OfflinePartitionsCount": offline,
        }
        for i, name in enumerate(TRAFFIC_METRICS):
            values[name] = self.meter_traffic[i].astype(np.float64)
        return values

    def _scrape_partitions(self, now: int, leader_mask: np.ndarray) -> None:
        """Per-partition gauges of the leader, as change points (docs/metrics.md)."""
        s = self.s
        flags = self.partition_flags()
        replicas_count = flags["n_rep"] - (flags["n_add"] if self.version.urp_semantics == "kip352" else 0)
        current = np.stack([flags["urp"], flags["under_min_isr"], flags["at_min_isr"], flags["n_isr"],
                            replicas_count]).astype(np.float64)
        leader = s.leader_bi()
        if self.prev_pmetrics is None:
            changed = np.ones_like(current, dtype=bool)
        else:
            changed = (current != self.prev_pmetrics) | (leader != self.prev_pleader)[None, :]
        changed &= (leader >= 0)[None, :]
        self.prev_pmetrics, self.prev_pleader = current, leader
        gi, ps = np.nonzero(changed)
        if len(ps) == 0:
            return
        names = np.array(["UnderReplicated", "UnderMinIsr", "AtMinIsr", "InSyncReplicasCount", "ReplicasCount"],
                         dtype=object)
        self.writer.samples("truth", "partition_metrics", now, {
            "topic": np.array(s.topics, dtype=object)[s.topic_idx[ps]], "partition": s.pnum[ps],
            "broker": s.broker_ids[leader[ps]], "name": names[gi], "value": current[gi, ps]})
