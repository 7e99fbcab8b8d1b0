"""Release inference (ingest/log_version.py) from the forms Kafka changed after 4.1, each checked in Kafka's source
at 4.1.0, 4.2.0 and 4.3.0 (and the 4.2 and 4.3 branches' heads)."""

from __future__ import annotations

import re

from replicaflow.ingest.log_version import FORMS, infer_version, release_of


def _release(*lines: str) -> tuple[str, str | None]:
    return infer_version([any(re.search(p, line) for line in lines) for p, _, _ in FORMS])


_REG = ("PartitionRegistration(replicas=[1, 2], directories=[AAAAAAAAAAAAAAAAAAAAAQ, AAAAAAAAAAAAAAAAAAAAAQ], "
        "isr=[2, 1], removingReplicas=[], addingReplicas=[], elr=[], lastKnownElr=[], leader=2, "
        "leaderRecoveryState=RECOVERED, leaderEpoch=5, partitionEpoch=9)")
_SKIPPED = "[Broker id=1] Skipped the become-follower state change for t-0 with topic id Some(AAAAAAAAAAAAAAAAAAAAAA)"
_RECORD = ("[QuorumController id=1] Replayed partition assignment change PartitionChangeRecord(partitionId=2, "
           "topicId=AAAAAAAAAAAAAAAAAAAAAA, isr=[1, 2, 4], leader=-2, replicas=[1, 2, 4], removingReplicas=[], "
           "addingReplicas=[], leaderRecoveryState=-1) for topic t")
_DONE = "[QuorumController id=1] AlterPartition request from node 1 for t-2 completed the ongoing partition reassignment"
_REFUSED = ("[QuorumController id=1] Rejecting AlterPartition request from node 2 for t-0 because the current partition "
            "epoch is 9, not 8")


def test_4_2_forms_bound_the_release():
    """KAFKA-19474 moved the below-high-watermark WARN from ReplicaFetcherThread.truncate (its logIdent names the
    leader) to UnifiedLog.truncateTo (the log's logIdent) in 4.2.0; KAFKA-19447 made Partition.makeLeader/
    makeFollower's skipped change name a PartitionRegistration (`…, partition registration PartitionRegistration(…)
    and isNew=…`) in 4.2.0, where 3.3-4.1 wrote `… and partition state …`. Neither is in 4.1.x (checked to 4.1's
    last Confluent build)."""
    assert _release("[UnifiedLog partition=t-1, dir=/data/k1] Truncating t-1 to offset 40 below high watermark 45") \
        == ("4.2", None)
    assert _release("[ReplicaFetcher replicaId=1, leaderId=3, fetcherId=0] Truncating t-1 to offset 40 below high "
                    "watermark 45") == ("0.10", "4.1")
    assert _release(f"{_SKIPPED}, partition registration {_REG} and isNew=false since it is already a follower with "
                    "leader epoch 5.") == ("4.2", None)
    assert _release(f"{_SKIPPED} and partition state PartitionState(leader=2) since it is already a follower with "
                    "leader epoch 5.") == ("3.3", "4.1")


def test_4_3_forms_bound_the_release():
    """ReplicationControlManager 4.3.0 (apache/kafka#21221, not on the 4.2 branch) follows its replay of a
    PartitionChangeRecord with `. (isr: [..] -> [..], replicaSet: [..] -> [..], partitionEpoch: E, leaderEpoch: L)`,
    a reassignment's completion by AlterPartition with `. isr: … -> …, leaderEpoch: a -> b`, and each refused
    AlterPartition with `. Proposed ISR was [..] and current ISR is [..]. …`. The lines without bound nothing (the
    simulator writes them for 4.3). A 4.3.0 controller's excerpt with no `Kafka version:` line was read as 3.5."""
    tail = ". (isr: [1, 2, 3] -> [1, 2, 4], replicaSet: [1, 2, 4, 3] -> [1, 2, 4], partitionEpoch: 12, leaderEpoch: 5)"
    change = ". isr: [1, 2, 3] -> [1, 2, 4], replicaSet: [1, 2, 4, 3] -> [1, 2, 4], partitionEpoch: 11 -> 12, " \
             "leaderEpoch: 5 -> 5"
    proposed = (". Proposed ISR was [BrokerState(brokerId=2, brokerEpoch=25)] and current ISR is [2, 1, 3]. Current "
                "replica set is [1, 2, 3]. Current partitionEpoch is 9. Current leaderEpoch is 4.")
    assert _release(_RECORD + tail) == ("4.3", None)
    assert _release(_DONE + change) == ("4.3", None)
    assert _release(_REFUSED + proposed) == ("4.3", None)
    assert _release(_RECORD) == ("3.5", None)
    assert _release(_DONE + ".") == ("3.5", None)
    assert _release(_REFUSED + ".") == ("3.5", None)
    # a 4.3 broker's `Kafka version:` line (Apache's or Confluent's 8.3) within the forms names the release
    forms = [any(re.search(p, line) for line in [_RECORD + tail]) for p, _, _ in FORMS]
    assert release_of(forms, ["4.3.0"]) == ("4.3", "version line", "4.3")
    assert release_of(forms, ["8.3.0-ccs"]) == ("4.3", "version line", "4.3")
    assert release_of(forms, ["4.1.1"]) == ("4.3", "logs", None)  # a client of 4.1 logging beside it
