"""The produce error meters recomputed from telemetry ``produce_errors`` (docs/metrics.md), and the headline.

FailedProduceRequestsPerSec (ReplicaManager.appendToLocalLog) and ErrorsPerSec{request=Produce,
error=NOT_ENOUGH_REPLICAS} (RequestChannel.updateRequestMetrics, 1.0+) equal the simulator's truth;
the summary's ``produce_requests_rejected`` is the meters' total over brokers.
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
from tests.sim.test_produce import _minisr_window

pytestmark = pytest.mark.spark


def test_produce_error_meters_equal_truth_and_headline_counts_the_rejections(spark, tmp_path):
    scenario = parse_scenario(_minisr_window("3.6"), SCENARIOS, "<test>")
    out = simulate(scenario, tmp_path / "sim")
    analyze([out], tmp_path / "an", spark=spark)
    names = {jmx("FailedProduceRequestsPerSec"), jmx("ErrorsPerSec")}

    def keyed(path):
        return {(r["ts_ms"], r["broker"], r["name"]): r["value"] for r in pq.read_table(path).to_pylist()
                if r["name"] in names}

    truth, analysis = keyed(out / "truth" / "broker_metrics"), keyed(tmp_path / "an" / "analysis" / "broker_metrics")
    assert truth == analysis and max(truth.values()) == 375
    summary = json.loads((tmp_path / "an" / "analysis" / "_summary.json").read_text())
    assert summary["small"]["produce_requests_rejected"] == 375
