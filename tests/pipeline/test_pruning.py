"""Pruning the scan of replica_offsets (pipeline/pruning.py) changes no analysis table.

``analyze`` prunes only from ``runner.PRUNE_MIN_ROWS`` input rows, which no test scenario reaches: here
the threshold is lowered to 0 so the scenarios with lagging replicas and reassignments are analyzed
both ways, and every table must come out the same row for row.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from replicaflow.pipeline import runner
from replicaflow.pipeline.pruning import merge_spans
from tests.pipeline.tele import table_rows

ROOT = Path(__file__).resolve().parents[2]
# lagging replicas and moves that end before the telemetry does (a completed, a cancelled and a throttled
# move, KIP-164 and KRaft ISR shrinks), so the spans are closed and the scan is pruned at both ends
SCENARIOS = [ROOT / "scenarios" / "kip352-after.yaml", ROOT / "scenarios" / "kip164-after.yaml",
             ROOT / "tests" / "golden" / "scenarios" / "cancel-and-delay.yaml",
             ROOT / "tests" / "golden" / "scenarios" / "kip542-configs.yaml",
             ROOT / "tests" / "pipeline" / "scenarios" / "kraft-35-shrinks.yaml"]


def test_merge_spans_joins_touching_spans_and_then_the_smallest_gaps():
    assert merge_spans([(50, 60), (0, 10), (10, 20), (30, None), (40, 45)]) == [(0, 20), (30, None)]
    assert merge_spans([(0, 1), (10, 11), (13, 14), (30, 31)], limit=2) == [(0, 14), (30, 31)]
    assert merge_spans([]) == []


def test_pruned_scan_gives_the_same_tables(spark, tmp_path, monkeypatch):
    """Both readers of replica_offsets (``metrics.lagging_replicas``: MaxLag / ReassignmentMaxLag, Kafka's
    ``ReplicaFetcherManager`` / ``ReplicaManager`` gauges; ``events.reassignment_progress``) read only the
    scrapes of the collected spans, and the result must not change."""
    from replicaflow.sim.runner import simulate

    dirs = []
    for scenario in SCENARIOS:
        simulate(scenario, tmp_path / scenario.stem)
        dirs.append(tmp_path / scenario.stem)
    runner.analyze(dirs, tmp_path / "whole", spark=spark)

    spans: list[list] = []

    def recorded(*args, **kwargs):
        spans.append(collect(*args, **kwargs))
        return spans[-1]

    collect = runner.collect_spans
    monkeypatch.setattr(runner, "collect_spans", recorded)
    monkeypatch.setattr(runner, "PRUNE_MIN_ROWS", 0)
    runner.analyze(dirs, tmp_path / "pruned", spark=spark)

    # both readers pruned, and each kept only part of the scan
    assert len(spans) == 2
    instants = [ts for d in dirs for ts in pq.read_table(d / "telemetry" / "replica_offsets", columns=["ts_ms"])
                .column("ts_ms").to_pylist()]
    for found in spans:
        kept = sum(any(lo <= ts and (hi is None or ts <= hi) for lo, hi in found) for ts in instants)
        assert 0 < kept < len(instants)
    for name in runner.OUTPUTS:
        whole = table_rows(tmp_path / "whole" / "analysis" / name)
        pruned = table_rows(tmp_path / "pruned" / "analysis" / name)
        assert pruned == whole, name
    lags = [r for r in pq.read_table(tmp_path / "pruned" / "analysis" / "broker_metrics").to_pylist()
            if "name=MaxLag" in r["name"] and r["value"] > 0]
    progress = pq.read_table(tmp_path / "pruned" / "analysis" / "reassignment_progress").num_rows
    assert lags and progress > 0


def test_within_bucket_pairs_rows_with_the_intervals_of_their_partition_and_bucket_on_one_long_key(spark):
    """``pruning.within_bucket``: the join of the lag gauges and the reassignment progress with their
    intervals (Kafka's ``ReplicaFetcherManager`` MaxLag reads one partition's fetcher at one instant). The
    same rows as an equi-join on (cluster, topic, partition, bucket), and a hash join keyed on one long."""
    from pyspark.sql import functions as F

    from replicaflow.pipeline.pruning import BUCKET_MS, bucket, within_bucket

    samples = spark.createDataFrame(
        [("c", "t", 0, 1, 10), ("c", "t", 0, 1, BUCKET_MS + 10), ("c", "t", 1, 1, 10), ("c", "u", 0, 2, 10),
         ("d", "t", 0, 1, 10), ("c", "t", 0, 3, 20)],
        "cluster string, topic string, partition int, broker int, ts_ms long")
    intervals = spark.createDataFrame(
        [("c", "t", 0, 0, "a"), ("c", "t", 0, 0, "b"), ("c", "u", 0, 0, "c"), ("d", "t", 0, 1, "d"),
         ("c", "t", None, 0, "e")],
        "cluster string, topic string, partition int, bucket long, tag string")
    got = within_bucket(samples, intervals, ["tag"])
    plain = (samples.withColumn("bucket", bucket(F.col("ts_ms"))).join(intervals, ["cluster", "topic", "partition", "bucket"])
             .select("cluster", "topic", "partition", "broker", "ts_ms", "tag"))
    assert sorted(got.collect()) == sorted(plain.collect())
    assert sorted((r["broker"], r["tag"]) for r in got.collect()) == [(1, "a"), (1, "b"), (2, "c"), (3, "a"), (3, "b")]
    assert got.columns == ["cluster", "topic", "partition", "broker", "ts_ms", "tag"]
    final = got._jdf.queryExecution().executedPlan().toString().split("== Initial Plan ==")[0]
    joins = [line.split("BroadcastHashJoin ")[1] for line in final.splitlines() if "BroadcastHashJoin " in line]
    assert len(joins) == 1, final
    keys = joins[0].split(", Inner")[0]  # one long on each side; the values are compared in the condition after
    assert keys.startswith("[xxhash64(") and keys.count("xxhash64(") == 2 and keys.count("], [") == 1, keys
