"""The five KIP stories of scenarios/: each before/after pair and the outcome it must show (issue 3)."""

from __future__ import annotations

import pytest

from tests.sim.conftest import SCENARIOS


def window(series, start_s, end_s):
    return series.loc[start_s:end_s]


def test_kip16_burst_shrinks_isr_only_with_the_message_rule(story):
    before, after = story("kip16-before.yaml"), story("kip16-after.yaml")
    # 0.8.2: 4 partitions x the 2 ISR checks (every lag = 10 s, at 60 s and 70 s) inside the 10 s burst
    # -> 8 shrinks, both followers each time
    shrinks = before.cluster("IsrShrinksPerSec")
    assert shrinks.loc[:50].max() == 0
    assert shrinks.iloc[-1] == 8
    assert before.cluster("IsrExpandsPerSec").iloc[-1] == 16  # each follower rejoins on its own fetch
    assert before.cluster("UnderReplicatedPartitions").max() == 4
    # 0.9: the same burst, followers reach the previous fetch's leader LEO every fetch: nothing leaves the ISR
    assert after.cluster("IsrShrinksPerSec").max() == 0
    assert after.cluster("UnderReplicatedPartitions").max() == 0


def test_kip164_under_min_isr_only_when_two_replicas_are_lost(story):
    before, after = story("kip164-before.yaml"), story("kip164-after.yaml")
    assignment = after.scenario.topics[0].assignment
    with_3 = sum(3 in r for r in assignment)
    with_3_or_5 = sum(3 in r or 5 in r for r in assignment)
    with_3_and_5 = sum(3 in r and 5 in r for r in assignment)
    assert (with_3, with_3_or_5, with_3_and_5) == (6, 10, 2)
    urp, umi = after.cluster("UnderReplicatedPartitions"), after.cluster("UnderMinIsrPartitionCount")
    # broker 3 down at 60 s: its 6 partitions are URP once the leaders' lag check removes it, none under min ISR
    assert (window(urp, 80, 110) == with_3).all()
    assert (window(umi, 60, 120) == 0).all()
    # broker 5 down at 120 s: URP = partitions on 3 or 5; under min ISR = exactly those that lost both (until
    # broker 5 returns at 210 s: the acks=all leaders appended nothing meanwhile, so it rejoins at once)
    assert (window(urp, 140, 210) == with_3_or_5).all()
    assert (window(umi, 140, 200) == with_3_and_5).all()
    assert umi.loc[230:].max() == 0
    # 0.11 has no UnderMinIsrPartitionCount: the operator sees the same URP and cannot tell the cases apart
    assert not before.has_metric("UnderMinIsrPartitionCount")
    assert before.cluster("UnderReplicatedPartitions").equals(urp)
    # ...yet 0.11's leaders rejected the same acks=all requests: FailedProduceRequestsPerSec is all it shows
    failed_b, failed_a = before.cluster("FailedProduceRequestsPerSec"), after.cluster("FailedProduceRequestsPerSec")
    assert failed_b.iloc[-1] == failed_a.iloc[-1] > 0 and not before.has_metric("ErrorsPerSec")
    assert after.cluster("ErrorsPerSec").iloc[-1] == failed_a.iloc[-1]
    assert failed_a.loc[:120].max() == 0 and (window(failed_a.diff(), 140, 200) > 0).all()
    rejected = after.table("telemetry", "produce_errors")
    assert rejected.groupby(["topic", "partition"]).ngroups == with_3_and_5


def test_kip352_reassignment_is_not_under_replication_from_2_5(story):
    before, after = story("kip352-before.yaml"), story("kip352-after.yaml")
    moving = len(after.scenario.events[0].partitions)
    assert moving == 6
    urp_before = before.cluster("UnderReplicatedPartitions")
    assert (window(urp_before, 30, 100) == moving).all()
    assert not before.has_metric("ReassigningPartitions")
    assert after.cluster("UnderReplicatedPartitions").max() == 0
    reassigning = after.cluster("ReassigningPartitions")
    assert (window(reassigning, 30, 100) == moving).all()
    assert reassigning.iloc[-1] == 0  # the move completed
    assert after.cluster("ReassignmentBytesInPerSec").iloc[-1] >= moving * 500e6
    final = after.table("telemetry", "assignments").groupby("partition").last()
    assert all(4 in r and len(r) == 3 for r in final["replicas"])
    assert all(len(a) == 0 and len(r) == 0 for a, r in zip(final["adding"], final["removing"], strict=True))


def test_kip461_unexpected_error_kills_the_thread_before_2_3(story):
    before, after = story("kip461-before.yaml"), story("kip461-after.yaml")
    led_by_1 = sum(r[0] == 1 for r in after.scenario.topics[0].assignment)
    assert led_by_1 == 10
    # 2.2: the thread fetching from broker 1 died: all 10 partitions leave the ISR after the 10 s lag
    urp_before = before.metric("UnderReplicatedPartitions")[1]
    assert urp_before.loc[60] == 0 and (window(urp_before, 70, 170) == led_by_1).all()
    assert not before.has_metric("FailedPartitionsCount")
    # 2.3: only orders-0 leaves; FailedPartitionsCount = 1 on broker 2 until broker 1's shutdown changes the epoch
    urp_after = after.metric("UnderReplicatedPartitions")[1]
    assert (window(urp_after, 70, 170) == 1).all()
    failed = after.metric("FailedPartitionsCount")[2]
    assert (window(failed, 60, 170) == 1).all() and failed.loc[:50].max() == 0 and failed.loc[180:].max() == 0


def urp_minutes(run) -> float:
    interval_min = run.scenario.scrape_interval_ms / 60_000
    return float(run.cluster("UnderReplicatedPartitions").sum() * interval_min)


def test_kip542_restarted_broker_is_not_throttled_with_reassignment_quotas(story):
    before, after = story("kip542-before.yaml"), story("kip542-after.yaml")
    before_min, after_min = urp_minutes(before), urp_minutes(after)
    assert before_min > 3 * after_min, (before_min, after_min)
    # with KIP-542 broker 2 (down 60 s..150 s) is back in every ISR soon after it returns
    assert after.cluster("UnderReplicatedPartitions").loc[200:].max() == 0
    # with KIP-73 its replicas of the moving partitions stay throttled out of the ISR
    assert before.cluster("UnderReplicatedPartitions").loc[200:].min() > 0
    configs = before.table("telemetry", "configs")
    assert set(configs["name"]) >= {"leader.replication.throttled.replicas", "leader.replication.throttled.rate"}
    configs_after = after.table("telemetry", "configs")
    assert "leader.reassignment.throttled.rate" in set(configs_after["name"])
    assert "leader.replication.throttled.replicas" not in set(configs_after["name"])


@pytest.mark.parametrize("name", ["kip16-before.yaml", "kip461-after.yaml"])
def test_same_scenario_same_bytes(name, tmp_path):
    from replicaflow.sim.runner import simulate
    from tests.sim.conftest import SCENARIOS

    a, b = simulate(SCENARIOS / name, tmp_path / "a"), simulate(SCENARIOS / name, tmp_path / "b")
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert files and files == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    for f in files:
        assert (a / f).read_bytes() == (b / f).read_bytes(), f


@pytest.mark.parametrize("name", sorted(p.name for p in SCENARIOS.glob("*.yaml")))
def test_every_story_writes_its_broker_logs(name, tmp_path):
    """`simulate --logs` renders every event of every story in its release's format (reassignments included)."""
    from replicaflow.sim.runner import simulate

    out = simulate(SCENARIOS / name, tmp_path, logs=True)
    text = "".join(p.read_text() for p in sorted((out / "logs").rglob("*.log")))
    assert text.count("\n") > 10
    if "kip352" in name or "kip542" in name:
        assert "removingReplicas" in text and "addingReplicas" in text
