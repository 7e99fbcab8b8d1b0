"""The lines of Kafka 4.2+ whose form changed after 4.1 (log_cases.CASES and QUIET take them in), each as Kafka's
source writes it (class named per case); the releases were checked in Kafka's source at 4.1.0, 4.2.0 and 4.3.0."""

from __future__ import annotations

T = "[2024-01-02 03:04:05,678] "  # log_cases.T

CASES_4X = [  # (line, expected fields of its one event, or None: no event)
    # 4.2: UnifiedLog.truncateTo writes the below-high-watermark WARN (KAFKA-19474; the fetcher's logIdent, and so the
    # leader, are gone); Partition.makeFollower's skipped change names a PartitionRegistration (KAFKA-19447)
    (T + "WARN [UnifiedLog partition=t-1, dir=/data/k1] Truncating t-1 to offset 40 below high watermark 45 "
     "(org.apache.kafka.storage.internals.log.UnifiedLog)",
     {"kind": "truncated_below_hw", "topic": "t", "partition": 1, "offset": 40, "leader": None, "broker": 1}),
    (T + "INFO [Broker id=1] Skipped the become-follower state change for t-0 with topic id Some(AAAAAAAAAAAAAAAAAAAAAA), "
     "partition registration PartitionRegistration(replicas=[1, 2], directories=[AAAAAAAAAAAAAAAAAAAAAQ, "
     "AAAAAAAAAAAAAAAAAAAAAQ], isr=[2, 1], removingReplicas=[], addingReplicas=[], elr=[], lastKnownElr=[], leader=2, "
     "leaderRecoveryState=RECOVERED, leaderEpoch=5, partitionEpoch=9) and isNew=false since it is already a follower "
     "with leader epoch 5. (state.change.logger)",
     {"kind": "leader_and_isr", "state": "skipped", "leader": 2, "leader_epoch": 5, "partition_epoch": 9,
      "isr": [2, 1]}),
    # 4.3: ReplicationControlManager follows a replayed PartitionChangeRecord, an AlterPartition that completes a
    # reassignment and a refused AlterPartition with the registration's change (apache/kafka#21221): the same rows
    (T + "INFO [QuorumController id=1] Replayed partition assignment change PartitionChangeRecord(partitionId=2, "
     "topicId=AAAAAAAAAAAAAAAAAAAAAA, isr=null, leader=-2, replicas=[1, 2, 4, 3], removingReplicas=[3], "
     "addingReplicas=[4], leaderRecoveryState=-1, directories=null, eligibleLeaderReplicas=null, lastKnownElr=null) "
     "for topic t. (isr: [1, 2, 3] -> [1, 2, 3], replicaSet: [1, 2, 3] -> [1, 2, 4, 3], partitionEpoch: 10, "
     "leaderEpoch: 5) (org.apache.kafka.controller.ReplicationControlManager)",
     {"kind": "reassignment_started", "topic": "t", "partition": 2, "replicas": [1, 2, 4, 3], "adding": [4],
      "removing": [3]}),
    (T + "INFO [QuorumController id=1] AlterPartition request from node 1 for t-2 completed the ongoing partition "
     "reassignment. isr: [1, 2, 3] -> [1, 2, 4], replicaSet: [1, 2, 4, 3] -> [1, 2, 4], partitionEpoch: 11 -> 12, "
     "leaderEpoch: 5 -> 5 (org.apache.kafka.controller.ReplicationControlManager)",
     {"kind": "reassignment_completed", "topic": "t", "partition": 2, "leader": 1}),
    (T + "INFO [QuorumController id=1] Replayed partition assignment change PartitionChangeRecord(partitionId=2, "
     "topicId=AAAAAAAAAAAAAAAAAAAAAA, isr=[1, 2, 4], leader=-2, replicas=[1, 2, 4], removingReplicas=[], "
     "addingReplicas=[], leaderRecoveryState=-1, directories=null, eligibleLeaderReplicas=null, lastKnownElr=null) "
     "for topic t. (isr: [1, 2, 3] -> [1, 2, 4], replicaSet: [1, 2, 4, 3] -> [1, 2, 4], partitionEpoch: 12, "
     "leaderEpoch: 5) (org.apache.kafka.controller.ReplicationControlManager)",
     {"kind": "reassignment_completed", "topic": "t", "partition": 2, "replicas": [1, 2, 4], "isr": [1, 2, 4]}),
    (T + "INFO [QuorumController id=1] AlterPartition request from node 3 for t.x-1 completed the ongoing partition "
     "reassignment and triggered a leadership change isr: [3, 1, 2] -> [1, 2, 4], replicaSet: [1, 2, 4, 3] -> "
     "[1, 2, 4], partitionEpoch: 11 -> 12, leaderEpoch: 5 -> 6. Returning NEW_LEADER_ELECTED. "
     "(org.apache.kafka.controller.ReplicationControlManager)",
     {"kind": "reassignment_completed", "topic": "t.x", "partition": 1, "leader": 3}),
    (T + "DEBUG [QuorumController id=1] Replayed partition change PartitionChangeRecord(partitionId=0, topicId="
     "AAAAAAAAAAAAAAAAAAAAAA, isr=[1, 2], leader=-2, replicas=null, removingReplicas=null, addingReplicas=null, "
     "leaderRecoveryState=-1, directories=null, eligibleLeaderReplicas=null, lastKnownElr=null) for topic t.x. (isr: "
     "[1, 2, 3] -> [1, 2], replicaSet: [1, 2, 3] -> [1, 2, 3], partitionEpoch: 7, leaderEpoch: 3) "
     "(org.apache.kafka.controller.ReplicationControlManager)",
     {"kind": "partition_change", "topic": "t.x", "partition": 0, "isr": [1, 2], "replicas": None, "leader": None,
      "leader_epoch": None, "partition_epoch": None}),
    (T + "INFO [QuorumController id=1] Rejecting AlterPartition request from node 2 for t-0 because the current "
     "partition epoch is 9, not 8. Proposed ISR was [BrokerState(brokerId=2, brokerEpoch=25), BrokerState(brokerId=1, "
     "brokerEpoch=31)] and current ISR is [2, 1, 3]. Current replica set is [1, 2, 3]. Current partitionEpoch is 9. "
     "Current leaderEpoch is 4. (org.apache.kafka.controller.ReplicationControlManager)",
     {"kind": "alter_partition_rejected", "topic": "t", "partition": 0, "target_broker": 2, "partition_epoch": 9}),
    (T + "ERROR [QuorumController id=1] Rejecting AlterPartition request from node 2 for t-0 because it specified an "
     "invalid ISR. Proposed ISR was [BrokerState(brokerId=5, brokerEpoch=-1)] and current ISR is [2, 1]. Current "
     "replica set is [1, 2]. Current partitionEpoch is 9. Current leaderEpoch is 4. "
     "(org.apache.kafka.controller.ReplicationControlManager)",
     {"kind": "alter_partition_rejected", "target_broker": 2, "partition_epoch": None}),
]

QUIET_4X = [
    # 4.2's UnifiedLog.truncateTo below the high watermark of a future log: the copy moving between the broker's dirs
    T + "WARN [UnifiedLog partition=t-1, dir=/data/k2] Truncating future t-1 to offset 40 below high watermark 45 "
        "(org.apache.kafka.storage.internals.log.UnifiedLog)",
]
