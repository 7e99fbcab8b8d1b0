"""metrics.om through the real promtool: OpenMetrics parse + TSDB blocks, and the alert rules fire on time."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from replicaflow.report.data import load_analysis
from tests.conftest import require_tool
from tests.report.promrules import RULES, expected_for, rules_test
from tests.report.tiny import T0

RULES_FILE = Path(__file__).resolve().parents[2] / "alerts" / "replicaflow.rules.yaml"


def _run(*args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([require_tool("promtool", "prometheus"), *args], capture_output=True, text=True, timeout=300, cwd=cwd)


def test_rules_file_is_valid():
    res = _run("check", "rules", str(RULES_FILE))
    assert res.returncode == 0, res.stdout + res.stderr
    assert "SUCCESS: 8 rules found" in res.stdout


def test_openmetrics_loads_into_tsdb_blocks(built, tmp_path):
    om = built[0] / "metrics.om"
    res = _run("tsdb", "create-blocks-from", "openmetrics", str(om), str(tmp_path / "tsdb"))
    assert res.returncode == 0, res.stdout + res.stderr
    n_samples = sum(1 for line in om.read_text().splitlines() if not line.startswith("#"))
    # the block's listing reports every sample, and the time range of the scrapes
    res = _run("tsdb", "list", str(tmp_path / "tsdb"))
    assert res.returncode == 0, res.stderr
    rows = [r.split() for r in res.stdout.splitlines()[1:] if r.strip()]
    assert sum(int(r[4]) for r in rows) == n_samples
    n_series = len({line.rsplit(" ", 2)[0] for line in om.read_text().splitlines() if not line.startswith("#")})
    assert sum(int(r[6]) for r in rows) == n_series
    assert min(int(r[1]) for r in rows) == T0


def test_strimzi_alerts_fire_when_the_scenario_says(built_alpha, tmp_path):
    root, _ = built_alpha
    alerts = tuple(RULES)
    grid, expected = expected_for(load_analysis(root), "alpha", alerts)
    fired = {a for fs in expected.values() for f in fs for a in [f["alert"]]}
    assert fired == set(alerts)                                # the scenario exercises all four
    first = {a: min(t for t, fs in expected.items() if any(f["alert"] == a for f in fs)) - T0 for a in alerts}
    assert first == {"UnderReplicatedPartitions": 70_000, "UnderMinIsrPartitionCount": 110_000,
                     "AtMinIsrPartitionCount": 70_000,
                     "OfflinePartitions": 210_000}             # first scrape with the gauge > 0, plus `for: 10s`
    shutil.copy(RULES_FILE, tmp_path / "rules.yaml")
    om_text = (root / "metrics.om").read_text()
    (tmp_path / "test.yaml").write_text(rules_test("rules.yaml", om_text, grid, expected, alerts))
    res = _run("test", "rules", "test.yaml", cwd=tmp_path)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-4000:]
    assert "SUCCESS" in res.stdout


def test_rules_test_fails_when_the_data_disagrees(built_alpha, tmp_path):
    """The check can fail: shift every expected alert by one scrape and promtool must object."""
    root, _ = built_alpha
    grid, expected = expected_for(load_analysis(root), "alpha")
    shifted = dict(zip(grid, [[]] + [expected[t] for t in grid[:-1]], strict=True))
    shutil.copy(RULES_FILE, tmp_path / "rules.yaml")
    (tmp_path / "test.yaml").write_text(rules_test("rules.yaml", (root / "metrics.om").read_text(), grid, shifted,
                                                   tuple(RULES)))
    res = _run("test", "rules", "test.yaml", cwd=tmp_path)
    assert res.returncode != 0
