"""Telemetry integrity before Spark (pipeline/checks.py): each defect is one sentence naming the file or
table and its first offending row; nothing here starts Spark."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable

import pytest

from replicaflow.errors import ReplicaflowError
from replicaflow.pipeline.load import check_telemetry
from tests.pipeline.tele import Tele


def tele(cluster: str = "c1") -> Tele:
    t = Tele(cluster, "3.7", end_ms=20_000)
    t.broker(0, 1).broker(0, 2)
    t.partition(0, "a", 0, [1, 2], 1, [1, 2])
    t.offsets(0, "a", 0, {1: (10, 10, 100), 2: (10, 10, 100)})
    t.add("traffic", 0, broker=1, name="ReplicationBytesOutPerSec", bytes=5)
    return t


def meta(**over) -> Callable[[Tele], None]:
    return lambda t: t.meta.update(over)


def dup(table: str, index: int = 0) -> Callable[[Tele], None]:
    return lambda t: t.rows[table].append(dict(t.rows[table][index]))


def other_cluster(table: str) -> Callable[[Tele], None]:
    def edit(t: Tele) -> None:
        t.rows[table][-1]["cluster"] = "prod-eu"
    return edit


def no_partitions(t: Tele) -> None:
    for table in ("assignments", "leaders", "isr", "replica_offsets"):
        t.rows[table].clear()


CASES = [
    ("scrape interval 0", meta(scrape_interval_ms=0), r"_meta.json: 'scrape_interval_ms' must be > 0, found 0$"),
    ("negative interval", meta(scrape_interval_ms=-5), r"'scrape_interval_ms' must be > 0, found -5$"),
    ("end before start", meta(start_ms=50_000, end_ms=1), r"'end_ms' 1 must be between start_ms \(50000\) and"),
    ("absurd end", meta(end_ms=10**30), r"'end_ms' 10{30} must be between start_ms \(0\) and 253402300799999$"),
    ("start before 1970", meta(start_ms=-1), r"'start_ms' -1 is outside 0\.\.253402300799999"),
    ("too many scrapes", meta(end_ms=10**12, scrape_interval_ms=1), r"1000000000001 scrapes .* at most 10000000"),
    ("float interval", meta(scrape_interval_ms=1.5), r"'scrape_interval_ms' must be an integer, found '1\.5'$"),
    ("bool end", meta(end_ms=True), r"'end_ms' must be an integer, found 'True'$"),
    ("empty cluster", meta(cluster=""), r"'cluster' must be a non-empty string, found ''$"),
    ("numeric version", meta(kafka_version=3.7), r"'kafka_version' must be a string such as '3\.7'"),
    ("zero tick", meta(tick_ms=0), r"'tick_ms' must be a positive integer, found '0'$"),
    ("brokers not ids", meta(brokers=["a"]), r"'brokers' must be a list of broker ids"),
    ("markup in cluster", meta(cluster="[/bold]x"), r"row 1 of table 'assignments' has cluster 'c1', but _meta"),
    ("rows of another cluster", other_cluster("traffic"),
     r"telemetry/traffic: row 1 of table 'traffic' has cluster 'prod-eu', but _meta.json names 'c1'; one "
     r"directory holds one cluster$"),
    ("a second cluster in one directory", other_cluster("brokers"), r"row 2 of table 'brokers' has cluster 'prod-eu'"),
    ("duplicated traffic row", dup("traffic"),
     r"telemetry/traffic: row 2 of table 'traffic' repeats row 1 \(ts_ms=0, broker=1, "
     r"name='ReplicationBytesOutPerSec'\); each key may appear once, or counters double$"),
    ("duplicated offsets row", dup("replica_offsets", 1),
     r"row 3 of table 'replica_offsets' repeats row 2 \(ts_ms=0, topic='a', partition=0, broker=2\)"),
    ("duplicated change row", dup("isr"), r"row 2 of table 'isr' repeats row 1 \(ts_ms=0, seq=5\)"),
    ("no partition", no_partitions,
     r"telemetry/assignments: table 'assignments' has no rows, so there is no partition to analyze; pass "
     r"--allow-empty"),
]


@pytest.mark.parametrize(("edit", "sentence"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_each_defect_is_one_sentence_naming_table_and_row(tmp_path, edit, sentence):
    t = tele()
    edit(t)
    root = t.write(tmp_path / "run")
    with pytest.raises(ReplicaflowError, match=sentence):
        check_telemetry(root)


def test_sound_telemetry_passes_and_empty_telemetry_when_asked(tmp_path):
    assert check_telemetry(tele().write(tmp_path / "ok"))[0]["cluster"] == "c1"
    t = tele()
    no_partitions(t)
    assert check_telemetry(t.write(tmp_path / "empty"), allow_empty=True)[0]["cluster"] == "c1"


def test_two_directories_with_one_cluster_name(tmp_path):
    a, b = tele().write(tmp_path / "a"), tele().write(tmp_path / "b")
    with pytest.raises(ReplicaflowError, match=r"/b: cluster name 'c1' is also used by .*/a; clusters analyzed"):
        check_telemetry([a, b])


def test_the_cli_refuses_before_spark_starts_and_prints_markup_literally(tmp_path):
    t = tele()
    t.rows["traffic"][-1]["cluster"] = "[/bold][red]x"
    root = t.write(tmp_path / "run")
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "replicaflow.cli", "analyze", str(root), "--out", str(out)],
                          capture_output=True, text=True, timeout=120, env={"COLUMNS": "300", "PATH": "/usr/bin"})
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "has cluster '[/bold][red]x', but _meta.json names 'c1'" in done.stderr
    assert not out.exists()  # refused before the output directory was even created
    assert json.loads((root / "telemetry" / "_meta.json").read_text())["cluster"] == "c1"
