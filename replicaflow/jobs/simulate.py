"""`replicaflow simulate`: a scenario → ``telemetry/``, ``truth/`` (and ``logs/``), committed together."""

from __future__ import annotations

from pathlib import Path

from replicaflow.errors import out_of_memory
from replicaflow.sim.runner import simulate as run_simulation
from replicaflow.sim.scenario import DEFAULT_MAX_WORK, load_scenario
from replicaflow.telemetry.outputs import ANALYSIS, REPORT, SIMULATION, Commit


def folders_written(logs: bool) -> tuple[str, ...]:
    """The folders ``simulate`` writes in its output directory, as the CLI names them."""
    return SIMULATION if logs else SIMULATION[:2]


def simulate(scenario: Path, out: Path, logs: bool = False, progress: bool = True,
             max_work: int | None = None) -> Path:
    """Simulate ``scenario`` into ``out``; returns ``out``. The scenario and ``out`` are checked before the
    engine starts; an analysis or report already in ``out`` describes other telemetry and is dropped."""
    loaded = load_scenario(Path(scenario), max_work=max_work or DEFAULT_MAX_WORK)
    try:
        with Commit(out, writes=SIMULATION, drops=ANALYSIS + REPORT).staged() as stage:
            run_simulation(loaded, stage, logs=logs, progress=progress)
    except MemoryError:  # the staging folder is gone (Commit.staged); the sentence is raised once the arrays are free
        pass
    else:
        return Path(out)
    raise out_of_memory(loaded.source, len(loaded.cluster.brokers), loaded.replicas)
