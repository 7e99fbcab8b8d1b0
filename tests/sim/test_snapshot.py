"""`simulate --logs` also writes what an operator would have collected: `kafka-topics --describe` at the
start and the end, and `kafka-log-dirs --describe` (sim/snapshot.py, telemetry/toolformat.py).

Each release's form is the one of Kafka's ``TopicCommand.TopicDescription/PartitionDescription
.printDescription`` (ZooKeeper tool ≤ 2.1 prints ``Leader: -1``; 2.4 adds spaces after the colons;
2.6 the reassignment columns; 2.8 ``TopicId``; 3.8 ``Elr``) and ``LogDirsCommand.formatAsJson`` (1.0+).
The snapshot is read back by the operator-side readers in ingest/ and must equal the cluster state.
"""

from __future__ import annotations

import pytest

from replicaflow.ingest.log_dirs_command import parse_log_dirs
from replicaflow.ingest.topic_command import parse_topic_describe
from replicaflow.model.version import KafkaVersion
from replicaflow.sim.runner import DESCRIBE_END, DESCRIBE_START, LOG_DIRS_END, SNAPSHOTS, run_engine, simulate
from replicaflow.sim.scenario import load_scenario
from replicaflow.telemetry.io import TelemetryWriter
from replicaflow.telemetry.toolformat import PartitionRow, replication_factor

SCENARIO = """\
name: snap
seed: 3
duration: 2m
tick: 100ms
scrape_interval: 10s
kafka: {{version: "{version}"}}
cluster: {{brokers: 4}}
topics:
  - {{name: orders, partitions: 3, replication_factor: 3, min_insync_replicas: 2, produce_rate: 3MB/s,
      message_size: 1KiB, initial_size: 400MB}}
events:
  - {{at: 10s, reassign: {{version: 1, partitions: [{{topic: orders, partition: 0, replicas: [4, 2, 3]}}]}},
      throttle: 1MB/s}}
  - {{at: 30s, broker_down: 3}}
"""


def _run(tmp_path, version: str):
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO.format(version=version))
    scenario = load_scenario(path)
    snaps: dict[str, str] = {}
    engine = run_engine(scenario, TelemetryWriter(scenario.name), snapshots=snaps)
    return engine, snaps


@pytest.mark.parametrize("version", ["0.10.2", "2.2", "2.4", "2.6", "2.8", "3.8", "4.0"])
def test_describe_at_the_end_reads_back_as_the_cluster_state(tmp_path, version):
    engine, snaps = _run(tmp_path, version)
    s = engine.s
    snap = parse_topic_describe(snaps[DESCRIBE_END], DESCRIBE_END)
    # orders-0, the first partition, is moving 1 -> 4: up to 2.4 its four replicas, from 2.5 less the one being added
    assert snap.topics["orders"].partition_count == 3
    assert snap.topics["orders"].replication_factor == (4 if version in ("0.10.2", "2.2", "2.4") else 3)
    assert snap.topics["orders"].configs.get("min.insync.replicas") == "2"
    assert (snap.topics["orders"].topic_id is not None) == (version in ("2.8", "3.8", "4.0"))
    for p in range(s.n_partitions):
        topic, number = s.tp(p)
        got = snap.partitions[topic, number]
        leader = s.leader_id(p)
        assert got.leader == (None if leader < 0 else leader)
        assert list(got.replicas) == s.replica_ids(p) and list(got.isr) == s.replica_ids(p, s.in_isr[p])
    # orders-0 moves 400MB at 1MB/s: still reassigning after 2 minutes, broker 3 is down and out of the ISR
    moving = snap.partitions["orders", 0]
    assert 3 not in moving.isr
    if version in ("2.6", "2.8", "3.8", "4.0"):
        assert (moving.adding, moving.removing) == ((4,), (1,))
    else:
        assert (moving.adding, moving.removing) == ((), ())  # the column does not exist before 2.6
    line = next(x for x in snaps[DESCRIBE_END].splitlines() if x.startswith("Topic"))
    assert line.startswith("Topic: orders" if version >= "2.4" else "Topic:orders")


@pytest.mark.parametrize("version, adding, removing, expected", [
    ("2.4", (4,), (1,), 4), ("2.5", (4,), (1,), 3), ("2.6", (4,), (1,), 3),
    ("2.5", (4,), (), 4), ("2.6", (4,), (), 3),  # a replica added, none removed (a replication factor raised)
    ("2.6", (), (), 4), ("3.8", (9,), (8,), 4)])  # no move; a move whose replicas are all gone from the list
def test_replication_factor_is_what_each_release_of_kafka_topics_prints(version, adding, removing, expected):
    """TopicCommand.getReplicationFactor: the first partition's replicas (up to 2.4); from 2.5, less the replicas
    being added while its reassignment is in progress, which 2.5 tells by a replica being removed still in the
    list and 2.6+ (TopicCommand.isReassignmentInProgress) by one being added or removed. The simulator printed the
    replicas less the removing ones, which no release does."""
    row = PartitionRow("t", 0, 1, (1, 2, 3, 4), (1, 2, 3), adding, removing)
    assert replication_factor(KafkaVersion.parse(version), row) == expected


def test_offline_partition_prints_as_each_release_does(tmp_path):
    """ZooKeeper's tool prints the znode's leader -1; the admin client (2.2+) prints none."""
    text = SCENARIO.replace("replication_factor: 3", "replication_factor: 1").replace(
        "min_insync_replicas: 2", "min_insync_replicas: 1").replace("replicas: [4, 2, 3]", "replicas: [4]")
    text = text.replace("broker_down: 3", "broker_down: 1")
    for version, shown in (("1.1", "Leader: -1"), ("2.2", "Leader: none")):
        path = tmp_path / f"s{version}.yaml"
        path.write_text(text.format(version=version))
        scenario = load_scenario(path)
        snaps: dict[str, str] = {}
        engine = run_engine(scenario, TelemetryWriter(scenario.name), snapshots=snaps)
        offline = [p for p in range(engine.s.n_partitions) if engine.s.leader_id(p) < 0]
        assert offline, "broker 1 led a partition of RF 1"
        topic, number = engine.s.tp(offline[0])
        line = next(x for x in snaps[DESCRIBE_END].splitlines() if f"\tPartition: {number}\t" in x)
        assert shown in line
        assert parse_topic_describe(snaps[DESCRIBE_END], "d").partitions[topic, number].leader is None


def test_log_dirs_sizes_are_the_replicas_bytes_and_down_brokers_do_not_answer(tmp_path):
    engine, snaps = _run(tmp_path, "3.7")
    s = engine.s
    rows = parse_log_dirs(snaps[LOG_DIRS_END], LOG_DIRS_END)
    assert {r.broker for r in rows} == {1, 2, 4}  # broker 3 is down at the end
    size = {(r.broker, r.topic, r.partition): r.size_bytes for r in rows}
    for p in range(s.n_partitions):
        topic, number = s.tp(p)
        for k, b in enumerate(s.rbi[p]):
            broker = int(s.broker_ids[b]) if b >= 0 else None
            if broker in (1, 2, 4):
                assert size[broker, topic, number] == int(s.log_leo[p, k] * s.msg_size[p])
    # the adding replica on broker 4 holds part of the 400MB + 2 minutes of growth, the leader all of it
    assert 0 < size[4, "orders", 0] < size[2, "orders", 0]


def test_start_snapshot_has_no_reassignment_and_no_log_dirs_before_1_0(tmp_path):
    _, snaps = _run(tmp_path, "0.10.2")
    assert LOG_DIRS_END not in snaps
    start = parse_topic_describe(snaps[DESCRIBE_START], DESCRIBE_START)
    assert all(len(p.isr) == 3 for p in start.partitions.values())


def test_simulate_with_logs_writes_the_snapshots_beside_the_logs(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO.format(version="3.7"))
    out = simulate(path, tmp_path / "out", logs=True)
    assert sorted(p.name for p in (out / SNAPSHOTS).iterdir()) == sorted([DESCRIBE_START, DESCRIBE_END, LOG_DIRS_END])
    assert not (simulate(path, tmp_path / "plain") / SNAPSHOTS).exists()
