"""The scenario loader reports every problem at once with its YAML line, and refuses hostile files
(bad encodings, duplicate keys, alias bombs, deep nesting, oversized work) in well under a second."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replicaflow.errors import ReplicaflowError
from replicaflow.sim.scenario import DEFAULT_MAX_WORK, load_scenario
from replicaflow.sim.scenario.problems import MAX_LISTED

GOOD = """\
name: t
duration: 10m
kafka:
  version: "3.7"
cluster:
  brokers: 3
topics:
  - name: orders
    partitions: 6
    replication_factor: 3
    produce_rate: 1MB/s
events:
  - at: 1m
    broker_down: 2
  - at: 2m
    broker_up: 2
"""


def _load(tmp_path: Path, text: str | bytes, **kw):
    path = tmp_path / "s.yaml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path, load_scenario(path, **kw)


def _error(tmp_path: Path, text: str | bytes, **kw) -> tuple[Path, str]:
    path = tmp_path / "s.yaml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(ReplicaflowError) as info:
        load_scenario(path, **kw)
    return path, str(info.value)


def test_good_file_loads(tmp_path):
    _, s = _load(tmp_path, GOOD)
    assert [e.kind for e in s.events] == ["broker_down", "broker_up"]


def test_all_problems_at_once_with_lines(tmp_path):
    text = GOOD.replace("duration: 10m", "duration: 10 minutes").replace("partitions: 6", "partitions: six")
    text = text.replace("broker_down: 2", "broker_down: 9").replace("produce_rate: 1MB/s", "produce_rate: fast")
    text += "  - at: 3m\n    slow_network: {broker: 1, network_in: 5MBs, for: 1m}\n"
    path, message = _error(tmp_path, text)
    lines = message.splitlines()
    assert lines[0] == f"{path}: 4 problems", message
    assert lines[1:] == [
        f"  {path}:2: duration: expected a duration like '30s' or '100ms', found '10 minutes'",
        f"  {path}:9: topics[0].partitions: expected a valid integer, found 'six'",
        f"  {path}:11: topics[0].produce_rate: expected a rate like '5MB/s', found 'fast'",
        f"  {path}:18: events[2].slow_network.network_in: expected a rate like '5MB/s', found '5MBs'",
    ], message


def test_cross_field_problems_all_reported(tmp_path):
    """References are checked once the fields are valid; every bad one is listed."""
    text = GOOD.replace("broker_down: 2", "broker_down: 9").replace("broker_up: 2", "broker_up: 8")
    path, message = _error(tmp_path, text)
    assert message.splitlines()[1:] == [
        f"  {path}:14: events[0].broker_down.broker: expected a broker of the cluster ([1, 2, 3]), found 9",
        f"  {path}:16: events[1].broker_up.broker: expected a broker of the cluster ([1, 2, 3]), found 8",
    ]


def test_many_problems_are_capped(tmp_path):
    events = "".join(f"  - at: 1m\n    broker_up: {100 + i}\n" for i in range(MAX_LISTED + 7))
    _, message = _error(tmp_path, GOOD.split("events:")[0] + "events:\n" + events)
    lines = message.splitlines()
    assert len(lines) == MAX_LISTED + 2 and lines[-1] == "  … and 7 more"


def test_unquoted_version_keeps_its_digits(tmp_path):
    """`version: 3.10` is the release 3.10 (YAML would read the float 3.1)."""
    _, s = _load(tmp_path, GOOD.replace('version: "3.7"', "version: 3.10").replace("3.10", "3.9"))
    assert s.kafka.version == "3.9"
    path, message = _error(tmp_path, GOOD.replace('version: "3.7"', "version: 3.10"))
    assert message == f"{path}:4: kafka.version: Kafka 3.x ended with 3.9, found '3.10'", message


@pytest.mark.parametrize(("text", "expected"), [
    (b"\xff\xfen\x00a\x00", "is UTF-16; save it as UTF-8"),
    (GOOD.encode().replace(b"orders", b"ord\xe9rs"), ":8: the scenario file is not UTF-8 text (byte 0xe9"),
    (GOOD + "duration: 5m\n", ":17: duplicate key 'duration' (first at line 2)"),
    # a key YAML reads as a number, true/false or null was '[1]: expected Keys should be strings' at line 1
    (GOOD + "1: 5m\n", ":17: expected a field name as key, found '1', which YAML reads as int"),
    (GOOD.replace("    partitions: 6\n", "    partitions: 6\n    yes: 1\n"),
     ":10: expected a field name as key, found 'yes', which YAML reads as bool"),
    ("a: &a [1,1,1,1,1,1,1,1,1,1]\n" + "".join(
        f"{c}: &{c} [{','.join(['*' + p] * 10)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True)),
     "expands to more than 1,000,000 values"),
    ("x: " + "[" * 5000 + "]" * 5000 + "\n", "nested deeper than 64 levels"),
    ("x: " + "[" * 80 + "]" * 80 + "\n", "nested deeper than 64 levels"),
    ("name: [unclosed\n", ":2: invalid YAML (expected ',' or ']'"),
    ("name: x\x00\n", ":1: invalid YAML (control character #x00 is not allowed)"),
    (GOOD.replace("name: orders", "name: \"ord\\ners\""), "topics[0].name: expected a topic name of ASCII letters"),
    (GOOD.replace("name: orders", "name: '[/bold]x'"), "topics[0].name: expected a topic name of ASCII"),
    (GOOD.replace("name: orders", "name: " + "o" * 300), "expected a topic name of at most 249 characters"),
    (GOOD.replace("produce_rate: 1MB/s", "produce_rate: .nan"), "produce_rate: expected a rate that fits in 64 bits"),
    (GOOD.replace("produce_rate: 1MB/s", "produce_rate: .inf"), "produce_rate: expected a rate that fits in 64 bits"),
    (GOOD.replace("produce_rate: 1MB/s", "initial_size: 100000000TB"), "initial_size: expected a size that fits"),
    (GOOD.replace("produce_rate: 1MB/s", "produce_rate: 9000000TB/s"), "topics[0]: expected a log that fits"),
    (GOOD.replace("duration: 10m", "duration: 1" + "0" * 400 + "d"), "duration: expected a duration that fits"),
    (GOOD.replace("brokers: 3", "brokers: 1000000000"), "cluster.brokers: expected 1 to 10,000 brokers"),
    (GOOD.replace("partitions: 6", "partitions: 1000000000"), "topics: expected at most 20,000,000 replicas"),
    (GOOD.replace("duration: 10m", "duration: 10000d"), "duration: the run would take 1.56e+11 replica-ticks (about 2h10m)"),
    (GOOD.replace("duration: 10m", "duration: 10m\ntick: 1ms\nscrape_interval: 1ms"), None),
    (GOOD.replace("duration: 10m", "duration: 1d\ntick: 1ms\nscrape_interval: 1s").replace("partitions: 6",
     "partitions: 600"), "raise --max-work"),
    (GOOD.replace("duration: 10m", "duration: 10m\nstart: 9999-12-31T00:00:00Z"), "end before the year 9999"),
    (GOOD.replace("duration: 10m", "duration: 10m\nseed: -1"), "seed: expected greater than or equal to 0"),
    # rounded to whole ms: the run's grid silently became 2ms, and 'scrape_interval: 3ms' then "not a multiple"
    (GOOD.replace("duration: 10m", "duration: 10m\ntick: 1.5ms\nscrape_interval: 3ms"),
     ":3: tick: expected a duration of whole milliseconds, found '1.5ms'"),
    # values listed in a sentence are bounded as every found value: these were 600 KB and 4,900 characters
    (GOOD + "  - {at: 1m, reassign: {version: 1, partitions: [{topic: orders, partition: 0, replicas: ["
     + ",".join(["1"] * 200_000) + "]}]}}\n", "replicas: expected distinct replicas, found [1, 1, 1"),
    (GOOD.replace("brokers: 3", "brokers: 1000") + "  - {at: 1m, broker_down: 99999}\n",
     "broker_down.broker: expected a broker of the cluster ([1, 2, 3"),
])
def test_hostile_scenarios_get_one_answer(tmp_path, text, expected):
    """Each is refused with one sentence before it is expanded or run: a loader that expanded the
    billion-laughs file would exhaust memory instead of answering (no timed assertion: it flaked under load)."""
    if expected is None:
        _load(tmp_path, text)
        return
    path, message = _error(tmp_path, text)
    assert message.startswith(str(path)) and expected in message, message
    assert len(message) < 2000


def test_max_work_raises_the_bound(tmp_path):
    text = GOOD.replace("duration: 10m", "duration: 1d\ntick: 10ms\nscrape_interval: 1s")
    _error(tmp_path, text, max_work=10**8)
    _, s = _load(tmp_path, text, max_work=DEFAULT_MAX_WORK)
    assert s.duration_ms == 86_400_000


def test_long_values_are_cut_in_sentences(tmp_path):
    path, message = _error(tmp_path, GOOD.replace("produce_rate: 1MB/s", "produce_rate: " + "x" * 100_000))
    assert "more characters" in message and len(message) < 500


_yaml_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=20,
)
_keys = st.sampled_from(["name", "duration", "tick", "kafka", "cluster", "topics", "events", "start", "seed",
                         "scrape_interval", "version", "brokers", "partitions", "replication_factor", "at",
                         "broker_down", "reassign", "config", "file"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=st.dictionaries(_keys, _yaml_values | st.dictionaries(_keys, _yaml_values, max_size=4), max_size=8))
def test_fuzz_arbitrary_yaml_only_raises_our_error(tmp_path, doc):
    with contextlib.suppress(ReplicaflowError):
        _load(tmp_path, yaml.safe_dump(doc, allow_unicode=True))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=300))
def test_fuzz_arbitrary_bytes_only_raise_our_error(tmp_path, data):
    with contextlib.suppress(ReplicaflowError):
        _load(tmp_path, data)


@pytest.mark.parametrize(("version", "effect"), [("3.6", "acks=all writes are refused"), ("3.7", "caps it")])
def test_min_isr_above_replication_factor_is_a_warning(tmp_path, version, effect):
    text = GOOD.replace('"3.7"', f'"{version}"').replace("replication_factor: 3", "replication_factor: 3\n"
                                                          "    min_insync_replicas: 4")
    path, s = _load(tmp_path, text)
    assert s.warnings == (f"{path}:11: topics[0].min_insync_replicas: min ISR 4 is above topic 'orders's "
                          f"replication factor 3: " + s.warnings[0].split("replication factor 3: ")[1],)
    assert effect in s.warnings[0]
    _, fine = _load(tmp_path, GOOD)
    assert fine.warnings == ()


@pytest.mark.parametrize(("version", "additional", "warning"), [
    ("2.5", "", "(\"There is an existing assignment running.\"): if the one at 2m30s is still moving at 3m, this one "
                "does nothing (2.6+ adds its moves to the running ones)"),
    ("2.6", "", "(\"Cannot execute because there is an existing partition assignment.\"): if the one at 2m30s is "
                "still moving at 3m, this one does nothing (add 'additional: true')"),
    ("2.6", "    additional: true\n", None)])
def test_a_second_reassign_is_a_warning_unless_it_is_additional(tmp_path, version, additional, warning):
    """``ReassignPartitionsCommand.executeAssignment`` up to 2.5 finds the ``/admin/reassign_partitions`` znode of a
    running reassignment and starts nothing ("There is an existing assignment running."); 2.6 refuses without
    ``--additional`` (cannotExecuteBecauseOfExistingMessage) and with it adds the moves
    (``model.reassign_tool.execute_starts_moves``)."""
    text = GOOD.replace('"3.7"', f'"{version}"').replace("  - at: 2m\n    broker_up: 2\n", (
        "  - at: 2m\n    broker_up: 2\n"
        "  - at: 3m\n    reassign: {version: 1, partitions: [{topic: orders, partition: 0, replicas: [2, 3, 1]}]}\n"
        + additional +
        "  - at: 150s\n    reassign: {version: 1, partitions: [{topic: orders, partition: 1, replicas: [3, 1, 2]}]}\n"
        "    throttle: 1MB/s\n"))
    path, s = _load(tmp_path, text)
    if warning is None:
        assert s.warnings == ()
        return
    assert s.warnings == (f"{path}:18: events[2].reassign: kafka-reassign-partitions {version} starts no move while "
                          f"another reassignment runs {warning}",)


def test_additional_is_refused_before_2_6(tmp_path):
    """``--additional`` came with the KIP-455 tool in 2.6.0 (ReassignPartitionsCommand.additionalOpt); 2.5.1's tool
    has no such option."""
    text = GOOD.replace('"3.7"', '"2.5"').replace("  - at: 2m\n    broker_up: 2\n", (
        "  - at: 2m\n    broker_up: 2\n"
        "  - at: 3m\n    reassign: {version: 1, partitions: [{topic: orders, partition: 0, replicas: [2, 3, 1]}]}\n"
        "    additional: true\n"))
    with pytest.raises(ReplicaflowError) as err:
        _load(tmp_path, text)
    assert str(err.value) == (f"{tmp_path / 's.yaml'}:19: events[2].additional: expected no additional: "
                              "kafka-reassign-partitions --additional exists from 2.6 (KIP-455), this cluster runs 2.5")
