"""model/election.py and model/reassign_tool.py at their release boundaries (docs/semantics.md §5.1, §6)."""

from __future__ import annotations

import numpy as np
import pytest

from replicaflow.model import election, reassign_tool
from replicaflow.model.version import KafkaVersion

V = KafkaVersion.parse


@pytest.mark.parametrize(("version", "controller", "ms"), [
    ("2.4", "zookeeper", 6_000), ("2.5", "zookeeper", 18_000), ("3.3", "kraft", 9_000), ("4.1", "kraft", 9_000)])
def test_session_timeouts(version, controller, ms):
    """KafkaConfig.ZkSessionTimeoutMs 6000 at 2.4.0, 18000 at 2.5.0 (KIP-537); KafkaConfig.BrokerSessionTimeoutMs 9000."""
    assert election.session_timeout_ms(V(version), controller) == ms


@pytest.mark.parametrize(("version", "controller", "change", "bumps"), [
    ("3.7", "zookeeper", election.ISR_SHRINK, True), ("3.7", "zookeeper", election.REASSIGNMENT_START, True),
    ("3.5", "kraft", election.ISR_SHRINK, True), ("3.6", "kraft", election.ISR_SHRINK, False),
    ("3.6", "kraft", election.REASSIGNMENT_START, False), ("3.6", "kraft", election.REPLICAS_REMOVED, True)])
def test_leader_epoch_bumps(version, controller, change, bumps):
    """PartitionChangeBuilder.triggerLeaderEpochBumpIfNeeded with MetadataVersion.isLeaderEpochBumpRequiredOnIsrShrink
    (!IBP_3_6_IV0, KAFKA-15021); the ZooKeeper controller's every LeaderAndIsr write carries a new epoch."""
    assert election.bumps_leader_epoch(V(version), controller, change) is bumps


def test_completion_bumps_and_elections():
    """onPartitionReassignment B3 + one removeReplicasFromIsr per removed ISR replica; KRaft one record.
    offlinePartitionLeaderElection: first live ISR member, else (unclean) first live replica."""
    assert election.completion_epoch_bumps("zookeeper", np.array([0, 2])).tolist() == [1, 3]
    assert election.completion_epoch_bumps("kraft", np.array([0, 2])).tolist() == [1, 1]
    live = np.array([[False, True, True], [False, False, True], [False, False, True]])
    isr = np.array([[True, False, True], [True, True, False], [True, True, False]])
    slot, unclean = election.elect_leader(live, isr, np.array([False, False, True]))
    assert slot.tolist() == [2, -1, 2] and unclean.tolist() == [False, False, True]
    end = election.replicas_end_offset(np.array([[500, 300, 200, 900]]), np.array([[True, True, True, False]]))
    assert end.tolist() == [500] and election.messages_lost(end, 200).tolist() == [300]
    assert election.messages_lost(np.array([150]), 200).tolist() == [0]


@pytest.mark.spark
def test_messages_lost_is_one_rule_on_spark_columns(spark):
    """The pipeline recomputes an unclean election's loss from the leaders row's offsets with the same rule."""
    from pyspark.sql import functions as F

    df = spark.createDataFrame([(500, 200), (150, 200)], "replicas_end_offset long, start_offset long")
    got = df.select(election.messages_lost(F.col("replicas_end_offset"), F.col("start_offset")).alias("lost"))
    assert [r["lost"] for r in got.collect()] == [300, 0]


@pytest.mark.parametrize(("version", "default"), [("0.10.2", True), ("0.11", False)])
def test_unclean_default(version, default):
    """KafkaConfig.UncleanLeaderElectionEnable: true at 0.10.2.0, false at 0.11.0.0 (KIP-106)."""
    assert V(version).default_unclean_leader_election is default


@pytest.mark.parametrize(("version", "done", "moving", "clears", "brokers"), [
    ("2.5", True, True, True, {1, 2, 3}), ("2.5", False, False, False, {1, 2, 3}),
    ("2.6", True, True, False, {1, 2, 3, 5}), ("2.6", False, False, True, {1, 2, 3, 5})])
def test_verify_rule(version, done, moving, clears, brokers):
    """ReassignPartitionsCommand.removeThrottle (2.5.0: the plan's statuses, zkClient.getAllBrokersInCluster) and
    verifyAssignment/clearAllThrottles (2.6.0: !partsOngoing, active brokers ++ the plan's targets)."""
    assert reassign_tool.verify_clears_throttles(V(version), done, moving) is clears
    assert reassign_tool.throttle_cleared_brokers(V(version), [1, 2, 3], {("t", 0): [3, 5]}) == brokers


def test_a_restart_inside_the_crashs_session_per_release():
    """``registration_ms`` (§6) at its release boundaries: ZooKeeper 0.8.2 retries every session timeout
    (ZkUtils.createEphemeralPathExpectConflictHandleZKBug), 0.9.0 fails (ZkUtils.registerBrokerInZk: NodeExists);
    KRaft's BrokerLifecycleManager backs off 100 ms doubling to broker.session.timeout.ms, to half of it from 4.0,
    and BrokerHeartbeatManager.hasValidSession still holds at the deadline itself."""
    zk, kraft = election.ZOOKEEPER, election.KRAFT
    assert election.registration_ms(V("0.8.2"), zk, 0, 1_000, 6_000) == 7_000
    assert election.registration_ms(V("0.9.0"), zk, 0, 1_000, 6_000) is None
    assert election.registration_ms(V("0.9.0"), zk, 0, 6_000, 6_000) == 6_000  # the node expired with the session
    # started at 0 (the crash's instant): tries at 0.1, 0.3, 0.7, 1.5, 3.1, 6.3 s; then 6.3 + 6.4 = 12.7 s on 3.9,
    # 6.3 + 4.5 = 10.8 s on 4.0; the deadline (9 s) itself is refused
    assert election.registration_ms(V("3.9"), kraft, 0, 0, 9_000) == 12_700
    assert election.registration_ms(V("4.0"), kraft, 0, 0, 9_000) == 10_800
    assert election.registration_ms(V("3.9"), kraft, 0, 2_700, 9_000) == 2_700 + 6_300 + 6_400  # 9 s refused
    assert election.registration_ms(V("3.9"), kraft, 0, 9_001, 9_000) == 9_001
