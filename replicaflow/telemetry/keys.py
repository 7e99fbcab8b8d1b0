"""No duplicated key in a telemetry table, found in bounded memory (docs/pipeline.md, "Input checks").

A sample table keyed by ``ts_ms`` first (``replica_offsets``: 144 M rows for 8 hours of a 50,000-partition
cluster) is read in batches: when its files, taken in ``ts_ms`` order, hold their rows in ``ts_ms`` order —
as the simulator and the synthesized benchmark inputs write them — two rows with one key lie in one run of
equal ``ts_ms``, so each batch is checked alone (the rows of its last instant wait for the next batch). Each
batch's key becomes one int64 per row (mixed radix over the batch's value ranges). In the writers' order
(every key column but the last sorted) equal keys can only be a few rows apart, and a few vectorized
comparisons find them; in any other order one sort finds equal neighbours. Tables in any other order, and
the change logs keyed by ``seq``, are grouped whole with Arrow, as before: they are small, or they are not
what our writers produce.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from itertools import groupby, pairwise
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

BATCH_ROWS = 1 << 20
PARALLEL_MIN_ROWS = 1 << 23  # below, one thread: the slices' threads would cost more than they save
SLICES = os.cpu_count() or 1
MAX_RUN = 16  # longer runs of equal leading key columns are sorted instead of compared pairwise
_RADIX_LIMIT = 1 << 62
Seen = Callable[[pa.RecordBatch], None]


class _Unordered(Exception):
    """The rows are not in ``ts_ms`` order: only a whole-table grouping can find a duplicate."""


def first_duplicate(files: Sequence[Path], keys: tuple[str, ...], each: Seen | None = None) -> tuple[dict, int] | None:
    """The first duplicated key of the table in ``files`` (its values, and how many rows hold it), or None.
    ``each`` sees every row's key columns, in batches (some rows twice), for checks that ride on this read
    (``references.Watch``)."""
    if keys[0] == "ts_ms" and len(keys) > 1:
        try:
            return _in_batches(files, keys, each)
        except _Unordered:
            pass
    table = pq.read_table(list(map(str, files)), columns=list(keys))
    if each is not None:
        for batch in table.to_batches():
            each(batch)
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


@dataclass(frozen=True)
class _Group:
    """One non-empty row group and the range of its ``ts_ms`` statistics."""

    file: Path
    index: int
    rows: int
    first_ts: int
    last_ts: int


@dataclass(frozen=True)
class _Slice:
    """Contiguous row groups checked by one thread. The rows of an instant that two slices share belong to the
    earlier one: it reads on into ``after`` while they last, and the later one skips them."""

    groups: list[_Group]
    after: list[_Group]
    before_ts: int | None  # the previous slice's last instant: no row here may be earlier
    shared_before: bool  # this slice's first rows at ``before_ts`` belong to the previous slice
    shared_after: bool  # the next slice's first instant is this slice's last one: read on while it lasts


def _groups_by_time(files: Sequence[Path]) -> list[_Group]:
    """The non-empty row groups, files in ``ts_ms`` order by their statistics; unordered when the files' ranges
    overlap or statistics are missing."""
    spans = []
    for file in files:
        md = pq.ParquetFile(file).metadata
        stats = column_statistics(md, "ts_ms")
        if stats is None:
            raise _Unordered
        groups = [g for g in range(md.num_row_groups) if md.row_group(g).num_rows]
        if stats:
            spans.append([_Group(file, g, md.row_group(g).num_rows, s.min, s.max) for g, s in zip(groups, stats,
                                                                                                  strict=True)])
    spans.sort(key=lambda gs: (min(g.first_ts for g in gs), max(g.last_ts for g in gs)))
    if any(min(g.first_ts for g in later) < max(g.last_ts for g in earlier) for earlier, later in pairwise(spans)):
        raise _Unordered
    return [g for gs in spans for g in gs]


def _slices(groups: list[_Group], parts: int) -> list[_Slice]:
    """``groups`` cut into at most ``parts`` slices of about as many rows."""
    total = sum(g.rows for g in groups)
    cuts, seen = [], 0
    for i, g in enumerate(groups[:-1]):
        seen += g.rows
        if seen * parts >= total * (len(cuts) + 1):
            cuts.append(i + 1)
    bounds = list(pairwise([0, *cuts, len(groups)]))
    out = []
    for lo, hi in bounds:
        before = groups[lo - 1].last_ts if lo else None
        out.append(_Slice(groups[lo:hi], groups[hi:], before,
                          shared_before=bool(lo) and groups[lo].first_ts == before,
                          shared_after=hi < len(groups) and groups[hi].first_ts == groups[hi - 1].last_ts))
    return out


def _batches(groups: list[_Group], keys: tuple[str, ...]) -> Iterator[pa.RecordBatch]:
    """The key columns of ``groups``, in batches of at most ``BATCH_ROWS`` rows (strings as dictionaries)."""
    for file, members in groupby(groups, key=lambda g: g.file):
        strings = [f.name for f in pq.read_schema(file) if f.name in keys and pa.types.is_string(f.type)]
        yield from pq.ParquetFile(file, read_dictionary=strings).iter_batches(
            batch_size=BATCH_ROWS, row_groups=[g.index for g in members], columns=list(keys))


def _times(batch: pa.RecordBatch) -> np.ndarray:
    if batch.column("ts_ms").null_count:
        raise _Unordered
    return batch.column("ts_ms").to_numpy()


def _leading(ts: np.ndarray, value: int) -> int:
    """How many of the first instants ``ts`` are ``value``."""
    other = ts != value
    return int(np.argmax(other)) if bool(other.any()) else len(ts)


def _slice_rows(part: _Slice, keys: tuple[str, ...]) -> Iterator[pa.RecordBatch]:
    """The rows a slice owns: its groups' rows less the leading ones of a shared first instant, then the
    next groups' leading rows of a shared last instant."""
    skipping = part.shared_before
    for batch in _batches(part.groups, keys):
        if skipping and batch.num_rows:
            n = _leading(_times(batch), part.before_ts)
            batch, skipping = batch.slice(n), n == batch.num_rows
        yield batch
    if part.shared_after:
        for batch in _batches(part.after, keys):
            n = _leading(_times(batch), part.groups[-1].last_ts)
            yield batch.slice(0, n)
            if n < batch.num_rows:
                break


def _in_batches(files: Sequence[Path], keys: tuple[str, ...], each: Seen | None = None) -> tuple[dict, int] | None:
    """The batched search, in slices of row groups checked side by side on every core from
    ``PARALLEL_MIN_ROWS`` rows (Arrow and NumPy release the GIL: 8 h of the benchmark's replica_offsets,
    144 M rows in one file, took 2.9 s on one thread and 1.5 s in two slices on 2 cores).
    A duplicate counts only once the whole table is known to be in order (a row out of order later could
    hold the same key)."""
    groups = _groups_by_time(files)
    parts = SLICES if sum(g.rows for g in groups) >= PARALLEL_MIN_ROWS else 1
    slices = _slices(groups, parts) if groups else []
    if len(slices) <= 1:
        return _in_slice(slices[0], keys, each) if slices else None
    with ThreadPoolExecutor(max_workers=len(slices), thread_name_prefix="replicaflow-keys") as pool:
        found = list(pool.map(partial(_in_slice, keys=keys, each=each), slices))
    return next((f for f in found if f), None)


def _in_slice(part: _Slice, keys: tuple[str, ...], each: Seen | None = None) -> tuple[dict, int] | None:
    carry: pa.Table | None = None
    last_ts = part.before_ts
    found = None
    for batch in _slice_rows(part, keys):
        if not batch.num_rows:
            continue
        ts = _times(batch)
        if (last_ts is not None and ts[0] < last_ts) or bool((ts[1:] < ts[:-1]).any()):
            raise _Unordered
        last_ts = ts[-1]
        if each is not None:
            each(batch)
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
    key's value ranges do not fit in 62 bits.

    Rows in the order our writers use (sorted by every key column but the last, a partition's replicas
    in replica order) need no sort: two rows with one key then lie in one short run of equal leading
    columns, so comparing each row with the few before it is enough."""
    if table.num_rows < 2:
        return None
    if any(table.column(k).null_count for k in keys):
        return _grouped(table, keys)
    digits, radix = [], 1
    for k in keys:
        col = table.column(k)
        if pa.types.is_integer(col.type):
            values = col.to_numpy()
            low, high = int(values.min()), int(values.max())
            digits.append((values, low, high - low + 1))
        else:
            codes, size = _codes(col)
            digits.append((codes, 0, size))
        radix *= digits[-1][2]
    if radix >= _RADIX_LIMIT:
        return _grouped(table, keys)
    leading = np.zeros(table.num_rows, dtype=np.int64)
    for digit in digits[:-1]:
        _shift_in(leading, *digit)
    combined = _shift_in(leading.copy(), *digits[-1])
    if _no_duplicate_in_runs(leading, combined):
        return None
    ordered = np.sort(combined)
    equal = np.flatnonzero(ordered[1:] == ordered[:-1])
    if not len(equal):
        return None
    same = combined == ordered[equal[0]]
    row = int(np.argmax(same))
    return {k: table.column(k)[row].as_py() for k in keys}, int(same.sum())


def _shift_in(acc: np.ndarray, values: np.ndarray, low: int, size: int) -> np.ndarray:
    """``acc`` × ``size`` + (``values`` − ``low``), in place: one more digit of the mixed-radix key."""
    acc *= size
    acc += values
    acc -= low
    return acc


def _no_duplicate_in_runs(leading: np.ndarray, combined: np.ndarray) -> bool:
    """True when ``leading`` never decreases, its runs of equal values are shorter than ``MAX_RUN`` rows,
    and no row's ``combined`` key equals one of the rows before it in its run: then no key repeats. False
    says only that a sort must decide."""
    if not bool((leading[1:] >= leading[:-1]).all()):
        return False
    for d in range(1, MAX_RUN):
        if not bool((leading[d:] == leading[:-d]).any()):
            return True  # every run is shorter than d, and nearer rows were compared
        if bool((combined[d:] == combined[:-d]).any()):
            return False
    return False


def _codes(col: pa.ChunkedArray) -> tuple[np.ndarray, int]:
    """One integer per distinct value, the same across chunks (each chunk has its own dictionary), in the
    values' order: rows sorted by the value have non-decreasing codes."""
    if not pa.types.is_dictionary(col.type):
        col = pc.dictionary_encode(col)
    chunks = col.chunks
    if not chunks:
        return np.zeros(0, dtype=np.int64), 1
    distinct = pc.unique(pa.concat_arrays([c.dictionary for c in chunks]))
    distinct = distinct.take(pc.sort_indices(distinct))
    parts = [pc.index_in(c.dictionary, value_set=distinct).to_numpy(zero_copy_only=False).astype(np.int64)
             [c.indices.to_numpy(zero_copy_only=False)] for c in chunks]
    return np.concatenate(parts), max(len(distinct), 1)
