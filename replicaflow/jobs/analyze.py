"""`replicaflow analyze`: telemetry (and a cluster's broker logs) → ``analysis/``, then the headline table.

With ``--logs`` the broker logs are read by ingest/ into ``log_events`` and ``rejects`` and handed
to the pipeline as extra tables, so the pipeline never depends on ingest/ (docs/architecture.md). The
cluster the logs belong to is checked and named before Spark starts.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pyspark.sql import SparkSession
from rich.console import Console

from replicaflow.errors import ReplicaflowError
from replicaflow.ingest.logs import read_logs
from replicaflow.pipeline.load import read_meta
from replicaflow.pipeline.runner import analyze as run_analysis
from replicaflow.pipeline.session import get_spark
from replicaflow.report.console import print_analyze

LogPaths = str | Path | Sequence[str | Path]


def _as_list(items) -> list:
    return [items] if isinstance(items, (str, Path)) else list(items)


def analyze(telemetry_dirs: Path | Sequence[Path], out: Path, master: str = "local[2]", progress: bool = False,
            spark: SparkSession | None = None, logs: LogPaths | None = None) -> dict:
    """Analyze ``telemetry_dirs`` into ``out/analysis``; ``logs`` (files, directories or globs of one
    cluster's broker logs) add ``log_events`` and ``rejects`` (docs/logs.md). Returns the summary."""
    extra = None
    session = spark
    if logs is not None:
        dirs = _as_list(telemetry_dirs)
        if len(dirs) != 1:
            raise ReplicaflowError("--logs: give exactly one telemetry directory, the cluster the logs belong to")
        cluster = str(read_meta(Path(dirs[0]))["cluster"])
        session = session or get_spark(master)
        parsed = read_logs(session, [str(p) for p in _as_list(logs)], cluster)
        extra = {name: parsed[name] for name in ("log_events", "rejects")}
    summary = run_analysis(telemetry_dirs, out, master=master, progress=progress, spark=session,
                           extra_tables=extra)
    if progress:
        print_analyze(Console(stderr=True), summary)
    return summary
