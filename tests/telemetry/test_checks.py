"""Telemetry that would give a wrong answer with exit 0 is refused before Spark starts (telemetry/checks.py):
one sentence naming the table and the first offending row; table-driven, no Spark session."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from replicaflow.errors import ReplicaflowError
from replicaflow.telemetry import checks, references
from replicaflow.telemetry.checks import check_telemetry
from tests.pipeline.tele import Tele


def tiny(root: Path, cluster: str = "c1") -> Path:
    t = Tele(cluster, "3.7", end_ms=20_000)
    t.broker(0, 1)
    t.partition(0, "a", 0, [1], 1, [1])
    t.add("traffic", 10_000, broker=1, name="ReplicationBytesInPerSec", bytes=100)
    t.offsets(10_000, "a", 0, {1: (5, 5, 50)})
    return t.write(root)


def _meta(d: Path, **changes) -> None:
    path = d / "telemetry" / "_meta.json"
    meta = json.loads(path.read_text())
    meta.update(changes)
    path.write_text(json.dumps(meta))


def _table(d: Path, name: str, change) -> None:
    path = next((d / "telemetry" / name).glob("*.parquet"))
    pq.write_table(change(pq.read_table(path)), path)


def _duplicate_first_row(t: pa.Table) -> pa.Table:
    return pa.concat_tables([t, t.slice(0, 1)])


def _first(column: str, value):
    def change(t: pa.Table) -> pa.Table:
        i = t.schema.get_field_index(column)
        values = t[column].to_pylist()
        return t.set_column(i, t.schema.field(i), pa.array([value, *values[1:]], t.schema.field(i).type))
    return change


def _null_first(column: str):
    return _first(column, None)


def _other_cluster(t: pa.Table) -> pa.Table:
    i = t.schema.get_field_index("cluster")
    return t.set_column(i, t.schema.field(i), pa.array(["other"] * t.num_rows, pa.string()))


BAD = [
    ("meta cluster differs from the rows", lambda d: _meta(d, cluster="renamed"),
     "row 0 of assignments belongs to cluster 'c1', but _meta.json says 'renamed'"),
    ("rows of another cluster", lambda d: _table(d, "brokers", _other_cluster),
     "row 0 of brokers belongs to cluster 'other', but _meta.json says 'c1'"),
    ("duplicated traffic row", lambda d: _table(d, "traffic", _duplicate_first_row),
     "traffic has 2 rows with ts_ms=10000, broker=1, name=ReplicationBytesInPerSec; each must appear once"),
    ("duplicated change", lambda d: _table(d, "isr", _duplicate_first_row), "isr has 2 rows with seq="),
    ("duplicated sample", lambda d: _table(d, "replica_offsets", _duplicate_first_row),
     "replica_offsets has 2 rows with ts_ms=10000, topic=a, partition=0, broker=1"),
    ("a change after the end", lambda d: _table(d, "isr", _first("ts_ms", 20_001)),
     "row 0 of isr has ts_ms 20001 (1970-01-01 00:00:20 UTC), after end_ms 20000 (1970-01-01 00:00:20 UTC) in "
     "_meta.json; the telemetry must span every row"),
    ("a scrape after the end", lambda d: _meta(d, end_ms=9_999),
     "row 0 of replica_offsets has ts_ms 10000 (1970-01-01 00:00:10 UTC), after end_ms 9999"),
    ("a change before the start", lambda d: _meta(d, start_ms=1),
     "row 0 of assignments has ts_ms 0 (1970-01-01 00:00:00 UTC), before start_ms 1 (1970-01-01 00:00:00 UTC)"),
    ("a row at an instant with no date", lambda d: _table(d, "leaders", _first("ts_ms", 2**62)),
     f"row 0 of leaders has ts_ms {2**62}, after end_ms 20000"),
    ("zero scrape interval", lambda d: _meta(d, scrape_interval_ms=0), "needs scrape_interval_ms > 0"),
    ("absurd end", lambda d: _meta(d, end_ms=2**61), "scrapes (at most 10,000,000); is end_ms or the interval wrong?"),
    ("end as text", lambda d: _meta(d, end_ms="soon"), "'end_ms' must be an integer (epoch ms), found 'soon'"),
    ("start past 9999", lambda d: _meta(d, start_ms=10**15, end_ms=10**15),
     "'start_ms' 1000000000000000 is not an instant between 1970 and 9999 (0..253402300799999 epoch ms)"),
    ("start before 1970", lambda d: _meta(d, start_ms=-1), "'start_ms' -1 is not an instant between 1970 and 9999"),
    ("unknown release", lambda d: _meta(d, kafka_version="9.1"), "supported releases are 0.8 to 4.x"),
    ("empty cluster name", lambda d: _meta(d, cluster=""), "'cluster' must be a non-empty string"),
    ("null topic", lambda d: _table(d, "isr", _null_first("topic")),
     "row 0 of isr has no topic (null); every row of isr needs seq, topic, partition"),
    ("null broker", lambda d: _table(d, "brokers", _null_first("broker")), "row 0 of brokers has no broker (null)"),
    ("negative partition", lambda d: _table(d, "replica_offsets", _first("partition", -5)),
     "row 0 of replica_offsets has partition -5; Kafka's partition ids start at 0"),
    ("negative broker", lambda d: _table(d, "traffic", _first("broker", -1)),
     "row 0 of traffic has broker -1; Kafka's broker ids start at 0"),
    # a negative offset or size was analyzed with exit 0: a lag, or a move's bytes, that no broker had
    ("negative log end offset", lambda d: _table(d, "replica_offsets", _first("log_end_offset", -1)),
     "row 0 of replica_offsets has log_end_offset -1; offsets start at 0 (null: unknown)"),
    ("negative size", lambda d: _table(d, "replica_offsets", _first("size_bytes", -4096)),
     "row 0 of replica_offsets has size_bytes -4096; sizes and counts are never negative"),
    ("negative traffic", lambda d: _table(d, "traffic", _first("bytes", -1)),
     "row 0 of traffic has bytes -1; sizes and counts are never negative"),
    ("meta not JSON", lambda d: (d / "telemetry" / "_meta.json").write_text("{"),
     "_meta.json:1: not valid JSON (Expecting property name enclosed in double quotes)"),
    ("meta key twice", lambda d: (d / "telemetry" / "_meta.json").write_text('{"cluster": "a",\n "cluster": "b"}'),
     "_meta.json:1: not valid JSON (the object starting on this line has the key 'cluster' twice; give each key "
     "once)"),
    ("meta a list", lambda d: (d / "telemetry" / "_meta.json").write_text("[]"), "expected a JSON object"),
    ("meta not UTF-8", lambda d: (d / "telemetry" / "_meta.json").write_bytes(b'{"x\xff": 1}'),
     "_meta.json:1: the telemetry meta file is not UTF-8 text (byte 0xff at offset 3)"),
    ("meta nested deeply", lambda d: (d / "telemetry" / "_meta.json").write_text("[" * 100_000),
     "_meta.json: not valid JSON (nested too deeply)"),
    # the keys the summary and the report show: a mangled one was analyzed with exit 0, then `report` failed
    ("brokers a number", lambda d: _meta(d, brokers=5),
     "'brokers' must be a list of broker ids (0 to 2147483647), found 5"),
    ("a broker id as text", lambda d: _meta(d, brokers=[1, "b"]), "'brokers' must be a list of broker ids"),
    ("lag as text", lambda d: _meta(d, replica_lag_time_max_ms="30s"),
     "'replica_lag_time_max_ms' must be a non-negative integer (ms), found '30s'"),
    ("kip542 as text", lambda d: _meta(d, kip542="yes"), "'kip542' must be true or false, found 'yes'"),
    ("version source a list", lambda d: _meta(d, kafka_version_source=[1]),
     "'kafka_version_source' must be a string, found [1]"),
    ("provenance a list", lambda d: _meta(d, provenance=[1]), "'provenance' must be an object of table: origin"),
    ("an event without its instant", lambda d: _meta(d, events=[{"kind": "broker_down", "text": "broker 1 down"}]),
     "events[0]: ts_ms: expected epoch ms between 1970 and 9999, found None"),
    ("a topic rate as text", lambda d: _meta(d, topics=[{"name": "a", "partitions": 1, "produce_rate_bps": "x"}]),
     "topics[0]: produce_rate_bps: expected a finite non-negative number, found 'x'"),
    ("topics an object", lambda d: _meta(d, topics={"a": 1}), "'topics' must be a list, found {'a': 1}"),
    # a broker twice in one list counted twice: `isr = [1, 1, 1]` read as fully replicated, with exit 0
    ("a broker twice in an ISR", lambda d: _table(d, "isr", _first("isr", [1, 1, 1])),
     "row 0 of isr lists a broker twice in isr, [1, 1, 1]; a broker holds one replica of a partition"),
    ("a broker twice among the replicas", lambda d: _table(d, "assignments", _first("replicas", [2, 1, 2])),
     "row 0 of assignments lists a broker twice in replicas, [2, 1, 2]"),
    # Spark reads every file of a table's folder but `_…` and `.…`: rows under another name were analyzed, unchecked
    ("a Parquet file under another name", lambda d: (d / "telemetry" / "isr" / "more.parq").write_bytes(
        next((d / "telemetry" / "isr").glob("*.parquet")).read_bytes()),
     "isr/more.parq: not a .parquet file of table 'isr', and Spark would read it with the table; move it out of the "
     "folder (or start its name with '_' or '.')"),
    ("a text file in a table", lambda d: (d / "telemetry" / "brokers" / "README.txt").write_text("hi"),
     "brokers/README.txt: not a .parquet file of table 'brokers'"),
]


@pytest.mark.parametrize(("what", "mutate", "sentence"), BAD, ids=[b[0] for b in BAD])
def test_bad_telemetry_is_one_sentence_before_spark(tmp_path, what, mutate, sentence):
    _refused_once_changed(tiny(tmp_path / "t"), mutate, sentence)


def _refused_once_changed(d: Path, mutate, sentence: str) -> None:
    """``d`` passes, then ``mutate`` makes it one sentence holding ``sentence``."""
    check_telemetry([d])
    mutate(d)
    with pytest.raises(ReplicaflowError) as info:
        check_telemetry([d])
    assert sentence in str(info.value), str(info.value)
    assert "\n" not in str(info.value)


def _pages_overwritten(path: Path) -> None:
    """Every byte between the leading magic and the footer replaced: the footer (schema, statistics) still reads."""
    data = bytearray(path.read_bytes())
    footer = int.from_bytes(data[-8:-4], "little")
    data[4:len(data) - 8 - footer] = b"\xab" * (len(data) - 12 - footer)
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("name", ["isr", "replica_offsets"])
def test_a_file_whose_pages_are_corrupt_is_named(tmp_path, name):
    """The footer passed the schema check and the key columns' pages did not read: an OSError traceback
    ('Couldn't deserialize thrift') from the duplicate search, which the CLI could not name a path for."""
    d = tiny(tmp_path / "t")
    path = next((d / "telemetry" / name).glob("*.parquet"))
    _pages_overwritten(path)
    with pytest.raises(ReplicaflowError) as info:
        check_telemetry([d])
    assert str(info.value).startswith(f"{path}: not a readable Parquet file ("), str(info.value)
    assert "\n" not in str(info.value)


def test_rows_from_start_ms_up_to_end_ms_are_accepted(tmp_path):
    """``start_ms`` and ``end_ms`` are the first and last instants of the telemetry (a scrape may fall on
    each): a row at either passes, one outside is refused (BAD above), whether the Parquet statistics hold the
    minimum and maximum or not."""
    d = tiny(tmp_path / "t")
    _table(d, "isr", _first("ts_ms", 20_000))
    assert check_telemetry([d])[0].rows > 0
    path = next((d / "telemetry" / "leaders").glob("*.parquet"))
    t = pq.read_table(path)
    pq.write_table(_first("ts_ms", 25_000)(t), path, write_statistics=False)
    with pytest.raises(ReplicaflowError, match="row 0 of leaders has ts_ms 25000"):
        check_telemetry([d])


def test_empty_telemetry_needs_allow_empty(tmp_path):
    d = Tele("c1", "3.7", end_ms=20_000).write(tmp_path / "t")
    with pytest.raises(ReplicaflowError, match="every table is empty.*--allow-empty"):
        check_telemetry([d])
    assert check_telemetry([d], allow_empty=True)[0].rows == 0


def test_two_directories_with_one_cluster_name(tmp_path):
    with pytest.raises(ReplicaflowError, match="cluster name 'c1' is also used by"):
        check_telemetry([tiny(tmp_path / "a"), tiny(tmp_path / "b")])


def test_the_first_bad_table_in_order_is_reported_whichever_thread_finds_it(tmp_path, monkeypatch):
    """The row checks run on several threads; the sentence is the one of the first directory and table in
    order (``assignments`` of ``a``), even when the check of a later one (``b``'s traffic) ends first."""
    a, b = tiny(tmp_path / "a", "c1"), tiny(tmp_path / "b", "c2")
    _table(a, "assignments", _other_cluster)
    _table(b, "traffic", _duplicate_first_row)
    check_rows = checks.check_rows

    def slow_first(name, files, meta, *known):
        if meta["cluster"] == "c1":
            time.sleep(0.3)
        return check_rows(name, files, meta, *known)

    monkeypatch.setattr(checks, "check_rows", slow_first)
    with pytest.raises(ReplicaflowError) as info:
        check_telemetry([a, b])
    assert "row 0 of assignments belongs to cluster 'other', but _meta.json says 'c1'" in str(info.value)
    rows = [c.rows for c in check_telemetry([tiny(tmp_path / "c", "c3"), tiny(tmp_path / "d", "c4")])]
    assert rows == [rows[0], rows[0]] and rows[0] > 0


@pytest.mark.parametrize(("value", "low", "high", "expected"), [
    (3, 0, 10, True), (2.5, 0, 10, True), (0, 0, 10, True), (10, 0, 10, True), (-1, 0, 10, False),
    (11, 0, 10, False), (True, 0, 10, False), (float("nan"), 0, 10, False), (float("inf"), 0, float("inf"), False),
    ("3", 0, 10, False), (None, 0, 10, False), (-(2**70), float("-inf"), float("inf"), True),
])
def test_a_json_number_is_an_int_or_finite_float_in_range(value, low, high, expected):
    """The one number check of the JSON files replicaflow reads (_meta.json's counts, _summary.json's headline):
    a bool is no number although Python's ``True`` is an int, and NaN/Infinity (which json.loads accepts) none."""
    assert checks.is_number(value, low, high) is expected


def _listed(d: Path, topics: list[dict] | None = None, brokers: list[int] | None = None) -> None:
    """The meta of ``tiny`` made to list the cluster as the simulator's does (``tiny`` lists nothing)."""
    _meta(d, topics=[{"name": "a", "partitions": 2, "replication_factor": 1}] if topics is None else topics,
          brokers=[1] if brokers is None else brokers)


STRANGERS = [
    # a leader id is a broker of the cluster or -1 (LeaderAndIsr.NoLeader): leader 99 of a three-broker cluster was
    # analyzed with exit 0 as a partition that had a leader
    ("a leader that is no broker", lambda d: _table(d, "leaders", _first("leader", 99)),
     "leaders/part-0.parquet: row 0 of leaders has leader 99, neither -1 (no leader) nor a broker of the cluster "
     "([1], from _meta.json's brokers and the brokers table)"),
    # a replica lives on a broker of the cluster: the reassignment tool refuses a broker it does not know
    ("a replica on no broker", lambda d: _table(d, "assignments", _first("replicas", [1, 7])),
     "assignments/part-0.parquet: row 0 of assignments names broker 7 in replicas, [1, 7], which is not a broker "
     "of the cluster ([1], from _meta.json's brokers and the brokers table)"),
    ("an adding replica on no broker", lambda d: _table(d, "assignments", _first("adding", [5])),
     "row 0 of assignments names broker 5 in adding, [5], which is not a broker of the cluster"),
    # an ISR member is a replica, on a broker of the cluster: `isr = [1, 9]` counted broker 9 in the ISR's size
    ("an ISR member on no broker", lambda d: _table(d, "isr", _first("isr", [1, 9])),
     "isr/part-0.parquet: row 0 of isr names broker 9 in isr, [1, 9], which is not a broker of the cluster"),
    # rows of a topic the cluster never had got incidents of their own
    ("a topic the meta does not list", lambda d: _table(d, "isr", _first("topic", "ghost")),
     "isr/part-0.parquet: row 0 of isr is of topic 'ghost', which _meta.json's topics do not list (['a']); the "
     "telemetry's rows are of the cluster's topics"),
    ("a sample of a topic the meta does not list", lambda d: _table(d, "replica_offsets", _first("topic", "ghost")),
     "replica_offsets/part-0.parquet: row 0 of replica_offsets is of topic 'ghost'"),
    # a topic's partitions are numbered 0 to partitions - 1
    ("a partition past the topic's count", lambda d: _table(d, "leaders", _first("partition", 2)),
     "leaders/part-0.parquet: row 0 of leaders has partition 2 of topic 'a', which has 2 partitions in _meta.json "
     "(0 to 1)"),
    ("a sample past the topic's count", lambda d: _table(d, "replica_offsets", _first("partition", 5)),
     "row 0 of replica_offsets has partition 5 of topic 'a', which has 2 partitions in _meta.json (0 to 1)"),
]


@pytest.mark.parametrize(("what", "mutate", "sentence"), STRANGERS, ids=[s[0] for s in STRANGERS])
def test_a_row_naming_what_the_cluster_lacks_is_refused(tmp_path, what, mutate, sentence):
    """Where _meta.json lists the cluster's brokers and topics (the simulator's does), a row naming a broker, a
    topic or a partition number the cluster does not have is refused with its file and row, before Spark."""
    d = tiny(tmp_path / "t")
    _listed(d)
    _refused_once_changed(d, mutate, sentence)


def test_what_the_meta_does_not_promise_is_not_checked(tmp_path):
    """The log rebuild's meta lists no topics or brokers, a topic may be listed without its partition count, and
    a broker the brokers table names is one of the cluster: none of these refuses a row."""
    d = tiny(tmp_path / "t")
    _table(d, "leaders", _first("leader", 99))
    _table(d, "isr", _first("topic", "ghost"))
    check_telemetry([d])  # tiny's meta lists no broker and no topic
    d = tiny(tmp_path / "u", "c2")
    _listed(d, topics=[{"name": "a"}], brokers=[2])
    _table(d, "replica_offsets", _first("partition", 70))
    _table(d, "leaders", _first("leader", -1))
    check_telemetry([d])  # a's count unknown; broker 1 is in the brokers table; -1 is no leader


def test_a_suspect_dictionary_is_not_a_refusal(tmp_path, monkeypatch):
    """A sample table is watched through the dictionaries of the batches the duplicate search reads; a dictionary
    value no row holds only makes the rows be read again, and passes."""
    d = tiny(tmp_path / "t")
    _listed(d)
    path = next((d / "telemetry" / "replica_offsets").glob("*.parquet"))
    t = pq.read_table(path)
    i = t.schema.get_field_index("topic")
    unused = pa.DictionaryArray.from_arrays(pa.array([0] * t.num_rows, pa.int32()), pa.array(["a", "ghost"]))
    pq.write_table(t.set_column(i, pa.field("topic", unused.type), unused), path, store_schema=False)
    assert "ghost" in pq.read_table(path, read_dictionary=["topic"])["topic"].chunk(0).dictionary.to_pylist()
    read_again = []
    refuse = references.refuse_strangers
    monkeypatch.setattr(references, "refuse_strangers",
                        lambda file, name, known, topics=True: read_again.append((name, topics)) or refuse(
                            file, name, known, topics))
    assert check_telemetry([d])[0].rows > 0
    assert ("replica_offsets", True) in read_again
