"""Scenario files (docs/scenarios.md): normalized values, Kafka's replica assignment, one-sentence errors."""

from __future__ import annotations

import copy
import json
import textwrap
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from replicaflow.errors import ReplicaflowError
from replicaflow.model.assignment import assign_replicas
from replicaflow.model.version import KafkaVersion
from replicaflow.sim.runner import simulate
from replicaflow.sim.scenario import (
    DEFAULT_START_MS,
    BrokerDownEvent,
    CancelReassignmentEvent,
    ConfigEvent,
    ElectLeadersEvent,
    FailPartitionEvent,
    KafkaSpec,
    ProduceBurstEvent,
    ReassignEvent,
    ReassignPartition,
    SlowNetworkEvent,
    StallFollowerEvent,
    load_scenario,
    parse_scenario,
)

DESIGN_EXAMPLE = """\
name: reassignment-during-bounce
seed: 7
duration: 30m
tick: 100ms               # simulation step
scrape_interval: 10s      # metric samples and ground truth are taken on this grid
start: 2026-01-01T00:00:00Z
kafka:
  version: "3.7"          # behaviour per docs/semantics.md; any X.Y from 0.8 to 4.x
  kip542: false           # reassignment throttles (section 5.2)
  replica_lag_time_max: 30s   # optional overrides of version defaults
  num_replica_fetchers: 1
cluster:
  brokers: 6              # or a list: [{id: 1, rack: a, network_in: 125MB/s, ...}]
  racks: 3
  network_in: 125MB/s
  network_out: 125MB/s
topics:
  - name: orders
    partitions: 12
    replication_factor: 3
    min_insync_replicas: 2
    produce_rate: 6MB/s   # whole topic, spread over partitions
    message_size: 1KiB
    initial_size: 2GiB    # per partition
events:
  - {at: 2m, reassign: {file: plan.json}, throttle: 50MB/s}   # Kafka reassignment JSON, or inline
  - {at: 5m, broker_down: 3}
  - {at: 8m, broker_up: 3}
  - {at: 10m, slow_network: {broker: 2, network_in: 5MB/s, for: 3m}}
  - {at: 12m, fail_partition: {topic: orders, partition: 4, broker: 5, error: storage}}
  - {at: 15m, produce_burst: {topic: orders, rate: 60MB/s, for: 30s}}
  - {at: 20m, verify: {}}          # the operator runs --verify
  - {at: 21m, config: {broker: all, follower.replication.throttled.rate: 10MB/s}}
  - {at: 22m, cancel_reassignment: {}}
"""

PLAN = {"version": 1, "partitions": [
    {"topic": "orders", "partition": 0, "replicas": [4, 5, 6], "log_dirs": ["any", "any", "any"]},
    {"topic": "orders", "partition": 1, "replicas": [5, 6, 4]},
]}


@pytest.fixture
def design_file(tmp_path: Path) -> Path:
    (tmp_path / "plan.json").write_text(json.dumps(PLAN, indent=2))
    path = tmp_path / "scenario.yaml"
    path.write_text(DESIGN_EXAMPLE)
    return path


def test_design_example_normalized(design_file: Path):
    s = load_scenario(design_file)
    assert (s.name, s.seed, s.source) == ("reassignment-during-bounce", 7, str(design_file))
    assert (s.duration_ms, s.tick_ms, s.scrape_interval_ms) == (1_800_000, 100, 10_000)
    assert s.start_ms == 1_767_225_600_000 == DEFAULT_START_MS
    k = s.kafka
    assert (k.version, k.kip542, k.replica_lag_time_max_ms, k.num_replica_fetchers) == ("3.7", False, 30_000, 1)
    assert (k.session_timeout_ms, k.fetch_rtt_ms, k.isr_commit_delay_ms) == (18_000, 50, 0)
    assert (k.replica_lag_max_messages, k.quota_window_samples, k.quota_window_ms) == (4000, 11, 1000)
    assert s.version.release == (3, 7, 0) and s.version.min_isr_capped
    assert s.cluster.broker_ids == [1, 2, 3, 4, 5, 6]
    assert [b.rack for b in s.cluster.brokers] == ["a", "b", "c", "a", "b", "c"]
    assert {(b.network_in_bps, b.network_out_bps) for b in s.cluster.brokers} == {(125e6, 125e6)}
    assert s.cluster.min_insync_replicas == 1
    t = s.topic("orders")
    assert (t.partitions, t.replication_factor, t.min_insync_replicas) == (12, 3, 2)
    assert (t.produce_rate_bps, t.message_size_bytes, t.initial_size_bytes) == (6e6, 1024, 2 * 2**30)
    assert (t.initial_messages, t.partition_rate_bps) == (2_097_152, 500_000.0)
    assert t.assignment[:7] == ((1, 2, 3), (2, 3, 4), (3, 4, 5), (4, 5, 6), (5, 6, 1), (6, 1, 2), (1, 3, 4))
    assert [e.at_ms for e in s.events] == [m * 60_000 for m in (2, 5, 8, 10, 12, 15, 20, 21, 22)]
    reassign, down, up, slow, fail, burst, verify, config, cancel = s.events
    assert reassign == ReassignEvent.model_validate({"kind": "reassign", "at": "2m", "throttle": "50MB/s", "partitions": [
        {"topic": "orders", "partition": 0, "replicas": [4, 5, 6]},
        {"topic": "orders", "partition": 1, "replicas": [5, 6, 4]}]})
    assert reassign.throttle_bps == 50e6 and reassign.partitions[1] == ReassignPartition(
        topic="orders", partition=1, replicas=(5, 6, 4))
    assert (down.kind, down.broker, down.controlled, up.kind, up.broker) == ("broker_down", 3, False, "broker_up", 3)
    assert isinstance(slow, SlowNetworkEvent)
    assert (slow.broker, slow.network_in_bps, slow.network_out_bps, slow.for_ms) == (2, 5e6, None, 180_000)
    assert (fail.topic, fail.partition, fail.broker, fail.error) == ("orders", 4, 5, "storage")
    assert (burst.topic, burst.rate_bps, burst.for_ms, burst.partitions) == ("orders", 60e6, 30_000, None)
    assert verify.kind == "verify"
    assert (config.entity_type, config.entity, config.configs) == (
        "broker", "<default>", (("follower.replication.throttled.rate", "10000000"),))
    assert isinstance(cancel, CancelReassignmentEvent) and cancel.partitions is None


def test_models_are_frozen(design_file: Path):
    s = load_scenario(design_file)
    with pytest.raises(Exception, match="frozen"):
        s.tick_ms = 5  # type: ignore[misc]


def test_defaults_and_every_event_form(tmp_path: Path):
    data = {
        "name": "forms", "duration": "10m",
        "kafka": {"version": "2.4", "kip542": True, "session_timeout": "6s", "fetch_rtt": "20ms",
                  "isr_commit_delay": "30ms"},
        "cluster": {"brokers": [{"id": 10, "rack": "r1", "network_in": "1GB/s"}, {"id": 20}, {"id": 30}],
                    "network_out": "50MB/s", "min_insync_replicas": 2},
        "topics": [{"name": "a", "partitions": 3, "replication_factor": 2},
                   {"name": "b", "partitions": 2, "replication_factor": 3, "assignment": [[30, 20, 10], [10, 20, 30]]}],
        "events": [
            {"at": "9m", "elect_leaders": {}},
            {"at": "1m", "broker_down": {"broker": 20, "controlled": True}},
            {"at": "1m", "stall_follower": {"broker": 10, "topic": "a", "partition": 1, "for": "45s"}},
            {"at": "1m", "stall_follower": {"broker": 30}},
            {"at": "2m", "fail_partition": {"topic": "a", "partition": 2, "broker": 30, "error": "fenced_epoch"}},
            {"at": "3m", "produce_burst": {"topic": "b", "rate": "1MiB/s", "for": "1m", "partitions": [1]}},
            {"at": "4m", "config": {"broker": 10, "leader.reassignment.throttled.rate": "1KiB/s",
                                    "replica.lag.time.max.ms": "20s"}},
            {"at": "4m", "config": {"topic": "a", "min.insync.replicas": 1,
                                    "leader.replication.throttled.replicas": "0:10, 1:20",
                                    "follower.replication.throttled.replicas": None}},
            {"at": "5m", "reassign": {"version": 1, "partitions": [{"topic": "b", "partition": 0,
                                                                    "replicas": [10]}]}},
            {"at": "6m", "cancel_reassignment": {"partitions": [{"topic": "b", "partition": 0}]}},
        ],
    }
    s = parse_scenario(data, tmp_path, "<test>")
    assert s.source == "<test>" and s.seed == 0 and s.start_ms == DEFAULT_START_MS
    assert (s.tick_ms, s.scrape_interval_ms) == (100, 10_000)
    assert s.kafka.replica_lag_time_max_ms == 10_000  # the 2.4 default (KIP-537 raised it to 30 s in 2.5)
    assert (s.kafka.session_timeout_ms, s.kafka.fetch_rtt_ms, s.kafka.isr_commit_delay_ms) == (6_000, 20, 30)
    assert s.version.kip542 and str(s.version) == "2.4 +KIP-542"
    assert [(b.id, b.rack, b.network_in_bps, b.network_out_bps) for b in s.cluster.brokers] == [
        (10, "r1", 1e9, 50e6), (20, None, 125e6, 50e6), (30, None, 125e6, 50e6)]
    assert s.cluster.min_insync_replicas == 2
    assert s.topic("a").assignment == ((10, 20), (20, 30), (30, 10))
    assert s.topic("b").assignment == ((30, 20, 10), (10, 20, 30))
    kinds = [e.kind for e in s.events]
    assert kinds == ["broker_down", "stall_follower", "stall_follower", "fail_partition", "produce_burst", "config",
                     "config", "reassign", "cancel_reassignment", "elect_leaders"]
    down, stall, stall_all, fail, burst, bconf, tconf, reassign, cancel, elect = s.events
    assert isinstance(down, BrokerDownEvent) and down.controlled
    assert isinstance(stall, StallFollowerEvent) and (stall.topic, stall.partition, stall.for_ms) == ("a", 1, 45_000)
    assert (stall_all.topic, stall_all.partition, stall_all.for_ms) == (None, None, None)
    assert isinstance(fail, FailPartitionEvent) and fail.error == "fenced_leader_epoch"
    assert isinstance(burst, ProduceBurstEvent) and (burst.rate_bps, burst.partitions) == (1_048_576.0, (1,))
    assert isinstance(bconf, ConfigEvent) and (bconf.entity_type, bconf.entity) == ("broker", "10")
    assert bconf.configs == (("leader.reassignment.throttled.rate", "1024"), ("replica.lag.time.max.ms", "20000"))
    assert tconf.configs == (("min.insync.replicas", "1"), ("leader.replication.throttled.replicas", "0:10,1:20"),
                             ("follower.replication.throttled.replicas", None))
    assert isinstance(reassign, ReassignEvent) and reassign.throttle_bps is None
    assert isinstance(cancel, CancelReassignmentEvent) and cancel.partitions == (("b", 0),)
    assert isinstance(elect, ElectLeadersEvent) and elect.at_ms == 540_000


def test_events_sorted_by_time_then_file_order(tmp_path: Path):
    data = {"name": "order", "duration": "5m", "kafka": {"version": "3.7"}, "cluster": {"brokers": 3},
            "topics": [{"name": "t", "partitions": 1, "replication_factor": 3}],
            "events": [{"at": "2m", "broker_up": 2}, {"at": "1m", "broker_down": 2}, {"at": "2m", "broker_down": 1},
                       {"at": "2m", "broker_up": 1}]}
    s = parse_scenario(data, tmp_path)
    assert [(e.at_ms, e.kind, e.broker) for e in s.events] == [
        (60_000, "broker_down", 2), (120_000, "broker_up", 2), (120_000, "broker_down", 1), (120_000, "broker_up", 1)]


def test_topic_start_index_is_its_position(tmp_path: Path):
    data = {"name": "idx", "duration": "1m", "kafka": {"version": "3.7"}, "cluster": {"brokers": 4},
            "topics": [{"name": "x", "partitions": 2, "replication_factor": 2},
                       {"name": "y", "partitions": 2, "replication_factor": 2}]}
    s = parse_scenario(data, tmp_path)
    assert s.topic("y").assignment == tuple(tuple(r) for r in assign_replicas([1, 2, 3, 4], 2, 2, start_index=1))
    assert s.topic("y").assignment[0][0] == 2
    with pytest.raises(KeyError):
        s.topic("z")


BASE = yaml.safe_load(DESIGN_EXAMPLE)
BASE["events"][0] = {"at": "2m", "throttle": "50MB/s", "reassign": {"version": 1, "partitions": PLAN["partitions"]}}


def _set(path: str, value):
    def mutate(d):
        keys = [int(k) if k.isdigit() else k for k in path.split("/")]
        target = d
        for k in keys[:-1]:
            target = target[k]
        if value is _DELETE:
            del target[keys[-1]]
        else:
            target[keys[-1]] = value
    return mutate


def _event(ev):
    return lambda d: d["events"].append(ev)


def _move(topic="orders", partition=5, replicas=(1, 2, 3)):
    return lambda d: d["events"][0]["reassign"]["partitions"].append(
        {"topic": topic, "partition": partition, "replicas": list(replicas)})


_DELETE = object()
N = len(BASE["events"])  # index of an appended event

BAD = [
    (_set("foo", 1), "foo: unknown field"),
    (_set("kafka/foo", 1), "kafka.foo: unknown field"),
    (_set("topics/0/colour", "red"), "topics[0].colour: unknown field"),
    (_set("cluster/brokers", [{"id": 1, "speed": 3}]), "cluster.brokers[0].speed: unknown field"),
    (_set("events/1/broker_down", {"broker": 3, "now": True}), "events[1].broker_down.now: unknown field"),
    (_event({"at": "1m", "slow_network": {"broker": 2, "network_in": "5MBs", "for": "1m"}}),
     f"events[{N}].slow_network.network_in: expected a rate like '5MB/s', found '5MBs'"),
    (_set("duration", "30 minutes"), "duration: expected a duration like '30s' or '100ms', found '30 minutes'"),
    (_set("duration", 1800), "duration: expected a duration"),
    (_set("topics/0/message_size", "1KX"), "topics[0].message_size: expected a size like '1MiB'"),
    (_set("topics/0/message_size", "1TiB"), "topics[0].message_size: expected a message size below 2GiB"),
    (_set("topics/0/produce_rate", "-5MB/s"), "topics[0].produce_rate: expected a rate like '5MB/s', found '-5MB/s'"),
    (_set("topics/0/produce_rate", -5), "topics[0].produce_rate: expected a rate like '5MB/s', found -5"),
    (_set("topics/0/initial_size", -1), "topics[0].initial_size: expected a size"),
    (_set("cluster/network_in", "fast"), "cluster.network_in: expected a rate like '5MB/s', found 'fast'"),
    (_set("cluster/network_in", "0B/s"), "cluster.network_in: expected a positive rate like '125MB/s', found '0B/s'"),
    (_set("cluster/brokers", [{"id": 1, "network_out": 0}, {"id": 2}, {"id": 3}]),
     "cluster.brokers[0].network_out: expected a positive rate like '125MB/s', found 0"),
    (_set("cluster/brokers", 3.5), "cluster.brokers: expected a number of brokers or a list of {id: …}, found 3.5"),
    (_set("cluster/brokers", [1, 2, 3]), "cluster.brokers[0]: expected a mapping of fields, found 1"),
    (_set("topics", 5), "topics: expected a list, found 5"),
    (_set("name", ""), "name: expected a non-empty cluster name, found ''"),
    (_set("cluster/log_dirs", ["/d\n[2026-01-01 00:00:00,000] INFO forged"]),
     "cluster.brokers[0].log_dirs[0]: expected a name of printable characters (no newline, tab or control "),
    (_set("cluster/brokers", [{"id": 1, "rack": "a\tb"}, {"id": 2}, {"id": 3}]),
     "cluster.brokers[0].rack: expected a name of printable characters"),
    (_set("name", "a\nb"), "name: expected a cluster name of printable characters (no newline, tab or control "
                           "character), found 'a\\nb'"),
    (_event({"at": "1m", "broker_down": 9}), f"events[{N}].broker_down.broker: expected a broker of the cluster"),
    # the simulator ignored a stop of a stopped broker and a start of a running one: not the run the file says
    (_event({"at": "6m", "broker_down": 3}), f"events[{N}].broker_down.broker: expected a running broker, found "
                                             "broker 3 down since events[1]"),
    (_event({"at": "1m", "broker_up": 2}), f"events[{N}].broker_up.broker: expected a broker that an earlier event "
                                           "stopped, found broker 2 running"),
    (_event({"at": "1m", "slow_network": {"broker": 0, "network_out": "1MB/s", "for": "1m"}}),
     f"events[{N}].slow_network.broker: expected a broker of the cluster"),
    (_event({"at": "1m", "stall_follower": {"broker": 7}}), f"events[{N}].stall_follower.broker"),
    (_set("topics/0/assignment", [[1, 2, 3]] * 11 + [[1, 2, 9]]),
     "topics[0].assignment[11]: expected brokers of the cluster ([1, 2, 3, 4, 5, 6]), found unknown broker 9"),
    (_set("topics/0/assignment", [[1, 2, 3]] * 11 + [[1, 2, 2]]),
     "topics[0].assignment[11]: expected distinct replicas, found [1, 2, 2]"),
    (_set("topics/0/assignment", [[1, 2, 3]] * 3), "topics[0].assignment: expected one replica list per partition"),
    (_move(replicas=(1, 2, 9)), "events[0].reassign.partitions[2].replicas: expected brokers of the cluster"),
    (_move(topic="nope"), "events[0].reassign.partitions[2].topic: expected a topic of the scenario (orders), "
                          "found 'nope'"),
    (_move(partition=12), "events[0].reassign.partitions[2].partition: expected a partition of 'orders' (0..11), "
                          "found 12"),
    (_move(partition=0), "events[0].reassign.partitions[2]: expected each partition once, found orders-0 twice"),
    (_move(replicas=()), "events[0].reassign.partitions[2].replicas: expected at least one replica"),
    (_move(replicas=(4, 4)), "events[0].reassign.partitions[2].replicas: expected distinct replicas, found [4, 4]"),
    (_set("events/0/reassign/version", 2), "events[0].reassign.version: expected reassignment version 1"),
    (_set("events/0/reassign/version", True), "events[0].reassign.version: expected reassignment version 1, found "
                                              "True"),
    (_set("events/0/reassign/partitions/0/log_dirs", ["any"]),
     "events[0].reassign.partitions[0].log_dirs: expected one directory per replica (3), found 1"),
    (_set("events/0/reassign/partitions/0/log_dirs", "any"),
     "events[0].reassign.partitions[0].log_dirs: expected a list of directories or \"any\", one per replica"),
    (_event({"at": "1m", "fail_partition": {"topic": "orders", "partition": 12, "broker": 2, "error": "storage"}}),
     f"events[{N}].fail_partition.partition: expected a partition of 'orders'"),
    # a broker that holds no replica of the partition by then: refused before the run, not at the event's tick
    (_event({"at": "1m", "fail_partition": {"topic": "orders", "partition": 2, "broker": 1, "error": "storage"}}),
     f"events[{N}].fail_partition.broker: expected a broker holding a replica of orders-2 by 1m ([3, 4, 5]), "
     "found 1"),
    (_event({"at": "1m", "fail_partition": {"topic": "orders", "partition": 0, "broker": 4, "error": "storage"}}),
     f"events[{N}].fail_partition.broker: expected a broker holding a replica of orders-0 by 1m ([1, 2, 3]), "
     "found 4"),
    (_event({"at": "1m", "fail_partition": {"topic": "logs", "partition": 0, "broker": 2, "error": "storage"}}),
     f"events[{N}].fail_partition.topic: expected a topic of the scenario"),
    (_event({"at": "1m", "fail_partition": {"topic": "orders", "partition": 0, "broker": 2, "error": "boom"}}),
     f"events[{N}].fail_partition.error: expected one of corrupt_records, fenced_leader_epoch"),
    (_event({"at": "1m", "produce_burst": {"topic": "orders", "rate": "1MB/s", "for": "1s", "partitions": [3, 3]}}),
     f"events[{N}].produce_burst.partitions: expected distinct partitions"),
    # the rate spread over no partition was a ZeroDivisionError traceback at the event's tick
    (_event({"at": "1m", "produce_burst": {"topic": "orders", "rate": "1MB/s", "for": "1s", "partitions": []}}),
     f"events[{N}].produce_burst.partitions: expected at least one partition (leave it out for all), found []"),
    (_event({"at": "1m", "produce_burst": {"topic": "logs", "rate": "1MB/s", "for": "1s"}}),
     f"events[{N}].produce_burst.topic"),
    (_event({"at": "1m", "stall_follower": {"broker": 1, "partition": 0}}),
     f"events[{N}].stall_follower.partition: expected a topic with the partition"),
    (_event({"at": "1m", "cancel_reassignment": {"partitions": [{"topic": "orders", "partition": 40}]}}),
     f"events[{N}].cancel_reassignment.partitions[0].partition: expected a partition of 'orders'"),
    (_event({"at": "1m", "cancel_reassignment": {"partitions": [{"topic": "orders", "partition": 1}], "now": 1}}),
     f"events[{N}].cancel_reassignment.now: unknown field"),
    (_event({"at": "1m", "elect_leaders": {"election_type": "dirty"}}),
     f"events[{N}].elect_leaders.election_type: expected 'preferred' or 'unclean', found 'dirty'"),
    (_event({"at": "1m", "elect_leaders": {"partitions": [{"topic": "orders", "partition": 40}]}}),
     f"events[{N}].elect_leaders.partitions[0].partition: expected a partition of 'orders'"),
    (_event({"at": "31m", "verify": {}}), f"events[{N}].at: expected a time within duration (1800000ms), found 1860000ms"),
    (_event({"at": "soon", "verify": {}}), f"events[{N}].at: expected a duration like '30s'"),
    (_event({"verify": {}}), f"events[{N}].at: required field is missing"),
    (_event({"at": "1m", "explode": {}}), f"events[{N}].explode: unknown field"),
    (_event({"at": "1m"}), f"events[{N}]: expected exactly one event kind"),
    (_event({"at": "1m", "verify": {}, "broker_up": 1}), f"events[{N}]: expected exactly one event kind"),
    (_event({"at": "1m", "broker_up": 1, "throttle": "1MB/s"}), f"events[{N}].throttle: unknown field"),
    (_set("events/0/throttle", "lots"), "events[0].throttle: expected a rate like '5MB/s', found 'lots'"),
    (_set("tick", "300ms"), "scrape_interval: expected a multiple of tick (300ms), found 10000ms"),
    (_set("topics", [BASE["topics"][0], BASE["topics"][0]]), "topics[1].name: expected unique topic names"),
    # TopicCommand / Topic.hasCollision: '.' and '_' are one character in the metric names
    (_set("topics", [{**BASE["topics"][0], "name": "a.b"}, {**BASE["topics"][0], "name": "a_b"}]),
     "topics[1].name: topic 'a_b' collides with topic 'a.b': Kafka refuses names that differ only in '.' and '_'"),
    (_set("cluster/brokers", [{"id": 1}, {"id": 2}, {"id": 1}]), "cluster.brokers[2].id: expected unique broker ids"),
    (_set("topics/0/replication_factor", 7), "topics[0].replication_factor: expected at most the 6 brokers"),
    (_set("topics/0/min_insync_replicas", 0), "topics[0].min_insync_replicas: expected greater than or equal to 1"),
    (_set("cluster/min_insync_replicas", 0), "cluster.min_insync_replicas: expected greater than or equal to 1"),
    (_set("topics/0/partitions", 0), "topics[0].partitions: expected greater than or equal to 1"),
    (_set("kafka/version", "5.0"), "kafka.version: supported releases are 0.8 to 4.x, found '5.0'"),
    # a bug-fix release its line never had (apache/kafka's tags: 3.7.0 to 3.7.2; 0.10.2.0 to 0.10.2.2)
    (_set("kafka/version", "3.7.99"), "kafka.version: Kafka 3.7's releases were 3.7.0, 3.7.1 and 3.7.2, found "
                                      "'3.7.99', which was never released"),
    (_set("kafka/version", "0.10.2.3"), "kafka.version: Kafka 0.10.2's releases were 0.10.2.0, 0.10.2.1 and "
                                        "0.10.2.2, found '0.10.2.3'"),
    (_set("kafka/num_replica_fetchers", 0), "kafka.num_replica_fetchers: expected greater than or equal to 1"),
    # brokers × other brokers × num.replica.fetchers fetcher threads: at the default 1 the brokers are the cause
    (_set("cluster/brokers", [{"id": i} for i in range(1, 1002)]),
     "cluster.brokers: expected at most 1,000 brokers (each fetches from every other: at most 1,000,000 fetcher"),
    (lambda d: (_set("kafka/num_replica_fetchers", 2)(d), _set("cluster/brokers", [{"id": i} for i in range(1, 709)])(d)),
     "kafka.num_replica_fetchers: expected at most 1,000,000 fetcher threads (brokers × other brokers × "
     "num_replica_fetchers 2), found 1,001,112"),
    (_set("kafka/version", _DELETE), "kafka.version: required field is missing"),
    (_set("start", "yesterday"), "start: expected a UTC timestamp like 2026-01-01T00:00:00Z, found 'yesterday'"),
    (_set("source", "x"), "source: unknown field"),
    (_event({"at": "1m", "config": {"broker": "all", "follower.reassignment.throttled.rate": "1MB/s"}}),
     f"events[{N}].config.follower.reassignment.throttled.rate: expected a config of this broker, found a KIP-542"),
    (_event({"at": "1m", "config": {"broker": 9, "leader.replication.throttled.rate": "1MB/s"}}),
     f"events[{N}].config.broker: expected a broker of the cluster"),
    (_event({"at": "1m", "config": {"topic": "logs", "min.insync.replicas": 1}}),
     f"events[{N}].config.topic: expected a topic of the scenario"),
    (_event({"at": "1m", "config": {"topic": "orders", "leader.replication.throttled.replicas": "0:1,x"}}),
     f"events[{N}].config.leader.replication.throttled.replicas: expected 'partition:broker,...' or '*', found item"),
    (_event({"at": "1m", "config": {"topic": "orders", "leader.replication.throttled.replicas": "0:9"}}),
     f"events[{N}].config.leader.replication.throttled.replicas: expected a broker of the cluster"),
    (_event({"at": "1m", "config": {"topic": "orders", "bogus.config": 1}}), f"events[{N}].config.bogus.config: unknown"),
    (_event({"at": "1m", "config": {"topic": "orders", "leader.replication.throttled.rate": "1MB/s"}}),
     f"events[{N}].config.leader.replication.throttled.rate: expected a broker config, found it set on a topic"),
    (_event({"at": "1m", "config": {"broker": 1, "follower.replication.throttled.rate": "1MB"}}),
     f"events[{N}].config.follower.replication.throttled.rate: expected a rate like '5MB/s', found '1MB'"),
    (_event({"at": "1m", "config": {"broker": 1, "min.insync.replicas": 0}}),
     f"events[{N}].config.min.insync.replicas: expected a whole number of replicas from 1 to 32,767"),
    (_event({"at": "1m", "config": {"broker": 1}}), f"events[{N}].config: expected at least one config next to 'broker', found none"),
    (_set("topics", []), "topics: expected at least 1 item, found 0"),
    (_event({"at": "1m", "config": {"follower.replication.throttled.rate": "1MB/s"}}),
     f"events[{N}].config: expected exactly one of 'broker' or 'topic'"),
]


@pytest.mark.parametrize(("mutate", "expected"), BAD, ids=[e.split(":")[0] for _, e in BAD])
def test_bad_input_names_the_field(tmp_path: Path, mutate, expected):
    data = copy.deepcopy(BASE)
    mutate(data)
    with pytest.raises(ReplicaflowError) as info:
        parse_scenario(data, tmp_path, "scenario.yaml")
    message = str(info.value)
    first = message.splitlines()[1].strip() if "\n" in message else message
    assert first.startswith(f"scenario.yaml: {expected}"), message


def test_yaml_syntax_error_names_file_and_line(tmp_path: Path):
    path = tmp_path / "broken.yaml"
    path.write_text("name: x\nduration: 1m\ntopics:\n  - name: [unclosed\n")
    with pytest.raises(ReplicaflowError, match=rf"^{path}:\d+: invalid YAML"):
        load_scenario(path)


@pytest.mark.parametrize(("written", "line", "field"), [
    ("start: 2026-01-01T00:00:00+25:00", 3, "start"),  # datetime.timezone refuses an offset of 24 h or more
    ("start: 2026-02-30", 3, "start"),
    ("events: [{at: 1m, broker_down: {broker: 1}}, {at: 2026-13-01, broker_up: {broker: 1}}]", 4, "events[1].at"),
])
def test_a_date_yaml_cannot_convert_names_its_line_and_field(tmp_path: Path, written, line, field):
    """PyYAML types `2026-02-30` as a timestamp and then fails in Python's datetime: the sentence names the field,
    not Python's words (`offset must be a timedelta strictly between -timedelta(hours=24) …`)."""
    path = tmp_path / "s.yaml"
    path.write_text("name: x\nduration: 2m\n" + (written if line == 3 else "start: 2026-01-01T00:00:00Z") + "\n"
                    + (written + "\n" if line == 4 else "")
                    + "kafka: {version: '3.7'}\ncluster: {brokers: 3}\n"
                    "topics: [{name: a, partitions: 1, replication_factor: 1}]\n")
    value = written.split(": ", 1)[1] if line == 3 else "2026-13-01"
    with pytest.raises(ReplicaflowError) as info:
        load_scenario(path)
    assert str(info.value) == f"{path}:{line}: {field}: '{value}' is no valid date and time"


def test_a_scenario_in_utf16_without_byte_order_mark_is_named(tmp_path: Path):
    """A scenario is ours to define, UTF-8 only (yamldoc.read_text): UTF-16 without a BOM is named as such, not
    read as text with a NUL between characters."""
    path = tmp_path / "s.yaml"
    path.write_bytes("name: x\nduration: 1m\n".encode("utf-16-le"))
    with pytest.raises(ReplicaflowError) as info:
        load_scenario(path)
    assert str(info.value) == (f"{path}: the scenario file is UTF-16LE without a byte-order mark (a NUL byte beside "
                               "every character); save it as UTF-8")


@pytest.mark.parametrize(("version", "mutate", "expected"), [
    # LogConfig of 0.8.1.1 has no min.insync.replicas, KafkaConfig neither (KAFKA-1555 and KAFKA-1028: 0.8.2)
    ("0.8.1", _set("topics/0/min_insync_replicas", 2),
     "topics[0].min_insync_replicas: expected no min ISR: Kafka has min.insync.replicas from 0.8.2, this cluster "
     "runs 0.8.1"),
    ("0.8.1", _set("cluster/min_insync_replicas", 2), "cluster.min_insync_replicas: expected no min ISR"),
    ("0.8.1", _event({"at": "1m", "config": {"topic": "orders", "unclean.leader.election.enable": "false"}}),
     f"events[{N}].config.unclean.leader.election.enable: expected a config of this release, found "
     "unclean.leader.election.enable, which Kafka has from 0.8.2 (this cluster runs 0.8.1)"),
    # AlterPartitionReassignments (KIP-455) first exists in 2.4.0's ApiKeys
    ("2.3", _event({"at": "3m", "cancel_reassignment": {}}),
     f"events[{N}].cancel_reassignment: expected no cancel_reassignment: Kafka cancels a reassignment from 2.4 "
     "(KIP-455, AlterPartitionReassignments), this cluster runs 2.3"),
])
def test_configs_and_events_a_release_does_not_have_are_refused(tmp_path: Path, version, mutate, expected):
    data = copy.deepcopy(BASE)
    data["kafka"]["version"] = version
    data["events"] = [e for e in data["events"] if "reassign" not in e]  # a throttle needs 0.10.1
    data["events"].extend({"at": f"{k + 1}s", "produce_burst": {"topic": "orders", "rate": "1MB/s", "for": "1s"}}
                          for k in range(N - len(data["events"])))
    mutate(data)
    with pytest.raises(ReplicaflowError) as info:
        parse_scenario(data, tmp_path, "scenario.yaml")
    assert expected in str(info.value), str(info.value)


@pytest.mark.parametrize("version", ["0.8.2", "2.4"])
def test_the_same_configs_and_events_from_their_release(tmp_path: Path, version):
    data = copy.deepcopy(BASE)
    data["kafka"]["version"] = version
    data["events"] = [{"at": "1m", "config": {"topic": "orders", "unclean.leader.election.enable": "false"}}]
    if version == "2.4":
        data["events"].append({"at": "3m", "cancel_reassignment": {}})
    data["topics"][0]["min_insync_replicas"] = 2
    assert parse_scenario(data, tmp_path, "scenario.yaml").kafka.version == version


def test_missing_scenario_file(tmp_path: Path):
    with pytest.raises(ReplicaflowError, match=rf"^{tmp_path / 'nope.yaml'}: scenario file does not exist"):
        load_scenario(tmp_path / "nope.yaml")


def test_missing_reassignment_file_names_the_path(design_file: Path):
    (design_file.parent / "plan.json").unlink()
    with pytest.raises(ReplicaflowError) as info:
        load_scenario(design_file)
    assert str(info.value) == (f"{design_file}:26: events[0].reassign.file: "
                               f"{design_file.parent / 'plan.json'}: reassignment file does not exist")


def test_reassignment_json_with_a_key_twice_names_file_line_and_key(design_file: Path):
    (design_file.parent / "plan.json").write_text('{"version": 1,\n "partitions": [\n  {"topic": "orders", '
                                                  '"topic": "payments", "partition": 0, "replicas": [1, 2]}\n]}\n')
    with pytest.raises(ReplicaflowError) as info:
        load_scenario(design_file)
    assert str(info.value) == (f"{design_file}:26: events[0].reassign.file: {design_file.parent / 'plan.json'}:3: "
                               "invalid JSON (the object starting on this line has the key 'topic' twice; give each "
                               "key once)")


def test_invalid_reassignment_json_names_file_and_line(design_file: Path):
    (design_file.parent / "plan.json").write_text('{"version": 1,\n "partitions": [\n  {"topic": orders}\n]}\n')
    with pytest.raises(ReplicaflowError) as info:
        load_scenario(design_file)
    assert str(info.value) == (f"{design_file}:26: events[0].reassign.file: {design_file.parent / 'plan.json'}:3: "
                               "invalid JSON (Expecting value)")


def test_pasted_generate_output_as_reassignment_file_is_named(design_file: Path):
    """`kafka-reassign-partitions --generate` prints two headers and two JSON lines (generateAssignment)."""
    (design_file.parent / "plan.json").write_text('Current partition replica assignment\n{"version":1,"partitions":[]}'
                                                  '\n\nProposed partition reassignment configuration\n'
                                                  '{"version":1,"partitions":[]}\n')
    with pytest.raises(ReplicaflowError) as info:
        load_scenario(design_file)
    assert str(info.value) == (f"{design_file}:26: events[0].reassign.file: {design_file.parent / 'plan.json'}:4: "
                               "expected the reassignment JSON, found the printed output of kafka-reassign-partitions "
                               "--generate; save only the JSON line under 'Proposed partition reassignment "
                               "configuration'")


def test_bad_partition_in_reassignment_file_names_the_file(design_file: Path):
    plan = copy.deepcopy(PLAN)
    plan["partitions"][1]["replicas"] = [5, 5]
    (design_file.parent / "plan.json").write_text(json.dumps(plan))
    with pytest.raises(ReplicaflowError) as info:
        load_scenario(design_file)
    assert str(info.value) == (f"{design_file.parent / 'plan.json'}:1: partitions[1].replicas: "
                               "expected distinct replicas, found [5, 5]")
    plan["partitions"][1] = {"topic": "orders", "partition": "one", "replicas": [5]}
    (design_file.parent / "plan.json").write_text(json.dumps(plan))
    with pytest.raises(ReplicaflowError, match=r"plan.json:1: partitions\[1\].partition: expected a valid integer"):
        load_scenario(design_file)


def test_not_a_mapping(tmp_path: Path):
    path = tmp_path / "list.yaml"
    path.write_text(textwrap.dedent("""\
        - a
        - b
    """))
    with pytest.raises(ReplicaflowError, match=rf"^{path}:1: expected a mapping of scenario fields, found list"):
        load_scenario(path)
    path.write_text("# nothing yet\n")  # YAML's null: the sentence said 'found NoneType'
    with pytest.raises(ReplicaflowError, match=r"expected a mapping of scenario fields, found nothing \(the file is "
                                               r"empty or only comments\)$"):
        load_scenario(path)


def test_name_defaults_to_file_stem(tmp_path: Path):
    path = tmp_path / "my-story.yaml"
    path.write_text("duration: 1m\nkafka: {version: '1.1'}\ncluster: {brokers: 1}\n"
                    "topics: [{name: t, partitions: 1, replication_factor: 1}]\n")
    s = load_scenario(path)
    assert s.name == "my-story" and s.events == () and s.kafka.replica_lag_time_max_ms == 10_000


@pytest.mark.parametrize("path", sorted((Path(__file__).resolve().parents[2] / "scenarios").glob("*.yaml")),
                         ids=lambda p: p.name)
def test_shipped_scenarios_load(path: Path):
    s = load_scenario(path)
    assert s.topics and s.duration_ms > 0 and all(e.at_ms <= s.duration_ms for e in s.events)


@pytest.mark.parametrize(("version", "lag_ms"), [("0.8.2", 10_000), ("2.4", 10_000), ("2.5", 30_000), ("4.1", 30_000)])
def test_replica_lag_default_follows_the_release(version, lag_ms):
    assert KafkaSpec.model_validate({"version": version}).replica_lag_time_max_ms == lag_ms
    assert KafkaSpec.model_validate({"version": version, "replica_lag_time_max": "12s"}).replica_lag_time_max_ms == 12_000


def test_a_scenario_knows_its_telemetry_rows_before_it_runs(tmp_path):
    """``Scenario.telemetry_rows``, which `run` and `demo` start their JVM with (a short run is compiled by
    C1 alone, pipeline/session.py): one ``replica_offsets`` row per replica per scrape, which is what the
    simulator writes for a scenario that moves no replica."""
    scenario = load_scenario(Path(__file__).resolve().parents[2] / "scenarios" / "kip461-after.yaml")
    simulate(scenario, tmp_path / "sim")
    written = pq.read_table(tmp_path / "sim" / "telemetry" / "replica_offsets").num_rows
    assert scenario.telemetry_rows == written == 2790
    assert scenario.replicas * (scenario.duration_ms // scenario.scrape_interval_ms + 1) == 2790


def test_a_failed_follower_may_be_a_replica_a_reassignment_added_before(tmp_path: Path):
    """orders-0 starts on brokers 1, 2, 3; the reassignment at 2m adds 4, 5, 6: broker 4 may fail it from then
    (docs/semantics.md §4; the same event at 1m is refused, BAD above). checks.check_failed_followers."""
    data = copy.deepcopy(BASE)
    data["events"].append({"at": "3m", "fail_partition": {"topic": "orders", "partition": 0, "broker": 4,
                                                           "error": "storage"}})
    scenario = parse_scenario(data, tmp_path, "scenario.yaml")
    assert [(e.at_ms, e.broker) for e in scenario.events if e.kind == "fail_partition"] == [(180_000, 4),
                                                                                          (720_000, 5)]


def test_a_bug_fix_release_that_never_existed_names_the_yaml_line(tmp_path: Path):
    """Kafka 3.7's line ended with 3.7.2: `version: "3.7.99"` is a typo, refused with its line and the line's
    releases, as `3.10` is; a release written without its bug fix (3.7) and every real one are accepted."""
    path = tmp_path / "s.yaml"
    text = ("duration: 1m\nkafka:\n  version: '{}'\ncluster: {{brokers: 1}}\n"
            "topics: [{{name: t, partitions: 1, replication_factor: 1}}]\n")
    path.write_text(text.format("3.7.99"))
    with pytest.raises(ReplicaflowError) as info:
        load_scenario(path)
    assert str(info.value) == (f"{path}:3: kafka.version: Kafka 3.7's releases were 3.7.0, 3.7.1 and 3.7.2, found "
                               "'3.7.99', which was never released")
    for version in ("3.7", "3.7.2", "0.8.1.1", "0.11.0.3", "2.6.3", "4.1.1"):
        path.write_text(text.format(version))
        assert load_scenario(path).kafka.version == str(KafkaVersion.parse(version))


def test_a_fail_partition_refused_when_it_comes_names_its_yaml_line(tmp_path: Path):
    """Whether a fail_partition's broker is a follower depends on the run (a leader cannot fail to fetch from
    itself, docs/semantics.md §4), so it is refused when the event comes: the sentence names the event's line and
    its place in the file, as the loader's problems do, not its place in time order (events[0] was the
    broker_down written above it) and no line."""
    path = tmp_path / "s.yaml"
    path.write_text("duration: 10s\nkafka: {version: '2.3'}\ncluster: {brokers: 2}\n"
                    "topics: [{name: t, partitions: 1, replication_factor: 2, assignment: [[1, 2]]}]\n"
                    "events:\n  - {at: 5s, broker_down: 2}\n"
                    "  - {at: 1s, fail_partition: {topic: t, partition: 0, broker: 1, error: unexpected}}\n")
    with pytest.raises(ReplicaflowError) as info:
        simulate(path, tmp_path / "out")
    assert str(info.value) == f"{path}:7: events[1].fail_partition: broker 1 is not a follower of t-0 at 1000ms"
