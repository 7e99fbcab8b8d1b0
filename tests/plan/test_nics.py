"""`plan --cluster`: each broker keeps its own NIC (docs/plan.md, "Inputs"). Kafka has no cluster-wide NIC:
each broker's replica fetcher (``ReplicaFetcherThread``) and the leader's ``ReplicaManager.fetchMessages``
run over that broker's own network, so a slow broker the plan leaves alone does not slow the move."""

from __future__ import annotations

from pathlib import Path

from replicaflow.jobs.plan import PlanArgs, plan, prepare
from replicaflow.plan.build import candidate, headroom_throttle_bps, strimzi_nic_bps

SCENARIO = """name: nic
duration: 10m
kafka: {{version: "3.7"}}
cluster: {{brokers: [{{id: 1}}, {{id: 2}}, {{id: 3}}, {{id: 4}}, {{id: 5{nic5}}}]}}
topics: [{{name: orders, partitions: 2, replication_factor: 2, initial_size: 1GB, produce_rate: 1MB/s,
          assignment: [[1,2],[3,4]]}}]
"""
MOVE = '{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[1,3]}]}'


def _args(tmp: Path, nic5: str, **kw) -> PlanArgs:
    name = "slow5" if nic5 else "same"
    (tmp / f"{name}.yaml").write_text(SCENARIO.format(nic5=nic5), encoding="utf-8")
    (tmp / "move.json").write_text(MOVE, encoding="utf-8")
    return PlanArgs(cluster=tmp / f"{name}.yaml", reassignment=tmp / "move.json", **kw)


SLOW5 = ", network_in: 10MB/s, network_out: 20MB/s"


def test_each_broker_keeps_its_own_nic(tmp_path):
    """Broker 5's 10MB/s in, 20MB/s out reach broker 5 alone: the candidate's scenario; the headroom, over the
    brokers the move crosses (1, 2, 3: ReassignPartitionsCommand.calculateReassigningBrokers, the ones the
    --throttle rate is set on), is the default NIC's, and over all brokers names broker 5's inbound NIC;
    Strimzi's one NIC is the move's brokers'."""
    prep = prepare(_args(tmp_path, SLOW5))
    spec = candidate(prep.cluster, prep.moves, None, False, None, "check")
    nics = {b.id: (b.network_in_bps, b.network_out_bps) for b in spec.scenario.cluster.brokers}
    assert nics == {1: (125e6, 125e6), 2: (125e6, 125e6), 3: (125e6, 125e6), 4: (125e6, 125e6), 5: (10e6, 20e6)}
    assert headroom_throttle_bps(prep.cluster) == (9e6, 5)  # (10MB/s − 0) × 0.9
    assert headroom_throttle_bps(prep.cluster, prep.moves) == headroom_throttle_bps(prepare(_args(tmp_path, "")).cluster,
                                                                                    prep.moves)
    assert headroom_throttle_bps(prep.cluster, prep.moves)[1] in (1, 2, 3)
    assert strimzi_nic_bps(prep.cluster, prep.moves) == 125e6


def test_network_flag_is_one_nic_for_all(tmp_path):
    """``--network`` still gives every broker the same NIC, over the scenario's own."""
    prep = prepare(_args(tmp_path, SLOW5, network="50MB/s"))
    spec = candidate(prep.cluster, prep.moves, None, False, None, "check")
    assert {(b.network_in_bps, b.network_out_bps) for b in spec.scenario.cluster.brokers} == {(50e6, 50e6)}


def test_a_slow_broker_outside_the_move_changes_nothing(spark, tmp_path):
    """The probe's case: orders-0 [1,2] → [1,3], 1GB, at 50MB/s; broker 5 (10MB/s) takes no part. The answer is
    that of the same cluster with broker 5 at the default NIC (it was twice as slow, blaming broker 1's NIC)."""
    _, slow, _ = plan(_args(tmp_path, SLOW5, throttle=["50MB/s"]), spark=spark)
    _, same, _ = plan(_args(tmp_path, "", throttle=["50MB/s"]), spark=spark)
    assert (slow.headroom_bps, slow.headroom_broker, slow.why) == (same.headroom_bps, same.headroom_broker, same.why)
    (a,), (b,) = slow.results, same.results
    assert a.finished and b.finished
    assert a.duration_ms == b.duration_ms
    assert a.bottleneck["broker"] == b.bottleneck["broker"] and a.bottleneck["side"] == b.bottleneck["side"]
    assert a.bottleneck["side"] != "network out"


def test_the_scenarios_kafka_settings_reach_every_candidate(tmp_path):
    """A ``--cluster`` scenario on KRaft with its own lag time, fetcher threads and round trip is planned with them
    (the candidates ran ZooKeeper, 3.7's default, with 30 s, one fetcher and 50 ms); with ``--version 2.4`` the
    defaults it leaves out are that release's (ZooKeeper, its 6 s session), the settings it names are kept."""
    text = SCENARIO.format(nic5="").replace('kafka: {version: "3.7"}', (
        'kafka: {version: "3.7", controller: kraft, replica_lag_time_max: 5s, num_replica_fetchers: 4, '
        'fetch_rtt: 20ms}'))
    (tmp_path / "kraft.yaml").write_text(text, encoding="utf-8")
    (tmp_path / "move.json").write_text(MOVE, encoding="utf-8")
    prep = prepare(PlanArgs(cluster=tmp_path / "kraft.yaml", reassignment=tmp_path / "move.json"))
    kafka = candidate(prep.cluster, prep.moves, None, False, None, "check").scenario.kafka
    assert (kafka.version, kafka.controller, kafka.replica_lag_time_max_ms, kafka.num_replica_fetchers,
            kafka.fetch_rtt_ms, kafka.session_timeout_ms) == ("3.7", "kraft", 5000, 4, 20, 9000)
    (tmp_path / "zk.yaml").write_text(text.replace("controller: kraft, ", ""), encoding="utf-8")
    prep = prepare(PlanArgs(cluster=tmp_path / "zk.yaml", reassignment=tmp_path / "move.json", version="2.4"))
    kafka = candidate(prep.cluster, prep.moves, None, False, None, "check").scenario.kafka
    assert (kafka.version, kafka.controller, kafka.session_timeout_ms, kafka.replica_lag_time_max_ms) == (
        "2.4", "zookeeper", 6000, 5000)
