"""`replicaflow analyze`: telemetry of one or several clusters → every analysis table, atomically.

The steps are the ``DataFrame → DataFrame`` functions of state/metrics/events, chained here and
in the declarative pipeline (pipeline/sdp/) alike.
"""

from __future__ import annotations

import functools
import gc
import json
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import TypeVar

from pyspark.sql import DataFrame, SparkSession

from replicaflow.errors import ReplicaflowError
from replicaflow.pipeline import events as E
from replicaflow.pipeline import metrics as M
from replicaflow.pipeline import state as S
from replicaflow.pipeline import summary as summary_step
from replicaflow.pipeline.elections import unclean_elections
from replicaflow.pipeline.load import Telemetry, check_inputs, read_telemetry
from replicaflow.pipeline.progress import progress_steps, session_for
from replicaflow.pipeline.pruning import collect_spans, scrapes_within
from replicaflow.pipeline.scratch import input_bytes, java_scratch_full, scratch_short
from replicaflow.pipeline.session import get_spark, java_no_room, java_reason, jvm_gone
from replicaflow.telemetry.checks import Checked
from replicaflow.telemetry.io import atomic_dir
from replicaflow.telemetry.schema import ANALYSIS
from replicaflow.telemetry.spark import conform as to_schema
from replicaflow.telemetry.spark import read_contract, spark_path, write_parquet_all

PRUNE_MIN_ROWS = 1_000_000  # below this, the two jobs that find the spans cost more than a whole scan
T = TypeVar("T")
OUTPUTS = ("partition_state", "broker_metrics", "topic_metrics", "cluster_metrics", "incidents", "reassignments",
           "reassignment_progress", "unclean_elections")


def once(make: Callable[[], T]) -> Callable[[], T]:
    """``make()`` called by the first caller only, from whichever thread asks first; the others wait for its
    result. ``analyze`` builds each table on a thread of its own, and the steps they share are built once."""
    lock = threading.Lock()
    made: list[T] = []

    def get() -> T:
        with lock:
            if not made:
                made.append(make())
            return made[0]
    return get


def build(t: Telemetry, shared: Callable[[DataFrame], DataFrame] = lambda df: df,
          prune: bool = False) -> dict[str, Callable[[], DataFrame] | list[Callable[[], DataFrame]]]:
    """Every analysis table of docs/design.md, analysis, as a call that builds its lazy DataFrame, in the
    contract's column order.

    ``shared`` wraps the intermediate results that feed several tables or steps (the partition replay that
    holds the state, lagging replicas, topic counts, reassignment episodes and progress); ``analyze`` caches them there
    so each is computed once for all the writes. Each is built once (``once``), by the first table that
    needs it.

    ``prune`` reads only the scrapes of ``replica_offsets`` that the lag gauges and the reassignment
    progress can use (pipeline/pruning.py); it runs a small Spark job on the partition state while
    building those two. ``broker_metrics`` comes in two parts, its lag gauges apart, so the rest of
    it need not wait for that job (``write_parquet_all`` writes the parts into one folder).
    """
    replay = once(lambda: shared(M.partition_replay(S.partition_events(t.tables), t.meta)))
    state = once(lambda: S.state_rows(replay()))
    offsets = t.tables["replica_offsets"]

    def lagging_replicas() -> DataFrame:
        read = offsets
        if prune:
            read = scrapes_within(offsets, collect_spans(M.out_of_sync_intervals(state()), "from_ms", "to_ms"))
        return shared(M.lagging_replicas(read, state(), t.meta))

    def progress_of() -> DataFrame:
        read = offsets
        if prune:
            pad_ms = max(int(m["scrape_interval_ms"]) for m in t.metas)
            read = scrapes_within(offsets, collect_spans(episodes(), "start_ms", "end_ms", pad_ms))
        return shared(E.reassignment_progress(episodes(), read, t.meta, t.tables["configs"]))

    lagging = once(lagging_replicas)
    topics = once(lambda: shared(M.topic_metrics(state(), t.meta)))
    episodes = once(lambda: shared(E.reassignment_episodes(state())))
    progress = once(progress_of)
    out: dict[str, Callable[[], DataFrame] | list[Callable[[], DataFrame]]] = {
        "partition_state": state,
        # in two parts: the lag gauges wait for the scrapes of replica_offsets that they read
        "broker_metrics": [lambda: M.broker_metrics(state(), replay(), t.tables, t.meta),
                           lambda: M.lag_metrics(lagging(), state(), t.tables, t.meta)],
        "topic_metrics": topics,
        "cluster_metrics": lambda: M.cluster_metrics(topics()),
        "incidents": lambda: E.incidents(state(), t.meta),
        "reassignments": lambda: E.reassignments(episodes(), progress(), t.tables["configs"]),
        "reassignment_progress": lambda: E.progress_table(progress()),
        "unclean_elections": lambda: unclean_elections(replay(), t.tables["leaders"]),
    }
    return {name: [partial(_conformed, m, name) for m in make] if isinstance(make, list)
            else partial(_conformed, make, name) for name, make in out.items()}


def _conformed(make: Callable[[], DataFrame], name: str) -> DataFrame:
    return conform(make(), name)


def conform(df: DataFrame, name: str) -> DataFrame:
    """Select and cast to the contract schema ANALYSIS[name]."""
    return to_schema(df, ANALYSIS[name])


def releasing_jvm_objects(fn: Callable[..., T]) -> Callable[..., T]:
    """``fn``, then Python's cycle collector, so that the JVM may drop the objects ``fn`` made.

    Every py4j proxy of a JVM object is in a reference cycle of its own (``JavaObject._methods`` holds
    members that point back at it), so only Python's cycle collector releases the JVM's query plans, and
    with them the broadcasts and shuffles that Spark's cleaner removes once a plan is gone. Left to it, an
    analysis at 1 h kept about 90 MB of plans per run live in a long-lived JVM (tests, benchmarks, notebooks)
    and 0.5–0.8 GB of cleanable blocks besides, until the next full collection (docs/pipeline.md, "Memory").
    """
    @functools.wraps(fn)
    def run(*args, **kwargs) -> T:
        try:
            return fn(*args, **kwargs)
        finally:
            gc.collect()
    return run


@releasing_jvm_objects
def analyze(telemetry_dirs: Path | Sequence[Path], out: Path, master: str = "local[2]", progress: bool = False,
            spark: SparkSession | None = None, extra_tables: Mapping[str, DataFrame] | None = None,
            checked: Sequence[Checked] | None = None, telemetry: Telemetry | None = None) -> dict:
    """Analyze one or several telemetry directories into ``<out>/analysis/``; returns the headline summary.

    ``telemetry``: tables already read (``analyze --logs`` alone rebuilds a fleet's tables into one
    folder per table, docs/real-cluster.md); ``telemetry_dirs`` then only names them in messages.

    ``extra_tables`` are analysis tables of other sources written beside the computed ones, e.g.
    ``log_events`` and ``rejects`` that the analyze job reads from broker logs with ingest/
    (docs/logs.md). Every output is written into a temporary sibling of ``analysis/`` that
    replaces it only when all tables and ``_summary.json`` are written, so a failed run leaves the
    previous analysis untouched.
    """
    extra = dict(extra_tables or {})
    for name in extra:
        if name not in ANALYSIS or name in OUTPUTS:
            raise ValueError(f"extra analysis table '{name}' is not an input-derived table of the contract")
    with progress_steps(progress) as step:
        session = session_for(spark, step, partial(get_spark, master))
        if telemetry is None and checked is None:
            checked = check_inputs(telemetry_dirs, allow_empty=True)
        read = ([d for c in checked for d in c.tables.values()] if telemetry is None
                else [telemetry_dirs] if isinstance(telemetry_dirs, (str, Path)) else telemetry_dirs)
        short = scratch_short(session, input_bytes(read))
        if short is not None:
            raise ReplicaflowError(f"analyze: {short}")
        step("analyze: reading telemetry")
        t = telemetry or read_telemetry(session, telemetry_dirs, checked)
        cached: list[DataFrame] = []

        def shared(df: DataFrame) -> DataFrame:
            cached.append(df.cache())
            return cached[-1]

        out = Path(out)
        try:
            tables = {**build(t, shared, prune=t.rows >= PRUNE_MIN_ROWS), **extra}
            summary_jobs = summary_step.jobs(t.metas)
            with atomic_dir(out / "analysis") as tmp, ThreadPoolExecutor(
                    max_workers=len(summary_jobs), thread_name_prefix="replicaflow-summary") as pool:
                headline_jobs: dict[str, Future] = {}

                def written(name: str) -> None:
                    """Start the headline jobs that read table ``name`` as soon as it is written, beside the
                    writes still running. broker_metrics counts as written with its first part: its second
                    holds only the lag gauges, which no headline reads (``summary.BROKER_METRICS_READ``), and
                    its files join the folder only after every write."""
                    step(f"analyze: wrote {name}")
                    for job, (table, collect) in summary_jobs.items():
                        if table == name:
                            df = read_contract(session, ANALYSIS[table], [spark_path(tmp / table)])
                            headline_jobs[job] = pool.submit(collect, df)

                step(f"analyze: building and writing {len(tables)} tables")
                write_parquet_all(session, tables, tmp, written)
                step("analyze: summary")
                summary = summary_step.headlines(t.metas, {job: f.result() for job, f in headline_jobs.items()})
                (tmp / "_summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True))
        except ReplicaflowError:
            raise
        except Exception as exc:  # a Spark failure on data that passed the checks, a JVM that died: one sentence
            if not (type(exc).__module__.startswith(("pyspark", "py4j")) or jvm_gone(exc)):
                raise
            room = java_no_room(exc)
            if room is not None:  # a full disk: the output commit names the folder (Commit.staged)
                raise OSError(room, os.strerror(room), str(out / "analysis")) from None
            scratch = None if jvm_gone(exc) else java_scratch_full(exc, session)
            if scratch is not None:
                raise ReplicaflowError(f"analyze: {scratch}") from None
            shown = telemetry_dirs if isinstance(telemetry_dirs, (str, Path)) else ", ".join(map(str, telemetry_dirs))
            raise ReplicaflowError(f"analyze: Spark failed reading {shown}: {java_reason(exc)}") from None
        finally:
            _unpersist(cached)
    return summary


def _unpersist(cached: Sequence[DataFrame]) -> None:
    """Drop the analysis's caches. A JVM that died took them with it, and asking it raised py4j's refused
    connection over the sentence that says why the analysis failed."""
    for df in cached:
        try:
            df.unpersist()
        except Exception as exc:
            if not jvm_gone(exc):
                raise
