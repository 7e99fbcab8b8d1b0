"""Broker logs through the whole shell: the analyze job reads them with ingest/ and hands log_events and
rejects to the pipeline → a report where log text is inert data."""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from replicaflow.errors import ReplicaflowError
from replicaflow.jobs.analyze import analyze
from replicaflow.report.build import build_report
from tests.pipeline.test_errors import tiny

DATA = Path(__file__).resolve().parents[1] / "data" / "logs"


def test_markup_from_a_log_line_is_escaped_in_the_report(spark, tmp_path):
    root = tiny(tmp_path / "run")
    analyze(root, root, spark=spark, logs=[str(DATA / "xss"), str(DATA / "garbage")])
    events = pq.read_table(root / "analysis" / "log_events").to_pylist()
    rejects = pq.read_table(root / "analysis" / "rejects").to_pylist()
    shrink = [e for e in events if e["kind"] == "isr_shrink" and e["broker"] == 7]
    assert [(e["topic"], e["partition"], e["isr"], e["cluster"]) for e in shrink] == [
        ("<script>alert(1)</script>", 0, [7], "c1")]
    assert rejects and all(r["reason"] for r in rejects)
    html = build_report(root).read_text()
    # inert JSON in the data block (tests/report/test_html_chromium.py checks the table writes it as text)
    assert "\\u003cscript\\u003ealert(1)\\u003c/script\\u003e" in html
    assert "<script>alert(1)</script>" not in html
    assert [m.group(0) for m in re.finditer(r"<script[^>]*>", html)] == [
        '<script type="application/json" id="report-data">', "<script>", "<script>", "<script>"]


def test_logs_need_exactly_one_cluster(spark, tmp_path):
    a, b = tiny(tmp_path / "a", "c1"), tiny(tmp_path / "b", "c2")
    with pytest.raises(ReplicaflowError, match="exactly one telemetry directory"):
        analyze([a, b], tmp_path / "out", spark=spark, logs=[str(DATA / "xss")])
    assert not (tmp_path / "out").exists()


def test_a_log_glob_that_matches_nothing_names_it(spark, tmp_path):
    root = tiny(tmp_path / "run")
    with pytest.raises(ReplicaflowError, match="nothing-here"):
        analyze(root, root, spark=spark, logs=[str(tmp_path / "nothing-here" / "*.log")])
    assert not (root / "analysis").exists()
