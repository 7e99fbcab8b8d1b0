"""``telemetry.spark.write_parquet_all``: tables written by concurrent jobs, built on their own threads, and a
table written in parts that end up in one folder (pipeline/runner.py writes ``broker_metrics`` so)."""

from __future__ import annotations

import threading
import time

import pyarrow.parquet as pq
import pytest

from replicaflow.telemetry.spark import write_parquet_all


def test_a_table_in_parts_ends_in_one_folder_with_every_row(spark, tmp_path):
    built_on: list[str] = []

    def second_part():
        built_on.append(threading.current_thread().name)
        return spark.range(100, 103).selectExpr("id", "'b' as part")

    done: list[str] = []
    write_parquet_all(spark, {"t": [spark.range(0, 3).selectExpr("id", "'a' as part"), second_part],
                              "u": lambda: spark.range(5).selectExpr("id * 2 as id")},
                      tmp_path, done.append)
    rows = pq.read_table(tmp_path / "t").to_pylist()
    assert sorted((r["id"], r["part"]) for r in rows) == [(0, "a"), (1, "a"), (2, "a"), (100, "b"), (101, "b"),
                                                          (102, "b")]
    assert sorted(pq.read_table(tmp_path / "u").column("id").to_pylist()) == [0, 2, 4, 6, 8]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t", "u"]  # no part folder is left behind
    assert sorted(done) == ["t", "t (part 2)", "u"]
    assert built_on and built_on[0] != threading.main_thread().name
    assert spark.read.parquet(str(tmp_path / "t")).count() == 6


def test_a_part_that_fails_fails_the_whole_write(spark, tmp_path):
    def broken():
        raise RuntimeError("no such part")

    with pytest.raises(RuntimeError, match="no such part"):
        write_parquet_all(spark, {"t": [spark.range(3), broken]}, tmp_path)


def test_a_failure_cancels_a_job_that_a_slower_table_submits_after_it(spark, tmp_path):
    """A table still being built when another fails submits its job afterwards: that job is cancelled too,
    so the failure is raised at once, not after a write whose output is thrown away."""
    def broken():
        raise RuntimeError("no such table")

    def slow():
        time.sleep(1.0)  # still building when ``broken`` fails
        # 20 tasks of 3 s: 30 s on 2 cores if it ran to the end; a cancelled one lets its running tasks finish
        return spark.range(20).repartition(20).selectExpr(
            "reflect('java.lang.Thread', 'sleep', cast(3000 as bigint)) as slept")

    start = time.monotonic()
    with pytest.raises(RuntimeError, match="no such table"):
        write_parquet_all(spark, {"broken": broken, "slow": slow}, tmp_path)
    assert time.monotonic() - start < 15
