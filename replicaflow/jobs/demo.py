"""`replicaflow demo`: the five KIP before/after stories, simulated, analyzed in one Spark job, one report.

Stages: simulate the ten story scenarios (``scenarios/<side>.yaml``, kept short), analyze every
telemetry directory in a single pipeline call (one SparkSession, clusters told apart by the
``cluster`` column), then write ``out/report.html`` with each pair side by side and a sentence
computed from the numbers. Target: ≤ 30 s on 2 cores once installed (docs/report.md has the
measured figure).
"""

from __future__ import annotations

import time
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from replicaflow.errors import ReplicaflowError
from replicaflow.pipeline.runner import analyze
from replicaflow.pipeline.session import get_spark_soon
from replicaflow.report.build import build_demo_report
from replicaflow.report.console import print_demo
from replicaflow.report.stories import STORIES
from replicaflow.sim.runner import simulate
from replicaflow.sim.scenario import Scenario, load_scenario
from replicaflow.telemetry.io import read_meta
from replicaflow.telemetry.outputs import ANALYSIS, REPORT, Commit

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


def load_stories(scenarios: Path = SCENARIOS) -> list[tuple[str, Scenario]]:
    """(cluster name, loaded scenario) of every story side, in story order, all checked before anything runs;
    a missing file is an error."""
    out = []
    for story in STORIES:
        for name in (story.before, story.after):
            path = scenarios / f"{name}.yaml"
            if not path.is_file():
                raise ReplicaflowError(f"{path}: missing story scenario for {story.title}")
            out.append((name, load_scenario(path)))
    return out


def telemetry_rows(stories: list[tuple[str, Scenario]]) -> int:
    """The telemetry rows the stories' analysis reads, known before the JVM starts (session.java_options)."""
    return sum(scenario.telemetry_rows for _, scenario in stories)


def run_demo(out: Path, master: str = "local[2]", progress: bool = True, scenarios: Path = SCENARIOS,
             spark=None) -> Path:
    """Simulate, analyze (one Spark job) and report the five stories into ``out``; returns ``out/report.html``."""
    console = Console(stderr=True)
    stories = load_stories(scenarios)
    with Commit(out, writes=[name for name, _ in stories] + list(ANALYSIS + REPORT)).staged() as stage:
        summary, timings = _stories(stories, stage, master, progress, spark, console)
    if progress:
        print_demo(console, STORIES, summary, timings)
    return Path(out) / REPORT[0]


def _stories(stories: list[tuple[str, Scenario]], out: Path, master: str, progress: bool, spark,
             console: Console) -> tuple[dict, dict[str, float]]:
    """Simulate, analyze and report every story into ``out`` (a staging folder); the summary and timings."""
    timings: dict[str, float] = {}
    start = time.perf_counter()
    with Progress(TextColumn("demo [bold]{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TimeElapsedColumn(), console=console, transient=True,
                  disable=not (progress and console.is_terminal)) as bar:  # piped, a bar is one empty line
        task = bar.add_task("simulate", total=len(stories) + 2)
        # the JVM starts meanwhile, knowing the rows it will analyze (a short run: session.java_options)
        session = (lambda: spark) if spark is not None else get_spark_soon(master, rows=telemetry_rows(stories))
        dirs = []
        for name, scenario in stories:
            bar.update(task, description=f"simulate {name}")
            dirs.append(simulate(scenario, out / name, logs=False, progress=False))
            bar.advance(task)
        timings["simulate"] = time.perf_counter() - start
        bar.update(task, description=f"analyze {len(dirs)} clusters in one Spark job")
        summary = analyze(dirs, out, master=master, progress=False, spark=session())
        timings["analyze"] = time.perf_counter() - start - timings["simulate"]
        bar.advance(task)
        bar.update(task, description="report")
        build_demo_report(STORIES, out, [read_meta(d) for d in dirs])
        bar.advance(task)
    timings["total"] = time.perf_counter() - start
    timings["report"] = timings["total"] - timings["simulate"] - timings["analyze"]
    return summary, timings
