"""The headline numbers as the terminal shows them after `analyze`, `run` and `demo`.

Rendered from the pipeline's summary (``analysis/_summary.json``) as it is; minutes are
partition-minutes (the sum of incident durations), shown as durations (``format_minutes``) as the
report's cards show them. Tables are narrow enough for an 80-column terminal (measures as rows, not
columns), and plain ``label: value`` lines when the output is not a terminal (piped into a file or
another tool).
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence

from rich import box
from rich.console import Console
from rich.table import Table

from replicaflow.model import progress
from replicaflow.model.units import counted, format_bytes, format_duration, format_minutes, plural
from replicaflow.report.inputs import describe_said, kafka_version_said
from replicaflow.report.stories import StoryPair, what_changed
from replicaflow.report.tables import HEALTH, out_of_sync_text

Rows = list[tuple[str, str]]
SUMMED = "summed over partitions"  # a partition-time: the cards' words and format_minutes, as the report shows it


def _count(value) -> str:
    """A count with thousands separators; None (no offsets to count from) is "unknown"."""
    return "unknown" if value is None else f"{value:,}"


def cluster_rows(s: Mapping) -> Rows:
    """The measures of one cluster, label → value."""
    moves = ", ".join(f"{k} {v}" for k, v in s["reassignments"].items() if v) or "none"
    version = s.get("kafka_version") or "?"
    inputs = s.get("inputs", {})
    said = kafka_version_said(version, inputs.get("kafka_version_source"), inputs.get("kafka_version_last"))
    rows = [("Kafka", said + (" + KIP-542 (hypothetical)" if s.get("kip542") else "")),
            *([("topics describe", describe)] if (describe := describe_said(inputs)) else []),
            ("peak URP", f"{s['peak_urp']:,} (as Kafka {version} counts it)"),
            ("reassignment-induced URP", f"peak {s['peak_reassignment_induced_urp']:,} (URP before 2.5, not since KIP-352)"),
            ("under min ISR", f"peak {s['peak_under_min_isr']:,}, {format_minutes(s['under_min_isr_minutes'])} {SUMMED}"),
            ("writes rejected", f"{s.get('produce_requests_rejected') or 0:,} acks=all requests (NOT_ENOUGH_REPLICAS)"),
            ("offline", f"peak {s['peak_offline']:,}, {format_minutes(s['offline_minutes'])} {SUMMED}"),
            ("incidents", ", ".join(f"{k} {v:,}" for k, v in s["incidents"].items() if v) or "none"),
            *longest_rows(s.get("longest_incidents") or []),
            ("ISR shrinks / expands", f"{s['isr_shrinks']:,} / {s['isr_expands']:,}"),
            ("reassignments", moves)]
    if s.get("unclean_elections") or s.get("messages_lost"):
        rows.insert(-1, ("unclean elections", f"{s.get('unclean_elections') or 0:,} (leader outside the ISR), "
                                              f"{_count(s.get('messages_lost', 0))} messages lost"))
    if s.get("peak_failed_partitions"):
        rows.insert(-1, ("failed partitions", f"peak {s['peak_failed_partitions']:,} (a replica fetcher marked them "
                                              "failed and stopped fetching them, KIP-461)"))
    p = s.get("reassignment_progress")
    if p:
        if p["moves_that_cannot_finish"]:
            eta = f"{counted(p['moves_that_cannot_finish'], 'move')} cannot finish at their rate"
        else:
            eta = f"ETA {format_duration(p['eta_ms'])}" if p["eta_ms"] is not None else "ETA unknown"
        rows.append(("open moves", f"{p['open_moves']}: {format_bytes(p['bytes_moved'])} moved, "
                                   f"{format_bytes(p['bytes_left'])} left; {eta}"))
        if p["bottleneck_broker"] is not None:
            rows.append(("furthest behind", receiving_most(p)))
    return rows


def longest_rows(longest: Sequence[Mapping]) -> Rows:
    """The pipeline's ``longest_incidents``, one row each: which partition, for how long, from when, and which
    brokers' replicas were out of the ISR as it began (an operator's first question); the report's incidents
    table has the rest. The label is on the first row only."""
    return [("longest incidents" if i == 0 else "",
             f"{HEALTH[x['kind']]} {x['topic']}-{x['partition']}, {format_duration(x['duration_ms'])} from "
             f"{x['start']}" + (", still at the end" if x["open"] else "") + _out_of_sync(x))
            for i, x in enumerate(longest)]


def _out_of_sync(incident: Mapping) -> str:
    """', broker 2 out of the ISR' (a summary written before the pipeline named them has no such key)."""
    brokers = incident.get("out_of_sync_replicas") or []
    return f", {plural(len(brokers), 'broker')} {out_of_sync_text(brokers)} out of the ISR" if brokers else ""


def receiving_most(p: Mapping) -> str:
    """The pipeline's ``bottleneck_broker``, in words: the adding side, not what holds the moves back
    (a starved move is held by its leader's quota; the table's "why" says which)."""
    return f"broker {p['bottleneck_broker']}, receiving the most bytes still to copy"


def print_rows(console: Console, title: str, sections: Sequence[tuple[str, Rows]]) -> None:
    """One two-column table per section on a terminal; plain ``label: value`` lines under the section's
    name otherwise, wrapped at the console width between words and indented on: a continuation at the
    margin read as a line of its own."""
    if not console.is_terminal:
        for name, rows in sections:
            if name:
                console.print(f"{title}: {name}", highlight=False, markup=False)
            for label, value in rows:
                line = f"  {label}: {value}" if label else f"    {value}"  # a list's later items, indented on
                console.print(textwrap.fill(line, console.width, subsequent_indent="    ",
                                            break_long_words=False, break_on_hyphens=False),
                              highlight=False, markup=False, soft_wrap=True)
        return
    for name, rows in sections:
        table = Table(title=f"{title}: {name}" if name else title, box=box.SIMPLE_HEAD, show_header=False,
                      title_justify="left", expand=False)
        table.add_column("measure", style="bold", no_wrap=True)
        table.add_column("value", overflow="fold")
        for label, value in rows:
            table.add_row(label, value)
        console.print(table)


def print_analyze(console: Console, summary: Mapping[str, dict]) -> None:
    print_rows(console, "replicaflow analyze", [(c, cluster_rows(s)) for c, s in summary.items()])


def _moves(h: dict) -> str:
    """Completed of all adding replicas ('-' without a reassignment)."""
    total = sum(h["reassignments"].values())
    return f"{h['reassignments'][progress.COMPLETED]}/{total}" if total else "-"


def story_rows(b: dict, a: dict) -> Rows:
    """before → after of one story's headline numbers, counts with thousands separators as the cards."""
    def arrow(key: str, fmt="{:,}".format) -> str:
        return f"{fmt(b.get(key) or 0)} → {fmt(a.get(key) or 0)}"

    return [("Kafka", f"{b['kafka_version']} → {a['kafka_version']}"), ("peak URP", arrow("peak_urp")),
            ("URP, summed over partitions", arrow("urp_minutes", format_minutes)),
            ("under min ISR, summed over partitions", arrow("under_min_isr_minutes", format_minutes)),
            ("acks=all requests rejected", arrow("produce_requests_rejected")),
            ("incidents", f"{sum(b['incidents'].values()):,} → {sum(a['incidents'].values()):,}"),
            ("moves done", f"{_moves(b)} → {_moves(a)}"), ("ISR shrinks", arrow("isr_shrinks")),
            ("failed partitions", arrow("peak_failed_partitions"))]


def print_demo(console: Console, stories: Sequence[StoryPair], summary: Mapping[str, dict],
               timings: Mapping[str, float]) -> None:
    """Each story's before → after numbers and the sentence that says what changed."""
    title = (f"replicaflow demo ({timings['total']:.0f}s: simulate {timings['simulate']:.0f}s, "
             f"analyze {timings['analyze']:.0f}s, report {timings['report']:.0f}s)")
    console.print(title, highlight=False, markup=False)
    for s in stories:
        b, a = summary[s.before], summary[s.after]
        print_rows(console, s.key.upper(), [("", story_rows(b, a))])
        console.print(f"{s.key.upper()}: {what_changed(s.key, b, a)}", highlight=False, markup=False,
                      soft_wrap=not console.is_terminal)
