"""The produce error meters and OfflineReplicaCount recomputed from telemetry (docs/metrics.md).

FailedProduceRequestsPerSec (ReplicaManager.appendToLocalLog) and ErrorsPerSec{request=Produce,
error=NOT_ENOUGH_REPLICAS} (RequestChannel.updateRequestMetrics, 1.0+) from ``produce_errors``;
OfflineReplicaCount (ReplicaManager, KIP-112) from ``log_dirs`` and the directory of each replica in
``assignments``: a failed directory of two (JBOD) and a 2.2 follower's storage error, which fails the
directory holding the replica. Every broker metric of the runs equals the simulator's truth; the summary's
``produce_requests_rejected`` is the meters' total over brokers.
"""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from replicaflow.model.metrics import jmx
from replicaflow.pipeline.runner import analyze
from replicaflow.sim.runner import simulate
from replicaflow.sim.scenario import parse_scenario
from tests.sim.conftest import SCENARIOS
from tests.sim.test_log_dir_failure import DIRS, _failure
from tests.sim.test_produce import _minisr_window
from tests.sim.test_storage_errors import TWO_DIRS, story

pytestmark = pytest.mark.spark


def _keyed(path) -> dict:
    return {(r["cluster"], r["ts_ms"], r["broker"], r["name"]): r["value"] for r in pq.read_table(path).to_pylist()}


def test_produce_errors_and_offline_replicas_equal_truth(spark, tmp_path):
    runs = {"rejecting": _minisr_window("3.6"), "dir-failed": _failure("1.0", DIRS),
            "storage-error": story("2.2", "storage", TWO_DIRS)}
    dirs, truth = [], {}
    for name, raw in runs.items():
        out = simulate(parse_scenario({**raw, "name": name}, SCENARIOS, "<test>"), tmp_path / name)
        dirs.append(out)
        truth.update(_keyed(out / "truth" / "broker_metrics"))
    analyze(dirs, tmp_path / "an", spark=spark)
    analysis = _keyed(tmp_path / "an" / "analysis" / "broker_metrics")
    assert {k: v for k, v in analysis.items() if truth.get(k) != v} == {}
    assert truth.keys() == analysis.keys()
    failed = [v for k, v in truth.items() if k[0] == "rejecting" and k[3] == jmx("FailedProduceRequestsPerSec")]
    offline = {c: [v for k, v in truth.items() if k[0] == c and k[3] == jmx("OfflineReplicaCount")]
               for c in ("dir-failed", "storage-error")}
    assert max(failed) == 375 and max(offline["dir-failed"]) == 1 and max(offline["storage-error"]) == 1
    summary = json.loads((tmp_path / "an" / "analysis" / "_summary.json").read_text())
    assert summary["rejecting"]["produce_requests_rejected"] == 375
    assert summary["dir-failed"]["produce_requests_rejected"] == 0
