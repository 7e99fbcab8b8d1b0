"""Round trip: simulate with --logs on eight releases (3.5 and 3.7 also under KRaft), analyze the logs plus one describe snapshot ONLY (no
telemetry), and the gauges and ISR meters equal truth/broker_metrics at every scrape of the logged period.

All ten clusters are one fleet, analyzed in one run (clusters named by their folders). Each story stalls a
follower (ISR shrink, then expand), moves two partitions (their leaders leave: new leader lines) and, from
2.3 (KIP-461), fails one partition on a follower. Byte meters and lag gauges are unknown from logs and
not compared (docs/real-cluster.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from replicaflow.model.metrics import jmx
from replicaflow.sim.runner import DESCRIBE_START, SNAPSHOTS, simulate

RELEASES = ("0.10", "1.1", "2.2", "2.4", "2.7", "3.5", "3.7", "4.0")
# cluster name -> (release, controller): each release with its default controller (ZooKeeper before 4.0,
# KRaft in 4.x), and 3.5 and 3.7 also under KRaft, the releases that have both (KRaft from 3.3)
CLUSTERS = {**{f"v{r.replace('.', '')}": (r, None) for r in RELEASES}, "v35k": ("3.5", "kraft"),
            "v37k": ("3.7", "kraft")}
GAUGES = ("UnderReplicatedPartitions", "UnderMinIsrPartitionCount", "AtMinIsrPartitionCount",
          "ReassigningPartitions", "FailedPartitionsCount", "LeaderCount", "OfflinePartitionsCount", "PartitionCount")
METERS = ("IsrShrinksPerSec", "IsrExpandsPerSec")


def orders_cluster(rate: str) -> str:
    """The stories' cluster: four brokers, one topic of four partitions, RF 3, min ISR 2, produced at ``rate``."""
    return f"""cluster:
  brokers: 4
topics:
  - name: orders
    partitions: 4
    replication_factor: 3
    min_insync_replicas: 2
    assignment: [[1, 2, 3], [2, 3, 4], [3, 4, 1], [4, 1, 2]]
    produce_rate: {rate}
"""


def story(name: str) -> str:
    release, controller = CLUSTERS[name]
    fail = ("  - {at: 60s, fail_partition: {topic: orders, partition: 2, broker: 4, error: unexpected}}\n"
            if release >= "2.3" or release == "4.0" else "")
    kraft = f"  controller: {controller}\n" if controller else ""
    # before 0.10.2 a fetch that finds new messages never catches up (docs/semantics.md §1.1): at 400 messages a
    # second every follower leaves at each ISR check and rejoins, and the reader then counts the controller's
    # unlogged ISR change at a move's end as the leader's shrink (0.10's removeReplicaFromIsr has no line it
    # reads). Half a message a second keeps the 0.10 story to its stall and moves.
    rate = "512B/s" if release == "0.10" else "400KB/s"
    return f"""name: {name}
seed: 11
duration: 90s
tick: 1s
kafka:
  version: "{release}"
{kraft}{orders_cluster(rate)}    message_size: 1KiB
    initial_size: 1MB
events:
  - {{at: 5s, stall_follower: {{broker: 2, for: 45s}}}}
  - at: 20s
    reassign:
      partitions:
        - {{topic: orders, partition: 0, replicas: [4, 2, 3]}}
        - {{topic: orders, partition: 1, replicas: [1, 3, 4]}}
{fail}"""


def keyed(path: Path) -> dict[tuple, float]:
    return {(r["cluster"], r["ts_ms"], r["broker"], r["name"]): r["value"] for r in pq.read_table(path).to_pylist()}


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    """Analyzed through the CLI in its own process: a fresh JVM, as an operator runs it (the fleet is the
    largest Spark job of the test run). Its short read runs C1 alone (session.java_options), whose 48 MB
    code cache this reader filled ("CodeCache is full. Compiler has been disabled", then a task failed):
    the JVM's log must not say so with session.C1_CODE_CACHE."""
    root = tmp_path_factory.mktemp("roundtrip")
    for name in CLUSTERS:
        path = root / f"{name}.yaml"
        path.write_text(story(name))
        simulate(path, root / name, logs=True)
    out = root / "analyzed"
    topics = [arg for name in CLUSTERS for arg in ("--topics", str(root / name / SNAPSHOTS / DESCRIBE_START))]
    done = subprocess.run([sys.executable, "-m", "replicaflow.cli", "-q", "analyze", "--logs",
                           str(root / "v*" / "logs"), *topics, "--cluster-from-path", "--topics-at", "start",
                           "--out", str(out)], capture_output=True, text=True, timeout=1500,
                          env={**os.environ, "REPLICAFLOW_SPARK_LOG": str(root / "spark.log")})
    assert done.returncode == 0, done.stderr[-3000:]
    assert "CodeCache" not in (root / "spark.log").read_text(errors="replace")
    return root, out


def metas(out: Path) -> dict[str, dict]:
    return {m["cluster"]: m for m in json.loads((out / "telemetry" / "_metas.json").read_text())}


def mismatches(fleet, shorts: tuple[str, ...]) -> tuple[dict, list]:
    root, out = fleet
    analysis = keyed(out / "analysis" / "broker_metrics")
    names = {jmx(n) for n in shorts}
    truth: dict = {}
    for cluster in CLUSTERS:
        meta = metas(out)[cluster]
        truth.update({k: v for k, v in keyed(root / cluster / "truth" / "broker_metrics").items()
                      if k[3] in names and k[1] <= meta["end_ms"]})
    compared = {k: v for k, v in analysis.items() if k[3] in names}
    bad = sorted((k, truth.get(k), compared.get(k)) for k in truth.keys() | compared.keys()
                 if truth.get(k) != compared.get(k))
    print(f"\n{len(truth)} truth rows over {len(CLUSTERS)} clusters, {len(bad)} mismatches")
    for (cluster, name), n in sorted(Counter((k[0], k[3].split("name=")[1]) for k, _, _ in bad).items()):
        print(f"  {cluster} {name}: {n}, first {next(b for b in bad if b[0][0] == cluster and b[0][3].endswith(name))}")
    assert {k[0] for k in truth} == set(CLUSTERS)
    return truth, bad


def test_metrics_logs_cannot_know_are_not_written(fleet):
    """docs/real-cluster.md: no log line carries offsets or bytes, so ``analysis/broker_metrics`` holds no
    MaxLag, ReassignmentMaxLag or byte-meter row for a cluster rebuilt from its logs (``load.meta_row``); a 0
    there read "no lag" to anyone reading the table."""
    from replicaflow.model.metrics import unknown_metrics

    _, out = fleet
    rows = pq.read_table(out / "analysis" / "broker_metrics", columns=["cluster", "name"]).to_pylist()
    written = {(r["cluster"], r["name"]) for r in rows}
    for cluster, meta in metas(out).items():
        unknown = unknown_metrics(meta["provenance"])
        assert jmx("MaxLag") in unknown and jmx("ReassignmentBytesInPerSec") in unknown
        assert not {(cluster, n) for n in unknown} & written, cluster
        assert (cluster, jmx("UnderReplicatedPartitions")) in written


def test_gauges_equal_truth_from_logs_alone(fleet):
    truth, bad = mismatches(fleet, GAUGES)
    assert not bad
    # not trivially healthy: URP on every release, leaders and replicas counted (AtMinIsr is 2.4+, KIP-427)
    for short in ("UnderReplicatedPartitions", "LeaderCount", "PartitionCount"):
        peaks = {k[0] for k, v in truth.items() if k[3] == jmx(short) and v > 0}
        assert peaks == set(CLUSTERS), short


def test_isr_meters_equal_truth_from_logs_alone(fleet):
    """Before 2.6 the leader line names no ISR: the old leader's expansion logged in the same millisecond
    as the new leader's line (another broker's file) must count on the old leader (ingest/rebuild.py,
    ``_instant_order``); it was lost on 0.10-2.4 while any ISR row numbered after a leader line was
    taken as that line's own."""
    truth, bad = mismatches(fleet, METERS)
    assert not bad
    for short in METERS:
        peaks = {k[0] for k, v in truth.items() if k[3] == jmx(short) and v > 0}
        # KRaft before metadata 3.6 answers the leader's own shrink with a new leader epoch, which the leader
        # takes from the metadata record, not as its shrink (docs/semantics.md §6): v35k counts none
        assert peaks == set(CLUSTERS) - ({"v35k"} if short == "IsrShrinksPerSec" else set()), short


def test_version_inferred_from_log_forms_bounds_the_release(fleet):
    """The earliest release the log forms allow, never later than the simulated one."""
    _, out = fleet
    for name, (release, _) in CLUSTERS.items():
        meta = metas(out)[name]
        assert meta["kafka_version_source"] == "logs"
        inferred = tuple(map(int, meta["kafka_version"].split(".")))
        real = tuple(map(int, release.split(".")))
        assert inferred <= real
        if meta["kafka_version_last"]:
            assert real <= tuple(map(int, meta["kafka_version_last"].split(".")))
        assert meta["provenance"]["replica_offsets"] == "unknown"
