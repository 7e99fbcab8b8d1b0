"""Hostile inputs, round 3: each case was a traceback, a sentence of thousands of characters, or a value read
past without a word. Every one is now one sentence naming the file and field (or line) and exit status 2,
before any simulation or Spark (``--master nonsense://x`` would be the next sentence otherwise)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from replicaflow.cli import app
from tests.plan.kafka_files import describe, log_dirs

RR = [[(p + k) % 4 + 1 for k in range(3)] for p in range(8)]
MOVE = {"topic": "orders", "partition": 0, "replicas": [2, 3, 4]}
runner = CliRunner()


def _plan_argv(tmp_path, plan_text: str | None = None, describe_text: str | None = None) -> list[str]:
    (tmp_path / "plan.json").write_text(plan_text or json.dumps({"version": 1, "partitions": [MOVE]}),
                                        encoding="utf-8")
    if describe_text is None:
        describe(tmp_path / "describe.txt", {"orders": RR})
    else:
        (tmp_path / "describe.txt").write_text(describe_text, encoding="utf-8")
    log_dirs(tmp_path / "logdirs.json", {"orders": RR}, 1000)
    return ["plan", "--reassignment", str(tmp_path / "plan.json"), "--topics", str(tmp_path / "describe.txt"),
            "--log-dirs", str(tmp_path / "logdirs.json"), "--master", "nonsense://x"]


def _one_sentence(result, sentence: str) -> None:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1, result.output
    assert result.output.strip() == "error: " + sentence, result.output
    assert len(result.output) < 1000


def _describe(extra: str = "", header_extra: str = "") -> str:
    lines = [f"Topic: orders\tTopicId: AAAAAAAAAAAAAAAAAAAAAA\tPartitionCount: 8\tReplicationFactor: 3\t"
             f"Configs: {header_extra}"]
    for p, r in enumerate(RR):
        ids = ",".join(map(str, r))
        lines.append(f"\tTopic: orders\tPartition: {p}\tLeader: {r[0]}\tReplicas: {ids}\tIsr: {ids}"
                     + (extra if p == 1 else ""))
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(("value", "field", "shown"), [
    # Kafka's tool decodes partition and replicas as Java ints; the whole 4,000-digit number was the sentence
    ("9" * 4000, "partition", "expected a partition number (0 to 2,147,483,647, Kafka's int32), found 9999"),
    ("2147483648", "partition", "expected a partition number (0 to 2,147,483,647, Kafka's int32), found 2147483648"),
])
def test_a_partition_beyond_int32_is_one_short_sentence(tmp_path, value, field, shown):
    text = '{"version": 1, "partitions": [{"topic": "orders", "partition": ' + value + ', "replicas": [2, 3, 4]}]}'
    result = runner.invoke(app, _plan_argv(tmp_path, text))
    assert result.exit_code == 2 and len(result.output) < 1000, result.output
    assert result.output.startswith(f"error: {tmp_path / 'plan.json'}: partitions[0].{field}: {shown}"), result.output


def test_a_broker_id_beyond_int32_is_one_short_sentence(tmp_path):
    text = '{"version": 1, "partitions": [{"topic": "orders", "partition": 0, "replicas": [2, 3, ' + "9" * 4000 + "]}]}"
    result = runner.invoke(app, _plan_argv(tmp_path, text))
    assert result.exit_code == 2 and len(result.output) < 1000, result.output
    assert result.output.startswith(
        f"error: {tmp_path / 'plan.json'}: partitions[0].replicas: expected a list of broker ids (each 0 to "
        "2,147,483,647, Kafka's int32), found [2, 3, 9999"), result.output


def test_a_negative_broker_id_is_no_broker_id(tmp_path):
    """It was 'unknown broker -1 …: list the cluster's brokers with --brokers', which refuses -1 in turn."""
    text = json.dumps({"version": 1, "partitions": [{**MOVE, "replicas": [-1, 3, 4]}]})
    _one_sentence(runner.invoke(app, _plan_argv(tmp_path, text)),
                  f"{tmp_path}/plan.json: partitions[0].replicas: expected a list of broker ids (each 0 to "
                  "2,147,483,647, Kafka's int32), found [-1, 3, 4]")


@pytest.mark.parametrize(("extra", "sentence"), [
    # Confluent Server's Offline: names replicas of the partition, as Isr does
    ("\tOffline: 9", "describe.txt:3: partition orders-1: Offline names broker 9, which is not among its "
     "Replicas 2,3,4"),
    # the tool prints 'true' only; 'yes' was taken for false and the topic planned as if kept
    ("\tMarkedForDeletion: yes", "describe.txt:3: MarkedForDeletion: expected true or false, found 'yes'"),
])
def test_partition_line_cells_that_cannot_be_read_are_named(tmp_path, extra, sentence):
    result = runner.invoke(app, _plan_argv(tmp_path, describe_text=_describe(extra)))
    _one_sentence(result, f"{tmp_path}/{sentence}")


def test_confluent_servers_empty_offline_cell_is_read(tmp_path):
    """``Offline:`` with no broker says no more than Kafka's own line: the inputs pass (to the --master sentence)."""
    result = runner.invoke(app, _plan_argv(tmp_path, describe_text=_describe("\tOffline: \tElr: N/A")))
    _one_sentence(result, "--master: expected local[N], local[*] or spark://host:port, found 'nonsense://x'")


SCENARIO = """\
name: t
duration: 2m
kafka: {version: "3.7"}
cluster: {brokers: [{id: 1}, {id: 2}, {id: 3}]}
topics: [{name: orders, partitions: 3, replication_factor: 3}]
"""


@pytest.mark.parametrize(("old", "new", "sentence"), [
    # YAML 1.1 reads a leading zero as base 8: broker 010 became broker 8, 010 partitions became 8, silently
    ("{id: 1}", "{id: 010}", "s.yaml:4: cluster.brokers[0].id: found 010, which YAML reads as octal, the number 8; "
     "write 10 without the leading zero (or 8, if octal was meant)"),
    ("partitions: 3", "partitions: 017", "s.yaml:5: topics[0].partitions: found 017, which YAML reads as octal, the "
     "number 15; write 17 without the leading zero (or 15, if octal was meant)"),
])
def test_a_number_with_a_leading_zero_is_not_read_as_octal_silently(tmp_path, old, new, sentence):
    (tmp_path / "s.yaml").write_text(SCENARIO.replace(old, new), encoding="utf-8")
    result = runner.invoke(app, ["simulate", str(tmp_path / "s.yaml"), "--out", str(tmp_path / "out")])
    _one_sentence(result, f"{tmp_path}/{sentence}")
    assert not (tmp_path / "out").exists()


def test_a_leading_zero_that_reads_the_same_in_either_base_is_taken(tmp_path):
    """``seed: 00`` and ``seed: 07`` are the same number in base 8 and 10: nothing to refuse."""
    from replicaflow.sim.scenario import load_scenario

    (tmp_path / "s.yaml").write_text(SCENARIO + "seed: 07\n", encoding="utf-8")
    assert load_scenario(tmp_path / "s.yaml").seed == 7


def test_a_log_dirs_broker_beyond_int32_is_named_as_such(tmp_path):
    """LogDirsCommand writes the broker as a Java int: 2^40 was taken and blamed as 'no broker of describe.txt'."""
    argv = _plan_argv(tmp_path)
    doc = json.loads((tmp_path / "logdirs.json").read_text().splitlines()[-1])
    doc["brokers"][0]["broker"] = 2**40
    (tmp_path / "logdirs.json").write_text(json.dumps(doc) + "\n", encoding="utf-8")
    _one_sentence(runner.invoke(app, argv), f"{tmp_path}/logdirs.json:1: brokers[0].broker: expected a non-negative "
                                            "integer of at most 2,147,483,647 (Kafka's int32), found 1099511627776")


def _telemetry(tmp_path, table: str | None = None, **row):
    """A one-broker telemetry folder (tests/pipeline/tele.py) with one more row of ``table``; the sentence of
    ``analyze`` on it, which checks the telemetry before Spark (``--master nonsense://x`` otherwise)."""
    from tests.pipeline.tele import Tele

    t = Tele("c1", "3.7", end_ms=20_000)
    t.broker(0, 1)
    t.partition(0, "a", 0, [1], 1, [1])
    t.add("traffic", 10_000, broker=1, name="ReplicationBytesInPerSec", bytes=100)
    t.offsets(10_000, "a", 0, {1: (5, 5, 50)})
    if table is not None:
        t.add(table, 10_000, **row)
    root = t.write(tmp_path / "tele")
    return runner.invoke(app, ["analyze", str(root), "--out", str(tmp_path / "out"), "--master", "nonsense://x"])


@pytest.mark.parametrize(("table", "row", "sentence"), [
    # the pipeline compares these with fixed words: 'UP' was a broker that is not up, with exit 0
    ("brokers", {"broker": 1, "state": "UP"}, "brokers/part-0.parquet: row 1 of brokers has state 'UP'; "
     "expected one of up, shutting_down, down"),
    ("brokers", {"broker": 1, "state": None}, "brokers/part-0.parquet: row 1 of brokers has state null; "
     "expected one of up, shutting_down, down"),
    ("fetchers", {"broker": 1, "leader": 1, "fetcher_id": 0, "topic": "a", "partition": 0, "action": "junk"},
     "fetchers/part-0.parquet: row 0 of fetchers has action 'junk'; expected one of added, removed, failed"),
    ("log_dirs", {"broker": 1, "log_dir": "/d", "state": "failed"}, "log_dirs/part-0.parquet: row 0 of "
     "log_dirs has state 'failed'; expected one of offline, online"),
    # a meter the pipeline does not know was dropped: its bytes were in no rate
    ("traffic", {"broker": 1, "name": "ReplicationBytesInPerSecond", "bytes": 5}, "traffic/part-0.parquet: "
     "row 1 of traffic has name 'ReplicationBytesInPerSecond'; expected one of ReplicationBytesInPerSec, "
     "ReplicationBytesOutPerSec, ReassignmentBytesInPerSec, ReassignmentBytesOutPerSec"),
    ("configs", {"entity_type": "brokers", "entity": "1", "name": "x", "value": "1"}, "configs/part-0.parquet: "
     "row 0 of configs has entity_type 'brokers'; expected one of broker, topic"),
    # try_cast made these null: the default min ISR (1), no throttle, no throttled replica
    ("configs", {"entity_type": "topic", "entity": "a", "name": "min.insync.replicas", "value": "two"},
     "configs/part-0.parquet: row 0 of configs has min.insync.replicas = 'two'; expected a whole number of "
     "replicas from 1 to 32,767 (null: deleted)"),
    ("configs", {"entity_type": "broker", "entity": "1", "name": "leader.replication.throttled.rate",
                 "value": "5MB/s"}, "configs/part-0.parquet: row 0 of configs has "
     "leader.replication.throttled.rate = '5MB/s'; expected a whole number of bytes/s, 0 or more (Kafka's LONG; "
     "null: deleted)"),
    ("configs", {"entity_type": "topic", "entity": "a", "name": "follower.replication.throttled.replicas",
                 "value": "0-1"}, "configs/part-0.parquet: row 0 of configs has "
     "follower.replication.throttled.replicas = '0-1'; expected 'partition:broker,...' or '*' (Kafka's "
     "ThrottledReplicaListValidator; null: deleted)"),
    # a null member counted an ISR member no broker is
    ("isr", {"topic": "a", "partition": 0, "isr": [1, None], "leader_epoch": 0}, "isr/part-0.parquet: row 1 "
     "of isr has isr [1, None], a list with a null member; every member is a broker id"),
])
def test_telemetry_words_and_configs_the_pipeline_cannot_read_are_named(tmp_path, table, row, sentence):
    _one_sentence(_telemetry(tmp_path, table, **row), f"{tmp_path}/tele/telemetry/{sentence}")


@pytest.mark.parametrize("row", [
    {"entity_type": "topic", "entity": "a", "name": "min.insync.replicas", "value": None},  # deleted
    {"entity_type": "topic", "entity": "a", "name": "follower.replication.throttled.replicas", "value": "0:1, 0:2"},
    {"entity_type": "broker", "entity": "<default>", "name": "retention.ms", "value": "not parsed here"},
])
def test_config_values_kafka_accepts_pass(tmp_path, row):
    _one_sentence(_telemetry(tmp_path, "configs", **row),
                  "--master: expected local[N], local[*] or spark://host:port, found 'nonsense://x'")


@pytest.mark.parametrize("rate", ["0.5B/s", "1.0000005MB/s"])
def test_a_throttle_of_part_of_a_byte_is_refused(tmp_path, rate):
    """Simulated at 0.5 B/s, it was printed as the command's `--throttle 0`, which Kafka's tool takes as a rate of 0."""
    result = runner.invoke(app, [*_plan_argv(tmp_path), "--throttle", rate])
    _one_sentence(result, "--throttle: expected a whole number of bytes/s (kafka-reassign-partitions --throttle takes "
                          f"a long), found '{rate}'")


MOVE_EVENT = "events: [{at: 1m, reassign: {partitions: [{topic: orders, partition: 0, replicas: [2, 3, 1]}]}, %s}]\n"


@pytest.mark.parametrize(("event", "field"), [
    # a throttle is a long of bytes/s: 0.5B/s became the config "0", replication stopped, with exit 0
    (MOVE_EVENT % "throttle: 0.5B/s", "s.yaml:6: events[0].throttle"),
    ("events: [{at: 1m, config: {broker: all, follower.replication.throttled.rate: 0.5B/s}}]\n",
     "s.yaml:6: events[0].config.follower.replication.throttled.rate"),
])
def test_a_scenario_throttle_of_part_of_a_byte_is_refused(tmp_path, event, field):
    (tmp_path / "s.yaml").write_text(SCENARIO + event, encoding="utf-8")
    result = runner.invoke(app, ["simulate", str(tmp_path / "s.yaml"), "--out", str(tmp_path / "out")])
    _one_sentence(result, f"{tmp_path}/{field}: expected a whole number of bytes/s (Kafka's throttle rates are "
                          "longs), found '0.5B/s'")
    assert not (tmp_path / "out").exists()


def test_a_topic_listed_twice_in_the_telemetry_meta_is_named(tmp_path):
    """Partitions were checked against the first entry's count, and the report listed the topic twice."""
    _telemetry(tmp_path)  # writes the folder
    meta_path = tmp_path / "tele" / "telemetry" / "_meta.json"
    meta = json.loads(meta_path.read_text())
    meta["topics"] = [{"name": "a", "partitions": 1}, {"name": "a", "partitions": 5}]
    meta_path.write_text(json.dumps(meta))
    result = runner.invoke(app, ["analyze", str(tmp_path / "tele"), "--out", str(tmp_path / "out"),
                                 "--master", "nonsense://x"])
    _one_sentence(result, f"{meta_path}: topics[1]: topic 'a' is listed twice")


def test_a_version_that_the_cluster_scenarios_events_do_not_run_on_is_named(tmp_path):
    """--version replaced the scenario's release after its events were checked: a cancel_reassignment (KIP-455,
    2.4+) was planned on 2.3, with exit 0."""
    (tmp_path / "c.yaml").write_text(SCENARIO + "events: [{at: 1m, cancel_reassignment: {}}]\n", encoding="utf-8")
    (tmp_path / "p.json").write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "orders", "partition": 0, "replicas": [2, 3, 1]}]}), encoding="utf-8")
    argv = ["plan", "--cluster", str(tmp_path / "c.yaml"), "--reassignment", str(tmp_path / "p.json"),
            "--master", "nonsense://x"]
    _one_sentence(runner.invoke(app, [*argv, "--version", "2.3"]),
                  f"--version 2.3: {tmp_path}/c.yaml:6: events[0].cancel_reassignment: expected no "
                  "cancel_reassignment: Kafka cancels a reassignment from 2.4 (KIP-455, AlterPartitionReassignments), "
                  "this cluster runs 2.3")
    _one_sentence(runner.invoke(app, [*argv, "--version", "2.4"]),
                  "--master: expected local[N], local[*] or spark://host:port, found 'nonsense://x'")


def test_a_describe_line_with_some_tabs_turned_to_spaces_is_named_as_such(tmp_path):
    """Only the line with every tab turned to spaces was named; with one turned, 'Partition: 0  Leader: 1' was one
    cell and the sentence said the line has no 'Leader:'."""
    text = _describe().replace("\tPartition: 1\tLeader: 2", "\tPartition: 1  Leader: 2")
    _one_sentence(runner.invoke(app, _plan_argv(tmp_path, describe_text=text)),
                  f"{tmp_path}/describe.txt:3: expected cells separated by tabs as kafka-topics prints them, found "
                  "spaces; save the tool's output to a file (kafka-topics --describe … > describe.txt)")
