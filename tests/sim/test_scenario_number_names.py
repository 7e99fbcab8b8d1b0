"""Unquoted names that YAML reads as numbers (``0123`` is octal 83, ``1:30`` is 90 in base 60) are refused with the
line and a quoted form, not silently renamed (probe 6, section 5; its cases/topicnames and cases/scen_name_int)."""

from __future__ import annotations

import pytest

from replicaflow.errors import ReplicaflowError
from replicaflow.sim.scenario import load_scenario

SCENARIO = """\
name: t
duration: 10s
kafka: {{version: "3.7"}}
cluster: {{brokers: 3}}
topics: [{{name: {name}, partitions: 1, replication_factor: 1}}]
"""


@pytest.mark.parametrize(("written", "found"), [
    ("0123", "found the number 83 (YAML reads 0123 as octal); quote it: name: '0123'"),
    ("0x1F", "found the number 31 (YAML reads 0x1F as hexadecimal); quote it: name: '0x1F'"),
    ("0b101", "found the number 5 (YAML reads 0b101 as binary); quote it: name: '0b101'"),
    ("1:30", "found the number 90 (YAML reads 1:30 in base 60); quoted, '1:30' is no topic name either: "
             "expected a topic name of ASCII letters, digits, '.', '_' and '-' (Kafka's legal characters)"),
    ("1_000", "found the number 1000 (YAML reads 1_000 as a number); quote it: name: '1_000'"),
    ("+12", "found the number 12 (YAML reads +12 as a number); quoted, '+12' is no topic name either: "
            "expected a topic name of ASCII letters, digits, '.', '_' and '-' (Kafka's legal characters)"),
    ("42", "found the number 42; quote it: name: '42'"),
    (".5", "found the number 0.5 (YAML reads .5 as a number); quote it: name: '.5'"),
], ids=["octal", "hex", "binary", "base 60", "underscore", "plus", "plain", "float"])
def test_a_topic_name_yaml_reads_as_a_number_is_refused_with_its_line(tmp_path, written, found):
    """A quoted form is suggested only where it is a legal topic name (Topic.validate: `1:30` and `+12` are not)."""
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO.format(name=written))
    with pytest.raises(ReplicaflowError) as exc:
        load_scenario(path)
    assert str(exc.value) == f"{path}:5: topics[0].name: expected a name, {found}"


@pytest.mark.parametrize("written", ["'0123'", '"0x1F"', "1e3", "0o17", "orders-1"])
def test_a_quoted_name_or_one_yaml_keeps_as_text_is_kept_as_written(tmp_path, written):
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO.format(name=written))
    assert load_scenario(path).topics[0].name == written.strip("'\"")


def test_the_scenario_name_and_an_event_topic_are_refused_the_same_way(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO.format(name="orders").replace("name: t", "name: 0123")
                    + "events: [{at: 1s, produce_burst: {topic: 0x10, rate: 1MB/s, for: 1s}}]\n")
    with pytest.raises(ReplicaflowError) as exc:
        load_scenario(path)
    assert str(exc.value) == (
        f"{path}: 2 problems\n"
        f"  {path}:1: name: expected a name, found the number 83 (YAML reads 0123 as octal); quote it: name: '0123'\n"
        f"  {path}:6: events[0].produce_burst.topic: expected a name, found the number 16 (YAML reads 0x10 as "
        "hexadecimal); quote it: topic: '0x10'")


def test_a_numeric_rack_is_kept_unless_yaml_changed_it(tmp_path):
    path = tmp_path / "s.yaml"
    racks = "cluster: {brokers: [{id: 1, rack: 1}, {id: 2, rack: %s}]}"
    path.write_text(SCENARIO.format(name="o").replace("cluster: {brokers: 3}", racks % "2"))
    assert [b.rack for b in load_scenario(path).cluster.brokers] == ["1", "2"]
    path.write_text(SCENARIO.format(name="o").replace("cluster: {brokers: 3}", racks % "010"))
    with pytest.raises(ReplicaflowError, match=r":4: cluster.brokers\[1\].rack: expected a name, found the number 8 "
                                               r"\(YAML reads 010 as octal\); quote it: rack: '010'$"):
        load_scenario(path)


def test_a_scenario_name_in_base_60_is_told_to_quote_it(tmp_path):
    """The scenario's name is a cluster name, not a topic's: `1:30` quoted is a legal one."""
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO.format(name="orders").replace("name: t", "name: 1:30"))
    with pytest.raises(ReplicaflowError) as exc:
        load_scenario(path)
    assert str(exc.value) == (f"{path}:1: name: expected a name, found the number 90 (YAML reads 1:30 in base 60); "
                              "quote it: name: '1:30'")


@pytest.mark.parametrize(("line", "field"), [("duration: 2:00", "duration"),
                                             ("events: [{at: 1:30, broker_down: {broker: 1}}]", "events[0].at")])
def test_a_value_in_base_60_is_refused_as_written(tmp_path, line, field):
    """YAML 1.1 reads `2:00` as 120: the sentence quotes what was written, not "found 120"."""
    path = tmp_path / "s.yaml"
    text = SCENARIO.format(name="orders").replace("duration: 10s", "duration: 10m")
    path.write_text(text.replace("duration: 10m", line) if field == "duration" else text + line + "\n")
    written, number, at = ("2:00", 120, 2) if field == "duration" else ("1:30", 90, 6)
    with pytest.raises(ReplicaflowError) as exc:
        load_scenario(path)
    assert str(exc.value) == (f"{path}:{at}: {field}: found {written}, which YAML reads in base 60 as the number "
                              f"{number}; write a duration with its unit ('2m', '30s')")
