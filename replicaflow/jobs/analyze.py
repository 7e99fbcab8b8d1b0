"""`replicaflow analyze`: telemetry (and a cluster's broker logs) → ``analysis/``, then the headline table.

With ``--logs`` the broker logs are read by ingest/ into ``log_events`` and ``rejects`` and handed
to the pipeline as extra tables, so the pipeline never depends on ingest/ (docs/architecture.md).
Everything that can be refused without Spark is refused first: the telemetry's meta, the cluster
the logs belong to, the log paths and the output directory.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pyspark.sql import SparkSession
from rich.console import Console

from replicaflow.errors import ReplicaflowError
from replicaflow.ingest.logs import read_logs, resolve_paths
from replicaflow.pipeline.load import check_telemetry, read_meta
from replicaflow.pipeline.runner import analyze_into
from replicaflow.pipeline.session import check_environment, get_spark
from replicaflow.report.console import print_analyze
from replicaflow.telemetry.outdir import ANALYZE, output

LogPaths = str | Path | Sequence[str | Path]


def _as_list(items) -> list:
    return [items] if isinstance(items, (str, Path)) else list(items)


def analyze(telemetry_dirs: Path | Sequence[Path], out: Path, master: str = "local[2]", progress: bool = False,
            spark: SparkSession | None = None, logs: LogPaths | None = None, allow_empty: bool = False) -> dict:
    """Analyze ``telemetry_dirs`` into ``out/analysis``; ``logs`` (files, directories or globs of one
    cluster's broker logs) add ``log_events`` and ``rejects`` (docs/logs.md). Returns the summary.
    Empty telemetry (no partition) is refused unless ``allow_empty``."""
    if spark is None:
        check_environment(master)
    check_telemetry(telemetry_dirs, allow_empty)
    log_files = check_logs(telemetry_dirs, logs)
    with output(Path(out), ANALYZE) as staging:
        summary = analyze_staged(telemetry_dirs, staging, master=master, progress=progress, spark=spark,
                                 logs=log_files)
    if progress:
        print_analyze(Console(stderr=True), summary)
    return summary


def check_logs(telemetry_dirs: Path | Sequence[Path], logs: LogPaths | None) -> list[str] | None:
    """The log files of ``logs`` (None without logs), refused before any work when they match nothing or
    when more than one cluster is analyzed (logs belong to one)."""
    if logs is None:
        return None
    if len(_as_list(telemetry_dirs)) != 1:
        raise ReplicaflowError("--logs: give exactly one telemetry directory, the cluster the logs belong to")
    return resolve_paths(_as_list(logs))


def analyze_staged(telemetry_dirs: Path | Sequence[Path], root: Path, master: str = "local[2]",
                   progress: bool = False, spark: SparkSession | None = None, logs: list[str] | None = None,
                   shown_as: tuple[str, str] | None = None) -> dict:
    """``analyze`` into ``root/analysis`` of a staging folder, with the log files ``check_logs`` found;
    ``shown_as`` names staged logs by their final path (``run --logs`` reads logs it has not committed)."""
    extra = None
    session = spark
    if logs is not None:
        cluster = str(read_meta(Path(_as_list(telemetry_dirs)[0]))["cluster"])
        session = session or get_spark(master)
        parsed = read_logs(session, logs, cluster, shown_as=shown_as)
        extra = {name: parsed[name] for name in ("log_events", "rejects")}
    return analyze_into(telemetry_dirs, root, master=master, progress=progress, spark=session, extra_tables=extra)
