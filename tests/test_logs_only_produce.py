"""Round trip of the rejected produce requests and the min ISR: simulate with --logs, analyze the logs and one
describe snapshot ONLY, and FailedProduceRequestsPerSec and UnderMinIsrPartitionCount equal truth/broker_metrics at
every scrape, on each form of the NotEnoughReplicas line and of the config change line (docs/logs.md).

ReplicaManager.appendToLocalLog logs every append that fails with NotEnoughReplicasException (ERROR "Error
processing append operation on partition t-p", then the exception) and marks FailedProduceRequestsPerSec for it,
in every release: the count of the lines is the meter (ingest/rebuild.py, ``_produce_errors``). A topic's
min.insync.replicas raised by `kafka-configs --alter` is logged by every broker with the topic's overrides
(DynamicConfigManager, ZkConfigManager, KRaft's DynamicConfigPublisher): the rebuilt configs follow it.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from replicaflow.model.metrics import jmx
from replicaflow.sim.runner import DESCRIBE_START, SNAPSHOTS, simulate

pytestmark = pytest.mark.spark

# one release per form of the exception's text: [t,p] before 0.10.2, t-p to 2.0, the ISR's Set from 2.1, 4.x's
RELEASES = ("0.10", "1.1", "2.4", "4.0")
FAILED, UNDER_MIN_ISR = jmx("FailedProduceRequestsPerSec"), jmx("UnderMinIsrPartitionCount")


def story(release: str) -> str:
    """Two of a partition's three replicas down: |ISR| 1 < min ISR 2, so acks=all appends fail until one is back;
    then min ISR 3 while broker 3 is still down: the partitions it holds fail again."""
    return f"""name: produce
seed: 7
duration: 60s
tick: 1s
kafka:
  version: "{release}"
cluster:
  brokers: 4
topics:
  - name: payments
    partitions: 4
    replication_factor: 3
    min_insync_replicas: 2
    assignment: [[1, 2, 3], [2, 3, 4], [3, 4, 1], [4, 1, 2]]
    produce_rate: 400KB/s
    message_size: 1KiB
    initial_size: 1MB
    acks: all
events:
  - {{at: 10s, broker_down: 3}}
  - {{at: 20s, broker_down: 4}}
  - {{at: 40s, broker_up: 4}}
  - {{at: 50s, config: {{topic: payments, min.insync.replicas: 3}}}}
"""


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    root = tmp_path_factory.mktemp("produce")
    for release in RELEASES:
        name = f"v{release.replace('.', '')}"
        (root / f"{name}.yaml").write_text(story(release))
        simulate(root / f"{name}.yaml", root / name, logs=True)
    out = root / "analyzed"
    topics = [arg for release in RELEASES for arg in
              ("--topics", str(root / f"v{release.replace('.', '')}" / SNAPSHOTS / DESCRIBE_START))]
    done = subprocess.run([sys.executable, "-m", "replicaflow.cli", "-q", "analyze", "--logs", str(root / "v*" / "logs"),
                           *topics, "--cluster-from-path", "--topics-at", "start", "--out", str(out)],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return root, out


def metric(path, name: str, cluster: str | None = None) -> dict[tuple, float]:
    """{(ts_ms, broker): value} of one metric of a broker_metrics table (one cluster's rows)."""
    return {(r["ts_ms"], r["broker"]): r["value"] for r in pq.read_table(path).to_pylist()
            if r["name"] == name and cluster in (None, r["cluster"])}


@pytest.mark.parametrize("release", RELEASES)
def test_rejected_appends_counted_from_the_leaders_lines_equal_truth(fleet, release):
    root, out = fleet
    name = f"v{release.replace('.', '')}"
    truth, got = (metric(root / name / "truth" / "broker_metrics", FAILED),
                  metric(out / "analysis" / "broker_metrics", FAILED, cluster=name))
    both = truth.keys() & got.keys()  # the scrapes of the logged period, each broker while up
    assert len(both) >= 15 and [k for k in both if truth[k] != got[k]] == []
    if release != "0.10":  # UnderMinIsrPartitionCount is 1.0+ (KIP-164)
        under, rebuilt = (metric(root / name / "truth" / "broker_metrics", UNDER_MIN_ISR),
                          metric(out / "analysis" / "broker_metrics", UNDER_MIN_ISR, cluster=name))
        assert len(under.keys() & rebuilt.keys()) >= 15
        assert [k for k in under.keys() & rebuilt.keys() if under[k] != rebuilt[k]] == []
        assert sum(v for (ts, _), v in under.items() if ts == max(t for t, _ in under)) == 3  # min ISR 3 at the end
    # partition 1 ([2, 3, 4]) on broker 2 and partition 2 ([3, 4, 1]) on broker 1 rejected from 20 s to 40 s, and
    # every partition holding broker 3 from 50 s (partition 0 [1, 2, 3] on broker 1 too)
    assert {b for (_, b), v in truth.items() if v > 0} == {1, 2}
    summary = json.loads((out / "analysis" / "_summary.json").read_text())[name]
    total = sum(max(v for (_, b), v in truth.items() if b == broker) for broker in (1, 2))
    assert summary["produce_requests_rejected"] == total > 100
    assert summary["inputs"]["provenance"]["produce_errors"] == "logs"
