"""The headline numbers: computed once, by the pipeline, from the analysis tables (analysis/_summary.json)."""

from __future__ import annotations

import pytest
from pyspark.sql.pandas.types import from_arrow_schema

from replicaflow.model.metrics import jmx
from replicaflow.pipeline.summary import TABLES, summarize
from replicaflow.telemetry.schema import ANALYSIS
from tests.report.tiny import HEADLINES, write_analysis

pytestmark = pytest.mark.spark


def test_summary_of_the_tiny_analysis_is_the_hand_worked_headlines(spark, tmp_path):
    """The report's fixture (tests/report/tiny.py) holds what the pipeline computes from its tables."""
    built = write_analysis(tmp_path, ("alpha", "beta"))
    tables = {name: spark.read.parquet(str(tmp_path / "analysis" / name)) for name in TABLES}
    assert summarize([b["meta"] for b in built.values()], tables) == HEADLINES


def _frame(spark, name: str, rows: list[dict]):
    return spark.createDataFrame(rows, from_arrow_schema(ANALYSIS[name]))


def test_meter_totals_survive_a_restart_and_gauges_peak_over_brokers(spark):
    """IsrShrinksPerSec is a JMX meter Count: it restarts from 0 with the broker (Yammer Meter in
    kafka.server.ReplicaManager), so a drop between scrapes counts the new value, not a negative step.
    FailedPartitionsCount (ReplicaFetcherManager, KIP-461) peaks on the sum over brokers per scrape."""
    shrinks, failed = jmx("IsrShrinksPerSec"), jmx("FailedPartitionsCount")
    bm = [(0, 1, shrinks, 0), (10, 1, shrinks, 2), (20, 1, shrinks, 5), (40, 1, shrinks, 1),
                     (50, 1, shrinks, 3), (0, 2, shrinks, 4), (10, 2, shrinks, 4),
                     (0, 1, failed, 1), (0, 2, failed, 1), (10, 1, failed, 3), (10, 2, failed, 0)]
    tables = {name: _frame(spark, name, []) for name in TABLES}
    tables["broker_metrics"] = _frame(spark, "broker_metrics", [
        dict(cluster="c", ts_ms=ts, broker=b, name=n, value=float(v)) for ts, b, n, v in bm])
    s = summarize([{"cluster": "c", "kafka_version": "3.7"}], tables)["c"]
    assert (s["isr_shrinks"], s["isr_expands"], s["peak_failed_partitions"]) == (0 + 2 + 3 + 1 + 2 + 4 + 0, 0, 3)
    assert s["peak_urp"] == 0 and s["incidents"] == {"urp": 0, "under_min_isr": 0, "offline": 0}
    assert s["start"] is None and s["kafka_version"] == "3.7"


def test_no_headline_reads_the_lag_gauges_that_broker_metrics_writes_last():
    """``analyze`` starts the headline jobs on broker_metrics once its first part is written; the second part
    holds only MaxLag and ReassignmentMaxLag (kafka.server.ReplicaFetcherManager / ReplicaManager gauges), so
    no headline may read them (``metrics.LAG_GAUGES``)."""
    from replicaflow.pipeline.metrics import LAG_GAUGES
    from replicaflow.pipeline.summary import BROKER_METRICS_READ, JOBS

    assert BROKER_METRICS_READ and not set(BROKER_METRICS_READ) & set(LAG_GAUGES)
    assert [job for job, (table, _) in JOBS.items() if table == "broker_metrics"] == ["meters", "gauges"]
