"""KafkaVersion behaviour switches and the version boundaries named in docs/semantics.md."""

import pytest

from replicaflow.errors import ReplicaflowError
from replicaflow.model.metrics import PARTITION_GAUGES, available, broker_metrics_for
from replicaflow.model.version import (
    _LAST_MINOR,
    _LAST_PRE_1_0,
    RELEASES,
    KafkaVersion,
    printed_release,
    unreleased_patch,
)

V = KafkaVersion.parse


@pytest.mark.parametrize("text", ["0.8.2", "0.9", "0.10.1", "1.0", "2.2", "2.8.1", "3.7", "4.1", 3.7])
def test_parse_accepts_releases(text):
    assert KafkaVersion.parse(text).major in (0, 1, 2, 3, 4)


@pytest.mark.parametrize("text", ["", "three", "0.7", "5.0", "3.x", "3.7.1.2", "３.7", "3.7.99999999999999999999"])
def test_parse_rejects_with_one_sentence(text):
    with pytest.raises(ReplicaflowError, match="kafka.version"):
        KafkaVersion.parse(text)


@pytest.mark.parametrize(("text", "release"), [("0.10.2.1", "0.10.2"), ("0.11.0.3", "0.11"), ("0.8.2.2", "0.8.2"),
                                             ("0.9.0.1", "0.9"), ("0.10.2.2", "0.10.2")])
def test_pre_1_0_releases_have_four_parts(text, release):
    """Kafka numbered its releases 0.10.2.1 and 0.11.0.3 before 1.0: the fourth part is a bug-fix release."""
    assert str(KafkaVersion.parse(text)) == release


@pytest.mark.parametrize(("text", "last"), [("0.8.3", "0.8.2"), ("0.9.1", "0.9.0"), ("0.10.3", "0.10.2"),
                                            ("0.10.3.0", "0.10.2"), ("0.11.1", "0.11.0")])
def test_pre_1_0_releases_that_never_existed_are_refused(text, last):
    """Before 1.0 the third part named the release line's feature release (apache/kafka tags: 0.8.2.2, 0.9.0.1,
    0.10.2.2 and 0.11.0.3 end their lines), as the second does from 1.0: 0.10.3 is refused like 2.9."""
    with pytest.raises(ReplicaflowError, match=f"kafka.version: Kafka .* ended with {last}, found '{text}'"):
        KafkaVersion.parse(text)


@pytest.mark.parametrize(("text", "release", "shown"), [
    ("4.0.0", (4, 0, 0), "4.0"), ("3.9", (3, 9, 0), "3.9"), ("3.9.0", (3, 9, 0), "3.9"), ("4.1", (4, 1, 0), "4.1"),
    ("2.4.1", (2, 4, 1), "2.4.1"), ("2.0.1", (2, 0, 1), "2.0.1"), (" 3.7 ", (3, 7, 0), "3.7")])
def test_patch_releases_and_spellings(text, release, shown):
    """A patch release is kept (2.0.1 has KAFKA-7128, 2.0.0 does not); a .0 patch is the release itself."""
    v = KafkaVersion.parse(text)
    assert v.release == release and str(v) == shown


def test_a_patch_release_takes_the_behaviour_of_its_line():
    """2.4.1 is still before every 2.5 switch (KIP-352 URP, the 30 s lag, the 18 s ZooKeeper session)."""
    v = KafkaVersion.parse("2.4.1")
    assert v.urp_semantics == "legacy" and v.default_replica_lag_time_max_ms == 10_000
    assert v.default_zookeeper_session_timeout_ms == 6_000


@pytest.mark.parametrize("text", ["2.8.0-IV1", "3.7-IV0", "3.7.0-rc1", "v3.7", "4.0.0.0", "3.9.0.1"])
def test_protocol_versions_and_tags_are_not_releases(text):
    """inter.broker.protocol.version strings (2.8-IV1) and git tags name no release: one sentence, no guess."""
    with pytest.raises(ReplicaflowError, match=f"kafka.version: expected a Kafka release like '3.7' or '0.8.2', "
                                               f"found '{text}'"):
        KafkaVersion.parse(text)


def test_a_4_x_release_after_4_1_has_4_1_behaviour():
    """Documented range 0.8 – 4.x: a later 4.x release is accepted with every switch of 4.1 (KRaft only, ELR on by
    default); 5.0 is refused."""
    v = KafkaVersion.parse("4.3")
    assert v.kraft_only and v.elr_supported and v.default_eligible_leader_replicas
    with pytest.raises(ReplicaflowError, match="supported releases are 0.8 to 4.x"):
        KafkaVersion.parse("5.0")


def test_lag_rule_boundary_082_vs_09():
    assert V("0.8.2").lag_rule == "messages"
    assert V("0.9").lag_rule == "time"


def test_default_lag_boundary_24_vs_25():
    assert V("2.4").default_replica_lag_time_max_ms == 10_000
    assert V("2.5").default_replica_lag_time_max_ms == 30_000


def test_urp_semantics_boundary_24_vs_25():
    assert V("2.4").urp_semantics == "legacy"
    assert V("2.5").urp_semantics == "kip352"


def test_min_isr_boundary_36_vs_37():
    assert not V("3.6").min_isr_capped and not V("3.6").hw_frozen_under_min_isr
    assert V("3.7").min_isr_capped and V("3.7").hw_frozen_under_min_isr


def test_fetcher_failure_boundary_22_vs_23():
    assert not V("2.2").fetcher_failure_isolated
    assert V("2.3").fetcher_failure_isolated


def test_fetch_leader_leo_overwrite_vs_max():
    assert not V("3.2").fetch_leader_leo_is_max
    assert V("3.3").fetch_leader_leo_is_max


def test_gauges_exist_per_version():
    def names(v):
        return {m.short for m in broker_metrics_for(V(v))}

    assert "UnderMinIsrPartitionCount" not in names("0.11") and "UnderMinIsrPartitionCount" in names("1.0")
    assert "AtMinIsrPartitionCount" not in names("2.2") and "AtMinIsrPartitionCount" in names("2.3")
    assert "FailedPartitionsCount" not in names("2.2") and "FailedPartitionsCount" in names("2.3")
    assert "ReassigningPartitions" not in names("2.4") and "ReassigningPartitions" in names("2.5")
    assert "ReassignmentBytesInPerSec" in names("2.5") and "ReassignmentMaxLag" in names("2.5")
    assert "UnderReplicatedPartitions" in names("0.8.2")
    assert "ReassignmentBytesInPerSec" not in names("2.4") and "OfflineReplicaCount" not in names("0.11")


@pytest.mark.parametrize(("short", "before", "first"), [
    ("UnderMinIsr", "0.11", "1.0"), ("AtMinIsr", "2.2", "2.3"),
    ("UnderMinIsrPartitionCount", "0.11", "1.0"), ("FailedPartitionsCount", "2.2", "2.3"),
])
def test_available_at_the_release_that_added_the_metric(short, before, first):
    """kafka.cluster.Partition registers the UnderMinIsr gauge from 1.0 (KIP-164) and AtMinIsr from 2.3
    (KIP-427) -- its newGauge calls; ReplicaManager/ReplicaFetcherManager add the broker counts at the same
    releases. ``available`` is the one answer the simulator, the pipeline and the report read."""
    assert not available(short, V(before)) and available(short, V(first)) and available(short, V("4.1"))


def test_every_partition_gauge_of_the_oldest_release():
    """kafka.cluster.Partition at 0.8.2.0 registers only the UnderReplicated gauge; InSyncReplicasCount and
    ReplicasCount come at 0.10.2.0."""
    assert [g for g in PARTITION_GAUGES if available(g, V("0.8.2"))] == ["UnderReplicated"]
    assert [g for g in PARTITION_GAUGES if available(g, V("0.10.2"))] == [
        "UnderReplicated", "InSyncReplicasCount", "ReplicasCount"]
    with pytest.raises(KeyError):
        available("NoSuchMetric", V("3.7"))


def test_kip542_switch_and_log_family():
    v = KafkaVersion.parse("3.7", kip542=True)
    assert v.kip542 and str(v) == "3.7 +KIP-542"
    assert V("0.10.2").log_family == "0.10"
    assert V("2.1").log_family == "1.0"
    assert V("3.6").log_family == "1.0"


@pytest.mark.parametrize(("before", "first"), [("0.11", "1.0"), ("0.11.0.3", "1.0.0")])
def test_log_family_across_1_0(before, first):
    """Partition.logIdent: `"Partition %s on broker %d: "` with a TopicAndPartition `[t,p]` at 0.11.0.0,
    `s"[Partition $topicPartition broker=$localBrokerId] "` at 1.0.0."""
    assert V(before).log_family == "0.10" and V(first).log_family == "1.0"
    assert V("2.7").alter_partition and not V("2.6").alter_partition


def test_the_release_table_is_the_one_home_of_which_releases_exist():
    """The last minor of each finished major and the last line of each 0.x minor are read from RELEASES, so a
    release added there moves them; every bug-fix release it lists parses, the next one is refused by the
    scenario check only (``unreleased_patch``)."""
    assert _LAST_MINOR == {(0,): 11, (1,): 1, (2,): 8, (3,): 9}
    assert _LAST_PRE_1_0 == {8: 2, 9: 0, 10: 2, 11: 0}
    for line, last in RELEASES.items():
        for patch in range(last + 1):
            text = ".".join(map(str, (*line, patch)))
            assert unreleased_patch(text) is None and KafkaVersion.parse(text).release[:2] == line[:2], text
        assert unreleased_patch(".".join(map(str, (*line, last + 1)))) is not None
    assert unreleased_patch("3.7") is None and unreleased_patch("4.2.7") is None  # no bug fix; a line not yet out


def test_a_broker_prints_releases_the_table_does_not_know():
    """A broker's `Kafka version:` line is its build's number (a release after this table, Confluent's
    7.3.5-ccs): read as its line, never refused by the scenario's bug-fix check."""
    assert printed_release("3.9.1") == "3.9.1" and printed_release("3.7.5") == "3.7.5"
    assert printed_release("7.3.5-ccs") == "3.3"
