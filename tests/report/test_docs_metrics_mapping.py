"""docs/report.md's OpenMetrics mapping names every family metrics.om can hold, and its alert section
counts the rules alerts/replicaflow.rules.yaml has (an operator reads the docs to build dashboards)."""

from __future__ import annotations

from pathlib import Path

from replicaflow.model.metrics import BROKER_METRICS

ROOT = Path(__file__).resolve().parents[2]
NUMBERS = {8: "Eight"}


def _section(text: str, title: str) -> str:
    start = text.index(f"## {title}")
    return text[start:text.index("\n## ", start + 1)]


def test_every_broker_metric_is_in_the_mapping_table():
    table = _section((ROOT / "docs/report.md").read_text(encoding="utf-8"), "OpenMetrics mapping")
    missing = [m.short for m in BROKER_METRICS
               if m.prometheus.removesuffix("_total") not in table  # its own row, or one of a group's:
               and f"`{m.short}`" not in table and f"name={m.short}" not in table]
    assert missing == []


def test_the_alert_section_counts_the_rules():
    rules = (ROOT / "alerts/replicaflow.rules.yaml").read_text(encoding="utf-8").count("- alert:")
    section = _section((ROOT / "docs/report.md").read_text(encoding="utf-8"), "Alert rules")
    assert f"{NUMBERS[rules]} rules" in section
    assert "sum(kafka_controller" not in section  # the rule sums by (cluster)
