"""What ``analyze`` computes once for several tables (``runner.keep``): a local checkpoint in local mode up to
``runner.CHECKPOINT_MAX_ROWS`` telemetry rows, Spark's cache beyond and on a cluster. Both give the same
tables, and nothing stays in memory once ``analyze`` returns."""

from __future__ import annotations

import json
from pathlib import Path

from replicaflow.pipeline import runner
from tests.pipeline.tele import table_rows

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "tests" / "golden" / "scenarios" / "cancel-and-delay.yaml"  # lag, moves, ISR changes


def stored_rdds(spark) -> int:
    return len(spark.sparkContext._jsc.sc().getRDDStorageInfo())


def test_local_checkpoint_is_a_leaf_and_the_cache_is_not(spark):
    """The local checkpoint replaces the plan by its rows (a ``LogicalRDD`` leaf), so the queries built on it
    plan a leaf; ``release`` frees both kinds."""
    def counts():
        return spark.range(1000).selectExpr("id % 7 AS k", "id").groupBy("k").count()

    checkpointed, cached = runner.keep(counts(), checkpoint=True), runner.keep(counts(), checkpoint=False)
    assert checkpointed._jdf.logicalPlan().getClass().getSimpleName() == "LogicalRDD"
    assert cached.is_cached and not checkpointed.is_cached
    before = stored_rdds(spark)
    assert sorted(map(tuple, checkpointed.collect())) == sorted(map(tuple, cached.collect()))
    assert stored_rdds(spark) == before + 2
    runner.release(checkpointed)
    runner.release(cached)
    assert stored_rdds(spark) == before and not cached.is_cached


def test_checkpoints_and_cache_give_the_same_tables_and_free_their_rows(spark, tmp_path, monkeypatch):
    from replicaflow.sim.runner import simulate

    simulate(SCENARIO, tmp_path / "tele")
    flags: list[bool] = []
    keep = runner.keep
    monkeypatch.setattr(runner, "keep", lambda df, checkpoint: flags.append(checkpoint) or keep(df, checkpoint))
    before = stored_rdds(spark)
    checkpointed = runner.analyze(tmp_path / "tele", tmp_path / "local", spark=spark)
    assert stored_rdds(spark) == before
    assert flags and all(flags)
    flags.clear()
    monkeypatch.setattr(runner, "CHECKPOINT_MAX_ROWS", 0)
    cached = runner.analyze(tmp_path / "tele", tmp_path / "cached", spark=spark)
    assert stored_rdds(spark) == before
    assert flags and not any(flags)
    assert json.dumps(checkpointed, sort_keys=True) == json.dumps(cached, sort_keys=True)
    for name in runner.OUTPUTS:
        assert table_rows(tmp_path / "local" / "analysis" / name) == table_rows(tmp_path / "cached" / "analysis" / name), name
