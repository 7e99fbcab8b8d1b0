"""build_report: the three outputs, their headline numbers, bad input, escaping of log text."""

from __future__ import annotations

import json
import re

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from replicaflow.cli import app
from replicaflow.errors import ReplicaflowError
from replicaflow.report.build import build_report, script_json
from replicaflow.report.console import cluster_rows
from tests.report.tiny import HEADLINES, SCRIPT_TOPIC, write, write_analysis


def test_outputs_written_and_no_temporary_left(built):
    root, _ = built
    for name in ("report.html", "metrics.om", "summary.json"):
        assert (root / name).stat().st_size > 0
    assert not [p for p in root.iterdir() if p.name.startswith(".")]


def test_summary_json_is_the_pipelines_headline_numbers(built):
    """summary.json carries analysis/_summary.json of every cluster shown, one block each, nothing added."""
    root, _ = built
    s = json.loads((root / "summary.json").read_text())
    assert s == HEADLINES
    a = s["alpha"]
    assert a["peak_urp"] == 1 and a["peak_urp_legacy"] == 2 and a["peak_reassignment_induced_urp"] == 1
    assert a["under_min_isr_minutes"] == pytest.approx(50 / 60, abs=1e-3)   # orders-0 [100 s, 150 s)
    assert a["offline_minutes"] == pytest.approx(40 / 60, abs=1e-3)          # orders-1 [200 s, 240 s)


def test_the_report_renders_the_summary_and_computes_none(tmp_path):
    """The cards show what the pipeline wrote, even where the tables would say otherwise."""
    write_analysis(tmp_path, ("alpha",), logs=False)
    path = tmp_path / "analysis" / "_summary.json"
    summary = json.loads(path.read_text())
    summary["alpha"].update(isr_shrinks=41, peak_failed_partitions=7)
    path.write_text(json.dumps(summary))
    html = build_report(tmp_path).read_text()
    assert '<div class="v">41 / 2</div>' in html and '<div class="v">7</div>' in html
    assert json.loads((tmp_path / "summary.json").read_text())["alpha"]["isr_shrinks"] == 41


def test_unclean_elections_show_their_lost_messages(tmp_path):
    """analysis/unclean_elections becomes a table under the incidents and the summary's messages_lost a card;
    a run without unclean elections shows neither."""
    write_analysis(tmp_path, ("alpha",), logs=False)
    assert "Unclean leader elections" not in build_report(tmp_path).read_text()
    write("unclean_elections", [dict(cluster="alpha", ts_ms=1_767_225_649_000, topic="orders", partition=0, leader=3,
                                     leader_epoch=2, messages_lost=1990)], tmp_path)
    path = tmp_path / "analysis" / "_summary.json"
    summary = json.loads(path.read_text())
    summary["alpha"].update(unclean_elections=1, messages_lost=1990)
    path.write_text(json.dumps(summary))
    html = build_report(tmp_path).read_text()
    assert "<h3>Unclean leader elections</h3>" in html
    assert '<div class="v">1,990</div><div class="k">messages lost in 1 unclean leader election</div>' in html
    table = next(t for t in _data(html)["tables"] if t["id"].endswith("-unclean"))
    assert [(r["partition"], r["leader"], r["epoch"], r["lost"]) for r in table["rows"]] == [("orders-0", 3, 2, "1,990")]


def test_missing_summary_names_the_file_and_the_fix(tmp_path):
    write_analysis(tmp_path, ("beta",), logs=False)
    (tmp_path / "analysis" / "_summary.json").write_text("{}")
    with pytest.raises(ReplicaflowError, match=r"_summary.json: no headline numbers for cluster 'beta'; run "
                                               r"`replicaflow analyze` again"):
        build_report(tmp_path)
    (tmp_path / "analysis" / "_summary.json").unlink()
    with pytest.raises(ReplicaflowError, match=r"_summary.json: missing .*run `replicaflow analyze` again"):
        build_report(tmp_path)


def test_report_has_one_section_per_cluster_and_every_section(built):
    html = (built[0] / "report.html").read_text()
    assert "Cluster alpha" in html and "Cluster beta" in html
    for title in ("Incidents", "Partition health and URP semantics", "Reassignments", "ISR churn",
                  "Failed partitions (KIP-461)", "Broker gauges (cluster total and per broker)", "Log events"):
        assert html.count(f"<h3>{title}</h3>") == 2
    assert "none: no broker logs were ingested for this cluster." in html   # beta has no log events
    assert "none: no reassignment in this run." in html                     # beta moved nothing
    assert "55MB / 55MB (100%)" in html and "500KB/s" in html               # units of the reassignment table


def _data(html: str) -> dict:
    return json.loads(re.search(r'<script type="application/json" id="report-data">(.*?)</script>', html, re.S).group(1))


def test_log_text_is_inert_data_never_a_live_tag(built):
    """Log text travels as JSON in the data block (the table library writes it as text: the Chromium test
    checks the rendered DOM); nowhere else in the page does it appear raw."""
    html = (built[0] / "report.html").read_text()
    block = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', html, re.S)
    assert "\\u003cscript\\u003ealert(1)\\u003c/script\\u003e-3" in block.group(1)
    assert SCRIPT_TOPIC not in html
    logs = {t["id"]: t for t in _data(html)["tables"]}["c0-alpha-logs"]["rows"]
    assert any(r["partition"] == f"{SCRIPT_TOPIC}-3" for r in logs)
    rejects = {t["id"]: t for t in _data(html)["tables"]}["rejects-table"]["rows"]
    assert rejects == [{"where": "server-2.log:99", "reason": "no timestamp", "raw": "garbage <b>bold</b>"}]
    # the only script elements are the report's own four: data, Plotly, Tabulator, the report's code
    assert [m.group(0) for m in re.finditer(r"<script[^>]*>", html)] == [
        '<script type="application/json" id="report-data">', "<script>", "<script>", "<script>"]


def test_script_json_cannot_close_its_element():
    text = script_json({"topic": "</script><script>alert(1)</script>", "amp": "a&b"})
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {"topic": "</script><script>alert(1)</script>", "amp": "a&b"}


def test_missing_analysis_names_the_path(tmp_path):
    with pytest.raises(ReplicaflowError, match=r"analysis: missing"):
        build_report(tmp_path)


def test_missing_required_table_names_it(tmp_path):
    write_analysis(tmp_path, ("beta",), logs=False)
    for f in (tmp_path / "analysis" / "incidents").iterdir():
        f.unlink()
    (tmp_path / "analysis" / "incidents").rmdir()
    with pytest.raises(ReplicaflowError, match=r"incidents: missing table 'incidents'"):
        build_report(tmp_path)


def test_missing_column_and_corrupt_parquet(tmp_path):
    write_analysis(tmp_path, ("beta",), logs=False)
    path = tmp_path / "analysis" / "cluster_metrics" / "part-00000.parquet"
    pq.write_table(pq.read_table(path).drop(["offline"]), path)
    with pytest.raises(ReplicaflowError, match=r"cluster_metrics: missing column offline"):
        build_report(tmp_path)
    path.write_bytes(b"not parquet")
    with pytest.raises(ReplicaflowError, match=r"cluster_metrics: unreadable Parquet"):
        build_report(tmp_path)


def test_a_column_of_another_type_is_named(tmp_path):
    """A number column written as text passed the column check: partition_state's was a pandas KeyError
    traceback, cluster_metrics' gave a report with exit 0."""
    write_analysis(tmp_path, ("beta",), logs=False)
    path = tmp_path / "analysis" / "cluster_metrics" / "part-00000.parquet"
    t = pq.read_table(path)
    i = t.schema.get_field_index("ts_ms")
    pq.write_table(t.set_column(i, "ts_ms", pa.array([str(v) for v in t["ts_ms"].to_pylist()])), path)
    with pytest.raises(ReplicaflowError) as info:
        build_report(tmp_path)
    assert str(info.value) == (f"{tmp_path / 'analysis' / 'cluster_metrics'}: column cluster_metrics.ts_ms has "
                               "type string, expected int64")


@pytest.mark.parametrize(("content", "sentence"), [
    (b"{oops", "_summary.json:1: not valid JSON (Expecting property name enclosed in double quotes)"),
    (b'{"beta": {"peak_urp": 1},\n "beta": {"peak_urp": 2}}',
     "_summary.json:1: not valid JSON (the object starting on this line has the key 'beta' twice"),
    (b'{"beta": {"peak_urp": \xff}}', "_summary.json:1: the analysis summary is not UTF-8 text (byte 0xff"),
    (b"[" * 100_000, "_summary.json: not valid JSON (nested too deeply)"),
])
def test_bad_summary_json(tmp_path, content, sentence):
    """A damaged ``_summary.json`` is one sentence naming the file (and line), never a traceback."""
    write_analysis(tmp_path, ("beta",), logs=False)
    (tmp_path / "analysis" / "_summary.json").write_bytes(content)
    with pytest.raises(ReplicaflowError) as info:
        build_report(tmp_path)
    assert sentence in str(info.value)


@pytest.mark.parametrize(("change", "sentence"), [
    ({"scrape_interval_ms": 0}, "needs scrape_interval_ms > 0 and end_ms >= start_ms"),
    ({"end_ms": "x"}, "'end_ms' must be an integer (epoch ms), found 'x'"),
    ({"start_ms": 10**20}, "'start_ms' must be an integer (epoch ms), found 100000000000000000000"),
    ({"brokers": ["a"]}, "'brokers' must be a list of broker ids (0 to 2147483647), found ['a']"),
    ({"events": [{"kind": "broker_down"}]}, "events[0]: ts_ms: expected epoch ms between 1970 and 9999"),
    ({"replica_lag_time_max_ms": [1]}, "'replica_lag_time_max_ms' must be a non-negative integer (ms)"),
])
def test_a_meta_changed_after_analyze_is_one_sentence(tmp_path, change, sentence):
    """The report reads ``telemetry/_meta.json`` again and shows its keys: it is checked as analyze checks it
    (telemetry/checks.py). Each of these was a traceback (``range()`` step 0, ``int('x')``, ``OSError`` from a
    date past 9999, ``KeyError: 'ts_ms'``, ``float([1])``)."""
    write_analysis(tmp_path, ("beta",), logs=False)
    path = tmp_path / "telemetry" / "_meta.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **change}))
    with pytest.raises(ReplicaflowError) as info:
        build_report(tmp_path)
    assert str(info.value).startswith(f"{path}: {sentence}"), str(info.value)
    assert not (tmp_path / "report.html").exists()


@pytest.mark.parametrize(("change", "sentence"), [
    ({"incidents": None}, "incidents: expected {'urp': N, 'under_min_isr': N, 'offline': N}, found None"),
    ({"peak_urp": "x"}, "peak_urp: expected a number, found 'x'"),
    ({"offline_minutes": None}, "offline_minutes: expected a number, found None"),
    ({"reassignment_progress": {"open_moves": 1}}, "reassignment_progress: expected null or numbers open_moves, "
                                                   "bytes_moved, bytes_left"),
])
def test_headline_numbers_that_are_not_numbers_are_named(tmp_path, change, sentence):
    """The report shows ``_summary.json``'s numbers as they are; one missing or of another type was a traceback
    in the page's template or in the progress sentence."""
    write_analysis(tmp_path, ("beta",), logs=False)
    path = tmp_path / "analysis" / "_summary.json"
    summary = json.loads(path.read_text())
    path.write_text(json.dumps({"beta": {**summary["beta"], **change}}))
    with pytest.raises(ReplicaflowError) as info:
        build_report(tmp_path)
    assert str(info.value).startswith(f"{path}: cluster 'beta': {sentence}"), str(info.value)


def test_empty_analysis_is_an_error(tmp_path):
    write_analysis(tmp_path, ("beta",), logs=False)
    for name in ("broker_metrics", "cluster_metrics"):
        path = tmp_path / "analysis" / name / "part-00000.parquet"
        pq.write_table(pq.read_table(path).slice(0, 0), path)
    (tmp_path / "telemetry" / "_meta.json").unlink()
    with pytest.raises(ReplicaflowError, match=r"no cluster"):
        build_report(tmp_path)


def test_cli_report_ok_and_bad_input(tmp_path):
    write_analysis(tmp_path / "ok", ("beta",), logs=False)
    runner = CliRunner()
    res = runner.invoke(app, ["report", str(tmp_path / "ok")])
    assert res.exit_code == 0, res.output
    ok = tmp_path / "ok"
    assert res.output.splitlines() == [f"report: {ok / 'report.html'}", f"metrics: {ok / 'metrics.om'}",
                                       f"summary: {ok / 'summary.json'}"]
    res = runner.invoke(app, ["report", str(tmp_path / "nothing")])
    assert res.exit_code == 2
    assert "Traceback" not in res.output and "nothing: report directory does not exist" in res.output


def test_tables_are_conformed_to_the_contract(tmp_path):
    """Extra columns are ignored; the report reads the contract's columns only."""
    write_analysis(tmp_path, ("beta",), logs=False)
    path = tmp_path / "analysis" / "incidents" / "part-00000.parquet"
    t = pq.read_table(path)
    pq.write_table(t.append_column("extra", pa.array(["x"] * t.num_rows)), path)
    assert build_report(tmp_path).exists()


def test_every_chart_in_the_data_has_its_element(built):
    html = (built[0] / "report.html").read_text()
    ids = [c["id"] for c in _data(html)["charts"]]
    assert len(ids) == len(set(ids)) and sorted(ids) == sorted(re.findall(r'<div class="chart" id="([^"]+)"', html))


def test_names_from_data_are_plain_text_for_plotly():
    """A topic named like markup stays text in a legend (plotly reads <a href>, <b>, <br> in names)."""
    from replicaflow.report.figures import Marker, Series, line_chart

    chart = line_chart("x", "t", "y", [0, 10_000], [Series('<a href="https://x">orders</a>-0 → 4', [0.0, 1.0])],
                       [Marker(5_000, "<b>b</b>", '<a href="https://x">x</a>')])
    trace = chart.figure["data"][0]
    assert trace["name"] == '&lt;a href="https://x"&gt;orders&lt;/a&gt;-0 → 4'
    assert "<a" not in json.dumps(chart.figure)


def test_cards_write_counts_with_thousands_separators(tmp_path):
    """A 50,000-partition cluster's cards read 50,000 and 824,000, as the tables' notes do, not 824000."""
    write_analysis(tmp_path, ("alpha",), logs=False)
    path = tmp_path / "analysis" / "_summary.json"
    summary = json.loads(path.read_text())
    summary["alpha"].update(peak_urp=50000, isr_shrinks=400000, isr_expands=824000,
                            incidents={"urp": 424000, "under_min_isr": 400000, "offline": 0})
    path.write_text(json.dumps(summary))
    html = build_report(tmp_path).read_text()
    assert '<div class="v">50,000</div>' in html and '<div class="v">400,000 / 824,000</div>' in html
    assert '<div class="v">824,000</div><div class="k">incidents (URP 424,000, under-min-ISR 400,000, offline 0)' in html


def test_the_terminal_summary_writes_counts_as_the_cards_do():
    s = {**HEADLINES["alpha"], "peak_urp": 50000, "isr_shrinks": 400000, "isr_expands": 824000,
         "unclean_elections": 2, "messages_lost": None}
    rows = dict(cluster_rows(s))
    assert rows["peak URP"].startswith("50,000 ") and rows["ISR shrinks / expands"] == "400,000 / 824,000"
    assert rows["unclean elections"] == "2 (leader outside the ISR), unknown messages lost"


def test_the_terminal_summary_names_failed_partitions():
    """KIP-461: a partition a replica fetcher marked failed stays out of the ISR until its broker restarts; the
    report's card and summary.json had the peak, the terminal of `analyze` said nothing of it."""
    rows = cluster_rows({**HEADLINES["alpha"], "peak_failed_partitions": 3})
    assert dict(rows)["failed partitions"] == \
        "peak 3 (a replica fetcher marked them failed and stopped fetching them, KIP-461)"
    assert [label for label, _ in rows][-2:] == ["failed partitions", "reassignments"]
    assert "failed partitions" not in dict(cluster_rows({**HEADLINES["alpha"], "peak_failed_partitions": 0}))


def test_a_release_inferred_from_log_lines_is_said_with_the_releases_they_allow():
    """ingest/log_version.infer_version takes the earliest release the lines allow, and 3.6 to 4.x read alike:
    "Kafka: 3.6" read as if the cluster ran 3.6 when the simulator had written 3.7's lines. The terminal and
    the report's inputs panel both say the range (report/inputs.kafka_version_said)."""
    from replicaflow.report.inputs import kafka_version_said

    def kafka(**inputs) -> str:
        return dict(cluster_rows({**HEADLINES["alpha"], "kafka_version": "3.6", "inputs": inputs}))["Kafka"]

    assert kafka(source="logs", kafka_version_source="logs") == "3.6 (inferred from the log lines' forms: 3.6 or later)"
    assert kafka(kafka_version_source="logs", kafka_version_last="3.6") == "3.6 (inferred from the log lines' forms: 3.6)"
    assert kafka(kafka_version_source="option") == "3.6 (--kafka-version)"
    assert kafka_version_said("3.6.1", "version line", "3.6.1") == "3.6.1 (the logs' `Kafka version` lines: 3.6.1)"
    assert kafka_version_said("2.8.2", "version line", "3.6.1") == \
        "2.8.2 (the logs' `Kafka version` lines: 2.8.2 to 3.6.1)"
    assert kafka(source="simulator") == "3.6"
    assert kafka_version_said("2.4", "logs", "2.5") == "2.4 (inferred from the log lines' forms: 2.4 to 2.5)"
    assert kafka_version_said(None, "logs", None) == "not recorded"


def test_the_terminal_summary_writes_partition_time_as_the_cards_do(tmp_path):
    """The cards show 50s under min ISR; the terminal said '0.8 partition-min' of the same number."""
    from replicaflow.report.console import story_rows

    rows = dict(cluster_rows(HEADLINES["alpha"]))
    assert rows["under min ISR"] == "peak 1, 50s summed over partitions"
    assert rows["offline"] == "peak 1, 40s summed over partitions"
    write_analysis(tmp_path, ("alpha",), logs=False)
    html = (build_report(tmp_path)).read_text()
    assert '<div class="v">50s</div><div class="k">under min ISR, summed over partitions' in html
    story = dict(story_rows(HEADLINES["alpha"], {**HEADLINES["alpha"], "urp_minutes": 0, "under_min_isr_minutes": 90}))
    assert story["URP, summed over partitions"] == "1m30s → 0s"
    assert story["under min ISR, summed over partitions"] == "50s → 1h30m"


def test_the_broker_with_most_left_is_not_called_the_bottleneck():
    """kip542-before: four moves to broker 6 starve because the leaders' quotas (brokers 1-3) are full of
    in-sync traffic; broker 6 is where most bytes are still to arrive, not what holds them back."""
    from replicaflow.report.sections import overall_progress

    p = {"open_moves": 4, "bytes_moved": 34_979_840, "bytes_left": 6_325_967_872, "eta_ms": None,
         "moves_that_cannot_finish": 4, "bottleneck_broker": 6}
    rows = dict(cluster_rows({**HEADLINES["alpha"], "reassignment_progress": p}))
    assert "bottleneck" not in rows
    assert rows["furthest behind"] == "broker 6, receiving the most bytes still to copy"
    sentence = overall_progress({"reassignment_progress": p})
    assert "bottleneck" not in sentence and sentence.endswith("; broker 6, receiving the most bytes still to copy.")


def test_piped_summary_lines_wrap_indented_under_their_label():
    """Piped at 80 columns, the open-moves line went on at the margin ('rate' alone on a line), read as a line
    of its own by anyone splitting ``label: value`` lines."""
    from rich.console import Console

    from replicaflow.report.console import print_analyze

    p = {"open_moves": 40, "bytes_moved": 53_200, "bytes_left": 6_360_000_000, "eta_ms": None,
         "moves_that_cannot_finish": 40, "bottleneck_broker": 6}
    piped = Console(width=80, record=True, force_terminal=False)
    print_analyze(piped, {"alpha": {**HEADLINES["alpha"], "reassignment_progress": p}})
    lines = piped.export_text().splitlines()
    assert lines[0] == "replicaflow analyze: alpha" and max(map(len, lines)) <= 80
    assert all(line.startswith("  ") for line in lines[1:])
    moves = lines.index("  open moves: 40: 53.2KB moved, 6.36GB left; 40 moves cannot finish at their")
    assert lines[moves + 1] == "    rate"


def test_the_demo_writes_counts_as_the_cards_do():
    """kip164: 1,713 acks=all requests rejected, as `analyze` and the cards print it (the demo said 1713)."""
    from replicaflow.report.console import story_rows
    from replicaflow.report.stories import what_changed

    b = {**HEADLINES["alpha"], "kafka_version": "0.11", "produce_requests_rejected": 1713, "peak_urp": 10,
         "under_min_isr_minutes": 2.8, "isr_shrinks": 12_000, "peak_failed_partitions": 0}
    a = {**b, "kafka_version": "1.0", "peak_under_min_isr": 2, "produce_requests_rejected": None}
    rows = dict(story_rows(b, a))
    assert rows["acks=all requests rejected"] == "1,713 → 0" and rows["ISR shrinks"] == "12,000 → 12,000"
    assert "rejected 1,713 acks=all produce requests" in what_changed("kip164", b, a)


def test_the_terminal_names_the_worst_incidents_with_partition_start_and_length():
    """An operator's first question after "how many" is "which, since when": the analyze terminal gave counts
    only. The pipeline's ``longest_incidents`` (offline first) are printed one per row, the label once."""
    rows = cluster_rows(HEADLINES["alpha"])
    labels = [label for label, _ in rows]
    at = labels.index("longest incidents")
    assert rows[at:at + 3] == [
        ("longest incidents", "offline orders-1, 40s from 2026-01-01 00:03:20, brokers 1, 3 out of the ISR"),
        ("", "under min ISR orders-0, 50s from 2026-01-01 00:01:40, brokers 2, 3 out of the ISR"),
        ("", "under-replicated orders-0, 50s from 2026-01-01 00:01:40, brokers 2, 3 out of the ISR")]
    still = {**HEADLINES["beta"]["longest_incidents"][0], "open": True}
    assert dict(cluster_rows({**HEADLINES["beta"], "longest_incidents": [still]}))["longest incidents"] == \
        "under-replicated logs-0, 1m10s from 2026-01-01 00:01:20, still at the end, broker 2 out of the ISR"
    before = {k: v for k, v in still.items() if k != "out_of_sync_replicas"}  # a summary from before the column
    assert dict(cluster_rows({**HEADLINES["beta"], "longest_incidents": [before]}))["longest incidents"] == \
        "under-replicated logs-0, 1m10s from 2026-01-01 00:01:20, still at the end"
    assert "longest incidents" not in dict(cluster_rows({**HEADLINES["beta"], "longest_incidents": []}))


def test_the_plain_terminal_indents_a_lists_later_items_under_its_label():
    """Piped into a file, ``label: value`` lines; a row without a label (a list's later item) is indented
    under the first, not printed as ': value'."""
    import io

    from rich.console import Console

    from replicaflow.report.console import print_rows

    out = io.StringIO()
    print_rows(Console(file=out, width=80, force_terminal=False), "replicaflow analyze",
               [("alpha", [("longest incidents", "offline orders-1"), ("", "urp orders-0")])])
    assert out.getvalue().splitlines() == ["replicaflow analyze: alpha", "  longest incidents: offline orders-1",
                                           "    urp orders-0"]


def test_the_describe_a_cluster_is_rebuilt_from_is_said_with_the_instant_it_was_read_as():
    """docs/real-cluster.md: the describe output is the assignment at one instant, by default the last log
    line (``--topics-at end``); the terminal and the inputs panel never said so, and a describe taken at the
    start then read as the end moved every partition's history without a word."""
    from replicaflow.report.inputs import describe_said

    inputs = {"source": "logs", "topics_snapshot": "snap/describe.txt", "topics_at_ms": 1_767_225_900_000}
    said = "snap/describe.txt, read as the assignment at 2026-01-01 00:05:00 UTC (--topics-at; by default the last log line)"
    assert describe_said(inputs) == said
    assert dict(cluster_rows({**HEADLINES["alpha"], "inputs": inputs}))["topics describe"] == said
    assert describe_said({"source": "logs", "topics_snapshot": None, "topics_at_ms": None}) is None
    assert "topics describe" not in dict(cluster_rows(HEADLINES["alpha"]))
