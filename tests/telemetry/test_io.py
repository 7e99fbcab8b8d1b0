"""Telemetry I/O: round trip through Parquet, byte-identical output, atomic directories, one seq counter."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from replicaflow.errors import ReplicaflowError
from replicaflow.telemetry.io import (
    TelemetryWriter,
    atomic_dir,
    read_meta,
    read_table,
    write_parquet,
)
from replicaflow.telemetry.schema import TELEMETRY, TRUTH

META = {"cluster": "c1", "scenario": "s", "seed": 3, "kafka_version": "3.7", "kip542": False, "start_ms": 0,
        "end_ms": 20_000, "scrape_interval_ms": 10_000, "tick_ms": 100, "replica_lag_time_max_ms": 30_000,
        "source": "simulator", "brokers": [1, 2, 3],
        "topics": [{"name": "orders", "partitions": 2, "replication_factor": 3}]}


def _writer() -> TelemetryWriter:
    w = TelemetryWriter("c1")
    w.changes("brokers", 0, {"broker": np.array([1, 2, 3], dtype=np.int32), "state": ["up", "up", "up"]})
    w.changes("assignments", 0, {"topic": ["orders", "orders"], "partition": [0, 1],
                                 "replicas": [[1, 2, 3], [2, 3, 1]], "adding": [[], []], "removing": [[], []],
                                 "log_dirs": [["/d"] * 3, ["/d"] * 3]})
    w.change("isr", 0, topic="orders", partition=0, isr=[1, 2, 3], leader_epoch=0, elr=[], last_known_elr=[])
    w.change("configs", 0, entity_type="broker", entity="<default>", name="follower.replication.throttled.rate",
             value=None)
    for ts in (0, 10_000):
        w.samples("telemetry", "replica_offsets", ts, {
            "topic": np.array(["orders"] * 6, dtype=object), "partition": np.repeat(np.arange(2), 3),
            "broker": np.tile(np.array([1, 2, 3]), 2), "log_end_offset": np.arange(6) + ts,
            "high_watermark": np.ma.masked_array(np.arange(6), mask=[0, 0, 0, 1, 1, 1]), "size_bytes": 1024})
        w.samples("truth", "broker_metrics", ts, {"broker": [1, 2, 3], "name": "UnderReplicatedPartitions",
                                                  "value": np.array([0.0, 1.0, 2.0])})
    w.change("isr", 5_000, topic="orders", partition=0, isr=[1, 2], leader_epoch=0, elr=[], last_known_elr=[])
    return w


def test_tables_conform_and_keep_append_order():
    tables = _writer().tables()
    assert set(tables) == {"telemetry", "truth"}
    assert set(tables["telemetry"]) == set(TELEMETRY) and set(tables["truth"]) == set(TRUTH)
    for group, schemas in (("telemetry", TELEMETRY), ("truth", TRUTH)):
        for name, schema in schemas.items():
            assert tables[group][name].schema.equals(schema), name
    offsets = tables["telemetry"]["replica_offsets"].to_pydict()
    assert offsets["ts_ms"] == [0] * 6 + [10_000] * 6
    assert offsets["log_end_offset"][6:] == list(range(10_000, 10_006))
    assert offsets["high_watermark"][:6] == [0, 1, 2, None, None, None]
    assert offsets["size_bytes"] == [1024] * 12 and set(offsets["cluster"]) == {"c1"}
    assert tables["truth"]["broker_metrics"].column("value").to_pylist() == [0.0, 1.0, 2.0] * 2
    assert tables["telemetry"]["traffic"].num_rows == 0
    assert tables["telemetry"]["configs"].to_pylist()[0]["value"] is None


def test_seq_is_one_counter_strictly_increasing_in_call_order():
    tables = _writer().tables()["telemetry"]
    seqs = {name: tables[name].column("seq").to_pylist() for name in ("brokers", "assignments", "isr", "configs")}
    assert seqs == {"brokers": [0, 1, 2], "assignments": [3, 4], "isr": [5, 7], "configs": [6]}
    assert "seq" not in tables["replica_offsets"].schema.names


def test_round_trip_and_meta(tmp_path: Path):
    w = _writer()
    w.write(tmp_path, META)
    expected = w.tables()
    for group in ("telemetry", "truth"):
        for name, table in expected[group].items():
            assert (tmp_path / group / name / "part-00000.parquet").is_file()
            assert read_table(tmp_path, group, name).equals(table), name
    assert read_meta(tmp_path) == META
    text = (tmp_path / "telemetry" / "_meta.json").read_text()
    assert text == json.dumps(META, sort_keys=True, indent=2) + "\n"


def test_empty_tables_readable_with_schema(tmp_path: Path):
    TelemetryWriter("empty").write(tmp_path, {"cluster": "empty", "brokers": np.array([1, 2])})
    for name, schema in TELEMETRY.items():
        table = read_table(tmp_path, "telemetry", name)
        assert table.num_rows == 0 and table.schema.equals(schema)
    assert read_table(tmp_path, "truth", "partition_metrics").schema.equals(TRUTH["partition_metrics"])
    assert read_meta(tmp_path)["brokers"] == [1, 2]


def test_output_is_byte_identical(tmp_path: Path):
    _writer().write(tmp_path / "a", META)
    _writer().write(tmp_path / "b", META)
    files = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    assert len(files) == len(TELEMETRY) + len(TRUTH) + 1
    for rel in files:
        assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes(), rel
    table = _writer().tables()["telemetry"]["replica_offsets"]
    write_parquet(table, tmp_path / "x.parquet")
    write_parquet(table, tmp_path / "y.parquet")
    assert (tmp_path / "x.parquet").read_bytes() == (tmp_path / "y.parquet").read_bytes()


def test_rewrite_replaces_previous_output(tmp_path: Path):
    _writer().write(tmp_path, META)
    TelemetryWriter("c1").write(tmp_path, {**META, "seed": 4})
    assert read_table(tmp_path, "telemetry", "isr").num_rows == 0 and read_meta(tmp_path)["seed"] == 4
    assert sorted(p.name for p in tmp_path.iterdir()) == ["telemetry", "truth"]


def test_atomic_dir_keeps_previous_when_body_raises(tmp_path: Path):
    final = tmp_path / "out"
    with atomic_dir(final) as tmp:
        (tmp / "v").write_text("1")
    assert (final / "v").read_text() == "1"
    with pytest.raises(RuntimeError, match="boom"), atomic_dir(final) as tmp:
        (tmp / "v").write_text("2")
        (tmp / "partial").write_text("x")
        raise RuntimeError("boom")
    assert (final / "v").read_text() == "1" and not (final / "partial").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    with atomic_dir(final) as tmp:
        assert tmp.parent == tmp_path and tmp.name.startswith(".out.tmp-") and not any(tmp.iterdir())
        (tmp / "v").write_text("3")
    assert (final / "v").read_text() == "3" and sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_unknown_table_or_column_is_a_programming_error():
    w = TelemetryWriter("c1")
    with pytest.raises(ValueError, match="unknown table"):
        w.samples("telemetry", "nope", 0, {"a": [1]})
    with pytest.raises(ValueError, match="columns"):
        w.samples("truth", "broker_metrics", 0, {"broker": [1], "name": "x", "value": [1.0], "extra": [1]})
    with pytest.raises(ValueError, match="columns"):
        w.change("brokers", 0, broker=1)
    with pytest.raises(ValueError, match="not a change table"):
        w.change("traffic", 0, broker=1, name="x", bytes=1)
    with pytest.raises(ValueError, match="is a change table"):
        w.samples("telemetry", "isr", 0, {"topic": ["t"], "partition": [0], "isr": [[1]], "leader_epoch": [0]})
    with pytest.raises(ValueError):
        w.samples("truth", "broker_metrics", 0, {"broker": [1, 2], "name": "x", "value": [1.0]})


def test_readers_name_the_missing_path(tmp_path: Path):
    with pytest.raises(ReplicaflowError, match=rf"^{tmp_path / 'telemetry' / '_meta.json'}: missing"):
        read_meta(tmp_path)
    with pytest.raises(ReplicaflowError, match=rf"^{tmp_path / 'telemetry' / 'isr'}: missing table 'isr'"):
        read_table(tmp_path, "telemetry", "isr")
    (tmp_path / "telemetry").mkdir()
    (tmp_path / "telemetry" / "_meta.json").write_text("{not json")
    with pytest.raises(ReplicaflowError, match=r"_meta.json:1: not valid JSON \(Expecting property name"):
        read_meta(tmp_path)


def test_failed_write_leaves_previous_output(tmp_path: Path):
    _writer().write(tmp_path, META)
    with pytest.raises(TypeError):
        TelemetryWriter("c1").write(tmp_path, {**META, "bad": object()})
    assert read_meta(tmp_path) == META and read_table(tmp_path, "telemetry", "isr").num_rows == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["telemetry", "truth"]


def test_rows_keep_the_values_of_their_instant_when_the_arrays_change_later():
    """The engine mutates its state arrays in place; a row written earlier must not follow them."""
    w = TelemetryWriter("c1")
    epochs = np.zeros(2, dtype=np.int32)
    hw = np.ma.masked_array(np.array([5, 6], dtype=np.int64), mask=[0, 1])
    w.changes("leaders", 0, {"topic": ["t", "t"], "partition": np.arange(2, dtype=np.int32),
                             "leader": np.array([1, 2], dtype=np.int32), "leader_epoch": epochs,
                             "start_offset": hw.data, "replicas_end_offset": hw.data})
    w.samples("telemetry", "replica_offsets", 0, {"topic": "t", "partition": np.arange(2, dtype=np.int32),
                                                  "broker": np.array([1, 2], dtype=np.int32),
                                                  "log_end_offset": hw.data, "high_watermark": hw, "size_bytes": 0})
    epochs += 3
    hw.data[:] = 99
    w.changes("leaders", 1, {"topic": ["t"], "partition": [0], "leader": [2], "leader_epoch": epochs[:1],
                             "start_offset": [None], "replicas_end_offset": [7]})
    tables = w.tables()["telemetry"]
    assert tables["leaders"].column("leader_epoch").to_pylist() == [0, 0, 3]
    assert tables["leaders"].column("start_offset").to_pylist() == [5, 6, None]
    assert tables["replica_offsets"].column("high_watermark").to_pylist() == [5, None]
    assert tables["replica_offsets"].column("log_end_offset").to_pylist() == [5, 6]
