"""Kafka's own timing oracles, asked through `plan` (docs/plan.md, "Checked against Kafka")."""

from __future__ import annotations

import math

from replicaflow.jobs.plan import plan
from tests.plan.kafka_files import args

MSG_100KB = 100 * 1024


def test_asymmetric_topology_follower_throttle(spark, tmp_path):
    """ReplicationQuotasTest.shouldMatchQuotaReplicatingThroughAnAsymmetricTopology (follower throttle): six
    leaders 100..105 each with one 10 MB partition, three replicated to broker 106 and three to 107 (plus two
    partitions that stay); throttle 3 × 1,024,000 B/s. Kafka accepts 9–30 s and a follower rate of
    0.5–1.1 × the throttle."""
    topics = {"t": [[100 + i] for i in range(6)] + [[100], [101]]}
    moves = {("t", i): [100 + i, 106 if i < 3 else 107] for i in range(6)}
    throttle = 3 * 100 * MSG_100KB // 10
    _, choice, _ = plan(args(tmp_path, topics, moves, 100 * MSG_100KB, brokers=list(range(100, 108)),
                             throttle=[str(throttle)]), spark=spark)
    r = choice.recommended
    assert r.finished
    assert 9_000 <= r.duration_ms <= 30_000
    for new, parts in ((106, range(3)), (107, range(3, 6))):
        took_s = max(r.eta_ms[f"t-{p}"] for p in parts) / 1000
        rate = 3 * 100 * MSG_100KB / took_s
        assert 0.5 * throttle < rate < 1.1 * throttle, (new, rate)
    assert r.bottleneck["side"] == "follower quota" and r.bottleneck["broker"] in (106, 107)


def test_asymmetric_topology_shared_follower_takes_longer(spark, tmp_path):
    """The same topology at the leader throttle (1,024,000 B/s): each leader alone would send its 10 MB in
    10 s, but --throttle also throttles the followers, and 106 and 107 each receive three partitions under one
    quota, so the move takes about three times the leader-side 10 s (ReplicationQuotasTest multiplies the
    follower throttle by 3 for that reason)."""
    topics = {"t": [[100 + i] for i in range(6)]}
    moves = {("t", i): [100 + i, 106 if i < 3 else 107] for i in range(6)}
    throttle = 100 * MSG_100KB // 10
    _, choice, _ = plan(args(tmp_path, topics, moves, 100 * MSG_100KB, brokers=list(range(100, 108)),
                             throttle=[str(throttle)]), spark=spark)
    r = choice.recommended
    leader_side_s = 100 * MSG_100KB / throttle
    assert 2.7 * leader_side_s <= r.duration_ms / 1000 <= 3.3 * leader_side_s
    assert r.bottleneck["side"] == "follower quota"


def test_throttling_system_test_bounds(spark, tmp_path):
    """tests/kafkatest/tests/core/throttling_test.py: 6 brokers, 3 partitions RF 2 of 2,000 × 400 KB / 3,
    each partition given the replicas of the next one, --throttle 4 MiB/s; the move takes at least 0.9 × and
    at most 2 × ceil(max new replicas per partition × size / throttle)."""
    assignment = [[1, 2], [3, 4], [5, 6]]
    topics = {"test_topic": assignment}
    moves = {("test_topic", i): assignment[(i + 1) % 3] for i in range(3)}
    size = 2000 * 4096 * 100 // 3
    throttle = 4 * 1024 * 1024
    _, choice, _ = plan(args(tmp_path, topics, moves, size, throttle=[str(throttle)],
                             produce_rate=["test_topic=4KB/s"]), spark=spark)
    estimated_s = math.ceil(2 * size / throttle)
    took_s = choice.recommended.duration_ms / 1000
    assert 0.9 * estimated_s <= took_s <= 2 * estimated_s


def test_reassign_partitions_system_test_well_inside_60s(spark, tmp_path):
    """tests/kafkatest/tests/core/reassign_partitions_test.py: 4 brokers, 20 partitions RF 3, min ISR 3,
    1,000 msg/s produced, each partition given the replicas of another; the test waits 60 s at most."""
    assignment = [[(p + k) % 4 + 1 for k in range(3)] for p in range(20)]
    topics = {"test_topic": assignment}
    moves = {("test_topic", i): assignment[(i * 7 + 3) % 20] for i in range(20)}
    _, choice, _ = plan(args(tmp_path, topics, moves, 2_000_000, throttle=["125MB/s"], min_isr={"test_topic": 3},
                             produce_rate=["test_topic=100KB/s"]), spark=spark)
    r = choice.recommended
    assert r.finished and r.duration_ms < 20_000
    assert r.flags["under_min_isr"]["peak"] == 0
