"""Reading the telemetry contract (docs/design.md, telemetry) into Spark, with the input checks of issue 4.

Several telemetry directories are read into one DataFrame per table (every key carries
``cluster``), and a small per-cluster meta DataFrame carries what differs between Kafka versions
so the transformations never branch in Python on one version.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T

from replicaflow.errors import ReplicaflowError
from replicaflow.model.metrics import broker_metrics_for, unknown_metrics
from replicaflow.model.version import KafkaVersion
from replicaflow.telemetry import checks
from replicaflow.telemetry.checks import Checked
from replicaflow.telemetry.schema import TELEMETRY
from replicaflow.telemetry.spark import local_frame, read_contract, spark_path

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
    rows: int = 0  # rows of every table together, when the checks counted them (0: not known)


def _as_dirs(telemetry_dirs: Path | str | Sequence[Path | str]) -> list[Path]:
    if isinstance(telemetry_dirs, (str, Path)):
        return [Path(telemetry_dirs)]
    dirs = [Path(d) for d in telemetry_dirs]
    if not dirs:
        raise ReplicaflowError("analyze: no telemetry directory given")
    return dirs


def read_meta(root: Path) -> dict:
    """``<root>/telemetry/_meta.json``, checked (telemetry/checks.py)."""
    return checks.check_meta(Path(root))


def check_inputs(telemetry_dirs: Path | str | Sequence[Path | str], allow_empty: bool = False) -> list[Checked]:
    """Every input check that needs no Spark (telemetry/checks.py): call it before starting a session."""
    return checks.check_telemetry(_as_dirs(telemetry_dirs), allow_empty=allow_empty)


def meta_row(meta: dict) -> tuple:
    """One ``META_SCHEMA`` row. ``metrics`` lists the broker metrics of the cluster's release and controller,
    less those read from a table the provenance marks unknown (``model.metrics.unknown_metrics``): from logs
    alone MaxLag and the byte meters are not known, and written as 0 they would read "no lag", "nothing
    copied" in the table, the report and metrics.om alike."""
    version = KafkaVersion.parse(str(meta["kafka_version"]), bool(meta.get("kip542", False)))
    unknown = unknown_metrics(meta.get("provenance"))
    return (str(meta["cluster"]), str(meta["kafka_version"]), int(meta["start_ms"]), int(meta["end_ms"]),
            int(meta["scrape_interval_ms"]), version.urp_semantics == "kip352", version.min_isr_capped,
            [m.jmx for m in broker_metrics_for(version, meta.get("controller")) if m.jmx not in unknown])


def meta_frame(spark: SparkSession, metas: Sequence[dict]) -> DataFrame:
    """The per-cluster meta DataFrame (``META_SCHEMA``) of checked ``_meta.json`` contents."""
    return local_frame(spark, [meta_row(m) for m in metas], META_SCHEMA)


def read_telemetry(spark: SparkSession, telemetry_dirs: Path | str | Sequence[Path | str],
                   checked: Sequence[Checked] | None = None) -> Telemetry:
    """Read each table of every directory as one DataFrame (checked first unless ``checked`` is given)."""
    checked = list(checked) if checked is not None else check_inputs(telemetry_dirs, allow_empty=True)
    metas = [c.meta for c in checked]
    paths = {name: [spark_path(c.tables[name]) for c in checked] for name in TELEMETRY}
    tables = {name: read_contract(spark, schema, paths[name]) for name, schema in TELEMETRY.items()}
    meta = meta_frame(spark, metas)
    return Telemetry(tables=tables, meta=meta, metas=tuple(metas), rows=sum(c.rows for c in checked))
