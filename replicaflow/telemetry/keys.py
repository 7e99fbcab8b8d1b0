"""No duplicated key in a telemetry table, found in bounded memory (docs/pipeline.md, "Input checks").

A sample table keyed by ``ts_ms`` first (``replica_offsets``: 144 M rows for 8 hours of a 50,000-partition
cluster) is read in batches: when its files, taken in ``ts_ms`` order, hold their rows in ``ts_ms`` order —
as the simulator and the synthesized benchmark inputs write them — two rows with one key lie in one run of
equal ``ts_ms``, so each batch is checked alone (the rows of its last instant wait for the next batch). Each
batch's key becomes one int64 per row (mixed radix over the batch's value ranges) and one sort finds equal
neighbours. Tables in any other order, and the change logs keyed by ``seq``, are grouped whole with Arrow,
as before: they are small, or they are not what our writers produce.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

BATCH_ROWS = 1 << 20
_RADIX_LIMIT = 1 << 62


class _Unordered(Exception):
    """The rows are not in ``ts_ms`` order: only a whole-table grouping can find a duplicate."""


def first_duplicate(files: Sequence[Path], keys: tuple[str, ...]) -> tuple[dict, int] | None:
    """The first duplicated key of the table in ``files`` (its values, and how many rows hold it), or None."""
    if keys[0] == "ts_ms" and len(keys) > 1:
        try:
            return _in_batches(files, keys)
        except _Unordered:
            pass
    table = pq.read_table(list(map(str, files)), columns=list(keys))
    return _grouped(table, keys)


def _grouped(table: pa.Table, keys: tuple[str, ...]) -> tuple[dict, int] | None:
    if not table.num_rows:
        return None
    counts = table.group_by(list(keys)).aggregate([([], "count_all")])
    dup = counts.filter(pc.greater(counts["count_all"], 1))
    if not dup.num_rows:
        return None
    return {k: dup[k][0].as_py() for k in keys}, dup["count_all"][0].as_py()


def column_statistics(md: pq.FileMetaData, name: str) -> list | None:
    """The statistics of column ``name`` in every non-empty row group of a file, or None when one lacks
    min/max (then the file must be read to know its values)."""
    col = md.schema.names.index(name)
    groups = [md.row_group(g) for g in range(md.num_row_groups) if md.row_group(g).num_rows]
    stats = [g.column(col).statistics for g in groups]
    return None if any(s is None or not s.has_min_max for s in stats) else stats


def _files_by_time(files: Sequence[Path]) -> list[Path]:
    """Files in ``ts_ms`` order by their statistics; unordered when ranges overlap or statistics are missing."""
    spans = []
    for file in files:
        stats = column_statistics(pq.ParquetFile(file).metadata, "ts_ms")
        if stats is None:
            raise _Unordered
        if stats:
            spans.append((min(s.min for s in stats), max(s.max for s in stats), file))
    spans.sort(key=lambda s: (s[0], s[1]))
    if any(later[0] < earlier[1] for earlier, later in pairwise(spans)):
        raise _Unordered
    return [file for _, _, file in spans]


def _in_batches(files: Sequence[Path], keys: tuple[str, ...]) -> tuple[dict, int] | None:
    """The batched search; a duplicate counts only once the whole table is known to be in order (a row
    out of order later could hold the same key)."""
    carry: pa.Table | None = None
    last_ts = None
    found = None
    for file in _files_by_time(files):
        strings = [f.name for f in pq.read_schema(file) if f.name in keys and pa.types.is_string(f.type)]
        for batch in pq.ParquetFile(file, read_dictionary=strings).iter_batches(batch_size=BATCH_ROWS,
                                                                                columns=list(keys)):
            if not batch.num_rows:
                continue
            if batch.column("ts_ms").null_count:
                raise _Unordered
            ts = batch.column("ts_ms").to_numpy()
            if (last_ts is not None and ts[0] < last_ts) or bool((ts[1:] < ts[:-1]).any()):
                raise _Unordered
            last_ts = ts[-1]
            if found:
                continue
            table = pa.Table.from_batches([batch])
            if carry is not None:
                table = pa.concat_tables([carry, table])
            cut = int(np.searchsorted(table.column("ts_ms").to_numpy(), last_ts))
            found = _in_chunk(table.slice(0, cut), keys)
            carry = table.slice(cut)
    return found or (_in_chunk(carry, keys) if carry is not None else None)


def _in_chunk(table: pa.Table, keys: tuple[str, ...]) -> tuple[dict, int] | None:
    """Duplicates among rows that fit in memory: one int64 per key, sorted; Arrow's grouping when the
    key's value ranges do not fit in 62 bits."""
    if table.num_rows < 2:
        return None
    if any(table.column(k).null_count for k in keys):
        return _grouped(table, keys)
    digits, radix = [], 1
    for k in keys:
        col = table.column(k)
        if pa.types.is_integer(col.type):
            values = col.to_numpy().astype(np.int64)
            low, high = int(values.min()), int(values.max())
            digits.append((values - low, high - low + 1))
        else:
            digits.append(_codes(col))
        radix *= digits[-1][1]
    if radix >= _RADIX_LIMIT:
        return _grouped(table, keys)
    combined = np.zeros(table.num_rows, dtype=np.int64)
    for values, size in digits:
        combined = combined * size + values
    ordered = np.sort(combined)
    equal = np.flatnonzero(ordered[1:] == ordered[:-1])
    if not len(equal):
        return None
    same = combined == ordered[equal[0]]
    row = int(np.argmax(same))
    return {k: table.column(k)[row].as_py() for k in keys}, int(same.sum())


def _codes(col: pa.ChunkedArray) -> tuple[np.ndarray, int]:
    """One integer per distinct value, the same across chunks (each chunk has its own dictionary)."""
    if not pa.types.is_dictionary(col.type):
        col = pc.dictionary_encode(col)
    ids: dict = {}
    parts = []
    for chunk in col.chunks:
        lookup = np.array([ids.setdefault(v, len(ids)) for v in chunk.dictionary.to_pylist()], dtype=np.int64)
        parts.append(lookup[chunk.indices.to_numpy(zero_copy_only=False)] if len(lookup) else
                     np.zeros(len(chunk), dtype=np.int64))
    return (np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)), max(len(ids), 1)
