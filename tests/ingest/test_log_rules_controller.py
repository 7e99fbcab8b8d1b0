"""Controller lines read since 2026-12-07: KafkaController's leader-election start (0.8-3.x ZooKeeper), KRaft's
failed log directories (3.7+ JBOD), and the request errors and metadata-cache lines read as no event
(docs/logs.md, "Further message families read" and "Recognised, not read")."""

from __future__ import annotations

import pytest

from replicaflow.ingest import line_tables
from tests.ingest.log_cases import read_file

pytestmark = pytest.mark.spark

ELECTIONS = """\
[2016-03-01 10:00:00,000] INFO [Controller 1]: Starting preferred replica leader election for partitions [t,0],[t,1] \
(kafka.controller.KafkaController)
[2018-03-01 10:00:00,000] INFO [Controller id=1] Starting preferred replica leader election for partitions t-2 \
(kafka.controller.KafkaController)
[2020-03-01 10:00:00,000] INFO [Controller id=1] Starting replica leader election (PREFERRED) for partitions t-0,t-1 \
triggered by AutoTriggered (kafka.controller.KafkaController)
[2020-03-01 10:00:01,000] INFO [Controller id=1] Starting replica leader election (PREFERRED) for partitions u-3 \
triggered by AdminClientTriggered (kafka.controller.KafkaController)
[2020-03-01 10:00:02,000] INFO [Controller id=1] Starting replica leader election (UNCLEAN) for partitions u-4 \
triggered by AdminClientTriggered (kafka.controller.KafkaController)
[2020-03-01 10:00:03,000] INFO [Controller id=1] Starting replica leader election (PREFERRED) for partitions t-5 \
triggered by ZkTriggered (kafka.controller.KafkaController)
[2020-03-01 10:00:04,000] INFO [Controller id=1] Starting replica leader election (PREFERRED) for partitions t-5 \
triggered by SomeoneElse (kafka.controller.KafkaController)
[2020-03-01 10:00:05,000] INFO [Controller id=1] Processing automatic preferred replica leader election \
(kafka.controller.KafkaController)
"""


def test_a_leader_elections_start_names_each_partition_and_its_trigger(spark, tmp_path):
    """KafkaController.onPreferredReplicaElection, `Starting preferred replica leader election for partitions %s`
    (0.10.2.2, the TopicAndPartition `[t,p]`; 1.1.1-2.3.1 the TopicPartition `t-p`), and onReplicaElection from 2.4.0
    (KIP-460), `Starting replica leader election ($electionType) for partitions ${partitions.mkString(",")}
    triggered by $electionTrigger`: ElectionType PREFERRED or UNCLEAN, the trigger AutoTriggered
    (checkAndTriggerAutoLeaderRebalance), AdminClientTriggered (an ElectLeaders request) or ZkTriggered (the
    /admin/preferred_replica_election znode). A row per partition, the trigger as its state (none before 2.4: the
    line does not say). A trigger Kafka has no case object for is a malformed line, a reject; 2.3's `Processing
    automatic preferred replica leader election` (run at every check, whether or not it elects) is no event."""
    out = read_file(spark, tmp_path, "broker-1/controller.log", ELECTIONS)
    got = sorted((r["line_number"], r["kind"], r["state"], r["broker"], r["topic"], r["partition"])
                 for r in out["log_events"].collect())
    assert got == [
        (1, "preferred_election_started", None, 1, "t", 0), (1, "preferred_election_started", None, 1, "t", 1),
        (2, "preferred_election_started", None, 1, "t", 2),
        (3, "preferred_election_started", "AutoTriggered", 1, "t", 0),
        (3, "preferred_election_started", "AutoTriggered", 1, "t", 1),
        (4, "preferred_election_started", "AdminClientTriggered", 1, "u", 3),
        (5, "unclean_election_started", "AdminClientTriggered", 1, "u", 4),
        (6, "preferred_election_started", "ZkTriggered", 1, "t", 5)]
    assert [(r["line_number"], r["reason"]) for r in out["rejects"].collect()] == [
        (7, "truncated or malformed election_started message")]
    counts = {r["category"]: r["lines"] for r in out["line_counts"].collect()}
    assert counts == {"event": 6, "reject": 1, "other": 1}


KRAFT_JBOD = """\
[2024-05-01 10:00:00,000] ERROR Error while appending records to t-0 in dir /data/d1 \
(org.apache.kafka.storage.internals.log.LogDirFailureChannel)
[2024-05-01 10:00:00,001] WARN [ReplicaManager broker=2] Stopping serving replicas in dir /data/d1 with uuid \
Some(vZ3Lp3XmR_uOzrJxDWRRqA) because the log directory has failed. (kafka.server.ReplicaManager)
[2024-05-01 10:00:00,500] WARN [QuorumController id=9] Directories [vZ3Lp3XmR_uOzrJxDWRRqA] in broker 2 marked offline, \
remaining directories: [Qm-9x1a2TOKOr8n3wxY0_w] (org.apache.kafka.controller.ReplicationControlManager)
[2024-05-01 10:05:00,000] WARN [QuorumController id=9] Directories [a1b2c3d4e5f6g7h8i9j0kA, Zz-9x1a2TOKOr8n3wxY0_w] in \
broker 3 marked offline, remaining directories: [] (org.apache.kafka.controller.ReplicationControlManager)
[2024-05-01 10:05:01,000] WARN [QuorumController id=9] Directories [] in broker 3 marked offline, remaining \
directories: [] (org.apache.kafka.controller.ReplicationControlManager)
"""


def test_a_kraft_controllers_offline_directories_are_the_brokers_failed_log_dirs(spark, tmp_path):
    """ReplicationControlManager.handleDirectoriesOffline (3.7.0, 3.8.0 and Confluent's v8.0.0-v8.3.0, KRaft with
    several log directories): `Directories {} in broker {} marked offline, remaining directories: {}`, the UUIDs as
    Java lists print them. The broker is target_broker, the directories log_dir. In `log_dirs` each is offline on that
    broker, unless that broker's own `Stopping serving replicas in dir D with uuid Some(U) ...` (ReplicaManager
    .handleLogDirFailure, 3.8.0+) told the same failure, here broker 2's: one offline row, not two, so
    OfflineReplicaCount counts its replicas once. An empty list is no line Kafka writes (it logs only where a
    directory went offline): a reject."""
    out = read_file(spark, tmp_path, "logs/server.log", KRAFT_JBOD)
    got = sorted((r["line_number"], r["kind"], r["broker"], r["target_broker"], r["log_dir"], r["state"])
                 for r in out["log_events"].collect())
    assert got == [
        (2, "log_dir_failed", 2, None, "/data/d1", None),
        (3, "log_dir_failed", 9, 2, "vZ3Lp3XmR_uOzrJxDWRRqA", "controller"),
        (4, "log_dir_failed", 9, 3, "a1b2c3d4e5f6g7h8i9j0kA, Zz-9x1a2TOKOr8n3wxY0_w", "controller")]
    assert [(r["line_number"], r["reason"]) for r in out["rejects"].collect()] == [
        (5, "truncated or malformed log_dir_failed message")]
    dirs = sorted((r["ts_ms"], r["broker"], r["log_dir"], r["state"])
                  for r in line_tables.log_dirs(out["log_events"]).collect())
    assert dirs == [(1714557600001, 2, "/data/d1", "offline"),
                    (1714557900000, 3, "Zz-9x1a2TOKOr8n3wxY0_w", "offline"),
                    (1714557900000, 3, "a1b2c3d4e5f6g7h8i9j0kA", "offline")]


def test_the_controllers_directory_line_counts_where_the_broker_restarted_since_its_own(spark, tmp_path):
    """The broker's own line deduplicates the controller's only between the same two starts of the broker
    (KafkaRaftServer's `Kafka Server started`): a failure after a restart is a new one, and the controller's line of
    it is read though the broker's earlier failure was logged; the restart brings the first directory back online."""
    out = read_file(spark, tmp_path, "logs/server.log", KRAFT_JBOD.splitlines(keepends=True)[1] +
                    "[2024-05-01 10:01:00,000] INFO [KafkaRaftServer nodeId=2] Kafka Server started "
                    "(kafka.server.KafkaRaftServer)\n" +
                    KRAFT_JBOD.splitlines(keepends=True)[2].replace("10:00:00,500", "10:02:00,000"))
    dirs = sorted((r["ts_ms"], r["broker"], r["log_dir"], r["state"])
                  for r in line_tables.log_dirs(out["log_events"]).collect())
    # (a start brings back every directory that ever failed on the broker, one that fails later too: no change)
    assert dirs == [(1714557600001, 2, "/data/d1", "offline"), (1714557660000, 2, "/data/d1", "online"),
                    (1714557660000, 2, "vZ3Lp3XmR_uOzrJxDWRRqA", "online"),
                    (1714557720000, 2, "vZ3Lp3XmR_uOzrJxDWRRqA", "offline")]


RECOGNISED_NOT_READ = """\
[2015-03-01 10:00:00,000] WARN [KafkaApi-1] Produce request with correlation id 12 from client p1 on partition [t,0] \
failed due to Leader not local for partition [t,0] on broker 1 (kafka.server.KafkaApis)
[2015-03-01 10:00:00,001] WARN [Replica Manager on Broker 1]: Fetch request with correlation id 5 from client \
ReplicaFetcherThread-0-1 on partition [t,0] failed due to Leader not local for partition [t,0] on broker 1 \
(kafka.server.ReplicaManager)
[2017-03-01 10:00:00,002] DEBUG [KafkaApi-1] Offset request with correlation id 7 from client c1 on partition t-0 \
failed due to Leader not local for partition t-0 on broker 1 (kafka.server.KafkaApis)
[2017-03-01 10:00:00,003] TRACE Broker 1 cached leader info (LeaderAndIsrInfo:(Leader:2,ISR:2,3,LeaderEpoch:5,\
ControllerEpoch:3),ReplicationFactor:2),AllReplicas:2,3) for partition t-0 in response to UpdateMetadata request sent \
by controller 3 epoch 3 with correlation id 8 (state.change.logger)
[2016-03-01 10:00:00,004] TRACE Broker 1 cached leader info (LeaderAndIsrInfo:(Leader:2,ISR:2,LeaderEpoch:6,\
ControllerEpoch:3),ReplicationFactor:2),AllReplicas:2,3) for partition [t,0] in response to UpdateMetadata request \
sent by controller 3 epoch 3 with correlation id 9 (state.change.logger)
"""


def test_leader_not_local_and_cached_leader_info_are_read_as_no_event(spark, tmp_path):
    """NotLeaderForPartitionException's `Leader not local for partition [%s,%d] on broker %d` (ReplicaManager
    .getLeaderReplicaIfLocal and Partition, 0.8.2.2-0.9.0.1; `%s` a TopicPartition from 0.10.2.2), which KafkaApis
    and ReplicaManager log per refused request (`... failed due to <message>`: WARN in 0.8.2.2, DEBUG from 0.9.0.1),
    and MetadataCache.updateCache's TRACE `Broker %d cached leader info %s for partition %s in response to
    UpdateMetadata request sent by controller %d epoch %d with correlation id %d` (0.8.2.2-0.11.0.2, a
    PartitionStateInfo): readable lines that are no event and no reject (docs/logs.md, "Recognised, not read")."""
    out = read_file(spark, tmp_path, "broker-1/server.log", RECOGNISED_NOT_READ)
    assert out["log_events"].count() == 0
    assert out["rejects"].count() == 0
    assert {r["category"]: r["lines"] for r in out["line_counts"].collect()} == {"other": 5}
