"""The report's inputs: ``DIR/analysis/*`` (pyarrow → pandas) and the scrape grid of each cluster.

No Spark here (docs/architecture.md): the analysis tables are small rollups, the report only reads them.
Optional tables (log_events, rejects exist only when logs were ingested) come back empty with the
contract's columns, so every section can say "none" instead of failing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import pyarrow as pa

from replicaflow.errors import ReplicaflowError, quote, show
from replicaflow.model.metrics import BY_JMX
from replicaflow.model.units import plural
from replicaflow.telemetry.checks import check_meta, check_metas, is_number, type_problem
from replicaflow.telemetry.io import META_FILE, METAS_FILE, read_table
from replicaflow.telemetry.schema import ANALYSIS
from replicaflow.telemetry.textfile import read_json

REQUIRED = ("partition_state", "broker_metrics", "cluster_metrics", "incidents")
OPTIONAL = ("topic_metrics", "reassignments", "reassignment_progress", "unclean_elections", "log_events", "rejects")
SUMMARY_FILE = "_summary.json"
# what the report shows of each cluster's headline numbers (pipeline/summary.py writes them)
HEADLINE_NUMBERS = ("peak_urp", "peak_under_min_isr", "peak_offline", "peak_reassignment_induced_urp",
                    "peak_failed_partitions", "urp_minutes", "under_min_isr_minutes", "offline_minutes",
                    "isr_shrinks", "isr_expands", "produce_requests_rejected", "unclean_elections", "messages_lost")
HEADLINE_GROUPS = {"incidents": ("urp", "under_min_isr", "offline")}
PROGRESS_NUMBERS = ("open_moves", "bytes_moved", "bytes_left")
PROGRESS_OPTIONAL = ("eta_ms", "moves_that_cannot_finish", "bottleneck_broker")


@dataclass
class Analysis:
    """Every analysis table as pandas, plus per-cluster metadata (the scrape grid, the version)."""

    root: Path
    tables: dict[str, pd.DataFrame]
    meta: dict[str, dict] = field(default_factory=dict)
    summary: dict = field(default_factory=dict)  # analysis/_summary.json: {cluster: headline numbers}
    _wide: dict[str, pd.DataFrame] = field(default_factory=dict, repr=False)  # broker_wide, once per cluster

    @property
    def clusters(self) -> list[str]:
        names = set(self.tables["broker_metrics"]["cluster"]) | set(self.tables["cluster_metrics"]["cluster"])
        names |= set(self.meta)
        return sorted(names)

    def headline(self, cluster: str) -> dict:
        """The pipeline's headline numbers of one cluster; the report shows them, it never recomputes them."""
        path = self.root / "analysis" / SUMMARY_FILE
        if cluster not in self.summary:
            raise ReplicaflowError(f"{path}: no headline numbers for cluster '{cluster}'; run `replicaflow analyze` "
                                   "again")
        problem = headline_problem(self.summary[cluster])
        if problem:
            raise ReplicaflowError(f"{path}: cluster {quote(cluster)}: {problem}; run `replicaflow analyze` again")
        return self.summary[cluster]

    def of(self, name: str, cluster: str) -> pd.DataFrame:
        df = self.tables[name]
        if "cluster" not in df.columns:
            return df
        return df[df["cluster"] == cluster]

    def grid(self, cluster: str) -> list[int]:
        """Scrape times of a cluster: the meta's grid (docs/design.md, telemetry) or, without meta, the times scraped."""
        m = self.meta.get(cluster)
        if m and {"start_ms", "end_ms", "scrape_interval_ms"} <= set(m):
            step = int(m["scrape_interval_ms"])
            return list(range(int(m["start_ms"]), int(m["end_ms"]) + 1, step))
        ts = set(self.of("broker_metrics", cluster)["ts_ms"]) | set(self.of("cluster_metrics", cluster)["ts_ms"])
        return sorted(int(t) for t in ts)

    def scrape_interval_ms(self, cluster: str) -> int:
        m = self.meta.get(cluster, {})
        if "scrape_interval_ms" in m:
            return int(m["scrape_interval_ms"])
        g = self.grid(cluster)
        return int(min(b - a for a, b in zip(g, g[1:], strict=False))) if len(g) > 1 else 10_000


def headline_problem(headline: dict) -> str | None:
    """What is wrong with one cluster's headline numbers (pipeline/summary.py writes them) for the report, which
    shows them as they are: a number that is not one, a missing count or progress field, was a traceback in
    the page's template (``'dict object' has no attribute 'incidents'``)."""
    for key in HEADLINE_NUMBERS:
        if not is_number(headline.get(key)):
            return f"{key}: expected a number, found {show(headline.get(key))}"
    for key, inner in HEADLINE_GROUPS.items():
        group = headline.get(key)
        if not isinstance(group, dict) or not all(is_number(group.get(k)) for k in inner):
            return f"{key}: expected {{{', '.join(f'{k!r}: N' for k in inner)}}}, found {show(group)}"
    progress = headline.get("reassignment_progress")
    if progress is not None and (not isinstance(progress, dict)
                                 or not all(is_number(progress.get(k)) for k in PROGRESS_NUMBERS)
                                 or not all(progress.get(k) is None or is_number(progress[k]) for k in PROGRESS_OPTIONAL)):
        return (f"reassignment_progress: expected null or numbers {', '.join(PROGRESS_NUMBERS)} "
                f"(and {', '.join(PROGRESS_OPTIONAL)} or null), found {show(progress)}")
    for key in ("start", "end"):
        if headline.get(key) is not None and not isinstance(headline[key], str):
            return f"{key}: expected a date as text, found {show(headline[key])}"
    return None


def _empty(name: str) -> pd.DataFrame:
    return pa.Table.from_pylist([], schema=ANALYSIS[name]).to_pandas()


def load_analysis(directory: Path, metas: list[dict] | None = None) -> Analysis:
    """Read ``directory/analysis``; ``metas`` (one per cluster) default to ``directory/telemetry/_meta.json``, or
    to its ``_metas.json`` for a fleet analyzed from its logs alone."""
    directory = Path(directory)
    root = directory / "analysis"
    if not root.is_dir():
        raise ReplicaflowError(f"{root}: missing; run `replicaflow analyze` first")
    tables: dict[str, pd.DataFrame] = {}
    for name in REQUIRED + OPTIONAL:
        if name in REQUIRED or (root / name).is_dir():
            table = read_table(directory, "analysis", name)
            missing = set(ANALYSIS[name].names) - set(table.column_names)
            if missing:
                raise ReplicaflowError(f"{root / name}: missing {plural(len(missing), 'column')} {', '.join(sorted(missing))}")
            problem = type_problem(table.schema, ANALYSIS[name], name)
            if problem:  # a number column as text was a pandas traceback in the first chart that used it
                raise ReplicaflowError(f"{root / name}: {problem}")
            tables[name] = table.select(ANALYSIS[name].names).to_pandas()
        else:
            tables[name] = _empty(name)
    if metas is None:
        # checked as analyze checks it: the report shows its keys, and the file may have changed since
        tele = directory / "telemetry"
        metas = ([check_meta(directory)] if (tele / META_FILE).exists()
                 else check_metas(directory) if (tele / METAS_FILE).exists() else [])
    meta = {str(m.get("cluster")): m for m in metas if m.get("cluster") is not None}
    spath = root / SUMMARY_FILE
    if not spath.exists():
        raise ReplicaflowError(f"{spath}: missing (it holds the headline numbers); run `replicaflow analyze` again")
    summary = read_json(spath, "analysis summary", utf16=False)
    if not isinstance(summary, dict) or not all(isinstance(v, dict) for v in summary.values()):
        raise ReplicaflowError(f"{spath}: expected a JSON object of clusters, each an object of headline numbers")
    return Analysis(directory, tables, meta, summary)


def broker_wide(analysis: Analysis, cluster: str) -> pd.DataFrame:
    """broker_metrics of one cluster pivoted to columns (short metric name), rows (ts_ms, broker).

    Pivoted once per cluster: several charts read it.
    """
    if cluster not in analysis._wide:
        df = analysis.of("broker_metrics", cluster)
        if df.empty:
            wide = pd.DataFrame(columns=["ts_ms", "broker"])
        else:
            df = df.assign(short=df["name"].map(lambda n: BY_JMX[n].short if n in BY_JMX else n))
            wide = df.pivot_table(index=["ts_ms", "broker"], columns="short", values="value", aggfunc="last")
            wide = wide.reset_index().sort_values(["ts_ms", "broker"])
        analysis._wide[cluster] = wide
    return analysis._wide[cluster]


def meter_deltas(values: pd.Series) -> pd.Series:
    """Increase of a JMX meter Count between consecutive scrapes; a drop means the broker restarted (reset to 0)."""
    prev = values.shift(1)
    delta = values - prev
    return delta.where(delta >= 0, values).fillna(0.0)
