"""From the inputs to what the engine runs: the scenario of a candidate, its batches, and the
analytic facts that need no simulation — data to move, the steady traffic each broker carries, the
throttle that keeps headroom, moves that can never finish, Strimzi's ETA (docs/plan.md)."""

from __future__ import annotations

import math
import os
import random
from dataclasses import dataclass

from replicaflow.errors import ReplicaflowError
from replicaflow.model.assignment import assign_replicas, random_start
from replicaflow.model.predicates import reassignment_state
from replicaflow.model.units import BYTES, format_bytes, format_duration, format_rate
from replicaflow.plan.candidate import CandidateSpec, partition_fetch_cap_bps
from replicaflow.plan.inputs import DEFAULT_MESSAGE_BYTES, ClusterModel, brokers_text
from replicaflow.sim.scenario import BrokerDownEvent, ReassignEvent, parse_scenario

MB = BYTES["MB"]               # throttles are offered in whole MB/s
HEADROOM = 0.9                 # the throttle keeps 10 % of each broker's spare NIC free
STRIMZI_PER_BROKER = 5         # Cruise Control num.concurrent.partition.movements.per.broker
STRIMZI_CLUSTER_MAX = 1250     # Cruise Control max.num.cluster.movements
TICK_MS = 1000                 # the quota rule holds Kafka's rates at 1 s ticks (docs/semantics.md §5.1)
SAMPLE_MS = 10_000             # state sampled every 10 s, or more often for a short move (~100 samples)
PLAN_MAX_WORK = 10**15         # the planner bounds its own runs (stall and max_ms), not the scenario loader


@dataclass(frozen=True)
class Move:
    topic: str
    partition: int
    before: tuple[int, ...]
    after: tuple[int, ...]
    size_bytes: int
    leader: int = -1                # the leader now (the describe's Leader); -1: the first replica

    @property
    def current_leader(self) -> int:
        return self.leader if self.leader >= 0 else self.before[0]

    @property
    def adding(self) -> list[int]:
        return reassignment_state(list(self.before), list(self.after))[1]

    @property
    def removing(self) -> list[int]:
        return reassignment_state(list(self.before), list(self.after))[2]


def moves_of(cluster: ClusterModel, plan: dict) -> list[Move]:
    """The partitions whose replica set or order changes (a reorder only moves leadership)."""
    return [Move(t, p, cluster.replicas[(t, p)], tuple(r), cluster.size_bytes.get((t, p), 0), cluster.leader((t, p)))
            for (t, p), r in sorted(plan.items()) if tuple(r) != cluster.replicas[(t, p)]]


def partition_rate_bps(cluster: ClusterModel, topic: str) -> float:
    return cluster.rate_bps.get(topic, 0.0) / cluster.partitions(topic)


def steady_traffic(cluster: ClusterModel) -> dict[int, tuple[float, float]]:
    """Per broker, (bytes in, bytes out) per second before any move: produce into the partitions it leads
    and the followers' fetches (the describe's leader leads; a scenario's first replica, as after a
    preferred election). A broker that is down (``ClusterModel.down_brokers``) fetches nothing."""
    traffic = {b: [0.0, 0.0] for b in cluster.brokers}
    for (t, p), replicas in cluster.replicas.items():
        rate = partition_rate_bps(cluster, t)
        leader = cluster.leader((t, p))
        followers = [f for f in replicas if f != leader and f not in cluster.down_brokers]
        traffic[leader][0] += rate
        traffic[leader][1] += rate * len(followers)
        for f in followers:
            traffic[f][0] += rate
    return {b: (i, o) for b, (i, o) in traffic.items()}


def reassigning_brokers(moves: list[Move]) -> set[int]:
    """The brokers ``kafka-reassign-partitions --throttle`` sets the rate on: every current and target replica of
    a moved partition (ReassignPartitionsCommand.calculateReassigningBrokers); no other broker carries the move."""
    return {b for m in moves for b in (*m.before, *m.after)}


def headroom_throttle_bps(cluster: ClusterModel, moves: list[Move] | None = None) -> tuple[float, int]:
    """The largest throttle keeping headroom on every broker the move crosses (:func:`reassigning_brokers`; all
    brokers without ``moves``): min over those brokers and directions of (the broker's own NIC capacity − the
    traffic that is not the move) × 0.9, rounded down to a whole MB/s from 1MB/s up (the rate an operator
    types, and never above the headroom); and the broker that sets it. A broker with a slow NIC that the plan
    leaves alone carries none of the move, so it sets nothing; nor does one that is down."""
    # a broker that is down carries nothing; each move's leader is up (down_brokers lead none)
    involved = (reassigning_brokers(moves) if moves else set(cluster.brokers)) - cluster.down_brokers
    best, who, nic = float("inf"), min(involved), cluster.network_bps
    for b, (t_in, t_out) in steady_traffic(cluster).items():
        if b not in involved:
            continue
        for cap, used in ((cluster.net_in(b), t_in), (cluster.net_out(b), t_out)):
            room = (cap - used) * HEADROOM
            if room < best:
                best, who, nic = room, b, cap
    if best <= 0:
        raise ReplicaflowError(f"broker {who} has no network headroom: its produce and replication traffic "
                               f"already fill its {format_rate(nic)} NIC")
    return (whole_mb_bps(best) if best >= MB else best), who


def whole_mb_bps(bps: float) -> float:
    """``bps`` rounded down to a whole MB/s: the throttles the planner offers are rates an operator types."""
    return float(math.floor(bps / MB) * MB)


def never_finishes(cluster: ClusterModel, moves: list[Move], throttle_bps: float | None,
                   kip542: bool) -> str | None:
    """Why the throttle can never complete the moves, from the rates alone (§5.1), or None.

    KIP-73's leader quota counts every fetch of a listed replica, in sync or not, and only the
    out-of-sync ones are held back: if the in-sync followers of the moving partitions a broker leads
    already fetch at the throttle, the new replicas get nothing. Either way a new replica has to copy
    faster than its partition grows: the produce into the partitions a broker receives (follower
    side) or sends (leader side) must stay below the throttle. KIP-542 counts only adding replicas.
    """
    down = sorted({b for m in moves for b in m.adding} & cluster.down_brokers)
    if down:
        return (f"broker {down[0]} is down (out of the ISR of every partition it holds in the describe): the new "
                "replicas it is to hold cannot copy, and Kafka completes a move only once every target replica is "
                "in the ISR")
    if throttle_bps is None:
        return None
    insync, growth_out, growth_in = {}, {}, {}
    for m in moves:
        rate = partition_rate_bps(cluster, m.topic)
        leader = m.current_leader
        if not kip542:  # a down broker's replica fetches nothing
            insync[leader] = insync.get(leader, 0.0) + rate * sum(
                1 for b in m.before if b != leader and b not in cluster.down_brokers)
        growth_out[leader] = growth_out.get(leader, 0.0) + rate * len(m.adding)
        for b in m.adding:
            growth_in[b] = growth_in.get(b, 0.0) + rate
    for b in sorted(insync):
        if insync[b] >= throttle_bps:
            return (f"broker {b}: in-sync replication of the moving partitions it leads ({format_rate(insync[b])}) "
                    f"already uses the {format_rate(throttle_bps)} leader quota (KIP-73 counts it)")
    for b in sorted(growth_out):
        if insync.get(b, 0.0) + growth_out[b] >= throttle_bps:
            return (f"broker {b}: produce into the partitions it sends ({format_rate(growth_out[b])}) plus in-sync "
                    f"replication ({format_rate(insync.get(b, 0.0))}) outruns the {format_rate(throttle_bps)} "
                    "leader quota")
    for b in sorted(growth_in):
        if growth_in[b] >= throttle_bps:
            return (f"broker {b}: produce into the partitions it receives ({format_rate(growth_in[b])}) outruns "
                    f"the {format_rate(throttle_bps)} follower quota")
    return None


def batches_of(moves: list[Move], max_per_broker: int | None) -> list[list[Move]]:
    """KIP-236-style batches: each broker takes part (adding or removing a replica) in at most N moves of a
    batch; moves are taken in plan order, each into the first batch with room.

    Each broker's full batches are the bits of one integer, so a move's first batch with room is the lowest
    bit that none of its brokers has set (thousands of moves at N = 1 make a thousand batches; trying them in
    turn for each move took seconds)."""
    if not max_per_broker:
        return [moves]
    batches: list[list[Move]] = []
    loads: list[dict[int, int]] = []
    full: dict[int, int] = {}
    for m in moves:
        brokers = set(m.adding) | set(m.removing)
        taken = 0
        for b in brokers:
            taken |= full.get(b, 0)
        i = (~taken & (taken + 1)).bit_length() - 1
        if i == len(batches):
            batches.append([])
            loads.append({})
        batches[i].append(m)
        for b in brokers:
            loads[i][b] = loads[i].get(b, 0) + 1
            if loads[i][b] >= max_per_broker:
                full[b] = full.get(b, 0) | 1 << i
    return batches


def reassign_event(batch: list[Move], throttle_bps: float | None) -> ReassignEvent:
    return ReassignEvent.model_validate({
        "kind": "reassign", "at": 0, "throttle": throttle_bps,
        "partitions": [{"topic": m.topic, "partition": m.partition, "replicas": list(m.after)} for m in batch]})


def candidate(cluster: ClusterModel, moves: list[Move], throttle_bps: float | None, kip542: bool,
              max_per_broker: int | None, label: str, tick_ms: int = TICK_MS) -> CandidateSpec:
    """The scenario of one candidate: the cluster, the first batch at 0 (``--execute --throttle``), the rest
    fed as each completes, and the scenario's own events (a broker restart …). A broker the describe shows down
    (``ClusterModel.down_brokers``) stops at 0, a controlled shutdown: out of every ISR at once, as it is there."""
    topics = cluster.topics()
    data = {
        "name": "plan", "duration": "1d", "tick": f"{tick_ms}ms", "scrape_interval": "1h",
        "kafka": {**cluster.kafka, "version": cluster.version, "kip542": kip542},
        "cluster": {"brokers": [{"id": b, **({"rack": cluster.racks[b]} if b in cluster.racks else {}),
                                 "network_in": cluster.net_in(b), "network_out": cluster.net_out(b)}
                                for b in cluster.brokers]},
        "topics": [{"name": t, "partitions": cluster.partitions(t),
                    "replication_factor": len(cluster.replicas[(t, 0)]), "min_insync_replicas": cluster.min_isr[t],
                    "produce_rate": cluster.rate_bps.get(t, 0.0), "message_size": DEFAULT_MESSAGE_BYTES,
                    "assignment": [list(cluster.replicas[(t, p)]) for p in range(cluster.partitions(t))]}
                   for t in topics],
    }
    sc = parse_scenario(data, base_dir=os.getcwd(), source="<plan>", max_work=PLAN_MAX_WORK)
    groups = batches_of(moves, max_per_broker)
    down = [BrokerDownEvent.model_validate({"kind": "broker_down", "at": 0, "broker": b, "controlled": True})
            for b in sorted(cluster.down_brokers)]
    events = [*down, reassign_event(groups[0], throttle_bps), *cluster.extra_events]
    sc = sc.model_copy(update={"events": tuple(sorted(events, key=lambda e: e.at_ms))})
    sizes = [cluster.size_bytes.get((t, p), 0) // DEFAULT_MESSAGE_BYTES
             for t in topics for p in range(cluster.partitions(t))]
    leader_slots = [cluster.replicas[(t, p)].index(cluster.leader((t, p)))
                    for t in topics for p in range(cluster.partitions(t))]
    after = max((e.at_ms for e in cluster.extra_events), default=0)
    # only the sampling step: the slowest NIC receiving a replica (the longest a move can take) sets it
    slowest = min((cluster.net_in(b) for m in moves for b in m.adding), default=cluster.network_bps)
    naive_ms = sum(m.size_bytes * len(m.adding) for m in moves) / (throttle_bps or slowest) * 1000
    sample_ms = int(max(tick_ms, min(SAMPLE_MS, naive_ms // 100 // tick_ms * tick_ms)))
    return CandidateSpec(label=label, scenario=sc, size_messages=sizes, sample_ms=sample_ms, leader_slots=leader_slots,
                         batches=[reassign_event(g, throttle_bps) for g in groups[1:]],
                         throttle_bps=throttle_bps, after_ms=after)


def beyond_horizon(cluster: ClusterModel, moves: list[Move], spec: CandidateSpec) -> str | None:
    """Why no candidate can finish within the ``max_ms`` a candidate runs, from sizes alone, or None: a new
    replica copies at most one partition's fetch cap, and a broker receives at most its NIC. Each candidate
    would otherwise simulate all of ``max_ms`` (30 days, tens of minutes each) to report it unfinished."""
    days = spec.max_ms // 86_400_000
    cap = partition_fetch_cap_bps(spec.scenario)
    biggest = max(moves, key=lambda m: m.size_bytes if m.adding else -1)
    if biggest.adding and biggest.size_bytes / cap * 1000 > spec.max_ms:
        return (f"{biggest.topic}-{biggest.partition}: {format_bytes(biggest.size_bytes)} to copy takes at least "
                f"{format_duration(biggest.size_bytes / cap * 1000)} at the {format_rate(cap)} one partition fetches "
                f"(replica.fetch.max.bytes per round trip); the planner simulates at most {days} days")
    receiving: dict[int, int] = {}
    for m in moves:
        for b in m.adding:
            receiving[b] = receiving.get(b, 0) + m.size_bytes
    for b, total in sorted(receiving.items()):
        nic = cluster.net_in(b)
        if total / nic * 1000 > spec.max_ms:
            return (f"broker {b}: {format_bytes(total)} to receive takes at least "
                    f"{format_duration(total / nic * 1000)} at its {format_rate(nic)} "
                    f"NIC; the planner simulates at most {days} days")
    return None


def strimzi_nic_bps(cluster: ClusterModel, moves: list[Move]) -> float:
    """The one NIC Strimzi's estimate takes (its formula has a single NIC for the whole cluster): the slowest
    direction of the slowest broker that takes part in the moves (adding or removing a replica, or leading a
    moving partition), since those are the NICs the copy crosses; a broker the plan leaves alone is left out."""
    involved = {b for m in moves for b in (*m.adding, *m.removing, m.current_leader)}
    return min((min(cluster.net_in(b), cluster.net_out(b)) for b in involved), default=cluster.network_bps)


def strimzi_eta_ms(data_bytes: float, n_brokers: int, network_bps: float, throttle_bps: float | None) -> float:
    """Strimzi proposal 088's estimate: maxMoves = min(brokers × per-broker concurrency, cluster max),
    bandwidth = min(NIC / maxMoves, throttle), ETA = data / (maxMoves × bandwidth). ``network_bps`` is one
    NIC for all brokers, as the formula has it (:func:`strimzi_nic_bps`)."""
    max_moves = min(n_brokers * STRIMZI_PER_BROKER, STRIMZI_CLUSTER_MAX)
    bandwidth = network_bps / max_moves if throttle_bps is None else min(network_bps / max_moves, throttle_bps)
    return data_bytes / (max_moves * bandwidth) * 1000.0


def generate(cluster: ClusterModel, brokers: list[int], rack_aware: bool = True,
             seed: int = 0, flag: str = "--brokers") -> dict[tuple[str, int], tuple[int, ...]]:
    """``kafka-reassign-partitions --generate``: every topic with a replica off ``brokers`` laid out again over
    them by Kafka's ``assignReplicasToBrokers`` -- rack-aware when the brokers have racks (all or none, as
    Kafka demands), unless ``rack_aware`` is off (``--disable-rack-aware``). Kafka draws each topic's start
    index and replica shift at random; here they come from ``random.Random(seed)``, topics in name order."""
    unknown = [b for b in brokers if b not in cluster.brokers]
    if unknown:
        raise ReplicaflowError(f"{flag}: unknown broker {unknown[0]} (brokers: {brokers_text(cluster.brokers)})")
    racks = None
    if rack_aware and any(b in cluster.racks for b in brokers):
        bare = [b for b in brokers if b not in cluster.racks]
        if bare:
            raise ReplicaflowError(f"--generate: broker {bare[0]} has no rack while others have one; give every "
                                   "broker a rack (--racks) or use --disable-rack-aware, as Kafka requires")
        racks = {b: cluster.racks[b] for b in brokers}
    rng = random.Random(seed)
    plan = {}
    for t in cluster.topics():
        n, rf = cluster.partitions(t), len(cluster.replicas[(t, 0)])
        if all(b in brokers for p in range(n) for b in cluster.replicas[(t, p)]):
            continue
        if rf > len(brokers):
            raise ReplicaflowError(f"{flag}: topic {t} has replication factor {rf} but only {len(brokers)} "
                                   "brokers remain")
        start, shift = random_start(len(brokers), rng)
        for p, replicas in enumerate(assign_replicas(brokers, n, rf, start, shift, racks=racks)):
            plan[(t, p)] = tuple(replicas)
    if not plan:
        raise ReplicaflowError("--generate: no replica is on the brokers to remove; nothing to move")
    return plan
