"""The report's tables as data for Tabulator (vendored in templates/vendor/): columns, rows and which column
is filtered how.

An SRE scans 236 log lines for the one ``thread_died``: every table sorts by any column and filters
by the columns one narrows by (kind, broker, partition, status). Rows travel in the page's JSON
block (no string of it can close the block) and Tabulator writes every cell as text (its
``plaintext`` formatter escapes it), so a topic named like markup stays text. Durations, rates and
byte counts sort by the number behind them (``sort`` names the hidden numeric field), not as text.

A table carries at most :data:`ROWS_SHOWN` rows, chosen by what an operator looks for first (the open
and longest incidents, the moves that cannot finish, the largest losses, every kind of log line), and
says so above it: 8 hours of a 50,000-partition cluster with two outages an hour hold 824,000
incidents, which made a 160 MB page.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from replicaflow.model import progress
from replicaflow.model.units import counted, format_bytes, format_duration, format_rate, format_ts_ms
from replicaflow.report.alerts import value_text

ROWS_SHOWN = 5000  # a browser table sorts and filters this many rows at once without trouble

# the partition health flags of cluster_metrics and the incident kinds, in words
HEALTH = {"urp": "under-replicated", "under_min_isr": "under min ISR", "at_min_isr": "at min ISR",
          "offline": "offline", "reassigning": "reassigning"}
# what incidents.worst_value counts, per kind (pipeline/events.incidents): the words around the number '{}', and
# the noun it counts (none: an ISR size, shown as it is)
WORST = {"urp": ("{} out of the ISR", "replica"), "under_min_isr": ("ISR {} below min ISR", None),
         "offline": ("{} without a leader", "replica")}


def worst_text(kind: str, value: float) -> str:
    """An incident's worst value in words: '1 replica out of the ISR', 'ISR 2 below min ISR'."""
    words, noun = WORST.get(kind, ("{}", None))
    n = int(value) if float(value).is_integer() else value
    return words.format(counted(n, noun) if noun else f"{n:g}")


def out_of_sync_text(brokers, isr=None, elr=None) -> str:
    """The replicas out of the ISR at an incident's start, by broker id: '2', '2, 3'; '–' when none was.

    For an offline incident, ``isr`` and ``elr`` at its start add who the partition waits for, all offline (a live
    one would lead): the controller keeps the last ISR member in the ISR (docs/semantics.md §6, ZooKeeper
    ``ReplicaStateMachine.doRemoveReplicasFromIsr``, KRaft ``PartitionChangeBuilder``), so '1, 2; ISR 3
    offline' ('ISR 3 offline' with one replica, which alone read '–'); with eligible leader replicas (KIP-966)
    the ISR empties and the ELR names who may still lead cleanly: '1, 2, 3; ELR 1, 2 offline'."""
    def ids(xs) -> str:
        return ", ".join(str(b) for b in sorted(int(b) for b in xs)) if xs is not None else ""

    waits = next((f"{name} {ids(xs)} offline" for name, xs in (("ISR", isr), ("ELR", elr)) if ids(xs)), "")
    return "; ".join(x for x in (ids(brokers), waits) if x) or "–"


def _offline_at_start(analysis, cluster: str, inc: pd.DataFrame) -> dict[tuple, tuple]:
    """(topic, partition, start_ms) → (isr, elr) of each offline incident's first ``partition_state`` interval
    (the one starting at its ``start_ms``)."""
    off = inc.loc[inc["kind"] == "offline", ["topic", "partition", "start_ms"]]
    if off.empty:
        return {}
    ps = analysis.of("partition_state", cluster)
    ps = ps.loc[ps["offline"], ["topic", "partition", "from_ms", "isr", "elr"]]
    at = off.merge(ps, left_on=["topic", "partition", "start_ms"], right_on=["topic", "partition", "from_ms"])
    return {(r.topic, r.partition, r.start_ms): (r.isr, r.elr) for r in at.itertuples()}


def col(title: str, field: str, filter: str | None = None, sort: str | None = None, kind: str = "text") -> dict:
    """A column: ``filter`` is ``input`` (substring) or ``list`` (pick a value); ``sort`` a numeric field to
    sort by; ``kind`` ``ts`` (never wrapped), ``num`` (right-aligned), ``tag`` (a coloured status) or ``mono``."""
    return {"title": title, "field": field, "filter": filter, "sort": sort, "kind": kind}


def table(table_id: str, columns: list[dict], rows: list[dict], note: str | None = None) -> dict:
    return {"id": table_id, "columns": columns, "rows": rows, "note": note}


def _ms(v) -> float | None:
    return None if pd.isna(v) else float(v)


def _shown(df: pd.DataFrame, rank: list[str], shown: list[str], table_name: str, which: str,
           descending: tuple[str, ...] = (), each: str | None = None,
           rest: str | None = None) -> tuple[pd.DataFrame, str | None]:
    """At most :data:`ROWS_SHOWN` rows of ``df`` in the order ``shown``, and the note that says which rows are
    shown and where the rest are when some were left out.

    The rows kept are the first by ``rank`` (``descending`` columns largest first); with ``each``, every
    value of that column in turn (each one's first row, then each one's second, ...), so the one
    ``thread_died`` among 100,000 ISR lines, or the one offline partition among 800,000 URP incidents, is
    never what is cut; the note then names the values cut short. ``rest`` says where every row is, when that
    is not the table ``table_name``."""
    if len(df) <= ROWS_SHOWN:
        return df.sort_values(shown, kind="stable"), None
    ranked = df.sort_values(rank, ascending=[c not in descending for c in rank], kind="stable")
    if each is not None:
        ranked = ranked.assign(_turn=ranked.groupby(each, dropna=False, sort=False).cumcount())
        ranked = ranked.sort_values("_turn", kind="stable").drop(columns="_turn")
    kept = ranked.head(ROWS_SHOWN)
    note = f"{ROWS_SHOWN:,} of {len(df):,} shown: {which}; {rest or f'every row is in {table_name}'}"
    if each is not None:
        left = kept[each].value_counts(dropna=False)
        cut = [f"{k} {left.get(k, 0):,} of {n:,}" for k, n in df[each].value_counts(dropna=False).items()
               if left.get(k, 0) < n]
        note += f" (cut short: {', '.join(cut)})"
    return kept.sort_values(shown, kind="stable"), note


def incidents(analysis, cluster: str, prefix: str) -> dict:
    inc, note = _shown(analysis.of("incidents", cluster).assign(_open=lambda d: d["end_ms"].isna()),
                       ["_open", "duration_ms", "worst_value", "start_ms", "kind", "topic", "partition"],
                       ["start_ms", "kind", "topic", "partition"], "analysis/incidents",
                       "the open ones, then the longest, of every kind",
                       descending=("_open", "duration_ms", "worst_value"), each="kind")
    waits = _offline_at_start(analysis, cluster, inc)
    rows = [{"kind": r.kind, "partition": f"{r.topic}-{r.partition}", "start": format_ts_ms(r.start_ms),
             "end": format_ts_ms(r.end_ms) if pd.notna(r.end_ms) else "open",
             "duration": format_duration(r.duration_ms) if pd.notna(r.duration_ms) else "open",
             "duration_ms": _ms(r.duration_ms) if pd.notna(r.duration_ms) else 9e15,  # open: longest
             "worst": "–" if pd.isna(r.worst_value) else worst_text(r.kind, r.worst_value),
             "worst_n": _ms(r.worst_value), "out_of_sync": out_of_sync_text(r.out_of_sync_replicas,
                                                              *waits.get((r.topic, r.partition, r.start_ms), ()))}
            for r in inc.itertuples()]
    return table(f"{prefix}-incidents", [
        col("kind", "kind", "list"), col("partition", "partition", "input"),
        col("out of ISR at start (broker)", "out_of_sync", "input"), col("start (UTC)", "start", kind="ts"),
        col("end (UTC)", "end", kind="ts"), col("duration", "duration", sort="duration_ms", kind="num"),
        col("worst", "worst", sort="worst_n")], rows, note)


def unclean_elections(analysis, cluster: str, prefix: str) -> dict:
    """One row per unclean leader election (docs/semantics.md §6): who leads, and what the others held beyond it.
    Kept first when there are too many: the largest losses, then the unknown ones (no offsets), then none."""
    elections = analysis.of("unclean_elections", cluster)
    lost = elections["messages_lost"].astype("float64")
    ue, note = _shown(elections.assign(_loss=lost.fillna(0.5)),
                      ["_loss", "ts_ms", "topic", "partition"], ["ts_ms", "topic", "partition"],
                      "analysis/unclean_elections", "the largest losses first", descending=("_loss",))
    rows = [{"time": format_ts_ms(r.ts_ms), "partition": f"{r.topic}-{r.partition}", "leader": int(r.leader),
             "epoch": int(r.leader_epoch),
             "lost": "unknown" if pd.isna(r.messages_lost) else f"{int(r.messages_lost):,}",
             "lost_n": _ms(r.messages_lost)} for r in ue.itertuples()]
    return table(f"{prefix}-unclean", [
        col("time (UTC)", "time", kind="ts"), col("partition", "partition", "input"),
        col("new leader", "leader", "list", kind="num"), col("leader epoch", "epoch", kind="num"),
        col("messages lost", "lost", sort="lost_n", kind="num")], rows, note)


# which moves an operator reads first when there are too many to show: those that cannot finish, then the open
MOVE_URGENCY = {progress.STALLED: 0, progress.NEVER: 1, progress.STARVED: 2, progress.PROGRESSING: 3,
                progress.CANCELLED: 4, progress.COMPLETED: 5}


def reassignments(analysis, cluster: str, prefix: str) -> dict:
    all_moves = analysis.of("reassignments", cluster)
    moves, note = _shown(all_moves.assign(_urgency=all_moves["status"].map(MOVE_URGENCY).fillna(len(MOVE_URGENCY)),
                                          _left=(all_moves["bytes_to_move"] - all_moves["bytes_moved"]).fillna(0)),
                         ["_urgency", "_left", "topic", "partition", "replica"], ["topic", "partition", "replica"],
                         "analysis/reassignments", "the moves that cannot finish, then the open ones with the most "
                         "bytes left", descending=("_left",))
    rows = []
    since = _stalled_since(analysis, cluster, moves)
    for r in moves.itertuples():
        known = pd.notna(r.bytes_to_move)
        pct = 100.0 * r.bytes_moved / r.bytes_to_move if known and r.bytes_to_move else 100.0
        moved = (f"{format_bytes(r.bytes_moved)} / {format_bytes(r.bytes_to_move)} ({pct:.0f}%)" if known
                 else f"{format_bytes(r.bytes_moved)} / ? (no leader)" if pd.notna(r.bytes_moved)
                 else "unknown (no offsets)")  # rebuilt from logs: no line carries sizes (docs/real-cluster.md)
        rate = None if pd.isna(r.rate_bps) else float(r.rate_bps)
        growth = None if pd.isna(r.leader_growth_bps) else float(r.leader_growth_bps)
        rows.append({"partition": f"{r.topic}-{r.partition}", "replica": int(r.replica), "status": r.status,
                     "start": format_ts_ms(r.start_ms),
                     "end": format_ts_ms(r.end_ms) if pd.notna(r.end_ms) else "open",
                     "moved": moved, "pct": pct if known else None,
                     "rate": format_rate(rate) if rate is not None else "–", "rate_bps": rate,
                     "eta": format_duration(r.eta_ms) if pd.notna(r.eta_ms) else "–",
                     "eta_ms": _ms(r.eta_ms) if pd.notna(r.eta_ms) else None,
                     "why": progress.describe(r.status, rate, growth, bool(r.throttled),
                                              since.get((r.topic, r.partition, r.replica, r.start_ms)))})
    return table(f"{prefix}-reassignments", [
        col("partition", "partition", "input"), col("adding replica", "replica", "list", kind="num"),
        col("status", "status", "list", kind="tag"), col("start (UTC)", "start", kind="ts"),
        col("end (UTC)", "end", kind="ts"), col("moved", "moved", sort="pct", kind="num"),
        col("rate", "rate", sort="rate_bps", kind="num"), col("ETA", "eta", sort="eta_ms", kind="num"),
        col("why", "why")], rows, note)


def _stalled_since(analysis, cluster: str, moves: pd.DataFrame) -> dict[tuple, str]:
    """When each stalled move last copied: the last progress sample of its episode whose bytes moved grew (else
    the episode's first), and how long before its last sample that was. The status looks at one window
    (``progress.STALL_WINDOW_MS``); the table said 'copied nothing for a minute' of a move idle for an hour."""
    stalled = moves[moves["status"] == progress.STALLED]
    if stalled.empty or "reassignment_progress" not in analysis.tables:
        return {}
    keys = ["topic", "partition", "replica"]
    rp = analysis.of("reassignment_progress", cluster).dropna(subset=["bytes_moved"])
    rp = rp.merge(stalled[[*keys, "start_ms"]], on=keys)
    rp = rp[rp["ts_ms"] >= rp["start_ms"]].sort_values("ts_ms")
    out = {}
    for (t, p, b, start), g in rp.groupby([*keys, "start_ms"]):
        grew = g["ts_ms"][g["bytes_moved"].diff() > 0]
        last = int(grew.iloc[-1]) if len(grew) else int(g["ts_ms"].iloc[0])
        out[(t, p, b, start)] = f"{format_ts_ms(last)}, {format_duration(int(g['ts_ms'].iloc[-1]) - last)} before the end"
    return out


def log_events(analysis, cluster: str, prefix: str) -> tuple[dict, int]:
    ev = analysis.of("log_events", cluster)
    order = ["ts_ms", "broker", "line_number"]
    shown, note = _shown(ev, order, order, "analysis/log_events", "the first lines of every kind", each="kind")
    rows = [{"time": format_ts_ms(r.ts_ms), "broker": "–" if pd.isna(r.broker) else int(r.broker), "kind": r.kind,
             "partition": "" if r.topic is None else f"{r.topic}-{'' if pd.isna(r.partition) else int(r.partition)}",
             "isr": "" if r.isr is None else ",".join(str(int(i)) for i in np.asarray(r.isr)),
             "where": f"{r.source}:{r.line_number}", "message": r.message or ""} for r in shown.itertuples()]
    return table(f"{prefix}-logs", [
        col("time (UTC)", "time", kind="ts"), col("broker", "broker", "list", kind="num"),
        col("kind", "kind", "list"), col("partition", "partition", "input"), col("ISR", "isr"),
        col("source", "where", "input", kind="mono"), col("message", "message", "input", kind="mono")], rows,
        note), len(ev)


def alerts(episodes: list[dict], prefix: str) -> dict:
    """The alert episodes (sections.alert_rows). Kept first when there are too many: the longest of every alert
    in turn, so the one BrokerDown among thousands of UnderReplicatedPartitions episodes is never cut."""
    df = pd.DataFrame(episodes, columns=["alert", "broker", "from_ms", "to_ms", "peak", "summary"])
    df = df.assign(_long=df["to_ms"] - df["from_ms"], _broker=pd.to_numeric(df["broker"], errors="coerce"))
    shown, note = _shown(df, ["_long", "from_ms", "alert", "_broker"], ["from_ms", "alert", "_broker"],
                         "", "the longest of every alert", descending=("_long",), each="alert",
                         rest="Prometheus fires every one with alerts/replicaflow.rules.yaml on metrics.om")
    rows = [{"alert": r.alert, "broker": r.broker, "start": format_ts_ms(r.from_ms), "last": format_ts_ms(r.to_ms),
             "peak": value_text(r.peak), "summary": r.summary} for r in shown.itertuples()]
    return table(f"{prefix}-alerts", [
        col("alert", "alert", "list"), col("broker", "broker", "list", kind="num"),
        col("fired (UTC)", "start", kind="ts"), col("last firing (UTC)", "last", kind="ts"),
        col("peak", "peak", kind="num"), col("what it means", "summary")], rows, note)


def rejects(analysis) -> dict:
    order = ["source", "line_number"]
    rj, note = _shown(analysis.tables["rejects"], order, order, "analysis/rejects",
                      "the first lines of every reason", each="reason")
    rows = [{"where": f"{r.source}:{r.line_number}", "reason": r.reason, "raw": r.raw_line} for r in rj.itertuples()]
    return table("rejects-table", [col("source", "where", "input", kind="mono"), col("reason", "reason", "list"),
                                   col("line", "raw", "input", kind="mono")], rows, note)
