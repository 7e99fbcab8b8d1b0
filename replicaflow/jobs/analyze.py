"""`replicaflow analyze`: telemetry (and a cluster's broker logs) → ``analysis/``, then the headline table.

Every input check runs before Spark starts (telemetry/checks.py, and the output folder). With
``--logs`` the broker logs are read by ingest/ into ``log_events`` and ``rejects`` and handed to
the pipeline as extra tables, so the pipeline never depends on ingest/ (docs/architecture.md).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pyarrow.parquet as pq
from py4j.protocol import Py4JError
from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from rich.console import Console

from replicaflow.errors import ReplicaflowError
from replicaflow.ingest import sources
from replicaflow.ingest.log_files import resolve_paths, text_bytes
from replicaflow.ingest.logs import read_logs
from replicaflow.ingest.rebuild import rebuild
from replicaflow.model.units import counted, plural
from replicaflow.pipeline.load import Telemetry, check_inputs, meta_frame
from replicaflow.pipeline.progress import progress_steps, session_for
from replicaflow.pipeline.runner import analyze as run_analysis
from replicaflow.pipeline.scratch import java_scratch_full, scratch_short
from replicaflow.pipeline.session import check_master, get_spark, java_no_room, java_reason, jvm_gone
from replicaflow.report.console import print_analyze
from replicaflow.telemetry.checks import Checked
from replicaflow.telemetry.io import META_FILE, METAS_FILE
from replicaflow.telemetry.outputs import ANALYSIS, REPORT, Commit
from replicaflow.telemetry.spark import spark_path, write_parquet_all

LogPaths = str | Path | Sequence[str | Path]


def _as_list(items) -> list:
    return [items] if isinstance(items, (str, Path)) else list(items)


def analyze_into(checked: Sequence[Checked], dest: Path, master: str, progress: bool,
                 spark: SparkSession | None, logs: LogPaths | None, shown_as: tuple[str, str] | None = None,
                 starting: Callable[[], SparkSession] | None = None) -> dict:
    """The pipeline over checked telemetry, writing ``dest/analysis`` (no commit of its own). ``shown_as``:
    (staging folder, output folder) when the logs are read from a staging folder (``run --logs``), so
    ``log_events`` and ``rejects`` name them where they will be. ``starting``: the wait for a JVM started
    earlier (``session.get_spark_soon``), which the "starting Spark" step then covers. A JVM started here
    knows its rows and the bytes of the logs it will read (``session.java_options``: a short run is compiled
    by C1 alone)."""
    extra = None
    with progress_steps(progress and spark is None) as step:
        if starting is None:  # sized when it starts: a session passed in needs no sizing
            def starting() -> SparkSession:
                log_bytes = 0 if logs is None else text_bytes(resolve_paths(_as_list(logs)))
                return get_spark(master, rows=sum(c.rows for c in checked), log_bytes=log_bytes)
        session = session_for(spark, step, starting)
    if logs is not None:
        if len(checked) != 1:
            raise ReplicaflowError("--logs: give exactly one telemetry directory, the cluster the logs belong to")
        parsed = read_logs(session, [str(p) for p in _as_list(logs)], str(checked[0].meta["cluster"]), shown_as)
        _refuse_another_clusters_logs(parsed["log_events"], checked[0])
        extra = {name: parsed[name] for name in ("log_events", "rejects")}
    return run_analysis([c.root for c in checked], dest, master=master, progress=progress, spark=session,
                        extra_tables=extra, checked=checked)


def _refuse_another_clusters_logs(events: DataFrame, checked: Checked) -> None:
    """Logs whose lines name topics (internal ones aside: every cluster has them) and none of the telemetry's, or
    brokers and none of its brokers, are another cluster's: attached, their events would be read as this one's.
    The telemetry's own are its meta's and its ``assignments``' and ``brokers``' (a Parquet column each)."""
    shown = events.agg(F.array_sort(F.collect_set(F.when(~F.col("topic").startswith("__"), F.col("topic"))))
                       .alias("topics"), F.array_sort(F.collect_set("broker")).alias("brokers")).first()
    meta = checked.meta
    topics = {str(t["name"]) for t in meta.get("topics") or ()} | set(
        pq.read_table(checked.tables["assignments"], columns=["topic"]).column("topic").unique().to_pylist())
    brokers = {int(b) for b in meta.get("brokers") or ()} | set(
        pq.read_table(checked.tables["brokers"], columns=["broker"]).column("broker").unique().to_pylist())
    for what, ours, theirs in (("topics", topics, shown["topics"]), ("brokers", brokers, shown["brokers"])):
        if ours and theirs and not ours.intersection(theirs):
            named = ", ".join(map(str, theirs[:5])) + (f" and {len(theirs) - 5} more" if len(theirs) > 5 else "")
            listed = ", ".join(map(str, sorted(ours)[:5])) + (", …" if len(ours) > 5 else "")
            raise ReplicaflowError(f"--logs: the logs' {what} ({named}) include none of cluster '{meta['cluster']}''s "
                                   f"({listed} in its telemetry): are they another cluster's logs?")


def analyze(telemetry_dirs: Path | Sequence[Path], out: Path, master: str = "local[2]", progress: bool = False,
            spark: SparkSession | None = None, logs: LogPaths | None = None, allow_empty: bool = False) -> dict:
    """Analyze ``telemetry_dirs`` into ``out/analysis``; ``logs`` (files, directories or globs of one
    cluster's broker logs) add ``log_events`` and ``rejects`` (docs/logs.md). Returns the summary."""
    checked = check_inputs(telemetry_dirs, allow_empty=allow_empty)
    if logs is not None and len(checked) != 1:
        raise ReplicaflowError("--logs: give exactly one telemetry directory, the cluster the logs belong to")
    if logs is not None:
        resolve_paths(logs)  # a glob matching no file is one sentence now, not after Spark started
    commit = Commit(out, writes=ANALYSIS, drops=REPORT)
    if spark is None:
        check_master(master)
    with commit.staged() as stage:
        summary = analyze_into(checked, stage, master, progress, spark, logs)
    if progress:
        print_analyze(Console(stderr=True), summary)
    return summary



@contextmanager
def _spark_failure(inputs: Sequence[sources.ClusterInputs], writing: Path) -> Iterator[None]:
    """A Spark job that fails on the logs (a JVM out of memory on a huge file, a corrupt archive) is one
    sentence naming what was being read, not a Java traceback (CONTRIBUTING.md, bad input). A JVM that died
    is py4j's refused connection. A full disk under Spark's write of ``writing`` (the rebuilt telemetry) is
    the output commit's sentence naming that folder (``session.java_no_room``, as ``pipeline.runner`` does); no room
    for Spark's own scratch files names those (``scratch.java_scratch_full``)."""
    try:
        yield
    except (Py4JError, PySparkException, ConnectionError) as exc:
        room = java_no_room(exc)
        if room is not None:
            raise OSError(room, os.strerror(room), str(writing)) from None
        spark = SparkSession.getActiveSession()
        scratch = None if spark is None or jvm_gone(exc) else java_scratch_full(exc, spark)
        if scratch is not None:
            raise ReplicaflowError(f"--logs: {scratch}") from None
        files = sum(len(i.logs) for i in inputs)
        raise ReplicaflowError(f"--logs: Spark failed analyzing {counted(files, 'log file')} of "
                               f"{plural(len(inputs), 'cluster')} {', '.join(i.cluster for i in inputs)}: "
                               f"{java_reason(exc)}") from None


def _clusters_text(inputs: Sequence[sources.ClusterInputs]) -> str:
    names = [i.cluster for i in inputs]
    return f"cluster '{names[0]}'" if len(names) == 1 else f"{len(names)} clusters"


def analyze_logs(logs: Sequence[str], out: Path, topics: Sequence[str] = (), log_dirs: Sequence[str] = (),
                 cluster: str | None = None, cluster_from_path: bool = False, kafka_version: str | None = None,
                 scrape_interval: str = "10s", topics_at: str = "end", log_timezone: str | None = None,
                 min_insync_replicas: int | None = None, master: str = "local[2]", progress: bool = False,
                 spark: SparkSession | None = None) -> dict:
    """A real cluster (or a fleet) from its broker logs and Kafka's tool outputs alone (docs/real-cluster.md):
    the telemetry tables are rebuilt (ingest/rebuild.py) into ``out/telemetry`` (every cluster's rows;
    ``_meta.json`` for one cluster, ``_metas.json`` for several), then analyzed as any telemetry."""
    inputs = sources.plan(logs, topics, log_dirs, cluster, cluster_from_path)
    opts = sources.options(kafka_version, scrape_interval, topics_at, log_timezone, min_insync_replicas)
    if topics_at != "end" and not topics:  # it anchors the describe output: without one it did nothing
        raise ReplicaflowError("--topics-at: only with --topics (it says when that describe output was taken)")
    commit = Commit(out, writes=("telemetry", *ANALYSIS), drops=REPORT)
    if spark is None:
        check_master(master)
    with commit.staged() as stage, _spark_failure(inputs, stage / "telemetry"):
        with progress_steps(progress) as step:
            # the rebuilt telemetry has no sample rows: the logs' bytes size the run
            log_bytes = text_bytes([f for i in inputs for f in i.logs])
            session = session_for(spark, step, lambda: get_spark(master, rows=0, log_bytes=log_bytes))
            short = scratch_short(session, log_bytes or 0)
            if short is not None:
                raise ReplicaflowError(f"--logs: {short}")
            files = sum(len(i.logs) for i in inputs)
            step(f"analyze: reading {counted(files, 'log file')} of {_clusters_text(inputs)}")
            built = rebuild(session, inputs, opts, step=step)
            step("analyze: writing the rebuilt telemetry")
            tele = stage / "telemetry"
            write_parquet_all(session, built.tables, tele)
        metas = built.metas
        meta_file = tele / (META_FILE if len(metas) == 1 else METAS_FILE)
        meta_file.write_text(json.dumps(metas[0] if len(metas) == 1 else metas, indent=2, sort_keys=True) + "\n")
        tables = {name: session.read.parquet(spark_path(tele / name)) for name in built.tables}
        t = Telemetry(tables, meta_frame(session, metas), tuple(metas))
        summary = run_analysis([tele], stage, master=master, progress=progress, spark=session, telemetry=t,
                               extra_tables={"log_events": built.log_events, "rejects": built.rejects})
    if progress:
        print_analyze(Console(stderr=True), summary)
    return summary
