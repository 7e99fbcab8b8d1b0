"""Round trip of the dynamic configs: simulate a throttled reassignment with --logs (ZooKeeper 2.4 and KRaft 3.7),
analyze its logs and the start describe ONLY, and every config the rebuild follows (min.insync.replicas, the KIP-73
rates and throttled-replica lists) holds the simulator's value at every instant one of them changed.

The brokers log each change with the entity's whole listing (ZooKeeper's DynamicConfigManager on every broker,
KRaft's DynamicConfigPublisher; a broker's own rates under KRaft only on that broker): the reassignment tool's
`--throttle` (rates on the moving brokers, replica lists on the topics), a later `kafka-configs --alter` of the
default rate and min ISR, and a topic's min ISR (ingest/line_tables.py, ``logged_configs``).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from replicaflow.model.configs import MIN_ISR, QUOTA_RATES, THROTTLED_REPLICAS_LISTS
from replicaflow.sim.runner import DESCRIBE_START, SNAPSHOTS, simulate

pytestmark = pytest.mark.spark

SCENARIO = Path(__file__).parent / "golden" / "scenarios" / "throttled-move.yaml"
FOLLOWED = (MIN_ISR, *QUOTA_RATES, *THROTTLED_REPLICAS_LISTS)
STORIES = {"zk24": {"version": "2.4"}, "kraft37": {"version": "3.7", "controller": "kraft"}}


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    root = tmp_path_factory.mktemp("configs")
    base = yaml.safe_load(SCENARIO.read_text())
    for name, kafka in STORIES.items():
        (root / f"{name}.yaml").write_text(yaml.safe_dump({**base, "name": name, "kafka": {**base["kafka"], **kafka}}))
        simulate(root / f"{name}.yaml", root / name, logs=True)
    out = root / "analyzed"
    topics = [arg for name in STORIES for arg in ("--topics", str(root / name / SNAPSHOTS / DESCRIBE_START))]
    done = subprocess.run([sys.executable, "-m", "replicaflow.cli", "-q", "analyze", "--logs", str(root / "*" / "logs"),
                           *topics, "--cluster-from-path", "--topics-at", "start", "--min-insync-replicas", "2",
                           "--out", str(out)], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return root, out


def in_force(rows: list[dict], at_ms: int) -> dict[tuple, str | None]:
    """{(entity_type, entity, name): value} of the configs written at or before ``at_ms`` (the last one wins)."""
    out: dict = {}
    for r in sorted(rows, key=lambda r: (r["ts_ms"], r["seq"])):
        if r["ts_ms"] <= at_ms and r["name"] in FOLLOWED:
            out[(r["entity_type"], r["entity"], r["name"])] = r["value"]
    return {k: v for k, v in out.items() if v is not None}


@pytest.mark.parametrize("name", STORIES)
def test_the_configs_the_lines_tell_hold_the_simulators_values_at_every_change(fleet, name):
    root, out = fleet
    truth = pq.read_table(root / name / "telemetry" / "configs").to_pylist()
    rebuilt = [r for r in pq.read_table(out / "telemetry" / "configs").to_pylist() if r["cluster"] == name]
    changes = sorted({r["ts_ms"] for r in truth})
    assert len(changes) >= 4  # the start, --throttle, the default's --alter, the topic's min ISR
    for at_ms in changes:
        assert in_force(rebuilt, at_ms) == in_force(truth, at_ms), at_ms
    at_alter = next(r["ts_ms"] for r in truth if r["name"] == MIN_ISR and r["value"] == "3")  # the last --alter
    final = in_force(rebuilt, at_alter)
    assert final[("broker", "<default>", "follower.replication.throttled.rate")] == "8000000"
    assert final[("topic", "orders", "leader.replication.throttled.replicas")] == "0:1,0:2,0:3,1:2,1:3,1:4"
    assert final[("topic", "orders", MIN_ISR)] == "3"
    # every broker logs each change: the rebuild keeps one row per change of a value
    assert len(rebuilt) < 2 * len(truth)
