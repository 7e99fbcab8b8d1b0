"""Reading the telemetry contract (docs/design.md, telemetry) into Spark, with the input checks of issue 4.

Several telemetry directories are read into one DataFrame per table (every key carries
``cluster``), and a small per-cluster meta DataFrame carries what differs between Kafka versions
so the transformations never branch in Python on one version.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T

from replicaflow.errors import ReplicaflowError, quote
from replicaflow.model.metrics import broker_metrics_for
from replicaflow.model.version import KafkaVersion
from replicaflow.pipeline.checks import check_integrity, check_meta
from replicaflow.telemetry import io
from replicaflow.telemetry.schema import TELEMETRY
from replicaflow.telemetry.spark import spark_path

META_KEYS = ("cluster", "kafka_version", "start_ms", "end_ms", "scrape_interval_ms")

META_SCHEMA = T.StructType([
    T.StructField("cluster", T.StringType(), False),
    T.StructField("kafka_version", T.StringType(), False),
    T.StructField("start_ms", T.LongType(), False),
    T.StructField("end_ms", T.LongType(), False),
    T.StructField("scrape_interval_ms", T.LongType(), False),
    T.StructField("kip352", T.BooleanType(), False),
    T.StructField("min_isr_capped", T.BooleanType(), False),
    T.StructField("metrics", T.ArrayType(T.StringType()), False),
])


@dataclass(frozen=True)
class Telemetry:
    """The telemetry tables of one or several clusters, plus their per-cluster meta row."""

    tables: dict[str, DataFrame]
    meta: DataFrame
    metas: tuple[dict, ...]


def _as_dirs(telemetry_dirs: Path | str | Sequence[Path | str]) -> list[Path]:
    if isinstance(telemetry_dirs, (str, Path)):
        return [Path(telemetry_dirs)]
    dirs = [Path(d) for d in telemetry_dirs]
    if not dirs:
        raise ReplicaflowError("analyze: no telemetry directory given")
    return dirs


def read_meta(root: Path) -> dict:
    """``<root>/telemetry/_meta.json`` with the keys the pipeline needs, checked."""
    tele = root / "telemetry"
    if not root.is_dir():
        raise ReplicaflowError(f"{root}: telemetry directory does not exist")
    if not tele.is_dir():
        if not any(root.iterdir()):
            raise ReplicaflowError(f"{root}: directory is empty, expected telemetry/ (the output of `simulate`)")
        raise ReplicaflowError(f"{tele}: missing, expected the telemetry/ directory written by `simulate`")
    path = tele / "_meta.json"
    meta = io.read_meta(root)
    for key in META_KEYS:
        if key not in meta:
            raise ReplicaflowError(f"{path}: key '{key}' is missing")
    return check_meta(path, meta)


def _type_name(t) -> str:
    return str(t).replace("list<item: ", "list<").replace("list<element: ", "list<")


def check_table(root: Path, name: str) -> Path:
    """The Parquet directory of one table, its columns compared with :data:`TELEMETRY`."""
    table_files(root, name)
    return root / "telemetry" / name


def table_files(root: Path, name: str) -> list[Path]:
    """The Parquet files of one table, their columns compared with :data:`TELEMETRY`."""
    path = root / "telemetry" / name
    files = sorted(path.glob("*.parquet")) if path.is_dir() else []
    if not files:
        raise ReplicaflowError(f"{path}: table '{name}' is missing (no Parquet files)")
    for file in files:
        try:
            found = pq.read_schema(file)
        except (OSError, ValueError) as exc:
            raise ReplicaflowError(f"{file}: not a readable Parquet file ({exc})") from None
        for field in TELEMETRY[name]:
            if field.name not in found.names:
                raise ReplicaflowError(f"{file}: column {name}.{field.name} is missing")
            got = found.field(field.name).type
            if _type_name(got) != _type_name(field.type):
                raise ReplicaflowError(f"{file}: column {name}.{field.name} has type {_type_name(got)}, "
                                       f"expected {_type_name(field.type)}")
    return files


def meta_row(meta: dict) -> tuple:
    version = KafkaVersion.parse(str(meta["kafka_version"]), bool(meta.get("kip542", False)))
    return (str(meta["cluster"]), str(meta["kafka_version"]), int(meta["start_ms"]), int(meta["end_ms"]),
            int(meta["scrape_interval_ms"]), version.urp_semantics == "kip352", version.min_isr_capped,
            [m.jmx for m in broker_metrics_for(version)])


def _metas(dirs: list[Path]) -> list[dict]:
    """The checked meta of every directory; two directories may not name one cluster."""
    metas = [read_meta(d) for d in dirs]
    seen: dict[str, Path] = {}
    for d, m in zip(dirs, metas, strict=True):
        if m["cluster"] in seen:
            raise ReplicaflowError(f"{d}: cluster name {quote(m['cluster'])} is also used by {seen[m['cluster']]}; "
                                   "clusters analyzed together need distinct names")
        seen[m["cluster"]] = d
    return metas


def check_telemetry(telemetry_dirs: Path | str | Sequence[Path | str], allow_empty: bool = False) -> list[dict]:
    """Every check that needs no Spark, run before Spark starts: each ``_meta.json``, distinct cluster
    names, the tables' columns and their rows (pipeline/checks.py). Returns the metas."""
    dirs = _as_dirs(telemetry_dirs)
    metas = _metas(dirs)
    files = {name: [table_files(d, name) for d in dirs] for name in TELEMETRY}
    check_integrity(dirs, metas, files, allow_empty)
    return metas


def read_telemetry(spark: SparkSession, telemetry_dirs: Path | str | Sequence[Path | str]) -> Telemetry:
    """Check every directory's meta and columns, then read each table of all of them as one DataFrame."""
    dirs = _as_dirs(telemetry_dirs)
    metas = _metas(dirs)
    paths = {name: [str(check_table(d, name)) for d in dirs] for name in TELEMETRY}
    tables = {name: spark.read.parquet(*(spark_path(p) for p in paths[name])).select(*schema.names) for name, schema in TELEMETRY.items()}
    meta = spark.createDataFrame([meta_row(m) for m in metas], META_SCHEMA)
    return Telemetry(tables=tables, meta=meta, metas=tuple(metas))
