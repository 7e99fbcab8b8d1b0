"""Bad input → one ReplicaflowError sentence, and the previous analysis/ left untouched."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from replicaflow.errors import ReplicaflowError
from replicaflow.pipeline.runner import analyze
from replicaflow.telemetry.io import atomic_dir
from tests.pipeline.tele import Tele


def tiny(root: Path, cluster: str = "c1") -> Path:
    t = Tele(cluster, "3.7", end_ms=20_000)
    t.broker(0, 1)
    t.partition(0, "a", 0, [1], 1, [1])
    return t.write(root)


@pytest.fixture
def previous(tmp_path) -> Path:
    """An output directory holding an earlier analysis/ that a failed run must not touch."""
    out = tmp_path / "out"
    (out / "analysis").mkdir(parents=True)
    (out / "analysis" / "_summary.json").write_text('{"earlier": {}}')
    return out


def assert_untouched(out: Path) -> None:
    assert [p.name for p in out.iterdir()] == ["analysis"]
    assert (out / "analysis" / "_summary.json").read_text() == '{"earlier": {}}'


def test_empty_directory(spark, tmp_path, previous):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ReplicaflowError, match=r"empty\b.*telemetry/"):
        analyze(tmp_path / "empty", previous, spark=spark)
    assert_untouched(previous)


def test_missing_table(spark, tmp_path, previous):
    d = tiny(tmp_path / "t")
    shutil.rmtree(d / "telemetry" / "leaders")
    with pytest.raises(ReplicaflowError, match=r"telemetry/leaders: table 'leaders' is missing"):
        analyze(d, previous, spark=spark)
    assert_untouched(previous)


def test_wrong_column_type(spark, tmp_path, previous):
    d = tiny(tmp_path / "t")
    path = d / "telemetry" / "brokers" / "part-0.parquet"
    table = pq.read_table(path)
    pq.write_table(table.set_column(table.schema.get_field_index("broker"), "broker",
                                    table.column("broker").cast(pa.string())), path)
    with pytest.raises(ReplicaflowError, match=r"column brokers\.broker has type string, expected int32"):
        analyze(d, previous, spark=spark)
    assert_untouched(previous)


def test_missing_meta_key(spark, tmp_path, previous):
    d = tiny(tmp_path / "t")
    (d / "telemetry" / "_meta.json").write_text('{"cluster": "c1"}')
    with pytest.raises(ReplicaflowError, match=r"_meta.json: key 'kafka_version' is missing"):
        analyze(d, previous, spark=spark)


def test_duplicate_cluster_names(spark, tmp_path, previous):
    a, b = tiny(tmp_path / "a"), tiny(tmp_path / "b")
    with pytest.raises(ReplicaflowError, match=r"cluster name 'c1' is also used"):
        analyze([a, b], previous, spark=spark)
    assert_untouched(previous)


def test_failure_inside_the_write_leaves_previous_output(previous):
    with pytest.raises(RuntimeError), atomic_dir(previous / "analysis") as tmp:
        (tmp / "broker_metrics").mkdir()
        raise RuntimeError("killed mid-write")
    assert_untouched(previous)


def test_success_replaces_previous_output(previous):
    with atomic_dir(previous / "analysis") as tmp:
        (tmp / "_summary.json").write_text("{}")
    assert [p.name for p in previous.iterdir()] == ["analysis"]
    assert (previous / "analysis" / "_summary.json").read_text() == "{}"
