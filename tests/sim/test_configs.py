"""DynamicConfigs (sim/configs.py): stored configs, what follows from them, and the reassignment tool's throttles.

Kafka: DynamicConfigManager's broker/topic handlers (quota rates and throttled-replica lists into
ReplicationQuotaManager, min.insync.replicas per topic with the broker default), and
ReassignPartitionsCommand --execute --throttle / --verify (docs/semantics.md §5.1; KIP-542 §5.2).
"""

from __future__ import annotations

import numpy as np
import pytest

from replicaflow.model import quota
from replicaflow.model.configs import (
    DEFAULT_BROKER,
    FOLLOWER_REASSIGNMENT_RATE,
    FOLLOWER_REPLICATION_RATE,
    FOLLOWER_THROTTLED_REPLICAS,
    LEADER_REASSIGNMENT_RATE,
    LEADER_REPLICATION_RATE,
    LEADER_THROTTLED_REPLICAS,
    MIN_ISR,
)
from replicaflow.sim.quota_manager import FOLLOWER_REPLICATION, LEADER_REPLICATION
from tests.sim.conftest import rows, simulate, small, started

MOVE = {"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [2, 4]},
                                     {"topic": "t", "partition": 1, "replicas": [3, 1]}]}


def four_brokers(kip542: bool = False, events=()):
    return started(small(kafka={"version": "2.4", "kip542": kip542},
                         cluster={"brokers": 4, "network_in": "1GB/s", "network_out": "1GB/s"},
                         topics=[{"name": "t", "partitions": 2, "replication_factor": 2,
                                  "assignment": [[1, 2], [2, 3]]}], events=list(events)))


def test_the_cluster_default_min_isr_counts_from_the_start():
    """The broker default min.insync.replicas applies to a topic without its own from the first scrape."""
    run = simulate(small(cluster={"brokers": 2, "min_insync_replicas": 2, "network_in": "1GB/s",
                                  "network_out": "1GB/s"},
                         topics=[{"name": "t", "partitions": 4, "replication_factor": 2}],
                         events=[{"at": "20s", "broker_down": 2}]))
    assert run.cluster("AtMinIsrPartitionCount").loc[0] == 4
    assert run.cluster("UnderMinIsrPartitionCount").loc[:20].max() == 0
    assert run.cluster("UnderMinIsrPartitionCount").iloc[-1] == 4  # ISR of 1 < 2 once 2's session expired
    configs = run.table("telemetry", "configs")
    assert configs[["entity", "name", "value"]].values.tolist() == [[DEFAULT_BROKER, MIN_ISR, "2"]]


def test_execute_throttle_writes_rates_on_every_source_and_destination_and_the_lists():
    """§5.1/A13: rates on sources ∪ destinations, leader list = sources, follower list = destinations."""
    engine, writer, _ = four_brokers(events=[{"at": "1s", "reassign": MOVE, "throttle": "10MB/s"}])
    engine.clock.run_due(engine.scenario.start_ms + 1000)
    configs = engine.configs
    for broker in ("1", "2", "3", "4"):
        assert configs.broker[(broker, LEADER_REPLICATION_RATE)] == configs.broker[(broker, FOLLOWER_REPLICATION_RATE)]
    assert configs.broker[("4", LEADER_REPLICATION_RATE)] == "10000000"
    assert configs.topic[("t", LEADER_THROTTLED_REPLICAS)] == "0:1,0:2,1:2,1:3"
    assert configs.topic[("t", FOLLOWER_THROTTLED_REPLICAS)] == "0:4,1:1"
    assert (engine.quotas.limit_bps[[LEADER_REPLICATION, FOLLOWER_REPLICATION]] == 10e6).all()
    # a still-moving reassignment: --verify leaves the throttles
    configs.verify(engine.scenario.start_ms + 2000)
    assert len(configs.broker) == 8
    s = engine.s
    s.in_isr[:2] = s.rbi[:2] >= 0  # both moves caught up
    engine.controller.complete_reassignments(engine.scenario.start_ms + 2500)
    n = len(rows(writer, "configs"))
    configs.verify(engine.scenario.start_ms + 3000)
    removed = rows(writer, "configs")[n:]
    assert len(removed) == 10 and all(r["value"] is None for r in removed)
    assert [r["entity"] for r in removed[:2]] == ["1", "1"] and removed[-1]["entity"] == "t"
    assert not configs.broker and not configs.topic and np.isinf(engine.quotas.limit_bps).all()


def test_kip542_throttle_writes_only_the_reassignment_rates():
    engine, _, _ = four_brokers(kip542=True, events=[{"at": "1s", "reassign": MOVE, "throttle": "10MB/s"}])
    engine.clock.run_due(engine.scenario.start_ms + 1000)
    names = {name for _, name in engine.configs.broker}
    assert names == {LEADER_REASSIGNMENT_RATE, FOLLOWER_REASSIGNMENT_RATE} and not engine.configs.topic


def test_throttled_lists_name_brokers_whichever_slot_they_move_to():
    """The masks follow the brokers through a reassignment's re-layout; pairs of unknown partitions are ignored."""
    engine, _, _ = four_brokers(events=[
        {"at": "0s", "config": {"topic": "t", LEADER_THROTTLED_REPLICAS: "0:1,1:3,1:4",
                                FOLLOWER_THROTTLED_REPLICAS: "*"}},
        {"at": "1s", "reassign": MOVE}])
    s, qm = engine.s, engine.quotas

    def expected(text):
        pairs = quota.parse_throttled_replicas(text)
        return np.array([[s.rbi[p, k] >= 0 and quota.is_throttled(pairs, int(s.pnum[p]), int(s.broker_ids[s.rbi[p, k]]))
                          for k in range(s.slots)] for p in range(s.n_partitions)])

    assert (qm.leader_listed == expected("0:1,1:3,1:4")).all()
    engine.clock.run_due(engine.scenario.start_ms + 1000)
    assert s.replica_ids(1) == [3, 1, 2]  # 3 moved from slot 1 to slot 0
    assert qm.leader_listed[1].tolist() == [True, False, False]
    assert (qm.leader_listed == expected("0:1,1:3,1:4")).all()
    assert (qm.follower_listed == (s.rbi >= 0)).all()


@pytest.mark.parametrize("controller", ["zookeeper", "kraft"])
def test_every_live_broker_logs_a_changed_entitys_overrides(controller):
    """One `kafka-configs --alter` is one change notification (ZooKeeper: every broker's DynamicConfigManager logs
    the entity's overrides) or one metadata delta (KRaft: every broker's DynamicConfigPublisher; a broker's own
    config only that broker). The listing holds every override after the change, so the removed one is gone; the
    configs a cluster starts with are logged by none, and a broker that is down logs nothing."""
    logs: list = []
    sc = small(kafka={"version": "3.7", "controller": controller}, duration="20s", events=[
        {"at": "1s", "broker_down": 3},
        {"at": "2s", "config": {"topic": "t", "min.insync.replicas": 2, "unclean.leader.election.enable": False}},
        {"at": "3s", "config": {"topic": "t", "min.insync.replicas": None}},
        {"at": "4s", "config": {"broker": 2, "leader.replication.throttled.rate": 1000}}])
    sc["topics"][0]["min_insync_replicas"] = 1
    simulate(sc, log_events=logs)
    got = [(e["ts_ms"] % 60_000 // 1000, e["broker"], e["entity_type"], e["entity"], e["configs"])
           for e in logs if e["kind"] == "config_changed"]
    unclean = "unclean.leader.election.enable"
    topic = [(2, b, "topic", "t", {"min.insync.replicas": "2", unclean: "false"}) for b in (1, 2)]
    topic += [(3, b, "topic", "t", {unclean: "false"}) for b in (1, 2)]
    own = {"leader.replication.throttled.rate": "1000"}
    brokers = [(4, b, "broker", "2", own) for b in ((1, 2) if controller == "zookeeper" else (2,))]
    assert got == topic + brokers
