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
