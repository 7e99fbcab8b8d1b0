"""Release boundaries checked on the simulator, both sides of each, as apache/kafka's source reads at the release
tags, with the Kafka class and method in the docstring."""

from __future__ import annotations

import pytest

from replicaflow.errors import ReplicaflowError
from tests.sim.conftest import small, started
from tests.sim.test_controller_releases import run_until
from tests.sim.test_fetcher_manager import fetch_once
from tests.sim.test_partition import one_partition


def _leaves_at_s(engine, s, partition, until_s: int = 40) -> float | None:
    start, topo = engine.scenario.start_ms, engine.fetchers.topology()
    for now in range(start + 100, start + until_s * 1000 + 1, 100):
        partition.shrink(now, topo, s.leader_leo())
        if not s.in_isr[0, 2]:
            return (now - start) / 1000
    return None


def _bump_epoch_keeping_the_leader(version: str):
    """Follower 3 (LEO behind the leader's) was last caught up at the start; at 15 s the controller sends leader 1
    a LeaderAndIsr with a new epoch (e.g. it removed another broker from the ISR); no fetches happen."""
    engine, s, partition, _, _ = one_partition(version=version)
    start = engine.scenario.start_ms
    s.log_leo[0, 0] += 10
    s.v_lcu[0, 2] = start
    partition.make_leader(0, 0, 0, start + 15_000)
    return engine, s, partition


def test_an_epoch_bump_restarts_the_isr_followers_caught_up_clock_from_0_10_2():
    """Partition.makeLeader at 0.10.2.0 calls `replica.resetLastCaughtUpTime(curLeaderLogEndOffset, curTimeMs,
    lastCaughtUpTimeMs)` for every assigned replica (now for ISR members), new leader or not: follower 3 is in sync
    until 15 s + lag; the lag/2 checks (5 s) drop it at 30 s (25 s is exactly lag)."""
    engine, s, partition = _bump_epoch_keeping_the_leader("0.10.2")
    assert _leaves_at_s(engine, s, partition) == 30


def test_an_epoch_bump_keeps_the_caught_up_clock_before_0_10_2():
    """0.10.1: the `isr-expiration` task runs every lag (10 s: checks at 0, 10, 20 s); follower 3, last caught up at
    the start, is out at the 20 s check (20 s > lag) even though the leader got a new epoch at 15 s."""
    engine, s, partition = _bump_epoch_keeping_the_leader("0.10.1")
    assert _leaves_at_s(engine, s, partition) == 20


THROTTLE = [{"at": "0s", "config": {"broker": 1, "leader.replication.throttled.rate": "1KB/s"}},
            {"at": "0s", "config": {"topic": "t", "leader.replication.throttled.replicas": "*"}}]


def _throttled(version: str):
    return started(small(kafka={"version": version, "replica_lag_time_max": "10s"}, events=THROTTLE))


def test_replication_throttles_apply_from_0_10_1():
    """KIP-73 at 0.10.1.0: DynamicConfig.Broker.LeaderReplicationThrottledRateProp
    (`leader.replication.throttled.rate`) and LogConfig.LeaderReplicationThrottledReplicasProp exist; the leader's
    quota for broker 1 is the configured 1000 B/s."""
    engine, _, _ = _throttled("0.10.1")
    assert engine.quotas.limit_bps[0, 0] == 1000.0


def test_replication_throttles_do_not_exist_before_0_10_1():
    """git grep 'replication.throttled' in core/src/main/scala at 0.10.0.0 finds nothing: the scenario is refused or
    no quota limits broker 1. The scenario is refused, naming the config."""
    with pytest.raises(ReplicaflowError, match=r"leader\.replication\.throttled\.rate: .*KIP-73.*0\.10\.1"):
        _throttled("0.10.0")


@pytest.mark.parametrize("version", ["0.10.0", "0.10.1"])
def test_reassign_throttle_option_from_0_10_1(version):
    """ReassignPartitionsCommand's `--throttle` option (throttleOpt) exists from 0.10.1.0 (KIP-73), not at 0.10.0.1:
    a reassign event with `throttle` on 0.10.0 is refused, naming the field."""
    sc = small(kafka={"version": version}, cluster={"brokers": 4, "network_in": "1GB/s", "network_out": "1GB/s"},
               events=[{"at": "1s", "reassign": {"version": 1, "partitions": [
                   {"topic": "t", "partition": 0, "replicas": [1, 2, 4]}]}, "throttle": "1MB/s"}])
    if version == "0.10.0":
        with pytest.raises(ReplicaflowError, match=r"events\[0\]\.throttle: expected no throttle: .*0\.10\.1"):
            started(sc)
    else:
        engine, _, _ = started(sc)
        run_until(engine, 1)
        assert engine.configs.broker[("1", "leader.replication.throttled.rate")] == "1000000"


@pytest.mark.parametrize(("version", "replicas_count", "urp"), [("2.4", 4.0, 1.0), ("2.5", 3.0, 0.0)])
def test_replicas_count_and_urp_gauges_exclude_adding_replicas_from_2_5(version, replicas_count, urp):
    """Partition's gauges: ReplicasCount `if (isLeader) allReplicaIds.size` at 2.4.0 and
    `assignmentState.replicationFactor` (replicas - adding) at 2.5.0; UnderReplicated follows isUnderReplicated
    (KIP-352 at 2.5.0). [1,2,3] -> [1,2,3,4]: broker 4 is adding and stalls, the ISR stays [1,2,3]."""
    engine, writer, _ = started(small(
        kafka={"version": version, "replica_lag_time_max": "10s"},
        cluster={"brokers": 4, "network_in": "1GB/s", "network_out": "1GB/s"},
        events=[{"at": "1s", "reassign": {"version": 1, "partitions": [
                    {"topic": "t", "partition": 0, "replicas": [1, 2, 3, 4]}]}},
                {"at": "1s", "stall_follower": {"broker": 4}}]))
    run_until(engine, 5)
    assert engine.s.reassignments and engine.s.replica_ids(0, engine.s.in_isr[0]) == [1, 2, 3]
    metrics = writer.tables()["truth"]["partition_metrics"].to_pylist()
    last = {r["name"]: r["value"] for r in sorted(metrics, key=lambda r: r["ts_ms"])}
    assert last["ReplicasCount"] == replicas_count and last["UnderReplicated"] == urp


def _twelve_partitions_behind(version: str):
    engine, _, _ = started(small(kafka={"version": version, "replica_lag_time_max": "10s"},
                                 topics=[{"name": "t", "partitions": 12, "replication_factor": 2,
                                          "assignment": [[1, 2]] * 12, "message_size": "1KB",
                                          "initial_size": "3MB"}]))
    engine.s.log_leo[:, 1] = 0
    fetch, _ = fetch_once(engine, engine.scenario.start_ms + 100)
    return engine, fetch.msgs[:, 1]


def test_the_fetch_response_cap_exists_from_0_10_1():
    """KIP-74 at 0.10.1.0: KafkaConfig.ReplicaFetchResponseMaxBytes = 10 * 1024 * 1024: 12 partitions of one thread
    that each want 2 MiB (two 1 MiB round trips per tick) share 2 x 10 MiB."""
    engine, got = _twelve_partitions_behind("0.10.1")
    assert engine.fetchers.rounds == 2
    assert got.sum() * 1000 <= 2 * 10 * 1024 * 1024 < 12 * 2 * (1 << 20)


def test_no_fetch_response_cap_before_0_10_1():
    """0.10.0: each of the 12 partitions gets its 2 x 1 MiB of 1 kB messages (2097 messages)."""
    _, got = _twelve_partitions_behind("0.10.0")
    assert (got == 2 * (1 << 20) // 1000).all()
