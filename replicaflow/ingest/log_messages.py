"""The replication messages Kafka writes, 0.10 to 4.x, as one rule table: kind, pattern, field groups.

A rule's pattern is matched on the message body (the logIdent prefix such as ``[Partition t-p
broker=N]`` removed). Patterns use only character classes and single optional groups, never a
repeated group, so Java's regex engine neither recurses nor backtracks catastrophically on a long
ISR list or a long dotted token (log_text caps every line first). Which Kafka class writes which
line at which release is in docs/logs.md.
"""

from __future__ import annotations

from replicaflow.ingest.log_lifecycle import LIFECYCLE_RULES
from replicaflow.ingest.log_rule import (
    ELECTION_FIELDS,
    ELECTION_TAIL,
    LS,
    MIN_ISR_SET,
    PARTITION_KEY,
    RECOVERY_BYTE,
    TP,
    L,
    N,
    Rule,
    kv,
)

# AbstractFetcherManager's logIdent: replication fetchers are ReplicaFetcherManager's; ReplicaAlterLogDirsManager
# (1.1+) writes the same lines for the fetchers that move replicas between a broker's own log directories.
_REPLICA_FETCHERS = r"^\[ReplicaFetcherManager on broker \d+\] "
LOG_DIR_MOVER = "[ReplicaAlterLogDirsManager "
# ReplicaAlterLogDirsThread (1.1+) is an AbstractFetcherThread too, with ShutdownableThread's logIdent: its lines about a
# partition (marked as failed, fetch errors, truncation) are about the copy moving between the broker's directories
LOG_DIR_MOVER_THREAD = "[ReplicaAlterLogDirsThread-"
# A replication fetcher thread's logIdent: `[ReplicaFetcherThread-I-L], ` (0.8-0.10), `]: ` (0.11), `[ReplicaFetcher
# replicaId=F, leaderId=L, fetcherId=I] ` (1.0+); not the ReplicaAlterLogDirsThread's
_REPLICA_FETCHER_THREAD = r"^\[(?:ReplicaFetcherThread-\d+-\d+\][,:]?|ReplicaFetcher replicaId=\d+, leaderId=\d+, fetcherId=\d+\]) "
_REPLICA_MANAGER = r"^\[(?:ReplicaManager broker=\d+|Replica Manager on Broker \d+)\]:? "  # 1.0+, before 1.0
LIST_FIELDS = ("isr", "replicas", "adding", "removing")  # fields holding broker lists
# OfflinePartitionLeaderSelector's NoReplicaOnlineException (0.8-1.0): the dead ISR (unclean election off) or replicas (on)
FAILED_ELECTION = (r"NoReplicaOnlineException: No (?:broker in ISR|replica in ISR|replica) for partition \S+ is alive\. "
                   r"Live brokers are: \[[^\]]*\][,.] (ISR brokers|Assigned replicas) are: \[(?:\w+\()?([\d, ]*)\)?\]\.?$")
PREFIX_PARTITION_KINDS = ("isr_shrink", "isr_expand", "isr_updated", "isr_update_failed")  # partition in the prefix only
BROKER_LIST_KINDS = ("broker_failed", "broker_registered")  # lists name brokers (ZooKeeper controller callbacks)
ACTIVE_SET = "active set"  # broker_registered from a new controller's whole view of the live brokers

# `partition change for t-p with topic ID x: replicas: [..] -> [..], isr: [..] -> [..], ..., leader: a -> b,
# leaderEpoch: a -> b, partitionEpoch: a -> b` (PartitionRegistration.diff: that order, unchanged fields left out;
# 3.7+ adds `directories: [..] -> [..]` after the replicas and `elr`, `lastKnownElr` before the partition epoch).
# A list is taken with its brackets: a field that became empty (`addingReplicas: [4] -> []`) is [], one left out null.
_PARTITION_DIFF = (r"partition change for (\S+-\d+) with topic ID \S+: "
                   r"(?:replicas: \[[\d, ]*\] -> (\[[\d, ]*\])(?:, |$))?"
                   r"(?:directories: \[[\w, -]*\] -> \[[\w, -]*\](?:, |$))?(?:isr: \[[\d, ]*\] -> (\[[\d, ]*\])(?:, |$))?"
                   r"(?:removingReplicas: \[[\d, ]*\] -> (\[[\d, ]*\])(?:, |$))?"
                   r"(?:addingReplicas: \[[\d, ]*\] -> (\[[\d, ]*\])(?:, |$))?(?:leader: -?\d+ -> (-?\d+)(?:, |$))?"
                   r"(?:leaderRecoveryState: \S+ -> ([\w-]+)(?:, |$))?(?:leaderEpoch: -?\d+ -> (-?\d+)(?:, |$))?"
                   r"(?:elr: \[[\d, ]*\] -> \[[\d, ]*\](?:, |$))?(?:lastKnownElr: \[[\d, ]*\] -> \[[\d, ]*\](?:, |$))?"
                   r"(?:partitionEpoch: -?\d+ -> (-?\d+))?.*$")
# ReplicationControlManager.replay(PartitionChangeRecord) 4.3+: `… for topic t. (isr: [..] -> [..], replicaSet: [..] ->
# [..], partitionEpoch: E, leaderEpoch: L)` (apache/kafka#21221; not in 4.2)
_REPLAY_TAIL = r"(?:\. \(isr: \[[\d, ]*\] -> \[[\d, ]*\], replicaSet: [^()]*\))?"
_PARTITION_DIFF_FIELDS = {"tp": 1, "replicas": 2, "isr": 3, "removing": 4, "adding": 5, "leader": 6, "state": 7,
                          "leader_epoch": 8, "partition_epoch": 9}


RULES: list[Rule] = [
    # --- ISR changes: kafka.cluster.Partition (server.log) ------------------------------------------
    Rule("isr_shrink", rf"^Shrinking ISR (?:for partition \[[^\[\]]+,\d+\] )?from {L} to {L}(?:\. Leader: "
         rf"\(highWatermark: {N}, endOffset: (-?\d+|unknown)\)\. Out of sync replicas: .*\.)?$",
         {"isr": 2, "offset": 4}),
    Rule("isr_expand", rf"^Expanding ISR (?:for partition {TP} )?from {L} to {L}$", {"isr": 3}),
    Rule("isr_updated", rf"^ISR updated (?:from AlterIsr )?to \[?{L}\]? *(\(under-min-isr\))? *and "
         rf"(?:zk[Vv]ersion|version) updated to \[?{N}\]?$", {"isr": 1, "state": 2, "partition_epoch": 3}),
    Rule("isr_update_failed", rf"^Cached zkVersion \[?{N}\]? not equal to that in zookeeper, skip updating ISR\.?$",
         {"partition_epoch": 1}),
    # Partition.handleAlterIsrError / handleAlterPartitionError: `Controller failed to update ISR to S due to unexpected
    # E. Retrying.` (2.7), `Failed to update ISR to S due to unexpected E. Retrying.` (2.8+), `Failed to alter
    # partition to S since the controller rejected the request with E. ...` (3.3+); the DEBUG ones name no error
    Rule("isr_update_failed", r"^(?:Controller failed|Failed) to (?:update ISR|alter partition) to (?:.*(?:due to "
         r"(?:unexpected )?|with )([A-Z_]{3,64})\b)?.*$", {"error": 1}),
    # --- leadership: Partition.makeLeader / makeFollower (state-change.log from 2.6) -----------------
    # (trunk between KAFKA-8470 and KAFKA-9802, 2020-03/05, printed the lists bare: `ISR 3,2,1 addingReplicas
    # removingReplicas .Previous leader epoch was -1.`; 2.6.0 shipped the bracketed form)
    Rule("leader_start", rf"^Leader {TP} (?:with topic id \S+ )?starts at leader epoch {N} from offset {N} with "
         rf"(?:partition epoch {N}, )?high watermark {N},? ISR \[?{L}\]?,? (?:addingReplicas|adding replicas) "
         rf"\[?{L}\]?,? (?:removingReplicas|and removing replicas) \[?{L}\]? *(\(under-min-isr\))? *\. ?Previous "
         rf"(?:leader (?:Some\((-?\d+)\)|None) and previous )?leader epoch was {N}\.?$",
         {"tp": 1, "leader_epoch": 2, "offset": 3, "partition_epoch": 4, "isr": 6, "adding": 7, "removing": 8,
          "state": 9, "target_broker": 10}),
    # Partition.makeLeader up to 2.5 (server.log): `Leader Epoch ... was: E` up to 2.4.0; 2.4.1 lowercases it and adds the HW
    Rule("leader_start", rf"^{TP} starts at (?:Leader Epoch|leader epoch) {N} from offset {N}(?: with high "
         rf"watermark -?\d+)?\. Previous (?:Leader Epoch was: |leader epoch was ){N}\.?$",
         {"tp": 1, "leader_epoch": 2, "offset": 3}),
    # Partition.makeFollower (2.6+). From 3.6 to 4.1 (KAFKA-19776, fixed in 4.2.0) it sets the new leader and epoch before
    # it logs them as "previous": a previous epoch equal to the new one says the previous leader is unknown (logs.py)
    Rule("follower_start", rf"^Follower {TP} starts at leader epoch {N} from offset {N} with (?:partition epoch "
         rf"{N} and )?high watermark {N}\. (?:Current leader is {N}\. )?Previous (?:leader (?:Some\((-?\d+)\)|None) "
         rf"and previous )?leader epoch was {N}\.?$",
         {"tp": 1, "leader_epoch": 2, "offset": 3, "partition_epoch": 4, "leader": 6, "target_broker": 7,
          "prev_leader_epoch": 8}),
    # --- LeaderAndIsr requests: ReplicaManager (state-change.log) ----------------------------------
    Rule("become_leader", rf"^(?:Broker (\d+) h|H)andling LeaderAndIsr request correlationId \d+ from controller "
         rf"(\d+) epoch \d+ starting the become-leader transition for partition {TP}$",
         {"broker": 1, "target_broker": 2, "tp": 3}, state="started"),
    Rule("become_follower", rf"^(?:Broker (\d+) h|H)andling LeaderAndIsr request correlationId \d+ from controller "
         rf"(\d+) epoch \d+ starting the become-follower transition for partition {TP}(?: with leader {N})?$",
         {"broker": 1, "target_broker": 2, "tp": 3, "leader": 4}, state="started"),
    Rule("become_leader", rf"^(?:Broker (\d+) c|C)ompleted LeaderAndIsr request correlationId \d+ from controller "
         rf"(\d+) epoch \d+ for the become-leader transition for partition {TP}$",
         {"broker": 1, "target_broker": 2, "tp": 3}, state="completed"),
    Rule("become_follower", rf"^(?:Broker (\d+) c|C)ompleted LeaderAndIsr request correlationId \d+ from controller "
         rf"(\d+) epoch \d+ for the become-follower transition for partition {TP}(?: with leader {N})?$",
         {"broker": 1, "target_broker": 2, "tp": 3, "leader": 4}, state="completed"),
    Rule("leader_and_isr", rf"^(?:Broker (\d+) r|R)eceived LeaderAndIsr request (.*) correlation id \d+ from "
         rf"controller (\d+) epoch \d+(?: for partition {TP})?$",
         {"broker": 1, "target_broker": 3, "tp": 4, "topic_name": (2, r"topicName='([^']*)'", 1),
          "partition_index": (2, PARTITION_KEY, 1),
          **kv(2, "leader", "leader_epoch", "partition_epoch", "isr", "replicas", "adding", "removing")}),
    # Partition.makeLeader/makeFollower 3.3+: a change skipped as already applied names the partition's current state
    # (a KRaft broker's at each ISR change); one skipped as older (`… already at a newer partition epoch N.`) is none.
    # 4.0-4.1 name server-common's PartitionState (KAFKA-18486), 4.2+ a PartitionRegistration (KAFKA-19447: `… with
    # topic id Some(X), partition registration PartitionRegistration(…) and isNew=false since …`)
    Rule("leader_and_isr", rf"^Skipped the become-(?:leader|follower) state change for {TP} with topic id \S+?,? "
         r"(?:and partition state|partition registration) (\w*Partition(?:State|Registration)[(\[].*[)\]])"
         r"(?: and isNew=\w+)? since it is already (?:the leader|a follower) with leader epoch -?\d+\..*$",
         {"tp": 1, **kv(2, "leader", "leader_epoch", "partition_epoch", "isr", "replicas", "adding", "removing")},
         state="skipped"),
    # ReplicaManager.makeFollowers: the leader is not in the metadata cache (-1: offline), so no fetcher starts for it
    Rule("become_follower", rf"^(?:Broker (\d+) r|R)eceived LeaderAndIsrRequest with correlation id \d+ from controller "
         rf"(\d+) epoch \d+ for partition {TP} (?:\(last update controller epoch \d+\) )?but cannot become follower "
         rf"since the new leader {N} is unavailable\.$",
         {"broker": 1, "target_broker": 2, "tp": 3, "leader": 4}, state="leader unavailable"),
    Rule("fetchers_stopped", rf"^(?:Broker (\d+) s|S)topped fetchers as part of become-follower request from "
         rf"controller (\d+) epoch \d+ with correlation id \d+ for partition {TP}(?: with leader {N})?$",
         {"broker": 1, "target_broker": 2, "tp": 3, "leader": 4}),
    # --- ZooKeeper controller: PartitionStateMachine (state-change.log), elections -----------------
    Rule("partition_state", rf"^Changed partition {TP} from (\w+) to (\w+) with state (LeaderAndIsr\(.*\))$",
         {"tp": 1, "state": 3, "isr_states": (4, r"isrWithBrokerEpoch=List\((.*)\)", 1),
          **kv(4, "leader", "leader_epoch", "partition_epoch", "isr")}),
    Rule("partition_state", rf"^Changed partition {TP} state from (\w+) to (\w+)(?: with (?:assigned replicas "
         rf"\[?{L}\]?|leader {N}|state (LeaderAndIsr\(.*\)|\(Leader:.*\)))?)?$",
         {"tp": 1, "state": 3, "replicas": 4, "leader": 5, "isr_states": (6, r"isrWithBrokerEpoch=List\((.*)\)", 1),
          **kv(6, "leader", "leader_epoch", "partition_epoch", "isr"),
          "old_leader": (6, r"Leader:(-?\d+)", 1), "old_isr": (6, r"ISR:([\d,]*)", 1)}),
    # the same transitions up to 1.0, the leader elected named alone: `Controller C epoch E changed partition [t,p]
    # from S1 to S2 with leader L` and `... changed partition [t,p] state from S1 to S2[ with assigned replicas R]`
    # (0.8-0.11), `Changed partition t-p from S1 to S2 with leader L` (1.0)
    Rule("partition_state", rf"^(?:Controller (\d+) epoch \d+ c|C)hanged partition {TP} from (\w+) to (\w+) with leader "
         rf"{N}$", {"broker": 1, "tp": 2, "state": 4, "leader": 5}),
    Rule("partition_state", rf"^Controller (\d+) epoch \d+ changed partition {TP} state from (\w+) to (\w+)(?: with "
         rf"assigned replicas {L})?$", {"broker": 1, "tp": 2, "state": 4, "replicas": 5}),
    # ReplicaStateMachine (2.6+, state-change.log): the controller takes a dead replica out of the ISR itself
    Rule("partition_state", rf"^Partition {TP} state changed to (\(Leader:.*\)) after removing replica (\d+) from the "
         r"ISR as part of transition to (\w+)$",
         {"tp": 1, "target_broker": 3, "state": 4, "old_leader": (2, r"Leader:(-?\d+)", 1),
          "old_isr": (2, r"ISR:([\d,]*)", 1), **kv(2, "leader_epoch", "partition_epoch")}),
    # OfflinePartitionLeaderSelector (ZooKeeper controller 0.8-1.0; LeaderAndIsr.toString is JSON): the leader it
    # elected for an offline partition, clean or not (an unclean election's WARN comes first); from 1.1 the
    # `Changed partition t-p from OfflinePartition to OnlinePartition with state LeaderAndIsr(...)` line above
    Rule("partition_state", rf'^Selected new leader and ISR \{{"leader":{N},"leader_epoch":{N},"isr":\[{L}\]\}} for '
         rf'offline partition {TP}$', {"leader": 1, "leader_epoch": 2, "isr": 3, "tp": 4}, state="OnlinePartition"),
    Rule("unclean_election", rf"^No broker in ISR is alive for {TP}\. Elect leader {N} from live brokers {L}\. "
         r"There's potential data loss\.$", {"tp": 1, "leader": 2, "replicas": 3}),
    # PartitionChangeBuilder.tryElection (KRaft, 3.6+; the partition named by topic id: kraft_elections.py). 4.1 adds the
    # registration before the change and the record: its replicas, the leader epoch the record raises, the ISR it sets
    Rule("unclean_election", rf"^Setting new leader for topicId (\S+), partition (\d+) to (-?\d+) using an unclean "
         rf"election{ELECTION_TAIL}$", ELECTION_FIELDS),
    # the same election from the eligible leader replicas (KIP-966, 3.7+: TRACE; 4.1: INFO, with the tail): the new
    # leader becomes the ISR alone, clean; `leader=-1` before says the partition had no leader until this line
    Rule("elr_election", rf"^Setting new leader for topicId (\S+), partition (\d+) to (-?\d+) using ELR{ELECTION_TAIL}$",
         ELECTION_FIELDS),
    # --- KRaft controller: PartitionRegistration.maybeLogPartitionChange (3.0+), the changed fields only ---
    Rule("unclean_election", rf"^UNCLEAN {_PARTITION_DIFF}", _PARTITION_DIFF_FIELDS, sparse=True),
    Rule("partition_change", rf"^{_PARTITION_DIFF}", _PARTITION_DIFF_FIELDS, sparse=True),
    Rule("partition_offline", rf"^No (?:broker in ISR for partition {TP} is alive|replica in ISR for partition "
         rf"{TP} is alive)\. Live brokers are: \[(?:Set\()?{LS}\)?\], ISR brokers are: \[{L}\]$",
         {"tp": 1, "tp2": 2, "isr": 4}),
    # PartitionStateMachine: a new or offline partition left without a leader (1.1+; the failed election of an
    # online partition, preferred or for a controlled shutdown, leaves it online under its old leader)
    Rule("partition_offline", rf"^(?:Controller \d+ epoch \d+ failed to change state for partition {TP} from "
         rf"(?:New|Offline)Partition to (OnlinePartition)|Failed to elect leader for partition {TP} under strategy "
         r"OfflinePartitionLeaderElectionStrategy\b.*)$", {"tp": 1, "state": 2, "tp2": 3}),
    # up to 1.0: `Controller N epoch E initiated ...` (0.8-0.11), `[Controller id=N epoch=E] Initiated ...`; trace: FAILED_ELECTION
    Rule("partition_offline", rf"^(?:Controller (\d+) epoch \d+ i|I)nitiated state change for partition {TP} from "
         r"(?:New|Offline)Partition to (OnlinePartition) failed$", {"broker": 1, "tp": 2, "state": 3}),
    # --- KRaft controller: ReplicationControlManager, ClusterControlManager, BrokerHeartbeatManager ---
    # replay(PartitionChangeRecord): 4.3+ appends the registration before and after (_REPLAY_TAIL), which adds nothing
    # the record and the lines before it do not give: read as the record alone, as in 4.2
    Rule("reassignment_started", r"^Replayed partition assignment change PartitionChangeRecord\((partitionId=(\d+), "
         rf".*addingReplicas=\[[, ]*\d[\d, ]*\].*|.*removingReplicas=\[[, ]*\d[\d, ]*\].*)\) for topic (\S+?){_REPLAY_TAIL}$",
         {"partition_index": (1, PARTITION_KEY, 1), "topic_name": 3,
          **kv(1, "leader", "isr", "replicas", "adding", "removing", "state")}, states=RECOVERY_BYTE),
    # a record that empties both lists ends the reassignment (PartitionChangeBuilder.completeReassignmentIfNeeded on
    # any change of the partition, or a cancel: then `replicas` are the origin's)
    Rule("reassignment_completed", r"^Replayed partition assignment change PartitionChangeRecord\((partitionId=(\d+), "
         rf".*removingReplicas=\[\], addingReplicas=\[\].*)\) for topic (\S+?){_REPLAY_TAIL}$",
         {"partition_index": (1, PARTITION_KEY, 1), "topic_name": 3, **kv(1, "leader", "isr", "replicas")}),
    Rule("partition_change", r"^Replayed partition (?:assignment )?change PartitionChangeRecord\((.*)\) for topic "
         rf"(\S+?){_REPLAY_TAIL}$", {"partition_index": (1, PARTITION_KEY, 1), "topic_name": 2,
                      **kv(1, "leader", "isr", "replicas", "adding", "removing", "state")},
         states=RECOVERY_BYTE),
    Rule("partition_change", rf"^Replayed PartitionRecord for (new|existing) partition {TP} (?:with topic ID \S+ )?and "
         r"(PartitionRegistration\(.*\))\.$",
         {"state": 1, "tp": 2, **kv(3, "leader", "leader_epoch", "partition_epoch", "isr", "replicas", "adding",
                                     "removing")}),
    # the same replay of a new partition's PartitionRecord, KRaft 3.0-3.5 (ReplicationControlManager.replay)
    Rule("partition_change", rf"^Created partition {TP} with topic ID \S+ and (PartitionRegistration\(.*\))\.$",
         {"tp": 1, **kv(2, "leader", "leader_epoch", "partition_epoch", "isr", "replicas", "adding", "removing")},
         state="new"),
    # ClusterControlManager.replay 2.8-3.2 logs the record (3.3.0-3.3.1 `Fenced broker: N`; none in 3.3.2-3.5): `Fenced broker: FenceBrokerRecord(id=N, epoch=E)`
    Rule("broker_fenced", r"^(?:Fenced broker: (?:FenceBrokerRecord\(id=)?|Added new fenced broker: )(\d+)(?:, epoch=\d+\))?$",
         {"target_broker": 1}),
    # ReplicationControlManager.maybeFenceOneStaleBroker (3.0+), the active controller acting, not a record replayed:
    # no heartbeat within broker.session.timeout.ms, the broker is dead or cut off (the rebuild's `brokers`: down)
    Rule("broker_fenced", r"^Fencing broker (\d+)(?: at epoch \d+)? because its session has timed out\.$",
         {"target_broker": 1}, state="session timed out"),
    # BrokerHeartbeatManager.calculateNextBrokerState (2.8+), a broker's heartbeat asking to stop: with no leadership
    # left (or fenced already) it is fenced at once; with leaderships, the controller first moves them away (a
    # controlled shutdown under way); an unfenced broker that asks to be fenced alone is fenced
    Rule("broker_fenced", r"^(?:Unf|F)enced broker (\d+) has requested and been granted an immediate shutdown\.?$",
         {"target_broker": 1}, state="controlled shutdown"),
    Rule("controlled_shutdown", r"^Unfenced broker (\d+) has requested and been granted a controlled shutdown\.?$",
         {"target_broker": 1}, state="granted"),
    Rule("broker_fenced", r"^Unfenced broker (\d+) has requested and been granted fencing\.?$", {"target_broker": 1},
         state="requested"),
    # ClusterControlManager.replayRegistrationChange (3.6+): `fenced=1` fences, `fenced=-1` unfences, 0 is no change
    Rule("broker_fenced", r"^Replayed (?:FenceBrokerRecord|BrokerRegistrationChangeRecord) modifying the registration "
         r"for broker (\d+): (?:FenceBrokerRecord\(.*|BrokerRegistrationChangeRecord\(.*\bfenced=1\b.*)$",
         {"target_broker": 1}),
    Rule("broker_unfenced", r"^Replayed (?:UnfenceBrokerRecord|BrokerRegistrationChangeRecord) modifying the "
         r"registration for broker (\d+): (?:UnfenceBrokerRecord\(.*|BrokerRegistrationChangeRecord\(.*\bfenced=-1\b.*)$",
         {"target_broker": 1}),
    Rule("broker_unfenced", r"^(?:Unfenced broker: (?:UnfenceBrokerRecord\(id=)?|Added new unfenced broker: )(\d+)"
         r"(?:, epoch=\d+\))?$", {"target_broker": 1}),
    # BrokerHeartbeatManager: `the last committed metadata offset N` (2.8-3.2), `it's register broker record` (3.3-3.4)
    Rule("broker_unfenced", r"^The request from broker (\d+) to unfence has been granted because it has caught up "
         r"with the (?:offset of it'?s register broker record|last committed metadata offset) \d+\.?$",
         {"target_broker": 1}, state="caught up"),
    # --- controller elections: the winner's line (controller.log) -----------------------------------
    # ZooKeeper: `N successfully elected as leader` (ZookeeperLeaderElector, 0.8-0.10), `... as the controller` (0.11-2.0),
    # with `. Epoch incremented to E and epoch zk version is now Z` (2.1-3.9); the elected id is the writer
    Rule("controller_elected", r"^(\d+) successfully elected as (?:leader|the controller(?:\. Epoch incremented to "
         r"(\d+) and epoch zk version is now -?\d+)?)$", {"broker": 1, "leader_epoch": 2}),
    # KRaft (QuorumController's leader change): `Becoming active at controller epoch E.` (2.8), `Becoming the active
    # controller at epoch E, committed offset O and committed epoch C.` (3.0-3.2), `..., committed offset O,
    # committed epoch C` (3.3-3.5), `..., next write offset O.` (3.6+)
    Rule("controller_elected", r"^Becoming active at controller epoch (\d+)\.$", {"leader_epoch": 1}),
    Rule("controller_elected", r"^Becoming the active controller at epoch (\d+), (?:committed offset -?\d+(?: and|,) "
         r"committed epoch -?\d+|next write offset -?\d+)\.?$", {"leader_epoch": 1}),
    # QuorumController's constructor (3.3+), logged as a controller starts, before it replays (controller_restart.py)
    Rule("controller_started", r"^Creating new QuorumController with clusterId \S+"),
    # KafkaController.onPreferredReplicaElection (0.8-2.3) / onReplicaElection (2.4+, KIP-460), ZooKeeper controller: the
    # partitions it is about to elect leaders for, a row each. From 2.4 the line says why (the trigger, kept as `state`):
    # AutoTriggered (auto.leader.rebalance.enable), AdminClientTriggered (an ElectLeaders request), ZkTriggered (the
    # /admin/preferred_replica_election znode); before, an automatic rebalance and an operator's election read the same
    Rule("preferred_election_started", r"^Starting preferred replica leader election for partitions ?(.*)$", {},
         explode="list"),
    Rule("preferred_election_started", r"^Starting replica leader election \(PREFERRED\) for partitions .* triggered by "
         r"(AdminClientTriggered|AutoTriggered|ZkTriggered)$", {"state": 1}, explode="list"),
    Rule("unclean_election_started", r"^Starting replica leader election \(UNCLEAN\) for partitions .* triggered by "
         r"(AdminClientTriggered|AutoTriggered|ZkTriggered)$", {"state": 1}, explode="list"),
    # ReplicationControlManager.handleDirectoriesOffline (KRaft with several log directories, 3.7+): a broker's heartbeat
    # named directories that failed (by their UUIDs, KIP-858); the controller takes their replicas' leaderships and ISR
    # seats. The broker is target_broker, the UUIDs log_dir (line_tables.log_dirs: its offline directories)
    Rule("log_dir_failed", r"^Directories \[([\w, -]+)\] in broker (\d+) marked offline, remaining directories: "
         r"\[[\w, -]*\]$", {"log_dir": 1, "target_broker": 2}, state="controller"),
    # --- fetchers: ReplicaFetcherManager, AbstractFetcherThread (server.log) ------------------------
    Rule("fetcher_added", r"^Added fetcher (?:to broker (?:BrokerEndPoint\(id=)?(\d+).*? )?for partitions (.+)$",
         {"leader": 1}, explode="fetcher", ident=_REPLICA_FETCHERS),
    Rule("fetcher_removed", r"^Removed fetcher for partitions (.*)$", {}, explode="list", ident=_REPLICA_FETCHERS),
    # (beside the other rules with a logIdent of their own: one regex call per run of rules without)
    # ReplicaManager.handleLogDirFailure's list of the partitions it takes offline (1.0 `Partitions ... are offline`,
    # 1.1+ `Broker N stopped fetcher ...`; a partition whose log was only being moved there stays online). LogManager
    # then lists them again (1.0 the same text with no logIdent, 1.1+ `Logs for partitions ... are offline and logs for
    # future partitions ...`): not read, one row per partition
    Rule("log_dir_offline", r"^Partitions (\S*) are offline due to failure on log directory (.+)$", {"log_dir": 2},
         explode="list", ident=_REPLICA_MANAGER),
    Rule("partition_failed", rf"^Partition {TP} marked as failed$", {"tp": 1}),
    # the whole fetch request to the leader failed (it is gone or unreachable; AbstractFetcherThread, WARN, once per
    # try): `Error in fetch <request>` (0.8.0, 0.10), `... <request>. Possible cause: <exception>` (0.8.2-0.9),
    # `Error in fetch to broker L, request <request>` (0.11-1.0), `Error in response for fetch request <request>`
    # (1.1+). No partition: the request names every partition of the thread, none of which failed alone
    Rule("fetch_request_failed", r"^Error in (?:fetch to broker (\d+), request |response for fetch request |fetch )"
         r"\S.*?(?:\. Possible cause: ([\w.$]+)(?::.*)?)?$", {"leader": 1, "error": 2}, ident=_REPLICA_FETCHER_THREAD),
    Rule("fetch_error", rf"^Error for partition {TP} (?:at offset {N}|to broker (\d+):([\w.$]+)(?::.*)?)$",
         {"tp": 1, "offset": 2, "leader": 3, "error": 4}),
    # AbstractFetcherThread.processFetchRequest from 2.7 (KAFKA-9930): these errors leave "Error for partition" for a WARN
    # of their own (UNKNOWN_TOPIC_ID and INCONSISTENT_TOPIC_ID from 3.1); the partition is marked with error the same way
    Rule("fetch_error", rf"^Received (UNKNOWN_TOPIC_OR_PARTITION|UNKNOWN_TOPIC_ID|INCONSISTENT_TOPIC_ID) from the leader "
         rf"for partition {TP}\. This error may be returned transiently .*$", {"error": 1, "tp": 2}),
    # `Error while processing data for partition t-p` (a KafkaStorageException, 1.0+), ` at offset O` from 2.3
    Rule("fetch_error", rf"^(?:Unexpected error occurred|Error) while processing data for partition {TP}(?: at offset "
         rf"{N})?$", {"tp": 1, "offset": 2}),
    # (0.10-1.0 append the exception's message, ` error <message>`; 1.1+ log the exception apart)
    Rule("fetch_error", rf"^Found invalid messages during fetch for partition {TP} offset {N}(?: error .*)?$",
         {"tp": 1, "offset": 2}, state="invalid messages"),
    # the leader answered NOT_LEADER_FOR_PARTITION (NOT_LEADER_OR_FOLLOWER from 2.7): INFO in 1.1-2.0, DEBUG from 2.1
    # (before 1.1 it was an `Error for partition ... to broker L:...NotLeaderForPartitionException`); and from 2.1
    # (KIP-320) UNKNOWN_LEADER_EPOCH, the leader behind the follower's epoch (DEBUG). The partition is retried
    Rule("fetch_error", rf"^Remote broker is not the leader for partition {TP}, which could indicate that the "
         r"partition is being moved$", {"tp": 1}, state="not leader"),
    Rule("fetch_error", rf"^Remote broker has a smaller leader epoch for partition {TP} than this replica's current "
         rf"leader epoch of {N}\.$", {"tp": 1, "leader_epoch": 2}, state="smaller leader epoch"),
    # the partition cannot replicate: its leader answered the offset lookup of an out-of-range fetch with an error
    # (`[t,p] to broker L` 0.10-0.11, `t-p to broker L` 1.0), or a message over replica.fetch.max.bytes (before KIP-74)
    Rule("fetch_error", rf"^Error getting offset for partition {TP}(?: to broker (\d+))?$", {"tp": 1, "leader": 2},
         state="offset lookup failed"),
    # the same lookup failing with an error the thread retries (AbstractFetcherThread.handleOutOfRangeError, INFO,
    # 2.4+), and the tiered-storage lookup of an offset moved to remote storage (handleOffsetsMovedToTieredStorage,
    # 3.5+: INFO for a retried error, ERROR with its stack trace for the others)
    Rule("fetch_error", rf"^Could not fetch offset for {TP} due to error: .*$", {"tp": 1}, state="offset lookup failed"),
    Rule("fetch_error", rf"^(?:Could not build|Error building) remote log auxiliary state for {TP}(?: due to error: .*)?$",
         {"tp": 1}, state="remote log state failed"),
    Rule("fetch_error", rf"^Replication is failing due to a message that is greater than replica\.fetch\.max\.bytes for "
         rf"partition {TP}\. .*$", {"tp": 1}, state="message too large"),
    # ReplicaFetcherThread.processPartitionData 0.9-0.11: a KafkaStorageException appending the fetched data halts
    Rule("storage_halt", rf"^Disk error while replicating data(?:\.| for {TP})$", {"tp": 1}),
    # AbstractFetcherThread.onPartitionFenced (2.1+, KIP-320): `older` takes the partition out of the thread until
    # a new leader epoch (2.3+ marks it failed next); `newer` (2.5+, KAFKA-9654) only retries it, written `has an new
    # epoch (E) than the current leader. retry the partition later` until 3.3 (kept as `newer`)
    Rule("fetch_epoch_mismatch", rf"^Partition {TP} has an? (older|newer|new) epoch \({N}\) than the current "
         r"leader\..*$", {"tp": 1, "state": 2, "leader_epoch": 3}, states={"new": "newer"}),
    # a log cut back to an offset (Log.truncateTo): `Truncating log t-p to offset O.` (0.8-1.0), `Truncating to offset
    # O` (1.1+, the partition in the logIdent `[Log partition=t-p, dir=D] `, UnifiedLog's from 3.1); the line that
    # says it had no effect (`Truncating to O has no effect as ...`) is no event
    # Log.truncateTo up to 0.10 logs this before it checks the offset: a negative one is refused
    # (IllegalArgumentException) and nothing is cut, so no event; from 0.11 it is logged after the checks
    Rule("log_truncated", rf"^Truncating log {TP} to offset (\d+)\.$", {"tp": 1, "offset": 2}),
    Rule("log_truncated", rf"^Truncating to offset {N}$", {"offset": 1}),
    # the follower removed records its high watermark covered (WARN): ReplicaFetcherThread.truncate 2.0-4.1 (leader from
    # its logIdent), UnifiedLog.truncateTo from 4.2 (KAFKA-19474, `[UnifiedLog partition=t-p, dir=D] `, before its
    # `Truncating to offset O`); 4.2's `Truncating future t-p …` is a copy between the broker's own dirs: no event
    Rule("truncated_below_hw", rf"^Truncating {TP} to offset {N} below high watermark {N}$", {"tp": 1, "offset": 2}),
    # a follower whose leader has fewer records than it, with unclean leader election off, exits rather than lose
    # them (ReplicaFetcherThread.handleOffsetOutOfRange, FATAL): `Halting ... for topic T, Current leader L's ...`
    # (0.8-0.9), `Exiting ... for partition t-p, Current|current leader L's latest offset O is less than replica
    # R's latest offset O2` (0.10-0.11), `..., current leader's latest offset O is less than replica's ...` (1.0-2.0)
    Rule("truncation_refused", rf"^(?:Halting|Exiting) because log truncation is not allowed for (?:partition {TP}|"
         r"topic (\S+)), [Cc]urrent leader(?: (\d+))?'s latest offset (\d+) is less than replica(?: \d+)?'s latest "
         r"offset \d+$", {"tp": 1, "topic_name": 2, "leader": 3, "offset": 4}),
    # the follower's fetch offset was out of the leader's range, so it moved it (ReplicaFetcherThread.
    # handleOffsetOutOfRange; AbstractFetcherThread.fetchOffsetAndTruncate from 2.1): `Replica R for partition P
    # reset its fetch offset [from F ]to current leader L's latest|start offset O` (0.8-0.11, `from` since 0.8.1),
    # `Reset fetch offset for partition t-p from F to current leader's latest|start offset O` (1.0+); 3.6+ tells
    # the two start-offset cases apart: `Truncate fully and reset fetch offset ... to the current leader's start
    # offset O because ...` (WARN) or `... to the current local replica's end offset O` (INFO, nothing dropped).
    # state: `latest` (the follower was ahead of its leader and truncates to it: an unclean election or a lost
    # write), `start` (it fell behind the leader's log start offset and starts over there), `local end`. The
    # `Current offset F for partition t-p [is] out of range...` line written after it is the same event: no row.
    Rule("fetch_offset_reset", rf"^Replica (\d+) for partition {TP} reset its fetch offset (?:from -?\d+ )?to current "
         rf"leader (\d+)'s (latest|start) offset {N}$", {"broker": 1, "tp": 2, "leader": 3, "state": 4, "offset": 5}),
    Rule("fetch_offset_reset", rf"^Reset fetch offset for partition {TP} from -?\d+ to current leader's (latest|start) "
         rf"offset {N}$", {"tp": 1, "state": 2, "offset": 3}),
    Rule("fetch_offset_reset", rf"^Truncate fully and reset fetch offset for partition {TP} from -?\d+ to the current "
         rf"leader's (start) offset {N} because .*$", {"tp": 1, "state": 2, "offset": 3}),
    Rule("fetch_offset_reset", rf"^Reset fetch offset for partition {TP} from -?\d+ to the current local replica's "
         rf"end offset {N}$", {"tp": 1, "offset": 2}, state="local end"),
    # `Failed to truncate t-p` (INFO, 1.0-2.2), ERROR with ` at offset O` from 2.3
    Rule("truncation_failed", rf"^(?:Failed to truncate|Unexpected error occurred during truncation for) {TP}(?: at "
         rf"offset {N})?$", {"tp": 1, "offset": 2}),
    # --- log directories: LogManager, ReplicaManager -------------------------------------------------
    # a directory is its absolute path, as the line ends it: a path may hold spaces (`/var/lib/kafka data`)
    Rule("log_dir_failed", r"^Stopping serving replicas in dir (.+?)(?: with uuid (\S+) because the log directory "
         r"has failed\.)?$", {"log_dir": 1}),
    Rule("log_dir_offline", r"^Broker \d+ stopped fetcher for partitions (.*) and stopped moving logs for partitions "
         r".* because they are in the failed log directory (.+)\.$", {"log_dir": 2}, explode="list"),
    Rule("broker_halted", r"^Halting broker because dir (.+) is offline$", {"log_dir": 1}),
    # LogManager.handleLogDirFailure (1.0+): the broker's last live directory failed; log_dir lists them all
    Rule("broker_halted", r"^Shutdown broker because all log dirs in (.+) have failed$", {"log_dir": 1}),
    # LogManager.createAndValidateLogDirs (1.0+): at start-up, no configured directory could be created or read
    Rule("broker_halted", r"^Shutdown broker because none of the specified log dirs from (.+) can be created or "
         r"validated$", {"log_dir": 1}, state="at startup"),
    # ReplicaManager.handleLogDirFailure 3.7+ (KRaft, JBOD): the metadata log's dir, one in migration, one without UUID
    Rule("broker_halted", r"^Shutdown broker because the metadata log dir (.+) has failed$", {"log_dir": 1}),
    Rule("broker_halted", r"^Shutdown broker because some log directory has failed during migration mode: (.+)$",
         {"log_dir": 1}),
    Rule("broker_halted", r"^Unable to propagate directory failure disabled because directory (.+) has no UUID$",
         {"log_dir": 1}),
    # --- deletion: LogManager.asyncDelete (a replica's log), TopicDeletionManager, ReplicationControlManager ---
    Rule("replica_deleted", rf"^Log for partition {TP} is renamed to \S+ and is scheduled for deletion$",
         {"tp": 1}),
    Rule("topic_deleted", r"^Deletion of topic (\S+) successfully completed$", {"topic_name": 1}),
    # ReplicationControlManager.replay(RemoveTopicRecord): `Removed topic` up to 3.5, then `Replayed RemoveTopicRecord`
    Rule("topic_deleted", r"^(?:Removed topic|Replayed RemoveTopicRecord for topic) (\S+) with ID \S+\.$",
         {"topic_name": 1}),
    # --- dynamic configs: every override of a topic, a broker or the cluster default after a change ------------
    # ZooKeeper, every broker on the notification (DynamicConfigManager; ZkConfigManager 3.4+): `{k=v, …}` up to 0.10.2,
    # `Map(k -> v, …)` (`HashMap(` on Scala 2.13); 0.10.0's v1 notification names the entity apart. ZkAdminManager 2.8+
    # (the broker that took the request; 2.4-2.7 printed its KafkaConfig object) and KRaft's publisher (every broker; a
    # node's own config, that node): `k -> v,k2 -> v2`, empty when no override is left
    Rule("config_changed", r"^Processing override for entityPath: topics/([^\s/]+) with config: (.*)$",
         {"topic_name": 1, "min_isr": (2, MIN_ISR_SET, 1)}, state="topic"),
    Rule("config_changed", r"^Processing override for entityType: topics, entity: (\S+) with config: (.*)$",
         {"topic_name": 1, "min_isr": (2, MIN_ISR_SET, 1)}, state="topic"),
    Rule("config_changed", r"^Processing override for entityPath: brokers/<default> with config: (.*)$",
         {"min_isr": (1, MIN_ISR_SET, 1)}, state="default"),
    Rule("config_changed", r"^Processing override for entityPath: brokers/(\d+) with config: .*$", {"target_broker": 1},
         state="broker"),
    Rule("config_changed", r"^Updating topic (\S+) with new configuration :(.*)$",
         {"topic_name": 1, "min_isr": (2, MIN_ISR_SET, 1)}, state="topic"),
    Rule("config_changed", r"^Updating cluster configuration :(.*)$", {"min_isr": (1, MIN_ISR_SET, 1)},
         state="default"),
    Rule("config_changed", r"^Updating node (\d+) with new configuration :.*$", {"target_broker": 1}, state="broker"),
    # --- reassignment: KafkaController, ReplicationControlManager (controller.log) -------------------
    Rule("reassignment_started", rf"^Handling reassignment of partition {TP} to new replicas {L}$",
         {"tp": 1, "replicas": 2}),
    Rule("reassignment_started", rf"^Successfully updated assignment of partition {TP} to ReplicaAssignment\("
         rf"replicas={L}, addingReplicas=(,*\d[\d,]*), removingReplicas={L}\)$",
         {"tp": 1, "replicas": 2, "adding": 3, "removing": 4}),
    Rule("reassignment_started", rf"^Successfully updated assignment of partition {TP} to ReplicaAssignment\("
         rf"replicas={L}, addingReplicas={L}, removingReplicas=(,*\d[\d,]*)\)$",
         {"tp": 1, "replicas": 2, "adding": 3, "removing": 4}),
    # the target replicas as a Scala collection: ArrayBuffer (the Admin API, the znode), List (read back at a fail-over)
    Rule("reassignment_caught_up", rf"^Target replicas \w{{1,32}}\({LS}\) have all caught up with the leader for "
         rf"reassigning partition {TP}$", {"replicas": 1, "tp": 2}),
    Rule("reassignment_completed", rf"^Successfully updated assignment of partition {TP} to ReplicaAssignment\("
         rf"replicas={L}, addingReplicas=, removingReplicas=\)$", {"tp": 1, "replicas": 2}),
    # KafkaController to 1.0 (`Removed partition t-p …`), 1.1 (`Removing …`), 2.0-2.3 (a Set of them); 2.4+ not read
    Rule("reassignment_completed", rf"^Remov(?:ed|ing) partition {TP} from the list of reassigned partitions in "
         r"zookeeper$", {"tp": 1}),
    Rule("reassignment_completed", r"^Removing partitions Set\([^()]*\) from the list of reassigned partitions in "
         r"zookeeper$", {}, explode="list"),
    # ReplicationControlManager (`AlterIsr` to 3.1); a new leader: `... and triggered a leadership change. Returning E.`
    # 4.3+ puts the registration's change before `. Returning` (or at the end): `isr: [..] -> [..], replicaSet: …`
    Rule("reassignment_completed", r"^Alter(?:Partition|Isr) request from node (\d+) for (\S+-\d+) completed the "
         r"ongoing partition reassignment(?: and triggered a leadership change)?(?:\.? isr: \[[\d, ]*\] -> "
         r"\[[\d, ]*\], replicaSet: [^.]*)?(?:\. Re(?:tu|ut)rning \w+)?\.?$",
         {"leader": 1, "tp": 2}),
    # ReplicationControlManager.validateAlterPartitionData (KRaft, `alterIsr` up to 3.1): the controller refuses a
    # leader's proposed ISR, so the ISR stays as it was; the reasons that name the current partition epoch give it
    # (4.3+ follows every reason with `. Proposed ISR was [..] and current ISR is [..]. …`)
    Rule("alter_partition_rejected", r"^Rejecting (?:AlterPartition|alterIsr) request from node (\d+) for (\S+-\d+) "
         r"because (?:the current partition epoch is (\d+), not \d+(?:\. Proposed ISR was .*)?|.*)\.$",
         {"target_broker": 1, "tp": 2, "partition_epoch": 3}),
    # KafkaController.onBrokerFailure (ZooKeeper, 0.8-3.x): brokers whose session expired (dead, cut off; 2.2+ also back
    # with a new epoch), whose leaderships and ISR seats the controller then takes. A row per broker (target_broker)
    Rule("broker_failed", r"^Broker failure callback for ([\d,]+)$", {}, explode="list"),
    # KafkaController.onBrokerStartup (ZooKeeper controller, 0.8-3.x): brokers whose registration appeared in
    # ZooKeeper (started, or from 2.2 back with a new epoch right after their failure callback); and the live brokers
    # a new controller finds registered (initializeControllerContext, `Set(1, 0)`; Scala 2.13 `HashSet(…)` past 4)
    Rule("broker_registered", r"^New broker startup callback for [\d,]+$", {}, explode="list"),
    Rule("broker_registered", r"^Currently active brokers in the cluster: (?:Hash)?Set\([\d, ]*\)$", {},
         explode="list", state=ACTIVE_SET),
    Rule("reassignment_waiting", rf"^New replicas {L} for partition {TP} being reassigned not yet caught up with "
         r"the leader$", {"replicas": 1, "tp": 2}),
    Rule("reassignment_waiting", rf"^Partition {TP} to be reassigned is already assigned to replicas {L}\. "
         r"Ignoring request for partition reassignment\.?$", {"tp": 1, "replicas": 2}, state="already assigned"),
    *LIFECYCLE_RULES,
    # --- produce: ReplicaManager.appendToLocalLog + its exception (server.log) ----------------------
    Rule("produce_rejected", rf"^(?:\S+\.)?(NotEnoughReplicas(?:AfterAppend)?Exception): (?:The size of the current "
         rf"ISR (?:(?:Hash)?Set\()?{LS}\)? is insufficient to satisfy the min\.isr requirement of (\d+) for partition "
         rf"{TP}.*|Number of insync replicas for partition {TP} is \[(\d+)\], below required minimum \[(\d+)\])$",
         {"error": 1, "isr": 2, "min_isr": 3, "tp": 4, "tp2": 5, "isr_size": 6, "min_isr2": 7},
         parent=r"^Error processing append operation on partition ", sparse=True),  # <= 1.0 gives the ISR's size only
    # 4.x (Partition.appendRecordsToLeader): the ISR's size, then its members
    Rule("produce_rejected", rf"^(?:\S+\.)?(NotEnoughReplicas(?:AfterAppend)?Exception): The size of the current ISR : "
         rf"(\d+) is insufficient to satisfy the min\.isr requirement of (\d+) for partition {TP}, live replica\(s\) "
         rf"broker\.id are : (?:(?:Hash)?Set\()?{LS}\)?$", {"error": 1, "isr_size": 2, "min_isr": 3, "tp": 4, "isr": 5},
         parent=r"^Error processing append operation on partition "),
    # ReplicaManager.appendToLocalLog before 1.0 (KIP-112): an I/O error appending to a log halts the broker; the
    # exception, Log.append's, names the log ('t-p', its directory's name)
    Rule("storage_halt", rf"^(?:\S+\.)?KafkaStorageException: I/O exception in append to log '{TP}'$", {"tp": 1},
         parent=r"^Halting due to unrecoverable I/O error while handling produce request:\s*$"),
    # Partition.maybeShrinkIsr through KafkaZkClient.conditionalUpdatePath (1.1-3.x with ZooKeeper, before AlterIsr):
    # a ZooKeeper error writing the shrunk ISR (its session expired, say) escapes the shrink after its INFO line and
    # before the ISR and the IsrShrinks meter are set, and KafkaScheduler logs it; the exception names the
    # partition's state znode. The ISR stays as it was (up to 1.0 ZkUtils gave `Cached zkVersion` instead)
    Rule("isr_update_failed", r"^(?:\S+\.)?KeeperException\$\w+: KeeperErrorCode = [\w ]+ for /brokers/topics/"
         r"([^/\s]+)/partitions/(\d+)/state$", {"topic_name": 1, "partition_index": 2},
         parent=r"^Uncaught exception in scheduled task 'isr-expiration'$"),
    Rule("thread_died", rf"^\S*Exception: [Ee]rror processing data for partition {TP} offset {N}$",
         {"tp": 1, "offset": 2}, parent=r"^Error due to\s*$"),
]
