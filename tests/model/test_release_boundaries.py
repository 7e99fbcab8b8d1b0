"""Every release boundary of docs/semantics.md §1 – §6, pinned on both sides: the last release before it and
the first release with it, as apache/kafka's source reads at the release tags (the log lines of §7 are in
tests/telemetry/test_logformat_boundaries.py).

Each test names the Kafka class and method the boundary comes from and the tag(s) read.
"""

from __future__ import annotations

import numpy as np
import pytest

from replicaflow.errors import ReplicaflowError
from replicaflow.model import election, fetcher, isr, log_dirs, predicates, produce, reassign_tool
from replicaflow.model.metrics import BY_SHORT, PARTITION_GAUGE_SINCE, available
from replicaflow.model.version import KafkaVersion

V = KafkaVersion.parse


# ---------------------------------------------------------------------------------------------- switches
@pytest.mark.parametrize(("switch", "before", "first", "old", "new"), [
    # §1 ISR: KIP-16 (0.9), KAFKA-4485 (0.10.2), KAFKA-7152 (2.1), KAFKA-7128 (2.0.1), 3.3, 2.7 (KIP-497)
    ("lag_rule", "0.8.2", "0.9", "messages", "time"),
    ("kafka_4485", "0.10.1", "0.10.2", False, True),
    ("isr_check_period_divisor", "0.10.1", "0.10.2", 1, 2),
    ("equal_leo_in_sync", "2.0", "2.1", False, True),
    ("expansion_needs_epoch_start", "2.0", "2.0.1", False, True),
    ("fetch_leader_leo_is_max", "3.2.3", "3.3", False, True),
    ("epoch_bump_fetch_time_isr_only", "3.2.3", "3.3", False, True),
    ("alter_partition", "2.6", "2.7", False, True),
    ("default_replica_lag_time_max_ms", "2.4", "2.5", 10_000, 30_000),
    # §2 predicates: KIP-352 (2.5), the effective min ISR and the frozen HW (3.7)
    ("urp_semantics", "2.4", "2.5", "legacy", "kip352"),
    ("min_isr_capped", "3.6", "3.7", False, True),
    ("hw_frozen_under_min_isr", "3.6", "3.7", False, True),
    # §4 fetchers: KIP-74 (0.10.1), KIP-320 (2.1), KIP-112 (1.0) and KIP-461 (2.3)
    ("fetch_response_capped", "0.10.0.1", "0.10.1", False, True),
    ("leader_epoch_fencing", "2.0.1", "2.1", False, True),
    ("fetcher_failure_isolated", "2.2", "2.3", False, True),
    ("storage_error_halts_broker", "0.11", "1.0", True, False),
    ("storage_error_retried", "0.11", "1.0", False, True),
    ("storage_error_retried", "2.2", "2.3", True, False),
    # §5.1 KIP-73 throttles (0.10.1), the reassignment tool (2.6), the quota's sampled rate (3.8)
    ("replication_throttles", "0.10.0.1", "0.10.1", False, True),
    ("quota_keeps_overlapping_window", "3.7", "3.8", False, True),
    ("verify_waits_for_every_reassignment", "2.5", "2.6", False, True),
    ("execute_adds_to_ongoing_reassignments", "2.5", "2.6", False, True),
    ("cancel_clears_throttles", "2.5", "2.6", False, True),
    # §6 the controller
    ("default_zookeeper_session_timeout_ms", "2.4", "2.5", 6_000, 18_000),
    ("kraft_production_ready", "3.2", "3.3", False, True),
    ("kraft_only", "3.9", "4.0", False, True),
    ("kraft_keeps_epoch_on_isr_shrink", "3.5", "3.6", False, True),
    ("kraft_reads_unclean_config", "3.8", "3.9", False, True),
    ("elr_supported", "3.9", "4.0", False, True),
    ("default_eligible_leader_replicas", "4.0", "4.1", False, True),
    ("default_unclean_leader_election", "0.10.2", "0.11", True, False),
    ("unclean_config_triggers_election", "2.0", "2.1", False, True),
    ("unclean_election_tool", "2.3", "2.4", False, True),
])
def test_every_version_switch_on_both_sides(switch, before, first, old, new):
    """The KafkaVersion switch of each boundary, read from Kafka's source at the tags:
    KafkaConfig (0.8.2.0 `replica.lag.max.messages` 4000, gone at 0.9.0.0; ReplicaLagTimeMaxMs 10000L at 2.4.0,
    30000L at 2.5.0; ZkSessionTimeoutMs 6000 at 2.4.0, 18000 at 2.5.0; UncleanLeaderElectionEnable true at
    0.10.2.0, false at 0.11.0.0); ReplicaManager.startup `isr-expiration` period replicaLagTimeMaxMs at 0.10.1.0,
    replicaLagTimeMaxMs / 2 at 0.10.2.0; Replica.updateLogReadResult (isReadFromLogEnd at 0.10.1.0,
    lastFetchLeaderLogEndOffset at 0.10.2.0); Partition.getOutOfSyncReplicas (LEO != leader LEO from 2.1.0);
    Partition.maybeExpandIsr (leaderEpochStartOffsetOpt from 2.0.1, absent at 2.0.0); Replica.updateFetchState
    (math.max(leaderEndOffset, lastFetchLeaderLogEndOffset) at 3.3.0, plain assignment at 3.2.3);
    Replica.resetReplicaState (3.3.0: lastFetchTimeMs now if in sync, else 0) vs resetLastCaughtUpTime (3.2.3: now
    for every follower); KafkaConfig replica.fetch.response.max.bytes and the throttled rate/replicas configs
    (DynamicConfig, 0.10.1.0, absent at 0.10.0.1); Errors.FENCED_LEADER_EPOCH (2.1.0, absent at 2.0.1);
    SampledStat.purgeObsoleteSamples by lastEventMs with samples + 1 slots (3.8.0, by lastWindowMs at 3.7.0);
    Partition.isUnderReplicated (assignmentState.replicationFactor at 2.5.0); Partition.effectiveMinIsr and
    maybeIncrementLeaderHW's `if (isUnderMinIsr) return false` (3.7.0, absent at 3.6.0); AbstractFetcherThread
    (`case e: KafkaStorageException` retried at 1.0.0-2.2.0, markPartitionFailed at 2.3.0);
    ReassignPartitionsCommand (removeThrottle at 2.5.0, verifyAssignment `!partsOngoing` and cancelAssignment at
    2.6.0); MetadataVersion.isLeaderEpochBumpRequiredOnIsrShrink (!IBP_3_6_IV0 at 3.6.0, absent at 3.5.0);
    KafkaController.processTopicUncleanLeaderElectionEnable (2.1.0, absent at 2.0.0). KRaft 3.3 (KIP-833),
    ZooKeeper removed in 4.0 and ELR (available 4.0, default on for new clusters 4.1): Kafka's
    operations/eligible-leader-replicas docs for 4.0 and 4.1 (the mirror has no 4.x tag)."""
    assert getattr(V(before), switch) == old
    assert getattr(V(first), switch) == new


# Point releases (probe 8): the bug-fix releases of the line before each boundary, read at their tags (or, where the
# mirror has no tag, at the head of the line's branch, named below), keep the old value: no switch's behaviour was
# backported to an earlier line. KAFKA-7128 is the one switch that landed in a bug-fix release (2.0.1, above); its
# commit on the 1.1 branch (74d5c916542) came after 1.1.1, the line's last release (the branch reads 1.1.2-SNAPSHOT).
POINT_RELEASES_WITHOUT = [
    ("lag_rule", "0.8.2.2", "messages"),                 # KafkaConfig replica.lag.max.messages at 0.8.2.2
    ("kafka_4485", "0.10.1.1", False),                   # ReplicaManager.startup period replicaLagTimeMaxMs, 0.10.1.1
    ("default_unclean_leader_election", "0.10.2.2", True),   # KafkaConfig UncleanLeaderElectionEnable true, 0.10.2.2
    ("storage_error_halts_broker", "0.11.0.3", True),    # AbstractFetcherThread: no KafkaStorageException, 0.11.0 branch
    ("expansion_needs_epoch_start", "1.1.1", False),     # Partition.maybeExpandIsr: no leaderEpochStartOffsetOpt, 1.1.1
    ("equal_leo_in_sync", "2.0.1", False),               # Partition.getOutOfSyncReplicas: KAFKA-7152 is 2.1.0 only
    ("unclean_config_triggers_election", "2.0.1", False),    # no processTopicUncleanLeaderElectionEnable at 2.0.1
    ("fetcher_failure_isolated", "2.2.2", False),        # AbstractFetcherThread: no markPartitionFailed at 2.2.2
    ("storage_error_retried", "2.2.2", True),            # `case e: KafkaStorageException` retried at 2.2.2
    ("default_replica_lag_time_max_ms", "2.4.1", 10_000),    # KafkaConfig ReplicaLagTimeMaxMs 10000L at 2.4.1
    ("default_zookeeper_session_timeout_ms", "2.4.1", 6_000),  # KafkaConfig ZkSessionTimeoutMs 6000 at 2.4.1
    ("urp_semantics", "2.4.1", "legacy"),                # Partition.isUnderReplicated `< allReplicaIds.size`, 2.4.1
    ("verify_waits_for_every_reassignment", "2.5.1", False),  # ReassignPartitionsCommand: no partsOngoing, 2.5.1
    ("cancel_clears_throttles", "2.5.1", False),         # ReassignPartitionsCommand: no cancelAssignment at 2.5.1
    ("alter_partition", "2.6.3", False),                 # Partition: no AlterIsr at 2.6.3
    ("fetch_leader_leo_is_max", "3.2.3", False),         # Replica.updateFetchState plain assignment, 3.2.3 and 3.2 head
    ("kraft_keeps_epoch_on_isr_shrink", "3.5.2", False),
    ("kraft_reads_unclean_config", "3.8.1", False),     # uncleanLeaderElectionEnabledForTopic `return false`, 3.8 head  # no isLeaderEpochBumpRequiredOnIsrShrink at 3.5.2 (KAFKA-15021)
    ("min_isr_capped", "3.6.2", False),                  # Partition: no effectiveMinIsr at 3.6.2 (KAFKA-15583, 3.7.0)
    ("hw_frozen_under_min_isr", "3.6.2", False),         # maybeIncrementLeaderHW without the under-min-ISR return, 3.6.2
    ("quota_keeps_overlapping_window", "3.7.2", False),  # SampledStat.purgeObsoleteSamples by lastWindowMs: 3.7.1, and
                                                         # the 3.7 branch head (3.7.2-SNAPSHOT); #15889 is 3.8.0
    ("default_eligible_leader_replicas", "4.0.1", False),  # Confluent v8.0.7 (4.0.x): ELRV_1 bootstraps at IBP_4_1_IV0,
                                                           # MetadataVersion.LATEST_PRODUCTION IBP_4_0_IV3
]


@pytest.mark.parametrize(("switch", "release", "old"), POINT_RELEASES_WITHOUT)
def test_no_backport_to_the_earlier_lines_bug_fix_releases(switch, release, old):
    """The last bug-fix release of the line before each boundary has the old behaviour (the class and the tag read
    are on each row), so a switch stays a lower bound on the release and needs no per-line exception."""
    assert getattr(V(release), switch) == old


# ---------------------------------------------------------------------------------------------- §1 rules
@pytest.mark.parametrize(("version", "out"), [("2.0", True), ("2.1", False)])
def test_out_of_sync_equal_leo_exemption(version, out):
    """Partition.getOutOfSyncReplicas: 2.0.0 filters on `time.milliseconds - r.lastCaughtUpTimeMs > maxLagMs` only;
    2.1.0 adds `r.logEndOffset.messageOffset != leaderReplica.logEndOffset.messageOffset &&` (A4 at lag 100)."""
    got = isr.is_out_of_sync(20, 20, 0, 150, 100, V(version).equal_leo_in_sync)
    assert bool(got) is out
    # a LEO that differs leaves on both sides; exactly lag is still in sync on both
    assert bool(isr.is_out_of_sync(19, 20, 0, 150, 100, V(version).equal_leo_in_sync))
    assert not bool(isr.is_out_of_sync(19, 20, 50, 150, 100, V(version).equal_leo_in_sync))


@pytest.mark.parametrize(("version", "joins"), [("2.0", True), ("2.0.0", True), ("2.0.1", False), ("2.1", False)])
def test_expansion_epoch_start_offset(version, joins):
    """Partition.maybeExpandIsr: 2.0.0 `replica.logEndOffset.offsetDiff(leaderHW) >= 0`; 2.0.1 and 2.1.0 also
    `leaderEpochStartOffsetOpt.exists(fetchOffset >= _)` (KAFKA-7128, commit 7a352117c20 on the 2.0 branch, first
    tagged 2.0.1). Follower at HW 100, epoch starts at 105."""
    got = isr.expansion_eligible(100, 100, 105, True, V(version).expansion_needs_epoch_start)
    assert bool(got) is joins
    assert bool(isr.expansion_eligible(105, 100, 105, True, V(version).expansion_needs_epoch_start))


@pytest.mark.parametrize(("version", "runs"), [("0.10.1", [0, 30_000]), ("0.10.2", [0, 15_000, 30_000])])
def test_isr_check_period(version, runs):
    """ReplicaManager.startup: `scheduler.schedule("isr-expiration", maybeShrinkIsr, period =
    config.replicaLagTimeMaxMs, ...)` at 0.10.1.0 (and 0.8.2.0, 0.9.0.0); `replicaLagTimeMaxMs / 2` at 0.10.2.0."""
    now = np.arange(0, 40_001, 100)
    due = now[isr.isr_check_due(now, 0, 30_000, 100, V(version).isr_check_period_divisor)]
    assert due.tolist() == runs


@pytest.mark.parametrize(("version", "kept"), [("3.2", False), ("3.3", True)])
def test_fetch_leader_leo_max(version, kept):
    """Replica.updateFetchState: `lastFetchLeaderLogEndOffset = leaderEndOffset` at 3.2.0;
    `math.max(leaderEndOffset, currentReplicaState.lastFetchLeaderLogEndOffset)` at 3.3.0."""
    _, fll, _, _ = isr.update_fetch_state(10, 15, 100, 20, 50, 0, V(version).fetch_leader_leo_is_max)
    assert int(fll) == (20 if kept else 15)


@pytest.mark.parametrize(("version", "fetch_time", "caught_up"), [("3.2", 500, 500), ("3.3", 0, 0)])
def test_epoch_bump_restarts_the_fetch_time_of_followers_outside_the_isr_until_3_2(version, fetch_time, caught_up):
    """Partition.makeLeader on a new leader epoch of the same leader: at 3.2.3 `replica.resetLastCaughtUpTime(
    leaderEpochStartOffset, curTimeMs, lastCaughtUpTimeMs)` for every remote replica sets lastFetchTimeMs = now; at
    3.3.0 Replica.resetReplicaState (not isNewLeader) sets `lastFetchTimeMs = if (isFollowerInSync) currentTimeMs
    else 0L` (commit a5f7c82a867). Bump at 500 with leader LEO 42; the follower outside the ISR (LEO 30) then fetches
    42 while the leader is at 50: caught up as of the bump on 3.2 (Replica.updateFetchState's second case), never
    on 3.3."""
    v = V(version)
    leo, fll, ft, cu = isr.reset_on_new_leader_epoch(500, np.array([True, False]), np.array([True, True]), 42,
                                                     np.array([40, 30]), fetch_time_isr_only=v.epoch_bump_fetch_time_isr_only)
    assert list(leo) == [40, 30] and list(fll) == [42, 42] and list(cu) == [500, 0]
    assert list(ft) == [500, fetch_time]
    _, _, _, after = isr.update_fetch_state(42, 50, 900, fll[1:], ft[1:], cu[1:], v.fetch_leader_leo_is_max)
    assert after.tolist() == [caught_up]


@pytest.mark.parametrize(("version", "caught_up"), [("0.10.1", 0), ("0.10.2", 1000)])
def test_caught_up_as_of_the_previous_fetch(version, caught_up):
    """Replica.updateLogReadResult at 0.10.1.0 (`if (logReadResult.isReadFromLogEnd) set(time.milliseconds)`) and
    0.10.2.0 (`else if (fetchOffset >= lastFetchLeaderLogEndOffset) max(_lastCaughtUpTimeMs, lastFetchTimeMs)`):
    A1's second fetch (offset 10, leader LEO 15, previous fetch at 1000 saw LEO 10)."""
    got = isr.last_caught_up_after_fetch(np.array([10]), 15, 2000, 10, 1000, np.array([0]), True,
                                         kafka_4485=V(version).kafka_4485)
    assert got.tolist() == [caught_up]


@pytest.mark.parametrize(("version", "stuck_only"), [("0.8.2", False), ("0.9", True)])
def test_message_count_rule_only_before_kip16(version, stuck_only):
    """Partition.getOutOfSyncReplicas at 0.8.2.0: stuck (`time.milliseconds - r.logEndOffsetUpdateTimeMs >
    keepInSyncTimeMs`) ++ slow (`r.logEndOffset.messageOffset >= 0 && leaderLEO - r.LEO > keepInSyncMessages`);
    0.9.0.0 keeps only the lastCaughtUpTimeMs test (KIP-16). A follower 4001 messages behind that fetched 1 s ago."""
    v = V(version)
    if v.lag_rule == "messages":
        out = isr.is_out_of_sync_legacy(1000, 5001, 9000, 10_000, 10_000, 4000)
    else:
        out = isr.is_out_of_sync(1000, 5001, 9000, 10_000, 10_000, v.equal_leo_in_sync)
    assert bool(out) is not stuck_only


# ---------------------------------------------------------------------------------------------- §2 predicates
@pytest.mark.parametrize(("version", "urp", "replicas_count"), [("2.4", True, 4), ("2.5", False, 3)])
def test_urp_and_replicas_count_with_an_adding_replica(version, urp, replicas_count):
    """Partition.isUnderReplicated: `inSyncReplicaIds.size < allReplicaIds.size` at 2.4.0;
    `(assignmentState.replicationFactor - inSyncReplicaIds.size) > 0` at 2.5.0, where
    OngoingReassignmentState.replicationFactor = replicas.size - addingReplicas.size. The ReplicasCount gauge moves
    with it (`allReplicaIds.size` at 2.4.0, `assignmentState.replicationFactor` at 2.5.0). A8: [1,2,3,4], adding [4],
    ISR [1,2,3]."""
    assert bool(predicates.under_replicated(V(version), 4, 1, 3)) is urp
    n_adding = 1 if V(version).urp_semantics == "kip352" else 0
    assert 4 - n_adding == replicas_count


@pytest.mark.parametrize(("version", "under", "at"), [("3.6", True, False), ("3.7", False, True)])
def test_min_isr_cap(version, under, at):
    """Partition.isUnderMinIsr / isAtMinIsr: `isr.size < config.minInSyncReplicas` at 3.6.0; `< effectiveMinIsr`
    with `effectiveMinIsr = minInSyncReplicas.min(remoteReplicasMap.size + 1)` at 3.7.0. A9: replicas {L,F},
    ISR {L,F}, min ISR 3."""
    capped = V(version).min_isr_capped
    assert bool(predicates.under_min_isr(2, 3, 2, capped)) is under
    assert bool(predicates.at_min_isr(2, 3, 2, capped)) is at


def test_min_isr_cap_counts_adding_and_removing_replicas():
    """Partition.effectiveMinIsr at 3.7.0 caps with `remoteReplicasMap.size + 1`: every assigned replica, adding and
    removing ones included (the full KIP-455 assignment), not the replication factor. Replicas [1,2,3,4] (adding
    [4]), min ISR 4, ISR [1,2,3]: the cap is 4, so the partition is under min ISR (and acks=all is rejected); a cap at
    the replication factor (3) would say at min ISR."""
    capped = V("3.7").min_isr_capped
    assert bool(predicates.under_min_isr(3, 4, 4, capped))
    assert not bool(predicates.at_min_isr(3, 4, 4, capped))
    assert bool(produce.rejects_acks_all(True, 3, 4, 4, capped))


@pytest.mark.parametrize(("version", "rejected"), [("3.6", True), ("3.7", False)])
def test_acks_all_rejection_uses_the_effective_min_isr(version, rejected):
    """Partition.appendRecordsToLeader: `val minIsr = leaderLog.config.minInSyncReplicas` at 3.6.0,
    `val minIsr = effectiveMinIsr(leaderLog)` at 3.7.0; `if (inSyncSize < minIsr && requiredAcks == -1)` throws
    NotEnoughReplicasException. RF 2, ISR 2, min.insync.replicas 3."""
    assert bool(produce.rejects_acks_all(True, 2, 3, 2, V(version).min_isr_capped)) is rejected
    assert not bool(produce.rejects_acks_all(False, 2, 3, 2, V(version).min_isr_capped))


@pytest.mark.parametrize(("version", "frozen"), [("3.6", False), ("3.7", True)])
def test_hw_does_not_advance_under_min_isr_from_3_7(version, frozen):
    """Partition.maybeIncrementLeaderHW at 3.7.0 starts with `if (isUnderMinIsr) { ...; return false }`; 3.6.0 has no
    such test. ISR {L} of replicas {L,F}, min ISR 2, leader LEO 100, HW 80."""
    freeze = np.array([V(version).hw_frozen_under_min_isr and bool(predicates.under_min_isr(1, 2, 2, True))])
    hw = isr.high_watermark(np.array([80]), np.array([[100, 50]]), np.array([[True, False]]), freeze)
    assert hw.tolist() == [80 if frozen else 100]


@pytest.mark.parametrize(("version", "default"), [("2.8", "1"), ("3.0", "all")])
def test_default_acks(version, default):
    """ProducerConfig ACKS_CONFIG default: "1" at 2.8.0, "all" at 3.0.0 (KIP-679)."""
    assert produce.default_acks(V(version)) == default


# ---------------------------------------------------------------------------------------------- §3 metrics
# (metric, last release without it, first release with it), read from the newGauge/newMeter calls at the tags.
METRIC_BOUNDARIES = [
    ("UnderMinIsr", "0.11", "1.0"),                 # Partition newGauge("UnderMinIsr"), 1.0.0 (KIP-164)
    ("UnderMinIsrPartitionCount", "0.11", "1.0"),   # ReplicaManager, 1.0.0
    ("OfflineReplicaCount", "0.11", "1.0"),         # ReplicaManager, 1.0.0 (KIP-112)
    ("ErrorsPerSec", "0.11", "1.0"),                # RequestChannel.ErrorsPerSec, 1.0.0 (KIP-188)
    ("AtMinIsr", "2.2", "2.3"),                     # Partition newGauge("AtMinIsr"), 2.3.0 (KIP-427)
    ("AtMinIsrPartitionCount", "2.2", "2.3"),       # ReplicaManager, 2.3.0
    ("FailedPartitionsCount", "2.2", "2.3"),        # AbstractFetcherManager, 2.3.0 (KIP-461)
    ("ReassigningPartitions", "2.4", "2.5"),        # ReplicaManager newGauge("ReassigningPartitions"), 2.5.0
    ("ReassignmentBytesInPerSec", "2.4", "2.5"),    # BrokerTopicStats, 2.5.0 (KIP-352)
    ("ReassignmentBytesOutPerSec", "2.4", "2.5"),   # BrokerTopicStats, 2.5.0 (KIP-352)
]

# Present at 0.8.2.0 already (ReplicaManager LeaderCount/PartitionCount/UnderReplicatedPartitions/IsrShrinksPerSec/
# IsrExpandsPerSec, AbstractFetcherManager MaxLag, BrokerTopicMetrics FailedProduceRequestsPerSec, KafkaController
# OfflinePartitionsCount and UncleanLeaderElectionsPerSec, Partition newGauge("UnderReplicated")).
AT_0_8_2 = ["UnderReplicatedPartitions", "LeaderCount", "PartitionCount", "IsrShrinksPerSec", "IsrExpandsPerSec",
            "MaxLag", "FailedProduceRequestsPerSec", "OfflinePartitionsCount", "UncleanLeaderElectionsPerSec",
            "UnderReplicated"]


@pytest.mark.parametrize(("short", "before", "first"), METRIC_BOUNDARIES)
def test_metric_first_release(short, before, first):
    """``metrics.available`` on both sides of the release whose source first registers the metric (see the comment
    of each row: the class and the tag where its newGauge/newMeter call first appears)."""
    assert not available(short, V(before))
    assert available(short, V(first))


@pytest.mark.parametrize("short", AT_0_8_2)
def test_metrics_of_0_8_2(short):
    """Registered at 0.8.2.0 (git grep of the names at the tag)."""
    assert available(short, V("0.8.2"))


@pytest.mark.parametrize(("controller", "before", "first"), [(election.KRAFT, "3.8", "3.9")])
def test_kraft_unclean_meter(controller, before, first):
    """ControllerMetadataMetrics registers ControllerStats UncleanLeaderElectionsPerSec at 3.9.0 (3.9.0-rc3 in the
    mirror); at 3.8.0 only the ZooKeeper KafkaController has it."""
    assert not available("UncleanLeaderElectionsPerSec", V(before), controller)
    assert available("UncleanLeaderElectionsPerSec", V(first), controller)
    assert available("UncleanLeaderElectionsPerSec", V(before), election.ZOOKEEPER)


# Metrics whose first release in replicaflow is older than Kafka's: the name is absent at the last tag below.
LATE_METRICS = [
    # Partition newGauge("InSyncReplicasCount") / newGauge("ReplicasCount"): absent at 0.10.1.0, present at 0.10.2.0
    ("InSyncReplicasCount", "0.10.1", "0.10.2"),
    ("ReplicasCount", "0.10.1", "0.10.2"),
    # ReplicaManager newMeter("FailedIsrUpdatesPerSec"): absent at 0.10.2.0, present at 0.11.0.0
    ("FailedIsrUpdatesPerSec", "0.10.2", "0.11"),
    # BrokerTopicStats ReplicationBytesInPerSec / ReplicationBytesOutPerSec (KIP-153): absent at 0.10.2.0, 0.11.0.0+
    ("ReplicationBytesInPerSec", "0.10.2", "0.11"),
    ("ReplicationBytesOutPerSec", "0.10.2", "0.11"),
]


@pytest.mark.parametrize(("short", "before", "first"), LATE_METRICS)
def test_late_metrics_exist_from_their_release(short, before, first):
    """The release that first registers the metric has it (the 'with' side holds today)."""
    assert available(short, V(first))


@pytest.mark.parametrize(("short", "before", "first"), LATE_METRICS)
def test_late_metrics_are_absent_before_their_release(short, before, first):
    """git grep at the 'before' tag finds no registration of the name in core/src/main/scala."""
    assert not available(short, V(before))


def test_the_metric_tables_name_each_release_once():
    """Every metric the boundary tables above pin is one replicaflow knows (a typo here would pin nothing)."""
    names = {m for m, _, _ in METRIC_BOUNDARIES + LATE_METRICS} | set(AT_0_8_2)
    assert names <= set(BY_SHORT) | set(PARTITION_GAUGE_SINCE)


# ---------------------------------------------------------------------------------------------- §4 fetchers
@pytest.mark.parametrize(("error", "at_0_11", "at_1_0", "at_2_2", "at_2_3"), [
    ("storage", "halted", "retried", "retried", "failed"),
    ("unexpected", "thread_died", "thread_died", "thread_died", "failed"),
    ("corrupt_records", "retried", "retried", "retried", "retried"),
    ("not_leader", "retried", "retried", "retried", "retried"),
    ("unknown_leader_epoch", "retried", "retried", "retried", "retried"),
    ("offset_out_of_range", "retried", "retried", "retried", "retried"),
    ("request_failure", "retried", "retried", "retried", "retried"),
])
def test_fetch_error_outcomes_across_1_0_and_2_3(error, at_0_11, at_1_0, at_2_2, at_2_3):
    """AbstractFetcherThread.processFetchRequest: 0.11.0.0 catches CorruptRecordException (retried) and rethrows any
    other Throwable as KafkaException("Error processing data for partition ...") (thread dies), but
    ReplicaFetcherThread.processPartitionData has already caught a KafkaStorageException and halted (0.9 – 0.11,
    `Exit.halt(1)`); 1.0.0 adds
    `case e: KafkaStorageException => partitionsWithError += topicPartition` (retried, through 2.2.0); 2.3.0
    (KIP-461) handles KafkaStorageException and other Throwables with markPartitionFailed. Partition errors in the
    response (OFFSET_OUT_OF_RANGE, UNKNOWN_LEADER_EPOCH, NOT_LEADER_FOR_PARTITION, others) go to partitionsWithError
    (backoff) in every release."""
    got = [fetcher.fetch_error_outcome(V(v), error) for v in ("0.11", "1.0", "2.2", "2.3")]
    assert got == [at_0_11, at_1_0, at_2_2, at_2_3]


def test_fenced_leader_epoch_marks_failed_from_2_3():
    """AbstractFetcherThread.onPartitionFenced at 2.3.0: `markPartitionFailed(tp)` (3.2.0: only when the request's
    epoch equals the current one)."""
    assert fetcher.fetch_error_outcome(V("2.3"), "fenced_leader_epoch") == "failed"


@pytest.mark.parametrize("version", ["2.1", "2.2"])
def test_fenced_leader_epoch_before_2_3_does_not_kill_the_thread(version):
    """AbstractFetcherThread at 2.1.0 (line 314) / 2.2.0 (lines 247, 353): `case Errors.FENCED_LEADER_EPOCH =>
    onPartitionFenced(tp)`, which removes the partition from the thread's partitionStates and logs "Will await the
    new LeaderAndIsr state before resuming fetching" -- no exception reaches doWork."""
    assert fetcher.fetch_error_outcome(V(version), "fenced_leader_epoch") == "fenced"


def test_no_fenced_leader_epoch_before_2_1():
    """Errors.FENCED_LEADER_EPOCH first appears at 2.1.0 (KIP-320): a scenario cannot give one to a 2.0 fetcher."""
    assert fetcher.fetch_error_problem(V("2.0"), "fenced_leader_epoch") is not None
    assert fetcher.fetch_error_problem(V("2.1"), "fenced_leader_epoch") is None
    with pytest.raises(ReplicaflowError, match="KIP-320"):
        fetcher.fetch_error_outcome(V("2.0"), "fenced_leader_epoch")


@pytest.mark.parametrize(("version", "offline", "halts_with_dirs_left"), [("0.11", False, True), ("1.0", True, False)])
def test_storage_errors_and_log_dirs_across_1_0(version, offline, halts_with_dirs_left):
    """KIP-112 at 1.0.0: Log.maybeHandleIOException reports to LogDirFailureChannel and LogManager.handleLogDirFailure
    halts only when no live dir is left ("Shutdown broker because all log dirs in ... have failed"); 0.11.0.0
    ReplicaManager.appendToLocalLog halts on any KafkaStorageException ("Halting due to unrecoverable I/O error")."""
    assert fetcher.takes_log_dir_offline(V(version), "storage") is offline
    assert log_dirs.failure_halts_broker(V(version), 1) is halts_with_dirs_left
    assert log_dirs.failure_halts_broker(V(version), 0)


@pytest.mark.parametrize(("version", "refused"), [("3.6", True), ("3.7", False)])
def test_kraft_jbod_from_3_7(version, refused):
    """KIP-858: a KRaft broker with several log.dirs is supported from 3.7.0 (ReplicaManager.handleLogDirFailure at
    3.6.0: "Unable to propagate log dir failure via Zookeeper in KRaft mode"); ZooKeeper brokers had JBOD from 1.0."""
    assert (log_dirs.jbod_problem(V(version), election.KRAFT, 2) is not None) is refused
    assert log_dirs.jbod_problem(V(version), election.ZOOKEEPER, 2) is None


# ---------------------------------------------------------------------------------------------- §5.1 tool
@pytest.mark.parametrize(("version", "plan_done_others_moving", "brokers"), [
    ("2.5", True, {1, 2, 3}), ("2.6", False, {1, 2, 3, 5})])
def test_verify_across_2_6(version, plan_done_others_moving, brokers):
    """ReassignPartitionsCommand.removeThrottle at 2.5.0 (all of the plan's statuses ReassignmentCompleted,
    zkClient.getAllBrokersInCluster) vs verifyAssignment at 2.6.0 (`if (!partsOngoing && ...) clearAllThrottles`,
    partsOngoing = `currentReassignments.nonEmpty` from listPartitionReassignments, activeBrokers ++ targets)."""
    assert reassign_tool.verify_clears_throttles(V(version), True, True) is plan_done_others_moving
    assert reassign_tool.throttle_cleared_brokers(V(version), [1, 2, 3], {("t", 0): [3, 5]}) == brokers


# ---------------------------------------------------------------------------------------------- §6 controller
@pytest.mark.parametrize(("version", "controller", "ok"), [
    ("3.2", election.KRAFT, False), ("3.3", election.KRAFT, True),
    ("3.9", election.ZOOKEEPER, True), ("4.0", election.ZOOKEEPER, False)])
def test_controller_kinds_per_release(version, controller, ok):
    """KRaft production-ready from 3.3 (KIP-833); ZooKeeper mode removed in 4.0."""
    assert (election.controller_problem(V(version), controller) is None) is ok


@pytest.mark.parametrize(("version", "default"), [("3.9", election.ZOOKEEPER), ("4.0", election.KRAFT)])
def test_default_controller(version, default):
    assert election.default_controller(V(version)) == default


@pytest.mark.parametrize(("version", "bumps"), [("3.5", True), ("3.6", False)])
def test_kraft_leader_isr_shrink_epoch(version, bumps):
    """PartitionChangeBuilder.triggerLeaderEpochBumpIfNeeded at 3.5.0: `!Replicas.contains(targetIsr, partition.isr)
    || ...` sets the leader (a new epoch) for any ISR shrink, the leader's AlterPartition included; 3.6.0 only when
    `metadataVersion.isLeaderEpochBumpRequiredOnIsrShrink()` (!IBP_3_6_IV0). Replicas removed bump on both."""
    v = V(version)
    assert election.bumps_leader_epoch(v, election.KRAFT, election.LEADER_ISR_SHRINK) is bumps
    assert election.bumps_leader_epoch(v, election.KRAFT, election.ISR_SHRINK) is bumps
    assert election.bumps_leader_epoch(v, election.KRAFT, election.REPLICAS_REMOVED)
    assert not election.bumps_leader_epoch(v, election.KRAFT, election.REASSIGNMENT_START)


@pytest.mark.parametrize(("version", "ms"), [("2.4", 6_000), ("2.5", 18_000)])
def test_zookeeper_session_timeout(version, ms):
    """KafkaConfig.ZkSessionTimeoutMs: 6000 at 2.4.0, 18000 at 2.5.0 (KIP-537); KRaft broker.session.timeout.ms 9000."""
    assert election.session_timeout_ms(V(version), election.ZOOKEEPER) == ms
    assert election.session_timeout_ms(V("3.3"), election.KRAFT) == 9_000


@pytest.mark.parametrize(("version", "kraft_reads"), [("3.3", False), ("3.8", False), ("3.9", True)])
def test_kraft_reads_unclean_leader_election_enable_from_3_9(version, kraft_reads):
    """ConfigurationControlManager.uncleanLeaderElectionEnabledForTopic: `return false; // TODO: support configuring
    unclean leader election.` at 3.3.0, 3.6.0, 3.8.0 and the 3.8 branch; the topic's effective config from 3.9
    (KAFKA-12670, 3.9.0-rc3), checked every ``unclean.leader.election.interval.ms`` (300000) by
    QuorumController.maybeScheduleNextElectUncleanLeaders. ZooKeeper's controller reads it in every release."""
    assert election.reads_unclean_config(V(version), election.KRAFT) is kraft_reads
    assert election.reads_unclean_config(V(version), election.ZOOKEEPER)
    assert election.KRAFT_UNCLEAN_CHECK_INTERVAL_MS == 300_000


@pytest.mark.parametrize(("version", "refused"), [("3.9", True), ("4.0", False)])
def test_elr_needs_4_0(version, refused):
    """KIP-966 ELR exists from 4.0 (eligible.leader.replicas.version, off by default in 4.0, on for new clusters
    from 4.1: kafka.apache.org/40 and /41 operations/eligible-leader-replicas)."""
    assert (election.eligible_leader_replicas_problem(V(version), True) is not None) is refused
    assert election.eligible_leader_replicas_problem(V(version), False) is None


@pytest.mark.parametrize(("version", "leos"), [("0.8.2", [-1, -1]), ("0.9", [40, 30])])
def test_an_epoch_bump_forgets_follower_leos_only_before_kip16(version, leos):
    """Partition.makeLeader at 0.8.2.0 runs for every newer leader epoch (ReplicaManager.becomeLeaderOrFollower:
    `partitionLeaderEpoch < ... leaderEpoch`) and sets `r.logEndOffset = LogOffsetMetadata.UnknownOffsetMetadata` for
    every remote replica, which stamps logEndOffsetUpdateTimeMs: a leader that only bumps its epoch forgets the LEOs
    too and restarts every stuck clock. At 0.9.0.0 makeLeader resets the remote replicas only `if (isNewLeader)`."""
    v = V(version)
    kept = None if v.lag_rule == "messages" else (np.array([42, 42]), np.array([400, 0]), np.array([400, 0]))
    leo, _, ft, _ = isr.reset_on_new_leader_epoch(500, np.array([True, False]), np.array([True, True]), 42,
                                                  np.array([40, 30]), legacy=v.lag_rule == "messages", kept=kept)
    assert leo.tolist() == leos
    assert ft.tolist() == ([500, 500] if v.lag_rule == "messages" else [400, 0])


@pytest.mark.parametrize(("version", "starts", "refused"), [
    ("0.10.0", False, False), ("2.5", False, False), ("2.6", True, True)])
def test_execute_during_a_reassignment_across_2_6(version, starts, refused):
    """ReassignPartitionsCommand.executeAssignment: 0.10.1.0 - 2.5.1 `if (zkUtils.pathExists(ReassignPartitionsPath))`
    / `zkClient.reassignPartitionsInProgress()` → "There is an existing assignment running." and maybeLimit only
    (0.8.2.2 - 0.10.0.1: ZkNodeExistsException, "Aborting operation"); 2.6.0 lists the reassignments in progress
    and, without --additional (`if (!additional && currentReassignments.nonEmpty)`), throws
    cannotExecuteBecauseOfExistingMessage before any write; with it, alterPartitionReassignments adds the moves."""
    v = V(version)
    assert reassign_tool.execute_starts_moves(v, True, additional=True) is starts
    assert not reassign_tool.execute_starts_moves(v, True)
    assert reassign_tool.execute_starts_moves(v, False)
    assert reassign_tool.execute_refused(v, True, additional=False) is refused
    assert not reassign_tool.execute_refused(v, True, additional=True)
    assert not reassign_tool.execute_refused(v, False, additional=False)


def test_execute_additional_throttles_the_running_moves_again():
    """ReassignPartitionsCommand.calculateMoveMap at 2.6.0 with Kafka's testMoveMap numbers: foo-0 in progress
    ([1,2,3] less adding 4, removing 3) and proposed [1,2,5], foo-1 in progress only ([4,5,6] → [6,7,8]), bar-0
    proposed [1,2,3] from [2,3,4]: leader lists "0:1,0:2,0:3,1:4,1:5,1:6" and "0:2,0:3,0:4", follower lists
    "0:5,1:7,1:8" and "0:1", brokers 1 – 8 (calculateLeaderThrottles, calculateFollowerThrottles,
    calculateReassigningBrokers). Without the running moves (no --additional, nothing in progress) foo-1 is left out."""
    v = V("2.6")
    running = {("foo", 0): ([1, 2, 3, 4], [4], [3]), ("foo", 1): ([4, 5, 6, 7, 8], [7, 8], [4, 5])}
    current = {("foo", 0): ([1, 2, 3, 4], [4], [3]), ("bar", 0): ([2, 3, 4], [], [])}
    proposed = {("foo", 0): [1, 2, 5], ("bar", 0): [1, 2, 3]}
    assert reassign_tool.execute_throttle_lists(v, current, proposed, running) == {
        "bar": ("0:2,0:3,0:4", "0:1"), "foo": ("0:1,0:2,0:3,1:4,1:5,1:6", "0:5,1:7,1:8")}
    assert reassign_tool.execute_rate_brokers(v, current, proposed, [], running) == [1, 2, 3, 4, 5, 6, 7, 8]
    assert reassign_tool.execute_throttle_lists(v, current, proposed)["foo"] == ("0:1,0:2,0:3", "0:5")
    assert reassign_tool.execute_rate_brokers(v, current, proposed, []) == [1, 2, 3, 4, 5]


@pytest.mark.parametrize(("version", "leader", "brokers"), [
    ("2.5", {"t": ("0:1,0:2,0:3", "0:4"), "u": ("", "")}, [1, 2, 3, 4, 5, 6, 7]),
    ("2.6", {"t": ("0:1,0:2,0:3", "0:4"), "u": ("0:5,0:6", "")}, [1, 2, 3, 4, 5, 6])])
def test_execute_throttle_lists_and_rate_brokers_across_2_6(version, leader, brokers):
    """--execute --throttle: 2.5.1 assignThrottledReplicas lists the pre-move replicas of *moving* partitions only
    (preRebalanceReplicaForMovingPartitions: `(after -- before).nonEmpty`) and maybeLimit sets the rates on every
    replica of the plan's topics (existingAssignment) plus the proposed ones; 2.6.0 calculateLeaderThrottles lists
    every proposed partition's sources and calculateReassigningBrokers is sources ∪ destinations. t-0 [1,2,3] →
    [1,2,4]; u-0 [5,6] → [5] (a removal, not moving); the topics' other replicas: 7 on 2.5."""
    current = {("t", 0): ([1, 2, 3], [], []), ("u", 0): ([5, 6], [], [])}
    proposed = {("t", 0): [1, 2, 4], ("u", 0): [5]}
    assert reassign_tool.execute_throttle_lists(V(version), current, proposed) == leader
    assert reassign_tool.execute_rate_brokers(V(version), current, proposed, [1, 2, 3, 5, 6, 7]) == brokers
