"""What `replicaflow plan` prints and writes: the candidates table, the commands to run, the JSON in
Cruise Control / Strimzi field names, and the HTML section (docs/plan.md, "Outputs")."""

from __future__ import annotations

import html
import json
import shlex
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

from replicaflow.model.units import format_bytes, format_duration, format_minutes, format_rate
from replicaflow.model.version import KafkaVersion
from replicaflow.plan.build import (  # Cruise Control's dataToMoveMB is in MB too
    MB,
    Move,
    strimzi_eta_ms,
    strimzi_nic_bps,
)
from replicaflow.plan.candidate import CandidateResult
from replicaflow.plan.choose import Choice
from replicaflow.plan.inputs import ClusterModel, isr_text
from replicaflow.report.figures import HYPOTHETICAL, PALETTE, plotly_text

# where the printed commands reach the cluster: the tools' own examples' addresses
BOOTSTRAP, ZOOKEEPER = "--bootstrap-server localhost:9092", "--zookeeper localhost:2181"
GANTT_TOP = 40  # partitions drawn one bar each; the rest fold into one "others" bar
NO_SIZES = ("every moved partition is empty: the times below copy nothing (give --log-dirs with "
            "kafka-log-dirs --describe output for the partitions' sizes)")
NO_NEW_REPLICA = "no new replica: nothing to copy (the moves only reorder or drop replicas)"
EMPTY_MOVES = "every moved partition is empty in the --log-dirs output: the times below copy nothing"


def _nothing_to_copy(cluster: ClusterModel, moves: list[Move], new: int, data: int) -> list[str]:
    """Why a plan copies nothing, when it does: no replica added (``new``), no sizes given, or empty partitions."""
    if not moves or data:
        return []
    if not new:
        return [NO_NEW_REPLICA]
    return [EMPTY_MOVES if cluster.size_bytes else NO_SIZES]


@dataclass(frozen=True)
class Bar:
    """One row of the moves' Gantt chart: a partition from its batch's start to its completion."""

    name: str
    start_ms: int
    end_ms: int
    destination: str        # the brokers it adds, e.g. "to 4" ("others" for the folded row)
    finished: bool


def gantt_bars(moves: list[Move], r: CandidateResult, top: int = GANTT_TOP) -> list[Bar]:
    """Each moved partition's bar, latest completion first; beyond ``top`` the rest fold into one bar from
    the earliest start to the latest end, so the chart keeps the moves that decide the duration."""
    bars = []
    for m in moves:
        name = f"{m.topic}-{m.partition}"
        if name not in r.start_ms:
            continue
        end = r.eta_ms.get(name)
        bars.append(Bar(name, r.start_ms[name], r.duration_ms if end is None else end,
                        "to " + ",".join(map(str, m.adding)) if m.adding else "leader only", end is not None))
    bars.sort(key=lambda b: (-b.end_ms, b.name))
    if len(bars) <= top + 1:
        return bars
    rest = bars[top:]
    return [*bars[:top], Bar(f"others ({len(rest)} partitions)", min(b.start_ms for b in rest),
                             max(b.end_ms for b in rest), "others", all(b.finished for b in rest))]


def gantt_figure(bars: list[Bar], title: str):
    """Horizontal bars on a minutes axis, one colour per destination (plotly has no Gantt on numbers)."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for i, dest in enumerate(dict.fromkeys(b.destination for b in bars)):
        rows = [b for b in bars if b.destination == dest]
        color = "#8c959f" if dest == "others" else PALETTE[i % len(PALETTE)]
        fig.add_trace(go.Bar(
            y=[plotly_text(b.name) for b in rows], base=[b.start_ms / 60_000 for b in rows],
            x=[(b.end_ms - b.start_ms) / 60_000 for b in rows], orientation="h", name=plotly_text(dest),
            marker={"color": color, "pattern": {"shape": ["" if b.finished else "/" for b in rows]}},
            hovertemplate="%{y}: %{base:.1f} to %{x:.1f} min long<extra>%{fullData.name}</extra>"))
    fig.update_layout(title=title, xaxis_title="minutes", barmode="overlay", height=max(300, 18 * len(bars) + 120),
                      yaxis={"autorange": "reversed", "categoryorder": "array",
                             "categoryarray": [plotly_text(b.name) for b in bars]})
    return fig


def proposal_summary(moves: list[Move]) -> dict:
    """Cruise Control's optimization summary fields (as Strimzi's KafkaRebalance status shows them)."""
    inter = sum(len(m.adding) for m in moves)
    return {
        "numReplicaMovements": inter,
        "dataToMoveMB": round(sum(m.size_bytes * len(m.adding) for m in moves) / MB),
        "numIntraBrokerReplicaMovements": 0,
        "intraBrokerDataToMoveMB": 0,
        "numLeaderMovements": sum(1 for m in moves if m.current_leader != m.after[0]),
    }


def data_to_move_bytes(moves: list[Move]) -> int:
    return sum(m.size_bytes * len(m.adding) for m in moves)


def result_json(r: CandidateResult) -> dict:
    return {
        "label": r.label, "throttle_bps": r.throttle_bps, "kip542": r.kip542, "finished": r.finished,
        "duration_ms": r.duration_ms if r.finished else None, "reason": r.reason,
        "bottleneck": r.bottleneck, "partitions_flags": r.flags, "batches": [
            {"start_ms": a, "end_ms": b, "partitions": n} for a, b, n in r.batches],
        "brokers": r.brokers,
        "partitions": [{"partition": name, "start_ms": r.start_ms.get(name), "eta_ms": r.eta_ms.get(name),
                        "bytes_left_to_move": r.bytes_left.get(name, 0),
                        **({"cancelled_ms": r.cancelled_ms[name]} if name in r.cancelled_ms else {})}
                       for name in sorted(set(r.eta_ms) | set(r.bytes_left) | set(r.start_ms))],
    }


def commands(plan_path: str, throttle_bps: float | None, kip542: bool, version: str,
             log_dirs: bool = False) -> list[str]:
    """The commands an operator runs for the choice: execute with the throttle, watch, verify (which clears it),
    connected as the release's tools take it (``KafkaVersion.tools_connect_to_zookeeper``). ``log_dirs``: the
    plan names a log directory; the ZooKeeper tool then moves and checks it through ``--bootstrap-server`` too
    ("bootstrap-server needs to be provided in order to reassign replica to the specified log directory")."""
    q = shlex.quote
    via = ZOOKEEPER if KafkaVersion.parse(version).tools_connect_to_zookeeper else BOOTSTRAP
    tool = f"{via} {BOOTSTRAP}" if log_dirs and via == ZOOKEEPER else via
    throttle = f" --throttle {int(throttle_bps)}" if throttle_bps else ""
    lines = [f"kafka-reassign-partitions {tool} --reassignment-json-file {q(plan_path)} --execute{throttle}"]
    if throttle_bps and kip542:
        lines.append(f"# KIP-542 is {HYPOTHETICAL}: no broker accepts reassignment.throttled.rate")
        lines.append(f"kafka-configs {via} --alter --entity-type brokers --entity-default "
                     f"--add-config reassignment.throttled.rate={int(throttle_bps)}")
    lines.append(f"kafka-configs {via} --describe --entity-type brokers")
    lines.append(f"kafka-reassign-partitions {tool} --reassignment-json-file {q(plan_path)} --verify")
    return lines


def _took(r: CandidateResult) -> str:
    if r.finished:
        return format_duration(r.duration_ms)
    return "cancelled" if r.cancelled_ms else "never"


def _unfinished(r: CandidateResult, mode: str = "") -> str:
    verb = "does not finish" if r.cancelled_ms else "never finishes"
    return f"{format_rate(r.throttle_bps or 0)}{mode} {verb}: {r.reason}"


def _row(r: CandidateResult, other: CandidateResult | None) -> str:
    took, other_took = _took(r), ("-" if other is None else _took(other))
    neck = (f"broker {r.bottleneck['broker']} {r.bottleneck['side']}" if r.bottleneck else "-")
    under = r.flags.get("under_min_isr", {}).get("peak", "-") if r.flags else "-"
    return f"{format_rate(r.throttle_bps or 0):>10} {took:>10} {other_took:>10} {under!s:>7}  {neck}"


def _other_name(kip542: bool) -> str:
    return "KIP-73" if kip542 else "KIP-542"


def console_text(cluster: ClusterModel, moves: list[Move], choice: Choice, plan_path: str | Sequence[str], kip542: bool,
                 deadline_ms: int | None, log_dirs: bool = False) -> str:
    """The terminal answer, every line within 80 columns but the commands."""
    data = data_to_move_bytes(moves)
    new = sum(len(m.adding) for m in moves)
    out = [f"moves: {_count(len(moves), 'partition')}, {_count(new, 'new replica')}, "
           f"{format_bytes(data)} to copy",
           *_nothing_to_copy(cluster, moves, new, data),
           produce_line(cluster),
           f"headroom throttle: {format_rate(choice.headroom_bps)} (broker {choice.headroom_broker})",
           "", f"{'throttle':>10} {'takes':>10} {_other_name(kip542):>10} {'<minISR':>7}  bottleneck", "-" * 72]
    out += [_row(r, o) for r, o in zip(choice.results, choice.other_modes, strict=True)]
    out.append(f"KIP-542's reassignment throttles are {HYPOTHETICAL}: replicaflow's model of them")
    out += [_unfinished(r) for r in choice.results if not r.finished]
    out += [_unfinished(r, f" under {_other_name(kip542)}") for r in choice.other_modes
            if r is not None and not r.finished]
    best = choice.recommended
    out.append("")
    if best is None:
        out.append("no throttle among the candidates lets the moves finish")
        return "\n".join(_fit(out))
    out.append(f"recommended: --throttle {format_rate(best.throttle_bps)}, takes {format_duration(best.duration_ms)}")
    out.append(f"  ({choice.why})")
    out.append(min_isr_line(best, cluster))
    if deadline_ms is not None:
        out.append(f"deadline {format_duration(deadline_ms)}: "
                   f"{'met' if best.duration_ms <= deadline_ms else 'missed'}")
    if best.bottleneck:
        b = best.bottleneck
        out.append(f"bottleneck: broker {b['broker']} {b['side']}, busy for {format_duration(b['busy_ms'])}")
        if "limit_bps" in b:
            out.append(f"  (a partition copies at most replica.fetch.max.bytes = 1MiB per fetch round trip, "
                       f"{format_rate(b['limit_bps'])}: a higher throttle does not speed it up)")
    if len(best.batches) > 1:
        for i, (a, e, n) in enumerate(best.batches, 1):
            out.append(f"batch {i}: {_count(n, 'partition')}, {format_duration(a)} to {format_duration(e)}")
    naive = naive_eta_ms(data, best.throttle_bps)
    strimzi = strimzi_eta_ms(data, len(cluster.brokers), strimzi_nic_bps(cluster, moves), best.throttle_bps)
    out.append(f"naive data/throttle: {format_duration(naive)}; Strimzi's ETA: {format_duration(strimzi)}")
    other = choice.other_mode
    if other is not None:
        mode, hyp = ("KIP-542", f" — {HYPOTHETICAL}") if other.kip542 else ("KIP-73", "")
        said = _took(other) + ("" if other.finished else f" ({other.reason})")
        out.append(f"same throttle under {mode}: {said}{hyp}")
    out.append("")
    paths = _paths(plan_path)
    lines = commands(paths[0], best.throttle_bps, kip542, cluster.version, log_dirs)
    if len(paths) > 1:
        rest = ", ".join(paths[1:]) if len(paths) <= 3 else f"{paths[1]} … {paths[-1]}"
        lines.append(f"# then {rest} the same way, each once --verify reports the batch before it complete")
    return "\n".join([*_fit(out), *(wrapped(c) for c in lines)])


def _paths(plan_path: str | Sequence[str]) -> list[str]:
    """The reassignment files the operator runs: the plan's own, or one per batch (``--max-moves-per-broker``:
    ``kafka-reassign-partitions`` has no batches of its own; given the whole plan it starts every move)."""
    return [plan_path] if isinstance(plan_path, str) else list(plan_path)


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def min_isr_line(r: CandidateResult, cluster: ClusterModel | None = None) -> str:
    """Whether acks=all producers are refused during the move (the <minISR column, in words). A partition the
    describe already shows under min ISR refuses them now, whatever the simulation (which starts every replica
    in sync) says: the line names it first."""
    already = cluster.under_min_isr() if cluster is not None else []
    if already:
        more, them = ((f" and {_count(len(already) - 1, 'more partition')} are", "them") if len(already) > 1
                      else (" is", "it"))
        first = already[0]
        return (f"acks=all: {first[0]}-{first[1]}{more} already under min ISR in the describe "
                f"({isr_text(cluster, first)}); acks=all writes to {them} fail now (NOT_ENOUGH_REPLICAS), and the "
                "plan assumes every replica in sync")
    under, at = (r.flags.get(k, {}) for k in ("under_min_isr", "at_min_isr"))
    at_now = _at_min_isr_now(cluster)
    if under.get("peak"):
        return (f"acks=all: {_count(under['peak'], 'partition')} under min ISR at the peak, "
                f"{format_minutes(under['partition_minutes'])} of refused writes summed over partitions{at_now}")
    margin = (f"; {at['peak']:,} at min ISR, one replica from refusal"
              if at.get("peak") else "")
    return f"acks=all: no partition under min ISR{margin}{at_now}"


def _at_min_isr_now(cluster: ClusterModel | None) -> str:
    """The clause for the describe's partitions at min ISR because a replica is out of their ISR (a broker behind
    on them, not down): the simulation has that replica in sync, so its at-min-ISR peak leaves them out."""
    at_now = cluster.at_min_isr_out_of_sync() if cluster is not None else []
    if not at_now:
        return ""
    first = at_now[0]
    more = f" and {_count(len(at_now) - 1, 'more partition')} are" if len(at_now) > 1 else " is"
    return (f"; {first[0]}-{first[1]}{more} already at min ISR in the describe ({isr_text(cluster, first)}), "
            "one replica from refusal, which the plan, assuming every replica in sync, does not count")


def produce_line(cluster: ClusterModel) -> str:
    """The produce rates the candidates ran with, as read from --produce-rate / --metrics / the scenario."""
    rates = {t: r for t, r in sorted(cluster.rate_bps.items()) if r > 0}
    if not rates:
        return "produce: none given, no log grows during the move (--produce-rate, --metrics)"
    shown = ", ".join(f"{t} {format_rate(r)}" for t, r in list(rates.items())[:3])
    more = f" and {len(rates) - 3} more topics" if len(rates) > 3 else ""
    return f"produce: {format_rate(sum(rates.values()))} in all ({shown}{more})"


def _fit(lines: list[str]) -> list[str]:
    """Every line within 80 columns: long sentences continue indented on the next lines."""
    return [part for line in lines for part in (textwrap.wrap(line, 80, subsequent_indent="  ") or [""])]


def wrapped(command: str, width: int = 78) -> str:
    """A shell command cut at spaces into lines of at most ``width`` columns, joined with backslashes; a
    comment goes on as comment lines (a backslash does not continue a comment)."""
    if command.startswith("#"):
        return "\n".join(textwrap.wrap(command, width, subsequent_indent="# ", break_on_hyphens=False,
                                       break_long_words=False))  # a path stays whole
    lines, line = [], ""
    for word in _option_units(command.split(" "), width - 6):
        if line and len(line) + 1 + len(word) > width - 2:
            lines.append(line + " \\")
            line = "    " + word
        else:
            line = f"{line} {word}" if line else word
    return "\n".join([*lines, line])


def _option_units(words: list[str], longest: int) -> list[str]:
    """``words`` with each ``--option`` joined to its value (``--entity-type brokers``), so that a cut never leaves
    an option at a line's end and its value on the next; a pair longer than ``longest`` stays two words (a long
    path keeps a line of its own rather than run past the width)."""
    units: list[str] = []
    for word in words:
        if units and units[-1].startswith("--") and " " not in units[-1] and not word.startswith("-") \
                and len(units[-1]) + 1 + len(word) <= longest:
            units[-1] += " " + word
        else:
            units.append(word)
    return units


def naive_eta_ms(data_bytes: float, throttle_bps: float | None) -> float:
    """The data to copy over the throttle, the estimate that ignores which broker carries the moves (0 unthrottled)."""
    return data_bytes / throttle_bps * 1000 if throttle_bps else 0.0


def plan_json(cluster: ClusterModel, moves: list[Move], choice: Choice, plan_path: str | Sequence[str], kip542: bool,
              deadline_ms: int | None, log_dirs: bool = False) -> str:
    data = data_to_move_bytes(moves)
    best = choice.recommended
    doc = {
        "summary": proposal_summary(moves),
        "headroom_throttle_bps": choice.headroom_bps, "headroom_broker": choice.headroom_broker,
        "deadline_ms": deadline_ms,
        "recommended": None if best is None else {
            "throttle_bps": best.throttle_bps, "why": choice.why, "duration_ms": best.duration_ms,
            "commands": [c for p in _paths(plan_path)
                         for c in commands(p, best.throttle_bps, kip542, cluster.version, log_dirs)]},
        "already_under_min_isr": [f"{t}-{p}" for t, p in cluster.under_min_isr()],
        "already_at_min_isr": [f"{t}-{p}" for t, p in cluster.at_min_isr_out_of_sync()],
        "naive_eta_ms": None if best is None else naive_eta_ms(data, best.throttle_bps),
        "strimzi_eta_ms": None if best is None else strimzi_eta_ms(
            data, len(cluster.brokers), strimzi_nic_bps(cluster, moves), best.throttle_bps),
        "candidates": [result_json(r) for r in choice.results],
        "other_mode": None if choice.other_mode is None else result_json(choice.other_mode),
        "other_mode_candidates": [result_json(r) for r in choice.other_modes if r is not None],
    }
    return json.dumps(doc, indent=2, allow_nan=False)


def html_section(cluster: ClusterModel, choice: Choice, moves: list[Move]) -> str:
    """Bytes left over time per candidate; for the choice each partition's move as a Gantt bar, the moves
    per broker over time (who is receiving) and the bottleneck."""
    import plotly.graph_objects as go

    best = choice.recommended
    parts = ["<h2>Reassignment plan</h2>"]
    left = go.Figure()
    for r in choice.results:
        if r.series.get("t_ms"):
            left.add_trace(go.Scatter(x=[t / 60_000 for t in r.series["t_ms"]], y=r.series["bytes_left"],
                                      mode="lines", name=format_rate(r.throttle_bps or 0)))
    left.update_layout(title="bytes left to move", xaxis_title="minutes", yaxis_title="bytes")
    parts.append(left.to_html(full_html=False, include_plotlyjs=True))
    if best is not None and best.start_ms:
        title = f"each partition's move at {format_rate(best.throttle_bps or 0)} (hatched: never completes)"
        parts.append(gantt_figure(gantt_bars(moves, best), title).to_html(full_html=False, include_plotlyjs=False))
    if best is not None and best.series.get("t_ms"):
        gantt = go.Figure()
        per = list(zip(*best.series["moves_per_broker"], strict=True))
        for b, counts in zip(cluster.brokers, per, strict=False):
            gantt.add_trace(go.Scatter(x=[t / 60_000 for t in best.series["t_ms"]], y=counts, mode="lines",
                                       line_shape="hv", name=f"broker {b}"))
        gantt.update_layout(title="moves receiving per broker (recommended throttle)", xaxis_title="minutes")
        parts.append(gantt.to_html(full_html=False, include_plotlyjs=False))
        if best.bottleneck:
            b = best.bottleneck
            parts.append(f"<p>bottleneck: broker {b['broker']} {html.escape(b['side'])}, busy for "
                         f"{format_duration(b['busy_ms'])} (peak {b['peak_utilization']:.0%} of its limit)</p>")
    return "<!doctype html><meta charset='utf-8'><title>replicaflow plan</title>" + "\n".join(parts)
