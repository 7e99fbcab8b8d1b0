"""Which Kafka release a cluster's logs come from (docs/real-cluster.md, "Kafka version"): the forms of its lines
bound the release, and a broker's own `Kafka version: X` line names it where the forms allow."""

from __future__ import annotations

from collections.abc import Iterable

from replicaflow.model.version import KafkaVersion, printed_release

# Log forms that bound the release (docs/real-cluster.md, "Kafka version"): (pattern, first, last release).
FORMS: tuple[tuple[str, str | None, str | None], ...] = (
    (r"^Partition \[.+,\d+\] on broker \d+: ", None, "0.11"),
    (r"(?:Shrinking|Expanding) ISR for partition ", None, "0.10"),  # 0.11 dropped the partition from the message
    (r"^\[KafkaServer id=\d+\]", "1.0", None),
    # logIdents: Partition's `[Partition t-p broker=N] `, StateChangeLogger's `[Controller id=N epoch=E] ` / `[Broker
    # id=N] ` and KafkaController's `[Controller id=N] ` from 1.0; KRaft's QuorumController `[Controller N] ` (2.8-3.4),
    # then `[QuorumController id=N] `
    (r"^\[(?:Partition \S+-\d+ broker|Controller id|Broker id)=\d+(?: epoch=\d+)?\] ", "1.0", None),
    (r"^\[Controller \d+\] ", "2.8", "3.4"),
    (r"^\[QuorumController id=\d+\] ", "3.5", None),
    (r"OfflinePartitionLeaderElectionStrategy\(", "2.4", None),  # a case class with allowUnclean (KIP-460)
    (r"failed to change state for partition ", "1.1", None),  # PartitionStateMachine.logFailedStateChange
    (r"Changed partition \S+ from \w+ to \w+ with state ", "1.1", None),  # PartitionStateMachine (1.0: `with leader`)
    # KafkaZkClient (1.1+) lets a ZooKeeper error out of Partition.updateIsr; up to 1.0 ZkUtils caught it
    (r"^Uncaught exception in scheduled task 'isr-expiration' .*KeeperException", "1.1", None),
    # ReplicaManager's logIdent from 1.0 (`[Replica Manager on Broker N]: ` before); its failed-directory line names
    # the logs it stopped moving from 1.1 (KIP-113)
    (r"^\[ReplicaManager broker=\d+\] ", "1.0", None),
    (r"and stopped moving logs for partitions ", "1.1", None),
    (r"Added fetcher for partitions List\(", None, "2.0"),
    (r"Added fetcher to broker ", "2.1", None),
    (r"Added fetcher to broker BrokerEndPoint\(id=", "2.1", "2.4"),
    (r"Added fetcher to broker \d", "2.5", None),
    (r"Leader: \(highWatermark", "2.2", None),
    (r"marked as failed$", "2.3", None),
    # KafkaController's leader election: `preferred replica leader election` up to 2.3, then (KIP-460) the type and trigger
    (r"Starting preferred replica leader election for partitions ", None, "2.3"),
    (r"Starting replica leader election \((?:PREFERRED|UNCLEAN)\) for partitions ", "2.4", None),
    # ReplicationControlManager.handleDirectoriesOffline: KRaft with several log directories (KIP-858)
    (r"Directories \[[\w, -]+\] in broker \d+ marked offline, remaining directories: ", "3.7", None),
    (r"Handling reassignment of partition", None, "2.3"),
    (r"Successfully updated assignment of partition", "2.4", None),
    (r"addingReplicas=\[", "2.4", None),  # LeaderAndIsrPartitionState (KIP-455), KRaft's records
    (r"starts at Leader Epoch", "0.11", "2.4"),
    # Partition.makeLeader 2.4.1 – 2.5 (server.log; 2.4.0 `starts at Leader Epoch`, a 2.4.1 cluster prints `Kafka
    # version: 2.4.1`); 2.6+ writes `Leader t-p ...` and `Follower t-p ...` in state-change.log (the topic a whole
    # word: `Follower test2-2 starts ...` of 2.6-3.2 is no match at `est2-2`)
    (r"(?<![^\s\]])(?<!Leader )(?<!Follower )\S+-\d+ starts at leader epoch \d+ from offset \d+ with high watermark "
     r"\d+\. Prev", "2.4", "2.5"),
    (r"has an older epoch \(-?\d+\) than the current leader", "2.1", None),
    (r"Removing partition \S+ from the list of reassigned", "1.1", "1.1"),
    (r"Removing partitions Set\(", "2.0", "2.3"),
    (r"addingReplicas \[", "2.6", "3.2"),
    # Partition.updateIsr's ZooKeeper write: 2.7 too, under an inter.broker.protocol.version below 2.7 (no AlterIsr)
    (r"zkVersion updated to", None, "2.7"),
    (r"ISR updated from AlterIsr to", "2.7", "2.7"),
    (r"ISR updated to \S+ and version updated to \[", "2.8", "3.0"),
    (r"ISR updated to \S+ +(?:\(under-min-isr\) +)?and version updated to \d", "3.1", None),
    (r"with topic id ", "3.3", None),
    (r"ISR updated to \S+ (?: |\(under-min-isr\) )and version updated to \d", "3.5", None),
    (r"Previous leader (?:Some|None)", "3.6", None),  # Partition.makeLeader/makeFollower name the previous leader
    (r"lastCaughtUpTimeMs", "3.6", None),
    # a KRaft controller's PartitionRecord (PartitionRegistration.toString): directories (KIP-858) and the ELR from 3.7
    (r"PartitionRegistration\(replicas=\[[\d, ]*\], directories=", "3.7", None),
    # PartitionChangeBuilder.tryElection: an election from the eligible leader replicas (KIP-966) from 3.7 (TRACE up
    # to 4.0); from 4.1 its lines and the unclean one's name the registration before the change
    (r"Setting new leader for topicId \S+, partition \d+ to -?\d+ using ELR", "3.7", None),
    (r"Setting new leader for topicId \S+, partition \d+ to -?\d+ using (?:ELR|an unclean election)\. Previous "
     r"partition: ?PartitionRegistration\(", "4.1", None),
    # ReplicationControlManager.maybeFenceOneStaleBroker names the broker's epoch from 4.0
    (r"Fencing broker \d+ at epoch \d+ because its session has timed out", "4.0", None),
    # 4.2: UnifiedLog.truncateTo writes the below-high-watermark WARN that ReplicaFetcherThread.truncate wrote (KAFKA-19474),
    # and Partition.makeLeader/makeFollower's skipped change names a PartitionRegistration (KAFKA-19447)
    (r"^\[UnifiedLog partition=\S+, dir=[^\]]*\] Truncating \S+-\d+ to offset \d+ below high watermark", "4.2", None),
    (r"^\[ReplicaFetcher replicaId=\d+, leaderId=\d+, fetcherId=\d+\] Truncating \S+ to offset \d+ below high watermark",
     None, "4.1"),
    (r"Skipped the become-\w+ state change for \S+ with topic id \S+, partition registration PartitionRegistration\(",
     "4.2", None),
    (r"Skipped the become-\w+ state change for \S+ with topic id \S+ and partition state ", None, "4.1"),
    # 4.3: ReplicationControlManager follows a replayed PartitionChangeRecord, a reassignment's completion and a refused
    # AlterPartition with the registration's change (apache/kafka#21221). The lines without it bound nothing: the
    # simulator writes them for 4.3 too (docs/logs.md)
    (r"PartitionChangeRecord\(.*\) for topic \S+?\. \(isr: \[", "4.3", None),
    (r"completed the ongoing partition reassignment(?: and triggered a leadership change)?\.? isr: \[", "4.3", None),
    (r"^\[QuorumController id=\d+\] Rejecting AlterPartition request .*\. Proposed ISR was \[", "4.3", None),
    # Partition.appendRecordsToLeader's NotEnoughReplicasException: `[t,p]` up to 0.10.1, the TopicPartition from
    # 0.10.2, the ISR's members from 2.1; the ISR's size and its members apart after 3.8 (not in 3.8.0)
    (r"Number of insync replicas for partition \[", None, "0.10"),
    (r"Number of insync replicas for partition [^\[\s]", "0.10", "2.0"),
    (r"The size of the current ISR (?:Hash)?Set\(", "2.1", None),
    (r"The size of the current ISR : \d", "3.9", None),
)
FALLBACK_VERSION = "0.10"


def _release(text: str) -> tuple[int, int]:
    major, minor = text.split(".")[:2]
    return int(major), int(minor)


def infer_version(seen: list[bool]) -> tuple[str, str | None]:
    """(release, last release) from the forms seen: the earliest release they all allow."""
    lo, hi = FALLBACK_VERSION, None
    for (_, first, last), hit in zip(FORMS, seen, strict=True):
        if hit and first and _release(first) > _release(lo):
            lo = first
        if hit and last and (hi is None or _release(last) < _release(hi)):
            hi = last
    return lo, hi


def release_of(forms: list[bool], printed: Iterable[str]) -> tuple[str, str, str | None]:
    """(release, source, last release): the releases the brokers' `Kafka version` lines name that the forms allow,
    the earliest of them (a rolling upgrade's lines name two; ``last`` the latest), else the forms' inference. A
    line naming a release the forms rule out (a client of another release logging in the same folder) is not
    taken."""
    lo, hi = infer_version(forms)
    named = {v for v in (printed_release(t) for t in printed) if v is not None}
    allowed = sorted((v for v in named if _release(v) >= _release(lo) and (hi is None or _release(v) <= _release(hi))),
                     key=lambda v: KafkaVersion.parse(v).release)
    if allowed:
        return allowed[0], "version line", allowed[-1]
    return lo, "logs", hi
