"""The report's tables stay small enough for a browser, and keep the rows an operator looks for first.

Eight hours of the benchmark's 50,000-partition cluster hold 824,000 incidents: shown whole, they made
a 160 MB report.html that headless Chromium took 40 s and 2.2 GB to render. Each table now carries at
most ``ROWS_SHOWN`` rows, chosen per table, and a note saying which and where the rest are.
"""

from __future__ import annotations

import json

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from replicaflow.model.units import format_ts_ms
from replicaflow.report import tables
from replicaflow.report.build import build_report
from replicaflow.report.data import Analysis
from replicaflow.report.inputs import markers
from replicaflow.telemetry.schema import ANALYSIS
from tests.report.tiny import T0, write_analysis


def _frame(name: str, rows: list[dict]) -> pd.DataFrame:
    return pa.Table.from_pylist(rows, schema=ANALYSIS[name]).to_pandas()


def _analysis(**frames: pd.DataFrame) -> Analysis:
    return Analysis(root=None, tables={"partition_state": _frame("partition_state", []), **frames})


def _incident(partition: int, kind: str, start_s: int, duration_s: int | None, worst: float = 1.0) -> dict:
    end = None if duration_s is None else T0 + 1000 * (start_s + duration_s)
    return dict(cluster="c", topic="t", partition=partition, kind=kind, start_ms=T0 + 1000 * start_s, end_ms=end,
                duration_ms=None if duration_s is None else 1000 * duration_s, worst_value=worst)


def test_under_the_limit_every_row_and_no_note():
    inc = _frame("incidents", [_incident(p, "urp", 100 - p, 10) for p in range(3)])
    t = tables.incidents(_analysis(incidents=inc), "c", "x")
    assert t["note"] is None
    assert [r["partition"] for r in t["rows"]] == ["t-2", "t-1", "t-0"]  # by start time


def test_incidents_name_the_brokers_out_of_the_isr_and_count_in_words():
    """Which brokers were out of the ISR as each incident began, sorted; the worst value with one noun per count
    (it read '1 replica(s) out of the ISR')."""
    rows = [{**_incident(0, "urp", 1, 10, 1.0), "out_of_sync_replicas": [2]},
            {**_incident(1, "urp", 2, 10, 2.0), "out_of_sync_replicas": [3, 2]},
            {**_incident(2, "under_min_isr", 3, 10, 1.0), "out_of_sync_replicas": [2, 3]},
            {**_incident(3, "offline", 4, 10, 3.0), "out_of_sync_replicas": [2, 3]},
            {**_incident(4, "offline", 5, 10, 1.0), "out_of_sync_replicas": []}]
    # t-3's first offline interval kept its dead leader 4 in the ISR; t-4's has no partition_state row: none named
    state = [dict(cluster="c", topic="t", partition=3, from_ms=T0 + 4000, to_ms=T0 + 14000, leader=-1,
                  leader_epoch=7, replicas=[4, 2, 3], adding=[], removing=[], isr=[4], elr=[], last_known_elr=[],
                  min_isr=1, urp=False, urp_kip352=False, urp_legacy=False, under_min_isr=False, at_min_isr=False,
                  offline=True, reassigning=False)]
    t = tables.incidents(_analysis(incidents=_frame("incidents", rows), partition_state=_frame("partition_state", state)),
                         "c", "x")
    assert [(r["partition"], r["out_of_sync"], r["worst"]) for r in t["rows"]] == [
        ("t-0", "2", "1 replica out of the ISR"), ("t-1", "2, 3", "2 replicas out of the ISR"),
        ("t-2", "2, 3", "ISR 1 below min ISR"), ("t-3", "2, 3; ISR 4 offline", "3 replicas without a leader"),
        ("t-4", "–", "1 replica without a leader")]
    assert ("out of ISR at start (broker)", "out_of_sync") in [(c["title"], c["field"]) for c in t["columns"]]


def test_incidents_keep_the_open_then_the_longest_of_every_kind(monkeypatch):
    """Twelve URP incidents crowd out no other kind: with room for 4 rows, each kind gets its turn."""
    monkeypatch.setattr(tables, "ROWS_SHOWN", 4)
    rows = [_incident(p, "urp", p, 10 + p) for p in range(12)]
    rows += [_incident(100, "urp", 50, None), _incident(200, "offline", 7, 30), _incident(201, "offline", 3, 60)]
    t = tables.incidents(_analysis(incidents=_frame("incidents", rows)), "c", "x")
    # urp's turns: the open one (t-100), then the longest (t-11); offline's: the longest (t-201), then t-200
    assert [(r["kind"], r["partition"]) for r in t["rows"]] == [
        ("offline", "t-201"), ("offline", "t-200"), ("urp", "t-11"), ("urp", "t-100")]
    assert t["note"] == ("4 of 15 shown: the open ones, then the longest, of every kind; every row is in "
                         "analysis/incidents (cut short: urp 2 of 13)")


def test_a_rare_log_line_beyond_the_first_five_thousand_is_shown():
    """The table's first rows used to be the first 5,000 lines in time: a thread_died after 6,000 ISR shrinks
    was cut. ingest/log_messages.py names the kinds; the limit is the real one."""
    shrink = [dict(cluster="c", ts_ms=T0 + i, broker=1, kind="isr_shrink", topic="t", partition=i % 50, isr=[1],
                   source="server.log", line_number=i + 1, message="Shrinking ISR") for i in range(6000)]
    died = dict(cluster="c", ts_ms=T0 + 10_000, broker=2, kind="thread_died", topic=None, partition=None, isr=None,
                source="server.log", line_number=9999, message="ReplicaFetcherThread-0-1 died")
    t, total = tables.log_events(_analysis(log_events=_frame("log_events", [*shrink, died])), "c", "x")
    assert total == 6001 and len(t["rows"]) == tables.ROWS_SHOWN == 5000
    assert t["rows"][-1]["kind"] == "thread_died"
    assert [r["where"] for r in t["rows"][:2]] == ["server.log:1", "server.log:2"]  # in time order
    assert t["note"].endswith("(cut short: isr_shrink 4,999 of 6,000)")


def test_reassignments_that_cannot_finish_come_first(monkeypatch):
    monkeypatch.setattr(tables, "ROWS_SHOWN", 3)
    base = dict(cluster="c", topic="t", replica=4, start_ms=T0, end_ms=None, bytes_moved=0.0, rate_bps=0.0,
                leader_growth_bps=0.0, eta_ms=None, throttled=False)
    moves = [dict(base, partition=0, status="completed", bytes_to_move=10.0, bytes_moved=10.0, end_ms=T0 + 5),
             dict(base, partition=1, status="progressing", bytes_to_move=100.0),
             dict(base, partition=2, status="progressing", bytes_to_move=900.0),
             dict(base, partition=3, status="stalled", bytes_to_move=50.0),
             dict(base, partition=4, status="never at this rate", bytes_to_move=50.0)]
    t = tables.reassignments(_analysis(reassignments=_frame("reassignments", moves)), "c", "x")
    assert [(r["partition"], r["status"]) for r in t["rows"]] == [
        ("t-2", "progressing"), ("t-3", "stalled"), ("t-4", "never at this rate")]
    assert t["note"].startswith("3 of 5 shown: the moves that cannot finish")


def test_unclean_elections_keep_the_largest_losses_then_the_unknown(monkeypatch):
    monkeypatch.setattr(tables, "ROWS_SHOWN", 3)
    lost = [0, 5, None, 700, 0, 0]
    ue = [dict(cluster="c", ts_ms=T0 + i, topic="t", partition=i, leader=1, leader_epoch=3, messages_lost=n)
          for i, n in enumerate(lost)]
    t = tables.unclean_elections(_analysis(unclean_elections=_frame("unclean_elections", ue)), "c", "x")
    assert [r["lost"] for r in t["rows"]] == ["5", "unknown", "700"]  # in time order


def test_rejects_keep_every_reason(monkeypatch):
    monkeypatch.setattr(tables, "ROWS_SHOWN", 2)
    rj = [dict(source="a.log", line_number=n, reason="unrecognized line", raw_line="x")
          for n in range(1, 6)]
    rj.append(dict(source="b.log", line_number=1, reason="line over 1 MiB", raw_line="y"))
    t = tables.rejects(_analysis(rejects=_frame("rejects", rj)))
    assert [r["where"] for r in t["rows"]] == ["a.log:1", "b.log:1"]
    assert "(cut short: unrecognized line 1 of 5)" in t["note"]


def test_alerts_keep_the_longest_of_every_alert(monkeypatch):
    """Eight hours of the benchmark cluster fired 1,976 alert episodes, all in the page. Now the rare alert
    (one BrokerDown among many URP episodes) keeps its row, and the rows shown stay in time order."""
    monkeypatch.setattr(tables, "ROWS_SHOWN", 3)
    urp = [dict(alert="UnderReplicatedPartitions", broker=str(b), from_ms=T0 + 1000 * b, to_ms=T0 + 1000 * b + 30_000 * b,
                peak=2.0, summary="URP") for b in range(1, 7)]
    down = dict(alert="BrokerDown", broker="10", from_ms=T0 + 500, to_ms=T0 + 500, peak=0.0, summary="down")
    t = tables.alerts([*urp, down], "x")
    assert [(r["alert"], r["broker"]) for r in t["rows"]] == [
        ("BrokerDown", "10"), ("UnderReplicatedPartitions", "5"), ("UnderReplicatedPartitions", "6")]
    assert t["rows"][1]["peak"] == "2"
    assert t["note"] == ("3 of 7 shown: the longest of every alert; Prometheus fires every one with "
                         "alerts/replicaflow.rules.yaml on metrics.om (cut short: UnderReplicatedPartitions 2 of 6)")


def test_alerts_under_the_limit_list_broker_2_before_broker_10_and_all_last():
    eps = [dict(alert="BrokerDown", broker=b, from_ms=T0, to_ms=T0, peak=0.0, summary="down") for b in ("10", "all", "2")]
    assert [r["broker"] for r in tables.alerts(eps, "x")["rows"]] == ["2", "10", "all"]
    assert tables.alerts([], "x")["rows"] == []


def test_the_page_says_which_rows_it_shows(tmp_path, monkeypatch):
    """End to end: the note is above the table in report.html and the page's data holds only the rows shown."""
    monkeypatch.setattr(tables, "ROWS_SHOWN", 2)
    write_analysis(tmp_path, ("alpha",), logs=False)
    path = tmp_path / "analysis" / "incidents"
    before = pq.read_table(path).num_rows
    assert before > 2
    html = build_report(tmp_path).read_text()
    assert f"2 of {before} shown: the open ones, then the longest, of every kind" in html
    data = json.loads(html.split('<script type="application/json" id="report-data">')[1].split("</script>")[0])
    (grid,) = [t for t in data["tables"] if t["id"].endswith("-incidents")]
    assert len(grid["rows"]) == 2


def _event(ts_ms: int, broker: int, kind: str, line: int, target: int | None = None) -> dict:
    """A ``log_events`` row of a broker-level kind (no partition)."""
    return dict(cluster="c", ts_ms=ts_ms, broker=broker, kind=kind, topic=None, partition=None, isr=None,
                source="controller.log", line_number=line, message="…", target_broker=target)


def test_a_controller_failover_in_the_logs_is_a_marker_on_the_charts():
    """A new controller (log kind controller_elected, docs/logs.md) is when partitions lose and regain leaders:
    the charts mark it with the broker elected, beside broker restarts, and it names the line it comes from. A
    broker the ZooKeeper controller lost (broker_failed, written by the controller) is marked with the lost ones."""
    log = _frame("log_events", [_event(T0 + 60_000, 1, "broker_shutdown", 3), _event(T0 + 300_000, 2,
                                "controller_elected", 7), _event(T0 + 301_000, 2, "isr_shrink", 8),
                                _event(T0 + 600_000, 2, "broker_failed", 9, target=3),
                                _event(T0 + 600_000, 2, "broker_failed", 9, target=4)])
    analysis = Analysis(root=None, tables={"log_events": log, "reassignments": _frame("reassignments", [])},
                        meta={"c": {"scrape_interval_ms": 30_000}})
    assert [(m.ts_ms - T0, m.label, m.text) for m in markers(analysis, "c", [])] == [
        (60_000, "shutdown b1", "log: broker shutdown broker 1 (controller.log:3)"),
        (300_000, "controller b2", "log: controller elected broker 2 (controller.log:7)"),
        (600_000, "broker lost b3,4", "log: broker failed broker 3,4 (controller.log:9)")]


def test_the_controller_losing_a_broker_that_shut_down_is_not_marked_as_a_loss():
    """``KafkaController.onBrokerFailure`` runs for every registration that goes, a clean shutdown's too: a
    ``broker_failed`` row within a scrape interval of that broker's own ``shut down completed`` line is left off
    the charts, so its marker does not read as a crash; the broker listed with it, which wrote no such line,
    is still marked lost (inputs._without_echoes)."""
    log = _frame("log_events", [_event(T0 + 60_000, 5, "broker_shutdown", 3),
                                _event(T0 + 61_000, 1, "broker_failed", 4, target=5),
                                _event(T0 + 61_000, 1, "broker_failed", 4, target=3),
                                _event(T0 + 400_000, 1, "broker_failed", 9, target=5)])
    analysis = Analysis(root=None, tables={"log_events": log, "reassignments": _frame("reassignments", [])},
                        meta={"c": {"scrape_interval_ms": 30_000}})
    assert [(m.ts_ms - T0, m.label, m.text) for m in markers(analysis, "c", [])] == [
        (60_000, "shutdown b5 …", "log: broker shutdown broker 5 (controller.log:3); "
                                  "log: broker failed broker 3 (controller.log:4)"),
        (400_000, "broker lost b5", "log: broker failed broker 5 (controller.log:9)")]


def test_a_stalled_move_says_since_when_it_copied_nothing():
    """A follower on broker 4 stops fetching t-3 (stall_follower) 30 s into its move, and the run ends at 5 m:
    its progress samples (10 s apart) last grow at 30 s, so it copied nothing for 4m30s. The status looks at one
    60 s window (model/progress.py), and the 'why' said 'copied nothing for a minute' whatever the time. A move
    whose samples never grew copied nothing since its first; one without samples says only the window."""
    base = dict(cluster="c", topic="t", replica=4, start_ms=T0, end_ms=None, bytes_to_move=2.3e9, rate_bps=0.0,
                leader_growth_bps=1e6, eta_ms=None, throttled=False, status="stalled")
    moves = [dict(base, partition=3, bytes_moved=627e6), dict(base, partition=5, bytes_moved=0.0),
             dict(base, partition=6, bytes_moved=0.0)]
    progress = [dict(cluster="c", ts_ms=T0 + 10_000 * i, topic="t", partition=3, replica=4,
                     bytes_moved=min(i, 3) * 209e6, bytes_remaining=None, rate_bps=None) for i in range(31)]
    progress += [dict(cluster="c", ts_ms=T0 + 10_000 * i, topic="t", partition=5, replica=4, bytes_moved=0.0,
                      bytes_remaining=None, rate_bps=None) for i in range(31)]
    t = tables.reassignments(_analysis(reassignments=_frame("reassignments", moves),
                                       reassignment_progress=_frame("reassignment_progress", progress)), "c", "x")
    why = {r["partition"]: r["why"] for r in t["rows"]}
    assert why["t-3"] == (f"copied nothing since {format_ts_ms(T0 + 30_000)}, 4m30s before the end: copies 0B/s, "
                          "the log grows 1MB/s")
    assert why["t-5"].startswith(f"copied nothing since {format_ts_ms(T0)}, 5m before the end:")
    assert why["t-6"].startswith("copied nothing over the last minute:")


def _election(ts_ms: int, kind: str, trigger: str | None, partitions: list[int], line: int) -> list[dict]:
    """The ``log_events`` rows of one ``Starting … leader election for partitions …`` line: a row per partition."""
    return [dict(_event(ts_ms, 1, kind, line), topic="t", partition=p, state=trigger) for p in partitions]


def test_leader_elections_in_the_logs_are_marked_by_what_triggered_them():
    """KafkaController.onReplicaElection (2.4+, KIP-460) says why it moves leaders: ``triggered by AutoTriggered``
    (auto.leader.rebalance.enable) or ``AdminClientTriggered`` (kafka-leader-election); the charts mark a rebalance
    apart from an operator's election, and name the partitions, not the controller that wrote the line. Before 2.4
    (no trigger) the marker says only a preferred election."""
    log = _frame("log_events", [*_election(T0 + 300_000, "preferred_election_started", "AutoTriggered", [2, 0], 5),
                                *_election(T0 + 900_000, "preferred_election_started", "AdminClientTriggered", [1], 8),
                                *_election(T0 + 1_500_000, "unclean_election_started", "AdminClientTriggered", [3], 9),
                                *_election(T0 + 2_100_000, "preferred_election_started", None, list(range(12)), 11)])
    analysis = Analysis(root=None, tables={"log_events": log, "reassignments": _frame("reassignments", [])},
                        meta={"c": {"scrape_interval_ms": 30_000}})
    assert [(m.ts_ms - T0, m.label, m.text) for m in markers(analysis, "c", [])] == [
        (300_000, "rebalance", "log: auto leader rebalance of 2 partitions (t-0, t-2) (controller.log:5)"),
        (900_000, "election", "log: preferred leader election asked by an operator (kafka-leader-election) of "
                              "1 partition (t-1) (controller.log:8)"),
        (1_500_000, "unclean", "log: unclean leader election asked by an operator (kafka-leader-election) of "
                               "1 partition (t-3) (controller.log:9)"),
        (2_100_000, "election", "log: preferred leader election of 12 partitions (t-0, t-1, t-2, t-3, t-4, t-5, … 6 "
                                "more) (controller.log:11)")]
