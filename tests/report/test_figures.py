"""The report's charts and inputs as data: collapsing, top-N, identical step lines, markers, byte rates against
the throttle, the inputs panel; and every figure of a built report is a valid Plotly figure."""

from __future__ import annotations

import json
import re

import pandas as pd
import plotly.graph_objects as go
import pyarrow as pa
import pytest

from replicaflow.model.configs import DEFAULT_BROKER, FOLLOWER_REASSIGNMENT_RATE, FOLLOWER_REPLICATION_RATE
from replicaflow.report import inputs
from replicaflow.report.build import build_report
from replicaflow.report.data import load_analysis
from replicaflow.report.figures import Marker, Series, collapse, heatmap_chart, line_chart, top_n
from replicaflow.report.sections import cluster_section
from replicaflow.report.traffic import meter_rates
from replicaflow.telemetry.io import write_parquet
from replicaflow.telemetry.schema import TELEMETRY
from tests.report.tiny import T0, write_analysis


def test_zero_or_empty_charts_become_one_sentence():
    assert collapse([Series("a", [0.0, None, 0.0]), Series("b", [0.0, 0.0, 0.0])]) == "0 throughout"
    assert collapse([Series("a", [None, None])]) == "no samples"
    assert collapse([Series("a", [0.0, 1.0])]) is None
    chart = line_chart("x", "FailedPartitionsCount", "partitions", [0, 1], [Series("a", [0.0, 0.0])])
    assert not chart.drawn and chart.sentence == "FailedPartitionsCount: 0 throughout."
    heat = heatmap_chart("h", "churn", [0, 1], ["broker 1"], [[0.0, None]])
    assert not heat.drawn and heat.sentence == "churn: 0 throughout."


def test_top_n_keeps_the_largest_and_folds_the_rest():
    lines = [Series(f"broker {i}", [float(i), float(i) + 1]) for i in range(1, 41)]
    total = Series("cluster total", [1.0, 2.0], emphasis=True)
    shown = top_n([total, *lines], n=8)
    assert [s.name for s in shown[:9]] == ["cluster total"] + [f"broker {i}" for i in range(40, 32, -1)]
    others = shown[-1]
    assert len(shown) == 10 and others.name == "others (32, total)"
    assert others.y == [float(sum(range(1, 33))), float(sum(range(1, 33)) + 32)]
    assert top_n(lines, n=8, others="max")[-1].y == [32.0, 33.0]
    assert len(top_n(lines[:9], n=8)) == 9                       # one more than N is shown, not folded


def test_identical_step_lines_are_drawn_once_under_a_joined_name():
    chart = line_chart("x", "t", "y", [0, 10_000], [Series("urp", [1.0, 0.0]), Series("reassigning", [1.0, 0.0]),
                                                    Series("offline", [0.0, 1.0])])
    names = [t["name"] for t in chart.figure["data"]]
    assert names == ["urp = reassigning", "offline"]
    dashes = [t["line"]["dash"] for t in chart.figure["data"]]
    assert len(set(dashes)) == 2                                 # told apart by dash as well as colour


def test_markers_on_the_time_axis_only_inside_its_range():
    chart = line_chart("x", "t", "y", [T0, T0 + 60_000], [Series("a", [1.0, 2.0])],
                       [Marker(T0 + 30_000, "b2 down", "broker 2 down"), Marker(T0 + 90_000, "late", "after")])
    layout = chart.figure["layout"]
    assert [s["x0"] for s in layout["shapes"]] == ["2026-01-01 00:00:30"]
    assert layout["annotations"][0]["text"] == "b2 down"
    assert layout["annotations"][0]["hovertext"] == "2026-01-01 00:00:30 UTC: broker 2 down"


def test_meter_rates_per_second_with_a_restart_and_a_gap():
    wide = pd.DataFrame({"ts_ms": [0, 10_000, 20_000, 40_000, 0, 10_000], "broker": [1, 1, 1, 1, 2, 2],
                         "ReplicationBytesInPerSec": [0.0, 50e6, 100e6, 20e6, 0.0, 10e6]})
    per = meter_rates(wide, "ReplicationBytesInPerSec", [0, 10_000, 20_000, 30_000, 40_000])
    assert per[1].tolist()[1:3] == [5e6, 5e6]
    assert pd.isna(per[1][30_000])                               # not scraped: a gap, not a zero
    assert per[1][40_000] == 20e6 / 20                           # restarted: counted from 0 over 20 s
    assert per[2][10_000] == 1e6


def _configs(root, rows):
    cols = {name: [r.get(name) for r in rows] for name in TELEMETRY["configs"].names}
    write_parquet(pa.Table.from_pydict(cols, schema=TELEMETRY["configs"]), root / "telemetry" / "configs" /
                  "part-00000.parquet")


@pytest.fixture(scope="module")
def throttled(tmp_path_factory):
    """The tiny alpha run with its telemetry beside it: a scenario's events and a throttle set then removed."""
    root = tmp_path_factory.mktemp("throttled")
    write_analysis(root, ("alpha",))
    meta = json.loads((root / "telemetry" / "_meta.json").read_text())
    meta.update(source="simulator", scenario="alpha", seed=7, brokers=[1, 2, 3, 4],
                topics=[{"name": "orders", "partitions": 2, "replication_factor": 3, "min_insync_replicas": 2,
                         "produce_rate_bps": 5e6, "initial_size_bytes": 55e6}],
                events=[{"ts_ms": T0 + 30_000, "kind": "reassign", "text": "reassign 1 partition, --throttle 2MB/s"},
                        {"ts_ms": T0 + 250_000, "kind": "broker_down", "text": "broker 4 down"}])
    (root / "telemetry" / "_meta.json").write_text(json.dumps(meta))
    base = {"cluster": "alpha", "entity_type": "broker"}
    _configs(root, [
        {**base, "ts_ms": T0 + 30_000, "seq": 1, "entity": DEFAULT_BROKER, "name": FOLLOWER_REPLICATION_RATE,
         "value": "2000000"},
        {**base, "ts_ms": T0 + 30_000, "seq": 2, "entity": "4", "name": FOLLOWER_REPLICATION_RATE, "value": "1000000"},
        {**base, "ts_ms": T0 + 30_000, "seq": 3, "entity": "4", "name": FOLLOWER_REASSIGNMENT_RATE,
         "value": "3000000"},
        {"cluster": "alpha", "entity_type": "topic", "ts_ms": T0 + 30_000, "seq": 4, "entity": "events",
         "name": "follower.replication.throttled.replicas", "value": "0:4"},
        {**base, "ts_ms": T0 + 150_000, "seq": 5, "entity": "4", "name": FOLLOWER_REPLICATION_RATE, "value": None},
    ])
    return root


def test_throttle_in_force_own_config_over_the_default(throttled):
    analysis = load_analysis(throttled)
    changes = inputs.throttles(inputs.configs(analysis, "alpha"))
    grid = [T0, T0 + 30_000, T0 + 150_000]
    assert inputs.throttle_series(changes, FOLLOWER_REPLICATION_RATE, 4, grid) == [None, 1e6, 2e6]
    assert inputs.throttle_series(changes, FOLLOWER_REPLICATION_RATE, 1, grid) == [None, 2e6, 2e6]


def test_a_move_whose_size_no_input_gave_is_not_0B_to_copy(throttled):
    """A cluster rebuilt from its logs knows its moves but no size (`bytes_to_move` null,
    docs/real-cluster.md): the panel said "0B to copy", as of an empty partition."""
    from replicaflow.report.inputs import _plan

    analysis = load_analysis(throttled)
    moves = analysis.tables["reassignments"]
    assert _plan(analysis, "alpha").endswith(", 55MB to copy")
    analysis.tables["reassignments"] = moves.assign(bytes_to_move=None)
    assert _plan(analysis, "alpha") == "1 partition, 1 adding replica onto broker 4, bytes to copy unknown"
    two = pd.concat([moves, moves.assign(replica=5, bytes_to_move=None)], ignore_index=True)
    analysis.tables["reassignments"] = two
    assert _plan(analysis, "alpha").endswith("onto brokers 4, 5, at least 55MB to copy")


def test_a_move_of_a_cluster_rebuilt_from_logs_is_unknown_not_without_leader(throttled):
    """From logs alone a move has neither bytes moved nor bytes to move (no line carries offsets or sizes):
    the table said 'n/a / ? (no leader)' of a partition whose leader the logs showed all along."""
    from replicaflow.report.tables import reassignments

    analysis = load_analysis(throttled)
    moves = analysis.tables["reassignments"]
    (row,) = reassignments(analysis, "alpha", "c0")["rows"]
    assert row["moved"].endswith("%)")
    nan = float("nan")
    analysis.tables["reassignments"] = moves.assign(bytes_to_move=nan, bytes_moved=nan, rate_bps=nan)
    (row,) = reassignments(analysis, "alpha", "c0")["rows"]
    assert (row["moved"], row["pct"], row["rate"]) == ("unknown (no offsets)", None, "–")
    analysis.tables["reassignments"] = moves.assign(bytes_to_move=nan)  # the simulator's move without a leader
    assert reassignments(analysis, "alpha", "c0")["rows"][0]["moved"].endswith(" / ? (no leader)")


def test_inputs_panel_and_markers_from_the_runs_files(throttled):
    analysis = load_analysis(throttled)
    section = cluster_section(analysis, "alpha", "c0-alpha")
    panel = {r["what"]: r for r in section["inputs"]}
    assert panel["Kafka version"]["value"] == "3.7"
    assert panel["controller"]["value"].startswith("ZooKeeper-based")
    assert panel["topic orders"]["value"] == ("2 partitions, RF 3, min ISR 2, produce 5MB/s, "
                                               "initial size 55MB per partition")
    assert panel["reassignment plan"]["value"] == ("1 partition, 1 adding replica onto broker 4, "
                                                   "55MB to copy")
    assert "follower.replication.throttled.rate 2MB/s on broker <default> from 00:00:30" in panel["throttle"]["value"]
    assert "events: follower.replication.throttled.replicas 1 replica" in panel["throttle"]["value"].split("; ")
    assert panel["throttle"]["hypothetical"]                     # a KIP-542 rate was set
    assert panel["faults injected"]["value"] == "00:04:10 broker 4 down"
    labels = [(m["time"][11:], m["label"]) for m in section["markers"]]
    assert labels == [("00:00:30", "reassign + throttle"), ("00:02:20", "moves done"),
                      ("00:02:30", "throttle off"), ("00:04:10", "b4 down")]
    done = next(m for m in section["markers"] if m["label"] == "moves done")
    assert done["text"] == "the adding replica joined the ISR (reassignment complete)"  # not 'last of 1 ...(s)'
    traffic = {c.id: c for c in section["charts"]["traffic"]}
    reassign_in = traffic["c0-alpha-traffic-ReassignmentBytesInPerSec"]
    names = [t["name"] for t in reassign_in.figure["data"]]
    assert any("follower.reassignment.throttled.rate — hypothetical (broker 4)" in n for n in names)
    assert "never shipped" in " ".join(reassign_in.notes)


def test_every_figure_is_valid_plotly_and_marks_what_kafka_never_shipped(built, throttled):
    for root in (built[0], throttled):
        html = (root / "report.html").read_text() if (root / "report.html").exists() else build_report(
            root).read_text()
        data = json.loads(re.search(r'<script type="application/json" id="report-data">(.*?)</script>', html,
                                    re.S).group(1))
        for chart in data["charts"]:
            go.Figure(chart["figure"])                          # raises on anything Plotly does not know
    analysis = load_analysis(built[0])
    gauges = cluster_section(analysis, "alpha", "c0-alpha")["charts"]["gauges"]
    assert all("hypothetical" not in g.title for g in gauges)    # tiny has no ReassignmentMaxLag
    from replicaflow.report.sections import _title

    assert _title("ReassignmentMaxLag") == "ReassignmentMaxLag — hypothetical (never shipped in Kafka)"


def test_brokers_are_listed_as_runs():
    assert inputs.id_ranges(range(1, 51)) == "1–50"
    assert inputs.id_ranges([9, 1, 2, 3, 5, 7, 8]) == "1–3, 5, 7–9"
    assert inputs.id_ranges([4]) == "4"
    # a damaged _meta.json's ids are shown as they are, not a traceback (int('²') and a 5,000-digit int() raise)
    assert inputs.id_ranges([2, "²", "1", "9" * 5000, True]) == f"1–2, ², {'9' * 5000}, True"
    assert inputs.id_ranges([2, "b-1", 1]) == "1–2, b-1"


def test_topics_set_up_alike_share_a_row_and_many_setups_are_counted(monkeypatch):
    """The benchmark's 50 identical topics were 50 rows above the summary cards; a cluster of 500 topics would
    have been 500."""
    alike = [{"name": f"t{i:03d}", "partitions": 1000, "replication_factor": 3, "min_insync_replicas": 2}
             for i in range(50)]
    rows = inputs.topic_rows([*alike, {"name": "big", "partitions": 7, "replication_factor": 2,
                                       "min_insync_replicas": 1}])
    assert rows == [("50 topics", "1000 partitions, RF 3, min ISR 2 each: t000, t001, t002, … t049"),
                    ("topic big", "7 partitions, RF 2, min ISR 1")]
    monkeypatch.setattr(inputs, "TOPIC_ROWS", 2)
    setups = [{"name": n, "partitions": p, "replication_factor": 3, "min_insync_replicas": 2}
              for n, p in (("small", 1), ("large", 10), ("mid", 5))]
    assert inputs.topic_rows(setups) == [("topic large", "10 partitions, RF 3, min ISR 2"),
                                         ("other topics", "2 topics set up 2 other ways, 6 partitions in all")]
