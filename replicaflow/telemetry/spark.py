"""The data contract on Spark DataFrames: select and cast to the Arrow schemas of telemetry/schema.py.

Kept apart from schema.py so the simulator, which writes with pyarrow only, never imports PySpark.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor, as_completed
from functools import partial
from pathlib import Path
from typing import TypeVar

import pyarrow as pa
from pyspark import SparkContext
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema
from pyspark.sql.types import StructType

T = TypeVar("T")


def conform(df: DataFrame, schema: pa.Schema) -> DataFrame:
    """Exactly the columns of ``schema``, in its order, cast to its Spark types."""
    # one SQL projection: a Column per field would cost dozens of JVM calls each (the type crosses py4j)
    return df.selectExpr(*[f"CAST(`{f.name}` AS {f.dataType.simpleString()}) AS `{f.name}`"
                           for f in from_arrow_schema(schema).fields])


def local_frame(spark: SparkSession, rows: list[tuple], schema: StructType) -> DataFrame:
    """A DataFrame of a few driver-side rows, as a local relation of the plan (an Arrow table).

    ``createDataFrame`` of a Python list makes an RDD that a Python worker unpickles every time a query
    scans it: for the one-row per-cluster meta table, which most of ``analyze``'s stages join, that was a
    Python task per scan (docs/pipeline.md, "The night's changes").
    """
    arrow = to_arrow_schema(schema)
    return spark.createDataFrame(pa.Table.from_pylist([dict(zip(arrow.names, row, strict=True)) for row in rows], schema=arrow))


def read_contract(spark: SparkSession, schema: pa.Schema, paths: list[str]) -> DataFrame:
    """Parquet files of one contract table, read with the contract's schema: Spark need not open a footer to
    infer it (the input checks compared every file's schema with the contract before)."""
    return spark.read.schema(from_arrow_schema(schema)).parquet(*paths).select(*schema.names)


def run_jobs(sc: SparkContext, jobs: Mapping[str, Callable[[], T]],
             done: Callable[[str], None] = lambda name: None) -> dict[str, T]:
    """Run every ``jobs[name]()`` (each one or a few Spark jobs) from a thread of its own; their results by name.

    Submitted together, Spark runs their stages side by side, so the driver's planning of one overlaps the
    others' tasks and small stages fill the cores (docs/pipeline.md). The first failure cancels the
    others and is raised. ``done(name)`` is called as each one finishes.
    """
    group = f"replicaflow-jobs-{uuid.uuid4().hex}"

    def run(name: str) -> tuple[str, T]:
        sc.setJobGroup(group, name)
        return name, jobs[name]()

    out: dict[str, T] = {}
    with ThreadPoolExecutor(max_workers=max(1, len(jobs)), thread_name_prefix="replicaflow-job") as pool:
        futures = [pool.submit(run, name) for name in jobs]
        try:
            for future in as_completed(futures):
                name, out[name] = future.result()
                done(name)
        except BaseException:
            sc.cancelJobGroup(group)
            raise
    return out


def write_parquet_all(tables: Mapping[str, DataFrame], folder: Path, done: Callable[[str], None] = lambda name: None,
                      ) -> None:
    """Write every table to ``folder/<name>`` as Parquet, the writes submitted to Spark together (``run_jobs``:
    about 2 s of a cold 25 s run on 2 cores). DataFrames they share are cached by the caller; Spark computes a
    cached partition once and the other job waits for it."""
    if tables:
        run_jobs(next(iter(tables.values())).sparkSession.sparkContext,
                 {name: partial(_write_parquet, df, str(folder / name)) for name, df in tables.items()}, done)


def _write_parquet(df: DataFrame, path: str) -> None:
    df.write.parquet(path)


def spark_path(path: Path | str) -> str:
    """A path as Spark's reader takes it literally: Hadoop expands ``[1]``, ``{a,b}``, ``*`` and ``?``."""
    return re.sub(r"([\[\]{}*?\\])", r"\\\1", str(path))

