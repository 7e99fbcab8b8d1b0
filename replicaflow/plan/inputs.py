"""What `replicaflow plan` reads, in Kafka's own formats, checked before any simulation (docs/plan.md).

The cluster comes from ``kafka-topics --describe`` (assignment, ``min.insync.replicas`` overrides)
or from a scenario file; partition sizes from ``kafka-log-dirs --describe`` (the largest replica of
each partition: what a new replica has to copy); produce rates from ``TOPIC=RATE`` flags or an
OpenMetrics/Prometheus text file (``kafka_server_brokertopicmetrics_bytesin_total{topic=…}``, summed
over brokers). The reassignment is ``kafka-reassign-partitions``' JSON (version 1). Every problem is
one ``ReplicaflowError`` sentence naming the file and the field or line.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from replicaflow.errors import ReplicaflowError, quote, show
from replicaflow.ingest.log_dirs_command import read_log_dirs
from replicaflow.ingest.topic_command import read_topic_describe
from replicaflow.model import predicates
from replicaflow.model.reassign_tool import log_dirs_problem, pasted_output_problem, plan_version_problem
from replicaflow.model.topic import topic_name_problem
from replicaflow.model.units import INT32_MAX, parse_rate_bps
from replicaflow.model.version import KafkaVersion
from replicaflow.telemetry.textfile import loads_json, read_text

DEFAULT_NETWORK_BPS = 125e6  # 1 Gbit/s NIC per direction, the scenario files' default too
DEFAULT_MESSAGE_BYTES = 1024
BYTES_IN_METRIC = "kafka_server_brokertopicmetrics_bytesin"  # JMX BrokerTopicMetrics BytesInPerSec, per topic
_BYTES_IN_NAMES = {BYTES_IN_METRIC + suffix for suffix in ("", "_rate", "persec", "_total")}
# the meter's Count (bytes since the broker started): Strimzi's ``…_total``; Confluent's jmx-monitoring-stacks
# writes it as ``…bytesinpersec`` (its rule ``kafka_$1_$2_$3`` of ``<type, name, topic><>Count``, docs/metrics.md)
_COUNTER_SUFFIXES = ("_total", "persec")
# Prometheus text: NAME{LABELS} VALUE [TIMESTAMP]; prometheus-client's parser takes the last word as the timestamp
_PROMETHEUS_SAMPLE = re.compile(r'[a-zA-Z_:][a-zA-Z0-9_:]*(?:\{(?:[^"}]|"(?:[^"\\]|\\.)*")*\})?[ \t]+\S+(?:[ \t]+\S+)?')


@dataclass
class ClusterModel:
    """The cluster a plan is simulated on: brokers, each partition's replicas, size and produce rate."""

    brokers: list[int]
    racks: dict[int, str]
    replicas: dict[tuple[str, int], tuple[int, ...]]
    min_isr: dict[str, int]                      # per topic (the default 1 where not overridden)
    size_bytes: dict[tuple[str, int], int] = field(default_factory=dict)
    rate_bps: dict[str, float] = field(default_factory=dict)  # whole topic
    network_bps: float = DEFAULT_NETWORK_BPS     # every broker's NIC, where ``nics`` does not name the broker
    nics: dict[int, tuple[float, float]] = field(default_factory=dict)  # a scenario's (network_in, network_out)
    version: str = "3.7"
    extra_events: tuple = ()                    # a scenario's own events (broker restarts …), kept in the plan
    kafka: dict = field(default_factory=dict)   # a scenario's other kafka settings (controller, lag time …), resolved
    offline: dict[tuple[str, int], str] = field(default_factory=dict)  # 'describe.txt:N' of a 'Leader: none' line
    deleting: dict[str, str] = field(default_factory=dict)  # topic → 'describe.txt:N' that says MarkedForDeletion
    leaders: dict[tuple[str, int], int] = field(default_factory=dict)  # the describe's Leader (else the first replica)
    # the describe's partitions whose Isr lacks some of their Replicas: (isr, 'describe.txt:N')
    out_of_sync: dict[tuple[str, int], tuple[tuple[int, ...], str]] = field(default_factory=dict)

    def net_in(self, broker: int) -> float:
        """The broker's own NIC in bytes/s: a scenario's ``network_in``, else the one ``network_bps`` of all."""
        return self.nics[broker][0] if broker in self.nics else self.network_bps

    def net_out(self, broker: int) -> float:
        return self.nics[broker][1] if broker in self.nics else self.network_bps

    def leader(self, key: tuple[str, int]) -> int:
        """The partition's leader now: the describe's ``Leader``, else (a scenario) the first replica."""
        return self.leaders.get(key, self.replicas[key][0])

    def isr(self, key: tuple[str, int]) -> tuple[int, ...]:
        """The describe's ISR of the partition: its replicas where the describe shows it whole."""
        return self.out_of_sync[key][0] if key in self.out_of_sync else self.replicas[key]

    def under_min_isr(self) -> list[tuple[str, int]]:
        """The partitions the describe shows under min ISR now, by docs/semantics.md §2 at the cluster's release.
        Before 3.7 that includes a partition whose whole ISR is smaller than its topic's min.insync.replicas
        (``Partition.appendRecordsToLeader`` refuses its acks=all writes); from 3.7 the replica count caps it.
        A ``--cluster`` scenario has no describe (no ``leaders``): none."""
        return [k for k in sorted(self.leaders) if self.is_under_min_isr(k)]

    @property
    def min_isr_capped(self) -> bool:
        """Whether the cluster's release caps min ISR at the replica count (docs/semantics.md §2, 3.7+)."""
        return KafkaVersion.parse(self.version).min_isr_capped

    def is_under_min_isr(self, key: tuple[str, int]) -> bool:
        """docs/semantics.md §2's predicate on the describe's ISR, at the cluster's release."""
        return bool(predicates.under_min_isr(len(self.isr(key)), self.min_isr[key[0]], len(self.replicas[key]),
                                             self.min_isr_capped))

    @cached_property
    def down_brokers(self) -> frozenset[int]:
        """Brokers the describe shows out of the ISR of every partition they hold that has a leader, so leading
        none: a broker that is down (the controller takes a dead broker out of each ISR and keeps it in the
        assignment, ``KafkaController.onBrokerFailure``; KRaft fences it). The plan simulates them down from the
        start. A ``--cluster`` scenario has no describe: none."""
        if not self.leaders:
            return frozenset()
        held, in_isr = set(), set()
        for key, replicas in self.replicas.items():
            held.update(replicas)
            if key not in self.offline:  # an offline partition's ISR may keep its last, dead member (ZooKeeper)
                in_isr.update(self.isr(key))
        return frozenset(held - in_isr)

    def at_min_isr_out_of_sync(self) -> list[tuple[str, int]]:
        """The describe's partitions at min ISR now because a replica that is not down is out of their ISR
        (KIP-427's ``Partition.isAtMinIsr`` at the cluster's release): one more replica out refuses acks=all
        writes. The simulation starts that replica in sync, so its at-min-ISR count leaves them out (a down
        broker's replicas it leaves out of the ISR too, and counts)."""
        return [k for k in sorted(self.out_of_sync)
                if set(self.replicas[k]) - set(self.isr(k)) - self.down_brokers
                and predicates.at_min_isr(len(self.isr(k)), self.min_isr[k[0]], len(self.replicas[k]),
                                          self.min_isr_capped)]

    def topics(self) -> list[str]:
        return sorted({t for t, _ in self.replicas})

    def partitions(self, topic: str) -> int:
        """Counted once over all partitions, not once per call: ``steady_traffic`` asks it per partition, and a
        describe of 5,000 partitions took 13 s to check (50,000: 20 minutes) before Spark started."""
        return self._partition_counts[topic]

    @cached_property
    def _partition_counts(self) -> dict[str, int]:  # ``replicas`` is built once and never changed
        counts: dict[str, int] = {}
        for t, p in self.replicas:
            counts[t] = max(counts.get(t, 0), p + 1)
        return counts


def brokers_text(brokers: list[int], shown: int = 20) -> str:
    """The cluster's brokers in a sentence: ``1,2,3,4``, the first ``shown`` of a large cluster and how many more
    (a describe of 2,000 brokers made an unknown-broker sentence of 10,000 characters)."""
    more = f",… ({len(brokers) - shown} more)" if len(brokers) > shown else ""
    return ",".join(map(str, brokers[:shown])) + more


def cluster_from_describe(describe: Path, log_dirs: Path | None, brokers: list[int] | None,
                          default_min_isr: int = 1) -> ClusterModel:
    """The cluster of a ``kafka-topics --describe`` output (plus ``kafka-log-dirs`` sizes). A ``--zookeeper``
    describe shows a topic's ``min.insync.replicas`` only where the topic overrides it; ``default_min_isr`` is the
    brokers' own for the others (``--min-insync-replicas``; Kafka's default 1)."""
    snap = read_topic_describe(describe)
    moving = next((p for p in snap.partitions.values() if p.adding or p.removing), None)
    if moving is not None:  # its Replicas hold the old and the new set together: no cluster to plan from
        raise ReplicaflowError(f"{describe}:{moving.line}: partition {moving.topic}-{moving.partition} is being "
                               "reassigned (Adding/Removing Replicas); plan from a describe taken with no "
                               "reassignment in progress")
    replicas = {k: p.replicas for k, p in snap.partitions.items()}
    numbers: dict[str, list[int]] = {}
    for t, p in replicas:
        numbers.setdefault(t, []).append(p)
    for topic, listed in numbers.items():  # the first gap, without counting up to a partition id of 2^31
        missing = next((i for i, p in enumerate(sorted(listed)) if p != i), None)
        if missing is not None:
            raise ReplicaflowError(f"{describe}: topic {quote(topic)} lacks the line of partition {missing}; "
                                   "plan needs every partition of a topic")
        first = len(replicas[(topic, 0)])
        odd = next((p for p in sorted(listed) if len(replicas[(topic, p)]) != first), None)
        if odd is not None:  # the candidates' scenario has one replication_factor per topic: was 11 lines of '<plan>'
            raise ReplicaflowError(f"{describe}:{snap.partitions[(topic, odd)].line}: partition {topic}-{odd} has "
                                   f"{len(replicas[(topic, odd)])} replicas where {topic}-0 has {first}; plan needs "
                                   "one replication factor for all partitions of a topic")
    min_isr = {t: int(d.configs.get("min.insync.replicas", default_min_isr))  # checked there
               for t, d in snap.topics.items()}
    known = set(brokers or ()) | snap.brokers()
    deleting: dict[str, str] = {}  # the header says it; a release that prints it on partition lines, the first one
    for d in sorted((*snap.topics.values(), *snap.partitions.values()), key=lambda d: d.line):
        if d.marked_for_deletion:
            deleting.setdefault(d.topic, f"{describe}:{d.line}")
    model = ClusterModel(brokers=sorted(known), racks={}, replicas=replicas,
                         min_isr={t: min_isr.get(t, default_min_isr) for t, _ in replicas},
                         offline={k: f"{describe}:{p.line}" for k, p in snap.partitions.items() if p.leader is None},
                         deleting=deleting,
                         leaders={k: p.leader for k, p in snap.partitions.items() if p.leader is not None},
                         out_of_sync={k: (p.isr, f"{describe}:{p.line}") for k, p in snap.partitions.items()
                                      if p.leader is not None and set(p.isr) != set(p.replicas)})
    if log_dirs is not None:
        for r in read_log_dirs(log_dirs):
            key = (r.topic, r.partition)
            if r.topic not in numbers:  # kafka-log-dirs lists every topic unless --topic-list: a describe of some
                continue                # of them (kafka-topics --describe --topic t) is the cluster to plan on
            if key not in replicas:
                raise ReplicaflowError(f"{log_dirs}: partition {r.topic}-{r.partition} on broker {r.broker} is not "
                                       f"in {describe}")
            if r.broker not in known:  # its logs were dropped as strays: 'no online replica' blamed the partition
                raise ReplicaflowError(f"{log_dirs}: broker {r.broker} of the log-dirs output holds "
                                       f"{r.topic}-{r.partition} but is no broker of {describe}, whose replicas are "
                                       f"on brokers {brokers_text(sorted(known))}; was it taken on another "
                                       "cluster? (a broker that holds no replica yet belongs in --brokers)")
            if not r.is_future and r.dir_error is None and r.broker in replicas[key]:  # not a stray log
                model.size_bytes[key] = max(model.size_bytes.get(key, 0), r.size_bytes)
    return model


def isr_text(cluster: ClusterModel, key: tuple[str, int]) -> str:
    """``orders-0 is already under min ISR in the describe (ISR 2 of 1,2,3, min.insync.replicas=2)``'s parenthesis."""
    isr = ",".join(map(str, cluster.isr(key)))
    return (f"ISR {isr} of {','.join(map(str, cluster.replicas[key]))}, "
            f"min.insync.replicas={cluster.min_isr[key[0]]}")


def isr_warnings(cluster: ClusterModel, shown: int = 3) -> list[str]:
    """One line per group of the describe's partitions whose ISR lacks the same replicas (a topic, the brokers
    out of it): the plan starts every replica in sync (``seed_sizes``), so it does not see them catch up. A broker
    out of every ISR (``ClusterModel.down_brokers``) is one line of its own: the plan simulates it down."""
    groups: dict[tuple[str, tuple[int, ...]], list[tuple[str, int]]] = {}
    held: dict[int, list[tuple[str, int]]] = {}
    for key, (isr, _) in sorted(cluster.out_of_sync.items()):
        for b in cluster.down_brokers.intersection(cluster.replicas[key]):
            held.setdefault(b, []).append(key)
        lacking = tuple(b for b in cluster.replicas[key] if b not in isr and b not in cluster.down_brokers)
        if lacking:
            groups.setdefault((key[0], lacking), []).append(key)
    lines = [f"{cluster.out_of_sync[keys[0]][1]}: broker {b} is out of the ISR of every partition it holds "
             f"({_count_partitions(len(keys))}) and leads none: the plan simulates it down from the start, and a "
             "move that adds a replica on it never completes" for b, keys in sorted(held.items())]
    for (topic, lacking), keys in groups.items():
        under = [k for k in keys if cluster.is_under_min_isr(k)]
        where = cluster.out_of_sync[keys[0]][1]
        out = "broker" + ("s " if len(lacking) > 1 else " ") + ",".join(map(str, lacking))
        names = ", ".join(f"{t}-{p}" for t, p in keys[:shown]) + (", …" if len(keys) > shown else "")
        if len(keys) == 1:
            what = f"partition {names}: {out} out of its ISR ({isr_text(cluster, keys[0])})"
            what += ", under min ISR" if under else ""
        else:
            what = f"{len(keys):,} partitions of {quote(topic)} ({names}) have {out} out of their ISR"
            what += f", {len(under):,} of them under min.insync.replicas={cluster.min_isr[topic]}" if under else ""
        lines.append(f"{where}: {what}; the plan simulates every replica in sync (the describe's leader leads), "
                     "so it does not see them catch up, and Kafka completes a move only once every target "
                     "replica is in the ISR")
    return offline_warnings(cluster, shown) + lines


def _count_partitions(n: int) -> str:
    return f"{n:,} partition" + ("" if n == 1 else "s")


def offline_warnings(cluster: ClusterModel, shown: int = 3) -> list[str]:
    """One line per topic whose partitions the describe shows without a leader (``Leader: none``) and the plan
    leaves alone (a moved one is refused): every write to them fails now, acks=all or not, while the
    simulation leads them by their first replica; its acks=all answer is of the other partitions."""
    by_topic: dict[str, list[tuple[str, int]]] = {}
    for key in sorted(cluster.offline):
        by_topic.setdefault(key[0], []).append(key)
    lines = []
    for topic, keys in by_topic.items():
        names = ", ".join(f"{t}-{p}" for t, p in keys[:shown]) + (", …" if len(keys) > shown else "")
        what = (f"partition {names} has" if len(keys) == 1 else f"{len(keys):,} partitions of {quote(topic)} ({names}) "
                                                                 "have")
        lines.append(f"{cluster.offline[keys[0]]}: {what} no leader (offline): producers' writes to "
                     f"{'it' if len(keys) == 1 else 'them'} fail now, acks=all or not; the plan simulates "
                     f"{'it' if len(keys) == 1 else 'them'} online, led by the first replica")
    return lines


def cluster_from_scenario(path: Path, max_work: int, version: str | None = None) -> ClusterModel:
    """The cluster of a scenario file: brokers with racks and NICs, topics with sizes and rates, events.
    ``version`` (``--version``) replaces the file's release before its events are checked: a cancel_reassignment
    (2.4+) of a scenario planned on 2.3 ran there unchecked."""
    from replicaflow.sim.scenario import load_scenario

    try:
        sc = load_scenario(path, max_work=max_work, version=version)
    except ReplicaflowError as exc:
        if version is None:
            raise
        raise ReplicaflowError(f"--version {version}: {exc}") from None
    replicas, sizes = {}, {}
    for t in sc.topics:
        for p, row in enumerate(t.assignment):
            replicas[(t.name, p)] = tuple(row)
            sizes[(t.name, p)] = t.initial_size_bytes
    return ClusterModel(
        brokers=sc.cluster.broker_ids, racks={b.id: b.rack for b in sc.cluster.brokers if b.rack},
        replicas=replicas, size_bytes=sizes,
        min_isr={t.name: t.min_insync_replicas or sc.cluster.min_insync_replicas for t in sc.topics},
        rate_bps={t.name: t.produce_rate_bps for t in sc.topics},
        nics={b.id: (b.network_in_bps, b.network_out_bps) for b in sc.cluster.brokers},  # each broker its own
        version=sc.kafka.version, extra_events=tuple(e for e in sc.events if e.kind != "reassign"),
        kafka=_kafka_settings(sc.kafka))


def _kafka_settings(kafka) -> dict:
    """A scenario's ``kafka`` block as a scenario writes it (durations in ms), but its release and KIP-542 switch,
    which the plan sets: its candidates run with the same controller, lag time, fetchers and timeouts."""
    return {info.alias or name: f"{getattr(kafka, name)}ms" if name.endswith("_ms") else getattr(kafka, name)
            for name, info in type(kafka).model_fields.items() if name not in ("version", "kip542")}


def flag_rate_bps(flag: str, text: str) -> float:
    """``5MB/s``, or a bare number of bytes/s: Kafka's tool takes ``--throttle`` so and JMX's BytesInPerSec reads
    so, and every rate flag of ``plan`` takes what the others take."""
    try:
        return parse_rate_bps(float(text) if text.isascii() and text.isdigit() else text)
    except ValueError as exc:
        raise ReplicaflowError(f"{flag}: {exc}") from None


def produce_rates(flags: list[str], topics: set[str]) -> dict[str, float]:
    """``--produce-rate TOPIC=RATE`` flags, each naming a topic of the cluster."""
    rates = {}
    for flag in flags:
        topic, sep, rate = flag.partition("=")
        if not sep:
            raise ReplicaflowError(f"--produce-rate: expected TOPIC=RATE like orders=20MB/s, found {quote(flag)}")
        if topic not in topics:
            raise ReplicaflowError(f"--produce-rate: topic {quote(topic)} is not in the cluster")
        if topic in rates:
            raise ReplicaflowError(f"--produce-rate: topic {quote(topic)} is given twice")
        rates[topic] = flag_rate_bps(f"--produce-rate {topic}", rate)
    return rates


def metrics_rates(path: Path, topics: set[str]) -> dict[str, float]:
    """Per-topic produce rates from a Prometheus/OpenMetrics text file (prometheus-client's parser).

    A gauge ``…bytesin`` or ``…bytesin_rate`` (bytes/s) gives its latest sample per series; a counter
    ``…bytesin_total`` or ``…bytesinpersec`` (the meter's Count, Confluent's name for it) needs two samples
    with timestamps of the same series, and the rate is their difference over time (``_total`` first). Each topic's rate is the sum over its series (brokers). A series is its
    labels: one broker's BytesInPerSec exported under two of these names (an exporter that writes the
    counter and a rate gauge beside it) is one rate, not two summed: the counter's, measured over the
    samples' span, where it gives one, else the latest gauge's. Other samples of the family (``_created``,
    a histogram's ``_bucket``/``_count``/``_sum``) are not rates and are skipped; a value that is not a finite
    non-negative number, or a counter that went down, is one sentence.
    """
    text = read_text(path, "metrics file")
    counters: dict[tuple, tuple[str, list[tuple[float, float]]]] = {}
    gauges: dict[tuple, tuple[float, float]] = {}
    for s in _metric_samples(path, text):
        topic = s.labels.get("topic")
        if s.name not in _BYTES_IN_NAMES or topic is None or topic not in topics:
            continue
        labels = ",".join(f"{k}={quote(v)}" for k, v in sorted(s.labels.items()))
        if not math.isfinite(s.value) or s.value < 0:
            raise ReplicaflowError(f"{path}: {s.name}{{{labels}}}: expected a finite non-negative number of bytes, "
                                   f"found {s.value}")
        key, ts = (labels, topic), float(s.timestamp or 0.0)
        if s.name.endswith(_COUNTER_SUFFIXES):
            counters.setdefault((*key, s.name.endswith("persec")), (f"{s.name}{{{labels}}}", []))[1].append(
                (ts, s.value))
        elif key not in gauges or ts >= gauges[key][0]:
            gauges[key] = (ts, float(s.value))  # a gauge scraped twice: its latest value
    rates: dict[str, float] = {}
    for key in {**gauges, **{k[:2]: None for k in counters}}:
        rate = _series_rate(path, [counters[(*key, c)] for c in (False, True) if (*key, c) in counters],
                            gauges.get(key))
        rates[key[1]] = rates.get(key[1], 0.0) + rate
    if not rates:
        raise ReplicaflowError(f"{path}: no {BYTES_IN_METRIC} sample with a topic label of the cluster")
    for topic, rate in rates.items():  # the bound of a --produce-rate: 1e308 twice summed to infinity
        try:
            parse_rate_bps(rate)
        except ValueError as exc:
            raise ReplicaflowError(f"{path}: topic {quote(topic)}: {exc}") from None
    return rates


def _series_rate(path: Path, counters: list[tuple[str, list[tuple[float, float]]]],
                 gauge: tuple[float, float] | None) -> float:
    """One series' bytes/s: its first counter that gives a rate, else its gauge's latest value; else the first
    counter's sentence saying why it gives none."""
    problems = []
    for name, points in counters:
        try:
            return _counter_rate(path, name, points)
        except ReplicaflowError as exc:
            problems.append(exc)
    if gauge is None:
        raise problems[0]
    return gauge[1]


def _counter_rate(path: Path, name: str, points: list[tuple[float, float]]) -> float:
    """A counter's bytes/s over its first and last samples; ReplicaflowError saying why it gives none."""
    points.sort()
    if len(points) < 2 or points[-1][0] <= points[0][0]:
        count = " (…persec is the BytesInPerSec meter's Count, as Confluent's exporter names it)" \
            if "persec{" in name else ""
        raise ReplicaflowError(f"{path}: {name} needs two samples with timestamps to give a rate{count}")
    (t0, v0), (t1, v1) = points[0], points[-1]
    if v1 < v0:
        raise ReplicaflowError(f"{path}: {name} went down from {v0:g} to {v1:g} (a broker restart resets the "
                               "counter); give samples from one broker process")
    return (float(v1) - float(v0)) / float(t1 - t0)


def _metric_samples(path: Path, text: str) -> list:
    """Every sample of the file; a line the parser refuses is one sentence naming ``path:line``.

    A text whose last line is ``# EOF`` is OpenMetrics (its required end): timestamps in seconds, exemplars
    after ``#``. Any other is Prometheus' text format, whose timestamps are milliseconds; read with the other
    parser, an OpenMetrics file's rates came out 1000 times too high, and an exemplar was read as a timestamp.
    """
    from prometheus_client.openmetrics.parser import text_string_to_metric_families as openmetrics
    from prometheus_client.parser import text_string_to_metric_families as prometheus

    lines = text.rstrip().splitlines()
    om = bool(lines) and lines[-1].strip() == "# EOF"
    parse, end, kind = (openmetrics, "# EOF\n", "OpenMetrics") if om else (prometheus, "", "Prometheus")
    # prometheus-client raises ValueError on a bad line, and AttributeError comparing a series' timestamps
    # written in two forms (-1 and 1e30: a Timestamp and a float), which came out as a traceback
    refused = (ValueError, TypeError, AttributeError)
    try:
        samples = [s for family in parse("\n".join(lines) + "\n") for s in family.samples]
    except refused as exc:
        for n, line in enumerate(lines[:-1] if om else lines, 1):  # one sample per line: find the bad one
            try:
                list(parse(line + "\n" + end))
            except refused:
                raise ReplicaflowError(f"{path}:{n}: not a sample line of {kind} text, found "
                                       f"{quote(line.strip())}") from None
        raise ReplicaflowError(f"{path}: not {kind} text that prometheus-client's parser reads "
                               f"({quote(str(exc))})") from None
    if not om:  # prometheus-client takes a line's last word as its timestamp (an exemplar's value, say)
        for n, line in enumerate(lines, 1):
            if line.startswith(BYTES_IN_METRIC) and not _PROMETHEUS_SAMPLE.fullmatch(line.strip()):
                raise ReplicaflowError(f"{path}:{n}: expected NAME{{LABELS}} VALUE [TIMESTAMP] (an exemplar needs "
                                       f"OpenMetrics text, ending with # EOF), found {quote(line.strip())}")
    return samples


def read_reassignment(path: Path, cluster: ClusterModel, log_dirs: dict[tuple[str, int], list[str]] | None = None,
                      unknown_hint: str = "") -> dict[tuple[str, int], tuple[int, ...]]:
    """``kafka-reassign-partitions`` JSON: every partition once, known topics, partitions and brokers.
    ``log_dirs`` receives each partition's ``log_dirs`` where the file gives them (a batch's file keeps them);
    ``unknown_hint`` ends the sentence of a broker the cluster does not list (how to name one)."""
    text = read_text(path, "reassignment file")
    try:
        doc = loads_json(text)
    except json.JSONDecodeError as exc:
        pasted = pasted_output_problem(text)
        line, problem = pasted or (exc.lineno, f"invalid JSON ({exc.msg})")
        raise ReplicaflowError(f"{path}:{line}: {problem}") from None
    except RecursionError:
        raise ReplicaflowError(f"{path}: JSON nested too deeply") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("partitions"), list):
        raise ReplicaflowError(f"{path}: expected {{\"version\": 1, \"partitions\": [...]}}, found {show(doc)}")
    problem = plan_version_problem(doc)
    if problem:
        raise ReplicaflowError(f"{path}: version: {problem}")
    moves: dict[tuple[str, int], tuple[int, ...]] = {}
    known = set(cluster.brokers)
    for i, m in enumerate(doc["partitions"]):
        at = f"{path}: partitions[{i}]"
        if not isinstance(m, dict):
            raise ReplicaflowError(f"{at}: expected {{topic, partition, replicas}}, found {show(m)}")
        topic, part, replicas = m.get("topic"), m.get("partition"), m.get("replicas")
        if not isinstance(topic, str) or topic_name_problem(topic):
            raise ReplicaflowError(f"{at}.topic: expected a topic name, found {show(topic)}")
        # the tool decodes both as Java ints: a larger number is no partition or broker of any cluster, and was
        # printed whole (a 4,000-digit id made a 4,000-character sentence)
        if not _int32(part) or part < 0:
            raise ReplicaflowError(f"{at}.partition: expected a partition number (0 to {INT32_MAX:,}, Kafka's int32), "
                                   f"found {show(part)}")
        # a negative id is no broker's (broker.id is 0 or more): 'unknown broker -1' sent the operator to --brokers
        if not isinstance(replicas, list) or not replicas or not all(_int32(r) and r >= 0 for r in replicas):
            raise ReplicaflowError(f"{at}.replicas: expected a list of broker ids (each 0 to {INT32_MAX:,}, "
                                   f"Kafka's int32), found {show(replicas)}")
        if len(set(replicas)) != len(replicas):
            raise ReplicaflowError(f"{at}.replicas: broker listed twice in {show(replicas)}")
        problem = log_dirs_problem(m)
        if problem:
            raise ReplicaflowError(f"{at}.log_dirs: {problem}")
        if (topic, part) in moves:
            raise ReplicaflowError(f"{at}: partition {topic}-{part} is listed twice")
        if (topic, part) not in cluster.replicas:
            raise ReplicaflowError(f"{at}: partition {topic}-{part} is not in the cluster's describe output")
        unknown = [r for r in replicas if r not in known]
        if unknown:
            raise ReplicaflowError(f"{at}.replicas: unknown broker {unknown[0]} (brokers: "
                                   f"{brokers_text(cluster.brokers)}){unknown_hint}")
        moves[(topic, part)] = tuple(replicas)
        if log_dirs is not None and "log_dirs" in m:
            log_dirs[(topic, part)] = list(m["log_dirs"])
    if not moves:
        raise ReplicaflowError(f"{path}: partitions: the plan moves nothing")
    return moves


def _int32(value: object) -> bool:
    """A JSON integer Kafka's tool reads as a Java int (``true`` and ``1.0`` are not)."""
    return type(value) is int and -INT32_MAX - 1 <= value <= INT32_MAX
