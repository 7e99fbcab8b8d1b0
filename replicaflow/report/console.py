"""The headline numbers as the terminal shows them after `analyze`, `run` and `demo` (rich tables).

Rendered from the pipeline's summary (``analysis/_summary.json``) as it is; minutes are
partition-minutes (the sum of incident durations).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.table import Table

from replicaflow.report.stories import StoryPair, what_changed


def analyze_table(summary: Mapping[str, dict]) -> Table:
    """One row per cluster."""
    table = Table(title="replicaflow analyze", show_lines=False)
    for col in ("cluster", "peak URP", "peak under-min-ISR", "under-min-ISR min", "offline min", "incidents",
                "reassignments"):
        table.add_column(col, justify="left" if col in ("cluster", "incidents", "reassignments") else "right")
    for cluster, s in summary.items():
        incidents = ", ".join(f"{k} {v}" for k, v in s["incidents"].items() if v) or "none"
        moves = ", ".join(f"{k} {v}" for k, v in s["reassignments"].items() if v) or "none"
        table.add_row(cluster, str(s["peak_urp"]), str(s["peak_under_min_isr"]),
                      f"{s['under_min_isr_minutes']:.1f}", f"{s['offline_minutes']:.1f}", incidents, moves)
    return table


def _incidents(h: dict) -> int:
    return sum(h["incidents"].values())


def _moves(h: dict) -> str:
    """Completed of all adding replicas ('-' without a reassignment)."""
    total = sum(h["reassignments"].values())
    return f"{h['reassignments']['completed']}/{total}" if total else "-"


def demo_table(stories: Sequence[StoryPair], summary: Mapping[str, dict],
               timings: Mapping[str, float]) -> tuple[Table, list[str]]:
    """The before → after numbers of each story, and the sentences (rich markup) that say what changed."""
    table = Table(title=f"replicaflow demo ({timings['total']:.1f}s: simulate {timings['simulate']:.1f}s, "
                        f"analyze {timings['analyze']:.1f}s, report {timings['report']:.1f}s)")
    for col in ("story", "Kafka", "peak URP", "URP min", "under-min-ISR min", "incidents", "moves done",
                "ISR shrinks", "failed partitions"):
        table.add_column(col, justify="left" if col in ("story", "Kafka") else "right")
    sentences = []
    for s in stories:
        b, a = summary[s.before], summary[s.after]
        table.add_row(s.key.upper(), f"{b['kafka_version']} → {a['kafka_version']}", f"{b['peak_urp']} → {a['peak_urp']}",
                      f"{b['urp_minutes']:.1f} → {a['urp_minutes']:.1f}",
                      f"{b['under_min_isr_minutes']:.1f} → {a['under_min_isr_minutes']:.1f}",
                      f"{_incidents(b)} → {_incidents(a)}", f"{_moves(b)} → {_moves(a)}",
                      f"{b['isr_shrinks']} → {a['isr_shrinks']}",
                      f"{b['peak_failed_partitions']} → {a['peak_failed_partitions']}")
        sentences.append(f"[bold]{s.key.upper()}[/]: " + what_changed(s.key, b, a))
    return table, sentences
