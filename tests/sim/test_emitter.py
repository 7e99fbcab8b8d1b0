"""The Emitter (sim/emitter.py) is the only writer of rows and log records, in announcement order."""

from __future__ import annotations

import ast
from pathlib import Path

import replicaflow.sim
from replicaflow.sim.state import STATE_DOWN, STATE_SHUTTING_DOWN, STATE_UP
from tests.sim.conftest import rows, small, started

SIM = Path(replicaflow.sim.__file__).parent


def test_no_other_sim_module_writes_rows_or_log_records():
    """Rows go out through TelemetryWriter.change/changes/samples and log records into the list the Emitter holds."""
    writers = {}
    for path in sorted(SIM.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                target = ast.unparse(node.func.value)
                if node.func.attr in ("change", "changes", "samples") or (
                        node.func.attr == "append" and target.endswith("logs")):
                    writers.setdefault(path.name, set()).add(f"{target}.{node.func.attr}")
    assert set(writers) == {"emitter.py"}, writers


def test_broker_states_give_a_row_each_and_the_log_record_of_that_state():
    engine, writer, logs = started(small())
    s, now = engine.s, engine.scenario.start_ms + 100
    n = len(logs)
    for state in (STATE_SHUTTING_DOWN, STATE_DOWN, STATE_UP):
        s.state[1] = state
        engine.emit.broker_state_changed(1, now)
    assert [(r["broker"], r["state"]) for r in rows(writer, "brokers")[-3:]] == [
        (2, "shutting_down"), (2, "down"), (2, "up")]
    assert [(e["kind"], e["broker"], e["ts_ms"]) for e in logs[n:]] == [
        ("broker_shutdown", 2, now), ("broker_started", 2, now)]


def test_change_rows_share_one_sequence_in_announcement_order():
    engine, writer, _ = started(small())
    now = engine.scenario.start_ms + 100
    engine.emit.assignment_changed(0, now)
    engine.emit.config_changed("topic", "t", "retention.ms", "1", now)
    engine.emit.leader_and_isr_changed(0, now)
    tables = writer.tables()["telemetry"]
    seq = {name: tables[name].column("seq").to_pylist()[-1] for name in ("assignments", "configs", "leaders", "isr")}
    assert seq["assignments"] < seq["configs"] < seq["leaders"] < seq["isr"]
