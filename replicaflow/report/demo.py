"""`replicaflow demo`: the five KIP before/after stories, simulated, analyzed in one Spark job, one report.

Stages: simulate the ten story scenarios (``scenarios/kip*-{before,after}.yaml``, kept short), analyze
every telemetry directory in a single ``analyze`` call (one SparkSession, clusters told apart by the
``cluster`` column), then write ``out/report.html`` with each pair side by side and a sentence computed
from the numbers. Target: ≤ 60 s on 2 cores once installed (docs/report.md has the measured figure).
"""

from __future__ import annotations

import time
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from replicaflow.errors import ReplicaflowError
from replicaflow.report.build import build_demo_report
from replicaflow.report.data import load_analysis
from replicaflow.report.sections import headline
from replicaflow.report.stories import STORIES, what_changed
from replicaflow.telemetry.io import read_meta

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


def scenario_paths(scenarios: Path = SCENARIOS) -> list[tuple[str, Path]]:
    """(cluster name, scenario file) of every story side, in story order; a missing file is an error."""
    out = []
    for story in STORIES:
        for name in (story.before, story.after):
            path = scenarios / f"{name}.yaml"
            if not path.is_file():
                raise ReplicaflowError(f"{path}: missing story scenario for {story.title}")
            out.append((name, path))
    return out


def _incidents(h: dict) -> int:
    return sum(h["incidents"].values())


def _moves(h: dict) -> str:
    """Completed of all adding replicas ('-' without a reassignment)."""
    total = sum(h["reassignments"].values())
    return f"{h['reassignments']['completed']}/{total}" if total else "-"


def summary_table(analysis_dir: Path, metas: list[dict], timings: dict[str, float]) -> tuple[Table, list[str]]:
    """The before → after numbers of each story (minutes are partition-minutes), and the sentences that say
    what changed."""
    analysis = load_analysis(analysis_dir, metas)
    table = Table(title=f"replicaflow demo ({timings['total']:.1f}s: simulate {timings['simulate']:.1f}s, "
                        f"analyze {timings['analyze']:.1f}s, report {timings['report']:.1f}s)")
    for col in ("story", "Kafka", "peak URP", "URP min", "under-min-ISR min", "incidents", "moves done",
                "ISR shrinks", "failed partitions"):
        table.add_column(col, justify="left" if col in ("story", "Kafka") else "right")
    sentences = []
    for s in STORIES:
        b, a = headline(analysis, s.before), headline(analysis, s.after)
        table.add_row(s.key.upper(), f"{b['kafka_version']} → {a['kafka_version']}", f"{b['peak_urp']} → {a['peak_urp']}",
                      f"{b['urp_minutes']:.1f} → {a['urp_minutes']:.1f}",
                      f"{b['under_min_isr_minutes']:.1f} → {a['under_min_isr_minutes']:.1f}",
                      f"{_incidents(b)} → {_incidents(a)}", f"{_moves(b)} → {_moves(a)}",
                      f"{b['isr_shrinks']} → {a['isr_shrinks']}",
                      f"{b['peak_failed_partitions']} → {a['peak_failed_partitions']}")
        sentences.append(f"[bold]{s.key.upper()}[/]: "
                         + what_changed(s.key, b, a, analysis.meta.get(s.before, {}), analysis.meta.get(s.after, {})))
    return table, sentences


def run_demo(out: Path, master: str = "local[2]", progress: bool = True, scenarios: Path = SCENARIOS,
             spark=None) -> Path:
    """Simulate, analyze (one Spark job) and report the five stories into ``out``; returns ``out/report.html``."""
    from replicaflow.pipeline.runner import analyze
    from replicaflow.sim.runner import simulate

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    console = Console(stderr=True)
    stories = scenario_paths(scenarios)
    timings: dict[str, float] = {}
    start = time.perf_counter()
    with Progress(TextColumn("demo [bold]{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TimeElapsedColumn(), console=console, transient=True, disable=not progress) as bar:
        task = bar.add_task("simulate", total=len(stories) + 2)
        dirs = []
        for name, path in stories:
            bar.update(task, description=f"simulate {name}")
            dirs.append(simulate(path, out / name, logs=False, progress=False))
            bar.advance(task)
        timings["simulate"] = time.perf_counter() - start
        bar.update(task, description=f"analyze {len(dirs)} clusters in one Spark job")
        analyze(dirs, out, master=master, progress=False, spark=spark)
        timings["analyze"] = time.perf_counter() - start - timings["simulate"]
        bar.advance(task)
        bar.update(task, description="report")
        metas = [read_meta(d) for d in dirs]
        path = build_demo_report(STORIES, out, metas)
        bar.advance(task)
    timings["total"] = time.perf_counter() - start
    timings["report"] = timings["total"] - timings["simulate"] - timings["analyze"]
    if progress:
        table, sentences = summary_table(out, metas, timings)
        console.print(table)
        for line in sentences:
            console.print(line, highlight=False)
    return path
