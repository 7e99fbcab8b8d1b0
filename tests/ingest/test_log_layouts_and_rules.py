"""Layouts (docker compose, Strimzi, journald/syslog, leading whitespace, log time zone) and the message
families of log_messages.RULES, each line in the form Kafka's source writes it (class named per case)."""

from __future__ import annotations

from pathlib import Path

import pytest

from replicaflow.errors import ReplicaflowError
from replicaflow.ingest.logs import read_logs

pytestmark = pytest.mark.spark

T = "[2024-01-02 03:04:05,678] "
CASES = [  # (line, expected fields of its one event, or None: no event)
    # layouts
    ("kafka-1  | " + T + "INFO [Partition t-0 broker=1] Expanding ISR from 1 to 1,2 (kafka.cluster.Partition)",
     {"kind": "isr_expand", "isr": [1, 2], "ts_ms": 1704164645678}),
    ("kafka | " + T + "INFO [Partition t-0 broker=1] Expanding ISR from 1 to 1,2 (kafka.cluster.Partition)",
     {"kind": "isr_expand", "broker": 1}),
    ("2024-01-02 03:04:05,678 INFO [Partition t-0 broker=1] ISR updated to 1,2  and version updated to 7 "
     "(kafka.cluster.Partition) [data-plane-kafka-request-handler-1]",
     {"kind": "isr_updated", "isr": [1, 2], "partition_epoch": 7, "ts_ms": 1704164645678}),
    ("Jan 02 03:04:05 host kafka-server-start.sh[123]: " + T + "INFO [Partition t-0 broker=1] ISR updated to 1 "
     "(under-min-isr) and version updated to 8 (kafka.cluster.Partition)",
     {"kind": "isr_updated", "isr": [1], "state": "under-min-isr"}),
    ("   " + T + "INFO [Partition t-0 broker=1] Shrinking ISR from 1,2 to 1 (kafka.cluster.Partition)",
     {"kind": "isr_shrink", "isr": [1]}),
    # the logger, then ` - `, before the message: log4j's tutorial `%d %-5p %c{1}:%L - %m` (these lines were read as
    # messages starting `Partition:123 - `, no event), `%d %-5p %c:%L - %m`, and `%d [%t] %-5p %c - %m`
    ("2024-01-02 03:04:05 INFO  Partition:123 - [Partition t-0 broker=1] Shrinking ISR from 1,2 to 1",
     {"kind": "isr_shrink", "isr": [1], "topic": "t", "ts_ms": 1704164645000}),
    ("2024-01-02 03:04:05 WARN  ReplicaFetcherThread:66 - [ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] "
     "Error for partition t-2 to broker 2:org.apache.kafka.common.errors.NotLeaderForPartitionException: no",
     {"kind": "fetch_error", "leader": 2, "partition": 2,
      "error": "org.apache.kafka.common.errors.NotLeaderForPartitionException"}),
    ("2024-01-02 03:04:05,678 INFO  kafka.cluster.Partition:123 - [Partition t-0 broker=1] Expanding ISR from 1 to 1,2",
     {"kind": "isr_expand", "isr": [1, 2]}),
    ("2024-01-02 03:04:05.678 [data-plane-kafka-request-handler-1] INFO  kafka.cluster.Partition - [Partition t-0 "
     "broker=1] Shrinking ISR from 1,2 to 1", {"kind": "isr_shrink", "isr": [1], "ts_ms": 1704164645678}),
    # `(%c:%L)`: the logger and the line of the logging call (the log4j layout of Kafka's own tests)
    (T + "INFO [Partition t-0 broker=1] Shrinking ISR from 1,2 to 1 (kafka.cluster.Partition:1017)",
     {"kind": "isr_shrink", "isr": [1], "topic": "t"}),
    # `docker logs -t` / `kubectl logs --timestamps` (the runtime's UTC time first), alone and inside compose's prefix
    ("2024-01-02T02:04:05.678123456Z " + T + "INFO [Partition t-0 broker=1] Shrinking ISR from 1,2 to 1 "
     "(kafka.cluster.Partition)", {"kind": "isr_shrink", "isr": [1], "ts_ms": 1704164645678}),
    ("kafka_3      | 2024-01-02T02:04:05.678123456Z " + T + "INFO [Partition t-0 broker=1] Expanding ISR from 1 to "
     "1,2 (kafka.cluster.Partition)", {"kind": "isr_expand", "isr": [1, 2]}),
    # `docker-compose up` written to a terminal colours each service's name (SGR sequences around the prefix)
    ("\x1b[32mkafka_1            |\x1b[0m " + T + "INFO [Partition t-0 broker=1] Expanding ISR from 1 to 1,2 "
     "(kafka.cluster.Partition)", {"kind": "isr_expand", "isr": [1, 2], "ts_ms": 1704164645678}),
    # `grep -r` over several files (the file name), `grep -rn` (and its line number), `grep -n` on one file
    ("/var/log/kafka/server.log.2024-01-02-03:" + T + "INFO [Partition t-0 broker=1] Shrinking ISR from 1,2 to 1 "
     "(kafka.cluster.Partition)", {"kind": "isr_shrink", "isr": [1], "ts_ms": 1704164645678, "broker": 1}),
    ("logs/server.log:1834:" + T + "INFO [Partition t-0 broker=1] Expanding ISR from 1 to 1,2 "
     "(kafka.cluster.Partition)", {"kind": "isr_expand", "isr": [1, 2], "ts_ms": 1704164645678}),
    ("1834:2024-01-02 03:04:05,678 INFO [Partition t-0 broker=1] Expanding ISR from 1 to 1,2 "
     "(kafka.cluster.Partition) [data-plane-kafka-request-handler-1]", {"kind": "isr_expand", "isr": [1, 2]}),
    # stern (`<pod> <container> <line>`), a stack trace through it stays attached
    ("my-cluster-kafka-0 kafka " + T + "INFO [Partition t-0 broker=1] Expanding ISR from 1 to 1,2 "
     "(kafka.cluster.Partition)", {"kind": "isr_expand", "isr": [1, 2], "broker": 1}),
    # Partition.handleAlterIsrError: an AlterIsr the controller failed for an unexpected error (2.7, then 2.8+)
    (T + "WARN [Partition t-0 broker=1] Controller failed to update ISR to PendingShrinkIsr(isr=Set(1, 2), "
     "outOfSyncReplicaIds=Set(2)) due to unexpected NOT_CONTROLLER. Retrying. (kafka.cluster.Partition)",
     {"kind": "isr_update_failed", "error": "NOT_CONTROLLER", "broker": 1}),
    (T + "WARN [Partition t-0 broker=1] Failed to update ISR to PendingExpandIsr(isr=Set(1), newInSyncReplicaId=2) "
     "due to unexpected UNKNOWN_SERVER_ERROR. Retrying. (kafka.cluster.Partition)",
     {"kind": "isr_update_failed", "error": "UNKNOWN_SERVER_ERROR"}),
    # Partition.makeLeader 2.5 (server.log, Partition logger): lowercase, with the high watermark
    (T + "INFO [Partition t-0 broker=1] t-0 starts at leader epoch 5 from offset 1200 with high watermark 1190. "
     "Previous leader epoch was 4. (kafka.cluster.Partition)",
     {"kind": "leader_start", "broker": 1, "leader_epoch": 5, "offset": 1200}),
    # Partition.makeLeader 3.6+: the empty under-min-isr marker leaves a space before the period
    (T + "INFO [Broker id=1] Leader t-0 with topic id Some(AAAAAAAAAAAAAAAAAAAAAA) starts at leader epoch 5 from "
     "offset 10 with partition epoch 9, high watermark 10, ISR [1,2], adding replicas [] and removing replicas [] . "
     "Previous leader None and previous leader epoch was -1. (state.change.logger)",
     {"kind": "leader_start", "leader_epoch": 5, "isr": [1, 2], "partition_epoch": 9, "adding": [], "removing": []}),
    # Partition.makeLeader on trunk between KAFKA-8470 and KAFKA-9802 (March-May 2020, never released): bare lists
    (T + "INFO [Broker id=3] Leader t-0 starts at leader epoch 0 from offset 0 with high watermark 0 ISR 3,2,1 "
     "addingReplicas  removingReplicas .Previous leader epoch was -1. (state.change.logger)",
     {"kind": "leader_start", "leader_epoch": 0, "isr": [3, 2, 1], "adding": [], "removing": [], "broker": 3}),
    # Partition.makeFollower 3.6+: as KAFKA-19776's fix writes it (the previous leader and epoch), then as 3.6.0 -
    # 3.8.0 write it, with the new leader and epoch set before they are logged as the previous ones
    (T + "INFO [Broker id=2] Follower t-0 starts at leader epoch 5 from offset 10 with partition epoch 9 and high "
     "watermark 10. Current leader is 1. Previous leader Some(2) and previous leader epoch was 4. (state.change.logger)",
     {"kind": "follower_start", "leader": 1, "leader_epoch": 5, "target_broker": 2}),
    (T + "INFO [Broker id=2] Follower t-0 starts at leader epoch 5 from offset 10 with partition epoch 9 and high "
     "watermark 10. Current leader is 1. Previous leader Some(1) and previous leader epoch was 5. (state.change.logger)",
     {"kind": "follower_start", "leader": 1, "leader_epoch": 5, "target_broker": None}),
    # ReplicaManager.makeFollowers (2.x, TRACE)
    (T + "TRACE [Broker id=2] Handling LeaderAndIsr request correlationId 3 from controller 1 epoch 4 starting the "
     "become-follower transition for partition t-0 with leader 1 (state.change.logger)",
     {"kind": "become_follower", "leader": 1, "state": "started", "target_broker": 1}),
    (T + "TRACE Broker 2 handling LeaderAndIsr request correlationId 3 from controller 1 epoch 4 starting the "
     "become-leader transition for partition [t,0] (state.change.logger)",
     {"kind": "become_leader", "broker": 2, "topic": "t", "partition": 0}),
    (T + "TRACE [Broker id=2] Stopped fetchers as part of become-follower request from controller 1 epoch 4 with "
     "correlation id 3 for partition t-0 with leader 1 (state.change.logger)", {"kind": "fetchers_stopped", "leader": 1}),
    # PartitionStateMachine (ZooKeeper controller)
    (T + "INFO [Controller id=1 epoch=4] Changed partition t-0 from OnlinePartition to OnlinePartition with state "
     "LeaderAndIsr(leader=1, leaderEpoch=5, isr=List(1, 2), zkVersion=7) (state.change.logger)",
     {"kind": "partition_state", "leader": 1, "leader_epoch": 5, "isr": [1, 2], "partition_epoch": 7,
      "state": "OnlinePartition", "broker": 1}),
    (T + "INFO [Controller id=1 epoch=4] Changed partition t-0 from OfflinePartition to OnlinePartition with state "
     "LeaderAndIsr(leader=2, leaderEpoch=6, isrWithBrokerEpoch=List(BrokerState(brokerId=2, brokerEpoch=-1)), "
     "leaderRecoveryState=RECOVERED, partitionEpoch=8) (state.change.logger)",
     {"kind": "partition_state", "leader": 2, "isr": [2], "partition_epoch": 8}),
    # PartitionStateMachine: an offline (or new) partition the controller could not give a leader, up to 1.0 and 1.1+
    (T + "ERROR Controller 0 epoch 3 initiated state change for partition [t,9] from OfflinePartition to "
     "OnlinePartition failed (state.change.logger)",
     {"kind": "partition_offline", "broker": 0, "topic": "t", "partition": 9, "state": "OnlinePartition"}),
    (T + "ERROR [Controller id=0 epoch=3] Controller 0 epoch 3 failed to change state for partition t-8 from "
     "NewPartition to OnlinePartition (state.change.logger)", {"kind": "partition_offline", "partition": 8}),
    (T + "WARN [OfflinePartitionLeaderSelector]: No broker in ISR is alive for [t,0]. Elect leader 3 from live "
     "brokers 3. There's potential data loss. (kafka.controller.OfflinePartitionLeaderSelector)",
     {"kind": "unclean_election", "leader": 3, "topic": "t", "partition": 0}),
    # KRaft
    (T + "INFO [QuorumController id=9] Replayed partition change PartitionChangeRecord(partitionId=0, "
     "topicId=AAAAAAAAAAAAAAAAAAAAAA, isr=[1, 2], leader=-1, replicas=null, removingReplicas=null, "
     "addingReplicas=null, leaderRecoveryState=-1) for topic t (org.apache.kafka.controller.ReplicationControlManager)",
     {"kind": "partition_change", "leader": -1, "isr": [1, 2], "topic": "t", "partition": 0}),
    (T + "INFO [QuorumController id=9] Fencing broker 3 because its session has timed out. "
     "(org.apache.kafka.controller.ReplicationControlManager)", {"kind": "broker_fenced", "target_broker": 3}),
    # KRaft 3.0-3.2: ClusterControlManager.replay logs the fence records, BrokerHeartbeatManager the caught-up offset
    (T + "INFO [Controller 9] Fenced broker: FenceBrokerRecord(id=2, epoch=7) "
     "(org.apache.kafka.controller.ClusterControlManager)", {"kind": "broker_fenced", "target_broker": 2}),
    (T + "INFO [Controller 9] The request from broker 3 to unfence has been granted because it has caught up with "
     "the last committed metadata offset 1. (org.apache.kafka.controller.BrokerHeartbeatManager)",
     {"kind": "broker_unfenced", "target_broker": 3}),
    # ClusterControlManager 3.6+ logs the registration change record: fenced=-1 unfences, 1 fences
    (T + "INFO [QuorumController id=0] Replayed BrokerRegistrationChangeRecord modifying the registration for broker 0: "
     "BrokerRegistrationChangeRecord(brokerId=0, brokerEpoch=32, fenced=-1, inControlledShutdown=0, logDirs=[]) "
     "(org.apache.kafka.controller.ClusterControlManager)", {"kind": "broker_unfenced", "target_broker": 0}),
    (T + "INFO [QuorumController id=0] Replayed BrokerRegistrationChangeRecord modifying the registration for broker 2: "
     "BrokerRegistrationChangeRecord(brokerId=2, brokerEpoch=40, fenced=1, inControlledShutdown=0, logDirs=[]) "
     "(org.apache.kafka.controller.ClusterControlManager)", {"kind": "broker_fenced", "target_broker": 2}),
    # BrokerHeartbeatManager 3.3-3.4 (`it's`; 3.5+ `its`)
    (T + "INFO [Controller 9] The request from broker 4 to unfence has been granted because it has caught up with "
     "the offset of it's register broker record 12. (org.apache.kafka.controller.BrokerHeartbeatManager)",
     {"kind": "broker_unfenced", "target_broker": 4}),
    # ReplicationControlManager.replay(PartitionRecord) of a new partition, 3.0-3.5: the whole assignment
    (T + "INFO [Controller 9] Created partition t-4 with topic ID AAAAAAAAAAAAAAAAAAAAAA and PartitionRegistration("
     "replicas=[1, 2], isr=[1], removingReplicas=[], addingReplicas=[], leader=1, leaderRecoveryState=RECOVERED, "
     "leaderEpoch=0, partitionEpoch=0). (org.apache.kafka.controller.ReplicationControlManager)",
     {"kind": "partition_change", "topic": "t", "partition": 4, "replicas": [1, 2], "isr": [1], "leader": 1,
      "state": "new"}),
    # ReplicationControlManager.alterIsr (3.0-3.1, `AlterIsr`): a completion that also moves the leader
    (T + "INFO [Controller 9] AlterIsr request from node 2 for t-5 completed the ongoing partition reassignment and "
     "triggered a leadership change. Reutrning FENCED_LEADER_EPOCH. (org.apache.kafka.controller."
     "ReplicationControlManager)", {"kind": "reassignment_completed", "topic": "t", "partition": 5, "leader": 2}),
    # KafkaController 1.1.0 removePartitionFromReassignedPartitions (2.0-2.3: a Set, test below)
    (T + "INFO [Controller id=9] Removing partition t-6 from the list of reassigned partitions in zookeeper "
     "(kafka.controller.KafkaController)", {"kind": "reassignment_completed", "topic": "t", "partition": 6}),
    (T + "INFO [Controller id=9] Removing partitions Set(moved-0, moved-1) from the list of reassigned partitions in "
     "zookeeper (kafka.controller.KafkaController)", {"kind": "reassignment_completed", "topic": "moved"}),
    # KafkaRaftServer 2.8-3.2 logs its start without a logIdent
    (T + "INFO Kafka Server started (kafka.server.KafkaRaftServer)", {"kind": "broker_started", "broker": 1}),
    # log directories
    (T + "WARN [ReplicaManager broker=1] Stopping serving replicas in dir /data/k1 (kafka.server.ReplicaManager)",
     {"kind": "log_dir_failed", "log_dir": "/data/k1"}),
    (T + "FATAL [ReplicaManager broker=1] Halting broker because dir /data/k1 is offline (kafka.server.ReplicaManager)",
     {"kind": "broker_halted", "log_dir": "/data/k1"}),
    # LogManager.handleLogDirFailure (1.0+) when the last live directory failed; Logging.fatal is ERROR from 1.1
    (T + "ERROR Shutdown broker because all log dirs in /data/k1, /data/k2 have failed (kafka.log.LogManager)",
     {"kind": "broker_halted", "log_dir": "/data/k1, /data/k2"}),
    # fetchers
    (T + "ERROR [ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] Unexpected error occurred while processing "
     "data for partition t-0 at offset 42 (kafka.server.ReplicaFetcherThread)",
     {"kind": "fetch_error", "offset": 42, "broker": 2, "leader": 1}),  # the leader from the fetcher's logIdent
    (T + "INFO [ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] Partition t-0 has an older epoch (4) than the "
     "current leader. Will await the new LeaderAndIsr state before resuming fetching. (kafka.server.ReplicaFetcherThread)",
     {"kind": "fetch_epoch_mismatch", "leader_epoch": 4, "state": "older"}),
    # AbstractFetcherThread.onPartitionFenced's retry: 2.5-3.3 wrote `an new ... retry`, 3.4+ `a newer ... Retry`
    (T + "INFO [ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] Partition t-0 has an new epoch (6) than the "
     "current leader. retry the partition later (kafka.server.ReplicaFetcherThread)",
     {"kind": "fetch_epoch_mismatch", "leader_epoch": 6, "state": "newer", "leader": 1, "broker": 2}),
    (T + "INFO [ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] Partition t-0 has a newer epoch (6) than the "
     "current leader. Retry the partition later. (kafka.server.ReplicaFetcherThread)",
     {"kind": "fetch_epoch_mismatch", "leader_epoch": 6, "state": "newer"}),
    # AbstractFetcherThread.processFetchRequest: NOT_LEADER_FOR_PARTITION / NOT_LEADER_OR_FOLLOWER (INFO 1.1-2.0, DEBUG
    # 2.1+) and UNKNOWN_LEADER_EPOCH (DEBUG, 2.1+)
    ("[2019-05-01 10:00:00,000] INFO [ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] Remote broker is not the "
     "leader for partition orders-3, which could indicate that the partition is being moved "
     "(kafka.server.ReplicaFetcherThread)",
     {"kind": "fetch_error", "topic": "orders", "partition": 3, "broker": 2, "leader": 1, "state": "not leader"}),
    (T + "DEBUG [ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] Remote broker has a smaller leader epoch for "
     "partition orders-3 than this replica's current leader epoch of 7. (kafka.server.ReplicaFetcherThread)",
     {"kind": "fetch_error", "topic": "orders", "partition": 3, "leader": 1, "leader_epoch": 7,
      "state": "smaller leader epoch"}),
    # PartitionRegistration.maybeLogPartitionChange (3.3+): only the changed fields, in diff()'s order
    (T + "INFO [QuorumController id=1] UNCLEAN partition change for t-1 with topic ID AAAAAAAAAAAAAAAAAAAAAA: "
     "replicas: [1, 2] -> [2, 3], isr: [1] -> [2], leader: 1 -> 2, leaderEpoch: 7 -> 8, partitionEpoch: 9 -> 10 "
     "(org.apache.kafka.controller.ReplicationControlManager)",
     {"kind": "unclean_election", "topic": "t", "partition": 1, "replicas": [2, 3], "isr": [2], "leader": 2,
      "leader_epoch": 8, "partition_epoch": 10}),
    (T + "DEBUG [QuorumController id=1] partition change for t-2 with topic ID AAAAAAAAAAAAAAAAAAAAAA: isr: [1, 2, 3] "
     "-> [1, 2], partitionEpoch: 4 -> 5 (org.apache.kafka.controller.ReplicationControlManager)",
     {"kind": "partition_change", "partition": 2, "isr": [1, 2], "replicas": None, "adding": None, "leader": None,
      "partition_epoch": 5}),
    # 3.7+ diffs also name the log directories (after the replicas) and the ELR (before the partition epoch)
    (T + "DEBUG [QuorumController id=1] partition change for t-6 with topic ID AAAAAAAAAAAAAAAAAAAAAA: replicas: "
     "[1, 2, 3, 4] -> [1, 2, 4], directories: [AAAAAAAAAAAAAAAAAAAAAg, AAAAAAAAAAAAAAAAAAAAAg, AAAAAAAAAAAAAAAAAAAAAg, "
     "AAAAAAAAAAAAAAAAAAAAAg] -> [AAAAAAAAAAAAAAAAAAAAAg, AAAAAAAAAAAAAAAAAAAAAg, AAAAAAAAAAAAAAAAAAAAAg], isr: "
     "[1, 2, 3, 4] -> [1, 2, 4], removingReplicas: [3] -> [], addingReplicas: [4] -> [], leaderEpoch: 5 -> 6, "
     "partitionEpoch: 8 -> 9 (org.apache.kafka.controller.ReplicationControlManager)",
     {"kind": "partition_change", "partition": 6, "replicas": [1, 2, 4], "isr": [1, 2, 4], "removing": [],
      "adding": [], "leader_epoch": 6, "partition_epoch": 9}),
    (T + "DEBUG [QuorumController id=1] partition change for t-7 with topic ID AAAAAAAAAAAAAAAAAAAAAA: isr: [1, 2] -> "
     "[1], elr: [] -> [2], partitionEpoch: 4 -> 5 (org.apache.kafka.controller.ReplicationControlManager)",
     {"kind": "partition_change", "partition": 7, "isr": [1], "partition_epoch": 5}),
    # ReplicationControlManager.replay(PartitionRecord) names the topic ID too (3.3+); Strimzi's log4j2 layout
    # for Kafka 4.x puts `[%t] %c{1}:%L - ` before the message and has no milliseconds
    ("2024-01-02 03:04:05 INFO  [quorum-controller-1-event-handler] ReplicationControlManager:450 - [QuorumController "
     "id=1] Replayed PartitionRecord for existing partition t-3 with topic ID AAAAAAAAAAAAAAAAAAAAAA and "
     "PartitionRegistration(replicas=[1, 2], directories=[BBBBBBBBBBBBBBBBBBBBBB, CCCCCCCCCCCCCCCCCCCCCC], isr=[1], "
     "removingReplicas=[], addingReplicas=[], elr=[], lastKnownElr=[], leader=1, leaderRecoveryState=RECOVERED, "
     "leaderEpoch=3, partitionEpoch=4).",
     {"kind": "partition_change", "topic": "t", "partition": 3, "broker": 1, "isr": [1], "replicas": [1, 2],
      "leader": 1, "leader_epoch": 3, "partition_epoch": 4, "state": "existing", "ts_ms": 1704164645000}),
    # `[%d] [%-5p] [%t] [%c] - %m` and `%d %p [%t] %c - %m` (a dotted logger name) before the logIdent
    (T + "[INFO ] [data-plane-kafka-request-handler-1] [kafka.cluster.Partition] - [Partition t-0 broker=1] "
     "Shrinking ISR from 1,2 to 1", {"kind": "isr_shrink", "isr": [1], "broker": 1}),
    ("2024-01-02 03:04:05,678 WARN [ReplicaFetcherThread-0-1] kafka.server.ReplicaFetcherThread - [ReplicaFetcher "
     "replicaId=2, leaderId=1, fetcherId=0] Partition t-0 marked as failed",
     {"kind": "partition_failed", "broker": 2, "leader": 1}),
    # ReplicaStateMachine (2.6+): the controller removes a dead replica from the ISR
    (T + "INFO [Controller id=1 epoch=4] Partition t-0 state changed to (Leader:-1,ISR:2,LeaderRecoveryState:RECOVERED,"
     "LeaderEpoch:6,ZkVersion:9,ControllerEpoch:4) after removing replica 2 from the ISR as part of transition to "
     "OfflineReplica (state.change.logger)",
     {"kind": "partition_state", "leader": -1, "isr": [2], "leader_epoch": 6, "partition_epoch": 9,
      "target_broker": 2, "state": "OfflineReplica", "broker": 1}),
    # ReplicationControlManager.replay(RemoveTopicRecord) from 3.6 (`Removed topic t with ID x.` before)
    (T + "INFO [QuorumController id=1] Replayed RemoveTopicRecord for topic gone with ID AAAAAAAAAAAAAAAAAAAAAA. "
     "(org.apache.kafka.controller.ReplicationControlManager)", {"kind": "topic_deleted", "topic": "gone"}),
    # ReplicationControlManager (KRaft controller; `alterIsr` in 3.0-3.1): a proposed ISR refused, for any reason
    (T + "ERROR [QuorumController id=1] Rejecting alterIsr request from node 2 for t-0 because it specified an invalid "
     "ISR [3]. (org.apache.kafka.controller.ReplicationControlManager)",
     {"kind": "alter_partition_rejected", "topic": "t", "partition": 0, "broker": 1, "target_broker": 2,
      "partition_epoch": None}),
    # ReplicaManager.makeFollowers 0.10-0.11: the broker names itself, the partition is a TopicAndPartition
    (T + "ERROR Broker 3 received LeaderAndIsrRequest with correlation id 7 from controller 1 epoch 5 for partition "
     "[t,0] but cannot become follower since the new leader 2 is unavailable. (state.change.logger)",
     {"kind": "become_follower", "topic": "t", "partition": 0, "broker": 3, "leader": 2, "target_broker": 1,
      "state": "leader unavailable"}),
    (T + "INFO [KafkaServer id=1] shutting down (kafka.server.KafkaServer)", {"kind": "broker_shutting_down"}),
    (T + "FATAL Exiting Kafka. (kafka.server.KafkaServerStartable)", {"kind": "broker_exit"}),
    # a log cut back (Log.truncateTo: the name in the message up to 1.0, in the logIdent from 1.1, UnifiedLog's
    # from 3.1), and the follower's warning that it cut below its high watermark (ReplicaFetcherThread, 2.0+)
    (T + "INFO Truncating log orders-3 to offset 120. (kafka.log.Log)",
     {"kind": "log_truncated", "topic": "orders", "partition": 3, "offset": 120, "broker": 1}),
    # AbstractFetcherThread.processFetchRequest 2.7+ (KAFKA-9930; the topic-ID errors from 3.1): a WARN of its own
    # instead of "Error for partition" (the first as a 2.8 / CP 6.2 fault test's README shows it)
    (T + "WARN [ReplicaFetcher replicaId=2, leaderId=3, fetcherId=0] Received UNKNOWN_TOPIC_OR_PARTITION from the "
     "leader for partition test2-56. This error may be returned transiently when the partition is being created or "
     "deleted, but it is not expected to persist. (kafka.server.ReplicaFetcherThread)",
     {"kind": "fetch_error", "topic": "test2", "partition": 56, "broker": 2, "leader": 3,
      "error": "UNKNOWN_TOPIC_OR_PARTITION"}),
    (T + "WARN [ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Received UNKNOWN_TOPIC_ID from the leader for "
     "partition _confluent-telemetry-metrics-3. This error may be returned transiently when the partition is being "
     "created or deleted, but it is not expected to persist. (kafka.server.ReplicaFetcherThread)",
     {"kind": "fetch_error", "topic": "_confluent-telemetry-metrics", "partition": 3, "leader": 2,
      "error": "UNKNOWN_TOPIC_ID"}),
    # Confluent Server's MergedLog names the partition as Log and UnifiedLog do
    (T + "INFO [MergedLog partition=orders-4, dir=/var/lib/kafka/data] Truncating to offset 5 (kafka.log.MergedLog)",
     {"kind": "log_truncated", "topic": "orders", "partition": 4, "offset": 5}),
    # the stack trace joined on after the logger, no line break (apache/kafka#11294's description): the message is whole
    ("[2021-08-31 11:31:25,092] ERROR [ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Unexpected error occurred "
     "while processing data for partition __consumer_offsets-1 at offset 31727 (kafka.server.ReplicaFetcherThread)"
     "java.lang.IllegalStateException: Offset mismatch for partition __consumer_offsets-1: fetched offset = 31727, "
     "log end offset = 31728. at kafka.server.ReplicaFetcherThread.processPartitionData(ReplicaFetcherThread.scala:194)"
     " at kafka.server.AbstractFetcherThread.$anonfun$processFetchRequest$7(AbstractFetcherThread.scala:351)",
     {"kind": "fetch_error", "topic": "__consumer_offsets", "partition": 1, "offset": 31727, "leader": 2, "broker": 1}),
    # a paste cut (or wrapped) the line in the logger's name: the message before it is whole
    (T + "INFO [Partition t-0 broker=1] Shrinking ISR from 1,2 to 1 (kafka.cluster.Parti",
     {"kind": "isr_shrink", "isr": [1], "topic": "t", "partition": 0}),
    # 0.10's Log.truncateTo logs before it refuses a negative offset (IllegalArgumentException): nothing was cut
    (T + "INFO Truncating log orders-3 to offset -1. (kafka.log.Log)", None),
    (T + "INFO [Log partition=my-topic-2, dir=/var/lib/kafka] Truncating to offset 77 (kafka.log.Log)",
     {"kind": "log_truncated", "topic": "my-topic", "partition": 2, "offset": 77}),
    (T + "INFO [UnifiedLog partition=t-0, dir=/data/k1] Truncating to offset 5 (kafka.log.UnifiedLog)",
     {"kind": "log_truncated", "topic": "t", "partition": 0, "offset": 5}),
    (T + "WARN [ReplicaFetcher replicaId=1, leaderId=3, fetcherId=0] Truncating t-1 to offset 40 below high "
     "watermark 45 (kafka.server.ReplicaFetcherThread)",
     {"kind": "truncated_below_hw", "topic": "t", "partition": 1, "offset": 40, "leader": 3, "broker": 1}),
    # with unclean leader election off, a follower ahead of its new leader exits instead of truncating (0.8-2.0)
    (T + "FATAL [ReplicaFetcherThread-0-3], Halting because log truncation is not allowed for topic orders, Current "
     "leader 3's latest offset 100 is less than replica 1's latest offset 120 (kafka.server.ReplicaFetcherThread)",
     {"kind": "truncation_refused", "topic": "orders", "partition": None, "leader": 3, "offset": 100}),
    (T + "FATAL [ReplicaFetcherThread-0-3], Exiting because log truncation is not allowed for partition [orders,2], "
     "Current leader 3's latest offset 100 is less than replica 1's latest offset 120 "
     "(kafka.server.ReplicaFetcherThread)",
     {"kind": "truncation_refused", "topic": "orders", "partition": 2, "leader": 3, "offset": 100}),
    (T + "FATAL [ReplicaFetcher replicaId=1, leaderId=3, fetcherId=0] Exiting because log truncation is not allowed "
     "for partition orders-2, current leader's latest offset 100 is less than replica's latest offset 120 "
     "(kafka.server.ReplicaFetcherThread)",
     {"kind": "truncation_refused", "topic": "orders", "partition": 2, "leader": 3, "offset": 100, "broker": 1}),
    # PartitionStateMachine up to 1.0: the controller's id and epoch in the message (0.8-0.11), the leader alone
    (T + "TRACE Controller 2 epoch 7 changed partition [orders,1] from OfflinePartition to OnlinePartition with leader 3 "
     "(state.change.logger)", {"kind": "partition_state", "topic": "orders", "partition": 1, "broker": 2, "leader": 3,
                               "state": "OnlinePartition", "isr": None}),
    (T + "TRACE Controller 2 epoch 7 changed partition [orders,1] state from NonExistentPartition to NewPartition with "
     "assigned replicas 3,1 (state.change.logger)",
     {"kind": "partition_state", "broker": 2, "state": "NewPartition", "replicas": [3, 1], "leader": None}),
    (T + "TRACE [Controller id=1 epoch=1] Changed partition krp-0 from OnlinePartition to OnlinePartition with leader 2 "
     "(state.change.logger)", {"kind": "partition_state", "topic": "krp", "partition": 0, "broker": 1, "leader": 2,
                               "state": "OnlinePartition"}),
    # the whole fetch request failed (AbstractFetcherThread): no partition, the leader from the line (0.11-1.0) or
    # the thread's logIdent, the cause where the line names it (0.8.2-0.9)
    (T + "WARN [ReplicaFetcherThread-0-2], Error in fetch Name: FetchRequest; Version: 0; CorrelationId: 84; "
     "ClientId: ReplicaFetcherThread-0-2; ReplicaId: 1; MaxWait: 500 ms; MinBytes: 1 bytes; RequestInfo: [t,0] -> "
     "PartitionFetchInfo(100,1048576). Possible cause: java.nio.channels.ClosedChannelException "
     "(kafka.server.ReplicaFetcherThread)",
     {"kind": "fetch_request_failed", "leader": 2, "error": "java.nio.channels.ClosedChannelException",
      "topic": None, "partition": None}),
    (T + "WARN [ReplicaFetcherThread-0-0]: Error in fetch to broker 0, request (type=FetchRequest, replicaId=1, "
     "maxWait=500, minBytes=1, maxBytes=10485760, fetchData={t-0=(offset=0, logStartOffset=0, maxBytes=1048576)}) "
     "(kafka.server.ReplicaFetcherThread)", {"kind": "fetch_request_failed", "leader": 0, "error": None}),
    (T + "WARN [ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Error in response for fetch request (type="
     "FetchRequest, replicaId=1, maxWait=500, minBytes=1, maxBytes=10485760, fetchData={t-0=(fetchOffset=0, "
     "logStartOffset=0, maxBytes=1048576, currentLeaderEpoch=Optional[3])}, isolationLevel=READ_UNCOMMITTED, "
     "toForget=, metadata=(sessionId=INVALID, epoch=INITIAL), rackId=) (kafka.server.ReplicaFetcherThread)",
     {"kind": "fetch_request_failed", "leader": 2, "broker": 1, "topic": None}),
    # a follower whose fetch offset fell out of its leader's range moves it (ReplicaFetcherThread.
    # handleOffsetOutOfRange up to 2.0, AbstractFetcherThread.fetchOffsetAndTruncate from 2.1): the follower and the
    # leader in the line (0.8.0; 0.8.1-0.11 with `from F`), the leader from the fetcher's logIdent (1.0+); 3.6+ says
    # whether the follower dropped its log (WARN) or kept it (INFO)
    (T + "WARN [ReplicaFetcherThread-0-2], Replica 1 for partition [orders,3] reset its fetch offset to current "
     "leader 2's latest offset 80 (kafka.server.ReplicaFetcherThread)",
     {"kind": "fetch_offset_reset", "topic": "orders", "partition": 3, "broker": 1, "leader": 2, "state": "latest",
      "offset": 80}),
    (T + "WARN [ReplicaFetcherThread-0-2], Replica 4 for partition orders-3 reset its fetch offset from 0 to current "
     "leader 2's start offset 5100 (kafka.server.ReplicaFetcherThread)",
     {"kind": "fetch_offset_reset", "broker": 4, "leader": 2, "state": "start", "offset": 5100}),
    (T + "WARN [ReplicaFetcher replicaId=1, leaderId=3, fetcherId=0] Reset fetch offset for partition orders-3 from "
     "120 to current leader's latest offset 100 (kafka.server.ReplicaFetcherThread)",
     {"kind": "fetch_offset_reset", "topic": "orders", "partition": 3, "broker": 1, "leader": 3, "state": "latest",
      "offset": 100}),
    (T + "WARN [ReplicaFetcher replicaId=1, leaderId=3, fetcherId=0] Truncate fully and reset fetch offset for "
     "partition orders-3 from 10 to the current leader's start offset 900 because the local replica's end offset is "
     "smaller than the current leader's start offsets. (kafka.server.ReplicaFetcherThread)",
     {"kind": "fetch_offset_reset", "leader": 3, "state": "start", "offset": 900}),
    (T + "INFO [ReplicaFetcher replicaId=1, leaderId=3, fetcherId=0] Reset fetch offset for partition orders-3 from "
     "950 to the current local replica's end offset 950 (kafka.server.ReplicaFetcherThread)",
     {"kind": "fetch_offset_reset", "leader": 3, "state": "local end", "offset": 950}),
    # a produce refused under min.insync.replicas, 0.8-0.11: ReplicaManager's logIdent `[Replica Manager on Broker N]: `
    # names the leader, and the exception gives the ISR's size only (the ISR is unknown, not empty)
    (T + "ERROR [Replica Manager on Broker 3]: Error processing append operation on partition [orders,1] "
     "(kafka.server.ReplicaManager)", None),
    ("org.apache.kafka.common.errors.NotEnoughReplicasException: Number of insync replicas for partition [orders,1] "
     "is [1], below required minimum [2]",
     {"kind": "produce_rejected", "topic": "orders", "partition": 1, "broker": 3, "isr": None, "min_isr": 2}),
    # a record whose first character a paste lost, and the Markdown a bug report or a blog puts before log lines:
    # a quote (here around docker compose's prefix), a list item (around grep's file name), inline code's backtick
    ("2024-01-02 03:04:05,678] INFO [Partition t-0 broker=1] Shrinking ISR from 1,2 to 1 (kafka.cluster.Partition)",
     {"kind": "isr_shrink", "isr": [1], "ts_ms": 1704164645678}),
    ("> kafka_1 | " + T + "INFO [Partition t-0 broker=1] Expanding ISR from 1 to 1,2 (kafka.cluster.Partition)",
     {"kind": "isr_expand", "isr": [1, 2]}),
    ("4. server.log.2019-10-09-19:" + T + "INFO [Partition t-0 broker=1] Shrinking ISR from 1,2 to 1 "
     "(kafka.cluster.Partition)", {"kind": "isr_shrink", "isr": [1]}),
    ("`" + T + "INFO [Partition t-0 broker=1] Expanding ISR from 1 to 1,2 (kafka.cluster.Partition)",
     {"kind": "isr_expand", "isr": [1, 2]}),
    ("```2024-01-02 03:04:05 INFO  Partition:123 - [Partition t-0 broker=1] Shrinking ISR from 1,2 to 1",
     {"kind": "isr_shrink", "isr": [1]}),
    # a Jira code block's mark glued to the first line or to the last (the logger then still ends the line)
    ("{noformat}" + T + "INFO [Partition t-0 broker=1] Shrinking ISR from 1,2 to 1 (kafka.cluster.Partition)",
     {"kind": "isr_shrink", "isr": [1]}),
    (T + "INFO [Partition t-0 broker=1] Expanding ISR from 1 to 1,2 (kafka.cluster.Partition){code}",
     {"kind": "isr_expand", "isr": [1, 2], "message": "[Partition t-0 broker=1] Expanding ISR from 1 to 1,2"}),
    # controller elections, written by the winner: ZookeeperLeaderElector (0.8-0.10, no logIdent: the id is the
    # line's own), KafkaController.elect (0.11-2.1; 2.2-3.9 with the new epoch), QuorumController (KRaft 2.8, 3.0-3.2,
    # 3.3-3.6, 3.7+)
    (T + "INFO 4 successfully elected as leader (kafka.server.ZookeeperLeaderElector)",
     {"kind": "controller_elected", "broker": 4, "leader_epoch": None, "topic": None}),
    (T + "INFO [Controller 3]: 3 successfully elected as the controller (kafka.controller.KafkaController)",
     {"kind": "controller_elected", "broker": 3, "leader_epoch": None}),
    (T + "INFO [Controller id=2] 2 successfully elected as the controller. Epoch incremented to 17 and epoch zk version "
     "is now 16 (kafka.controller.KafkaController)", {"kind": "controller_elected", "broker": 2, "leader_epoch": 17}),
    (T + "INFO [Controller 9] Becoming active at controller epoch 4. (org.apache.kafka.controller.QuorumController)",
     {"kind": "controller_elected", "broker": 9, "leader_epoch": 4}),
    (T + "INFO [Controller 9] Becoming the active controller at epoch 2, committed offset 10 and committed epoch 1. "
     "(org.apache.kafka.controller.QuorumController)", {"kind": "controller_elected", "broker": 9, "leader_epoch": 2}),
    (T + "INFO [Controller 8] Becoming the active controller at epoch 7, committed offset -1, committed epoch -1 "
     "(org.apache.kafka.controller.QuorumController)", {"kind": "controller_elected", "broker": 8, "leader_epoch": 7}),
    (T + "INFO [QuorumController id=7] Becoming the active controller at epoch 5, next write offset 1234. "
     "(org.apache.kafka.controller.QuorumController)", {"kind": "controller_elected", "broker": 7, "leader_epoch": 5}),
]

QUIET = [
    # a truncation that removed nothing, and the fetcher's account of one (its log writes the event)
    T + "INFO [UnifiedLog partition=t-0, dir=/data/k1] Truncating to 9 has no effect as the largest offset in the log "
        "is 8 (kafka.log.UnifiedLog)",
    T + "INFO [ReplicaFetcher replicaId=1, leaderId=3, fetcherId=0] Truncating partition t-0 with TruncationState("
        "offset=5, completed=true) due to leader epoch and offset EpochEndOffset(errorCode=0, partition=0, leaderEpoch=3, "
        "endOffset=5) (kafka.server.ReplicaFetcherThread)",
    T + "INFO [LocalLog partition=t-0, dir=/data/k1] Rolled new log segment at offset 120 in 2 ms. "
        "(kafka.log.LocalLog)",
    # a ZooKeeper server's own layout, between the broker's lines in `docker compose logs`: records, no event
    "zookeeper_1       | 2019-07-22 07:02:05,210 [myid:] - INFO  [main:Environment@100] - Server environment:user.name=root",
    "2020-01-29 00:06:11,256 [myid:1] - WARN  [NIOWorkerThread-1:NIOServerCnxn@370] - Exception causing close of "
    "session 0x0: ZooKeeperServer not running",
    # a standby controller's view of an election, and the epoch line of 1.1-2.1 apart from its election line
    T + "INFO [QuorumController id=8] In the new epoch 5, the leader is 7. (org.apache.kafka.controller.QuorumController)",
    T + "INFO [Controller id=2] Epoch incremented to 17 (kafka.controller.KafkaController)",
    T + "INFO [ReplicaFetcherManager on broker 1] shutting down (kafka.server.ReplicaFetcherManager)",
    T + "INFO [Kafka Request Handler on Broker 1], shutting down (kafka.server.KafkaRequestHandlerPool)",
    T + "INFO Stat of the created znode at /brokers/ids/1 is: 1478,1478,1718600148028,1718600148028,1,0,0,1,194,0,1478",
    " (kafka.zk.KafkaZkClient)",
    # a registration change that neither fences nor unfences (a controlled shutdown starting)
    T + "INFO [QuorumController id=0] Replayed BrokerRegistrationChangeRecord modifying the registration for broker 2: "
        "BrokerRegistrationChangeRecord(brokerId=2, brokerEpoch=40, fenced=0, inControlledShutdown=1, logDirs=[]) "
        "(org.apache.kafka.controller.ClusterControlManager)",
    # a failed preferred or controlled-shutdown election leaves the partition online (PartitionStateMachine)
    T + "ERROR [Controller id=1 epoch=4] Controller 1 epoch 4 failed to change state for partition t-0 from "
        "OnlinePartition to OnlinePartition (state.change.logger)",
    T + "ERROR [KafkaServer id=2] Fatal error during KafkaServer shutdown. (kafka.server.KafkaServer)",
    "java.lang.IllegalStateException: Kafka server is still starting up, cannot shut down!",
    "        at kafka.server.KafkaServer.shutdown(KafkaServer.scala:670)",
    "my-cluster-kafka-0 kafka \tat kafka.Kafka$.main(Kafka.scala:82)",  # the same trace through stern's prefix
    # ... through the runtime's time (`kubectl logs --timestamps`) and journald's prefix; a log4j2 frame names its jar
    "2024-01-02T02:04:05.678123456Z \tat kafka.Kafka$.main(Kafka.scala:82)",
    "Jan 02 03:04:05 host kafka-server-start.sh[123]: \tat kafka.Kafka.main(Kafka.scala) [kafka_2.13-4.0.0.jar:?]",
    "\tat kafka.server.KafkaRaftServer.<init>(KafkaRaftServer.scala:56) ~[kafka_2.13-4.0.0.jar:?]",
    ">     at kafka.server.KafkaRaftServer.<init>(KafkaRaftServer.scala:56)",  # a trace quoted in Markdown
    # the config dump of AbstractConfig.logAll: a tab-indented `name = value` per setting (an empty value too),
    # then the logger; through compose's and the runtime's prefixes as well
    T + "INFO KafkaConfig values: ",
    "\tadvertised.listeners = null",
    "\tssl.trustmanager.algorithm = ",
    "kafka-1  | \tlog.dirs = /var/lib/kafka/data",
    "2024-01-02T02:04:05.678123456Z \tzookeeper.sync.time.ms = 2000",
    "2024-01-02T02:04:05.678123456Z  (kafka.server.KafkaConfig)",
    # the fetchers that move replicas between a broker's own log directories are not replication fetchers
    T + "INFO [ReplicaAlterLogDirsManager on broker 1] Added fetcher to broker 1 for partitions Map(t-0 -> "
        "InitialFetchState(None,BrokerEndPoint(id=1, host=localhost:-1),5,10)) (kafka.server.ReplicaAlterLogDirsManager)",
    T + "WARN [ReplicaAlterLogDirsThread-1]: Error in response for fetch request (type=FetchRequest) "
        "(kafka.server.ReplicaAlterLogDirsThread)",
    T + "INFO [ReplicaAlterLogDirsManager on broker 1] Removed fetcher for partitions Set(t-0) "
        "(kafka.server.ReplicaAlterLogDirsManager)",
]


@pytest.fixture(scope="module")
def read(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("rules")
    (root / "broker-1").mkdir()
    (root / "broker-1" / "server.log").write_text("".join(line + "\n" for line, _ in CASES), encoding="utf-8")
    (root / "broker-1" / "part.log").write_text(
        T + "WARN [ReplicaManager broker=1] Broker 1 stopped fetcher for partitions t-0,t-1 and stopped moving logs for "
            "partitions  because they are in the failed log directory /data/k1. (kafka.server.ReplicaManager)\n"
        + T + "INFO Logs for partitions t-0,t-1 are offline and logs for future partitions  are offline due to failure "
              "on log directory /data/k1 (kafka.log.LogManager)\n", encoding="utf-8")
    # no event, no reject: other threads' `shutting down` (only KafkaServer's logIdent is the broker), the tail
    # of a message holding a newline (ZooKeeper's Stat), a stack trace indented with spaces, log-dir fetchers
    (root / "broker-1" / "quiet.log").write_text("".join(line + "\n" for line in QUIET), encoding="utf-8")
    out = read_logs(spark, str(root), cluster="r", log_timezone="Europe/Paris")
    events = [r.asDict() for r in out["log_events"].collect()]
    return events, out["rejects"].collect()


def test_each_family_and_layout_gives_its_event(read):
    events, rejects = read
    assert not rejects
    by_line = {e["line_number"]: e for e in events if e["source"].endswith("server.log")}
    for n, (_, expect) in enumerate(CASES, start=1):
        if expect is None:
            assert n not in by_line, n
            continue
        expect = dict(expect)
        if "ts_ms" in expect:
            expect["ts_ms"] -= 3_600_000  # 03:04:05 in Paris is 02:04:05 UTC
        assert {k: by_line[n][k] for k in expect} == expect, n


def test_other_threads_shutdown_and_message_tails_give_no_event(read):
    events, _ = read
    assert [e for e in events if e["source"].endswith("quiet.log")] == []


def read_file(spark, tmp_path, name: str, text: str) -> dict:
    """``text`` written to ``tmp_path/name`` and read alone (cluster ``r``)."""
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return read_logs(spark, str(tmp_path), cluster="r")


def test_a_pastes_code_block_marks_are_blank_and_cut_the_record_before_them(spark, tmp_path):
    """A bug report's log sits between code-block marks, Jira's `{code:java}`/`{noformat}` or a Markdown fence with
    its language, each alone on its line: `no timestamp` rejects before, they are `blank`. Two blocks are two
    excerpts: the exception opening the second one is not the end of the first one's record (it gave a refusal
    from the first block's append)."""
    out = read_file(spark, tmp_path, "broker-1/server.log",
        "{code:java}\n" + T + REFUSED.format(b=1) + "\n{code}\n\n"
        "And later:\n{noformat}\n" + NOT_ENOUGH.format(b=1) + "\n{noformat}\n```log\n"
        + T + "INFO [Partition t-0 broker=1] Shrinking ISR from 1,2 to 1 (kafka.cluster.Partition)\n```\n")
    assert sorted((r["line_number"], r["reason"]) for r in out["rejects"].collect()) == \
        [(5, "no timestamp"), (7, "continuation line")]
    counts = {r["category"]: r["lines"] for r in out["line_counts"].collect()}
    assert counts == {"blank": 7, "other": 1, "event": 1, "reject": 2}, counts
    assert [r["kind"] for r in out["log_events"].collect()] == ["isr_shrink"]


def test_a_config_line_needs_its_indent_and_a_record_before_it(spark, tmp_path):
    """AbstractConfig.logAll indents each setting with a tab, which a log pasted into a bug report or a blog often
    carries as spaces (a 0.10.0.1 start-up pasted with eight: lines 5-6, each rejected as 'no timestamp' before);
    without an indent, or with no record before it in the file, a `name = value` line is no part of a record and
    stays a reject."""
    out = read_file(spark, tmp_path, "broker-1/server.log",
        "\tlog.dirs = /var/lib/kafka/data\n" + T + "INFO KafkaConfig values: \nlog.dirs = /var/lib/kafka/data\n"
        "\tlog.dirs /var/lib/kafka/data\n        advertised.host.name = null\n        authorizer.class.name =\n"
        " log.dirs = /var/lib/kafka/data\n (kafka.server.KafkaConfig)\n")
    assert sorted((r["line_number"], r["reason"]) for r in out["rejects"].collect()) == \
        [(1, "continuation line"), (3, "no timestamp"), (4, "no timestamp"), (7, "no timestamp")]
    counts = {r["category"]: r["lines"] for r in out["line_counts"].collect()}
    assert counts["attached"] == 3, counts


def test_a_record_behind_an_unknown_prefix_is_rejected_not_attached(spark, tmp_path):
    """A whole record behind a prefix no envelope rule knows, or led by a date whose time is cut short, ends in
    ` (logger)` like a message tail, but it is not part of the record before it: its event would be lost without a
    trace."""
    out = read_file(spark, tmp_path, "broker-1/server.log",
        T + "INFO [KafkaServer id=1] started (kafka.server.KafkaServer)\n"
        "web-7f9c | host | " + T + "INFO [Partition t-0 broker=1] Shrinking ISR from 1,2 to 1 (kafka.cluster.Partition)\n"
        "2024/01/02 03:04 INFO [Partition t-0 broker=1] Expanding ISR from 1 to 1,2 (kafka.cluster.Partition)\n")
    assert [r["kind"] for r in out["log_events"].collect()] == ["broker_started"]
    assert sorted((r["line_number"], r["reason"]) for r in out["rejects"].collect()) == \
        [(2, "unknown prefix before a log record"), (3, "truncated or malformed timestamp/layout")]


def test_an_iso_time_with_its_offset_and_a_csv_export_are_records(spark, tmp_path):
    """A layout writing ISO-8601 with a `T` and an offset (`%d{yyyy-MM-dd'T'HH:mm:ss.SSSZ} %p %m (%c)`) looked like a
    container runtime's time before a message tail: its lines were rejected as `continuation line`, their ISR
    changes lost. A log tool's CSV export (`"time","level","logger","message"`, as pasted in confluentinc/
    librdkafka#4401, one line cut before its closing quote) was `no timestamp`; it is read as the record it holds."""
    out = read_file(spark, tmp_path, "broker-1/server.log",
        "2024-01-02T03:04:05.678+0100 INFO [Partition t-0 broker=1] Shrinking ISR from 1,2 to 1 (kafka.cluster.Partition)\n"
        "2024-01-02T03:04:05.678Z INFO [Partition t-0 broker=1] Expanding ISR from 1 to 1,2 (kafka.cluster.Partition)\n"
        '"2023-08-18T09:07:19.279Z","WARN","kafka.server.ReplicaFetcherThread","[ReplicaFetcher replicaId=7, '
        'leaderId=12, fetcherId=5] Partition other-topic-003-0 marked as failed"\n'
        '"2023-08-18T09:07:20.100Z","INFO","kafka.server.KafkaServer","[KafkaServer id=7] shutting down ""now""\n'
        '"2023-08-18T09:07:21.000Z","INFO","kafka.server.KafkaServer","[KafkaServer id=7] shutting down"\n')
    assert out["rejects"].count() == 0
    got = sorted((r["line_number"], r["kind"], r["ts_ms"], r["broker"], r["leader"])
                 for r in out["log_events"].collect())
    assert got == [(1, "isr_shrink", 1704161045678, 1, None), (2, "isr_expand", 1704164645678, 1, None),
                                    (3, "partition_failed", 1692349639279, 7, 12),
                                    (5, "broker_shutting_down", 1692349641000, 7, None)]
    messages = {r["line_number"]: r["message"] for r in out["log_events"].collect()}
    assert messages[3].endswith("Partition other-topic-003-0 marked as failed")


def test_a_jira_code_mark_is_no_json_record_and_a_braced_date_is_a_record(spark, tmp_path):
    """A JSON layout's record starts `{"`; a Jira `{code:java}` mark around a pasted log (KAFKA-14778 as relayed by
    mail) was rejected as `unreadable JSON log record`, a reason that sent the reader to the wrong place: it is
    `blank` (see the code-block marks below). A layout
    that writes the date in braces (`{%d} %p [%t] (%F:%L) - %m`, KAFKA-903) is a record: the thread and the file's
    line come off before the message (0.8's KafkaServer `[Kafka Server 0], started`)."""
    out = read_file(spark, tmp_path, "broker-1/server.log",
        "{code:java}\n{2013-05-10 19:14:52,156}  INFO [Thread-1] (Logging.scala:67) - [Kafka Server 0], started\n"
        '{"message": "x"\n')
    assert sorted((r["line_number"], r["reason"]) for r in out["rejects"].collect()) == [
        (3, "unreadable JSON log record (no message field or invalid JSON)")]
    assert [(r["line_number"], r["kind"], r["broker"], r["ts_ms"], r["message"])
            for r in out["log_events"].collect()] == [
        (2, "broker_started", 0, 1368213292156, "[Kafka Server 0], started")]


def test_linkedins_layout_is_read(spark, tmp_path):
    """LinkedIn's `%d{yyyy/MM/dd HH:mm:ss.SSS} %p [%c{1}] [%t] [app] [context] %m` (its fork's brokers; the lines its
    engineers paste into Kafka's Jira, KAFKA-1398, and linkedin/kafka#458) was rejected whole as a malformed layout.
    The four bracketed fields come off before the message, whose own logIdent names the broker (Partition.maybeShrinkIsr,
    AbstractFetcherThread.processFetchRequest); an exception's lines stay under their record, also through docker
    compose; a line with fewer fields is still a record, of no event."""
    out = read_file(spark, tmp_path, "broker-1/server.log",
        "2023/05/23 21:09:35.182 INFO [DefaultAlterIsrManager] [data-plane-kafka-request-handler-7] [kafka-server] [] "
        "Sending to controller org.apache.kafka.common.requests.AlterIsrRequest$Builder of ~274 bytes (1 items)\n"
        "2023/05/23 21:09:36.000 INFO [Partition] [data-plane-kafka-request-handler-7] [kafka-server] [] [Partition "
        "payments-2 broker=78001] Shrinking ISR from 78001,78002,78003 to 78001,78003. Leader: (highWatermark: 5, "
        "endOffset: 9). Out of sync replicas: (brokerId: 78002, endOffset: 5).\n"
        "2023/05/23 21:09:37.000 WARN [ReplicaFetcherThread] [ReplicaFetcherThread-0-78002] [kafka-server] [] "
        "[ReplicaFetcher replicaId=78001, leaderId=78002, fetcherId=0] Error for partition payments-3 at offset 10\n"
        "org.apache.kafka.common.errors.NotLeaderOrFollowerException: not the leader\n"
        "2014/04/15 19:35:34.223 ERROR [TopicConfigManager] [kafka-server] [] Ignoring topic config change\n"
        "kafka-1 | 2023/05/23 21:09:38.250 INFO [Partition] [t-1] [kafka-server] [] [Partition payments-2 "
        "broker=78001] Expanding ISR from 78001,78003 to 78001,78003,78002\n"
        "kafka-1 |         at kafka.server.ReplicaManager.appendToLocalLog(ReplicaManager.scala:10)\n")
    assert out["rejects"].count() == 0
    got = sorted((r["line_number"], r["kind"], r["broker"], r["topic"], r["partition"], r["isr"], r["leader"],
                  r["ts_ms"]) for r in out["log_events"].collect())
    assert got == [(2, "isr_shrink", 78001, "payments", 2, [78001, 78003], None, 1684876176000),
                   (3, "fetch_error", 78001, "payments", 3, None, 78002, 1684876177000),
                   (6, "isr_expand", 78001, "payments", 2, [78001, 78003, 78002], None, 1684876178250)]
    counts = {r["category"]: r["lines"] for r in out["line_counts"].collect()}
    assert counts == {"event": 3, "other": 2, "attached": 2}, counts


def test_a_broker_failure_or_startup_callback_names_each_broker(spark, tmp_path):
    """KafkaController.onBrokerFailure (ZooKeeper controller, 0.8-3.x): `Broker failure callback for 1,2` lists the
    brokers whose registration left ZooKeeper, onBrokerStartup `New broker startup callback for 1,2` those whose
    registration appeared; a row per broker, written by the controller (the line's logIdent: `[Controller 3]: `
    0.8-0.11, `[Controller id=0] ` 1.0+). An empty list (no broker died) is no row. KRaft's fencing of a broker whose
    session timed out (ReplicationControlManager.maybeFenceOneStaleBroker) is told from a fence record replayed."""
    out = read_file(spark, tmp_path, "broker-9/controller.log",
        "[2015-09-01 09:54:30,030] INFO [Controller 3]: Broker failure callback for 1 (kafka.controller.KafkaController)\n"
        "[2021-03-04 05:06:07,008] INFO [Controller id=0] Broker failure callback for 1,2 "
        "(kafka.controller.KafkaController)\n"
        "[2021-03-04 05:06:08,000] INFO [Controller id=0] Broker failure callback for  (kafka.controller.KafkaController)\n"
        "[2021-03-04 05:07:00,000] INFO [Controller id=0] New broker startup callback for 2 "
        "(kafka.controller.KafkaController)\n"
        "[2024-05-01 10:00:40,000] INFO [QuorumController id=9] Fencing broker 2 because its session has timed out. "
        "(org.apache.kafka.controller.ReplicationControlManager)\n"
        "[2024-05-01 10:00:40,001] INFO [Controller 9] Fenced broker: FenceBrokerRecord(id=2, epoch=7) "
        "(org.apache.kafka.controller.ClusterControlManager)\n")
    assert out["rejects"].count() == 0
    assert sorted((r["line_number"], r["kind"], r["broker"], r["target_broker"], r["topic"], r["partition"], r["state"])
                  for r in out["log_events"].collect()) == [
        (1, "broker_failed", 3, 1, None, None, None), (2, "broker_failed", 0, 1, None, None, None),
        (2, "broker_failed", 0, 2, None, None, None), (4, "broker_registered", 0, 2, None, None, None),
        (5, "broker_fenced", 9, 2, None, None, "session timed out"), (6, "broker_fenced", 9, 2, None, None, None)]


def test_brokers_interleaved_in_one_compose_file_keep_their_own_lines(spark, tmp_path):
    """`docker compose logs` of a cluster is one file holding every broker's lines. ReplicaManager.appendToLocalLog's
    exception follows its record with another broker's line between them: it belongs to its own service's record
    (it went under kafka-2's, no event). KafkaRaftServer's 2.8-3.2 start line names no broker: it is its service's
    broker (it took the file's first, broker 1). Partition.updateIsr's "Cached zkVersion" refusal is broker 2's, not
    broker 1's shrink's (KAFKA-2729: two brokers both leading a partition log both)."""
    out = read_file(spark, tmp_path, "compose.log",
        "kafka-1  | " + T + "ERROR [ReplicaManager broker=1] Error processing append operation on partition "
        "orders-1 (kafka.server.ReplicaManager)\n"
        "kafka-2  | " + T + "INFO [BrokerServer id=2] Transition from STARTING to STARTED (kafka.server.BrokerServer)\n"
        "kafka-1  | org.apache.kafka.common.errors.NotEnoughReplicasException: The size of the current ISR Set(1) is "
        "insufficient to satisfy the min.isr requirement of 2 for partition orders-1\n"
        "kafka-2  | " + T + "INFO Kafka Server started (kafka.server.KafkaRaftServer)\n"
        "kafka-1  | " + T + "INFO [Partition orders-0 broker=1] Shrinking ISR from 1,2 to 1 (kafka.cluster.Partition)\n"
        "kafka-2  | " + T + "INFO [Partition orders-0 broker=2] Cached zkVersion [4] not equal to that in zookeeper, "
        "skip updating ISR (kafka.cluster.Partition)\n")
    assert out["rejects"].count() == 0
    got = sorted((r["line_number"], r["kind"], r["broker"], r["state"]) for r in out["log_events"].collect())
    assert got == [(3, "produce_rejected", 1, None), (4, "broker_started", 2, None), (5, "isr_shrink", 1, None),
                   (6, "isr_update_failed", 2, None)]


def test_grep_over_several_brokers_files_names_each_lines_broker(spark, tmp_path):
    """`grep -r` over a cluster's log folders, saved to one file: each line is led by the file it came from. A line
    naming no broker (KafkaServer.startup's `Kafka Server started` of KafkaRaftServer 2.8-3.2, KafkaServerStartable's
    `Exiting Kafka.`) is that file's broker (`broker-2/...`), not the first broker the saved file names; from a
    file whose name and lines name no broker, it is a reject (it was broker 1's)."""
    out = read_file(spark, tmp_path, "grep.txt",
        "logs/broker-1/server.log:" + T + "INFO [Partition t-0 broker=1] Shrinking ISR from 1,2 to 1 "
        "(kafka.cluster.Partition)\n"
        "logs/broker-2/server.log:" + T + "INFO Kafka Server started (kafka.server.KafkaRaftServer)\n"
        "logs/broker-3/server.log.1:" + T + "INFO Exiting Kafka. (kafka.server.KafkaServerStartable)\n"
        "logs/other/server.log:" + T + "INFO Exiting Kafka. (kafka.server.KafkaServerStartable)\n")
    assert [(r["line_number"], r["reason"]) for r in out["rejects"].collect()] == [
        (4, "unknown broker id (no prefix, path has no broker-N)")]
    got = sorted((r["line_number"], r["kind"], r["broker"]) for r in out["log_events"].collect())
    assert got == [(1, "isr_shrink", 1), (2, "broker_started", 2), (3, "broker_exit", 3)]


def test_confluent_for_kubernetes_layout_is_read(spark, tmp_path):
    """Confluent for Kubernetes writes its brokers' lines level first, `[%p] %d [%t] %c %M - %m`, and CP 8 puts the
    MDC (`app=kafka, clusterId=…, server=N - `) before the message (a cp-server 8.3 pod's lines,
    vdesabou/kafka-docker-playground#8514): every line was a `no timestamp` reject, the cluster's events lost. The
    message's own logIdent names the broker (Partition, AbstractFetcherThread); an exception stays under its
    record, also through `kubectl logs --prefix`; a line whose level's bracket is not closed is still a reject. Its
    Connect pods write the MDC after the logger instead (`(logger:line) - app=connect, …`, #8332): the same there."""
    mdc = "app=kafka, clusterId=confluent, server=0 - "
    out = read_file(spark, tmp_path, "kafka-0.log",
        "[INFO] 2026-07-23 19:36:22,834 [group-coordinator-event-processor-1] org.apache.kafka.coordinator.group."
        "GroupMetadataManager completeClassicGroupJoin - " + mdc + "[GroupCoordinator id=0 topic=__consumer_offsets "
        "partition=8] Stabilized group confluent.connect generation 5 with 1 members.\n"
        "[INFO] 2026-07-23 19:36:22,920 [data-plane-kafka-request-handler-3] kafka.cluster.Partition info - " + mdc +
        "[Partition orders-8 broker=0] ISR updated to 0,1 and version updated to 7\n"
        "[WARN] 2026-07-23 19:36:23,000 [ReplicaFetcherThread-0-1] kafka.server.ReplicaFetcherThread warn - "
        "[ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] Error for partition orders-1 at offset 5\n"
        "org.apache.kafka.common.errors.NotLeaderOrFollowerException: not the leader\n"
        "[pod/kafka-1/kafka] [INFO] 2026-07-23 19:36:24,920 [kafka-scheduler-2] kafka.cluster.Partition info - "
        "app=kafka, clusterId=confluent, server=1 - [Partition orders-2 broker=1] Shrinking ISR from 1,0 to 1. "
        "Leader: (highWatermark: 10, endOffset: 12). Out of sync replicas: (brokerId: 0, endOffset: 10).\n"
        "[2026-07-23 19:36:24,950] INFO [Partition orders-3 broker=0] ISR updated to 0,1 and version updated to 9 "
        "(kafka.cluster.Partition:1200) - " + mdc.removesuffix(" - ") + "\n"
        "[INFO 2026-07-23 19:36:25,000 [main] kafka.server.KafkaServer info - started\n")
    assert [(r["line_number"], r["reason"]) for r in out["rejects"].collect()] == [(7, "no timestamp")]
    got = sorted((r["line_number"], r["kind"], r["broker"], r["topic"], r["partition"], r["isr"], r["leader"],
                  r["ts_ms"]) for r in out["log_events"].collect())
    assert got == [(2, "isr_updated", 0, "orders", 8, [0, 1], None, 1784835382920),
                   (3, "fetch_error", 2, "orders", 1, None, 1, 1784835383000),
                   (5, "isr_shrink", 1, "orders", 2, [1], None, 1784835384920),
                   (6, "isr_updated", 0, "orders", 3, [0, 1], None, 1784835384950)]
    counts = {r["category"]: r["lines"] for r in out["line_counts"].collect()}
    assert counts == {"event": 4, "other": 1, "attached": 1, "reject": 1}, counts


def test_kubectl_logs_prefix_of_several_pods_keeps_each_pods_lines(spark, tmp_path):
    """`kubectl logs -l strimzi.io/kind=Kafka --prefix` (kubectl 1.17+) puts every broker pod's lines in one
    stream, each led by `[pod/<pod>/<container>] `; with `--timestamps` the runtime's time follows it. They were
    `unknown prefix before a log record` rejects, the whole cluster's log lost. Each pod is a stream of its own:
    ReplicaManager.appendToLocalLog's exception continues its own pod's record with the other pod's lines between,
    and a line naming no broker (KafkaRaftServer's 2.8-3.2 start) is its pod's broker. Strimzi's layout
    (`%d{ISO8601} %p %m (%c) [%t]`), also pasted behind a Markdown quote."""
    s = "2024-01-02 03:04:05,678 "
    out = read_file(spark, tmp_path, "kubectl.log",
        "[pod/my-cluster-kafka-0/kafka] " + s + "ERROR [ReplicaManager broker=0] Error processing append operation on "
        "partition orders-1 (kafka.server.ReplicaManager) [data-plane-kafka-request-handler-3]\n"
        "[pod/my-cluster-kafka-1/kafka] 2024-01-02T03:04:05.700000000Z " + s + "INFO [Partition orders-0 broker=1] "
        "Shrinking ISR from 1,0 to 1. Leader: (highWatermark: 10, endOffset: 12). Out of sync replicas: (brokerId: 0, "
        "endOffset: 10). (kafka.cluster.Partition) [kafka-scheduler-2]\n"
        "[pod/my-cluster-kafka-0/kafka] " + NOT_ENOUGH.format(b=1) + "\n"
        "[pod/my-cluster-kafka-1/kafka] \tat kafka.cluster.Partition.maybeShrinkIsr(Partition.scala:1)\n"
        "> [pod/my-cluster-kafka-1/kafka] " + s + "INFO Kafka Server started (kafka.server.KafkaRaftServer) [main]\n")
    assert out["rejects"].count() == 0, out["rejects"].collect()
    got = sorted((r["line_number"], r["kind"], r["broker"]) for r in out["log_events"].collect())
    assert got == [(2, "isr_shrink", 1), (3, "produce_rejected", 0), (5, "broker_started", 1)]


def test_pdsh_over_the_broker_hosts_keeps_each_hosts_lines(spark, tmp_path):
    """`pdsh -w kafka[1-2] 'grep -A2 ... server.log'` (or clush) puts each host's name before its lines; they were
    `unknown prefix before a log record` rejects. Each host is a stream: ReplicaManager.appendToLocalLog's exception
    continues its own host's record, and a line naming no broker is its host's broker. In a plain log, an exception
    whose message is another's toString (`java.util.concurrent.ExecutionException: org.apache...`) and a
    `Suppressed: ` line are no host's lines: they continue the record before them."""
    out = read_file(spark, tmp_path, "pdsh.txt", two_brokers_interleaved("kafka1: ", "kafka2.example.com: "))
    plain = read_file(spark, tmp_path / "plain", "server.log",
        T + "ERROR [ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Error in response for fetch request "
        "(type=FetchRequest, replicaId=1, maxWait=500, minBytes=1) (kafka.server.ReplicaFetcherThread)\n"
        "java.util.concurrent.ExecutionException: org.apache.kafka.common.errors.TimeoutException: timed out\n"
        "Suppressed: java.io.IOException: Connection to 2 was disconnected\n")
    for got in (out, plain):
        assert got["rejects"].count() == 0, got["rejects"].collect()
    assert sorted((r["line_number"], r["kind"], r["broker"]) for r in out["log_events"].collect()) == INTERLEAVED
    counts = {r["category"]: r["lines"] for r in plain["line_counts"].collect()}
    assert counts.get("attached") == 2, counts


def test_aws_logs_tail_of_a_log_group_keeps_each_log_streams_lines(spark, tmp_path):
    """`aws logs tail` of a CloudWatch log group (Amazon MSK delivers broker logs to one) prints each event's time,
    its log stream and the message: `unknown prefix before a log record` rejects before. Each log stream is a
    stream of its own, so a broker's exception continues its record across another broker's line. A layout that
    writes its own ISO time (`%d{yyyy-MM-dd'T'HH:mm:ss.SSSZ} %p %m`) is still its own record, not a stream named
    `ERROR`: its exception message is no stack-trace line."""
    out = read_file(spark, tmp_path, "tail.txt", two_brokers_interleaved(
        "2024-01-02T03:04:05.678000+00:00 Broker-1 ", "2024-01-02T03:04:05.679000+00:00 Broker-2 "))
    own = read_file(spark, tmp_path / "own", "broker-3/server.log",
        "2024-01-02T03:04:05.678+0100 ERROR org.apache.kafka.common.errors.KafkaStorageException: Error while "
        "writing to checkpoint file /data/replication-offset-checkpoint (kafka.server.LogDirFailureChannel)\n")
    for got in (out, own):
        assert got["rejects"].count() == 0, got["rejects"].collect()
    assert sorted((r["line_number"], r["kind"], r["broker"]) for r in out["log_events"].collect()) == INTERLEAVED
    assert {r["category"]: r["lines"] for r in own["line_counts"].collect()} == {"other": 1}


REFUSED = ("ERROR [ReplicaManager broker={b}] Error processing append operation on partition orders-1 "
           "(kafka.server.ReplicaManager)")
NOT_ENOUGH = ("org.apache.kafka.common.errors.NotEnoughReplicasException: The size of the current ISR Set({b}) is "
              "insufficient to satisfy the min.isr requirement of 2 for partition orders-1")


def two_brokers_interleaved(first: str, second: str) -> str:
    """Two brokers' lines in one file, each led by its broker's envelope (``first``, ``second``): broker 1's refused
    append, broker 2's shrink between it and its exception, broker 1's frame, and broker 2's start line, which
    names no broker. Read apart, they give ``INTERLEAVED``."""
    return (first + T + REFUSED.format(b=1) + "\n"
            + second + T + "INFO [Partition orders-0 broker=2] Shrinking ISR from 2,1 to 2 (kafka.cluster.Partition)\n"
            + first + NOT_ENOUGH.format(b=1) + "\n"
            + first + "\tat kafka.cluster.Partition.appendRecordsToLeader(Partition.scala:1031)\n"
            + second + T + "INFO Kafka Server started (kafka.server.KafkaRaftServer)\n")


INTERLEAVED = [(2, "isr_shrink", 2), (3, "produce_rejected", 1), (5, "broker_started", 2)]


def test_grep_context_lines_are_read_as_their_files_lines(spark, tmp_path):
    """`grep -r -B1 -A2` over two brokers' folders of hourly files (log4j's DailyRollingFileAppender names
    `server.log.2019-10-09-19`): a context line has `-` where a matching line has `:`, and a name ending in `-19` is
    that file's (a matching line names it so), not `server.log.2019-10-09` at line 19. ReplicaManager.appendToLocalLog's
    exception, a context line, continues its own file's record; the end of a later trace that `-B` cut from its
    record, after grep's `--`, continues none (it gave a second refusal): a reject. KafkaRaftServer's 2.8-3.2 start
    line names no broker: it is the broker of its file's folder. Every line was a reject before."""
    d1, d2 = "logs/broker-1/server.log.2019-10-09-19", "logs/kafka-2/server.log.2019-10-09-19"
    out = read_file(spark, tmp_path, "grep.txt",
        f"{d1}-" + T + "INFO [Partition orders-0 broker=1] Shrinking ISR from 1,2 to 1 (kafka.cluster.Partition)\n"
        f"{d1}:" + T + REFUSED.format(b=1) + "\n"
        f"{d1}-" + NOT_ENOUGH.format(b=1) + "\n"
        f"{d1}-\tat kafka.cluster.Partition.appendRecordsToLeader(Partition.scala:1031) ~[kafka_2.13-3.5.0.jar:?]\n"
        "--\n"
        f"{d1}-" + NOT_ENOUGH.format(b=1) + "\n"
        f"{d1}-\t... 12 more\n"
        f"{d2}:" + T + "INFO Kafka Server started (kafka.server.KafkaRaftServer)\n")
    assert sorted((r["line_number"], r["reason"]) for r in out["rejects"].collect()) == \
        [(6, "continuation line"), (7, "continuation line")]
    counts = {r["category"]: r["lines"] for r in out["line_counts"].collect()}
    assert counts == {"event": 3, "other": 1, "attached": 1, "blank": 1, "reject": 2}, counts
    got = sorted((r["line_number"], r["kind"], r["broker"], r["topic"], r["partition"])
                 for r in out["log_events"].collect())
    assert got == [(1, "isr_shrink", 1, "orders", 0), (3, "produce_rejected", 1, "orders", 1),
                   (8, "broker_started", 2, None, None)]


def test_grep_b_over_logrotated_files_finds_the_record_before_the_exception(spark, tmp_path):
    """`grep -r -B1 NotEnoughReplicasException` over logrotate's dated files (`dateext`: `server.log-20191009`): the
    matching line is the exception, the context line before it its record, and no matching line before them tells
    whether `-20191009-` is part of the name or `-n`'s line number: a date is the name's. Both lines are one
    stream, so ReplicaManager.appendToLocalLog's refusal is found (broker 3, of the folder's name)."""
    d3 = "logs/broker-3/server.log-20191009"
    out = read_file(spark, tmp_path, "grep.txt",
        f"{d3}-" + T + "ERROR [ReplicaManager] Error processing append operation on partition orders-1 "
        "(kafka.server.ReplicaManager)\n" + f"{d3}:" + NOT_ENOUGH.format(b=3) + "\n")
    assert out["rejects"].count() == 0, out["rejects"].collect()
    got = sorted((r["line_number"], r["kind"], r["broker"], r["partition"]) for r in out["log_events"].collect())
    assert got == [(2, "produce_rejected", 3, 1)]


def test_grep_n_context_lines_take_the_number_off(spark, tmp_path):
    """`grep -n -A1` over one file names no file: `12:` leads a matching line and `13-` a context line; over several,
    `path:18:` and `path-19-`, the number off the name, also where the two make an hourly file's name (a daily file,
    `server.log.2019-10-09`, at line 19: the matching line has its number). A record led by a date (Strimzi's
    layout) is read too, and behind a Markdown quote."""
    strimzi, d2 = "2024-01-02 03:04:05,678 ", "broker-2/server.log.2019-10-09"
    out = read_file(spark, tmp_path, "grep.txt",
        "12:" + T + REFUSED.format(b=1) + "\n13-" + NOT_ENOUGH.format(b=1) + "\n--\n"
        f"{d2}:18:" + strimzi + REFUSED.format(b=2) + "\n"
        f"{d2}-19-" + NOT_ENOUGH.format(b=2) + "\n"
        f"> {d2}-20-" + strimzi + "INFO Kafka Server started (kafka.server.KafkaRaftServer)\n")
    assert out["rejects"].count() == 0, out["rejects"].collect()
    got = sorted((r["line_number"], r["kind"], r["broker"]) for r in out["log_events"].collect())
    assert got == [(2, "produce_rejected", 1), (5, "produce_rejected", 2), (6, "broker_started", 2)]


def test_log_dir_offline_names_each_partition(read):
    events, _ = read
    assert sorted((e["topic"], e["partition"], e["log_dir"]) for e in events if e["kind"] == "log_dir_offline") == \
        [("t", 0, "/data/k1"), ("t", 1, "/data/k1")]


def test_reassignments_completed_together_name_each_partition(read):
    """KafkaController.removePartitionsFromReassignedPartitions (2.0.0-2.3.0) logs the Scala Set of the partitions whose
    reassignment it removes from ZooKeeper: one row each."""
    events, _ = read
    assert sorted((e["topic"], e["partition"]) for e in events
                  if e["kind"] == "reassignment_completed" and e["topic"] == "moved") == [("moved", 0), ("moved", 1)]


def test_unknown_time_zone_is_one_sentence(spark, tmp_path):
    (tmp_path / "server.log").write_text(T + "INFO x\n")
    with pytest.raises(ReplicaflowError, match="not an IANA time zone"):
        read_logs(spark, str(tmp_path), cluster="r", log_timezone="Mars/Olympus")


def test_log_dir_failure_halt_and_fetcher_forms_across_releases(spark, tmp_path):
    """ReplicaManager.handleLogDirFailure lists the partitions it takes offline (1.0 `Partitions ... are offline`,
    1.1+ `Broker N stopped fetcher ...`); LogManager.handleLogDirFailure lists them again (no row: one per partition),
    and a directory path ending in `-digits` is no partition. ReplicaManager 3.7+ halts for the metadata log's
    directory, in migration mode, and for a directory with no UUID. AbstractFetcherThread's 1.0-2.2 forms have no
    offset (`Error while processing data`, `Failed to truncate`), 0.10-1.0's invalid messages end in ` error <msg>`;
    ReplicaAlterLogDirsThread's lines are no replication events. KafkaController 2.4+: the target replicas as the
    request's ArrayBuffer. ReplicationControlManager.replay: a record that empties both lists ends a reassignment.
    Partition.appendRecordsToLeader on Scala 2.13: an ISR of five as `HashSet(...)`. AbstractFetcherThread's failed
    offset lookup and ReplicaFetcherThread's oversized message (all releases), and its 0.10-0.11 halt on a disk error.
    KafkaServer.controlledShutdown: 3.1+'s refused attempts, and the unclean shutdown after the last one.
    PartitionChangeRecord's leaderRecoveryState byte (LeaderRecoveryState: -1 no change, 0, 1) as its name."""
    out = read_file(spark, tmp_path, "broker-2/server.log", (Path(__file__).parent / "data" / "releases.log").read_text())
    assert out["rejects"].count() == 0
    got = sorted((r["line_number"], r["kind"], r["topic"], r["partition"], r["log_dir"], r["offset"], r["replicas"],
                  r["isr"]) for r in out["log_events"].collect())
    d0, d2 = "/var/lib/kafka/data-0/kafka-log2", "/kafka/kafka-logs-2"
    assert got == [
        (1, "log_dir_offline", "t", 0, d0, None, None, None), (1, "log_dir_offline", "t", 1, d0, None, None, None),
        (3, "log_dir_offline", "t", 0, d2, None, None, None), (3, "log_dir_offline", "t", 1, d2, None, None, None),
        (5, "broker_halted", None, None, "/data/meta", None, None, None),
        (6, "broker_halted", None, None, "/data/d1", None, None, None),
        (7, "broker_halted", None, None, "/data/d2", None, None, None),
        (8, "fetch_error", "t", 3, None, 100, None, None), (9, "fetch_error", "t", 3, None, None, None, None),
        (10, "truncation_failed", "t", 3, None, None, None, None),
        (13, "reassignment_caught_up", "t", 0, None, None, [4, 1, 2], [4, 1, 2]),
        (14, "reassignment_completed", "t", 0, None, None, [1, 2, 4], [1, 2, 4]),
        (15, "reassignment_started", "t", 0, None, None, [4, 1, 2, 3], [4, 1, 2, 3]),
        (17, "produce_rejected", "t", 0, None, None, None, [5, 1, 2, 3, 4]),
        (18, "fetch_error", "t", 3, None, None, None, None), (19, "fetch_error", "t", 3, None, None, None, None),
        (20, "fetch_error", "t", 3, None, None, None, None), (21, "storage_halt", "t", 3, None, None, None, None),
        (22, "controlled_shutdown", None, None, None, None, None, None),
        (23, "controlled_shutdown", None, None, None, None, None, None),
        (24, "controlled_shutdown", None, None, None, None, None, None),
        (25, "partition_change", "t", 1, None, None, None, [1])]
    states = {r["line_number"]: (r["state"], r["leader"]) for r in out["log_events"].collect()
              if r["line_number"] > 17 or r["line_number"] in (14, 15)}
    assert states == {18: ("offset lookup failed", 1), 19: ("offset lookup failed", 1), 20: ("message too large", 1),
                      21: (None, None), 22: ("refused", None), 23: ("refused", None), 24: ("failed", None),
                      14: (None, 1), 15: (None, 1), 25: ("RECOVERING", 1)}
    assert [r["error"] for r in out["log_events"].collect() if r["line_number"] == 22] == ["REQUEST_TIMED_OUT"]


def test_rules_without_a_logident_of_their_own_stay_two_runs():
    """Every record is matched against each run of rules without a logIdent (one regex call per run; docs/logs.md,
    Speed): a rule with one placed between them would split a run and cost every record one more call."""
    from replicaflow.ingest.log_match import MATCHERS

    assert sum(m.single is None for m in MATCHERS) == 2


SHUTDOWN_GRANTS_AND_RETRIES = """\
[2017-06-01 10:00:00,000] INFO [Controller 1]: Shutting down broker 2 (kafka.controller.KafkaController)
[2020-06-01 10:00:00,000] INFO [Controller id=1] Shutting down broker 3 (kafka.controller.KafkaController)
[2020-06-01 10:00:00,001] INFO [ExampleThread id=1] Shutting down broker 3 (com.example.Other)
[2024-06-01 10:00:01,000] INFO [QuorumController id=1] Unfenced broker 2 has requested and been granted a controlled \
shutdown. (org.apache.kafka.controller.BrokerHeartbeatManager)
[2024-06-01 10:00:01,001] INFO [QuorumController id=1] Unfenced broker 2 has requested and been granted an immediate \
shutdown. (org.apache.kafka.controller.BrokerHeartbeatManager)
[2024-06-01 10:00:01,002] INFO [QuorumController id=1] Unfenced broker 3 has requested and been granted fencing \
(org.apache.kafka.controller.BrokerHeartbeatManager)
[2019-06-01 10:00:01,003] ERROR Shutdown broker because none of the specified log dirs from /data/a, /data/b can be \
created or validated (kafka.log.LogManager)
[2021-06-01 10:00:02,000] INFO [ReplicaFetcher replicaId=1, leaderId=4, fetcherId=0] Could not fetch offset for t-3 due \
to error: For requests intended only for the leader, this error indicates that the broker is not the current leader. \
(kafka.server.ReplicaFetcherThread)
[2024-06-01 10:00:02,001] INFO [ReplicaFetcher replicaId=1, leaderId=4, fetcherId=0] Could not build remote log \
auxiliary state for t-3 due to error: The leader epoch in the request is newer than the epoch on the broker. \
(kafka.server.ReplicaFetcherThread)
[2024-06-01 10:00:02,002] ERROR [ReplicaFetcher replicaId=1, leaderId=4, fetcherId=0] Error building remote log \
auxiliary state for t-3 (kafka.server.ReplicaFetcherThread)
org.apache.kafka.common.errors.RemoteStorageException: Couldn't build the state from remote store for partition: t-3
\tat kafka.server.TierStateMachine.buildRemoteLogAuxState(TierStateMachine.java:250)
"""


def test_controller_shutdown_grants_and_retried_offset_lookups(spark, tmp_path):
    """KafkaController.doControlledShutdown (ZooKeeper, `[Controller N]: ` before 1.0, `[Controller id=N] ` from 1.0;
    another class's same text is no event) and BrokerHeartbeatManager.calculateNextBrokerState (KRaft 2.8+): a
    controlled shutdown under way, an unfenced broker stopping at once or asking to be fenced. LogManager 1.0+ halts
    a broker that can use none of its log directories at start-up. AbstractFetcherThread:
    handleOutOfRangeError's retried offset lookup (2.4+), handleOffsetsMovedToTieredStorage's (3.5+), whose ERROR
    line is logged with its exception (`error(msg, e)`): the class that opens the stack trace is the event's error."""
    out = read_file(spark, tmp_path, "broker-1/controller.log", SHUTDOWN_GRANTS_AND_RETRIES)
    assert out["rejects"].count() == 0
    got = sorted((r["line_number"], r["kind"], r["state"], r["broker"], r["target_broker"], r["topic"], r["partition"],
                  r["leader"]) for r in out["log_events"].collect())
    assert got == [
        (1, "controlled_shutdown", "requested", 1, 2, None, None, None),
        (2, "controlled_shutdown", "requested", 1, 3, None, None, None),
        (4, "controlled_shutdown", "requested", 1, 2, None, None, None),
        (5, "broker_fenced", "controlled shutdown", 1, 2, None, None, None),
        (6, "broker_fenced", "requested", 1, 3, None, None, None),
        (7, "broker_halted", "at startup", 1, None, None, None, None),
        (8, "fetch_error", "offset lookup failed", 1, None, "t", 3, 4),
        (9, "fetch_error", "remote log state failed", 1, None, "t", 3, 4),
        (10, "fetch_error", "remote log state failed", 1, None, "t", 3, 4)]
    # the ERROR line's exception is its stack trace's first line; the lines logged without one have no error
    assert {r["line_number"]: r["error"] for r in out["log_events"].collect() if r["error"]} == {
        10: "org.apache.kafka.common.errors.RemoteStorageException"}
    assert [r["log_dir"] for r in out["log_events"].collect() if r["kind"] == "broker_halted"] == ["/data/a, /data/b"]


def test_an_events_error_is_the_exception_its_stack_trace_opens_with(spark, tmp_path):
    """AbstractFetcherThread 1.1+ logs `Error for partition t-p at offset O` with the exception apart
    (`error(msg, e)`): its class, the first line of the trace, is the event's error. In `docker compose logs` the
    trace follows its own service's record, across another broker's line (kafka-1's error is UnknownServerException;
    kafka-2's shrink, with no trace, has none). After grep's `--` a trace continues no record (the fetch_error before
    it keeps none), and a continuation line that is no exception (`\\tat ...` alone) names no error."""
    fetch = ("ERROR [ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Error for partition t-0 at offset 7 "
             "(kafka.server.ReplicaFetcherThread)")
    out = read_file(spark, tmp_path, "compose.log",
        "kafka-1  | " + T + fetch + "\n"
        "kafka-2  | " + T + "INFO [Partition t-1 broker=2] Shrinking ISR from 2,1 to 2 (kafka.cluster.Partition)\n"
        "kafka-1  | org.apache.kafka.common.errors.UnknownServerException: The server experienced an unexpected error\n"
        "kafka-1  | \tat kafka.server.AbstractFetcherThread.processFetchRequest(AbstractFetcherThread.scala:367)\n"
        "kafka-1  | " + T + fetch + "\n"
        "--\n"
        "kafka-1  | org.apache.kafka.common.errors.NotLeaderOrFollowerException: not the leader\n"
        "kafka-1  | " + T + fetch + "\n"
        "kafka-1  | \tat kafka.server.AbstractFetcherThread.processFetchRequest(AbstractFetcherThread.scala:367)\n")
    got = sorted((r["line_number"], r["kind"], r["broker"], r["error"]) for r in out["log_events"].collect())
    assert got == [(1, "fetch_error", 1, "org.apache.kafka.common.errors.UnknownServerException"),
                   (2, "isr_shrink", 2, None), (5, "fetch_error", 1, None), (8, "fetch_error", 1, None)]


def test_a_records_leader_of_minus_2_names_no_broker(spark, tmp_path):
    """PartitionChangeRecord's leader -2 is NO_LEADER_CHANGE (PartitionChangeBuilder, KRaft): no leader is named,
    where -1 is no leader at all (offline). ReplicationControlManager.replay logs the record of a reassignment's start
    (leader unchanged) and of its completion (here the new leader, 2: the old one left the replicas)."""
    record = ("INFO [QuorumController id=1] Replayed partition assignment change PartitionChangeRecord(partitionId=0, "
              "topicId=AAAAAAAAAAAAAAAAAAAAAA, isr={isr}, leader={leader}, replicas=[2, 3, 4{extra}], removingReplicas="
              "[{removing}], addingReplicas=[{adding}], leaderRecoveryState=-1) for topic t "
              "(org.apache.kafka.controller.ReplicationControlManager)\n")
    out = read_file(spark, tmp_path, "broker-1/controller.log",
        T + record.format(isr="null", leader=-2, extra=", 1", removing="1", adding="4") +
        T + record.format(isr="[2, 3, 4]", leader=2, extra="", removing="", adding="") +
        T + record.format(isr="[]", leader=-1, extra="", removing="", adding=""))
    got = sorted((r["line_number"], r["kind"], r["leader"]) for r in out["log_events"].collect())
    assert got == [(1, "reassignment_started", None), (2, "reassignment_completed", 2),
                   (3, "reassignment_completed", -1)]


CONFIG_CHANGES = """\
[2024-01-26 10:07:10,015] INFO [Admin Manager on Broker 1]: Updating topic orders with new configuration : retention.ms -> 60000,min.insync.replicas -> 3 (kafka.server.ZkAdminManager)
[2024-01-26 10:07:10,097] INFO Processing override for entityPath: topics/orders with config: HashMap(retention.ms -> 60000, min.insync.replicas -> 3) (kafka.server.ZkConfigManager)
[2024-01-26 10:07:11,097] INFO Processing override for entityPath: topics/orders with config: Map(retention.ms -> 60000) (kafka.server.DynamicConfigManager)
[2024-01-26 10:07:12,097] INFO Processing override for entityType: topics, entity: payments with config: {min.insync.replicas=2, cleanup.policy=compact} (kafka.server.DynamicConfigManager)
[2024-01-26 10:07:13,097] INFO Processing override for entityPath: brokers/<default> with config: Map(min.insync.replicas -> 2) (kafka.server.ZkConfigManager)
[2024-01-26 10:07:14,097] INFO [DynamicConfigPublisher broker id=1] Updating topic orders with new configuration :  (kafka.server.metadata.DynamicConfigPublisher)
[2024-01-26 10:07:15,097] INFO [DynamicConfigPublisher broker id=1] Updating cluster configuration : min.insync.replicas -> 2,log.retention.ms -> 5 (kafka.server.metadata.DynamicConfigPublisher)
[2024-01-26 10:07:16,097] INFO [Admin Manager on Broker 1]: Updating topic orders with new configuration kafka.server.KafkaConfig@1a2b3c (kafka.server.AdminManager)
[2024-01-26 10:07:17,097] INFO Processing override for entityPath: topics/orders with config: Map(foo.min.insync.replicas -> 9) (kafka.server.ZkConfigManager)
[2024-01-26 10:07:18,097] INFO Processing override for entityPath: brokers/2 with config: Map(min.insync.replicas -> 5) (kafka.server.ZkConfigManager)
[2024-01-26 10:07:19,097] INFO [DynamicConfigPublisher broker id=3] Updating node 3 with new configuration : leader.replication.throttled.rate -> 1000 (kafka.server.metadata.DynamicConfigPublisher)
"""


def test_a_config_change_line_lists_a_topics_or_the_defaults_overrides(spark, tmp_path):
    """Every override of the entity after the change, min.insync.replicas among them or not (then removed):
    ZkConfigManager/DynamicConfigManager's `Processing override for entityPath: topics/T` on every broker
    (`Map(k -> v)`, `HashMap(k -> v)` on Scala 2.13, `{k=v}` Properties up to 0.10.2, the version-1 notification's
    `entityType: topics, entity: T`), ZkAdminManager 2.8+ and KRaft's DynamicConfigPublisher (`Updating topic T with
    new configuration : k -> v,…`, the default `Updating cluster configuration : …`), a broker's own (`brokers/N`,
    KRaft's `Updating node N`: state `broker`, target_broker N; its min ISR is not the cluster's). AdminManager
    2.4–2.7 printed its KafkaConfig object instead (no event); a longer name ending in min.insync.replicas is another
    config. The node is named by ZkAdminManager's logIdent (`[Admin
    Manager on Broker N]: `) and the publisher's (`[DynamicConfigPublisher broker id=N] `, 3.4 `nodeType=broker`)."""
    out = read_file(spark, tmp_path, "broker-9/server.log", CONFIG_CHANGES)
    assert out["rejects"].count() == 0
    got = sorted((r["line_number"], r["kind"], r["state"], r["topic"], r["partition"], r["min_isr"])
                 for r in out["log_events"].collect())
    # the broker from ZkAdminManager's and DynamicConfigPublisher's logIdents, else from the file's path
    assert {r["line_number"]: r["broker"] for r in out["log_events"].collect()} == {
        1: 1, 2: 9, 3: 9, 4: 9, 5: 9, 6: 1, 7: 1, 9: 9, 10: 9, 11: 3}
    assert got == [(1, "config_changed", "topic", "orders", None, 3), (2, "config_changed", "topic", "orders", None, 3),
                   (3, "config_changed", "topic", "orders", None, None),
                   (4, "config_changed", "topic", "payments", None, 2),
                   (5, "config_changed", "default", None, None, 2),
                   (6, "config_changed", "topic", "orders", None, None),
                   (7, "config_changed", "default", None, None, 2),
                   (9, "config_changed", "topic", "orders", None, None),
                   (10, "config_changed", "broker", None, None, None), (11, "config_changed", "broker", None, None, None)]
    assert {r["line_number"]: r["target_broker"] for r in out["log_events"].collect() if r["state"] == "broker"} == {
        10: 2, 11: 3}
