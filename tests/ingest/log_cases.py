"""The lines of each message family of log_messages.RULES, each in the form Kafka's source writes it (class named
per case), and a text read as one broker's file: shared by test_log_rules.py and test_log_layouts.py."""

from __future__ import annotations

from replicaflow.ingest.logs import read_logs
from tests.ingest.log_cases_4x import CASES_4X, QUIET_4X

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
    # journald's ISO forms (`journalctl -o short-iso`, `short-iso-precise`; rsyslog's RSYSLOG_FileFormat) and
    # `short-precise`: the ISO ones were `unknown prefix` rejects (the runtime-time envelope took the time off alone)
    ("2024-01-02T03:04:05+0000 host kafka-server-start.sh[123]: " + T + "INFO [Partition t-0 broker=1] Shrinking ISR "
     "from 1,2 to 1 (kafka.cluster.Partition)", {"kind": "isr_shrink", "isr": [1], "ts_ms": 1704164645678}),
    ("2024-01-02T04:04:05.123456+01:00 host kafka[123]: " + T + "INFO [Partition t-0 broker=1] Expanding ISR from 1 to "
     "1,2 (kafka.cluster.Partition)", {"kind": "isr_expand", "isr": [1, 2], "ts_ms": 1704164645678}),
    ("Jan 02 03:04:05.123456 host kafka-server-start.sh[123]: " + T + "INFO [Partition t-0 broker=1] Shrinking ISR "
     "from 1,2 to 1 (kafka.cluster.Partition)", {"kind": "isr_shrink", "isr": [1], "ts_ms": 1704164645678}),
    # `journalctl -o short-full` (the weekday, the zone's abbreviation; `--utc` gives UTC) and `-o short-unix` (epoch
    # seconds): `unknown prefix` rejects until 2026-12-07; the record's own time is read, not journald's
    ("Tue 2024-01-02 03:04:05 UTC host kafka-server-start.sh[123]: " + T + "INFO [Partition t-0 broker=1] Shrinking "
     "ISR from 1,2 to 1 (kafka.cluster.Partition)", {"kind": "isr_shrink", "isr": [1], "ts_ms": 1704164645678}),
    ("Tue 2024-01-02 04:04:05 CET kafka-2 kafka[123]: " + T + "INFO [Partition t-0 broker=1] Expanding ISR from 1 to "
     "1,2 (kafka.cluster.Partition)", {"kind": "isr_expand", "isr": [1, 2], "ts_ms": 1704164645678}),
    ("Tue 2024-01-02 06:34:05 +0530 host kafka[123]: " + T + "INFO [Partition t-0 broker=1] Shrinking ISR from 1,2 to "
     "1 (kafka.cluster.Partition)", {"kind": "isr_shrink", "isr": [1], "ts_ms": 1704164645678}),
    ("1704164645.123456 host kafka-server-start.sh[123]: " + T + "INFO [Partition t-0 broker=1] Expanding ISR from 1 "
     "to 1,2 (kafka.cluster.Partition)", {"kind": "isr_expand", "isr": [1, 2], "ts_ms": 1704164645678}),
    # no ` (logger)` and a blank after the message (apache/kafka#12028 pasted KafkaServer's last line so): no event before
    (T + "INFO [KafkaServer id=0] shut down completed ", {"kind": "broker_shutdown", "broker": 0}),
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
    # PartitionChangeBuilder.tryElection (KRaft): an election from the eligible leader replicas, INFO with the
    # registration before and the change record from 4.1 (TRACE without them 3.7-4.0), and the unclean one (3.6+,
    # the same tail from 4.1); the topic is the one the record above names with that topic id
    (T + "INFO [QuorumController id=9] Setting new leader for topicId AAAAAAAAAAAAAAAAAAAAAA, partition 3 to 2 using "
     "ELR. Previous partition: PartitionRegistration(replicas=[1, 2, 3], directories=[AAAAAAAAAAAAAAAAAAAAAQ, "
     "AAAAAAAAAAAAAAAAAAAAAQ, AAAAAAAAAAAAAAAAAAAAAQ], isr=[], removingReplicas=[], addingReplicas=[], elr=[2], "
     "lastKnownElr=[1], leader=-1, leaderRecoveryState=RECOVERED, leaderEpoch=4, partitionEpoch=11), change record: "
     "PartitionChangeRecord(partitionId=3, topicId=AAAAAAAAAAAAAAAAAAAAAA, isr=[2], leader=2, replicas=null, "
     "removingReplicas=null, addingReplicas=null, leaderRecoveryState=-1, directories=null, "
     "eligibleLeaderReplicas=[], lastKnownElr=null) (org.apache.kafka.controller.PartitionChangeBuilder)",
     {"kind": "elr_election", "topic": "t", "partition": 3, "leader": 2, "leader_epoch": 5, "isr": [2],
      "replicas": [1, 2, 3]}),
    (T + "TRACE [QuorumController id=9] Setting new leader for topicId AAAAAAAAAAAAAAAAAAAAAA, partition 4 to 1 using "
     "ELR (org.apache.kafka.controller.PartitionChangeBuilder)",
     {"kind": "elr_election", "topic": "t", "partition": 4, "leader": 1, "leader_epoch": None, "isr": None}),
    (T + "INFO [QuorumController id=9] Setting new leader for topicId AAAAAAAAAAAAAAAAAAAAAA, partition 5 to 3 using "
     "an unclean election. Previous partition: PartitionRegistration(replicas=[1, 3], directories=["
     "AAAAAAAAAAAAAAAAAAAAAQ, AAAAAAAAAAAAAAAAAAAAAQ], isr=[1], removingReplicas=[], addingReplicas=[], elr=[], "
     "lastKnownElr=[], leader=-1, leaderRecoveryState=RECOVERED, leaderEpoch=7, partitionEpoch=9), change record: "
     "PartitionChangeRecord(partitionId=5, topicId=AAAAAAAAAAAAAAAAAAAAAA, isr=[3], leader=3, replicas=null, "
     "removingReplicas=null, addingReplicas=null, leaderRecoveryState=1, directories=null, eligibleLeaderReplicas=[], "
     "lastKnownElr=[]) (org.apache.kafka.controller.PartitionChangeBuilder)",
     {"kind": "unclean_election", "topic": "t", "partition": 5, "leader": 3, "leader_epoch": 8, "isr": [3],
      "replicas": [1, 3]}),
    (T + "INFO [QuorumController id=9] Setting new leader for topicId AAAAAAAAAAAAAAAAAAAAAA, partition 6 to 3 using "
     "an unclean election (org.apache.kafka.controller.PartitionChangeBuilder)",
     {"kind": "unclean_election", "topic": "t", "partition": 6, "leader": 3, "leader_epoch": None}),
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
    # KafkaController.initializeControllerContext (ZooKeeper, 0.8-3.x): the topics a new controller finds; a topic it
    # leaves out ends there (holders.TopicEnds). `[Controller N]: ` before 1.0; Scala 2.13's `HashSet(` past four
    ("[2015-03-05 11:20:07,103] INFO [Controller 1]: Current list of topics in the cluster: Set(rsvps) "
     "(kafka.controller.KafkaController)", {"kind": "topics_listed", "broker": 1, "topic": None}),
    (T + "INFO [Controller id=0] Current list of topics in the cluster: HashSet(a, b.c, d_e, f-g, __consumer_offsets) "
     "(kafka.controller.KafkaController)", {"kind": "topics_listed", "broker": 0}),
    (T + "INFO [Controller id=0] Current list of topics in the cluster: Set() (kafka.controller.KafkaController)",
     {"kind": "topics_listed", "broker": 0}),
    # not the controller's own (no logIdent): no event
    (T + "INFO Current list of topics in the cluster: Set(a) (kafka.controller.KafkaController)", None),
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
    # BrokerLifecycleManager (KRaft 2.8+, `isZkBroker=true` on a migrating ZooKeeper broker 3.5+): a controlled
    # shutdown from RUNNING (BeginControlledShutdownEvent), none from another state
    (T + "INFO [BrokerLifecycleManager id=3] Beginning controlled shutdown. (kafka.server.BrokerLifecycleManager)",
     {"kind": "broker_shutting_down", "broker": 3, "state": "controlled"}),
    (T + "INFO [BrokerLifecycleManager id=4 isZkBroker=true] Beginning controlled shutdown. "
     "(kafka.server.BrokerLifecycleManager)", {"kind": "broker_shutting_down", "broker": 4, "state": "controlled"}),
    (T + "INFO [BrokerLifecycleManager id=3] Skipping controlled shutdown because we are in state RECOVERY. "
     "(kafka.server.BrokerLifecycleManager)", None),
    # BrokerLifecycleManager.OfflineDirBrokerFailureEvent (3.8.0+, Confluent v8.x = 4.x; the 4.3 Java class logs from
    # org.apache.kafka.server): no heartbeat told the controller of the failed dir (its UUID) within
    # log.dir.failure.timeout.ms, and its hook runs BrokerServer.shutdown: a clean stop, not a halt (no down row here)
    (T + "ERROR [BrokerLifecycleManager id=3] Shutting down because couldn't communicate offline log dir "
     "Xv0PBUbrRqKrMzBg7tQVvA with controllers (kafka.server.BrokerLifecycleManager)",
     {"kind": "broker_shutting_down", "broker": 3, "state": "offline dir unreported", "log_dir": "Xv0PBUbrRqKrMzBg7tQVvA"}),
    (T + "ERROR [BrokerLifecycleManager id=5] Shutting down because couldn't communicate offline log dir "
     "p2XB-f0aSPmvNbMIj1eN4w with controllers (org.apache.kafka.server.BrokerLifecycleManager)",
     {"kind": "broker_shutting_down", "broker": 5, "state": "offline dir unreported", "log_dir": "p2XB-f0aSPmvNbMIj1eN4w"}),
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
    # a line in inline code both ends, with a Markdown hard break's `\` after it (a public incident note, 2022: the
    # closing backtick was read into the logger, and the line was rejected as a truncated message)
    ("`" + T + "WARN [ReplicaFetcher replicaId=2, leaderId=4, fetcherId=0] Partition reqmessages-3 marked as failed "
     "(kafka.server.ReplicaFetcherThread)`\\", {"kind": "partition_failed", "topic": "reqmessages", "partition": 3}),
    ("`" + T + "INFO [Partition t-0 broker=1] Expanding ISR from 1 to 1,2 (kafka.cluster.Partition)`",
     {"kind": "isr_expand", "isr": [1, 2]}),
    ("`Caused by: java.nio.BufferUnderflowException`\\", None),  # attached to the record above, in the same quote
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
    # Partition.makeFollower 3.3+: a state change skipped as older than the broker's own partition epoch is stale
    (T + "INFO [Broker id=1] Skipped the become-follower state change for t-0 with topic id Some(AAAAAAAAAAAAAAAAAAAAAA) "
     "and partition state LeaderAndIsrPartitionState(topicName='t', partitionIndex=0, controllerEpoch=-1, leader=2, "
     "leaderEpoch=5, isr=[2, 1], partitionEpoch=9, replicas=[1, 2], addingReplicas=[], removingReplicas=[], "
     "isNew=false, leaderRecoveryState=0) since the follower is already at a newer partition epoch 11. "
     "(state.change.logger)", None),
    (T + "INFO [QuorumController id=7] Becoming the active controller at epoch 5, next write offset 1234. "
     "(org.apache.kafka.controller.QuorumController)", {"kind": "controller_elected", "broker": 7, "leader_epoch": 5}),
    # QuorumController's constructor: 3.3-3.4 (`[Controller N] `, the authorizer named), 3.7+ (the ELR switch after it)
    (T + "INFO [Controller 4] Creating new QuorumController with clusterId MkU3OEVBNTcwNTJENDM2Qk, authorizer "
     "Optional.empty. (org.apache.kafka.controller.QuorumController)", {"kind": "controller_started", "broker": 4}),
    (T + "INFO [QuorumController id=6] Creating new QuorumController with clusterId MkU3OEVBNTcwNTJENDM2Qk. Eligible "
     "leader replicas enabled. (org.apache.kafka.controller.QuorumController)",
     {"kind": "controller_started", "broker": 6, "topic": None}),
    # a start refused because /brokers/ids/N is another session's: ZkUtils.registerBrokerInZk's RuntimeException
    # (0.9-1.0), KafkaZkClient.checkedEphemeralCreate's NodeExistsException (1.1+), each under KafkaServer.startup's
    # fatal line; CheckedEphemeral's error line before it, which a re-registration after a session expiry also logs,
    # and the frames are none
    (T + "FATAL [Kafka Server 2], Fatal error during KafkaServer startup. Prepare to shutdown "
     "(kafka.server.KafkaServer)", None),
    ("java.lang.RuntimeException: A broker is already registered on the path /brokers/ids/2. This probably indicates "
     "that you either have configured a brokerid that is already in use, or else you have shutdown this broker and "
     "restarted it faster than the zookeeper timeout so it appears to be re-registering.",
     {"kind": "startup_failed", "broker": 2, "state": "already registered"}),
    ("\tat kafka.utils.ZkUtils.registerBrokerInZk(ZkUtils.scala:295)", None),
    (T + "ERROR Error while creating ephemeral at /brokers/ids/3, node already exists and owner '72058748988424192' "
     "does not match current session '72057853619470336' (kafka.zk.KafkaZkClient$CheckedEphemeral)", None),
    (T + "ERROR [KafkaServer id=3] Fatal error during KafkaServer startup. Prepare to shutdown (kafka.server.KafkaServer)",
     None),
    ("org.apache.zookeeper.KeeperException$NodeExistsException: KeeperErrorCode = NodeExists",
     {"kind": "startup_failed", "broker": 3, "state": "already registered"}),
    ("\tat kafka.zk.KafkaZkClient.registerBroker(KafkaZkClient.scala:96)", None),
    # KRaft: the controller refused the registration (the old session valid) and the broker tries again; 4.x's Java
    # handler prints `$nodeId` in its authentication line
    (T + "INFO [BrokerLifecycleManager id=2] Unable to register broker 2 because the controller returned error "
     "DUPLICATE_BROKER_REGISTRATION (kafka.server.BrokerLifecycleManager)",
     {"kind": "registration_refused", "broker": 2, "error": "DUPLICATE_BROKER_REGISTRATION"}),
    (T + "ERROR [BrokerLifecycleManager id=2] Unable to register broker $nodeId because of an authentication exception. "
     "(org.apache.kafka.server.BrokerLifecycleManager)", {"kind": "registration_refused", "broker": 2, "error": None}),
    # ZooKeeper 0.8: the broker's own registration of an old session stands, it backs off and retries; the same for
    # /controller is none
    ("[2015-01-02 03:04:05,678] INFO I wrote this conflicted ephemeral node [{\"jmx_port\":-1,\"timestamp\":"
     "\"1420167845000\",\"host\":\"kafka-2\",\"version\":1,\"port\":9092}] at /brokers/ids/2 a while back in a "
     "different session, hence I will backoff for this node to be deleted by Zookeeper and retry "
     "(kafka.utils.ZkUtils$)", {"kind": "registration_refused", "broker": 2, "error": None}),
    ("[2015-01-02 03:04:05,678] INFO I wrote this conflicted ephemeral node [{\"version\":1,\"brokerid\":2,"
     "\"timestamp\":\"1420167845000\"}] at /controller a while back in a different session, hence I will backoff "
     "for this node to be deleted by Zookeeper and retry (kafka.utils.ZkUtils$)", None),
    # ReplicaFetcherThread.processPartitionData: a KafkaStorageException appending fetched data halts the broker;
    # 0.9 names no partition, 0.10.0 the TopicAndPartition, 0.10.1 – 0.11 the TopicPartition
    ("[2016-01-02 03:04:05,678] FATAL [ReplicaFetcherThread-0-1], Disk error while replicating data. "
     "(kafka.server.ReplicaFetcherThread)", {"kind": "storage_halt", "topic": None}),
    ("[2017-07-02 03:04:05,678] FATAL [ReplicaFetcherThread-0-1]: Disk error while replicating data for t-3 "
     "(kafka.server.ReplicaFetcherThread)", {"kind": "storage_halt", "topic": "t", "partition": 3}),
]

CASES += CASES_4X  # Kafka 4.2+
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
    "2024-01-02T03:04:05.123456+00:00 host kafka-server-start.sh[123]: \tat kafka.Kafka.main(Kafka.scala)",
    "Tue 2024-01-02 03:04:05 UTC host kafka-server-start.sh[123]: \tat kafka.Kafka.main(Kafka.scala)",
    "1704164645.123456 host kafka-server-start.sh[123]: \tat kafka.Kafka.main(Kafka.scala)",
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
QUIET += QUIET_4X


def write_files(root, files: dict[str, str]) -> list[str]:
    """Each ``{relative path: text}`` written under ``root`` (UTF-8); their paths."""
    paths = []
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        paths.append(str(path))
    return paths


def read_file(spark, tmp_path, name: str, text: str) -> dict:
    """``text`` written to ``tmp_path/name`` and read alone (cluster ``r``)."""
    write_files(tmp_path, {name: text})
    return read_logs(spark, str(tmp_path), cluster="r")
