"""Rules that span fields: references to brokers, topics and partitions, the time grid, and the
bounds on work and on int64 arithmetic. Each rule adds every violation it finds to ``Problems``."""

from __future__ import annotations

import math

from replicaflow.errors import show
from replicaflow.model.configs import (
    DEFAULT_BROKER,
    MIN_ISR,
    REASSIGNMENT_RATES,
    REPLICATION_RATES,
    THROTTLED_REPLICAS_LISTS,
    UNCLEAN_LEADER_ELECTION_ENABLE,
)
from replicaflow.model.election import registration_ms
from replicaflow.model.fetcher import fetch_error_problem
from replicaflow.model.log_dirs import failure_halts_broker, jbod_problem
from replicaflow.model.quota import parse_throttled_replicas
from replicaflow.model.reassign_tool import EXISTING_REASSIGNMENT
from replicaflow.model.units import INT64_MAX, format_bytes, format_duration
from replicaflow.sim.scenario.fields import MAX_TS_MS
from replicaflow.sim.scenario.limits import MAX_FETCHER_THREADS, MAX_REPLICAS, estimate
from replicaflow.sim.scenario.models import (
    BrokerDownEvent,
    BrokerUpEvent,
    CancelReassignmentEvent,
    ConfigEvent,
    ElectLeadersEvent,
    FailPartitionEvent,
    LogDirFailureEvent,
    ProduceBurstEvent,
    ReassignEvent,
    Scenario,
    SlowNetworkEvent,
    StallFollowerEvent,
    TopicSpec,
)
from replicaflow.sim.scenario.problems import Problem, Problems


def check_grid_and_bounds(s: Scenario, problems: Problems, max_work: int) -> bool:
    """The time grid and the size of the run; False when the run must not even be planned."""
    if s.scrape_interval_ms % s.tick_ms:
        problems.add(("scrape_interval",), f"expected a multiple of tick ({s.tick_ms}ms), found {s.scrape_interval_ms}ms")
    if s.tick_ms > s.duration_ms:
        problems.add(("tick",), f"expected at most duration ({s.duration_ms}ms), found {s.tick_ms}ms")
    if s.start_ms + s.duration_ms > MAX_TS_MS:
        problems.add(("duration",), "expected the run to end before the year 9999 (start + duration)")
    replicas = s.replicas
    n = len(s.cluster.brokers)
    threads = n * max(n - 1, 0) * s.kafka.num_replica_fetchers
    ticks = s.duration_ms // s.tick_ms
    fits = True
    if replicas > MAX_REPLICAS:
        problems.add(("topics",), f"expected at most {MAX_REPLICAS:,} replicas in all (partitions × "
                                  f"replication_factor), found {replicas:,}")
        fits = False
    if threads > MAX_FETCHER_THREADS:
        fetchers = s.kafka.num_replica_fetchers
        if fetchers == 1:  # Kafka's default: the brokers are the cause (a plan's cluster from --topics has no field)
            most = (1 + math.isqrt(1 + 4 * MAX_FETCHER_THREADS)) // 2  # the largest b with b·(b − 1) within it
            problems.add(("cluster", "brokers"), f"expected at most {most:,} brokers (each fetches from every "
                         f"other: at most {MAX_FETCHER_THREADS:,} fetcher threads are simulated), found {n:,}")
        else:
            problems.add(("kafka", "num_replica_fetchers"), f"expected at most {MAX_FETCHER_THREADS:,} fetcher "
                         f"threads (brokers × other brokers × num_replica_fetchers {fetchers}), found {threads:,}")
        fits = False
    if fits and replicas * ticks > max_work:
        problems.add(("duration",), f"the run would take {estimate(replicas, ticks)}, above the bound of "
                                    f"{max_work:.3g}; shorten duration, lengthen tick, or raise --max-work")
        fits = False
    for i, t in enumerate(s.topics):
        burst = max((e.rate_bps for e in s.events if isinstance(e, ProduceBurstEvent) and e.topic == t.name),
                    default=0.0)
        written = t.initial_size_bytes + (t.produce_rate_bps + burst) * s.duration_ms / 1000
        if written > INT64_MAX / 2:
            problems.add(("topics", i), f"expected a log that fits Kafka's 64-bit offsets, found "
                                        f"{format_bytes(written)} written to a partition over the run")
    return fits


class _References:
    """What the scenario defines (broker ids, topics), and the checks of names that point at it."""

    def __init__(self, s: Scenario, problems: Problems):
        self.problems = problems
        self.ids = s.cluster.broker_ids
        self.brokers: set[int] = set()
        for i, b in enumerate(self.ids):
            if b in self.brokers:
                problems.add(("cluster", "brokers", i, "id"), f"expected unique broker ids, found {b} twice")
            self.brokers.add(b)
        self.topics: dict[str, TopicSpec] = {}
        metric_names: dict[str, str] = {}
        for i, t in enumerate(s.topics):
            if t.name in self.topics:
                problems.add(("topics", i, "name"), f"expected unique topic names, found '{t.name}' twice")
            elif metric_names.get(t.name.replace(".", "_"), t.name) != t.name:
                # Kafka refuses it (TopicCommand, Topic.hasCollision): '.' and '_' meet in the metric names
                problems.add(("topics", i, "name"), f"topic '{t.name}' collides with topic "
                                                    f"'{metric_names[t.name.replace('.', '_')]}': Kafka refuses "
                                                    "names that differ only in '.' and '_'")
            metric_names.setdefault(t.name.replace(".", "_"), t.name)
            self.topics.setdefault(t.name, t)

    def broker(self, b: int, loc: tuple) -> None:
        if b not in self.brokers:
            self.problems.add(loc, f"expected a broker of the cluster ({show(self.ids)}), found {b}")

    def topic(self, name: str, loc: tuple, origin: str | None = None) -> bool:
        if name in self.topics:
            return True
        shown = ", ".join(list(self.topics)[:10]) + (", …" if len(self.topics) > 10 else "")
        self.problems.add(loc, f"expected a topic of the scenario ({shown}), found '{name}'", origin)
        return False

    def topic_partition(self, topic: str, partition: int | None, loc: tuple, origin: str | None = None) -> bool:
        if not self.topic(topic, loc + ("topic",), origin):
            return False
        if partition is not None and partition >= self.topics[topic].partitions:
            self.problems.add(loc + ("partition",), f"expected a partition of '{topic}' "
                                                    f"(0..{self.topics[topic].partitions - 1}), found {partition}", origin)
            return False
        return True

    def replica_list(self, replicas, loc: tuple, origin: str | None = None, exact: int | None = None) -> None:
        if not replicas:
            self.problems.add(loc, "expected at least one replica, found an empty list", origin)
        elif exact is not None and len(replicas) != exact:
            self.problems.add(loc, f"expected {exact} replicas (replication_factor), found {len(replicas)}", origin)
        elif unknown := [b for b in replicas if b not in self.brokers]:
            self.problems.add(loc, f"expected brokers of the cluster ({show(self.ids)}), found unknown broker {unknown[0]}",
                              origin)
        elif len(set(replicas)) != len(replicas):
            self.problems.add(loc, f"expected distinct replicas, found {show(list(replicas))}", origin)


def check_references(s: Scenario, events: list[tuple[int, object, str | None]], problems: Problems) -> None:
    """Brokers, topics, partitions and log directories that assignments, events and configs name must exist;
    several log directories need a release and controller with JBOD."""
    refs = _References(s, problems)
    for i, b in enumerate(s.cluster.brokers):
        problem = jbod_problem(s.version, s.kafka.controller, len(b.log_dirs))
        if problem is not None:
            problems.add(("cluster", "brokers", i, "log_dirs"), f"expected one directory: {problem}")
    no_min_isr = f"expected no min ISR: Kafka has min.insync.replicas from 0.8.2, this cluster runs {s.version}"
    if s.cluster.min_insync_replicas != 1 and not s.version.min_isr_and_unclean_configs:
        problems.add(("cluster", "min_insync_replicas"), no_min_isr)
    for i, t in enumerate(s.topics):
        if t.min_insync_replicas is not None and not s.version.min_isr_and_unclean_configs:
            problems.add(("topics", i, "min_insync_replicas"), no_min_isr)
        if t.replication_factor > len(refs.ids):
            problems.add(("topics", i, "replication_factor"),
                         f"expected at most the {len(refs.ids)} brokers of the cluster, found {t.replication_factor}")
        if t.assignment and len(t.assignment) != t.partitions:
            problems.add(("topics", i, "assignment"),
                         f"expected one replica list per partition ({t.partitions}), found {len(t.assignment)}")
        elif t.assignment:
            for p, replicas in enumerate(t.assignment):
                refs.replica_list(replicas, ("topics", i, "assignment", p), exact=t.replication_factor)
    for i, ev, plan in events:
        _check_event(s, ("events", i), ev, plan, refs)
    _check_broker_lifetimes(s, events, problems)


def _check_broker_lifetimes(s: Scenario, events: list[tuple[int, object, str | None]], problems: Problems) -> None:
    """A broker stops only while it runs and starts only after it stopped (a broker_down, or a log directory's failure,
    which may halt it): the simulator ignored the second `broker_down` of a broker already down and a `broker_up` of
    one running, so the run was not what the file says. A start that Kafka refuses leaves the broker down."""
    for problem in _broker_lives(s, events)[0]:
        problems.add(*problem)


def _broker_lives(s: Scenario, events: list[tuple[int, object, str | None]]) -> tuple[list, list]:
    """Walks the brokers' stops and starts in time order: the (location, sentence) problems of
    ``_check_broker_lifetimes``, and the starts Kafka refuses (``model.election.registration_ms`` None: ZooKeeper 0.9+
    within a crash's session) as (start's index, broker, crash's index, crashed_ms, started_ms)."""
    found, refused = [], []
    dirs = {b.id: b.log_dirs for b in s.cluster.brokers}
    down: dict[int, int] = {}  # broker -> the event that stopped it
    halted: set[int] = set()
    crashed: dict[int, tuple[int, int]] = {}  # broker -> (event, ms) of its last crash
    failed: dict[int, set[str]] = {}  # broker -> its failed log directories since it started
    for i, ev, _ in sorted(events, key=lambda e: e[1].at_ms):
        b = getattr(ev, "broker", None)
        if b not in dirs:  # an unknown broker: said once, above
            continue
        if isinstance(ev, LogDirFailureEvent):
            halted.add(b)
            failed.setdefault(b, set()).add(ev.log_dir or dirs[b][0])
            if failure_halts_broker(s.version, len(set(dirs[b]) - failed[b])):
                crashed[b] = (i, ev.at_ms)
        elif isinstance(ev, BrokerDownEvent):
            if b in down:
                found.append((("events", i, ev.kind, "broker"),
                              f"expected a running broker, found broker {b} down since events[{down[b]}]"))
            down[b] = i
            if ev.controlled:
                crashed.pop(b, None)
            else:
                crashed[b] = (i, ev.at_ms)
        elif isinstance(ev, BrokerUpEvent):
            if b not in down and b not in halted:
                found.append((("events", i, ev.kind, "broker"),
                              f"expected a broker that an earlier event stopped, found broker {b} running"))
            elif b in crashed and registration_ms(s.version, s.kafka.controller, crashed[b][1], ev.at_ms,
                                                  s.kafka.session_timeout_ms) is None:
                refused.append((i, b, *crashed[b], ev.at_ms))
                continue
            down.pop(b, None)
            halted.discard(b)
            crashed.pop(b, None)
            failed.pop(b, None)
    return found, refused


def _refused_starts(s: Scenario, problems: Problems) -> list[str]:
    """A crashed ZooKeeper broker (0.9+) started again before its session expired: its old ``/brokers/ids`` node
    still stands, the registration fails with NodeExists and the broker exits (§6), so it stays down."""
    out = []
    for i, b, crash, crashed_ms, started_ms in _broker_lives(s, [(i, ev, None) for i, ev in enumerate(s.events)])[1]:
        expires_ms = crashed_ms + s.kafka.session_timeout_ms
        out.append(problems.sentence(Problem(("events", i, "broker_up"), (
            f"broker {b} starts {format_duration(started_ms - crashed_ms)} after it crashed (events[{crash}]), "
            f"before its ZooKeeper session ({format_duration(s.kafka.session_timeout_ms)}) expired: Kafka "
            f"{s.version} refuses the registration (NodeExists on /brokers/ids/{b}) and the broker exits, so it "
            f"stays down; start it at {format_duration(expires_ms)} or later"))))
    return out


def _check_event(s: Scenario, loc: tuple, ev, plan: str | None, refs: _References) -> None:
    problems = refs.problems
    if ev.at_ms > s.duration_ms:
        problems.add(loc + ("at",), f"expected a time within duration ({s.duration_ms}ms), found {ev.at_ms}ms")
    body = loc + (ev.kind,)
    if isinstance(ev, (BrokerDownEvent, BrokerUpEvent, SlowNetworkEvent, StallFollowerEvent, FailPartitionEvent,
                       LogDirFailureEvent)):
        refs.broker(ev.broker, body + ("broker",))
    if isinstance(ev, LogDirFailureEvent) and ev.log_dir is not None:
        dirs = next((b.log_dirs for b in s.cluster.brokers if b.id == ev.broker), None)
        if dirs is not None and ev.log_dir not in dirs:
            problems.add(body + ("log_dir",), f"expected one of broker {ev.broker}'s log_dirs "
                                              f"({', '.join(dirs)}), found '{ev.log_dir}'")
    if isinstance(ev, SlowNetworkEvent) and ev.network_in_bps is None and ev.network_out_bps is None:
        problems.add(body, "expected network_in or network_out, found neither")
    if isinstance(ev, FailPartitionEvent):
        refs.topic_partition(ev.topic, ev.partition, body)
        if (problem := fetch_error_problem(s.version, ev.error)) is not None:
            problems.add(body + ("error",), f"expected an error of this release: {problem}")
    if isinstance(ev, StallFollowerEvent):
        if ev.partition is not None and ev.topic is None:
            problems.add(body + ("partition",), "expected a topic with the partition, found no topic")
        elif ev.topic is not None:
            refs.topic_partition(ev.topic, ev.partition, body)
    if isinstance(ev, ProduceBurstEvent) and refs.topic_partition(ev.topic, None, body):
        for p in ev.partitions or ():
            refs.topic_partition(ev.topic, p, body)
        if ev.partitions is not None and len(set(ev.partitions)) != len(ev.partitions):
            problems.add(body + ("partitions",), f"expected distinct partitions, found {show(list(ev.partitions))}")
        if ev.partitions == ():  # the rate spread over no partition: a division by zero mid-run
            problems.add(body + ("partitions",), "expected at least one partition (leave it out for all), found []")
    if isinstance(ev, CancelReassignmentEvent) and not s.version.reassignment_cancellable:
        problems.add(body, f"expected no cancel_reassignment: Kafka cancels a reassignment from 2.4 (KIP-455, "
                           f"AlterPartitionReassignments), this cluster runs {s.version}")
    if isinstance(ev, ElectLeadersEvent) and ev.election_type == "unclean" and not s.version.unclean_election_tool:
        problems.add(body + ("election_type",), f"expected preferred: kafka-leader-election --election-type unclean "
                                                f"exists from 2.4 (KIP-460), this cluster runs {s.version}")
    if isinstance(ev, CancelReassignmentEvent | ElectLeadersEvent):
        for j, (topic, partition) in enumerate(ev.partitions or ()):
            refs.topic_partition(topic, partition, body + ("partitions", j))
    if isinstance(ev, ReassignEvent):
        if ev.throttle_bps is not None and not s.version.replication_throttles:
            problems.add(loc + ("throttle",), f"expected no throttle: kafka-reassign-partitions --throttle (KIP-73) "
                                               f"exists from 0.10.1, this cluster runs {s.version}")
        if ev.additional and not s.version.execute_adds_to_ongoing_reassignments:
            problems.add(loc + ("additional",), f"expected no additional: kafka-reassign-partitions --additional "
                                                 f"exists from 2.6 (KIP-455), this cluster runs {s.version}")
        where = ("partitions",) if plan else body + ("partitions",)
        moved: set[tuple[str, int]] = set()
        for j, move in enumerate(ev.partitions):
            refs.topic_partition(move.topic, move.partition, where + (j,), plan)
            if (move.topic, move.partition) in moved:
                problems.add(where + (j,), f"expected each partition once, found {move.topic}-{move.partition} twice",
                             plan)
            moved.add((move.topic, move.partition))
            refs.replica_list(move.replicas, where + (j, "replicas"), plan)
    if isinstance(ev, ConfigEvent):
        _check_config(s, ev, body, refs)


def check_failed_followers(topics: tuple[TopicSpec, ...], events: list[tuple[int, object, str | None]],
                           problems: Problems) -> None:
    """A ``fail_partition`` names a follower (docs/semantics.md §4): its broker must hold a replica of the partition
    by then, in the topic's assignment (``topics`` with every assignment filled) or as the target of a reassignment
    before it. Whether that replica is the leader at that moment depends on the run, and is refused when the
    event comes (sim/faults.py); a broker that never holds one is refused here, before any tick."""
    moves: dict[tuple[str, int], list[tuple[int, int, tuple[int, ...]]]] = {}
    for j, ev, _plan in events:
        if isinstance(ev, ReassignEvent):
            for m in ev.partitions:
                moves.setdefault((m.topic, m.partition), []).append((ev.at_ms, j, tuple(m.replicas)))
    assignment = {t.name: t.assignment for t in topics}
    for i, ev, _plan in events:
        if not isinstance(ev, FailPartitionEvent):
            continue
        held = set(assignment[ev.topic][ev.partition])
        held.update(b for at_ms, j, replicas in moves.get((ev.topic, ev.partition), ())
                    if (at_ms, j) < (ev.at_ms, i) for b in replicas)
        if ev.broker not in held:
            problems.add(("events", i, "fail_partition", "broker"),
                         f"expected a broker holding a replica of {ev.topic}-{ev.partition} by "
                         f"{format_duration(ev.at_ms)} ({show(sorted(held))}), found {ev.broker}")


def _check_config(s: Scenario, ev: ConfigEvent, body: tuple, refs: _References) -> None:
    if ev.entity_type == "topic" and not refs.topic(ev.entity, body + ("topic",)):
        return
    if ev.entity_type == "broker" and ev.entity != DEFAULT_BROKER:
        refs.broker(int(ev.entity), body + ("broker",))
    for name, value in ev.configs:
        if name in (MIN_ISR, UNCLEAN_LEADER_ELECTION_ENABLE) and not s.version.min_isr_and_unclean_configs:
            refs.problems.add(body + (name,), f"expected a config of this release, found {name}, which Kafka has "
                                              f"from 0.8.2 (this cluster runs {s.version})")
            continue
        if name in (*REPLICATION_RATES, *THROTTLED_REPLICAS_LISTS) and not s.version.replication_throttles:
            refs.problems.add(body + (name,), f"expected a config of this release, found a KIP-73 replication "
                                              f"throttle, which Kafka has from 0.10.1 (this cluster runs {s.version})")
            continue
        if name in REASSIGNMENT_RATES and not s.kafka.kip542:
            refs.problems.add(body + (name,), "expected a config of this broker, found a KIP-542 config "
                                              "while kafka.kip542 is false")
        if name in THROTTLED_REPLICAS_LISTS and value not in (None, "*"):
            for partition, b in sorted(parse_throttled_replicas(value, name)):
                refs.topic_partition(ev.entity, partition, body + (name,))
                refs.broker(b, body + (name,))


def warnings(s: Scenario, problems: Problems) -> list[str]:
    """Valid but likely unintended: a min ISR above the replication factor (every ``acks=all`` write
    is refused from the start; 3.7 caps the effective min ISR at the replica count, KIP-966's prelude)."""
    out = []
    for i, t in enumerate(s.topics):
        min_isr = t.min_insync_replicas or s.cluster.min_insync_replicas
        if min_isr > t.replication_factor:
            where = ("topics", i, "min_insync_replicas") if t.min_insync_replicas else ("cluster", "min_insync_replicas")
            effect = ("Kafka 3.7+ caps it at the replica count" if s.version.at_least("3.7")
                      else "every partition is under min ISR and acks=all writes are refused from the start")
            out.append(problems.sentence(Problem(where, f"min ISR {min_isr} is above topic '{t.name}'s "
                                                        f"replication factor {t.replication_factor}: {effect}")))
    out.extend(_queued_reassignments(s, problems))
    out.extend(_refused_starts(s, problems))
    return out


def _queued_reassignments(s: Scenario, problems: Problems) -> list[str]:
    """``--execute`` starts no move while a reassignment runs (``model.reassign_tool``): up to 2.5 a later
    ``reassign`` event then only sets its throttle rate, from 2.6 without ``additional`` it is refused; a file with
    several of them likely did not mean either."""
    reassigns = sorted((ev.at_ms, i) for i, ev in enumerate(s.events) if isinstance(ev, ReassignEvent))
    out = []
    for at_ms, i in reassigns[1:]:
        ev = s.events[i]
        if s.version.execute_adds_to_ongoing_reassignments:
            if ev.additional:
                continue
            refusal, effect, cure = EXISTING_REASSIGNMENT.split("  ")[0], "does nothing", "add 'additional: true'"
        else:
            refusal, cure = "There is an existing assignment running.", "2.6+ adds its moves to the running ones"
            effect = "only sets its throttle rate" if ev.throttle_bps is not None else "does nothing"
        out.append(problems.sentence(Problem(("events", i, "reassign"), (
            f"kafka-reassign-partitions {s.version} starts no move while another reassignment runs (\"{refusal}\"): "
            f"if the one at {format_duration(reassigns[0][0])} is still moving at {format_duration(at_ms)}, this one "
            f"{effect} ({cure})"))))
    return out
