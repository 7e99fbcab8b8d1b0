"""A leader line before 2.6 names no ISR: the LeaderAndIsr request the leader applied does (ingest/leader_requests.py,
docs/real-cluster.md ``isr``). Small clusters written here, analyzed as `replicaflow analyze --logs
--cluster-from-path` does."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from replicaflow.jobs.analyze import analyze_logs
from tests.ingest.log_cases import write_files

pytestmark = pytest.mark.spark

SC, P = "(state.change.logger)", "(kafka.cluster.Partition)"
START = "[2021-03-04 10:00:00,000] INFO [KafkaServer id=1] started (kafka.server.KafkaServer)\n"
END = "[2021-03-04 10:01:00,000] INFO [Log partition=t-0, dir=/kafka] Rolled new log segment at offset 100 in 2 ms. (kafka.log.Log)\n"
# 2.5 (Kafka's 2.4.1 already): LeaderAndIsrPartitionState and the lowercase leader line with the high watermark
REQUEST_25 = ("[2021-03-04 10:00:01,000] TRACE [Broker id=1] Received LeaderAndIsr request LeaderAndIsrPartitionState("
              "topicName='t', partitionIndex=0, controllerEpoch=1, leader=1, leaderEpoch=5, isr=[1, 2], zkVersion=7, "
              "replicas=[1, 2, 3], addingReplicas=[], removingReplicas=[], isNew=false) correlation id 3 from controller 0 "
              f"epoch 1 {SC}\n")
LEADER_25 = (f"[2021-03-04 10:00:01,010] INFO [Partition t-0 broker=1] t-0 starts at leader epoch 5 from offset 100 with "
             f"high watermark 90. Previous leader epoch was 4. {P}\n")
# 2.1: PartitionState with bare lists and the partition after the controller, and `starts at Leader Epoch`
REQUEST_21 = ("[2021-03-04 10:00:01,000] TRACE [Broker id=1] Received LeaderAndIsr request PartitionState(controllerEpoch=1, "
              "leader=1, leaderEpoch=5, isr=1,2, zkVersion=7, replicas=1,2,3, isNew=false) correlation id 3 from controller "
              f"0 epoch 1 for partition t-0 {SC}\n")
LEADER_21 = (f"[2021-03-04 10:00:01,010] INFO [Partition t-0 broker=1] t-0 starts at Leader Epoch 5 from offset 100. "
             f"Previous Leader Epoch was: 4 {P}\n")


@pytest.fixture(scope="module")
def out(spark, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("requests")
    for cluster, request, leader in (("v25", REQUEST_25, LEADER_25), ("v21", REQUEST_21, LEADER_21)):
        write_files(root / "logs" / cluster, {"broker-1/state-change.log": request,
                                              "broker-1/server.log": START + leader + END})
    analyze_logs([str(root / "logs")], root / "out", cluster_from_path=True, spark=spark)
    return root / "out"


@pytest.mark.parametrize("cluster", ["v25", "v21"])
def test_a_leader_line_before_2_6_takes_the_isr_and_replicas_of_the_request_it_applied(out, cluster):
    """Partition.makeLeader (0.11-2.5) sets the ISR and the assignment from the LeaderAndIsr request's partition
    state (ReplicaManager.becomeLeaderOrFollower, logged at TRACE on receipt) and logs only `starts at leader epoch`.
    The partition is led by 1 with ISR [1, 2] of replicas [1, 2, 3] from the leader's line: under-replicated for the
    58.99 s to the last line (0.983 URP minutes). Before, the leader line's lack of an ISR hid the request's, and the
    partition had no state at all (URP 0)."""
    states = [r for r in pq.read_table(out / "analysis" / "partition_state").to_pylist() if r["cluster"] == cluster]
    assert [(r["leader"], r["isr"], r["replicas"], r["urp"], r["offline"]) for r in states] == [
        (1, [1, 2], [1, 2, 3], True, False)]
    summary = json.loads((out / "analysis" / "_summary.json").read_text(encoding="utf-8"))[cluster]
    assert summary["urp_minutes"] == pytest.approx(0.983, abs=0.001)


# a leader=-1 request (2.1's PartitionState form) to the follower, between two leader lines of broker 1
B2_START = "[2021-03-04 10:00:00,000] INFO [KafkaServer id=2] started (kafka.server.KafkaServer)\n"
REQUEST_21_LEADER = REQUEST_21.replace("isr=1,2", "isr=1").replace("replicas=1,2,3", "replicas=1,2")
LEADERLESS_21 = ("[2021-03-04 10:00:30,000] TRACE [Broker id=2] Received LeaderAndIsr request PartitionState(controllerEpoch=1, "
                 "leader=-1, leaderEpoch=6, isr=1, zkVersion=8, replicas=1,2, isNew=false) correlation id 9 from controller "
                 f"0 epoch 1 for partition t-0 {SC}\n")
STALE_21 = LEADERLESS_21.replace("10:00:30", "10:00:05").replace("leaderEpoch=6", "leaderEpoch=4")
LEADER_AGAIN_21 = (f"[2021-03-04 10:00:50,000] INFO [Partition t-0 broker=1] t-0 starts at Leader Epoch 7 from offset 100. "
                   f"Previous Leader Epoch was: 5 {P}\n")


@pytest.fixture(scope="module")
def leaderless(spark, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("leaderless")
    write_files(root / "logs" / "v21", {
        "broker-1/state-change.log": REQUEST_21_LEADER, "broker-1/server.log": START + LEADER_21 + LEADER_AGAIN_21 + END,
        "broker-2/state-change.log": STALE_21 + LEADERLESS_21, "broker-2/server.log": B2_START})
    analyze_logs([str(root / "logs")], root / "out", cluster_from_path=True, spark=spark)
    return root / "out"


def test_a_request_without_a_leader_past_the_last_leader_epoch_leaves_the_partition_offline(leaderless):
    """The ZooKeeper controller that elects no one for a partition whose leader failed writes NoLeader at the next
    leader epoch (ReplicaStateMachine.removeReplicasFromIsr, LeaderAndIsr.newLeaderAndIsr) and sends that state to the
    other replicas, which log it on receipt (ReplicaManager.becomeLeaderOrFollower, TRACE). Broker 2's request of epoch
    6 at 10:00:30 says t-0, led by 1 at epoch 5, has no leader until broker 1's line of epoch 7 at 10:00:50: 20 s
    offline (0.333 partition-minutes), and a leader row -1. Its request of epoch 4 at 10:00:05 is older than the
    leader line's and says nothing. Before, the partition stayed under leader 1 (offline 0)."""
    leaders = [(r["ts_ms"] % 100_000, r["leader"], r["leader_epoch"])
               for r in pq.read_table(leaderless / "telemetry" / "leaders").to_pylist()]
    assert sorted(leaders) == [(1_010, 1, 5), (30_000, -1, 6), (50_000, 1, 7)]
    summary = json.loads((leaderless / "analysis" / "_summary.json").read_text(encoding="utf-8"))["v21"]
    assert summary["offline_minutes"] == pytest.approx(0.333, abs=0.001)
