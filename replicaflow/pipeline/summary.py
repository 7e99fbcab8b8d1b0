"""The headline numbers per cluster (``analysis/_summary.json``): computed here once, rendered by report/.

Every number is an aggregate of the analysis tables in Spark; only a few rows per cluster are
collected. Minutes are partition-minutes (the sum of incident durations). Meter totals add up
the increases of each broker's JMX ``Count`` between scrapes, a drop being a restart (the count
starts again from 0), so a bounced broker's shrinks are not lost.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from replicaflow.model import progress as P
from replicaflow.model.metrics import jmx
from replicaflow.model.units import format_ts_ms
from replicaflow.pipeline.events import INCIDENT_KINDS
from replicaflow.telemetry.spark import run_jobs

STATUSES = P.STATUSES
# cluster_metrics column → headline key: the peak over the run's scrapes (over every instant for logs, below)
PEAKS = {"urp": "peak_urp", "urp_legacy": "peak_urp_legacy", "urp_kip352": "peak_urp_kip352",
         "reassignment_induced_urp": "peak_reassignment_induced_urp", "under_min_isr": "peak_under_min_isr",
         "offline": "peak_offline", "reassigning": "peak_reassigning"}
# FailedProduceRequestsPerSec: the acks=all produce requests leaders rejected (docs/semantics.md §1.5)
METER_TOTALS = {"IsrShrinksPerSec": "isr_shrinks", "IsrExpandsPerSec": "isr_expands",
                "FailedProduceRequestsPerSec": "produce_requests_rejected",
                "UncleanLeaderElectionsPerSec": "unclean_elections"}
SUMMED_GAUGE_PEAKS = {"FailedPartitionsCount": "peak_failed_partitions"}  # peak of the sum over brokers


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


def _overall_progress(reassignments: DataFrame) -> dict[str, dict]:
    """{cluster: the moves still open at the end, as one}: bytes moved and left, the ETA of the last
    one to finish (null when any cannot finish at its rate) and the bottleneck — the destination
    broker with the most bytes left among the moves that cannot finish, else the one finishing last.
    """
    open_moves = reassignments.filter(F.col("end_ms").isNull())
    blocked = F.col("status") != P.PROGRESSING
    with_left = open_moves.withColumn("left", F.col("bytes_to_move") - F.col("bytes_moved"))
    brokers = (with_left.groupBy("cluster", F.col("replica").alias("broker"))
               .agg(F.sum("left").alias("left"), F.max("eta_ms").alias("eta"),
                    F.sum(blocked.cast("int")).alias("blocked"), F.count(F.lit(1)).alias("moves")))
    rank = Window.partitionBy("cluster").orderBy(
        F.col("blocked").desc(), F.when(F.col("blocked") > 0, F.col("left")).desc_nulls_last(),
        F.col("eta").desc_nulls_last(), "broker")
    worst = {r["cluster"]: r for r in brokers.withColumn("rn", F.row_number().over(rank)).filter("rn = 1").collect()}
    totals = {r["cluster"]: r for r in with_left.groupBy("cluster").agg(
        F.count(F.lit(1)).alias("open"), F.sum("bytes_moved").alias("moved"), F.sum("left").alias("left"),
        F.max("eta_ms").alias("eta"), F.sum(blocked.cast("int")).alias("blocked")).collect()}
    out = {}
    for c, t in totals.items():
        w = worst.get(c)
        out[c] = {"open_moves": int(t["open"]), "bytes_moved": int(t["moved"] or 0), "bytes_left": int(t["left"] or 0),
                  "eta_ms": None if t["blocked"] else (int(t["eta"]) if t["eta"] is not None else None),
                  "moves_that_cannot_finish": int(t["blocked"]),
                  "bottleneck_broker": int(w["broker"]) if w is not None else None}
    return out


def _peaks(cluster_metrics: DataFrame) -> dict:
    return {r["cluster"]: r for r in cluster_metrics.groupBy("cluster").agg(
        *[F.max(col).alias(key) for col, key in PEAKS.items()]).collect()}


def _instant_peaks(clusters: Sequence[str], partition_state: DataFrame) -> dict:
    """{cluster: PEAKS over every instant of partition_state}, for the clusters rebuilt from logs.

    A real cluster's scrape grid is ours (``--scrape-interval``), and its state is known between the points:
    an ISR shrunk and expanded within the grid's 10 s is an incident and a meter count, so it is in the peak
    too (docs/real-cluster.md, "The scrape grid"). Each interval adds its flags at ``from_ms`` and takes them
    away at ``to_ms``; the running sum over the instants, each instant's changes netted first, is the count
    at every instant, and its maximum is at least the count at any grid point.
    """
    flags = {col: F.col(col).cast("long") for col in PEAKS if col != "reassignment_induced_urp"}
    flags["reassignment_induced_urp"] = flags["urp_legacy"] - flags["urp_kip352"]
    ps = partition_state.filter(F.col("cluster").isin(list(clusters)))
    starts = ps.select("cluster", F.col("from_ms").alias("ts_ms"), *[v.alias(k) for k, v in flags.items()])
    ends = ps.filter(F.col("to_ms").isNotNull()).select(
        "cluster", F.col("to_ms").alias("ts_ms"), *[(-v).alias(k) for k, v in flags.items()])
    running = Window.partitionBy("cluster").orderBy("ts_ms").rowsBetween(Window.unboundedPreceding, Window.currentRow)
    counts = (starts.unionByName(ends).groupBy("cluster", "ts_ms").agg(*[F.sum(k).alias(k) for k in flags])
              .select("cluster", *[F.sum(k).over(running).alias(k) for k in flags]))
    return {r["cluster"]: r for r in counts.groupBy("cluster").agg(
        *[F.max(col).alias(key) for col, key in PEAKS.items()]).collect()}


def _by_kind(incidents: DataFrame) -> dict:
    return {(r["cluster"], r["kind"]): r for r in incidents.groupBy("cluster", "kind").agg(
        F.count(F.lit(1)).alias("n"), F.sum("duration_ms").alias("ms")).collect()}


LONGEST_SHOWN = 3  # incidents named per cluster (the terminal's "longest incidents"; the report lists them all)


def _longest(incidents: DataFrame) -> dict[str, list[dict]]:
    """{cluster: its LONGEST_SHOWN worst incidents}: offline first, then under min ISR, then URP (what an
    operator looks at first), the longest of each kind first; with when each began and whether it was still
    open when the telemetry or logs end."""
    severity = F.when(F.col("kind") == "offline", 0).when(F.col("kind") == "under_min_isr", 1).otherwise(2)
    rank = Window.partitionBy("cluster").orderBy(severity, F.col("duration_ms").desc(), "start_ms", "topic",
                                                 "partition")
    rows = (incidents.withColumn("rn", F.row_number().over(rank)).filter(F.col("rn") <= LONGEST_SHOWN)
            .orderBy("cluster", "rn").collect())
    out: dict[str, list[dict]] = {}
    for r in rows:
        out.setdefault(r["cluster"], []).append({
            "kind": r["kind"], "topic": r["topic"], "partition": int(r["partition"]),
            "start": format_ts_ms(r["start_ms"]), "duration_ms": int(r["duration_ms"]), "open": r["end_ms"] is None,
            "out_of_sync_replicas": sorted(int(b) for b in r["out_of_sync_replicas"] or [])})
    return out


def _by_status(reassignments: DataFrame) -> dict:
    return {(r["cluster"], r["status"]): int(r["n"]) for r in reassignments.groupBy("cluster", "status").agg(
        F.count(F.lit(1)).alias("n")).collect()}


def _elections(unclean_elections: DataFrame) -> dict[str, tuple[int, int]]:
    """{cluster: (unclean elections, messages they lost)} of analysis/unclean_elections."""
    return {r["cluster"]: (int(r["n"]), int(r["lost"] or 0)) for r in unclean_elections.groupBy("cluster").agg(
        F.count(F.lit(1)).alias("n"), F.sum("messages_lost").alias("lost")).collect()}


# each headline job: the analysis table it reads, and the aggregate it collects from it
JOBS: dict[str, tuple[str, Callable[[DataFrame], dict]]] = {
    "peaks": ("cluster_metrics", _peaks),
    "by_kind": ("incidents", _by_kind),
    "by_status": ("reassignments", _by_status),
    "meters": ("broker_metrics", _meter_totals),
    "gauges": ("broker_metrics", _summed_gauge_peaks),
    "overall": ("reassignments", _overall_progress),
    "elections": ("unclean_elections", _elections),
    "longest": ("incidents", _longest),
}
INSTANT_PEAKS_READ = "partition_state"  # the job of the clusters rebuilt from logs (``jobs``)
TABLES = tuple(dict.fromkeys([*(table for table, _ in JOBS.values()), INSTANT_PEAKS_READ]))
# the broker_metrics rows the headlines read (analyze starts those jobs once the table's first part is written)
BROKER_METRICS_READ = tuple(jmx(short) for short in (*METER_TOTALS, *SUMMED_GAUGE_PEAKS))


def jobs(metas: Sequence[Mapping]) -> dict[str, tuple[str, Callable[[DataFrame], dict]]]:
    """The headline jobs of these clusters: :data:`JOBS`, and the instant peaks of those rebuilt from logs."""
    logged = [str(m["cluster"]) for m in metas if m.get("source") == "logs"]
    return {**JOBS, "instants": (INSTANT_PEAKS_READ, partial(_instant_peaks, logged))} if logged else dict(JOBS)


def summarize(metas: Sequence[Mapping], tables: Mapping[str, DataFrame]) -> dict:
    """{cluster: headline numbers} of the written analysis ``tables`` (see :data:`TABLES`), one per meta."""
    # a dozen small jobs, run side by side: each is mostly scheduling latency
    todo = {name: partial(collect, tables[table]) for name, (table, collect) in jobs(metas).items()}
    return headlines(metas, run_jobs(tables[TABLES[0]].sparkSession.sparkContext, todo))


def headlines(metas: Sequence[Mapping], got: Mapping[str, dict]) -> dict:
    """{cluster: headline numbers} from the results of every job of :func:`jobs`, one per meta."""
    peaks, by_kind, by_status, meters, gauges, overall, elections, longest = (got[name] for name in JOBS)
    out: dict = {}
    for meta in metas:
        c = str(meta["cluster"])
        logs = meta.get("source") == "logs"
        p = got["instants"].get(c) if logs else peaks.get(c)
        unclean, lost = elections.get(c, (0, 0))
        kinds = {k: by_kind.get((c, k)) for k in INCIDENT_KINDS}
        out[c] = {
            "kafka_version": meta.get("kafka_version"),
            "kip542": meta.get("kip542"),
            "time_zone": "UTC",
            "inputs": {k: meta[k] for k in ("source", "brokers", "topics", "events", "scrape_interval_ms",
                                                   "kafka_version_source", "kafka_version_last", "provenance", "topics_snapshot",
                                            "topics_at_ms") if k in meta},
            "start": format_ts_ms(meta["start_ms"]) if "start_ms" in meta else None,
            "end": format_ts_ms(meta["end_ms"]) if "end_ms" in meta else None,
            **{key: int(p[key] or 0) if p else 0 for key in PEAKS.values()},
            **{f"{k}_minutes": _minutes(kinds[k]["ms"]) if kinds[k] else 0.0 for k in INCIDENT_KINDS},
            "incidents": {k: int(kinds[k]["n"]) if kinds[k] else 0 for k in INCIDENT_KINDS},
            "longest_incidents": longest.get(c, []),
            "reassignments": {s: by_status.get((c, s), 0) for s in STATUSES},
            **{key: int(meters.get((c, short), 0.0)) for short, key in METER_TOTALS.items()},
            # rebuilt from logs, the elections the lines show (the meter is a rebuild of them, and KRaft has it
            # only from 3.9): the headline is the count of the table the report lists
            **({"unclean_elections": unclean} if logs else {}),
            **{key: int(gauges.get((c, short), 0.0)) for short, key in SUMMED_GAUGE_PEAKS.items()},
            "messages_lost": lost,  # by unclean leader elections (analysis/unclean_elections)
            "reassignment_progress": overall.get(c),
        }
    return out
