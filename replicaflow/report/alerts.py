"""Prometheus alert rules for Kafka replication health: the one definition of each rule, the rules
file Prometheus loads (``alerts/replicaflow.rules.yaml``, generated from here) and an evaluator
that says which alerts would have fired on an analysis, for the report.

The evaluator follows Prometheus's semantics on the scrape grid (evaluation interval = scrape
interval): a broker that missed a scrape has no sample (a stale series), ``x - x offset D`` needs
both samples, ``for`` counts from the first evaluation where the condition held. The promtool
tests (tests/report/test_alerts.py) check it against Prometheus itself on real scenarios.

Names follow Strimzi's JMX exporter profile (report/openmetrics.py). ``python -m
replicaflow.report.alerts`` prints the rules file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from replicaflow.model.metrics import BY_SHORT
from replicaflow.report.openmetrics import family_name

SHRINK_WINDOW_MS = 60_000
STALL_WINDOW_MS = 120_000


def _fam(short: str) -> str:
    metric = BY_SHORT[short]
    name = family_name(metric)
    return name + "_total" if metric.kind == "meter" else name


@dataclass(frozen=True)
class Grid:
    """One cluster's broker metrics on its scrape grid: ``values[short]`` is a (time × broker) frame,
    NaN where the broker was not scraped; ``up`` is 1/0 per (time, broker)."""

    cluster: str
    times: list[int]
    values: Mapping[str, pd.DataFrame]
    up: pd.DataFrame

    def gauge(self, short: str) -> pd.DataFrame:
        frame = self.values.get(short)
        return frame if frame is not None else pd.DataFrame(index=self.times, columns=self.up.columns, dtype=float)

    def delta(self, short: str, window_ms: int) -> pd.DataFrame:
        """``x - x offset window`` per broker: NaN unless both samples exist."""
        now = self.gauge(short)
        then = now.copy()
        times = pd.Index(self.times)
        pos = times.searchsorted([t - window_ms for t in self.times], side="right") - 1
        then[:] = [now.iloc[p].to_numpy() if p >= 0 else [float("nan")] * now.shape[1] for p in pos]
        return now - then


@dataclass(frozen=True)
class AlertRule:
    name: str
    expr: str
    for_s: int
    summary: str
    description: str  # Prometheus template: {{ $value }}, {{ $labels.broker }}, {{ $labels.cluster }}
    per_broker: bool  # labels carry the broker (else only the cluster)
    condition: Callable[[Grid], pd.DataFrame]  # (time × key) values where the condition holds, NaN elsewhere
    extra_labels: tuple[tuple[str, str], ...] = ()  # labels the metric's series carry besides cluster and broker


def _per_broker_gt0(short: str) -> Callable[[Grid], pd.DataFrame]:
    return lambda g: g.gauge(short).where(g.gauge(short) > 0)


def _offline(g: Grid) -> pd.DataFrame:
    total = g.gauge("OfflinePartitionsCount").sum(axis=1, min_count=1)
    return total.where(total > 0).to_frame("cluster")


def _stalled(g: Grid) -> pd.DataFrame:
    """Reassigning, nothing copied over the window, on a release that has the bytes meter (2.5+) and
    with a window of its history (no alert in the first two minutes of data)."""
    moving = g.gauge("ReassigningPartitions").sum(axis=1, min_count=1)
    delta = g.delta("ReassignmentBytesInPerSec", STALL_WINDOW_MS)
    copied = delta.sum(axis=1, min_count=1)
    metered = (g.gauge("ReassignmentBytesInPerSec") - delta).notna().any(axis=1)  # a sample 2m back
    stalled = (moving > 0) & ~(copied > 0) & metered
    return moving.where(stalled).to_frame("cluster")


def _down(g: Grid) -> pd.DataFrame:
    return g.up.where(g.up == 0)


RULES: tuple[AlertRule, ...] = (
    AlertRule("UnderReplicatedPartitions", f"{_fam('UnderReplicatedPartitions')} > 0", 10,
              "Kafka under replicated partitions",
              "There are {{ $value }} under replicated partitions on broker {{ $labels.broker }} of {{ $labels.cluster }}",
              True, _per_broker_gt0("UnderReplicatedPartitions")),
    AlertRule("UnderMinIsrPartitionCount", f"{_fam('UnderMinIsrPartitionCount')} > 0", 10,
              "Kafka under min ISR partitions",
              "There are {{ $value }} partitions under the min ISR on broker {{ $labels.broker }} of {{ $labels.cluster }}",
              True, _per_broker_gt0("UnderMinIsrPartitionCount")),
    AlertRule("AtMinIsrPartitionCount", f"{_fam('AtMinIsrPartitionCount')} > 0", 10,
              "Kafka partitions at min ISR",
              "There are {{ $value }} partitions at the min ISR on broker {{ $labels.broker }} of "
              "{{ $labels.cluster }}: one more replica lost stops acks=all producers",
              True, _per_broker_gt0("AtMinIsrPartitionCount")),
    AlertRule("OfflinePartitions", f"sum by (cluster) ({_fam('OfflinePartitionsCount')}) > 0", 10,
              "Kafka offline partitions", "There are {{ $value }} partitions without a leader in {{ $labels.cluster }}",
              False, _offline),
    AlertRule("FailedPartitions", f"{_fam('FailedPartitionsCount')} > 0", 10,
              "Kafka fetcher failed partitions",
              "Broker {{ $labels.broker }} of {{ $labels.cluster }} stopped fetching {{ $value }} failed "
              "partitions (KIP-461): they stay out of the ISR until a new leader epoch",
              True, _per_broker_gt0("FailedPartitionsCount"), (("clientId", "Replica"),)),
    AlertRule("IsrShrinking", f"{_fam('IsrShrinksPerSec')} - {_fam('IsrShrinksPerSec')} offset 1m > 0", 0,
              "Kafka ISR shrinking",
              "Broker {{ $labels.broker }} of {{ $labels.cluster }} shrank {{ $value }} ISRs in the last minute",
              True, lambda g: (d := g.delta("IsrShrinksPerSec", SHRINK_WINDOW_MS)).where(d > 0)),
    AlertRule("ReassignmentStalled",
              f"sum by (cluster) ({_fam('ReassigningPartitions')}) > 0 unless on (cluster) "
              f"sum by (cluster) ({_fam('ReassignmentBytesInPerSec')} - {_fam('ReassignmentBytesInPerSec')} "
              f"offset 2m) > 0 and on (cluster) count by (cluster) ({_fam('ReassignmentBytesInPerSec')} offset 2m) > 0",
              60,
              "Kafka reassignment stalled",
              "{{ $value }} partitions of {{ $labels.cluster }} are reassigning and no reassignment bytes "
              "were copied for 2 minutes",
              False, _stalled),
    AlertRule("BrokerDown", "up == 0", 10, "Kafka broker down",
              "Broker {{ $labels.broker }} of {{ $labels.cluster }} did not answer the scrape",
              True, _down),
)
BY_NAME = {r.name: r for r in RULES}


def value_text(v: float) -> str:
    """``{{ $value }}`` as Prometheus renders a float: no trailing ``.0``."""
    return str(int(v)) if float(v).is_integer() else repr(float(v))


def annotate(rule: AlertRule, value: float, cluster: str, broker: int | None) -> str:
    text = rule.description.replace("{{ $value }}", value_text(value)).replace("{{ $labels.cluster }}", cluster)
    return text.replace("{{ $labels.broker }}", "" if broker is None else str(broker))


def grid_of(broker_metrics: pd.DataFrame, up: pd.DataFrame, cluster: str, times: Sequence[int]) -> Grid:
    """``broker_metrics`` (long) and ``up`` samples (openmetrics.up_samples) of one cluster as a Grid."""
    times = [int(t) for t in times]
    u = up[up["cluster"] == cluster].pivot_table(index="ts_ms", columns="broker", values="value").reindex(times)
    bm = broker_metrics[broker_metrics["cluster"] == cluster]
    values = {}
    for short, metric in BY_SHORT.items():
        rows = bm[bm["name"] == metric.jmx]
        if not rows.empty:
            values[short] = (rows.pivot_table(index="ts_ms", columns="broker", values="value", aggfunc="last")
                             .reindex(index=times, columns=u.columns))
    return Grid(cluster, times, values, u)


def evaluate(grid: Grid, rules: Sequence[AlertRule] = RULES) -> dict[int, list[dict]]:
    """{evaluation time: firing alerts} with their labels and rendered description."""
    out: dict[int, list[dict]] = {t: [] for t in grid.times}
    for rule in rules:
        held = rule.condition(grid)
        since: dict[object, int] = {}
        for t in grid.times:
            row = held.loc[t] if t in held.index else pd.Series(dtype=float)
            now = {k: v for k, v in row.items() if pd.notna(v)}
            since = {k: since.get(k, t) for k in now}
            for key, value in sorted(now.items(), key=lambda kv: str(kv[0])):
                if t - since[key] >= rule.for_s * 1000:
                    broker = int(key) if rule.per_broker else None
                    labels = {"severity": "warning", "cluster": grid.cluster}
                    if broker is not None:
                        labels["broker"] = str(broker)
                    labels |= dict(rule.extra_labels)
                    out[t].append({"alert": rule.name, "labels": labels, "value": float(value),
                                   "description": annotate(rule, float(value), grid.cluster, broker)})
    return out


def episodes(fired: Mapping[int, list[dict]]) -> list[dict]:
    """Firing alerts merged into episodes: alert, labels, first and last evaluation, peak value."""
    open_: dict[tuple, dict] = {}
    done: list[dict] = []
    times = sorted(fired)
    for t in times:
        now = {(f["alert"], tuple(sorted(f["labels"].items()))): f for f in fired[t]}
        for key in [k for k in open_ if k not in now]:
            done.append(open_.pop(key))
        for key, f in now.items():
            ep = open_.setdefault(key, {"alert": f["alert"], "labels": f["labels"], "from_ms": t, "to_ms": t,
                                        "peak": f["value"]})
            ep["to_ms"], ep["peak"] = t, max(ep["peak"], f["value"])
    done += open_.values()
    return sorted(done, key=lambda e: (e["from_ms"], e["alert"], _label_order(e["labels"])))


def _label_order(labels: Mapping[str, object]) -> tuple:
    """Labels in the order a reader expects: broker 2 before broker 10 (numbers as numbers), then text."""
    return tuple((k, (0, int(v), "") if str(v).isdigit() else (1, 0, str(v))) for k, v in sorted(labels.items()))


def rules_yaml() -> str:
    """The rules file, in the style of Strimzi's prometheus-rules.yaml."""
    lines = ["# Prometheus alert rules for Kafka replication health (Strimzi's JMX exporter names), generated",
             "# by `python -m replicaflow.report.alerts` from replicaflow/report/alerts.py. They read",
             "# replicaflow's metrics.om unchanged and a live cluster scraped with Strimzi's kafka-metrics.yaml.",
             "# Load: add this file under `rule_files:` in prometheus.yml.",
             "groups:", "  - name: kafka", "    rules:"]
    for r in RULES:
        lines += [f"      - alert: {r.name}", f"        expr: {r.expr}", f"        for: {r.for_s}s",
                  "        labels:", "          severity: warning", "        annotations:",
                  f"          summary: '{r.summary}'", f"          description: '{r.description}'"]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(rules_yaml(), end="")
