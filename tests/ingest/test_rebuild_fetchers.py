"""A leader's failure and a controlled shutdown, from server.log alone: the controller's election in place of the
leader it removed (broker_sessions.elected_at_removals), and the followers' fetchers, which name the new leader and
its epoch (holders.followed_leaders: ReplicaFetcherManager `Added fetcher to broker L for partitions …`,
AbstractFetcherManager.addFetcherForPartitions), where the leader's own line is in state-change.log (2.6+), which a
bug report often leaves out. Topic `pairs` has two replicas per partition: no follower is left to add a fetcher
to the new leader, only the election tells it.

Broker 1 crashes at 40 s and starts again at 80 s; broker 2 stops with a controlled shutdown at 90 s and starts at
120 s. Three releases, one per form of the fetcher's line: 2.7 ZooKeeper (`(offset=O, leaderEpoch=E)`), 3.0
ZooKeeper (`InitialFetchState(BrokerEndPoint(…),E,O)`) and 3.7 KRaft (the topic id first). Before the fetchers were
read, partition 0 stayed under broker 1 while it was down and under broker 2 through its shutdown, and partition 1
under broker 2: the broker metrics counted their leadership on a stopped broker.
"""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from tests.ingest.test_rebuild_outage import _at, analyzed_fleet
from tests.test_logs_only_roundtrip import orders_cluster

PAIRS = """  - name: pairs
    partitions: 3
    replication_factor: 2
    min_insync_replicas: 1
    assignment: [[1, 2], [2, 3], [3, 4]]
    produce_rate: 50KB/s
"""

pytestmark = pytest.mark.spark

CLUSTERS = {"v27": ("2.7", "zookeeper"), "v30": ("3.0", "zookeeper"), "v37k": ("3.7", "kraft")}
EVENTS = """  - {at: 40s, broker_down: {broker: 1}}
  - {at: 80s, broker_up: 1}
  - {at: 90s, broker_down: {broker: 2, controlled: true}}
  - {at: 120s, broker_up: 2}
"""


def story(name: str) -> str:
    release, controller = CLUSTERS[name]
    return f"""name: {name}
seed: 5
duration: 150s
tick: 1s
kafka:
  version: "{release}"
  controller: {controller}
{orders_cluster("100KB/s")}{PAIRS}events:
{EVENTS}"""


@pytest.fixture(scope="module")
def analyzed(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("fetchers")
    return root, analyzed_fleet(spark, root, {name: story(name) for name in CLUSTERS}, full=False)


def test_every_partition_has_the_simulators_leader_and_isr_at_every_second(analyzed):
    """The ZooKeeper controller elects the first live ISR member in assignment order at a broker's failure
    (OfflinePartitionLeaderElectionStrategy) and at its controlled shutdown (ControlledShutdownPartitionLeaderElection-
    Strategy), KRaft's at its fencing and its shutdown grant (PartitionChangeBuilder); each follower of the partition
    then adds a fetcher to that leader at the new leader epoch (ReplicaManager.makeFollowers). The rebuilt leaders
    and ISRs equal the simulator's at every second of the logged period, with no leader line in the logs."""
    root, out = analyzed
    metas = {m["cluster"]: m for m in json.loads((out / "telemetry" / "_metas.json").read_text())}
    for name in CLUSTERS:
        assert not list((root / f"{name}-server" / "logs").rglob("state-change.log"))
        # the logged period holds both returns; led by broker 1 (orders-0, then broker 2; pairs-0) or broker 2
        # (orders-1, pairs-1) when it stopped
        moved = equal_every_second(root, out, metas, name, min_span_ms=120_000)
        assert moved == {("orders", 0), ("orders", 1), ("pairs", 0), ("pairs", 1)}, name


def equal_every_second(root, out, metas: dict, name: str, min_span_ms: int) -> set[tuple[str, int]]:
    """Asserts that every partition of cluster NAME-server (its logs without state-change.log) has the simulator's
    leader and ISR at every second of its logged period (at least ``min_span_ms``); returns the partitions whose
    leader changed."""
    server = f"{name}-server"
    state = [r for r in pq.read_table(out / "analysis" / "partition_state").to_pylist() if r["cluster"] == server]
    leaders = _by_topic(root / name / "telemetry" / "leaders", "leader")
    isrs = _by_topic(root / name / "telemetry" / "isr", "isr")
    start, end = metas[server]["start_ms"], metas[server]["end_ms"]
    assert end - start >= min_span_ms, name
    moved = set()
    for tp in leaders:
        mine = [r for r in state if (r["topic"], r["partition"]) == tp]
        for ts in range(start + 1_000, end, 1_000):
            got = next(r for r in mine if r["from_ms"] <= ts and (r["to_ms"] is None or ts < r["to_ms"]))
            want = (_at(leaders[tp], ts), sorted(_at(isrs[tp], ts)))
            assert (got["leader"], sorted(got["isr"])) == want, (name, tp, ts - start)
            if want[0] != _at(leaders[tp], start):
                moved.add(tp)
    return moved


def _by_topic(path, column: str) -> dict[tuple[str, int], tuple[list[int], list]]:
    """{(topic, partition): (ts_ms in replay order, the column's values)} of one telemetry change log."""
    out: dict = {}
    for r in sorted(pq.read_table(path).to_pylist(), key=lambda r: (r["ts_ms"], r["seq"])):
        ts, values = out.setdefault((r["topic"], r["partition"]), ([], []))
        ts.append(r["ts_ms"])
        values.append(r[column])
    return out


def test_a_stopped_broker_leads_nothing(analyzed):
    """ReplicaManager's LeaderCount: broker 2 leads orders-0 and -1 and pairs-0 and -1 before its controlled shutdown,
    and reports nothing while stopped (before, the rebuild kept orders-1 and pairs-1 on it, orders-0 and pairs-0 on
    broker 1)."""
    root, out = analyzed
    metas = {m["cluster"]: m for m in json.loads((out / "telemetry" / "_metas.json").read_text())}
    metrics = pq.read_table(out / "analysis" / "broker_metrics").to_pylist()
    for name in CLUSTERS:
        server = f"{name}-server"
        start = metas[server]["start_ms"]
        counts = {(r["ts_ms"] - start) // 1_000: r["value"] for r in metrics
                  if r["cluster"] == server and r["broker"] == 2 and r["name"].endswith("name=LeaderCount")}
        assert [counts.get(s) for s in (80, 100, 110)] == [4.0, None, None], (name, counts)
