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
from collections.abc import Callable, Iterable, Iterator, Mapping

import numpy as np
import pandas as pd
import pyarrow as pa

from replicaflow.model.metrics import BROKER_METRICS, BY_JMX, BrokerMetric, available
from replicaflow.model.version import KafkaVersion

UNDER_MIN_ISR_FAMILY = "kafka_cluster_partition_underminisr"
SAMPLE_COLUMNS = ["cluster", "topic", "partition", "broker", "ts_ms", "value"]  # of under_min_isr_samples
PARTITION_SCRAPES_PER_BLOCK = 1_000_000  # partitions × scrapes of one block of the partition gauge
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


def _series_lines(frame: pd.DataFrame, keys: list[str], head: Callable[[tuple], str]) -> list[str]:
    """The sample lines of ``frame`` (keys…, ts_ms, value): one series per distinct ``keys``, in key then time
    order, ``head(key)`` its name and labels. Each distinct number and time is formatted once, and a series'
    head joined to its samples by array, not per sample (a report can export millions)."""
    if frame.empty:
        return []
    frame = frame.sort_values([*keys, "ts_ms"])
    key_rows = frame[keys].to_numpy()
    new = np.ones(len(frame), dtype=bool)
    new[1:] = (key_rows[1:] != key_rows[:-1]).any(axis=1)
    starts = np.flatnonzero(new)
    heads = np.array([head(tuple(k)) + " " for k in key_rows[starts]], dtype=object)
    values, ts = frame["value"].to_numpy().tolist(), frame["ts_ms"].to_numpy().tolist()
    numbers = {v: _number(v) for v in set(values)}
    stamps = {t: _ts(t) for t in set(ts)}
    tails = np.array([f"{numbers[v]} {stamps[t]}" for v, t in zip(values, ts, strict=True)], dtype=object)
    return (np.repeat(heads, np.diff(np.append(starts, len(frame)))) + tails).tolist()


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
    frames = list(under_min_isr_blocks(partition_state, grid, live))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=SAMPLE_COLUMNS)


def under_min_isr_blocks(partition_state: pd.DataFrame, grid: Mapping[str, list[int]],
                         live: Mapping[tuple[str, int], set[int]]) -> Iterator[pd.DataFrame]:
    """``under_min_isr_samples`` in blocks of partitions, in (cluster, topic, partition) order, each of at most
    ``PARTITION_SCRAPES_PER_BLOCK`` partitions × scrapes. Arrays, not a loop per sample: an hour of a
    50,000-partition cluster with two broker outages has 6.3 M samples, a day 24 times as many, and
    ``metrics.om`` is written block by block (``openmetrics_chunks``)."""
    ps = partition_state
    if ps.empty or not ps["under_min_isr"].fillna(False).any():
        return
    hit = ps[ps["under_min_isr"].fillna(False)][["cluster", "topic", "partition"]].drop_duplicates()
    ps = ps.merge(hit, on=["cluster", "topic", "partition"])
    for cluster, part in ps.groupby("cluster", sort=True):
        if not len(grid.get(cluster, [])):
            continue
        times = np.sort(np.asarray(grid[cluster], dtype=np.int64))
        by_key = part.groupby(["topic", "partition"], sort=True)
        pid, names = by_key.ngroup().to_numpy(np.int64), by_key.size().index
        order = np.argsort(pid, kind="stable")  # a partition's rows keep their order: the first interval wins
        part, pid = part.iloc[order], pid[order]
        per_block = max(1, PARTITION_SCRAPES_PER_BLOCK // len(times))
        bounds = np.searchsorted(pid, np.arange(0, pid[-1] + per_block + 1, per_block))
        for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
            block = _block_samples(cluster, part.iloc[lo:hi], pid[lo:hi], names, times, live)
            if len(block):
                yield block[SAMPLE_COLUMNS]


def _block_samples(cluster: str, part: pd.DataFrame, pid: np.ndarray, names: pd.MultiIndex, times: np.ndarray,
                   live: Mapping[tuple[str, int], set[int]]) -> pd.DataFrame:
    """The samples of a block of one cluster's partitions (``pid``: each row's partition, a position in
    ``names``): each interval [from_ms, to_ms) covers the scrapes between two ``searchsorted`` bounds; a scrape
    takes the first interval (in row order) of its partition that covers it."""
    frm = part["from_ms"].to_numpy(np.int64)
    to = pd.to_numeric(part["to_ms"]).fillna(2**62).to_numpy(np.int64)
    leaders = part["leader"].fillna(-1).to_numpy(np.int64)
    under = part["under_min_isr"].fillna(False).to_numpy(bool)
    lo, hi = np.searchsorted(times, frm, "left"), np.searchsorted(times, to, "left")
    counts = np.maximum(hi - lo, 0)
    row = np.repeat(np.arange(len(part)), counts)
    t_idx = np.repeat(lo, counts) + np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    covered, first = np.unique(pid[row] * len(times) + t_idx, return_index=True)
    row_at = row[first]
    led = leaders >= 0
    series = pd.DataFrame({"pid": pid[led], "broker": leaders[led]}).drop_duplicates()
    pids, brokers, ts = [], [], []
    for broker, mine in series.groupby("broker", sort=True):
        up = np.array([i for i, t in enumerate(times.tolist()) if broker in live.get((cluster, t), ())], dtype=np.int64)
        pids.append(np.repeat(mine["pid"].to_numpy(np.int64), len(up)))
        brokers.append(np.full(len(mine) * len(up), broker, dtype=np.int64))
        ts.append(np.tile(up, len(mine)))
    if not pids:
        return pd.DataFrame(columns=SAMPLE_COLUMNS)
    s_pid, s_broker, s_t = (np.concatenate(a) for a in (pids, brokers, ts))
    key = s_pid * len(times) + s_t
    ones = np.zeros(len(key), dtype=bool)
    if len(covered):
        at = np.minimum(np.searchsorted(covered, key), len(covered) - 1)
        ones = (covered[at] == key) & (leaders[row_at[at]] == s_broker) & under[row_at[at]]
    return pd.DataFrame({"cluster": cluster, "topic": names.get_level_values(0)[s_pid],
                         "partition": names.get_level_values(1)[s_pid].astype(np.int64), "broker": s_broker,
                         "ts_ms": times[s_t], "value": np.where(ones, 1.0, 0.0)})


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
    return "".join(openmetrics_chunks(broker_metrics, partition_state, meta, grid, naming))


def openmetrics_chunks(broker_metrics, partition_state=None, meta: Mapping[str, Mapping] | None = None,
                       grid: Mapping[str, list[int]] | None = None, naming: str = "strimzi") -> Iterator[str]:
    """``to_openmetrics``' text in pieces (a family, or a block of the partition gauge's series), to write one by
    one: the partition gauge of a day of a large cluster runs to gigabytes. ``naming`` is checked at the call."""
    if naming not in NAMINGS:
        raise ValueError(f"naming: expected one of {', '.join(NAMINGS)}, found {naming!r}")
    return _chunks(_frame(broker_metrics), partition_state, meta or {}, grid or {}, naming)


def _chunks(bm: pd.DataFrame, partition_state, meta: Mapping[str, Mapping], grid: Mapping[str, list[int]],
            naming: str) -> Iterator[str]:
    bm = bm[bm["name"].isin(BY_JMX)]
    for metric in BROKER_METRICS:
        rows = bm[bm["name"] == metric.jmx]
        if rows.empty:
            continue
        fam = family_name(metric, naming)
        sample = fam + "_total" if _family_type(metric, naming) == "counter" else fam
        extra = jmx_labels(metric, naming)
        yield _text([f"# TYPE {fam} {_family_type(metric, naming)}",
                     f"# HELP {fam} {_escape(metric.help + ('' if metric.shipped else HYPOTHETICAL))}",
                     *_series_lines(rows, ["cluster", "broker"], lambda k, sample=sample, extra=extra: sample + _labels(
                         (("cluster", k[0]), ("broker", int(k[1])), *extra)))])
    up = up_samples(bm, meta, grid)
    if not up.empty:
        yield _text(["# TYPE up gauge",
                     "# HELP up 1 when the broker answered the scrape, 0 when it was down (replicaflow's scrape "
                     "outcome per broker).",
                     *_series_lines(up, ["cluster", "broker"],
                                    lambda k: "up" + _labels((("cluster", k[0]), ("broker", int(k[1])))))])
    ps = _frame(partition_state) if partition_state is not None else None
    if ps is not None and not ps.empty and grid:
        ok = [c for c in ps["cluster"].unique() if "kafka_version" not in meta.get(c, {})
              or available("UnderMinIsr", KafkaVersion.parse(str(meta[c]["kafka_version"])))]
        live: dict[tuple[str, int], set[int]] = {}
        for (cluster, t), g in bm.groupby(["cluster", "ts_ms"]):
            live[(cluster, int(t))] = set(int(b) for b in g["broker"].unique())
        header = [f"# TYPE {UNDER_MIN_ISR_FAMILY} gauge",
                  f"# HELP {UNDER_MIN_ISR_FAMILY} 1 on the partition's leader while its ISR is below the "
                  "effective min ISR (KIP-164), 0 elsewhere."]

        def head(k: tuple) -> str:
            return UNDER_MIN_ISR_FAMILY + _labels((("cluster", k[0]), ("broker", int(k[3])), ("topic", k[1]),
                                                   ("partition", int(k[2]))))
        for block in under_min_isr_blocks(ps[ps["cluster"].isin(ok)], grid, live):
            yield _text([*header, *_series_lines(block, ["cluster", "topic", "partition", "broker"], head)])
            header = []
    yield "# EOF\n"


def _text(lines: list[str]) -> str:
    return "\n".join(lines) + "\n"
