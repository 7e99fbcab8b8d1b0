"""OpenMetrics export (``metrics.om``) with the JMX exporter names of one of two profiles in wide use.

``strimzi`` (the default; Strimzi's ``kafka-metrics.yaml``): lower-cased names, label names keep
their case (``clientId="Replica"`` on the ReplicaFetcherManager metrics, as the JMX name has it),
meters are counters (family without ``_total``, samples ``<family>_total``). ``confluent``
(Confluent's ``jmx-monitoring-stacks``): names and label names lower-cased (``clientid``), a meter
keeps ``persec`` and has no ``_total`` (``kafka_server_replicamanager_isrshrinkspersec``), typed
``unknown`` as the exporter leaves it. Both carry ``cluster`` and ``broker`` labels,
``kafka_cluster_partition_underminisr`` with ``topic``/``partition``, and ``up{cluster,broker}`` —
0 at the scrapes a broker missed, so an alert can say a broker is down where its gauges just
stop. Metrics Kafka never shipped say so in their HELP. Samples keep their scrape timestamps
(seconds); the text is ordered by family, then series, then time, and ends with ``# EOF`` — what
the OpenMetrics spec and ``promtool tsdb create-blocks-from openmetrics`` require.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd
import pyarrow as pa

from replicaflow.model.metrics import BROKER_METRICS, BY_JMX, BrokerMetric, available
from replicaflow.model.version import KafkaVersion

UNDER_MIN_ISR_FAMILY = "kafka_cluster_partition_underminisr"
NAMINGS = ("strimzi", "confluent")
HYPOTHETICAL = " Hypothetical: replicaflow's own, never shipped in Apache Kafka."


def family_name(metric: BrokerMetric, naming: str = "strimzi") -> str:
    """The OpenMetrics family of ``metric`` in ``naming``; Strimzi's counters drop the ``_total`` their
    samples carry, Confluent's names are the lower-cased JMX domain, type and name."""
    if naming == "confluent":
        domain, keys = metric.jmx.split(":", 1)
        parts = dict(kv.split("=", 1) for kv in keys.split(","))
        return f"{domain.replace('.', '_')}_{parts['type']}_{parts['name']}".lower()
    return metric.prometheus.removesuffix("_total") if metric.kind == "meter" else metric.prometheus


def jmx_labels(metric: BrokerMetric, naming: str = "strimzi") -> tuple[tuple[str, str], ...]:
    """The JMX name's keys besides ``type`` and ``name`` as labels (``clientId="Replica"``,
    ``request="Produce",error="NOT_ENOUGH_REPLICAS"``); Confluent's profile lower-cases label names."""
    keys = [kv.split("=", 1) for kv in metric.jmx.split(":", 1)[1].split(",")]
    return tuple((k if naming == "strimzi" else k.lower(), v) for k, v in keys if k not in ("type", "name"))


def _family_type(metric: BrokerMetric, naming: str) -> str:
    if metric.kind == "meter":
        return "counter" if naming == "strimzi" else "unknown"
    return "gauge"


def _escape(value: str) -> str:
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(pairs: Iterable[tuple[str, object]]) -> str:
    return "{" + ",".join(f'{k}="{_escape(v)}"' for k, v in pairs) + "}"


def _number(v: float) -> str:
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    return str(int(v)) if float(v).is_integer() and abs(v) < 2**53 else repr(float(v))


def _ts(ts_ms: int) -> str:
    return f"{int(ts_ms) // 1000}.{int(ts_ms) % 1000:03d}"


def _frame(table) -> pd.DataFrame:
    return table.to_pandas() if isinstance(table, pa.Table) else table


def under_min_isr_samples(partition_state: pd.DataFrame, grid: Mapping[str, list[int]],
                          live: Mapping[tuple[str, int], set[int]]) -> pd.DataFrame:
    """``kafka_cluster_partition_underminisr`` on the scrape grid from partition_state intervals.

    As the JMX exporter sees it: every live broker that leads the partition at T reports 1/0 and
    followers report 0; replicaflow exports the partitions that were ever under min ISR (the others
    are 0 throughout), one series per (partition, broker that led it), only at scrapes where that
    broker was up (``live[(cluster, ts_ms)]``).
    """
    cols = ["cluster", "topic", "partition", "broker", "ts_ms", "value"]
    ps = partition_state
    if ps.empty or not ps["under_min_isr"].fillna(False).any():
        return pd.DataFrame(columns=cols)
    hit = ps[ps["under_min_isr"].fillna(False)][["cluster", "topic", "partition"]].drop_duplicates()
    ps = ps.merge(hit, on=["cluster", "topic", "partition"])
    rows = []
    for (cluster, topic, partition), g in ps.groupby(["cluster", "topic", "partition"], sort=True):
        times = np.asarray(grid.get(cluster, []), dtype=np.int64)
        if times.size == 0:
            continue
        frm = g["from_ms"].to_numpy(np.int64)
        to = g["to_ms"].fillna(2**62).to_numpy(np.int64)
        leaders = g["leader"].fillna(-1).to_numpy(np.int64)
        under = g["under_min_isr"].fillna(False).to_numpy(bool)
        inside = (times[:, None] >= frm[None, :]) & (times[:, None] < to[None, :])
        idx = np.where(inside.any(axis=1), inside.argmax(axis=1), -1)
        leader_at = np.where(idx >= 0, leaders[np.maximum(idx, 0)], -1)
        under_at = np.where(idx >= 0, under[np.maximum(idx, 0)], False)
        for broker in sorted(set(int(b) for b in leaders if b >= 0)):
            for t, lead, u in zip(times, leader_at, under_at, strict=True):
                if broker in live.get((cluster, int(t)), set()):
                    rows.append((cluster, topic, int(partition), broker, int(t), 1.0 if (lead == broker and u) else 0.0))
    return pd.DataFrame(rows, columns=cols)


def up_samples(bm: pd.DataFrame, meta: Mapping[str, Mapping], grid: Mapping[str, list[int]]) -> pd.DataFrame:
    """``up`` per (cluster, broker, scrape): 1 when the broker reported metrics at the scrape, else 0."""
    rows = []
    for cluster in sorted(set(bm["cluster"].unique()) | set(grid)):
        times = grid.get(cluster) or sorted(bm.loc[bm["cluster"] == cluster, "ts_ms"].unique())
        mine = bm[bm["cluster"] == cluster]
        brokers = sorted(set(int(b) for b in meta.get(cluster, {}).get("brokers", [])) | set(map(int, mine["broker"])))
        seen = set(zip(mine["ts_ms"].astype(int), mine["broker"].astype(int), strict=True))
        rows += [(cluster, b, int(t), 1.0 if (int(t), b) in seen else 0.0) for b in brokers for t in times]
    return pd.DataFrame(rows, columns=["cluster", "broker", "ts_ms", "value"])


def to_openmetrics(broker_metrics, partition_state=None, meta: Mapping[str, Mapping] | None = None,
                   grid: Mapping[str, list[int]] | None = None, naming: str = "strimzi") -> str:
    """The OpenMetrics text of ``analysis/broker_metrics`` (+ ``up`` and the partition under-min-ISR gauge).

    ``meta`` maps cluster → ``_meta.json`` (for the Kafka version: only a release that has the
    partition gauge exports it, KIP-164; and the broker ids for ``up``); ``grid`` maps cluster →
    scrape times; ``naming`` is ``strimzi`` or ``confluent`` (see the module docstring).
    """
    if naming not in NAMINGS:
        raise ValueError(f"naming: expected one of {', '.join(NAMINGS)}, found {naming!r}")
    bm = _frame(broker_metrics)
    meta = meta or {}
    out: list[str] = []
    bm = bm[bm["name"].isin(BY_JMX)]
    for metric in BROKER_METRICS:
        rows = bm[bm["name"] == metric.jmx]
        if rows.empty:
            continue
        fam = family_name(metric, naming)
        out.append(f"# TYPE {fam} {_family_type(metric, naming)}")
        out.append(f"# HELP {fam} {_escape(metric.help + ('' if metric.shipped else HYPOTHETICAL))}")
        sample = fam + "_total" if _family_type(metric, naming) == "counter" else fam
        extra = jmx_labels(metric, naming)
        rows = rows.sort_values(["cluster", "broker", "ts_ms"])
        for (cluster, broker), g in rows.groupby(["cluster", "broker"], sort=True):
            labels = _labels((("cluster", cluster), ("broker", int(broker)), *extra))
            out.extend(f"{sample}{labels} {_number(v)} {_ts(t)}"
                       for t, v in zip(g["ts_ms"].to_numpy(), g["value"].to_numpy(), strict=True))
    up = up_samples(bm, meta, grid or {})
    if not up.empty:
        out.append("# TYPE up gauge")
        out.append("# HELP up 1 when the broker answered the scrape, 0 when it was down (replicaflow's scrape "
                   "outcome per broker).")
        for (cluster, broker), g in up.sort_values(["cluster", "broker", "ts_ms"]).groupby(["cluster", "broker"],
                                                                                            sort=True):
            labels = _labels((("cluster", cluster), ("broker", int(broker))))
            out.extend(f"up{labels} {_number(v)} {_ts(t)}"
                       for t, v in zip(g["ts_ms"].to_numpy(), g["value"].to_numpy(), strict=True))
    ps = _frame(partition_state) if partition_state is not None else None
    if ps is not None and not ps.empty and grid:
        ok = [c for c in ps["cluster"].unique() if "kafka_version" not in meta.get(c, {})
              or available("UnderMinIsr", KafkaVersion.parse(str(meta[c]["kafka_version"])))]
        live: dict[tuple[str, int], set[int]] = {}
        for (cluster, t), g in bm.groupby(["cluster", "ts_ms"]):
            live[(cluster, int(t))] = set(int(b) for b in g["broker"].unique())
        samples = under_min_isr_samples(ps[ps["cluster"].isin(ok)], grid, live)
        if not samples.empty:
            out.append(f"# TYPE {UNDER_MIN_ISR_FAMILY} gauge")
            out.append(f"# HELP {UNDER_MIN_ISR_FAMILY} 1 on the partition's leader while its ISR is below the "
                       "effective min ISR (KIP-164), 0 elsewhere.")
            samples = samples.sort_values(["cluster", "topic", "partition", "broker", "ts_ms"])
            for (cluster, topic, partition, broker), g in samples.groupby(
                    ["cluster", "topic", "partition", "broker"], sort=True):
                labels = _labels((("cluster", cluster), ("broker", int(broker)), ("topic", topic),
                                  ("partition", int(partition))))
                out.extend(f"{UNDER_MIN_ISR_FAMILY}{labels} {_number(v)} {_ts(t)}"
                           for t, v in zip(g["ts_ms"].to_numpy(), g["value"].to_numpy(), strict=True))
    out.append("# EOF")
    return "\n".join(out) + "\n"
