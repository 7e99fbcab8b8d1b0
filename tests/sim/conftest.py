"""Run scenarios in memory and read their truth as pandas frames."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest
import yaml

from replicaflow.model.metrics import jmx
from replicaflow.sim.engine import Engine
from replicaflow.sim.runner import run_engine
from replicaflow.sim.scenario import Scenario, load_scenario, parse_scenario
from replicaflow.telemetry.io import TelemetryWriter

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


@dataclass
class SimRun:
    scenario: Scenario
    engine: Engine
    tables: dict

    def table(self, group: str, name: str) -> pd.DataFrame:
        return self.tables[group][name].to_pandas()

    def metric(self, short: str) -> pd.DataFrame:
        """One broker metric as a frame indexed by seconds since start, one column per broker."""
        bm = self.table("truth", "broker_metrics")
        rows = bm[bm["name"] == jmx(short)].copy()
        rows["t_s"] = (rows["ts_ms"] - self.scenario.start_ms) / 1000.0
        return rows.pivot(index="t_s", columns="broker", values="value")

    def cluster(self, short: str) -> pd.Series:
        """Cluster total of a broker metric per scrape (sum over live brokers)."""
        return self.metric(short).sum(axis=1)

    def has_metric(self, short: str) -> bool:
        return bool((self.table("truth", "broker_metrics")["name"] == jmx(short)).any())


def simulate(source: str | Path | dict, log_events: list | None = None) -> SimRun:
    if isinstance(source, dict):
        scenario = parse_scenario(source, SCENARIOS, "<test>")
    else:
        scenario = load_scenario(SCENARIOS / source if not Path(source).is_absolute() else Path(source))
    writer = TelemetryWriter(scenario.name)
    engine = run_engine(scenario, writer, log_events)
    return SimRun(scenario, engine, writer.tables())


def small(**over) -> dict:
    """A three-broker, one-partition scenario (RF 3, leader 1, 100 kB/s) to run or build hand-made states from."""
    sc = {
        "name": "small", "duration": "2m", "tick": "100ms", "scrape_interval": "1s",
        "kafka": {"version": "3.7", "replica_lag_time_max": "10s"},
        "cluster": {"brokers": 3, "network_in": "1GB/s", "network_out": "1GB/s"},
        "topics": [{"name": "t", "partitions": 1, "replication_factor": 3, "assignment": [[1, 2, 3]],
                    "produce_rate": "100KB/s", "message_size": "1KB", "initial_size": "1MB"}],
    }
    sc.update(over)
    return sc


def started(source: dict, logs: bool = True) -> tuple[Engine, TelemetryWriter, list | None]:
    """An Engine at the scenario's start (initial rows written, events at 0 applied), its writer and log records."""
    scenario = parse_scenario(source, SCENARIOS, "<test>")
    writer, log_events = TelemetryWriter(scenario.name), [] if logs else None
    engine = Engine(scenario, writer, log_events)
    engine.start()
    return engine, writer, log_events


def rows(writer: TelemetryWriter, table: str) -> list[dict]:
    """The rows of one telemetry table so far, without cluster and seq."""
    return [{k: v for k, v in r.items() if k not in ("cluster", "seq")}
            for r in writer.tables()["telemetry"][table].to_pylist()]


def scenario_dict(name: str) -> dict:
    return yaml.safe_load((SCENARIOS / name).read_text())


@pytest.fixture(scope="module")
def story():
    """Cache of simulated story scenarios for one test module."""
    cache: dict[str, SimRun] = {}

    def get(name: str) -> SimRun:
        if name not in cache:
            cache[name] = simulate(name)
        return cache[name]

    return get
