"""One broker crashing twice, then another's controlled shutdown, from server.log alone: each election the controller
makes at a leader's removal follows from the one before it (broker_sessions.elected_at_removals), including a
partition with one replica, offline at each crash and led again by its broker when it comes back
(first_isr_member_back).

Broker 1 crashes at 30 s and at 70 s, back at 60 s and 100 s; broker 2 stops with a controlled shutdown at 105 s and
starts at 125 s. Topic `orders` has three replicas per partition, topic `singles` one (singles-0 on broker 1,
singles-1 on broker 2). 2.7 ZooKeeper and 3.7 KRaft; no state-change.log, where the leader lines are from 2.6.
"""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from tests.ingest.test_rebuild_fetchers import equal_every_second
from tests.ingest.test_rebuild_outage import analyzed_fleet

pytestmark = pytest.mark.spark

CLUSTERS = {"v27": ("2.7", "zookeeper"), "v37k": ("3.7", "kraft")}
CRASHES = ((30, 60), (70, 100))  # broker 1: (down, up) in seconds


def story(name: str) -> str:
    release, controller = CLUSTERS[name]
    crashes = "".join(f"  - {{at: {down}s, broker_down: {{broker: 1}}}}\n  - {{at: {up}s, broker_up: 1}}\n"
                      for down, up in CRASHES)
    return f"""name: {name}
seed: 3
duration: 150s
tick: 1s
kafka:
  version: "{release}"
  controller: {controller}
cluster:
  brokers: 3
topics:
  - name: orders
    partitions: 3
    replication_factor: 3
    min_insync_replicas: 2
    assignment: [[1, 2, 3], [2, 3, 1], [3, 1, 2]]
    produce_rate: 100KB/s
  - name: singles
    partitions: 2
    replication_factor: 1
    min_insync_replicas: 1
    assignment: [[1], [2]]
    produce_rate: 10KB/s
events:
{crashes}  - {{at: 105s, broker_down: {{broker: 2, controlled: true}}}}
  - {{at: 125s, broker_up: 2}}
"""


@pytest.fixture(scope="module")
def analyzed(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("chains")
    return root, analyzed_fleet(spark, root, {name: story(name) for name in CLUSTERS}, full=False)


def test_every_partition_has_the_simulators_leader_and_isr_at_every_second(analyzed):
    """The controller elects from the leader in force: an election at an earlier removal, where no line since tells
    another (ZooKeeper OfflinePartitionLeaderElectionStrategy, KRaft PartitionChangeBuilder.electLeader). singles-0
    has no replica left at either crash (no leader, -1: KafkaController.removeReplicasFromIsr's NoLeader, KRaft's
    electLeader), and its broker leads it again on its return (KafkaController.onBrokerStartup,
    ReplicationControlManager.handleBrokerUnfenced): at its second crash, the leader in force is that return's, not
    the -1 of the first crash, which would have left the partition on a stopped broker."""
    root, out = analyzed
    metas = {m["cluster"]: m for m in json.loads((out / "telemetry" / "_metas.json").read_text())}
    for name in CLUSTERS:
        assert equal_every_second(root, out, metas, name, min_span_ms=125_000) == {
            ("orders", 0), ("orders", 1), ("singles", 0), ("singles", 1)}, name


def test_the_one_replica_partition_is_offline_at_each_crash(analyzed):
    """singles-0 is offline from the controller's failure callback or fencing (a session timeout after each crash:
    18 s on 2.7, KIP-537; 9 s on KRaft, broker.session.timeout.ms) to broker 1's return: two incidents, each ending
    at a return (60 s and 100 s). singles-1 goes offline at broker 2's controlled shutdown and comes back with it at
    125 s."""
    _, out = analyzed
    metas = {m["cluster"]: m for m in json.loads((out / "telemetry" / "_metas.json").read_text())}
    incidents = pq.read_table(out / "analysis" / "incidents").to_pylist()
    for name, timeout_s in (("v27", 18), ("v37k", 9)):
        server = f"{name}-server"
        start = metas[server]["start_ms"]
        offline = sorted(((r["topic"], r["partition"]), (r["start_ms"] - start) // 1_000, (r["end_ms"] - start) // 1_000)
                         for r in incidents if r["cluster"] == server and r["kind"] == "offline")
        assert offline == [(("singles", 0), down + timeout_s, up) for down, up in CRASHES] + [
            (("singles", 1), 105, 125)], name
