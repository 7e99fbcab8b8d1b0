"""Telemetry integrity, checked with pyarrow before Spark starts.

Telemetry that passes the schema check can still give wrong answers with exit status 0: a
``_meta.json`` naming another cluster than its rows empties every table (an all-zero, healthy
summary), a duplicated row doubles the replication-bytes counters, an absurd ``end_ms`` or a
``scrape_interval_ms`` of 0 makes a scrape grid the JVM cannot hold. Each check here refuses such
input with one sentence naming the file or table and its first offending row.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from replicaflow.errors import ReplicaflowError, quote
from replicaflow.model.version import KafkaVersion

MAX_MS = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z, the last instant a log line can carry
MAX_SCRAPES = 10_000_000      # scrapes per cluster: the grid Spark and the report build
INT_KEYS = ("start_ms", "end_ms", "scrape_interval_ms")
POSITIVE_OPTIONAL = ("tick_ms", "replica_lag_time_max_ms")

# The columns that identify one row of each telemetry table (besides ``cluster``): a change row by
# its instant and the writer's sequence number, a sample by its instant and what was sampled.
KEYS: dict[str, tuple[str, ...]] = {
    "assignments": ("ts_ms", "seq"), "leaders": ("ts_ms", "seq"), "isr": ("ts_ms", "seq"),
    "configs": ("ts_ms", "seq"), "brokers": ("ts_ms", "seq"), "fetchers": ("ts_ms", "seq"),
    "replica_offsets": ("ts_ms", "topic", "partition", "broker"),
    "traffic": ("ts_ms", "broker", "name"),
}
NOT_EMPTY = "assignments"  # without a partition there is nothing to analyze


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_meta(path: Path, meta: dict) -> dict:
    """``_meta.json``: the keys the pipeline needs, their types and ranges."""
    cluster = meta.get("cluster")
    if not isinstance(cluster, str) or not cluster:
        raise ReplicaflowError(f"{path}: 'cluster' must be a non-empty string, found {quote(cluster)}")
    if not isinstance(meta.get("kafka_version"), str):
        raise ReplicaflowError(f"{path}: 'kafka_version' must be a string such as '3.7', found "
                               f"{quote(meta.get('kafka_version'))}")
    for key in INT_KEYS:
        if not _is_int(meta[key]):
            raise ReplicaflowError(f"{path}: '{key}' must be an integer, found {quote(meta[key])}")
    start, end, step = meta["start_ms"], meta["end_ms"], meta["scrape_interval_ms"]
    if not 0 <= start <= MAX_MS:
        raise ReplicaflowError(f"{path}: 'start_ms' {start} is outside 0..{MAX_MS} (years 1970..9999)")
    if not start <= end <= MAX_MS:
        raise ReplicaflowError(f"{path}: 'end_ms' {end} must be between start_ms ({start}) and {MAX_MS}")
    if step <= 0:
        raise ReplicaflowError(f"{path}: 'scrape_interval_ms' must be > 0, found {step}")
    if (end - start) // step + 1 > MAX_SCRAPES:
        raise ReplicaflowError(f"{path}: {(end - start) // step + 1} scrapes from start_ms to end_ms every "
                               f"{step} ms; at most {MAX_SCRAPES} are analyzed")
    for key in POSITIVE_OPTIONAL:
        if key in meta and not (_is_int(meta[key]) and meta[key] > 0):
            raise ReplicaflowError(f"{path}: '{key}' must be a positive integer, found {quote(meta[key])}")
    if "brokers" in meta and not (isinstance(meta["brokers"], list) and all(_is_int(b) for b in meta["brokers"])):
        raise ReplicaflowError(f"{path}: 'brokers' must be a list of broker ids, found {quote(meta['brokers'])}")
    KafkaVersion.parse(meta["kafka_version"], bool(meta.get("kip542", False)))
    return meta


def _read(files: Sequence[Path], columns: list[str]) -> pa.Table:
    return pa.concat_tables([pq.read_table(f, columns=columns) for f in files])


def _row_text(table: pa.Table, i: int, columns: Sequence[str]) -> str:
    row = table.slice(i, 1).to_pylist()[0]
    return ", ".join(f"{c}={quote(row[c]) if isinstance(row[c], str) else row[c]}" for c in columns)


def check_rows(table_dir: Path, files: Sequence[Path], name: str, cluster: str, allow_empty: bool) -> None:
    """One table of one cluster: every row names the meta's cluster, no key twice, rows where needed."""
    keys = list(KEYS[name])
    data = _read(files, ["cluster", *keys])
    if data.num_rows == 0:
        if name == NOT_EMPTY and not allow_empty:
            raise ReplicaflowError(f"{table_dir}: table '{name}' has no rows, so there is no partition to analyze; "
                                   "pass --allow-empty to analyze empty telemetry anyway")
        return
    other = pc.not_equal(data["cluster"], pa.scalar(cluster)).combine_chunks()
    other = pc.or_kleene(other, pc.is_null(data["cluster"]).combine_chunks())
    if pc.any(other).as_py():
        i = pc.index(other, True).as_py()
        raise ReplicaflowError(f"{table_dir}: row {i + 1} of table '{name}' has cluster "
                               f"{quote(data['cluster'][i].as_py())}, but _meta.json names {quote(cluster)}; "
                               "one directory holds one cluster")
    _check_unique(table_dir, name, data.drop(["cluster"]), keys)


def _check_unique(table_dir: Path, name: str, data: pa.Table, keys: list[str]) -> None:
    """No two rows with the same key; the sentence names the first row that repeats an earlier one."""
    indexed = data.append_column("_row", pa.array(np.arange(data.num_rows, dtype=np.int64)))
    groups = indexed.group_by(keys, use_threads=False).aggregate([("_row", "count"), ("_row", "min")])
    dup = groups.filter(pc.greater(groups["_row_count"], 1))
    if dup.num_rows == 0:
        return
    first = dup.take([pc.index(dup["_row_min"], pc.min(dup["_row_min"])).as_py()])
    mask = np.ones(data.num_rows, dtype=bool)
    for k in keys:
        mask &= pc.equal(data[k], first[k][0]).to_numpy(zero_copy_only=False)
    a, b = np.flatnonzero(mask)[:2]
    raise ReplicaflowError(f"{table_dir}: row {b + 1} of table '{name}' repeats row {a + 1} "
                           f"({_row_text(data, int(a), keys)}); each key may appear once, or counters double")


def check_integrity(dirs: Sequence[Path], metas: Sequence[dict], tables: dict[str, list[list[Path]]],
                    allow_empty: bool = False) -> None:
    """Every table of every directory (``tables[name][i]``: the Parquet files of ``dirs[i]``)."""
    for i, (root, meta) in enumerate(zip(dirs, metas, strict=True)):
        for name in KEYS:
            check_rows(root / "telemetry" / name, tables[name][i], name, str(meta["cluster"]), allow_empty)
