"""What the report shows for one cluster: inputs, summary cards, alerts, tables and charts.

Pure functions of the analysis tables (pandas) to plain data; ``build.py`` renders them. The cards
show the headline numbers the pipeline computed (``analysis/_summary.json``) as they are. Charts are
plotly figures built in ``figures.py``; a chart with nothing to show is one sentence instead.
"""

from __future__ import annotations

import pandas as pd

from replicaflow.model.metrics import BROKER_METRICS, BY_SHORT
from replicaflow.model.units import counted, format_bytes, format_duration, format_ts_ms
from replicaflow.report import alerts, inputs, tables
from replicaflow.report.console import receiving_most
from replicaflow.report.data import Analysis, broker_wide, meter_deltas
from replicaflow.report.figures import (
    HYPOTHETICAL,
    Chart,
    Marker,
    Series,
    clean,
    heatmap_chart,
    line_chart,
    plotly_text,
    top_n,
)
from replicaflow.report.openmetrics import up_samples
from replicaflow.report.traffic import traffic_charts

GAUGES = [m for m in BROKER_METRICS if m.kind == "gauge"]
__all__ = ["cluster_section", "all_charts", "plotly_text"]


def _title(short: str) -> str:
    return short if BY_SHORT[short].shipped else f"{short} — {HYPOTHETICAL}"


def gauge_charts(analysis: Analysis, cluster: str, prefix: str, markers: list[Marker]) -> list[Chart]:
    """Every broker gauge: the cluster figure (thick) and one line per broker (a down broker leaves a gap)."""
    wide = broker_wide(analysis, cluster)
    grid = analysis.grid(cluster)
    charts = []
    for m in GAUGES:
        if m.short not in wide.columns:
            continue
        y_title = "messages" if "Lag" in m.short else "partitions"
        charts.append(line_chart(f"{prefix}-gauge-{m.short}", _title(m.short), y_title, grid,
                                 _total_and_brokers(wide, m.short, grid), markers, what=_title(m.short)))
    return charts


def _total_and_brokers(wide: pd.DataFrame, short: str, grid: list[int]) -> list[Series]:
    """A gauge's cluster figure (the total of counts, the max of maxima) and the brokers, top-N + others."""
    per = wide.set_index(["ts_ms", "broker"])[short].unstack("broker").reindex(grid)  # (ts, broker) is unique
    how = BY_SHORT[short].aggregate
    cluster = per.max(axis=1) if how == "max" else per.sum(axis=1, min_count=1)
    brokers = [Series(f"broker {b}", clean(per[b])) for b in per.columns]
    return [Series(f"cluster {'max' if how == 'max' else 'total'}", clean(cluster), width=3, emphasis=True,
                   color="#24292f")] + top_n(brokers, others="max" if how == "max" else "sum")


def urp_chart(analysis: Analysis, cluster: str, prefix: str, markers: list[Marker]) -> Chart | None:
    """URP in KIP-352 semantics against legacy; the gap between them (reassignment-induced) is shaded."""
    cm = analysis.of("cluster_metrics", cluster).sort_values("ts_ms")
    if cm.empty:
        return None
    version = analysis.meta.get(cluster, {}).get("kafka_version", "")
    grid = [int(t) for t in cm["ts_ms"]]
    chart = line_chart(f"{prefix}-urp", "URP: KIP-352 against legacy", "partitions", grid, [
        Series("KIP-352 (adding replicas excluded)", clean(cm["urp_kip352"]), color="#1f6feb", dash="solid"),
        Series("legacy ≤ 2.4 (|ISR| < |replicas|); shaded: reassignment-induced", clean(cm["urp_legacy"]),
               color="#d1242f", dash="dash", fill_to_previous=True),
        Series(f"reported by Kafka {version}".strip(), clean(cm["urp"]), color="#1a7f37", dash="dot", width=3),
    ], markers, what="Under-replicated partitions, KIP-352 and legacy")
    return between_points(analysis, cluster, cm, chart, {"urp_kip352": "KIP-352", "urp_legacy": "legacy"})


def between_points(analysis: Analysis, cluster: str, cm: pd.DataFrame, chart: Chart, labels: dict[str, str]) -> Chart:
    """A cluster rebuilt from logs peaks at any instant, not only at the grid's points (docs/real-cluster.md,
    "The scrape grid"): where a card's peak (``peak_<column>``) is above every point the chart draws, the chart
    says so, instead of a bare "0 throughout" under a card of 1."""
    if analysis.meta.get(cluster, {}).get("source") != "logs":
        return chart
    summary = analysis.headline(cluster)
    above = [f"{int(summary[f'peak_{c}']):,} {label}" for c, label in labels.items()
             if (summary.get(f"peak_{c}") or 0) > (cm[c].max() if len(cm) else 0)]
    if not above:
        return chart
    grid, peaks = format_duration(analysis.scrape_interval_ms(cluster)), ", ".join(above)
    if chart.drawn:
        chart.notes.append(f"Between the {grid} grid's points the logs show up to {peaks} (the cards' peaks).")
    elif chart.sentence and chart.sentence.endswith(": 0 throughout."):
        what = chart.sentence.rsplit(": ", 1)[0]
        chart.sentence = f"{what}: 0 at every point of the {grid} grid; between them the logs show up to {peaks} " \
                         "(the cards' peaks)."
    return chart


def health_chart(analysis: Analysis, cluster: str, prefix: str, markers: list[Marker]) -> Chart | None:
    cm = analysis.of("cluster_metrics", cluster).sort_values("ts_ms")
    if cm.empty:
        return None
    grid = [int(t) for t in cm["ts_ms"]]
    chart = line_chart(f"{prefix}-health", "Partition health (cluster)", "partitions", grid,
                       [Series(label, clean(cm[c])) for c, label in tables.HEALTH.items()], markers,
                       what="Partition health (URP, under/at min ISR, offline, reassigning)")
    return between_points(analysis, cluster, cm, chart, tables.HEALTH)


def churn_heatmap(analysis: Analysis, cluster: str, prefix: str, markers: list[Marker]) -> Chart | None:
    """ISR shrinks + expands per broker and scrape interval (meter deltas, restarts handled)."""
    wide = broker_wide(analysis, cluster)
    cols = [c for c in ("IsrShrinksPerSec", "IsrExpandsPerSec") if c in wide.columns]
    if not cols or wide.empty:
        return None
    wide = wide.sort_values(["broker", "ts_ms"])
    churn = sum(wide.groupby("broker")[c].transform(meter_deltas) for c in cols)
    z = wide.assign(churn=churn).pivot_table(index="broker", columns="ts_ms", values="churn", aggfunc="sum")
    grid = analysis.grid(cluster)
    z = z.reindex(columns=grid)
    return heatmap_chart(f"{prefix}-churn", "ISR shrinks + expands per scrape interval", grid,
                         [f"broker {b}" for b in z.index], [clean(row) for row in z.to_numpy(dtype=float)],
                         markers, what="ISR churn (shrinks + expands)")


def failed_chart(analysis: Analysis, cluster: str, prefix: str, markers: list[Marker]) -> Chart | None:
    wide = broker_wide(analysis, cluster)
    if "FailedPartitionsCount" not in wide.columns:
        return None
    grid = analysis.grid(cluster)
    return line_chart(f"{prefix}-failed", "Failed partitions (KIP-461 FailedPartitionsCount)", "partitions", grid,
                      _total_and_brokers(wide, "FailedPartitionsCount", grid), markers,
                      what="FailedPartitionsCount (KIP-461)")


def reassignment_chart(analysis: Analysis, cluster: str, prefix: str, markers: list[Marker]) -> Chart | None:
    """Bytes moved per adding replica (the largest :data:`figures.TOP_N`, the rest as one total)."""
    rp = analysis.of("reassignment_progress", cluster)
    if rp.empty:
        return None
    keys = ["topic", "partition", "replica"]
    grid = analysis.grid(cluster)
    per = rp.pivot_table(index="ts_ms", columns=keys, values="bytes_moved", aggfunc="last").reindex(grid)
    lines = [Series(f"{t}-{p} → broker {r}", [None if pd.isna(v) else float(v) / 1e6 for v in per[(t, p, r)]])
             for t, p, r in per.columns]
    return line_chart(f"{prefix}-reassign", "Bytes moved per adding replica", "bytes", grid,
                      top_n(lines, unit=" MB"), markers, unit="MB", what="Reassignment progress")


def alert_rows(analysis: Analysis, cluster: str) -> list[dict]:
    """The alerts of alerts/replicaflow.rules.yaml that would have fired on this cluster, as episodes."""
    bm = analysis.of("broker_metrics", cluster)
    times = analysis.grid(cluster)
    if bm.empty or not times:
        return []
    grid = alerts.grid_of(bm, up_samples(bm, analysis.meta, {cluster: times}), cluster, times)
    rule_of = alerts.BY_NAME
    return [{"alert": e["alert"], "broker": e["labels"].get("broker", "all"), "from_ms": e["from_ms"],
             "to_ms": e["to_ms"], "peak": e["peak"], "summary": rule_of[e["alert"]].summary}
            for e in alerts.episodes(alerts.evaluate(grid))]


def overall_progress(summary: dict) -> str | None:
    """The pipeline's overall progress of the moves still open, as one sentence."""
    p = summary.get("reassignment_progress")
    if not p:
        return None
    eta = ("never at the current rates" if p.get("eta_ms") is None
           else f"ETA {format_duration(p['eta_ms'])}")
    blocked = p.get("moves_that_cannot_finish") or 0
    neck = f"; {receiving_most(p)}" if p.get("bottleneck_broker") is not None else ""
    stuck = f", {blocked} of them cannot finish at their rate" if blocked else ""
    return (f"{counted(p['open_moves'], 'move')} still open at the end{stuck}: {format_bytes(p['bytes_moved'])} moved, "
            f"{format_bytes(p['bytes_left'])} left, {eta}{neck}.")


def cluster_section(analysis: Analysis, cluster: str, prefix: str) -> dict:
    """Everything one cluster's section shows; a chart without data is one sentence instead."""
    meta = analysis.meta.get(cluster, {})
    cfg = inputs.configs(analysis, cluster)
    changes = inputs.throttles(cfg)
    markers = inputs.markers(analysis, cluster, changes)
    logs, n_logs = tables.log_events(analysis, cluster, prefix)
    summary = analysis.headline(cluster)
    charts = {
        "health": health_chart(analysis, cluster, prefix, markers),
        "urp": urp_chart(analysis, cluster, prefix, markers),
        "traffic": traffic_charts(analysis, cluster, prefix, changes, markers),
        "gauges": gauge_charts(analysis, cluster, prefix, markers),
        "reassign": reassignment_chart(analysis, cluster, prefix, markers),
        "churn": churn_heatmap(analysis, cluster, prefix, markers),
        "failed": failed_chart(analysis, cluster, prefix, markers),
    }
    return {"cluster": cluster, "anchor": prefix, "meta": meta, "summary": summary,
            "hypothetical": HYPOTHETICAL, "inputs": inputs.panel(analysis, cluster, changes, cfg),
            "markers": [{"time": format_ts_ms(m.ts_ms), "label": m.label, "text": m.text} for m in markers],
            "progress": overall_progress(summary),
            "tables": {"alerts": tables.alerts(alert_rows(analysis, cluster), prefix),
                       "incidents": tables.incidents(analysis, cluster, prefix),
                       "unclean": tables.unclean_elections(analysis, cluster, prefix),
                       "reassignments": tables.reassignments(analysis, cluster, prefix), "logs": logs},
            "n_logs": n_logs, "charts": charts, "scrape": format_duration(analysis.scrape_interval_ms(cluster))}


def all_charts(section: dict, gauges: bool = True) -> list[Chart]:
    """The charts a section draws, in page order (the demo's compact sections leave the gauges out)."""
    c = section["charts"]
    found = [c["health"], c["urp"], *c["traffic"], c["reassign"], c["churn"], c["failed"],
             *(c["gauges"] if gauges else [])]
    return [x for x in found if x is not None and x.drawn]


def all_tables(section: dict) -> list[dict]:
    return [t for t in section["tables"].values() if t["rows"]]
