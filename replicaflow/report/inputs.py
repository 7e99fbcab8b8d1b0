"""What went into a run, for the inputs panel and the event markers: the scenario (``telemetry/_meta.json``),
the throttles actually set (the telemetry ``configs`` table), the reassignment plan (``reassignments``)
and the events the run recorded (scenario events, config changes, broker log lines).

A reader of a report asks "what was this cluster doing?" before "what went wrong?": Kafka version,
the controller, the throttle, how much was moved, which faults were injected. Everything shown here
is read from the run's own files; what a run did not record is said to be unknown, never guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from replicaflow.model.configs import (
    DEFAULT_BROKER,
    QUOTA_RATES,
    REASSIGNMENT_RATES,
    THROTTLED_REPLICAS_LISTS,
)
from replicaflow.model.units import (
    counted,
    format_bytes,
    format_duration,
    format_rate,
    format_ts_ms,
    parse_id,
    plural,
)
from replicaflow.report.data import Analysis
from replicaflow.report.figures import HYPOTHETICAL, Marker
from replicaflow.telemetry.io import META_FILE, read_meta, read_table

# Scenario event kinds → the few characters a marker label has room for.
_LABELS = {"reassign": "reassign", "verify": "verify", "config": "config", "cancel_reassignment": "cancel",
           "elect_leaders": "elect", "slow_network": "slow net", "fail_partition": "fail",
           "produce_burst": "burst", "stall_follower": "stall"}
# Broker log lines worth a marker (the rest are per-partition and would bury the axis).
LOG_MARKERS = {"broker_shutdown": "shutdown", "broker_started": "start", "thread_died": "thread died",
               "partition_failed": "failed", "controller_elected": "controller", "broker_failed": "broker lost",
               "broker_fenced": "fenced"}
# election kinds by trigger ("": the line names none, before 2.4): (marker label, what the hover says)
_ASKED = " asked by an operator"
_TOOL = _ASKED + " (kafka-leader-election)"
ELECTION_KINDS = {
    "preferred_election_started": {"AutoTriggered": ("rebalance", "auto leader rebalance"),
                                   "AdminClientTriggered": ("election", "preferred leader election" + _TOOL),
                                   "ZkTriggered": ("election", "preferred leader election" + _ASKED
                                                   + " (/admin/preferred_replica_election)"),
                                   "": ("election", "preferred leader election")},
    "unclean_election_started": {"AdminClientTriggered": ("unclean", "unclean leader election" + _TOOL),
                                 "": ("unclean", "unclean leader election")},
}
# kinds written by the controller about another broker: the marker names that one (target_broker)
ABOUT_ANOTHER = ("broker_failed", "broker_fenced")
FAULT_KINDS = ("broker_down", "broker_up", "slow_network", "fail_partition", "produce_burst", "stall_follower")
MAX_MARKERS = 24


@dataclass(frozen=True)
class Throttle:
    """One throttle rate config as it changed: ``rate_bps`` None when it was removed."""

    ts_ms: int
    broker: str  # a broker id or Kafka's "<default>"
    name: str
    rate_bps: float | None


def telemetry_root(analysis: Analysis, cluster: str) -> Path | None:
    """The folder whose ``telemetry/`` holds ``cluster``'s telemetry: ``DIR`` (a single run) or ``DIR/<cluster>``
    (the demo); None when the analysis was copied without it."""
    for root in (analysis.root, analysis.root / cluster):
        if (root / "telemetry" / META_FILE).is_file() and read_meta(root).get("cluster") == cluster:
            return root
    return None


def configs(analysis: Analysis, cluster: str) -> pd.DataFrame | None:
    """The cluster's telemetry ``configs`` rows (None when the telemetry is not beside the analysis)."""
    root = telemetry_root(analysis, cluster)
    if root is None or not (root / "telemetry" / "configs").is_dir():
        return None
    return read_table(root, "telemetry", "configs").to_pandas().sort_values(["ts_ms", "seq"])


def throttles(cfg: pd.DataFrame | None) -> list[Throttle]:
    if cfg is None or cfg.empty:
        return []
    rows = cfg[(cfg["entity_type"] == "broker") & cfg["name"].isin(QUOTA_RATES)]
    return [Throttle(int(r.ts_ms), str(r.entity), str(r.name),
                     None if r.value is None or pd.isna(r.value) else _float(r.value)) for r in rows.itertuples()]


def _float(value) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def throttle_series(changes: list[Throttle], name: str, broker: int, grid: list[int]) -> list[float | None]:
    """The rate ``name`` in force on ``broker`` at each scrape (its own config over the cluster default)."""
    own = [c for c in changes if c.name == name and c.broker == str(broker)]
    default = [c for c in changes if c.name == name and c.broker == DEFAULT_BROKER]
    out = []
    for t in grid:
        mine = [c for c in own if c.ts_ms <= t]
        dflt = [c for c in default if c.ts_ms <= t]
        value = mine[-1].rate_bps if mine and mine[-1].rate_bps is not None else (dflt[-1].rate_bps if dflt else None)
        out.append(value)
    return out


def _throttle_text(t: Throttle) -> str:
    hyp = f" — {HYPOTHETICAL}" if t.name in REASSIGNMENT_RATES else ""
    where = "every broker (default)" if t.broker == DEFAULT_BROKER else f"broker {t.broker}"
    value = "removed" if t.rate_bps is None else format_rate(t.rate_bps)
    return f"{t.name}{hyp} on {where}: {value}"


def markers(analysis: Analysis, cluster: str, changes: list[Throttle]) -> list[Marker]:
    """The run's events for every time axis, one marker per scrape interval at most (texts joined)."""
    meta = analysis.meta.get(cluster, {})
    raw: list[Marker] = []
    for e in meta.get("events") or []:
        if not isinstance(e, dict) or "ts_ms" not in e:
            continue
        kind, text = str(e.get("kind", "")), str(e.get("text", e.get("kind", "")))
        label = _LABELS.get(kind, kind)
        m = re.match(r"broker (\d+) (down|up)", text)
        if m:
            label = f"b{m.group(1)} {m.group(2)}"
        raw.append(Marker(int(e["ts_ms"]), label, text))
    by_ts: dict[int, list[Throttle]] = {}
    for t in changes:
        by_ts.setdefault(t.ts_ms, []).append(t)
    for ts, group in sorted(by_ts.items()):
        removed = all(t.rate_bps is None for t in group)
        rates = sorted({format_rate(t.rate_bps) for t in group if t.rate_bps is not None})
        label = "throttle off" if removed else ("throttle " + rates[0] if len(rates) == 1 else "throttle")
        raw.append(Marker(ts, label, "; ".join(_throttle_text(t) for t in group[:6])
                          + (f"; … {len(group) - 6} more" if len(group) > 6 else "")))
    moves = analysis.of("reassignments", cluster)
    if not moves.empty and moves["end_ms"].notna().all():
        raw.append(Marker(int(moves["end_ms"].max()), "moves done",
                          ("the adding replica" if len(moves) == 1 else f"last of {counted(len(moves), 'adding replica')}")
                          + " joined the ISR (reassignment complete)"))
    ev = analysis.of("log_events", cluster)
    raw += _election_markers(ev)
    ev = _without_echoes(ev[ev["kind"].isin(list(LOG_MARKERS))], analysis.scrape_interval_ms(cluster))
    for (ts, kind), g in ev.groupby(["ts_ms", "kind"]):
        brokers = sorted({int(b) for b in g["target_broker" if kind in ABOUT_ANOTHER else "broker"].dropna()})
        who = f" b{','.join(map(str, brokers))}" if brokers else ""
        raw.append(Marker(int(ts), LOG_MARKERS[kind] + who, f"log: {kind.replace('_', ' ')}{who.replace('b', 'broker ')}"
                          f" ({g.iloc[0]['source']}:{int(g.iloc[0]['line_number'])})"))
    return _merge(sorted(raw, key=lambda m: m.ts_ms), analysis.scrape_interval_ms(cluster))


def _election_markers(ev: pd.DataFrame) -> list[Marker]:
    """The ZooKeeper controller's ``Starting … leader election for partitions …`` lines (docs/logs.md): leaders moved by
    ``auto.leader.rebalance.enable`` (AutoTriggered, 2.4+) or by an operator (``kafka-leader-election``,
    AdminClientTriggered or ZkTriggered), told apart on the charts; before 2.4 the line does not say which. One
    marker per instant and kind, naming the partitions (the line's broker is the controller, not a leader)."""
    ev = ev[ev["kind"].isin(list(ELECTION_KINDS))]
    out = []
    for (ts, kind, trigger), g in ev.fillna({"state": ""}).groupby(["ts_ms", "kind", "state"]):
        label, what = ELECTION_KINDS[kind].get(trigger, ELECTION_KINDS[kind][""])
        parts = [f"{t}-{p}" for t, p in sorted({(t, int(p)) for t, p in zip(g["topic"], g["partition"], strict=True)
                                                if pd.notna(p)})]
        listed = ", ".join(parts[:6]) + (f", … {len(parts) - 6} more" if len(parts) > 6 else "")
        out.append(Marker(int(ts), label, f"log: {what} of {counted(len(parts), 'partition')} ({listed}) "
                                          f"({g.iloc[0]['source']}:{int(g.iloc[0]['line_number'])})"))
    return out


def _without_echoes(ev: pd.DataFrame, window_ms: int) -> pd.DataFrame:
    """The controller's lines about a broker that its own ``shut down completed`` line already marks, left out.

    A ZooKeeper controller calls ``onBrokerFailure`` for every registration that goes, so a clean shutdown
    also writes ``Broker failure callback`` (and a KRaft controller fences a broker that shuts down): beside
    the shutdown marker, "broker lost" would read as a crash. A crash has no shutdown line, so its marker stays.
    """
    about = ev["kind"].isin(list(ABOUT_ANOTHER))
    shutdowns = ev.loc[ev["kind"] == "broker_shutdown", ["ts_ms", "broker"]]
    if not about.any() or shutdowns.empty:
        return ev
    pairs = ev[about].reset_index().merge(shutdowns, left_on="target_broker", right_on="broker",
                                          suffixes=("", "_shutdown"))
    echoes = pairs.loc[(pairs["ts_ms"] - pairs["ts_ms_shutdown"]).abs() <= window_ms, "index"]
    return ev.drop(index=echoes.unique())


def _merge(raw: list[Marker], window_ms: int) -> list[Marker]:
    out: list[Marker] = []
    for m in raw:
        if out and m.ts_ms - out[-1].ts_ms < window_ms:
            last = out[-1]
            label = last.label if m.label in last.label.split(" + ") else f"{last.label} + {m.label}"
            out[-1] = Marker(last.ts_ms, label if len(label) <= 24 else last.label + " …",
                             f"{last.text}; {m.text}")
        else:
            out.append(m)
    if len(out) > MAX_MARKERS:
        out = out[:MAX_MARKERS]
    return out


def kafka_version_said(version: str | None, source: str | None, last: str | None) -> str:
    """The brokers' release and where it comes from. One inferred from the log lines is the earliest release
    they allow, and the lines of several releases read alike (3.6 to 4.x): the range is said with it, so an
    operator reads '3.6 or later', not that the cluster runs 3.6 (docs/real-cluster.md, Kafka version)."""
    if not version:
        return "not recorded"
    if source == "option":
        return f"{version} (--kafka-version)"
    if source == "version line":  # the brokers' AppInfoParser line at their start
        named = version if last in (None, version) else f"{version} to {last}"
        return f"{version} (the logs' `Kafka version` lines: {named})"
    if source != "logs":
        return version
    allowed = f"{version} or later" if last is None else version if last == version else f"{version} to {last}"
    return f"{version} (inferred from the log lines' forms: {allowed})"


def describe_said(inputs: dict) -> str | None:
    """The describe output a cluster rebuilt from logs starts from, and the instant it was read as
    (``--topics-at``): by default the last log line, so a describe taken earlier needs ``--topics-at``."""
    snapshot, at_ms = inputs.get("topics_snapshot"), inputs.get("topics_at_ms")
    if not snapshot or not isinstance(at_ms, int):
        return None
    return f"{snapshot}, read as the assignment at {format_ts_ms(at_ms)} UTC (--topics-at; by default the last log line)"


def panel(analysis: Analysis, cluster: str, changes: list[Throttle], cfg: pd.DataFrame | None) -> list[dict]:
    """The inputs panel: (what, value, hypothetical?) rows, in the order an operator asks about them."""
    meta = analysis.meta.get(cluster, {})
    rows: list[dict] = []

    def add(what: str, value: str, hypothetical: bool = False) -> None:
        rows.append({"what": what, "value": value, "hypothetical": hypothetical})

    version = meta.get("kafka_version") or analysis.summary.get(cluster, {}).get("kafka_version")
    add("Kafka version", kafka_version_said(version, meta.get("kafka_version_source"), meta.get("kafka_version_last")))
    if meta.get("kip542"):
        add("reassignment throttles", "KIP-542 leader/follower.reassignment.throttled.rate", hypothetical=True)
    else:
        add("reassignment throttles", "KIP-73 replication throttles (leader/follower.replication.throttled.*)")
    if meta.get("source") == "simulator":
        kind = "KRaft (combined mode)" if meta.get("controller") == "kraft" else "ZooKeeper-based"
        add("controller", f"{kind}; the active controller keeps the role until its broker stops, then the "
                          "live broker with the lowest id takes it (replicaflow's simulator)")
    else:
        add("controller", "not recorded in the telemetry")
    source = meta.get("source")
    if source:
        extra = f", scenario {meta['scenario']}" if meta.get("scenario") else ""
        extra += f", seed {meta['seed']}" if meta.get("seed") is not None else ""
        add("source", f"{source}{extra}")
    if isinstance(meta.get("provenance"), dict):  # analyze --logs alone (docs/real-cluster.md)
        by_origin: dict[str, list[str]] = {}
        for table, origin in meta["provenance"].items():
            by_origin.setdefault(str(origin), []).append(str(table))
        add("rebuilt from", "; ".join(f"{origin}: {', '.join(t)}" for origin, t in sorted(by_origin.items()))
            + " (unknown: lag gauges and byte meters absent)")
    if (describe := describe_said(meta)) is not None:
        add("topics describe", describe)
    if {"start_ms", "end_ms"} <= set(meta):
        add("run", f"{format_ts_ms(meta['start_ms'])} → {format_ts_ms(meta['end_ms'])} UTC "
                   f"({format_duration(meta['end_ms'] - meta['start_ms'])})")
    add("scrape interval", format_duration(analysis.scrape_interval_ms(cluster)))
    if meta.get("replica_lag_time_max_ms"):
        add("replica.lag.time.max.ms", format_duration(meta["replica_lag_time_max_ms"]))
    if meta.get("brokers"):
        add("brokers", f"{len(meta['brokers'])}: {id_ranges(meta['brokers'])}")
    for what, value in topic_rows([t for t in meta.get("topics") or [] if isinstance(t, dict)]):
        add(what, value)
    add("throttle", _throttle_summary(changes, cfg), hypothetical=any(c.name in REASSIGNMENT_RATES for c in changes))
    add("reassignment plan", _plan(analysis, cluster))
    faults = [e for e in meta.get("events") or [] if isinstance(e, dict) and e.get("kind") in FAULT_KINDS]
    add("faults injected", "; ".join(f"{format_ts_ms(e['ts_ms'])[11:]} {e.get('text', e['kind'])}" for e in faults)
        if faults else ("none" if "events" in meta else "not recorded"))
    return rows


TOPIC_ROWS = 12  # the panel's topic rows at most; a cluster of 500 topics would push the summary off the page


def id_ranges(ids) -> str:
    """Broker ids as runs: ``1–50`` rather than fifty numbers, ``1–3, 5, 7–9`` with gaps; an id that is not a
    broker id (``units.parse_id``: ASCII digits, Java's int) is listed as it is, after them."""
    numbers = sorted({i for b in ids if (i := parse_id(str(b))) is not None})
    runs: list[list[int]] = []
    for i in numbers:
        if runs and i == runs[-1][1] + 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    others = [str(b) for b in ids if parse_id(str(b)) is None]
    return ", ".join([*(str(a) if a == b else f"{a}–{b}" for a, b in runs), *others])


def _topic_text(t: dict) -> str:
    parts = [f"{t.get('partitions', '?')} partitions", f"RF {t.get('replication_factor', '?')}",
             f"min ISR {t.get('min_insync_replicas', '?')}"]
    if t.get("produce_rate_bps") is not None:
        parts.append(f"produce {format_rate(float(t['produce_rate_bps']))}")
    if t.get("initial_size_bytes") is not None:
        parts.append(f"initial size {format_bytes(float(t['initial_size_bytes']))} per partition")
    return ", ".join(parts)


def topic_rows(topics: list[dict]) -> list[tuple[str, str]]:
    """(what, value) rows of the topics: topics set up alike share one row (``50 topics``: the setup, then
    their names), and beyond :data:`TOPIC_ROWS` rows the topics with the fewest partitions are one row of
    counts."""
    alike: dict[str, list[dict]] = {}
    for t in topics:
        alike.setdefault(_topic_text(t), []).append(t)

    def partitions(group: list[dict]) -> int:
        return sum(int(t["partitions"]) for t in group if isinstance(t.get("partitions"), int))

    groups = list(alike.items())
    rest: list[tuple[str, list[dict]]] = []
    if len(groups) > TOPIC_ROWS:
        biggest = sorted(groups, key=lambda g: -partitions(g[1]))
        keep = {text for text, _ in biggest[:TOPIC_ROWS - 1]}
        rest = [g for g in groups if g[0] not in keep]
        groups = [g for g in groups if g[0] in keep]
    rows = []
    for text, group in groups:
        names = [str(t.get("name", "?")) for t in group]
        if len(names) == 1:
            rows.append((f"topic {names[0]}", text))
        else:
            shown = ", ".join(names) if len(names) <= 4 else f"{', '.join(names[:3])}, … {names[-1]}"
            rows.append((f"{len(names)} topics", f"{text} each: {shown}"))
    if rest:
        n = sum(len(g) for _, g in rest)
        rows.append(("other topics", f"{n} topics set up {len(rest)} other ways, "
                                     f"{sum(partitions(g) for _, g in rest):,} partitions in all"))
    return rows


def _throttle_summary(changes: list[Throttle], cfg: pd.DataFrame | None) -> str:
    if cfg is None:
        return "not known (the telemetry configs are not beside this analysis)"
    if not changes:
        return "none set"
    parts = []
    for (name, rate), group in _group_rates(changes).items():
        brokers = ", ".join(sorted(group, key=lambda b: (b == DEFAULT_BROKER, b.zfill(6))))
        since = format_ts_ms(min(t.ts_ms for t in changes if t.name == name and t.rate_bps == rate))[11:]
        parts.append(f"{name} {format_rate(rate)} on {plural(len(group), 'broker')} {brokers} from {since}")
    removed = [t for t in changes if t.rate_bps is None]
    if removed:
        parts.append(f"removed at {format_ts_ms(removed[0].ts_ms)[11:]}")
    lists = cfg[(cfg["entity_type"] == "topic") & cfg["name"].isin(list(THROTTLED_REPLICAS_LISTS))]
    for r in lists.drop_duplicates(["entity", "name"], keep="first").itertuples():
        n = len([x for x in str(r.value or "").split(",") if x.strip()])
        parts.append(f"{r.entity}: {r.name} {'all replicas' if r.value == '*' else counted(n, 'replica')}")
    return "; ".join(parts)


def _group_rates(changes: list[Throttle]) -> dict[tuple[str, float], set[str]]:
    out: dict[tuple[str, float], set[str]] = {}
    for t in changes:
        if t.rate_bps is not None:
            out.setdefault((t.name, t.rate_bps), set()).add(t.broker)
    return out


def _plan(analysis: Analysis, cluster: str) -> str:
    moves = analysis.of("reassignments", cluster)
    if moves.empty:
        return "no reassignment"
    parts = moves[["topic", "partition"]].drop_duplicates()
    sizes = moves["bytes_to_move"].dropna()
    # no log line carries a size (docs/real-cluster.md): all null is unknown, not 0B; some null, at least that
    size = "bytes to copy unknown" if sizes.empty else \
        f"{'at least ' if len(sizes) < len(moves) else ''}{format_bytes(float(sizes.sum()))} to copy"
    dest = sorted(moves["replica"].unique())
    return (f"{counted(len(parts), 'partition')}, {counted(len(moves), 'adding replica')} onto "
            f"{plural(len(dest), 'broker')} {', '.join(str(b) for b in dest)}, {size}")
