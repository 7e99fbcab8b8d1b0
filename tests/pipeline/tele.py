"""Tiny hand-made telemetry directories for the pipeline tests (the contract of docs/design.md, telemetry).

Change rows get ``seq`` in the order they are given, across all tables, as the simulator does.
``table_rows`` reads a written table back for comparing two analyses.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from replicaflow.telemetry.schema import TELEMETRY

CHANGE_TABLES = ("assignments", "leaders", "isr", "configs", "brokers", "fetchers", "log_dirs")


class Tele:
    """Collects rows table by table; ``write(dir)`` lays out ``dir/telemetry/`` like the simulator."""

    def __init__(self, cluster: str = "c1", version: str = "3.7", start_ms: int = 0, end_ms: int = 60_000,
                 scrape_interval_ms: int = 10_000):
        self.meta = {"cluster": cluster, "scenario": cluster, "seed": 1, "kafka_version": version, "kip542": False,
                     "start_ms": start_ms, "end_ms": end_ms, "scrape_interval_ms": scrape_interval_ms,
                     "tick_ms": 1000, "replica_lag_time_max_ms": 30_000, "source": "test", "brokers": [],
                     "topics": []}
        self.rows: dict[str, list[dict]] = {t: [] for t in TELEMETRY}
        self.seq = 0

    def add(self, table: str, ts_ms: int, **values) -> Tele:
        row = {"cluster": self.meta["cluster"], "ts_ms": ts_ms, **values}
        if table in CHANGE_TABLES:
            self.seq += 1
            row["seq"] = self.seq
        self.rows[table].append(row)
        return self

    def broker(self, ts_ms: int, broker: int, state: str = "up") -> Tele:
        return self.add("brokers", ts_ms, broker=broker, state=state)

    def partition(self, ts_ms: int, topic: str, partition: int, replicas: list[int], leader: int, isr: list[int],
                  epoch: int = 0, adding: list[int] | None = None, removing: list[int] | None = None) -> Tele:
        self.add("assignments", ts_ms, topic=topic, partition=partition, replicas=replicas, adding=adding or [],
                 removing=removing or [])
        self.add("leaders", ts_ms, topic=topic, partition=partition, leader=leader, leader_epoch=epoch)
        return self.add("isr", ts_ms, topic=topic, partition=partition, isr=isr, leader_epoch=epoch)

    def offsets(self, ts_ms: int, topic: str, partition: int, rows: dict[int, tuple[int, int | None, int]]) -> Tele:
        """rows: broker → (log_end_offset, high_watermark or None, size_bytes)."""
        for b, (leo, hw, size) in rows.items():
            self.add("replica_offsets", ts_ms, topic=topic, partition=partition, broker=b, log_end_offset=leo,
                     high_watermark=hw, size_bytes=size)
        return self

    def write(self, root: Path) -> Path:
        tele = root / "telemetry"
        for name, schema in TELEMETRY.items():
            (tele / name).mkdir(parents=True, exist_ok=True)
            table = pa.Table.from_pylist(self.rows[name], schema=schema)
            pq.write_table(table, tele / name / "part-0.parquet")
        (tele / "_meta.json").write_text(json.dumps(self.meta))
        return root


def table_rows(path: Path) -> list[tuple]:
    """The rows of a Parquet table as tuples, in one order whatever the files' order (nulls allowed)."""
    return sorted((tuple(r.values()) for r in pq.read_table(path).to_pylist()), key=repr)
