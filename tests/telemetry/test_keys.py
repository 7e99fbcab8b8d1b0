"""Duplicated keys found in bounded memory (telemetry/keys.py): the batched path agrees with grouping the
whole table, whatever the batch size, the file split and the row order."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import given, settings
from hypothesis import strategies as st

from replicaflow.telemetry import keys
from replicaflow.telemetry.keys import first_duplicate

KEY = ("ts_ms", "topic", "partition", "broker")


def _table(rows: list[tuple]) -> pa.Table:
    cols = list(zip(*rows, strict=True)) if rows else [[], [], [], []]
    return pa.table({"ts_ms": pa.array(cols[0], pa.int64()), "topic": pa.array(cols[1], pa.string()),
                     "partition": pa.array(cols[2], pa.int32()), "broker": pa.array(cols[3], pa.int32()),
                     "size_bytes": pa.array([7] * len(rows), pa.int64())})


def _write(tmp_path, parts: list[list[tuple]], row_group: int = 3) -> list:
    files = []
    for i, rows in enumerate(parts):
        f = tmp_path / f"part-{i:05d}.parquet"
        pq.write_table(_table(rows), f, row_group_size=row_group)
        files.append(f)
    return files


def test_a_duplicate_across_a_batch_boundary_is_found_with_its_count(tmp_path, monkeypatch):
    """The rows of one instant split over two batches meet: the last instant of a batch waits for the next."""
    monkeypatch.setattr(keys, "BATCH_ROWS", 4)
    rows = [(1000, "a", 0, 1), (1000, "a", 0, 2), (2000, "a", 0, 1), (2000, "a", 0, 2), (2000, "b", 3, 1),
            (2000, "a", 0, 1), (3000, "a", 0, 1)]
    found = first_duplicate(_write(tmp_path, [rows]), KEY)
    assert found == ({"ts_ms": 2000, "topic": "a", "partition": 0, "broker": 1}, 2)


def test_the_same_replica_at_other_instants_is_not_a_duplicate(tmp_path, monkeypatch):
    monkeypatch.setattr(keys, "BATCH_ROWS", 2)
    rows = [(t, "a", p, b) for t in (0, 30_000, 60_000) for p in range(3) for b in (1, 2)]
    assert first_duplicate(_write(tmp_path, [rows[:7], rows[7:]]), KEY) is None


def test_rows_in_writer_order_are_decided_without_a_sort():
    """Runs of equal leading columns (a partition's replicas at one scrape) are compared pairwise; what that
    cannot decide — leading columns out of order, or a run of ``MAX_RUN`` rows — is left to the sort."""
    leading = np.array([0, 0, 0, 1, 1, 1, 3, 3, 3])
    combined = leading * 10 + np.array([5, 1, 2, 1, 2, 5, 2, 5, 1])
    assert keys._no_duplicate_in_runs(leading, combined)
    assert not keys._no_duplicate_in_runs(leading, leading * 10 + np.array([5, 1, 5, 1, 2, 5, 2, 5, 1]))
    assert not keys._no_duplicate_in_runs(leading[::-1].copy(), combined[::-1].copy())
    run = np.zeros(keys.MAX_RUN, dtype=np.int64)
    assert not keys._no_duplicate_in_runs(run, np.arange(keys.MAX_RUN))
    assert keys._no_duplicate_in_runs(run[1:], np.arange(keys.MAX_RUN - 1))


def test_files_out_of_time_order_are_grouped_whole(tmp_path):
    """Overlapping files (any writer's order) still find the duplicate, through Arrow's grouping."""
    files = _write(tmp_path, [[(5000, "a", 0, 1), (1000, "a", 0, 1)], [(1000, "a", 0, 1)]])
    assert first_duplicate(files, KEY) == ({"ts_ms": 1000, "topic": "a", "partition": 0, "broker": 1}, 2)


_rows = st.lists(st.tuples(st.sampled_from([0, 1000, 2000]), st.sampled_from(["a", "b", "c"]),
                           st.integers(0, 2), st.integers(1, 3)), max_size=40)


def test_a_duplicate_on_the_instant_two_slices_share_is_found(tmp_path, monkeypatch):
    """Row groups are checked in slices side by side; the rows of an instant cut by a slice boundary are
    checked together, by the earlier slice, and a row earlier than the previous slice's last is out of order."""
    monkeypatch.setattr(keys, "PARALLEL_MIN_ROWS", 0)
    monkeypatch.setattr(keys, "SLICES", 3)
    rows = [(1000, "a", 0, 1), (1000, "a", 0, 2), (2000, "a", 0, 1), (2000, "a", 0, 2), (2000, "b", 0, 1),
            (2000, "a", 0, 1), (3000, "a", 0, 1), (3000, "a", 0, 2), (4000, "a", 0, 1)]
    files = _write(tmp_path, [rows], row_group=2)
    assert [(len(s.groups), s.shared_before, s.shared_after) for s in keys._slices(keys._groups_by_time(files), 3)] \
        == [(2, False, True), (1, True, False), (2, False, False)]  # the second slice is all the first one's
    assert first_duplicate(files, KEY) == ({"ts_ms": 2000, "topic": "a", "partition": 0, "broker": 1}, 2)
    assert first_duplicate(_write(tmp_path, [rows[:5] + rows[6:]], row_group=2), KEY) is None
    late = rows[:4] + [(500, "b", 1, 1)] + rows[6:]  # out of order inside the second slice: grouped whole
    assert first_duplicate(_write(tmp_path, [late + [(500, "b", 1, 1)]], row_group=2), KEY) == (
        {"ts_ms": 500, "topic": "b", "partition": 1, "broker": 1}, 2)


@settings(max_examples=150, deadline=None)
@given(rows=_rows, batch=st.integers(1, 9), split=st.integers(0, 40), order=st.sampled_from(["any", "ts", "writer"]),
       slices=st.integers(1, 5), row_group=st.integers(1, 4))
def test_batched_agrees_with_grouping_the_whole_table(tmp_path_factory, rows, batch, split, order, slices, row_group):
    """``writer``: the simulator's order, sorted by every key column but the broker (replicas in replica order).
    Checked in ``slices`` slices of row groups side by side."""
    if order != "any":
        rows = sorted(rows, key=lambda r: r[:1] if order == "ts" else r[:3])
    tmp = tmp_path_factory.mktemp("keys")
    files = _write(tmp, [rows[:split], rows[split:]], row_group=row_group)
    old = keys.BATCH_ROWS, keys.SLICES, keys.PARALLEL_MIN_ROWS
    keys.BATCH_ROWS, keys.SLICES, keys.PARALLEL_MIN_ROWS = batch, slices, 0
    try:
        found = first_duplicate(files, KEY)
    finally:
        keys.BATCH_ROWS, keys.SLICES, keys.PARALLEL_MIN_ROWS = old
    counts: dict = {}
    for r in rows:
        counts[r] = counts.get(r, 0) + 1
    dups = {r: n for r, n in counts.items() if n > 1}
    if not dups:
        assert found is None
    else:
        key, n = found
        assert dups[tuple(key[k] for k in KEY)] == n
