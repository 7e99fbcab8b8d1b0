"""Headline numbers per cluster (analysis/_summary.json) and their rich table for the CLI."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from rich.table import Table

from replicaflow.pipeline.events import INCIDENT_KINDS

STATUSES = ("progressing", "stalled", "completed", "cancelled")


def summarize(clusters: list[str], cluster_metrics: DataFrame, incidents: DataFrame,
              reassignments: DataFrame) -> dict:
    """{cluster: headline numbers}; every input is aggregated in Spark, only a few rows are collected."""
    peaks = {r["cluster"]: r for r in cluster_metrics.groupBy("cluster").agg(
        F.max("urp").alias("peak_urp"), F.max("under_min_isr").alias("peak_under_min_isr"),
        F.max("offline").alias("peak_offline")).collect()}
    by_kind = incidents.groupBy("cluster", "kind").agg(F.count(F.lit(1)).alias("n"),
                                                       F.sum("duration_ms").alias("ms")).collect()
    by_status = reassignments.groupBy("cluster", "status").agg(F.count(F.lit(1)).alias("n")).collect()
    out: dict = {}
    for c in clusters:
        kinds = {r["kind"]: r for r in by_kind if r["cluster"] == c}
        p = peaks.get(c)
        out[c] = {
            "peak_urp": int(p["peak_urp"] or 0) if p else 0,
            "peak_under_min_isr": int(p["peak_under_min_isr"] or 0) if p else 0,
            "peak_offline": int(p["peak_offline"] or 0) if p else 0,
            "under_min_isr_minutes": round(float(kinds["under_min_isr"]["ms"] or 0) / 60_000, 3)
            if "under_min_isr" in kinds else 0.0,
            "offline_minutes": round(float(kinds["offline"]["ms"] or 0) / 60_000, 3) if "offline" in kinds else 0.0,
            "incidents": {k: int(kinds[k]["n"]) if k in kinds else 0 for k in INCIDENT_KINDS},
            "reassignments": {s: sum(int(r["n"]) for r in by_status if r["cluster"] == c and r["status"] == s)
                              for s in STATUSES},
        }
    return out


def summary_table(summary: dict) -> Table:
    """One row per cluster; minutes are partition-minutes (sum of incident durations)."""
    table = Table(title="replicaflow analyze", show_lines=False)
    for col in ("cluster", "peak URP", "peak under-min-ISR", "under-min-ISR min", "offline min", "incidents",
                "reassignments"):
        table.add_column(col, justify="left" if col in ("cluster", "incidents", "reassignments") else "right")
    for cluster, s in summary.items():
        incidents = ", ".join(f"{k} {v}" for k, v in s["incidents"].items() if v) or "none"
        moves = ", ".join(f"{k} {v}" for k, v in s["reassignments"].items() if v) or "none"
        table.add_row(cluster, str(s["peak_urp"]), str(s["peak_under_min_isr"]),
                      f"{s['under_min_isr_minutes']:.1f}", f"{s['offline_minutes']:.1f}", incidents, moves)
    return table
