"""`replicaflow simulate`: run a scenario tick by tick and write telemetry, truth and (optionally) logs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from replicaflow.model.units import counted, format_duration, format_rate
from replicaflow.sim.engine import Engine
from replicaflow.sim.scenario import DEFAULT_MAX_WORK, Scenario, load_scenario
from replicaflow.sim.snapshot import describe_now, log_dirs_now
from replicaflow.telemetry.io import TelemetryWriter
from replicaflow.telemetry.outputs import SNAPSHOTS
from replicaflow.telemetry.toolformat import has_log_dirs_tool

DESCRIBE_START, DESCRIBE_END = "kafka-topics-describe-start.txt", "kafka-topics-describe-end.txt"
LOG_DIRS_END = "kafka-log-dirs-end.txt"


def run_engine(scenario: Scenario, writer: TelemetryWriter, log_events: list | None = None,
               on_tick: Callable[[int], None] | None = None, snapshots: dict[str, str] | None = None) -> Engine:
    """Run the engine from start to end (events at T before the tick and scrape at T); returns it.
    With ``snapshots``, the Kafka tool outputs an operator would have collected are added to it by file name."""
    engine = Engine(scenario, writer, log_events)

    def at_start() -> None:
        snapshots[DESCRIBE_START] = describe_now(engine.s, engine.configs, scenario.seed)

    engine.run(on_tick, on_start=at_start if snapshots is not None else None)
    if snapshots is not None:
        snapshots[DESCRIBE_END] = describe_now(engine.s, engine.configs, scenario.seed)
        if has_log_dirs_tool(scenario.version):
            snapshots[LOG_DIRS_END] = log_dirs_now(engine.s)
    return engine


def event_text(event) -> str:
    """One operator-readable line per scenario event, for the report's markers and inputs panel."""
    k = event.kind
    if k == "reassign":
        throttle = f", --throttle {format_rate(event.throttle_bps)}" if event.throttle_bps else ""
        return f"reassign {counted(len(event.partitions), 'partition')}{throttle}"
    if k in ("broker_down", "broker_up"):
        how = " (controlled shutdown)" if getattr(event, "controlled", False) else ""
        return f"broker {event.broker} {k.split('_')[1]}{how}"
    if k == "slow_network":
        caps = ", ".join(f"{side} {format_rate(v)}" for side, v in (("in", event.network_in_bps),
                                                                     ("out", event.network_out_bps)) if v is not None)
        return f"broker {event.broker} network {caps} for {format_duration(event.for_ms)}"
    if k == "fail_partition":
        return f"{event.topic}-{event.partition} fails on broker {event.broker} ({event.error})"
    if k == "produce_burst":
        return f"produce burst {event.topic} {format_rate(event.rate_bps)} for {format_duration(event.for_ms)}"
    if k == "stall_follower":
        what = f" {event.topic}" + (f"-{event.partition}" if event.partition is not None else "") if event.topic else ""
        return f"followers on broker {event.broker} stall{what}"
    if k == "config":
        def shown(name: str, value: str | None) -> str:
            if value is None:
                return "(deleted)"
            return format_rate(float(value)) if name.endswith(".rate") else value

        return f"config {event.entity_type} {event.entity}: " + ", ".join(f"{n}={shown(n, v)}" for n, v in event.configs)
    if k == "elect_leaders":
        return f"{event.election_type} leader election" + (f" of {counted(len(event.partitions), 'partition')}"
                                                           if event.partitions is not None else "")
    return {"verify": "kafka-reassign-partitions --verify", "cancel_reassignment": "cancel reassignment"}.get(k, k)


def meta_for(scenario: Scenario, engine: Engine) -> dict:
    return {
        "cluster": scenario.name, "scenario": scenario.name, "seed": scenario.seed,
        "kafka_version": scenario.kafka.version, "kip542": scenario.kafka.kip542,
        "controller": scenario.kafka.controller,
        "start_ms": scenario.start_ms, "end_ms": scenario.start_ms + scenario.duration_ms,
        "scrape_interval_ms": scenario.scrape_interval_ms, "tick_ms": scenario.tick_ms,
        "replica_lag_time_max_ms": scenario.kafka.replica_lag_time_max_ms, "source": "simulator",
        "brokers": [int(b) for b in engine.s.broker_ids],
        "topics": [{"name": t.name, "partitions": t.partitions, "replication_factor": t.replication_factor,
                    "min_insync_replicas": t.min_insync_replicas or scenario.cluster.min_insync_replicas,
                    "produce_rate_bps": t.produce_rate_bps, "initial_size_bytes": t.initial_size_bytes}
                   for t in scenario.topics],
        "events": [{"ts_ms": scenario.start_ms + e.at_ms, "kind": e.kind, "text": event_text(e)}
                   for e in scenario.events],
    }


def simulate(scenario_path: Path | Scenario, out: Path, logs: bool = False, progress: bool = False,
             max_work: int | None = None) -> Path:
    """Simulate a scenario file into ``out/telemetry``, ``out/truth`` (and ``out/logs``, ``out/snapshots``);
    returns ``out``.
    A file asking for more than ``max_work`` replica-ticks is refused before the engine starts."""
    scenario = (scenario_path if isinstance(scenario_path, Scenario)
                else load_scenario(Path(scenario_path), max_work=max_work or DEFAULT_MAX_WORK))
    if progress:
        from rich.console import Console

        console = Console(stderr=True)  # stdout holds only the paths written
        for warning in scenario.warnings:
            console.print(f"warning: {warning}", markup=False, highlight=False, soft_wrap=True)
    writer = TelemetryWriter(scenario.name)
    log_events: list | None = [] if logs else None
    snapshots: dict[str, str] | None = {} if logs else None
    if progress:
        from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

        with Progress(TextColumn("simulate [bold]{task.description}"), BarColumn(),
                      TextColumn("{task.percentage:>3.0f}%"), TimeRemainingColumn(), console=console,
                      transient=True, disable=not console.is_terminal) as bar:  # piped, a bar is one empty line
            task = bar.add_task(scenario.name, total=scenario.duration_ms)
            step = max(scenario.duration_ms // 200, scenario.tick_ms)
            engine = run_engine(scenario, writer, log_events,
                                on_tick=lambda t: bar.update(task, completed=t) if t % step == 0 else None,
                                snapshots=snapshots)
    else:
        engine = run_engine(scenario, writer, log_events, snapshots=snapshots)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    writer.write(out, meta_for(scenario, engine))
    if log_events is not None:
        from replicaflow.telemetry.logformat import write_logs

        write_logs(log_events, scenario.version, out)
    if snapshots is not None:
        (out / SNAPSHOTS).mkdir(exist_ok=True)
        for name, text in snapshots.items():
            (out / SNAPSHOTS / name).write_text(text, encoding="utf-8")
    return out
