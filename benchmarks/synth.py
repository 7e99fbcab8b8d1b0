"""Telemetry for the pipeline benchmark that would take too long to simulate: longer runs and fleets.

Both are made from one simulated hour, in the simulator's format (docs/design.md, telemetry), so
``analyze`` reads them like any simulator output (they pass telemetry/checks.py):

- ``repeat_hours``: N hours = the simulated hour laid end to end N times. Copy k has every ``ts_ms``
  shifted by k hours and every ``seq`` by k × (the table's largest seq + 1), so the change logs stay
  ordered and keyed; the partitions' offsets and sizes are shifted by k × their growth over the hour
  (the largest minus the smallest value of the partition in the hour), so logs keep growing instead
  of jumping back. The hour's initial change-log rows are replayed at each hour (the same state
  re-stated) except the brokers' first ``up`` rows, so brokers are not restarted every hour; the
  scenario's outages (and their ISR shrinks and expands) happen once per hour.
- ``rename_cluster``: the same hour under another cluster name (every table's ``cluster`` column
  and ``_meta.json``), so several copies form a fleet that one ``analyze`` call reads together.

``truth/`` is not written: the benchmark times ``analyze``, whose exactness the tests check on
simulated telemetry.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

HOUR_MS = 3_600_000
OFFSET_COLUMNS = ("log_end_offset", "high_watermark", "size_bytes")


def _tables(root: Path) -> list[str]:
    return sorted(p.name for p in (root / "telemetry").iterdir() if p.is_dir())


def _write(table: pa.Table, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, folder / "part-00000.parquet", row_group_size=1_000_000)


def _write_meta(src: Path, dst: Path, **changes) -> None:
    meta = json.loads((src / "telemetry" / "_meta.json").read_text())
    meta.update(changes)
    (dst / "telemetry" / "_meta.json").write_text(json.dumps(meta, indent=2, sort_keys=True))


def rename_cluster(src: Path, dst: Path, cluster: str) -> Path:
    """``src``'s telemetry as cluster ``cluster`` in ``dst``."""
    for name in _tables(src):
        table = pq.read_table(src / "telemetry" / name)
        idx = table.schema.get_field_index("cluster")
        column = pa.array([cluster] * table.num_rows, table.schema.field("cluster").type)
        _write(table.set_column(idx, table.schema.field("cluster"), column), dst / "telemetry" / name)
    _write_meta(src, dst, cluster=cluster, scenario=cluster)
    return dst


def _growth(offsets: pa.Table) -> dict[str, np.ndarray]:
    """Per row of ``offsets``: its partition's growth over the hour, for each offset column."""
    keys = offsets.select(["topic", "partition"])
    grouped = offsets.group_by(["topic", "partition"]).aggregate(
        [(c, agg) for c in OFFSET_COLUMNS for agg in ("min", "max")])
    growth = grouped.select(["topic", "partition"]).append_column(
        "g_row", pa.array(np.arange(grouped.num_rows)))
    row = keys.append_column("row", pa.array(np.arange(offsets.num_rows))).join(
        growth, ["topic", "partition"]).sort_by("row")["g_row"].to_numpy()
    return {c: (pc.subtract(grouped[f"{c}_max"], grouped[f"{c}_min"]).to_numpy(zero_copy_only=False)
                .astype(np.int64))[row] for c in OFFSET_COLUMNS}


def repeat_hours(src: Path, dst: Path, hours: int) -> Path:
    """``src`` (one simulated hour) laid end to end ``hours`` times into ``dst`` (module docstring)."""
    meta = json.loads((src / "telemetry" / "_meta.json").read_text())
    start = int(meta["start_ms"])
    if int(meta["end_ms"]) - start != HOUR_MS:
        raise ValueError(f"{src}: repeat_hours needs one hour of telemetry")
    for name in _tables(src):
        table = pq.read_table(src / "telemetry" / name)
        has_seq = "seq" in table.schema.names
        step = (int(pc.max(table["seq"]).as_py() or 0) + 1) if has_seq and table.num_rows else 0
        growth = _growth(table) if name == "replica_offsets" else {}
        for column, g in growth.items():
            table = table.append_column(f"growth_{column}", pa.array(g))
        copies = []
        for k in range(hours):
            part = table
            if not has_seq and k < hours - 1:  # a scrape at the hour's end is the next copy's first scrape
                part = part.filter(pc.less(part["ts_ms"], start + HOUR_MS))
            if k and name == "brokers":
                part = part.filter(pc.invert(pc.and_(pc.equal(part["ts_ms"], start), pc.equal(part["state"], "up"))))
            part = _shifted(part, "ts_ms", k * HOUR_MS)
            if has_seq:
                part = _shifted(part, "seq", k * step)
            for column in growth:
                part = _shifted(part, column, pc.multiply(part[f"growth_{column}"], k))
            copies.append(part.drop_columns([f"growth_{c}" for c in growth]))
        _write(pa.concat_tables(copies), dst / "telemetry" / name)
    _write_meta(src, dst, end_ms=start + hours * HOUR_MS)
    return dst


def _shifted(table: pa.Table, column: str, by) -> pa.Table:
    idx = table.schema.get_field_index(column)
    field = table.schema.field(column)
    values = pc.add(table[column], by if isinstance(by, pa.ChunkedArray) else pa.scalar(by, field.type))
    return table.set_column(idx, field, values)
