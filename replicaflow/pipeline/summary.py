"""The headline numbers per cluster (``analysis/_summary.json``): computed here once, rendered by report/.

Every number is an aggregate of the analysis tables in Spark; only a few rows per cluster are
collected. Minutes are partition-minutes (the sum of incident durations). Meter totals add up
the increases of each broker's JMX ``Count`` between scrapes, a drop being a restart (the count
starts again from 0), so a bounced broker's shrinks are not lost.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from replicaflow.model.metrics import jmx
from replicaflow.model.units import format_ts_ms
from replicaflow.pipeline.events import INCIDENT_KINDS

STATUSES = ("progressing", "stalled", "completed", "cancelled")
# cluster_metrics column → headline key: the peak over the run's scrapes
PEAKS = {"urp": "peak_urp", "urp_legacy": "peak_urp_legacy", "urp_kip352": "peak_urp_kip352",
         "reassignment_induced_urp": "peak_reassignment_induced_urp", "under_min_isr": "peak_under_min_isr",
         "offline": "peak_offline", "reassigning": "peak_reassigning"}
METER_TOTALS = {"IsrShrinksPerSec": "isr_shrinks", "IsrExpandsPerSec": "isr_expands"}
SUMMED_GAUGE_PEAKS = {"FailedPartitionsCount": "peak_failed_partitions"}  # peak of the sum over brokers
TABLES = ("cluster_metrics", "incidents", "reassignments", "broker_metrics")


def _minutes(ms) -> float:
    return round(float(ms or 0) / 60_000, 3)


def _meter_totals(broker_metrics: DataFrame) -> dict[tuple[str, str], float]:
    """{(cluster, short name): sum of the meter's increases over every broker}."""
    names = {jmx(short): short for short in METER_TOTALS}
    w = Window.partitionBy("cluster", "broker", "name").orderBy("ts_ms")
    prev = F.lag("value").over(w)
    increase = F.when(prev.isNull() | (F.col("value") < prev), F.col("value")).otherwise(F.col("value") - prev)
    rows = (broker_metrics.filter(F.col("name").isin(list(names)))
            .select("cluster", "name", F.coalesce(increase, F.lit(0.0)).alias("increase"))
            .groupBy("cluster", "name").agg(F.sum("increase").alias("total")).collect())
    return {(r["cluster"], names[r["name"]]): float(r["total"]) for r in rows}


def _summed_gauge_peaks(broker_metrics: DataFrame) -> dict[tuple[str, str], float]:
    """{(cluster, short name): max over scrapes of the gauge summed over brokers}."""
    names = {jmx(short): short for short in SUMMED_GAUGE_PEAKS}
    rows = (broker_metrics.filter(F.col("name").isin(list(names)))
            .groupBy("cluster", "name", "ts_ms").agg(F.sum("value").alias("total"))
            .groupBy("cluster", "name").agg(F.max("total").alias("peak")).collect())
    return {(r["cluster"], names[r["name"]]): float(r["peak"] or 0) for r in rows}


def summarize(metas: Sequence[Mapping], tables: Mapping[str, DataFrame]) -> dict:
    """{cluster: headline numbers} of the written analysis ``tables`` (see :data:`TABLES`), one per meta."""
    peaks = {r["cluster"]: r for r in tables["cluster_metrics"].groupBy("cluster").agg(
        *[F.max(col).alias(key) for col, key in PEAKS.items()]).collect()}
    by_kind = {(r["cluster"], r["kind"]): r for r in tables["incidents"].groupBy("cluster", "kind").agg(
        F.count(F.lit(1)).alias("n"), F.sum("duration_ms").alias("ms")).collect()}
    by_status = {(r["cluster"], r["status"]): int(r["n"]) for r in tables["reassignments"].groupBy(
        "cluster", "status").agg(F.count(F.lit(1)).alias("n")).collect()}
    meters = _meter_totals(tables["broker_metrics"])
    gauges = _summed_gauge_peaks(tables["broker_metrics"])
    out: dict = {}
    for meta in metas:
        c = str(meta["cluster"])
        p = peaks.get(c)
        kinds = {k: by_kind.get((c, k)) for k in INCIDENT_KINDS}
        out[c] = {
            "kafka_version": meta.get("kafka_version"),
            "kip542": meta.get("kip542"),
            "start": format_ts_ms(meta["start_ms"]) if "start_ms" in meta else None,
            "end": format_ts_ms(meta["end_ms"]) if "end_ms" in meta else None,
            **{key: int(p[key] or 0) if p else 0 for key in PEAKS.values()},
            **{f"{k}_minutes": _minutes(kinds[k]["ms"]) if kinds[k] else 0.0 for k in INCIDENT_KINDS},
            "incidents": {k: int(kinds[k]["n"]) if kinds[k] else 0 for k in INCIDENT_KINDS},
            "reassignments": {s: by_status.get((c, s), 0) for s in STATUSES},
            **{key: int(meters.get((c, short), 0.0)) for short, key in METER_TOTALS.items()},
            **{key: int(gauges.get((c, short), 0.0)) for short, key in SUMMED_GAUGE_PEAKS.items()},
        }
    return out
