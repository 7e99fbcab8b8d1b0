"""The data contract on Spark DataFrames: select and cast to the Arrow schemas of telemetry/schema.py.

Kept apart from schema.py so the simulator, which writes with pyarrow only, never imports PySpark.
"""

from __future__ import annotations

import re
import shutil
import uuid
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed, wait
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


def local_frame(spark: SparkSession, rows: list[tuple], schema: StructType | str) -> DataFrame:
    """A DataFrame of driver-side rows, as a local relation of the plan (an Arrow table); ``schema`` a StructType
    or its DDL (``"cluster string, broker int"``).

    ``createDataFrame`` of a Python list makes an RDD that a Python worker unpickles every time a query
    scans it: for the one-row per-cluster meta table, which most of ``analyze``'s stages join, that was a
    Python task per scan (docs/pipeline-measurements.md, "The night's changes"). A local relation is also sized for the
    optimizer, which then broadcasts it.
    """
    arrow = to_arrow_schema(StructType.fromDDL(schema) if isinstance(schema, str) else schema)
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
            # the other jobs too, also those a thread still building its table submits after the failure
            pending = [f for f in futures if not f.done()]
            while pending:
                sc.cancelJobGroup(group)
                pending = list(wait(pending, timeout=0.2).not_done)
            raise
    return out


Table = DataFrame | Callable[[], DataFrame]


def write_parquet_all(spark: SparkSession, tables: Mapping[str, Table | Sequence[Table]], folder: Path,
                      done: Callable[[str], None] = lambda name: None) -> None:
    """Write every table to ``folder/<name>`` as Parquet, the writes submitted to Spark together (``run_jobs``:
    about 2 s of a cold 25 s run on 2 cores). DataFrames they share are cached by the caller; Spark computes a
    cached partition once and the other job waits for it.

    A table may be a call that builds its DataFrame: it is built on its job's
    thread, so the driver's building of one query overlaps the others' tasks. A table given as a list of
    parts is written by one job per part, each into a folder of its own whose data files then move into
    the table's folder, so a part that waits for something need not hold up the others (docs/pipeline.md).
    """
    jobs: dict[str, Callable[[], None]] = {}
    moves: list[tuple[Path, Path]] = []
    for name, table in tables.items():
        parts = list(table) if isinstance(table, (list, tuple)) else [table]
        for i, part in enumerate(parts):
            path = folder / (name if i == 0 else f".{name}.part{i}")
            jobs[name if i == 0 else f"{name} (part {i + 1})"] = partial(_write_parquet, part, str(path))
            if i:
                moves.append((path, folder / name))
    if jobs:
        run_jobs(spark.sparkContext, jobs, done)
    for part, table in moves:
        for f in part.iterdir():
            if f.name.startswith(("part-", ".part-")):  # data files and their checksums; names are unique per job
                f.rename(table / f.name)
        shutil.rmtree(part)


def _write_parquet(table: Table, path: str) -> None:
    (table() if callable(table) else table).write.parquet(path)


def spark_path(path: Path | str) -> str:
    """A path as Spark's reader takes it literally: Hadoop expands ``[1]``, ``{a,b}``, ``*`` and ``?``."""
    return re.sub(r"([\[\]{}*?\\])", r"\\\1", str(path))

