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


def test_a_cluster_rebuilt_from_logs_peaks_at_any_instant_not_only_at_the_grid(spark):
    """The gauges of docs/semantics.md §2 (ReplicaManager's UnderReplicatedPartitions, KafkaController's
    OfflinePartitionsCount, …) are read at scrapes, and a simulated cluster's peak is their maximum there. A
    cluster rebuilt from logs has no scrapes: the grid is ours, and a shrink expanded within it (Partition.
    maybeShrinkIsr, then maybeExpandIsr, seconds apart) is an incident, so its peak is over every instant.
    An interval ending where the partition's next one starts (the same ms) does not dip or double count."""
    def row(topic, from_ms, to_ms, urp=False, kip352=None, reassigning=False, offline=False):
        kip352 = urp if kip352 is None else kip352
        return dict(cluster="c", topic=topic, partition=0, from_ms=from_ms, to_ms=to_ms, leader=-1 if offline else 1,
                    replicas=[1, 2, 3], isr=[1], urp=urp, urp_kip352=kip352, urp_legacy=urp, under_min_isr=False,
                    at_min_isr=False, offline=offline, reassigning=reassigning)

    state = [row("a", 0, 1_000), row("a", 1_000, 3_000, urp=True), row("a", 3_000, None),
             row("b", 0, 2_000), row("b", 2_000, 2_500, urp=True, kip352=False, reassigning=True),
             row("b", 2_500, 4_000, urp=True, kip352=False, reassigning=True), row("b", 4_000, None),
             row("c", 0, 3_000), row("c", 3_000, None, urp=True), row("d", 5_000, 5_001, offline=True),
             row("d", 5_001, None)]
    tables = {name: _frame(spark, name, []) for name in TABLES}
    tables["partition_state"] = _frame(spark, "partition_state", state)
    tables["cluster_metrics"] = _frame(spark, "cluster_metrics", [
        dict(cluster="c", ts_ms=ts, urp=0, urp_kip352=0, urp_legacy=0, under_min_isr=0, at_min_isr=0, offline=0,
             reassigning=0, reassignment_induced_urp=0) for ts in (0, 10_000)])
    meta = {"cluster": "c", "kafka_version": "2.4", "start_ms": 0, "end_ms": 10_000}
    logged = summarize([{**meta, "source": "logs"}], tables)["c"]
    # 2,000-3,000: a and b; at 3,000 a ends as c starts; b's two intervals meet at 2,500
    assert (logged["peak_urp"], logged["peak_urp_legacy"], logged["peak_urp_kip352"]) == (2, 2, 1)
    assert (logged["peak_reassignment_induced_urp"], logged["peak_reassigning"], logged["peak_offline"]) == (1, 1, 1)
    assert logged["peak_under_min_isr"] == 0
    simulated = summarize([{**meta, "source": "simulator"}], tables)["c"]
    assert (simulated["peak_urp"], simulated["peak_offline"]) == (0, 0)  # the gauges at the scrapes


def test_a_cluster_rebuilt_from_logs_counts_the_unclean_elections_the_table_lists(spark):
    """A simulated or scraped cluster's headline is its UncleanLeaderElectionsPerSec meter (the active controller's
    ControllerStats Count, KafkaController.onPartitionStateChange's unclean branch), which the table need not match
    (an ELR member elected from an empty ISR counts in KRaft's meter alone). From logs, the meter is our rebuild of
    the same elections, and only where a rebuilt broker was up to count them: the headline is then the table's
    count, as the messages lost are its sum."""
    unclean = jmx("UncleanLeaderElectionsPerSec")
    tables = {name: _frame(spark, name, []) for name in TABLES}
    tables["broker_metrics"] = _frame(spark, "broker_metrics", [
        dict(cluster="c", ts_ms=ts, broker=1, name=unclean, value=float(v)) for ts, v in ((0, 0), (10_000, 1))])
    tables["unclean_elections"] = _frame(spark, "unclean_elections", [
        dict(cluster="c", ts_ms=ts, topic="t", partition=p, leader=2, leader_epoch=5, messages_lost=lost)
        for ts, p, lost in ((1_000, 0, 40), (2_000, 1, None))])
    meta = {"cluster": "c", "kafka_version": "2.8", "start_ms": 0, "end_ms": 10_000}
    logged = summarize([{**meta, "source": "logs"}], tables)["c"]
    simulated = summarize([{**meta, "source": "simulator"}], tables)["c"]
    assert (logged["unclean_elections"], logged["messages_lost"]) == (2, 40)
    assert (simulated["unclean_elections"], simulated["messages_lost"]) == (1, 40)
