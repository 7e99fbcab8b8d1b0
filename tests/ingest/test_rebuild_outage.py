"""A whole cluster stopped and started again, from its logs alone (broker_sessions.elected_at_removals,
leaderless_while_cluster_down, first_isr_member_back): a partition is offline from its last ISR member's stop to that
member's return, as the simulator's controller records it, not under-replicated under the leader that stopped last
(docs/real-cluster.md, ``leaders``).

Each story stops the four brokers one after another with a controlled shutdown and starts them again, on ZooKeeper
0.10 and 2.7 and on KRaft 3.7: partition 1 (replicas 2, 3, 4) goes offline at broker 4's stop, while broker 1 still
runs, and the others at broker 1's. Unclean election is off in every release (0.10's default is on, and its
controller would elect broker 2 from outside the ISR when it comes back). The logs and the describe taken at the start are analyzed as a fleet, and every
partition's leader and ISR equal the simulator's own telemetry at every second of the logged period. The same logs
without state-change.log (where the leader lines are from 2.6, and a bug report often has server.log alone) are in the
fleet too: the first ISR member back leads again. Broker 4 comes back before brokers 2 and 3, so that no follower
rejoins the ISR in the millisecond of the leader's election (a leader's ISR change and a new leader's line of one
millisecond are ordered the other way round, docs/real-cluster.md).
"""

from __future__ import annotations

import json
import shutil
from bisect import bisect_right

import pyarrow.parquet as pq
import pytest

from replicaflow.jobs.analyze import analyze_logs
from replicaflow.sim.runner import DESCRIBE_START, SNAPSHOTS, simulate
from tests.test_logs_only_roundtrip import orders_cluster

pytestmark = pytest.mark.spark

CLUSTERS = {"v010": ("0.10", "zookeeper"), "v27": ("2.7", "zookeeper"), "v37k": ("3.7", "kraft")}
STOPS = {2: 40, 3: 45, 4: 50, 1: 60}  # broker: second of its controlled shutdown (1, the controller, last)
STARTS = {1: 100, 4: 105, 2: 110, 3: 115}
# partition 1 (replicas 2, 3, 4) from broker 4's stop to its return, the others from broker 1's
OFFLINE_S = (STARTS[4] - STOPS[4]) + 3 * (STARTS[1] - STOPS[1])


def story(name: str) -> str:
    release, controller = CLUSTERS[name]
    events = "".join(f"  - {{at: {s}s, broker_down: {{broker: {b}, controlled: true}}}}\n" for b, s in STOPS.items())
    events += "".join(f"  - {{at: {s}s, broker_up: {b}}}\n" for b, s in STARTS.items())
    return f"""name: {name}
seed: 3
duration: 150s
tick: 1s
kafka:
  version: "{release}"
  controller: {controller}
  unclean_leader_election: false
{orders_cluster("100KB/s")}events:
{events}"""


def _changes(path, column: str) -> dict[int, tuple[list[int], list]]:
    """{partition: (ts_ms in replay order, the column's values)} of one telemetry change log."""
    rows = sorted(pq.read_table(path).to_pylist(), key=lambda r: (r["ts_ms"], r["seq"]))
    out: dict[int, tuple[list[int], list]] = {}
    for r in rows:
        ts, values = out.setdefault(r["partition"], ([], []))
        ts.append(r["ts_ms"])
        values.append(r[column])
    return out


def _at(changes: tuple[list[int], list], ts_ms: int):
    ts, values = changes
    i = bisect_right(ts, ts_ms)
    return values[i - 1] if i else None


def analyzed_fleet(spark, root, stories: dict[str, str], full: bool):
    """Simulates each story with its logs, copies them without state-change.log (NAME-server, where the leader lines
    are from 2.6), and analyzes those, with the full logs too if ``full``, as one fleet with the describe taken at
    the start; returns the output folder."""
    for name, text in stories.items():
        (root / f"{name}.yaml").write_text(text)
        simulate(root / f"{name}.yaml", root / name, logs=True)
        shutil.copytree(root / name / "logs", root / f"{name}-server" / "logs",
                        ignore=shutil.ignore_patterns("state-change.log"))
        shutil.copytree(root / name / SNAPSHOTS, root / f"{name}-server" / SNAPSHOTS)
    out = root / "analyzed"
    names = [*(stories if full else ()), *[f"{name}-server" for name in stories]]
    analyze_logs([str(root / name / "logs") for name in names], out,
                 topics=[str(root / name / SNAPSHOTS / DESCRIBE_START) for name in names],
                 cluster_from_path=True, topics_at="start", spark=spark)
    return out


@pytest.fixture(scope="module")
def fleet(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("outage")
    return root, analyzed_fleet(spark, root, {name: story(name) for name in CLUSTERS}, full=True)


def test_every_partition_has_the_simulators_leader_and_isr_at_every_second(fleet):
    """A leader's controlled shutdown that leaves no other ISR member: the ZooKeeper controller writes no leader as it
    takes the last ISR member offline (ReplicaStateMachine OfflineReplica, KafkaController.removeReplicasFromIsr:
    NoLeader, the ISR kept), KRaft's elects none (ReplicationControlManager.handleBrokerInControlledShutdown,
    PartitionChangeBuilder); both keep that last member in the ISR. Until the first broker back leads again, the
    partition is offline. The followers leave the ISRs at the controller's grant of their controlled shutdown
    (KafkaController.doControlledShutdown; KRaft handleBrokerInControlledShutdown, which no leader line shows)."""
    root, out = fleet
    metas = {m["cluster"]: m for m in json.loads((out / "telemetry" / "_metas.json").read_text())}
    state = pq.read_table(out / "analysis" / "partition_state").to_pylist()
    for cluster in CLUSTERS:
        leaders = _changes(root / cluster / "telemetry" / "leaders", "leader")
        isrs = _changes(root / cluster / "telemetry" / "isr", "isr")
        rows = sorted((r for r in state if r["cluster"] == cluster), key=lambda r: r["from_ms"])
        start, end = metas[cluster]["start_ms"], metas[cluster]["end_ms"]
        assert end - start > max(STARTS.values()) * 1_000, cluster  # the logged period holds the whole restart
        offline = 0
        for p in range(4):
            mine = [r for r in rows if r["partition"] == p]
            for ts in range(start + 1_000, end, 1_000):
                got = next(r for r in mine if r["from_ms"] <= ts and (r["to_ms"] is None or ts < r["to_ms"]))
                want = (_at(leaders[p], ts), sorted(_at(isrs[p], ts)))
                assert (got["leader"], sorted(got["isr"])) == want, (cluster, p, ts - start)
                assert got["offline"] == (want[0] == -1), (cluster, p, ts - start)
                offline += got["offline"]
        assert offline == OFFLINE_S, cluster


def test_the_summary_counts_the_outage_as_offline_and_no_unclean_election(fleet):
    """Offline for 40 s on three partitions and 55 s on partition 1: 2.917 partition-minutes, four incidents; each first
    broker back was the last ISR member, so its election is clean (PartitionRegistration.electionWasClean)."""
    _, out = fleet
    summary = json.loads((out / "analysis" / "_summary.json").read_text())
    for cluster in CLUSTERS:
        s = summary[cluster]
        assert (s["peak_offline"], s["incidents"]["offline"], s["offline_minutes"]) == (4, 4, round(OFFLINE_S / 60, 3))
        assert s["unclean_elections"] == 0, cluster


def test_without_state_change_log_the_first_isr_member_back_leads_again(fleet):
    """No leader line at all without state-change.log (2.6+; 0.10's TRACE lines are there too): the partitions
    offline through the outage elect the first broker back that is in the ISR kept at the outage (ZooKeeper
    KafkaController.onBrokerStartup, KRaft ReplicationControlManager.handleBrokerUnfenced), broker 1 at 100 s and, for
    partition 1, broker 4 at 105 s, as with the full logs. Before, they stayed under the leader that stopped last.
    And each partition went offline when the full logs say: the rebuild elects broker 3 for partition 1 at broker 2's
    shutdown and broker 4 at broker 3's, one election from the one before it (elected_at_removals), so partition 1 is
    offline from broker 4's stop, not broker 1's (no follower is left to add a fetcher to broker 4, no leader line
    tells it). Each election read the leader the lines told last before, broker 2, until 2026-12-05."""
    _, out = fleet
    spans: dict = {}
    for r in pq.read_table(out / "analysis" / "incidents").to_pylist():
        if r["kind"] == "offline":
            spans.setdefault(r["cluster"], set()).add((r["partition"], r["start_ms"], r["end_ms"]))
    metas = {m["cluster"]: m for m in json.loads((out / "telemetry" / "_metas.json").read_text())}
    state = pq.read_table(out / "analysis" / "partition_state").to_pylist()
    for cluster in CLUSTERS:
        server = f"{cluster}-server"
        assert spans[server] == spans[cluster] and len(spans[server]) == 4, cluster
        start_ms = metas[server]["start_ms"]
        back = {}
        for r in sorted(state, key=lambda r: r["from_ms"]):
            if r["cluster"] == server and r["from_ms"] >= start_ms + STARTS[1] * 1_000 and r["leader"] != -1:
                back.setdefault(r["partition"], (r["leader"], (r["from_ms"] - start_ms) // 1_000))
        assert back == {0: (1, STARTS[1]), 1: (4, STARTS[4]), 2: (1, STARTS[1]), 3: (1, STARTS[1])}, cluster
