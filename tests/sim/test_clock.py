"""The clock: scenario events and timers in one heap, dispatched by kind at tick boundaries (sim/clock.py)."""

from __future__ import annotations

import pytest

from replicaflow.sim.clock import Clock
from replicaflow.sim.engine import Engine
from replicaflow.sim.scenario import parse_scenario
from replicaflow.telemetry.io import TelemetryWriter
from tests.sim.conftest import SCENARIOS, small

START = 1_000_000


def events(*specs) -> tuple:
    return parse_scenario(small(events=list(specs)), SCENARIOS, "<test>").events


def recording_clock(calls: list, tick_ms: int = 100) -> Clock:
    def handler(kind):
        def record(t, *args):
            calls.append((kind, t, args[0].at_ms if args and hasattr(args[0], "at_ms") else args))
        return record

    kinds = ("broker_down", "broker_up", "verify", "session_expired", "restore_network")
    return Clock(START, tick_ms, {k: handler(k) for k in kinds})


def test_boundary_is_the_first_tick_at_or_after():
    clock = Clock(START, 100)
    assert [clock.boundary(START + d) for d in (-50, 0, 1, 99, 100, 101)] == [
        START, START, START + 100, START + 100, START + 100, START + 200]


def test_events_run_at_their_boundary_in_at_then_file_order():
    calls: list = []
    clock = recording_clock(calls)
    clock.add_events(events({"at": "250ms", "broker_up": 2}, {"at": "150ms", "broker_down": 2},
                            {"at": "200ms", "verify": {}}, {"at": "150ms", "broker_down": 3}), "<s>")
    assert clock.run_due(START + 100) == 0
    assert clock.run_due(START + 200) == 3
    # the handler gets the boundary's time; 150 ms events in file order, then the 200 ms one
    assert calls == [("broker_down", START + 200, 150), ("broker_down", START + 200, 150),
                     ("verify", START + 200, 200)]
    assert clock.run_due(START + 300) == 1 and calls[-1] == ("broker_up", START + 300, 250)


def test_timers_due_at_a_boundary_run_before_its_events_with_their_own_time():
    calls: list = []
    clock = recording_clock(calls)
    clock.add_events(events({"at": "120ms", "verify": {}}), "<s>")
    clock.schedule(START + 170, "restore_network", 4)
    clock.schedule(START + 130, "session_expired", 1, 0)
    clock.run_due(START + 200)
    # timers first (by their time, even the 170 ms one after a 120 ms event), each with its own time
    assert calls == [("session_expired", START + 130, (1, 0)), ("restore_network", START + 170, (4,)),
                     ("verify", START + 200, 120)]


def test_a_timer_an_event_makes_due_runs_before_the_next_event():
    calls: list = []
    clock = recording_clock(calls)

    def down(now, event, where):
        calls.append(("broker_down", now, where))
        clock.schedule(now, "restore_network", event.broker)

    clock.handlers["broker_down"] = down
    clock.add_events(events({"at": "100ms", "broker_down": 2}, {"at": "100ms", "verify": {}}), "f.yaml")
    clock.run_due(START + 100)
    assert calls == [("broker_down", START + 100, "f.yaml: events[0].broker_down"),
                     ("restore_network", START + 100, (2,)), ("verify", START + 100, 100)]


def test_same_time_timers_keep_the_order_they_were_scheduled_in():
    calls: list = []
    clock = recording_clock(calls)
    for b in (3, 1, 2):
        clock.schedule(START + 500, "restore_network", b)
    clock.run_due(START + 500)
    assert [c[2] for c in calls] == [(3,), (1,), (2,)]


def test_a_kind_without_handler_is_refused_when_added():
    clock = Clock(START, 100, {"verify": lambda *a: None})
    with pytest.raises(ValueError, match="no handler for 'broker_down'"):
        clock.add_events(events({"at": "1s", "broker_down": 2}), "<s>")
    with pytest.raises(ValueError, match="no handler for 'nap'"):
        clock.schedule(START, "nap")


def test_the_engine_has_a_handler_for_every_event_kind():
    """Every scenario event kind and the timers are in the engine's explicit handler table."""
    scenario = parse_scenario(small(
        cluster={"brokers": 4, "network_in": "1GB/s", "network_out": "1GB/s"},
        events=[{"at": "1s", "reassign": {"version": 1, "partitions": [{"topic": "t", "partition": 0,
                                                                         "replicas": [2, 3, 4]}]}},
                {"at": "2s", "broker_down": 3}, {"at": "3s", "broker_up": 3},
                {"at": "4s", "slow_network": {"broker": 2, "network_in": "1MB/s", "for": "1s"}},
                {"at": "5s", "fail_partition": {"topic": "t", "partition": 0, "broker": 2, "error": "storage"}},
                {"at": "6s", "produce_burst": {"topic": "t", "rate": "1MB/s", "for": "1s"}},
                {"at": "7s", "stall_follower": {"broker": 3}}, {"at": "8s", "verify": {}},
                {"at": "9s", "config": {"broker": "all", "min.insync.replicas": 2}},
                {"at": "10s", "cancel_reassignment": {}}, {"at": "11s", "elect_leaders": {}},
                {"at": "12s", "log_dir_failure": 2}]), SCENARIOS, "<t>")
    engine = Engine(scenario, TelemetryWriter("t"))
    assert {e.kind for e in scenario.events} | {"session_expired", "restore_network", "leader_rebalance",
                                                      "unclean_check", "registration_retried"} == set(engine.clock.handlers)
