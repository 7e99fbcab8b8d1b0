"""One candidate of a plan — a throttle, a quota mode, batches — run on the engine until every move is
done or is shown unable to finish; the result is a small summary (docs/plan.md, "What a candidate
reports"). This is the function the Spark tasks run, so it takes and returns plain picklable values.

The engine runs unchanged (``sim/engine.py``, the tick of docs/simulator.md); the candidate only
seeds each partition's log size (kafka-log-dirs gives sizes per partition, scenario files per topic)
and its leader (the describe's ``Leader``),
feeds the next batch when the previous one completed, and samples the state every ``sample_ms``:
bytes left to move, URP / at-min-ISR / under-min-ISR counts (``Partition.flags``), each broker's
replication traffic and its quota and network use.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from replicaflow.errors import ReplicaflowError
from replicaflow.model.configs import FETCH_MAX_BYTES
from replicaflow.model.metrics import TRAFFIC_METRICS
from replicaflow.model.units import counted, format_bytes, format_duration
from replicaflow.sim.engine import Engine
from replicaflow.sim.fetcher_manager import rounds_per_tick
from replicaflow.sim.quota_manager import (
    FOLLOWER_REASSIGNMENT,
    FOLLOWER_REPLICATION,
    LEADER_REASSIGNMENT,
    LEADER_REPLICATION,
)
from replicaflow.sim.scenario import ReassignEvent, Scenario
from replicaflow.telemetry.io import DiscardingWriter

REP_IN, REP_OUT = TRAFFIC_METRICS.index("ReplicationBytesInPerSec"), TRAFFIC_METRICS.index("ReplicationBytesOutPerSec")
SIDES = ("leader quota", "follower quota", "network out", "network in", "partition fetch")
BUSY = 0.9  # a limit used at ≥ 90 % in a sample binds the move then
MAX_MS = 30 * 86_400_000  # the simulated time a candidate runs at most


@dataclass
class CandidateSpec:
    """What one Spark task simulates."""

    label: str
    scenario: Scenario                      # cluster, produce rates, the first batch at 0 and any other events
    size_messages: list[int]                # per partition row (engine order): messages in the log at the start
    batches: list[ReassignEvent]            # the second and later batches, fed one after the other
    throttle_bps: float | None
    sample_ms: int = 10_000
    stall_ms: int = 30 * 60_000             # no net progress for this long: the move cannot finish
    max_ms: int = MAX_MS                    # a guard, far beyond any move a planner is asked about
    after_ms: int = 0                       # the last scenario event other than the reassignment
    keep_series: bool = True
    leader_slots: list[int] = field(default_factory=list)  # per partition row: its leader's place in its replicas


@dataclass
class CandidateResult:
    label: str
    throttle_bps: float | None
    kip542: bool
    finished: bool
    duration_ms: int                        # until the last move completed (or until given up)
    reason: str | None                      # why it cannot finish
    eta_ms: dict[str, int]                  # "topic-partition" → completion time after the start
    start_ms: dict[str, int]                # "topic-partition" → when its batch was submitted
    bytes_left: dict[str, int]              # at the end (0 for completed moves)
    batches: list[tuple[int, int, int]]     # (start_ms, end_ms, partitions) per batch
    bottleneck: dict | None                 # broker, side, busy_ms, utilization
    flags: dict[str, dict]                  # urp / at_min_isr / under_min_isr: peak, partition-minutes
    brokers: list[dict]                     # per broker: replication in/out peak and mean, capacity
    series: dict[str, list] = field(default_factory=dict)  # t_ms, bytes_left, moves per broker over time
    cancelled_ms: dict[str, int] = field(default_factory=dict)  # moves a scenario event cancelled, and when
    wall_s: float = 0.0
    cpu_s: float = 0.0                      # the task's own CPU time (the machine may be shared)
    simulated_ms: int = 0
    replica_ticks: int = 0


def seed_sizes(engine: Engine, size_messages: list[int]) -> None:
    """Every replica of a partition holds its log in sync at the start (``initial_state``'s rule, per row)."""
    s = engine.s
    n = np.asarray(size_messages, dtype=np.int64)
    assigned = s.rbi >= 0
    for grid in (s.log_leo, s.v_lfl):
        grid[:] = np.where(assigned, n[:, None], grid)
    s.v_leo[:] = np.where(assigned, n[:, None], -1)
    s.hw[:] = n


def seed_leaders(engine: Engine, leader_slots: list[int]) -> None:
    """Each partition starts led by the describe's leader (``initial_state`` makes the first replica lead): the
    leader quota, the produce and the fetches are that broker's, as in the cluster the describe was taken on.
    The fetch topology is rebuilt from it (``layout_changed``)."""
    if leader_slots and any(leader_slots):
        engine.s.lslot[:] = np.asarray(leader_slots, dtype=engine.s.lslot.dtype)
        engine.s.layout_changed()


def _bytes_left(s) -> np.ndarray:
    """[P] bytes the adding replicas still miss of the partition's log (0 where nothing is added); the log is
    the longest of the replicas that stay, so a partition whose leader is offline still shows what is left."""
    assigned = s.rbi >= 0
    source = np.where(assigned & ~s.adding, s.log_leo, 0).max(axis=1)
    missing = np.where(s.adding & assigned, np.maximum(source[:, None] - s.log_leo, 0), 0)
    return missing.max(axis=1) * s.msg_size


def partition_fetch_cap_bps(sc: Scenario) -> float:
    """What one partition can copy per second: ``replica.fetch.max.bytes`` per fetch round trip
    (``fetch_rtt``, docs/simulator.md), whatever the throttle -- about 21MB/s at the defaults."""
    return FETCH_MAX_BYTES * rounds_per_tick(sc.tick_ms, sc.kafka.fetch_rtt_ms) * 1000.0 / sc.tick_ms


def _fetch_utilization(s, leo_prev: np.ndarray, sample_ms: int, cap_bps: float) -> np.ndarray:
    """[broker] the largest share of the per-partition fetch cap that one of its adding replicas copied
    at since the last sample (log end offsets ``leo_prev`` then)."""
    grown = np.where(s.adding & (s.rbi >= 0), np.maximum(s.log_leo - leo_prev, 0), 0) * s.msg_size[:, None]
    util = np.zeros(s.n_brokers)
    rows, slots = np.nonzero(grown)
    np.maximum.at(util, s.rbi[rows, slots], grown[rows, slots] * 1000.0 / sample_ms / cap_bps)
    return util


def _utilization(engine: Engine, now: int, rates_in: np.ndarray, rates_out: np.ndarray) -> np.ndarray:
    """[side, broker] the share of each limit used: leader / follower quota (this mode's rows), NIC out / in
    (the per-partition fetch row is filled by the caller, :func:`_fetch_utilization`).

    The quota's rate is read at ``now + tick``, where ``ReplicationQuotaManager.throttle`` bounds the tick's
    fetches: the fetcher manager records the tick ending at ``now`` at ``now``. Read at ``now``, the bytes sat
    over one tick less of the sensor's life, and the first samples read up to twice the throttle."""
    q = engine.quotas
    rows = (LEADER_REASSIGNMENT, FOLLOWER_REASSIGNMENT) if q.kip542 else (LEADER_REPLICATION, FOLLOWER_REPLICATION)
    rate = q.rates_bps(now + engine.scenario.tick_ms)
    out = np.zeros((len(SIDES), engine.s.n_brokers))
    for i, r in enumerate(rows):
        limit = q.limit_bps[r]
        out[i] = np.where(np.isfinite(limit), rate[r] / np.maximum(limit, 1.0), 0.0)
    out[2] = rates_out / engine.s.net_out_bps
    out[3] = rates_in / engine.s.net_in_bps
    return out


def _targets(spec: CandidateSpec) -> dict[str, frozenset[int]]:
    """"topic-partition" → the replicas the plan moves it to (every batch)."""
    events = [e for e in spec.scenario.events if isinstance(e, ReassignEvent)] + list(spec.batches)
    return {f"{m.topic}-{m.partition}": frozenset(m.replicas) for e in events for m in e.partitions}


def _cancelled(s, rows, names: list[str], targets: dict[str, frozenset[int]]) -> list[int]:
    """Of the partitions that just left the reassignment, those not on their target replicas: a
    ``cancel_reassignment`` among the scenario's events reverted them (KIP-455)."""
    return [p for p in rows if names[p] in targets
            and frozenset(int(b) for b in s.broker_ids[s.rbi[p][s.rbi[p] >= 0]]) != targets[names[p]]]


def run_candidate(spec: CandidateSpec) -> CandidateResult | str:
    """What a Spark task runs: :func:`simulate_candidate`, or the sentence of a scenario event the engine refuses
    mid-run (a ``fail_partition`` whose broker holds no follower of the partition by then), which raised in the
    task came back to the driver as a ``PythonException`` traceback."""
    try:
        return simulate_candidate(spec)
    except ReplicaflowError as exc:
        return str(exc)


def simulate_candidate(spec: CandidateSpec) -> CandidateResult:
    """Run ``spec`` until no reassignment is left (and no batch waits), or until it is shown stuck."""
    t0, c0 = time.perf_counter(), time.process_time()
    sc = spec.scenario
    engine = Engine(sc, DiscardingWriter(sc.name))
    s = engine.s
    seed_sizes(engine, spec.size_messages)
    seed_leaders(engine, spec.leader_slots)
    engine.start()
    start, tick = sc.start_ms, sc.tick_ms
    names = [f"{s.topics[s.topic_idx[p]]}-{s.pnum[p]}" for p in range(s.n_partitions)]
    pending = list(spec.batches)
    moving: set[int] = set(s.reassignments)
    eta: dict[str, int] = {}
    targets, cancelled = _targets(spec), {}
    last_left = np.zeros(s.n_partitions, dtype=np.int64)
    started = dict.fromkeys((names[p] for p in moving), 0)
    batches = [[start, None, len(moving)]]
    busy = np.zeros((len(SIDES), s.n_brokers), dtype=np.int64)
    peak_util = np.zeros((len(SIDES), s.n_brokers))
    flag_names = ("urp", "at_min_isr", "under_min_isr")
    peaks = dict.fromkeys(flag_names, 0)
    minutes = dict.fromkeys(flag_names, 0.0)
    traffic_prev = (s.traffic_total + s.traffic).astype(np.float64)
    leo_prev, fetch_cap = s.log_leo.copy(), partition_fetch_cap_bps(sc)
    rep_peak = np.zeros((2, s.n_brokers))
    rep_sum = np.zeros((2, s.n_brokers))
    samples = 0
    series = {"t_ms": [], "bytes_left": [], "moves_per_broker": []}
    best_left, best_at = None, start
    reason = None
    now = start
    while True:
        now += tick
        engine.step(now)
        if len(s.reassignments) != len(moving) or not s.reassignments:
            done = moving - set(s.reassignments)
            reverted = _cancelled(s, done, names, targets)
            for p in done:
                (cancelled if p in reverted else eta)[names[p]] = now - start
            moving = set(s.reassignments)
            if not moving and pending:
                nxt = pending.pop(0)
                engine.clock.add_events([nxt.model_copy(update={"at_ms": now - start})], "plan")
                batches[-1][1] = now
                batches.append([now, None, len(nxt.partitions)])
                engine.step(now + tick)
                now += tick
                moving = set(s.reassignments)
                started.update(dict.fromkeys((names[p] for p in moving), now - tick - start))
        if not moving and not pending:
            break
        if (now - start) % spec.sample_ms:
            continue
        left = last_left = _bytes_left(s)
        total_left = int(left.sum())
        flags = engine.partition.flags()
        for f in flag_names:
            count = int(flags[f].sum())
            peaks[f] = max(peaks[f], count)
            minutes[f] += count * spec.sample_ms / 60_000
        traffic = (s.traffic_total + s.traffic).astype(np.float64)
        rates = np.maximum(traffic - traffic_prev, 0) * 1000.0 / spec.sample_ms
        traffic_prev = traffic
        rep_in, rep_out = rates[REP_IN], rates[REP_OUT]
        rep_peak = np.maximum(rep_peak, np.stack([rep_in, rep_out]))
        rep_sum += np.stack([rep_in, rep_out])
        samples += 1
        util = _utilization(engine, now, rep_in, rep_out)
        util[SIDES.index("partition fetch")] = _fetch_utilization(s, leo_prev, spec.sample_ms, fetch_cap)
        leo_prev = s.log_leo.copy()
        busy += util >= BUSY
        peak_util = np.maximum(peak_util, util)
        if spec.keep_series:
            series["t_ms"].append(now - start)
            series["bytes_left"].append(total_left)
            rows = np.fromiter(moving, dtype=np.intp)
            adding = s.rbi[rows][s.adding[rows]]
            series["moves_per_broker"].append(np.bincount(adding[adding >= 0], minlength=s.n_brokers).tolist())
        if best_left is None or total_left < best_left:
            best_left, best_at = total_left, now
        elif now - best_at >= spec.stall_ms and now - start > spec.after_ms:
            reason = f"no net progress in {format_duration(spec.stall_ms)} simulated: {format_bytes(total_left)} left to copy"
            break
        if now - start >= spec.max_ms:
            reason = f"still moving after {spec.max_ms // 86_400_000} simulated days"
            break
    batches[-1][1] = now
    left = _bytes_left(s)
    if cancelled and reason is None:  # what each still lacked at the last sample before it was reverted
        rows = [names.index(n) for n in cancelled]
        left[rows] = last_left[rows]
        reason = (f"{counted(len(cancelled), 'move')} cancelled by the scenario's own events at "
                  f"{format_duration(max(cancelled.values()))}, {format_bytes(int(left[rows].sum()))} left to copy")
    side, broker = np.unravel_index(int(np.argmax(busy)), busy.shape) if busy.any() else (None, None)
    bottleneck = None if side is None else {
        "broker": int(s.broker_ids[broker]), "side": SIDES[side], "busy_ms": int(busy[side, broker]) * spec.sample_ms,
        "peak_utilization": float(peak_util[side, broker]),
        **({"limit_bps": fetch_cap} if SIDES[side] == "partition fetch" else {})}
    brokers = [{"broker": int(b), "replication_in_peak_bps": float(rep_peak[0, i]),
                "replication_out_peak_bps": float(rep_peak[1, i]),
                "replication_in_mean_bps": float(rep_sum[0, i] / max(samples, 1)),
                "replication_out_mean_bps": float(rep_sum[1, i] / max(samples, 1)),
                "network_in_bps": float(s.net_in_bps[i]), "network_out_bps": float(s.net_out_bps[i])}
               for i, b in enumerate(s.broker_ids)]
    elapsed = now - start
    return CandidateResult(
        label=spec.label, throttle_bps=spec.throttle_bps, kip542=sc.kafka.kip542, finished=reason is None,
        duration_ms=elapsed, reason=reason, eta_ms=eta, start_ms=started, cancelled_ms=cancelled,
        bytes_left={names[p]: int(left[p]) for p in np.nonzero(left)[0]},
        batches=[(a - start, b - start, n) for a, b, n in batches], bottleneck=bottleneck,
        flags={f: {"peak": peaks[f], "partition_minutes": round(minutes[f], 1)} for f in flag_names},
        brokers=brokers, series=series, wall_s=time.perf_counter() - t0, cpu_s=time.process_time() - c0, simulated_ms=elapsed,
        replica_ticks=int((s.rbi >= 0).sum()) * (elapsed // tick))

