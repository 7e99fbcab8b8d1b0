"""Golden broker log lines per release family, against the exact strings of docs/semantics.md §7."""

from __future__ import annotations

import pytest

from replicaflow.model.version import KafkaVersion
from replicaflow.telemetry.log_lines import format_ts, topic_id
from replicaflow.telemetry.logformat import render_event, render_logs, write_logs

T = 1698412345678  # 2023-10-27 13:12:25,678 UTC
TS = "[2023-10-27 13:12:25,678]"
PREFIX = "[Partition orders-3 broker=1] "
OLD_PREFIX = "Partition [orders,3] on broker 1: "


def v(text: str) -> KafkaVersion:
    return KafkaVersion.parse(text)


def one(event: dict, version: str) -> tuple[str, str]:
    lines = render_event({"ts_ms": T, "broker": 1, **event}, v(version))
    assert len(lines) == 1, lines
    return lines[0]


def message(event: dict, version: str, logger: str = "kafka.cluster.Partition", level: str = "INFO") -> str:
    """The message part of the single line, checking the layout around it."""
    _, line = one(event, version)
    head, tail = f"{TS} {level} ", f" ({logger})"
    assert line.startswith(head) and line.endswith(tail), line
    return line[len(head):-len(tail)]


SHRINK = {"kind": "isr_shrink", "topic": "orders", "partition": 3, "old_isr": [1, 2, 3], "new_isr": [1, 2],
          "hw": 150, "leo": 150, "out_of_sync": [{"broker": 3, "leo": 132, "last_caught_up_ms": 1698412345678}]}


def test_timestamp_layout_is_utc_with_comma_millis():
    assert format_ts(0) == "1970-01-01 00:00:00,000"
    assert format_ts(T) == "2023-10-27 13:12:25,678"


@pytest.mark.parametrize("version", ["0.9", "0.10.2", "0.11", "1.0", "1.1", "2.1"])
def test_shrink_up_to_2_1_has_no_details(version):
    """Partition.maybeShrinkIsr: 0.10 names the partition again ([t,p]); 0.11 drops it."""
    prefix = OLD_PREFIX if version.startswith("0.") else PREFIX
    again = "for partition [orders,3] " if version in ("0.9", "0.10.2") else ""
    assert message(SHRINK, version) == prefix + f"Shrinking ISR {again}from 1,2,3 to 1,2"


def test_expand_0_10_names_the_topic_partition():
    """Partition.maybeExpandIsr at 0.10.2.0: `Expanding ISR for partition $topicPartition from ...` (t-p)."""
    assert message(EXPAND, "0.10.2") == OLD_PREFIX + "Expanding ISR for partition orders-3 from 1,2 to 1,2,3"


@pytest.mark.parametrize("version", ["2.2", "2.4", "2.7", "2.8", "3.0", "3.3", "3.5"])
def test_shrink_2_2_to_3_5(version):
    assert message(SHRINK, version) == PREFIX + (
        "Shrinking ISR from 1,2,3 to 1,2. Leader: (highWatermark: 150, endOffset: 150). "
        "Out of sync replicas: (brokerId: 3, endOffset: 132).")


def test_shrink_3_6_adds_last_caught_up_and_unknowns():
    assert message(SHRINK, "3.6") == PREFIX + (
        "Shrinking ISR from 1,2,3 to 1,2. Leader: (highWatermark: 150, endOffset: 150). "
        "Out of sync replicas: (brokerId: 3, endOffset: 132, lastCaughtUpTimeMs: 1698412345678).")
    two = {**SHRINK, "new_isr": [1], "out_of_sync": [{"broker": 2, "leo": 140, "last_caught_up_ms": 5},
                                                      {"broker": 3, "leo": None, "last_caught_up_ms": None}]}
    assert message(two, "3.7").endswith(
        "Out of sync replicas: (brokerId: 2, endOffset: 140, lastCaughtUpTimeMs: 5) "
        "(brokerId: 3, endOffset: unknown, lastCaughtUpTimeMs: unknown).")


def test_shrink_end_offset_unknown_only_from_3_0():
    unknown = {**SHRINK, "out_of_sync": [{"broker": 3, "leo": None}]}
    assert message(unknown, "3.0").endswith("(brokerId: 3, endOffset: unknown).")
    assert message(unknown, "2.8").endswith("(brokerId: 3, endOffset: -1).")


EXPAND = {"kind": "isr_expand", "topic": "orders", "partition": 3, "old_isr": [1, 2], "new_isr": [1, 2, 3]}


@pytest.mark.parametrize("version", ["1.0", "2.4", "2.7"])
def test_expand_up_to_2_7(version):
    assert message(EXPAND, version) == PREFIX + "Expanding ISR from 1,2 to 1,2,3"


@pytest.mark.parametrize("version", ["2.8", "3.3", "3.6", "4.0"])
def test_no_expand_line_from_2_8(version):
    assert render_event({"ts_ms": T, "broker": 1, **EXPAND}, v(version)) == []


def updated(isr, epoch=7, under=False):
    return {"kind": "isr_updated", "topic": "orders", "partition": 3, "isr": isr, "partition_epoch": epoch,
            "under_min_isr": under}


def test_isr_updated_per_family():
    assert message(updated([1, 2, 3]), "3.5") == PREFIX + "ISR updated to 1,2,3  and version updated to 7"
    assert message(updated([1, 2], under=True), "3.6") == \
        PREFIX + "ISR updated to 1,2 (under-min-isr) and version updated to 7"
    for version in ("2.8", "3.0"):
        assert message(updated([1, 2], under=True), version) == \
            PREFIX + "ISR updated to 1,2 and version updated to [7]"
    assert message(updated([1, 2]), "2.7") == PREFIX + "ISR updated from AlterIsr to 1,2 and version updated to [7]"
    for version in ("2.4", "2.5", "2.6"):
        assert message(updated([1, 2]), version) == PREFIX + "ISR updated to [1,2] and zkVersion updated to [7]"
    # Partition.updateIsr logged the ZooKeeper write at TRACE before 2.4 (2.3.0: trace("ISR updated to ..."))
    assert message(updated([1, 2]), "2.3", level="TRACE") == \
        PREFIX + "ISR updated to [1,2] and zkVersion updated to [7]"


def test_failed_isr_write_zk_era():
    ev = {"kind": "isr_update_failed", "topic": "orders", "partition": 3, "partition_epoch": 7}
    # Partition.updateIsr: `[%d]` up to 2.3.0, `$zkVersion` from 2.4.0
    assert message(ev, "2.4") == PREFIX + "Cached zkVersion 7 not equal to that in zookeeper, skip updating ISR"
    for version in ("2.2", "2.3"):
        assert message(ev, version) == PREFIX + "Cached zkVersion [7] not equal to that in zookeeper, skip updating ISR"
    with pytest.raises(ValueError, match="ZooKeeper-era"):
        render_event({"ts_ms": T, "broker": 1, **ev}, v("2.8"))


FAILED = {"kind": "partition_failed", "broker": 2, "leader": 1, "fetcher_id": 0, "topic": "orders", "partition": 3}
DIED = {"kind": "thread_died", "broker": 2, "leader": 1, "fetcher_id": 0, "topic": "orders", "partition": 3,
        "offset": 1234}


def test_partition_marked_failed_from_2_3():
    assert message(FAILED, "2.3", "kafka.server.ReplicaFetcherThread", "WARN") == \
        "[ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] Partition orders-3 marked as failed"
    with pytest.raises(ValueError, match="2.3"):
        render_event({"ts_ms": T, **FAILED}, v("2.2"))


def test_thread_death_up_to_2_2_with_exception_line():
    lines = render_event({"ts_ms": T, **DIED}, v("2.2"))
    assert [p for p, _ in lines] == ["broker-2/server.log"] * len(lines)
    assert lines[0][1] == (f"{TS} ERROR [ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] Error due to "
                           "(kafka.server.ReplicaFetcherThread)")
    assert lines[1][1] == "kafka.common.KafkaException: Error processing data for partition orders-3 offset 1234"
    assert all(line.startswith("\tat ") for _, line in lines[2:])
    with pytest.raises(ValueError, match="partition_failed"):
        render_event({"ts_ms": T, **DIED}, v("2.3"))


def test_fetcher_manager_lines():
    """AbstractFetcherManager.addFetcherForPartitions: up to 2.0 each partition with its leader's
    BrokerEndPoint (the case class's own toString), 2.1-2.4 the leader's BrokerEndPoint (its toString
    `BrokerEndPoint(id=L, host=h:p)`, new in 2.1) once for the line, 2.5+ the leader's id; each partition's value an
    OffsetAndEpoch (2.1-2.7), an InitialFetchState (2.8+, the topic id first from 3.1)."""
    added = {"kind": "fetcher_added", "broker": 2, "leader": 1, "fetcher_id": 0,
             "partitions": [["orders", 3, 1200], ["orders", 4, 0]]}
    removed = {"kind": "fetcher_removed", "broker": 2, "partitions": [["orders", 3], ["orders", 4]]}
    logger = "kafka.server.ReplicaFetcherManager"
    assert message(added, "2.0", logger) == (
        "[ReplicaFetcherManager on broker 2] Added fetcher for partitions List([orders-3, initOffset 1200 to broker "
        "BrokerEndPoint(1,broker-1,9092)] , [orders-4, initOffset 0 to broker BrokerEndPoint(1,broker-1,9092)] )")
    for release in ("2.1", "2.4"):
        assert message(added, release, logger).startswith(
            "[ReplicaFetcherManager on broker 2] Added fetcher to broker BrokerEndPoint(id=1, host=broker-1:9092) "
            "for partitions ")
    assert message(added, "2.5", logger).startswith(
        "[ReplicaFetcherManager on broker 2] Added fetcher to broker 1 for partitions ")
    added["leader_epoch"] = 7
    assert message(added, "2.5", logger).endswith(
        "Map(orders-3 -> (offset=1200, leaderEpoch=7), orders-4 -> (offset=0, leaderEpoch=7))")
    # 2.8+: the map's values are InitialFetchState (leader, epoch, offset), 3.1+ with the topic id first
    assert message(added, "2.8", logger).endswith(
        "Map(orders-3 -> InitialFetchState(BrokerEndPoint(id=1, host=broker-1:9092),7,1200), "
        "orders-4 -> InitialFetchState(BrokerEndPoint(id=1, host=broker-1:9092),7,0))")
    assert message(added, "3.1", logger).startswith(
        "[ReplicaFetcherManager on broker 2] Added fetcher to broker 1 for partitions Map(orders-3 -> "
        f"InitialFetchState(Some({topic_id('orders')}),BrokerEndPoint(id=1, host=broker-1:9092),7,1200), ")
    assert message(removed, "3.6", logger) == \
        "[ReplicaFetcherManager on broker 2] Removed fetcher for partitions Set(orders-3, orders-4)"
    assert message(removed, "0.10", logger) == \
        "[ReplicaFetcherManager on broker 2] Removed fetcher for partitions [orders,3],[orders,4]"


LEADER = {"kind": "leader_start", "topic": "orders", "partition": 3, "leader_epoch": 5, "prev_leader_epoch": 4,
          "prev_leader": 1, "leo": 1200, "hw": 1190, "isr": [1, 2], "adding": [4], "removing": [3],
          "partition_epoch": 9, "topic_id": "Lx8P2XwCT8aH0a5u8yB5tg"}


def test_leader_start_2_6_to_3_2_in_state_change_log():
    for version in ("2.6", "2.8", "3.2"):
        path, _ = one(LEADER, version)
        assert path == "broker-1/state-change.log"
        assert message(LEADER, version, "state.change.logger") == "[Broker id=1] " + (
            "Leader orders-3 starts at leader epoch 5 from offset 1200 with high watermark 1190 ISR [1,2] "
            "addingReplicas [4] removingReplicas [3]. Previous leader epoch was 4.")


def test_leader_start_3_3_and_3_5():
    base = ("Leader orders-3 with topic id Some(Lx8P2XwCT8aH0a5u8yB5tg) starts at leader epoch 5 from offset "
            "1200 with partition epoch 9, high watermark 1190, ISR [1,2], adding replicas [4] and removing "
            "replicas [3]")
    assert message(LEADER, "3.3", "state.change.logger") == \
        f"[Broker id=1] {base}. Previous leader epoch was 4."
    # Partition.makeLeader 3.5.0: `removing replicas [..] ${marker}. Previous leader epoch was E.`
    assert message({**LEADER, "under_min_isr": True}, "3.5", "state.change.logger") == \
        f"[Broker id=1] {base} (under-min-isr). Previous leader epoch was 4."
    assert message(LEADER, "3.5", "state.change.logger") == f"[Broker id=1] {base} . Previous leader epoch was 4."
    # 3.6.0+: `... ${marker}. Previous leader $leaderReplicaIdOpt and previous leader epoch was E.`
    assert message({**LEADER, "under_min_isr": True}, "3.6", "state.change.logger") == \
        f"[Broker id=1] {base} (under-min-isr). Previous leader Some(1) and previous leader epoch was 4."
    assert message({**LEADER, "prev_leader": -1}, "3.7", "state.change.logger").endswith(
        f"{base} . Previous leader None and previous leader epoch was 4.")


def test_leader_start_before_2_6_is_the_partition_line():
    """Partition.makeLeader logs through the Partition logger up to 2.5: the 0.11.0.0 – 2.4.0 text, and 2.5.0's
    with the high watermark (Partition.scala 2.5.0 line 493)."""
    path, _ = one(LEADER, "2.5")
    assert path == "broker-1/server.log"
    assert message(LEADER, "2.4") == \
        PREFIX + "orders-3 starts at Leader Epoch 5 from offset 1200. Previous Leader Epoch was: 4"
    assert message(LEADER, "2.5") == PREFIX + ("orders-3 starts at leader epoch 5 from offset 1200 with high watermark "
                                               "1190. Previous leader epoch was 4.")


REASSIGN = {"kind": "reassignment_started", "broker": 0, "topic": "orders", "partition": 3,
            "replicas": [1, 2, 4], "adding": [4], "removing": [3]}


def test_reassignment_zk_and_kraft():
    zk = "kafka.controller.KafkaController"
    assert message(REASSIGN, "2.3", zk) == \
        "[Controller id=0] Handling reassignment of partition orders-3 to new replicas 1,2,4"
    assert message(REASSIGN, "2.4", zk) == ("[Controller id=0] Successfully updated assignment of partition "
                                            "orders-3 to ReplicaAssignment(replicas=1,2,4,3, addingReplicas=4, "
                                            "removingReplicas=3)")
    done = {**REASSIGN, "kind": "reassignment_completed", "leader": 4}
    lines = render_event({"ts_ms": T, **done}, v("3.2"))
    assert [p for p, _ in lines] == ["broker-0/controller.log"] * 2
    assert lines[0][1] == (f"{TS} INFO [Controller id=0] Target replicas ArrayBuffer(1, 2, 4) have all caught up with the "
                           f"leader for reassigning partition orders-3 ({zk})")
    assert lines[1][1] == (f"{TS} INFO [Controller id=0] Successfully updated assignment of partition orders-3 to "
                           f"ReplicaAssignment(replicas=1,2,4, addingReplicas=, removingReplicas=) ({zk})")
    # QuorumController's logIdent is `[Controller N] ` up to 3.4, `[QuorumController id=N] ` from 3.5 (KAFKA #13390)
    assert message(done, "3.3", "org.apache.kafka.controller.ReplicationControlManager") == (
        "[Controller 0] AlterPartition request from node 4 for orders-3 completed the ongoing "
        "partition reassignment.")
    assert message(done, "3.5", "org.apache.kafka.controller.ReplicationControlManager") == (
        "[QuorumController id=0] AlterPartition request from node 4 for orders-3 completed the ongoing "
        "partition reassignment.")


def test_broker_lifecycle_lines():
    assert one({"kind": "broker_started"}, "2.4")[1] == f"{TS} INFO [KafkaServer id=1] started (kafka.server.KafkaServer)"
    assert one({"kind": "broker_shutdown"}, "1.0")[1] == \
        f"{TS} INFO [KafkaServer id=1] shut down completed (kafka.server.KafkaServer)"
    assert one({"kind": "broker_started"}, "3.6")[1] == \
        f"{TS} INFO [KafkaRaftServer nodeId=1] Kafka Server started (kafka.server.KafkaRaftServer)"


def test_unknown_kind_and_missing_key_raise_value_error():
    with pytest.raises(ValueError, match="unknown log event kind 'isr_grow'"):
        render_logs([{"ts_ms": 0, "broker": 1, "kind": "isr_grow"}], v("3.6"))
    with pytest.raises(ValueError, match="lacks key 'new_isr'"):
        render_logs([{"ts_ms": 0, "broker": 1, "kind": "isr_expand", "topic": "t", "partition": 0,
                      "old_isr": [1]}], v("2.4"))


def test_render_logs_groups_per_broker_file_in_time_order():
    events = [{**SHRINK, "ts_ms": 2000, "broker": 1}, {**updated([1, 2]), "ts_ms": 1000, "broker": 1},
              {**LEADER, "ts_ms": 1500, "broker": 2}, {"kind": "broker_started", "ts_ms": 0, "broker": 2}]
    files = render_logs(events, v("3.6"), start_ms=T)
    assert sorted(files) == ["broker-1/server.log", "broker-2/server.log", "broker-2/state-change.log"]
    assert [line[:25] for line in files["broker-1/server.log"]] == \
        ["[2023-10-27 13:12:26,678]", "[2023-10-27 13:12:27,678]"]
    assert "ISR updated" in files["broker-1/server.log"][0]


def test_write_logs_is_atomic(tmp_path):
    write_logs([{**SHRINK, "ts_ms": T, "broker": 1}], v("3.6"), tmp_path)
    server = tmp_path / "logs" / "broker-1" / "server.log"
    first = server.read_text()
    assert first.startswith(TS) and first.endswith("(kafka.cluster.Partition)\n")
    with pytest.raises(ValueError):
        write_logs([{**SHRINK, "ts_ms": T, "broker": 1}, {"kind": "nope", "ts_ms": 0, "broker": 1}], v("3.6"),
                   tmp_path)
    assert server.read_text() == first
    write_logs([{**updated([1]), "ts_ms": T, "broker": 3}], v("3.6"), tmp_path)
    assert not server.exists() and (tmp_path / "logs" / "broker-3" / "server.log").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["logs"]


@pytest.mark.parametrize(("version", "controller", "texts"), [
    ("0.10.2", None, ["[Kafka Server 2], shutting down", "[Kafka Server 2], Starting controlled shutdown",
                      "[Kafka Server 2], Controlled shutdown succeeded", "[Kafka Server 2], shut down completed"]),
    ("3.0", None, ["[KafkaServer id=2] shutting down", "[KafkaServer id=2] Starting controlled shutdown",
                   "[KafkaServer id=2] Controlled shutdown succeeded", "[KafkaServer id=2] shut down completed"]),
    ("3.1", None, ["[KafkaServer id=2] shutting down", "[KafkaServer id=2] Starting controlled shutdown",
                   "[KafkaServer id=2] Controlled shutdown request returned successfully after 0ms",
                   "[KafkaServer id=2] shut down completed"]),
    ("3.7", "kraft", ["[BrokerServer id=2] shutting down", "[BrokerLifecycleManager id=2] Beginning controlled shutdown.",
                      "[BrokerServer id=2] shut down completed"])])
def test_a_controlled_shutdown_logs_its_steps_per_release(version, controller, texts):
    """KafkaServer.shutdown logs `shutting down`, then controlledShutdown `Starting controlled shutdown` and its
    success (`Controlled shutdown succeeded` up to 3.0, `... request returned successfully after Nms` from 3.1), then
    `shut down completed`; KRaft's BrokerServer.shutdown hands the request to its lifecycle manager, whose
    beginControlledShutdown logs `Beginning controlled shutdown.` (no KafkaServer line; read at 3.3.1 and 3.7.0)."""
    record = {"ts_ms": 0, "broker": 2, "kind": "broker_shutdown", "controlled": True,
              **({"controller": controller} if controller else {})}
    lines = render_event(record, KafkaVersion.parse(version))
    assert [line.split(" ", 3)[3].rsplit(" (", 1)[0] for _, line in lines] == texts


CONFIGS = {"kind": "config_changed", "entity_type": "topic", "entity": "orders",
           "configs": {"min.insync.replicas": "2", "retention.ms": "1000"}}


@pytest.mark.parametrize(("version", "controller", "logger", "text"), [
    ("0.10.0", "zookeeper", "kafka.server.DynamicConfigManager",
     "Processing override for entityType: topics, entity: orders with config: {min.insync.replicas=2, retention.ms=1000}"),
    ("0.10.2", "zookeeper", "kafka.server.DynamicConfigManager",
     "Processing override for entityPath: topics/orders with config: {min.insync.replicas=2, retention.ms=1000}"),
    ("2.4", "zookeeper", "kafka.server.DynamicConfigManager",
     "Processing override for entityPath: topics/orders with config: Map(min.insync.replicas -> 2, retention.ms -> 1000)"),
    ("3.5", "zookeeper", "kafka.server.ZkConfigManager",
     "Processing override for entityPath: topics/orders with config: Map(min.insync.replicas -> 2, retention.ms -> 1000)"),
    ("3.3", "kraft", "kafka.server.metadata.BrokerMetadataPublisher",
     "[BrokerMetadataPublisher id=1] Updating topic orders with new configuration : min.insync.replicas -> 2,"
     "retention.ms -> 1000"),
    ("3.4", "kraft", "kafka.server.metadata.DynamicConfigPublisher",
     "[DynamicConfigPublisher nodeType=broker id=1] Updating topic orders with new configuration : "
     "min.insync.replicas -> 2,retention.ms -> 1000"),
    ("3.7", "kraft", "kafka.server.metadata.DynamicConfigPublisher",
     "[DynamicConfigPublisher broker id=1] Updating topic orders with new configuration : min.insync.replicas -> 2,"
     "retention.ms -> 1000"),
])
def test_a_config_change_lists_the_topics_overrides(version, controller, logger, text):
    """DynamicConfigManager (ZkConfigManager from 3.4) logs the entity's overrides on every broker: a version-1
    notification's `entityType: topics, entity: T` and java.util.Properties up to 0.10.0, the entityPath with
    Properties to 0.10.2, a Scala Map from 0.11; KRaft's BrokerMetadataPublisher (3.3), then DynamicConfigPublisher,
    `k -> v` joined by commas."""
    assert message({**CONFIGS, "controller": controller}, version, logger) == text


def test_a_config_change_of_the_default_or_a_broker_and_an_override_removed():
    """KRaft: the cluster default's `Updating cluster configuration`, a broker's own `Updating node N`, a topic left
    with no override an empty listing; ZooKeeper: `brokers/<default>`, `brokers/N`, `Map()`."""
    kraft = {"kind": "config_changed", "controller": "kraft"}
    assert message({**kraft, "entity_type": "broker", "entity": "<default>", "configs": {"min.insync.replicas": "2"}},
                   "3.7", "kafka.server.metadata.DynamicConfigPublisher") == (
        "[DynamicConfigPublisher broker id=1] Updating cluster configuration : min.insync.replicas -> 2")
    assert message({**kraft, "entity_type": "broker", "entity": "1", "configs": {
        "leader.replication.throttled.rate": "1000"}}, "3.7", "kafka.server.metadata.DynamicConfigPublisher") == (
        "[DynamicConfigPublisher broker id=1] Updating node 1 with new configuration : "
        "leader.replication.throttled.rate -> 1000")
    assert message({**kraft, "entity_type": "topic", "entity": "t", "configs": {}}, "3.7",
                   "kafka.server.metadata.DynamicConfigPublisher").endswith("Updating topic t with new configuration : ")
    zk = {"kind": "config_changed", "controller": "zookeeper", "configs": {}}
    assert message({**zk, "entity_type": "broker", "entity": "<default>"}, "2.4",
                   "kafka.server.DynamicConfigManager") == "Processing override for entityPath: brokers/<default> with config: Map()"
    assert message({**zk, "entity_type": "topic", "entity": "t"}, "2.4", "kafka.server.DynamicConfigManager") == (
        "Processing override for entityPath: topics/t with config: Map()")
