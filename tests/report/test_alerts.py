"""The alert rules (report/alerts.py): the rules file is generated from them, and the evaluator the
report uses says exactly what Prometheus says — checked with `promtool test rules` on the tiny
analysis (every rule but the stalled move fires there: URP, under/at min ISR, offline, a failed partition,
ISR shrinks, and broker 4 down at 250–260 s; the stalled move is checked on hand-made samples)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pandas as pd

from replicaflow.report.alerts import RULES, episodes, evaluate, grid_of, rules_yaml
from replicaflow.report.data import load_analysis
from replicaflow.report.openmetrics import up_samples
from tests.conftest import require_tool
from tests.report.promrules import rules_test
from tests.report.tiny import T0

RULES_FILE = Path(__file__).resolve().parents[2] / "alerts" / "replicaflow.rules.yaml"


def _promtool(*args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([require_tool("promtool", "prometheus"), *args], capture_output=True, text=True,
                          timeout=300, cwd=cwd)


def _alpha(root: Path):
    analysis = load_analysis(root)
    bm = analysis.of("broker_metrics", "alpha")
    times = analysis.grid("alpha")
    up = up_samples(bm, analysis.meta, {"alpha": times})
    return grid_of(bm, up, "alpha", times)


def test_rules_file_is_generated_from_the_rules():
    assert RULES_FILE.read_text() == rules_yaml(), "regenerate: python -m replicaflow.report.alerts > alerts/…"


def test_every_rule_fires_on_the_tiny_analysis_as_prometheus_says(built_alpha, tmp_path):
    root, _ = built_alpha
    grid = _alpha(root)
    fired = evaluate(grid)
    seen = {f["alert"] for fs in fired.values() for f in fs}
    assert seen == {r.name for r in RULES} - {"ReassignmentStalled"}  # alpha's move copies: see the test below
    first = {a: min(t for t, fs in fired.items() if any(f["alert"] == a for f in fs)) - T0 for a in seen}
    assert first["BrokerDown"] == 260_000            # down at 250 s and 260 s: fires after `for: 10s`
    assert first["FailedPartitions"] == 180_000      # broker 2's failed partition from 170 s
    shutil.copy(RULES_FILE, tmp_path / "rules.yaml")
    (tmp_path / "test.yaml").write_text(rules_test("rules.yaml", (root / "metrics.om").read_text(), grid.times,
                                                   fired, tuple(r.name for r in RULES)))
    res = _promtool("test", "rules", "test.yaml", cwd=tmp_path)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-4000:]


def test_stalled_reassignment_and_shrink_rate_on_hand_made_samples(tmp_path):
    """Two brokers of a 2.5+ cluster: a move copies for 60 s then stops; shrinks at 30 s and 40 s."""
    times = list(range(0, 300_001, 10_000))
    rows = []
    for t in times:
        for b in (1, 2):
            copied = min(t, 60_000) * 100 if b == 2 else 0
            rows += [("c", t, b, "kafka.server:type=ReplicaManager,name=ReassigningPartitions", 1.0 if b == 1 else 0.0),
                     ("c", t, b, "kafka.server:type=BrokerTopicMetrics,name=ReassignmentBytesInPerSec", float(copied)),
                     ("c", t, b, "kafka.server:type=ReplicaManager,name=IsrShrinksPerSec",
                      float((t >= 30_000) + (t >= 40_000)) if b == 1 else 0.0)]
    bm = pd.DataFrame(rows, columns=["cluster", "ts_ms", "broker", "name", "value"])
    up = up_samples(bm, {}, {"c": times})
    fired = evaluate(grid_of(bm, up, "c", times))
    eps = {(e["alert"], e["from_ms"], e["to_ms"]) for e in episodes(fired)}
    # last copy at 60 s; `offset 2m` sees no increase from 180 s on; `for: 1m` → fires at 240 s
    assert ("ReassignmentStalled", 240_000, 300_000) in eps
    # from the first evaluation with a 1m-old sample (60 s) until that sample holds both shrinks (100 s)
    assert ("IsrShrinking", 60_000, 90_000) in eps
    assert not any(a == "ReassignmentStalled" and t0 < 240_000 for a, t0, _ in eps)
    from replicaflow.report.openmetrics import to_openmetrics

    om = to_openmetrics(bm, None, {}, {"c": times})
    shutil.copy(RULES_FILE, tmp_path / "rules.yaml")
    (tmp_path / "test.yaml").write_text(rules_test("rules.yaml", om, times, fired, tuple(r.name for r in RULES)))
    res = _promtool("test", "rules", "test.yaml", cwd=tmp_path)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-4000:]


def test_episodes_of_one_moment_list_broker_2_before_broker_10():
    """The alerts table listed brokers 1, 10, 11, …, 19, 2: labels were ordered as text."""
    fired = {0: [{"alert": "BrokerDown", "labels": {"broker": b}, "value": 0.0} for b in ("10", "2", "1", "all")]}
    assert [e["labels"]["broker"] for e in episodes(fired)] == ["1", "2", "10", "all"]
