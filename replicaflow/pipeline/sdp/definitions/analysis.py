"""The analysis tables as one dataflow graph of Spark Declarative Pipelines (PySpark 4.3).

Each dataset calls the same ``DataFrame → DataFrame`` steps that ``replicaflow analyze`` chains
(``runner.build``), and reads the datasets it depends on by name, so SDP orders and materializes
them once. Intermediate steps that are not part of the contract are temporary views. ``spark`` is
injected by ``spark-pipelines``; the telemetry directories come from ``REPLICAFLOW_TELEMETRY``.
"""

from __future__ import annotations

import os

from pyspark import pipelines as dp
from pyspark.sql import DataFrame

from replicaflow.errors import ReplicaflowError
from replicaflow.pipeline import events as E
from replicaflow.pipeline import metrics as M
from replicaflow.pipeline import state as S
from replicaflow.pipeline.elections import unclean_elections as elections
from replicaflow.pipeline.load import read_telemetry
from replicaflow.pipeline.runner import conform

_dirs = os.environ.get("REPLICAFLOW_TELEMETRY", "")
if not _dirs:
    raise ReplicaflowError("REPLICAFLOW_TELEMETRY: set it to the telemetry directories to analyze (comma-separated)")
T = read_telemetry(spark, [d for d in _dirs.split(",") if d])  # noqa: F821 -- injected by spark-pipelines


def _read(name: str) -> DataFrame:
    return spark.read.table(name)  # noqa: F821


@dp.temporary_view(name="partition_replay")
def partition_replay() -> DataFrame:
    return M.partition_replay(S.partition_events(T.tables), T.meta)


@dp.materialized_view(name="partition_state")
def partition_state() -> DataFrame:
    return conform(S.state_rows(_read("partition_replay")), "partition_state")


@dp.materialized_view(name="broker_metrics")
def broker_metrics() -> DataFrame:
    state = _read("partition_state")
    lagging = M.lagging_replicas(T.tables["replica_offsets"], state, T.meta)
    return conform(M.broker_metrics(state, _read("partition_replay"), T.tables, T.meta)
                   .unionByName(M.lag_metrics(lagging, state, T.tables, T.meta)), "broker_metrics")


@dp.materialized_view(name="topic_metrics")
def topic_metrics() -> DataFrame:
    return conform(M.topic_metrics(_read("partition_state"), T.meta), "topic_metrics")


@dp.materialized_view(name="cluster_metrics")
def cluster_metrics() -> DataFrame:
    return conform(M.cluster_metrics(_read("topic_metrics")), "cluster_metrics")


@dp.materialized_view(name="incidents")
def incidents() -> DataFrame:
    return conform(E.incidents(_read("partition_state"), T.meta), "incidents")


@dp.temporary_view(name="reassignment_episodes")
def reassignment_episodes() -> DataFrame:
    return E.reassignment_episodes(_read("partition_state"))


@dp.temporary_view(name="reassignment_progress_detail")
def reassignment_progress_detail() -> DataFrame:
    return E.reassignment_progress(_read("reassignment_episodes"), T.tables["replica_offsets"], T.meta,
                                   T.tables["configs"])


@dp.materialized_view(name="reassignment_progress")
def reassignment_progress() -> DataFrame:
    return conform(E.progress_table(_read("reassignment_progress_detail")), "reassignment_progress")


@dp.materialized_view(name="reassignments")
def reassignments() -> DataFrame:
    return conform(E.reassignments(_read("reassignment_episodes"), _read("reassignment_progress_detail"),
                                   T.tables["configs"]), "reassignments")


@dp.materialized_view(name="unclean_elections")
def unclean_elections() -> DataFrame:
    return conform(elections(_read("partition_replay"), T.tables["leaders"]), "unclean_elections")
