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
    ours = tmp_path / "broker-1.log"  # a line of the cluster's own: the others alone would be another cluster's
    ours.write_text("[2024-05-01 00:00:01,000] INFO [Partition a-0 broker=1] Expanding ISR from 1 to 1,7 "
                    "(kafka.cluster.Partition)\n")
    analyze(root, root, spark=spark, logs=[str(DATA / "xss"), str(DATA / "garbage"), str(ours)])
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


def test_another_clusters_logs_are_refused_before_anything_is_written(spark, tmp_path):
    """Logs that name only topics and brokers the telemetry does not hold are another cluster's (a
    wrong folder): attached, their ISR changes would be read as this cluster's. One sentence, nothing written."""
    root = tiny(tmp_path / "run")
    with pytest.raises(ReplicaflowError, match=r"^--logs: the logs' topics \(<script>alert\(1\)</script>\) include "
                       r"none of cluster 'c1''s \(a in its telemetry\): are they another cluster's logs\?$"):
        analyze(root, tmp_path / "out", spark=spark, logs=[str(DATA / "xss")])
    other = tmp_path / "server.log"  # the same topic name, written by brokers the cluster never had
    other.write_text("[2024-05-01 00:00:00,000] INFO [Partition a-0 broker=7] Shrinking ISR from 7,8 to 7 "
                     "(kafka.cluster.Partition)\n")
    with pytest.raises(ReplicaflowError, match=r"^--logs: the logs' brokers \(7\) include none of cluster 'c1''s "
                       r"\(1 in its telemetry\)"):
        analyze(root, tmp_path / "out", spark=spark, logs=[str(other)])
    assert not (tmp_path / "out").exists()


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
