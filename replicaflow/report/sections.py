"""What the report shows for one cluster: summary cards, tables and chart specifications.

Pure functions of the analysis tables (pandas) to plain dicts; ``build.py`` renders them. The
cards show the headline numbers the pipeline computed (``analysis/_summary.json``) as they are.
A chart spec is ``{id, title, y_title, traces, kind}`` where each trace carries its own points;
sections without data get a ``none`` sentence instead of an empty chart.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from replicaflow.model import progress
from replicaflow.model.metrics import BROKER_METRICS, BY_SHORT
from replicaflow.model.units import format_bytes, format_duration, format_rate, format_ts_ms
from replicaflow.report import alerts
from replicaflow.report.data import Analysis, broker_wide, meter_deltas
from replicaflow.report.openmetrics import up_samples

GAUGES = [m for m in BROKER_METRICS if m.kind == "gauge"]
LOG_ROWS_SHOWN = 500
MOVES_CHARTED = 40  # lines in the progress chart; the table lists every move


def plotly_text(text: str) -> str:
    """Text from data as plotly shows it literally: plotly reads ``<a href>``, ``<b>``, ``<br>`` in names and
    labels as markup, so a topic name could otherwise become a live link in a legend."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _line(name: str, ts, ys, **extra) -> dict:
    return {"name": plotly_text(name), "x": [format_ts_ms(t) for t in ts],
            "y": [None if pd.isna(v) else float(v) for v in ys], **extra}


def gauge_charts(analysis: Analysis, cluster: str, prefix: str) -> list[dict]:
    """Every broker gauge: the cluster total and one line per broker (a down broker leaves a gap)."""
    wide = broker_wide(analysis, cluster)
    grid = analysis.grid(cluster)
    charts = []
    for m in GAUGES:
        if m.short not in wide.columns:
            continue
        charts.append({"id": f"{prefix}-gauge-{m.short}", "title": m.short, "subtitle": m.jmx,
                       "y_title": "messages" if "Lag" in m.short else "partitions", "kind": "lines",
                       "traces": _total_and_brokers(wide, m.short, grid)})
    return charts


def _total_and_brokers(wide: pd.DataFrame, short: str, grid: list[int]) -> list[dict]:
    """A gauge's cluster figure (thick: the total of counts, the max of maxima) and one line per broker on the
    scrape grid (a down broker leaves a gap)."""
    per = wide.pivot_table(index="ts_ms", columns="broker", values=short, aggfunc="last").reindex(grid)
    if BY_SHORT[short].aggregate == "max":
        cluster = _line("cluster max", per.index, per.max(axis=1), width=3)
    else:
        cluster = _line("cluster total", per.index, per.sum(axis=1, min_count=1), width=3)
    return ([cluster]
            + [_line(f"broker {b}", per.index, per[b]) for b in per.columns])


def urp_chart(analysis: Analysis, cluster: str, prefix: str) -> dict | None:
    """URP in KIP-352 semantics against legacy; the gap between them (reassignment-induced) is shaded."""
    cm = analysis.of("cluster_metrics", cluster).sort_values("ts_ms")
    if cm.empty:
        return None
    return {"id": f"{prefix}-urp", "title": "Under-replicated partitions: KIP-352 vs legacy",
            "y_title": "partitions", "kind": "urp", "traces": [
                _line("URP (KIP-352: adding replicas excluded)", cm["ts_ms"], cm["urp_kip352"]),
                _line("URP (legacy ≤ 2.4: |ISR| < |replicas|)", cm["ts_ms"], cm["urp_legacy"],
                      fill="tonexty", fillname="reassignment-induced"),
                _line(f"URP reported by Kafka {analysis.meta.get(cluster, {}).get('kafka_version', '')}".strip(),
                      cm["ts_ms"], cm["urp"], dash=True),
            ]}


def health_chart(analysis: Analysis, cluster: str, prefix: str) -> dict | None:
    cm = analysis.of("cluster_metrics", cluster).sort_values("ts_ms")
    if cm.empty:
        return None
    return {"id": f"{prefix}-health", "title": "Partition health (cluster)", "y_title": "partitions",
            "kind": "lines", "traces": [_line(label, cm["ts_ms"], cm[col]) for col, label in (
                ("urp", "under-replicated"), ("under_min_isr", "under min ISR"), ("at_min_isr", "at min ISR"),
                ("offline", "offline"), ("reassigning", "reassigning"))]}


def churn_heatmap(analysis: Analysis, cluster: str, prefix: str) -> dict | None:
    """ISR shrinks + expands per broker and scrape interval (meter deltas, restarts handled)."""
    wide = broker_wide(analysis, cluster)
    cols = [c for c in ("IsrShrinksPerSec", "IsrExpandsPerSec") if c in wide.columns]
    if not cols or wide.empty:
        return None
    wide = wide.sort_values(["broker", "ts_ms"])
    churn = sum(wide.groupby("broker")[c].transform(meter_deltas) for c in cols)
    z = wide.assign(churn=churn).pivot_table(index="broker", columns="ts_ms", values="churn", aggfunc="sum")
    z = z.reindex(columns=analysis.grid(cluster))
    return {"id": f"{prefix}-churn", "title": "ISR churn (shrinks + expands per scrape interval)",
            "y_title": "broker", "kind": "heatmap",
            "traces": [{"name": "ISR changes", "x": [format_ts_ms(t) for t in z.columns], "y": [f"broker {b}" for b in z.index],
                        "z": [[None if pd.isna(v) else float(v) for v in row] for row in z.to_numpy()],
                        "zmax": max(1.0, float(np.nanmax(z.to_numpy(dtype=float), initial=0.0)))}]}


def failed_chart(analysis: Analysis, cluster: str, prefix: str) -> dict | None:
    wide = broker_wide(analysis, cluster)
    if "FailedPartitionsCount" not in wide.columns:
        return None
    return {"id": f"{prefix}-failed", "title": "Failed partitions (KIP-461 FailedPartitionsCount)",
            "y_title": "partitions", "kind": "lines",
            "traces": _total_and_brokers(wide, "FailedPartitionsCount", analysis.grid(cluster))}


def reassignment_chart(analysis: Analysis, cluster: str, prefix: str) -> dict | None:
    rp = analysis.of("reassignment_progress", cluster)
    if rp.empty:
        return None
    keys = ["topic", "partition", "replica"]
    biggest = rp.groupby(keys)["bytes_moved"].max().nlargest(MOVES_CHARTED).index
    shown = rp.set_index(keys).loc[biggest].reset_index()
    traces = []
    for (topic, partition, replica), g in shown.sort_values("ts_ms").groupby(keys):
        traces.append(_line(f"{topic}-{partition} → {replica}", g["ts_ms"], g["bytes_moved"] / 1e6))
    more = f", the {MOVES_CHARTED} largest of {len(rp.groupby(keys))}" if len(rp.groupby(keys)) > MOVES_CHARTED else ""
    return {"id": f"{prefix}-reassign", "title": f"Reassignment progress (bytes moved per adding replica{more})",
            "y_title": "MB moved", "kind": "lines", "traces": traces}


def reassignment_rows(analysis: Analysis, cluster: str) -> list[dict]:
    moves = analysis.of("reassignments", cluster).sort_values(["topic", "partition", "replica"])
    rows = []
    for r in moves.itertuples():
        known = pd.notna(r.bytes_to_move)
        pct = 100.0 * r.bytes_moved / r.bytes_to_move if known and r.bytes_to_move else 100.0
        moved = (f"{format_bytes(r.bytes_moved)} / {format_bytes(r.bytes_to_move)} ({pct:.0f}%)" if known
                 else f"{format_bytes(r.bytes_moved)} / ? (no leader)")
        rows.append({"partition": f"{r.topic}-{r.partition}", "replica": int(r.replica), "status": r.status,
                     "start": format_ts_ms(r.start_ms), "end": format_ts_ms(r.end_ms) if pd.notna(r.end_ms) else "open",
                     "moved": moved, "rate": format_rate(r.rate_bps) if pd.notna(r.rate_bps) else "–",
                     "eta": format_duration(r.eta_ms) if pd.notna(r.eta_ms) else "–",
                     "why": progress.describe(r.status, None if pd.isna(r.rate_bps) else r.rate_bps,
                                              None if pd.isna(r.leader_growth_bps) else r.leader_growth_bps,
                                              bool(r.throttled)),
                     "stalled": r.status not in (progress.PROGRESSING, progress.COMPLETED, progress.CANCELLED)})
    return rows


def incident_rows(analysis: Analysis, cluster: str) -> list[dict]:
    inc = analysis.of("incidents", cluster).sort_values(["start_ms", "kind", "topic", "partition"])
    return [{"kind": r.kind, "partition": f"{r.topic}-{r.partition}", "start": format_ts_ms(r.start_ms),
             "end": format_ts_ms(r.end_ms) if pd.notna(r.end_ms) else "open",
             "duration": format_duration(r.duration_ms) if pd.notna(r.duration_ms) else "open",
             "worst": "–" if pd.isna(r.worst_value) else WORST[r.kind].format(n=f"{r.worst_value:g}")}
            for r in inc.itertuples()]


# what incidents.worst_value counts, per kind (pipeline/events.incidents)
WORST = {"urp": "{n} replica(s) out of the ISR", "under_min_isr": "ISR {n} below min ISR",
         "offline": "{n} replica(s) without a leader"}


def log_rows(analysis: Analysis, cluster: str) -> tuple[list[dict], int]:
    ev = analysis.of("log_events", cluster).sort_values(["ts_ms", "broker", "line_number"])
    shown = ev.head(LOG_ROWS_SHOWN)
    rows = [{"time": format_ts_ms(r.ts_ms), "broker": "–" if pd.isna(r.broker) else int(r.broker), "kind": r.kind,
             "partition": "" if r.topic is None else f"{r.topic}-{'' if pd.isna(r.partition) else int(r.partition)}",
             "isr": "" if r.isr is None else ",".join(str(int(i)) for i in np.asarray(r.isr)),
             "where": f"{r.source}:{r.line_number}", "message": r.message or ""} for r in shown.itertuples()]
    return rows, len(ev)


def alert_rows(analysis: Analysis, cluster: str) -> list[dict]:
    """The alerts of alerts/replicaflow.rules.yaml that would have fired on this cluster, as episodes."""
    bm = analysis.of("broker_metrics", cluster)
    times = analysis.grid(cluster)
    if bm.empty or not times:
        return []
    grid = alerts.grid_of(bm, up_samples(bm, analysis.meta, {cluster: times}), cluster, times)
    rule_of = alerts.BY_NAME
    return [{"alert": e["alert"], "broker": e["labels"].get("broker", "all"), "start": format_ts_ms(e["from_ms"]),
             "last": format_ts_ms(e["to_ms"]), "peak": alerts.value_text(e["peak"]),
             "summary": rule_of[e["alert"]].summary} for e in alerts.episodes(alerts.evaluate(grid))]


def cluster_section(analysis: Analysis, cluster: str, prefix: str) -> dict:
    """Everything one cluster's section shows; charts without data are left out (the section says none)."""
    meta = analysis.meta.get(cluster, {})
    logs, n_logs = log_rows(analysis, cluster)
    charts = {
        "health": health_chart(analysis, cluster, prefix),
        "urp": urp_chart(analysis, cluster, prefix),
        "gauges": gauge_charts(analysis, cluster, prefix),
        "reassign": reassignment_chart(analysis, cluster, prefix),
        "churn": churn_heatmap(analysis, cluster, prefix),
        "failed": failed_chart(analysis, cluster, prefix),
    }
    return {"cluster": cluster, "anchor": prefix, "meta": meta, "summary": analysis.headline(cluster),
            "incidents": incident_rows(analysis, cluster), "reassignments": reassignment_rows(analysis, cluster),
            "alerts": alert_rows(analysis, cluster),
            "logs": logs, "n_logs": n_logs, "charts": charts,
            "scrape": format_duration(analysis.scrape_interval_ms(cluster))}


def all_charts(section: dict, gauges: bool = True) -> list[dict]:
    """The charts a section draws, in page order (the demo's compact sections leave the gauges out)."""
    c = section["charts"]
    return [x for x in [c["health"], c["urp"], *(c["gauges"] if gauges else []), c["reassign"], c["churn"],
                        c["failed"]] if x]
