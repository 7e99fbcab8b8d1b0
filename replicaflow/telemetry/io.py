"""Parquet I/O of the telemetry contract (docs/design.md, telemetry): a column-chunk writer, atomic directories, readers.

The simulator appends whole NumPy arrays per scrape; rows are only materialised once, when the
tables are built, so writing costs no Python work per row. Output is deterministic: the same rows
give byte-identical files.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from replicaflow.errors import ReplicaflowError
from replicaflow.telemetry.schema import TELEMETRY, TRUTH
from replicaflow.telemetry.textfile import read_json

GROUPS: dict[str, dict[str, pa.Schema]] = {"telemetry": TELEMETRY, "truth": TRUTH}
CHANGE_TABLES = frozenset(name for name, schema in TELEMETRY.items() if "seq" in schema.names)
PART_FILE = "part-00000.parquet"
META_FILE = "_meta.json"
METAS_FILE = "_metas.json"  # a fleet rebuilt from its logs: one meta per cluster (jobs/analyze.py)
META_MAX_BYTES = 16 * 2**20  # a few hundred bytes when written by simulate or the log rebuild


def write_parquet(table: pa.Table, path: Path) -> None:
    """One Parquet file, snappy, without writer-specific metadata that would vary between runs."""
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, compression="snappy", write_statistics=True, store_schema=False)


@contextmanager
def atomic_dir(final: Path) -> Iterator[Path]:
    """Yield a fresh temporary sibling of ``final``; on success it replaces ``final``, on error it is removed.

    A failed or killed run therefore leaves the previous ``final`` intact (docs/design.md, analysis).
    """
    final = Path(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.parent / f".{final.name}.tmp-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    old = final.parent / f".{final.name}.old-{os.getpid()}"
    if final.exists():
        os.replace(final, old)
    os.replace(tmp, final)
    shutil.rmtree(old, ignore_errors=True)


def _is_scalar(values) -> bool:
    return values is None or isinstance(values, (str, bytes, int, float, bool, np.generic))


def _column(values, dtype: pa.DataType, n: int) -> pa.Array:
    """One chunk of a column: NumPy arrays (masked arrays give nulls), sequences, or a scalar broadcast."""
    if isinstance(values, pa.Array):
        return values.cast(dtype)
    if isinstance(values, np.ma.MaskedArray):
        return pa.array(values.data.copy(), mask=np.ma.getmaskarray(values).copy(), type=dtype)
    if isinstance(values, np.ndarray):
        if values.dtype == object:
            return pa.array(values.tolist() if pa.types.is_list(dtype) else values, type=dtype)
        # a copy: pyarrow may wrap the NumPy buffer zero-copy, and the engine mutates its state arrays in place
        return pa.array(values.copy(), type=dtype)
    if _is_scalar(values):
        return pa.repeat(pa.scalar(values.item() if isinstance(values, np.generic) else values, type=dtype), n)
    return pa.array(list(values), type=dtype)


class TelemetryWriter:
    """Accumulates telemetry and truth rows of one cluster; ``write`` puts them on disk atomically."""

    def __init__(self, cluster: str):
        self.cluster = cluster
        self._seq = 0
        self._chunks: dict[tuple[str, str], list[pa.RecordBatch]] = {}

    def _append(self, group: str, table: str, ts_ms: int, columns: Mapping, n: int | None = None,
                seq: bool = False) -> None:
        schema = GROUPS[group].get(table) if group in GROUPS else None
        if schema is None:
            raise ValueError(f"unknown table {group}/{table}")
        given = set(columns)
        expected = set(schema.names) - {"cluster", "ts_ms", "seq"}
        if given != expected:
            raise ValueError(f"{group}/{table}: columns {sorted(given)} != {sorted(expected)}")
        if n is None:
            n = next((len(v) for v in columns.values() if not _is_scalar(v)), 1)
        if n == 0:
            return
        arrays = []
        for field in schema:
            if field.name == "cluster":
                arrays.append(pa.repeat(pa.scalar(self.cluster, type=field.type), n))
            elif field.name == "ts_ms":
                arrays.append(pa.repeat(pa.scalar(int(ts_ms), type=field.type), n))
            elif field.name == "seq":
                arrays.append(pa.array(np.arange(self._seq, self._seq + n, dtype=np.int64)))
            else:
                arrays.append(_column(columns[field.name], field.type, n))
        if seq:
            self._seq += n
        self._chunks.setdefault((group, table), []).append(pa.RecordBatch.from_arrays(arrays, schema=schema))

    def change(self, table: str, ts_ms: int, **values) -> None:
        """One row of a change table; ``seq`` is the next value of the writer's one counter."""
        if table not in CHANGE_TABLES:
            raise ValueError(f"{table} is not a change table")
        self._append("telemetry", table, ts_ms, {k: [v] for k, v in values.items()}, n=1, seq=True)

    def changes(self, table: str, ts_ms: int, columns: Mapping[str, Sequence | np.ndarray]) -> None:
        """Many change rows at one instant, in row order, with consecutive ``seq``."""
        if table not in CHANGE_TABLES:
            raise ValueError(f"{table} is not a change table")
        self._append("telemetry", table, ts_ms, columns, seq=True)

    def samples(self, group: str, table: str, ts_ms: int, columns: Mapping) -> None:
        """Many sampled rows at one instant (replica_offsets, traffic, truth tables); scalars broadcast."""
        if table in CHANGE_TABLES:
            raise ValueError(f"{table} is a change table")
        self._append(group, table, ts_ms, columns)

    def tables(self) -> dict[str, dict[str, pa.Table]]:
        """Every table of both groups, conformed to the schema, rows in append order (empty tables too)."""
        out: dict[str, dict[str, pa.Table]] = {}
        for group, schemas in GROUPS.items():
            out[group] = {}
            for name, schema in schemas.items():
                batches = self._chunks.get((group, name), [])
                out[group][name] = pa.Table.from_batches(batches, schema=schema).combine_chunks()
        return out

    def write(self, out: Path, meta: Mapping) -> None:
        """``out/telemetry/<table>/part-00000.parquet`` + ``_meta.json`` and ``out/truth/<table>/...``."""
        tables = self.tables()
        out = Path(out)
        meta_text = json.dumps(dict(meta), sort_keys=True, indent=2, default=_json_default) + "\n"
        # both groups are complete on disk before either replaces the previous run's
        with atomic_dir(out / "telemetry") as telemetry, atomic_dir(out / "truth") as truth:
            for group, tmp in (("telemetry", telemetry), ("truth", truth)):
                for name, table in tables[group].items():
                    write_parquet(table, tmp / name / PART_FILE)
            (telemetry / META_FILE).write_text(meta_text)


class DiscardingWriter(TelemetryWriter):
    """A writer for runs whose rows nobody reads (``plan``'s candidates read the engine's state instead): every
    row is dropped unbuilt, which spares the Arrow conversions and pyarrow's first-use import of pandas."""

    def _append(self, group: str, table: str, ts_ms: int, columns: Mapping, n: int | None = None,
                seq: bool = False) -> None:
        return None


def _json_default(value):
    """NumPy scalars and arrays in ``_meta.json`` as plain JSON numbers and lists."""
    if isinstance(value, (np.generic, np.ndarray)):
        return value.tolist()
    if isinstance(value, (set, frozenset, tuple)):
        return sorted(value) if isinstance(value, (set, frozenset)) else list(value)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def read_meta(root: Path) -> dict:
    """``root/telemetry/_meta.json``."""
    path = Path(root) / "telemetry" / META_FILE
    if not path.exists() and not path.is_symlink():
        raise ReplicaflowError(f"{path}: missing; expected the telemetry written by `replicaflow simulate`")
    meta = read_json(path, "telemetry meta file", utf16=False, max_bytes=META_MAX_BYTES)
    if not isinstance(meta, dict):
        raise ReplicaflowError(f"{path}: expected a JSON object")
    return meta


def read_metas(root: Path) -> list[dict]:
    """``root/telemetry/_metas.json``: a list of objects, one per cluster."""
    path = Path(root) / "telemetry" / METAS_FILE
    metas = read_json(path, "telemetry meta file", utf16=False, max_bytes=META_MAX_BYTES)
    if not isinstance(metas, list) or not metas or not all(isinstance(m, dict) for m in metas):
        raise ReplicaflowError(f"{path}: expected a JSON list of objects, one per cluster")
    return metas


def read_table(root: Path, group: str, name: str) -> pa.Table:
    """One table of ``root/<group>/<name>/`` with pyarrow."""
    path = Path(root) / group / name
    if not path.is_dir():
        raise ReplicaflowError(f"{path}: missing table '{name}'")
    try:
        return pq.read_table(path)
    except (OSError, pa.ArrowException) as exc:
        raise ReplicaflowError(f"{path}: unreadable Parquet ({exc})") from None
