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
