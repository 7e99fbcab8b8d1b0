"""`replicaflow simulate`: run a scenario tick by tick and write telemetry, truth and (optionally) logs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from replicaflow.sim.engine import Engine
from replicaflow.sim.scenario import Scenario, load_scenario
from replicaflow.telemetry.io import TelemetryWriter


def run_engine(scenario: Scenario, writer: TelemetryWriter, log_events: list | None = None,
               on_tick: Callable[[int], None] | None = None) -> Engine:
    """Advance the engine from start to end; events at T are applied before the tick and scrape at T."""
    engine = Engine(scenario, writer, log_events)
    start, tick, scrape = scenario.start_ms, scenario.tick_ms, scenario.scrape_interval_ms
    end = start + scenario.duration_ms
    events = sorted(enumerate(scenario.events), key=lambda ie: (ie[1].at_ms, ie[0]))
    pending = 0

    def apply_due(now: int) -> None:
        nonlocal pending
        engine.run_timers(now)
        while pending < len(events) and start + events[pending][1].at_ms <= now:
            i, event = events[pending]
            engine.apply(event, now, f"{scenario.source}: events[{i}].{event.kind}")
            pending += 1
            engine.run_timers(now)

    engine.emit_initial(start)
    apply_due(start)
    engine.sync_fetchers(start)
    engine.scrape(start)
    for now in range(start + tick, end + 1, tick):
        apply_due(now)
        engine.tick(now)
        engine.sync_fetchers(now)
        if (now - start) % scrape == 0:
            engine.scrape(now)
        if on_tick is not None:
            on_tick(now - start)
    return engine


def meta_for(scenario: Scenario, engine: Engine) -> dict:
    return {
        "cluster": scenario.name, "scenario": scenario.name, "seed": scenario.seed,
        "kafka_version": scenario.kafka.version, "kip542": scenario.kafka.kip542,
        "start_ms": scenario.start_ms, "end_ms": scenario.start_ms + scenario.duration_ms,
        "scrape_interval_ms": scenario.scrape_interval_ms, "tick_ms": scenario.tick_ms,
        "replica_lag_time_max_ms": scenario.kafka.replica_lag_time_max_ms, "source": "simulator",
        "brokers": [int(b) for b in engine.s.broker_ids],
        "topics": [{"name": t.name, "partitions": t.partitions, "replication_factor": t.replication_factor}
                   for t in scenario.topics],
    }


def simulate(scenario_path: Path | Scenario, out: Path, logs: bool = False, progress: bool = False) -> Path:
    """Simulate a scenario file into ``out/telemetry``, ``out/truth`` (and ``out/logs``); returns ``out``."""
    scenario = scenario_path if isinstance(scenario_path, Scenario) else load_scenario(Path(scenario_path))
    writer = TelemetryWriter(scenario.name)
    log_events: list | None = [] if logs else None
    if progress:
        from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

        with Progress(TextColumn("simulate [bold]{task.description}"), BarColumn(),
                      TextColumn("{task.percentage:>3.0f}%"), TimeRemainingColumn(), transient=True) as bar:
            task = bar.add_task(scenario.name, total=scenario.duration_ms)
            step = max(scenario.duration_ms // 200, scenario.tick_ms)
            engine = run_engine(scenario, writer, log_events,
                                on_tick=lambda t: bar.update(task, completed=t) if t % step == 0 else None)
    else:
        engine = run_engine(scenario, writer, log_events)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    writer.write(out, meta_for(scenario, engine))
    if log_events is not None:
        from replicaflow.telemetry.logformat import write_logs

        write_logs(log_events, scenario.version, out)
    return out
