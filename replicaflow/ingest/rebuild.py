"""The telemetry tables of one cluster rebuilt from its broker logs and a describe snapshot (docs/real-cluster.md).

The log reader (ingest/logs.py) gives ``log_events`` and the ``isr`` / ``leaders`` change rows; this
module adds what the pipeline needs besides them, from the same events and the snapshot:

- ``assignments``: the describe snapshot replayed forward and backward over the controller's
  reassignment lines (ingest/replay.py);
- ``leaders`` / ``isr``: the reader's rows, plus the snapshot's leader and ISR at the start when the
  snapshot precedes the logs, plus the ISR a "Shrinking/Expanding ISR from A to B" line names as A
  (before 2.6 the leader line carries no ISR, so A is the first ISR known under a new leader epoch);
  an epoch not yet logged is -1, so the leader's own changes compare equal epochs (IsrShrinksPerSec);
- ``brokers``: "started" → up, the first controlled-shutdown line → shutting_down, "shut down completed" → down, and
  the controller's lines about broker sessions, a crash's only trace (ingest/broker_sessions.py); a broker that logs
  before any lifecycle line is up from the start of the logs; the ISRs the controller wrote without a failed broker
  are ``isr`` rows too;
- ``fetchers``: "Added fetcher" → added, "Removed fetcher" → removed, "marked as failed" → failed;
- ``configs``: the describe's ``Configs:`` (topic overrides: min.insync.replicas, throttled replicas)
  from the start, and ``--min-insync-replicas`` as the broker default; then min ISR and the KIP-73 throttles
  as the config change lines tell them, and min ISR as NotEnoughReplicas lines do (``line_tables.logged_configs``);
- ``log_dirs``: "Stopping serving replicas in dir" → offline, the broker's next start → online;
- ``produce_errors``: one rejected request per "Error processing append operation" + NotEnoughReplicas pair;
- ``replica_offsets`` and ``traffic`` stay empty: no log line carries offsets, lags or bytes.

A partition's state begins at the first instant its assignment, leader and ISR are all known.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema

from replicaflow.errors import ReplicaflowError, quote
from replicaflow.ingest import line_tables, replay
from replicaflow.ingest.assignment_rows import History, assigned_rows, assignment_rows
from replicaflow.ingest.broker_sessions import (
    OFFLINE_AT_FAILOVER,
    any_isr_removal,
    elected_at_removals,
    first_isr_member_back,
    isr_removals,
    leaderless_while_cluster_down,
    lifecycle,
    unless_elected_with_it,
    unregistered,
)
from replicaflow.ingest.controller_elections import elected_state
from replicaflow.ingest.controller_restart import (
    START_KINDS,
    Started,
    started_at,
    startup_replays,
    without_restated_partitions,
)
from replicaflow.ingest.holders import (
    Seen,
    controllers_alone,
    deleted_at,
    followed_leaders,
    inferred_leaders,
    isr_before_unseen_changes,
    recorded_state,
    recreated,
    requested_state,
    seen_replicas,
    stepped_down,
    topic_deletions,
)
from replicaflow.ingest.leader_requests import isr_of_requested_leaders, leaderless_requests
from replicaflow.ingest.line_tables import numbered
from replicaflow.ingest.log_changes import from_to_isr
from replicaflow.ingest.log_version import release_of
from replicaflow.ingest.logged_period import in_utc, logged_until_by_cluster, periods_of
from replicaflow.ingest.logs import read_logs
from replicaflow.ingest.sources import ClusterInputs, RebuildOptions
from replicaflow.model.configs import DEFAULT_BROKER, MIN_ISR
from replicaflow.model.election import KRAFT, ZOOKEEPER, session_timeout_ms
from replicaflow.model.units import counted, format_duration, parse_id, plural
from replicaflow.model.version import KafkaVersion
from replicaflow.telemetry.checks import MAX_SCRAPES
from replicaflow.telemetry.schema import CONTROLLER_ISR_EPOCH, TELEMETRY
from replicaflow.telemetry.spark import conform, local_frame

UNKNOWN_EPOCH = -1
BROKER_SEES_LATER = 1 << 40  # a broker's line of one instant replays after the controller's (moves number from 0)
WHOLE_24 = r"addingReplicas=([\d,]*), removingReplicas=([\d,]*)\)$"
WHOLE_KRAFT = r"removingReplicas=\[([\d, ]*)\], addingReplicas=\[([\d, ]*)\]"

@dataclass(frozen=True)
class Rebuilt:
    """Every cluster that yielded events: telemetry tables (TELEMETRY schemas, all clusters in each),
    one meta per cluster, and the reader's outputs."""

    tables: dict[str, DataFrame]
    metas: list[dict]
    log_events: DataFrame
    rejects: DataFrame
    line_counts: DataFrame


@dataclass(frozen=True)
class _Cluster:
    inputs: ClusterInputs
    start_ms: int
    end_ms: int
    anchor_ms: int

    @property
    def snapshot_first(self) -> bool:
        return self.inputs.topics is not None and self.anchor_ms <= self.start_ms


def rebuild(spark: SparkSession, inputs: list[ClusterInputs], opts: RebuildOptions,
            shown_as: tuple[str, str] | None = None, step: Callable[[str], None] = lambda text: None) -> Rebuilt:
    """Every cluster's telemetry tables and meta, in a handful of Spark jobs whatever the fleet's size.

    A cluster whose logs hold no replication event is left out; none at all is one sentence. ``step`` hears
    when the logs are read and the tables' own jobs begin (the command's progress)."""
    tz = opts.log_timezone
    parsed = read_logs(spark, [f for i in inputs for f in i.logs], {f: i.cluster for i in inputs for f in i.logs},
                       shown_as)
    # checkpoints, not caches: every query below would analyze the reader's plan again (docs/real-cluster.md)
    events = parsed["log_events"].withColumn("ts_ms", in_utc(F.col("ts_ms"), tz)).localCheckpoint(eager=False)
    periods = periods_of(events)
    printed: dict[str, list[str]] = {}
    for r in parsed["printed_versions"].collect():
        printed.setdefault(r["cluster"], []).append(r["kafka_version"])
    if None in periods:  # a file named other than resolve_paths named it: never silently clusterless
        raise ReplicaflowError("--logs: Spark named a log file differently from the path given; its cluster is "
                               "unknown (report this with the paths used)")
    if not periods:
        files = sum(len(i.logs) for i in inputs)
        rejected = parsed["rejects"].count()
        first = parsed["rejects"].orderBy("source", "line_number").first() if rejected else None
        why = (f"; {counted(rejected, 'line')} unreadable, the first {first['source']}:{first['line_number']} "
               f"({first['reason']})" if first else "")
        raise ReplicaflowError(f"--logs: no replication event in {counted(files, 'file')} of "
                               f"{plural(len(inputs), 'cluster')} {', '.join(i.cluster for i in inputs)}{why}; nothing to analyze (docs/logs.md)")
    step(f"analyze: rebuilding telemetry from {sum(p['events'] for p in periods.values()):,} events")
    logged_until = logged_until_by_cluster(spark, parsed["line_times"], periods, tz)
    interval = opts.scrape_interval_ms
    clusters: dict[str, _Cluster] = {}
    metas = []
    for i in inputs:
        if i.cluster not in periods:
            continue
        period = periods[i.cluster]
        start_ms = period["lo"] // interval * interval
        # the last scrape at or after the last line: a shrink logged after the grid's last point would be in
        # log_events but in no gauge or meter total, and a partition still offline while the brokers went on
        # logging other lines was offline until then (docs/real-cluster.md, "The scrape grid")
        end_ms = -(-logged_until.get(i.cluster, period["hi"]) // interval) * interval
        scrapes = (end_ms - start_ms) // interval + 1
        if scrapes > MAX_SCRAPES:  # the gauges are recomputed at every scrape: hours of work, then out of memory
            raise ReplicaflowError(f"--scrape-interval: {format_duration(interval)} over the {format_duration(end_ms - start_ms)} "
                                   f"logged by cluster {quote(i.cluster)} makes {scrapes:,} scrapes (at most "
                                   f"{MAX_SCRAPES:,}); give a longer interval")
        anchor = {"start": start_ms, "end": end_ms}.get(opts.topics_at, opts.topics_at)  # type: ignore[arg-type]
        clusters[i.cluster] = c = _Cluster(i, start_ms, end_ms, int(anchor))
        if opts.kafka_version is not None:
            version, source, last = opts.kafka_version, "option", None
        else:
            version, source, last = release_of(period["forms"], printed.get(i.cluster, ()))
        metas.append({
            "cluster": i.cluster, "kafka_version": version, "kafka_version_source": source,
            "kafka_version_last": last, "start_ms": int(start_ms), "end_ms": int(end_ms),
            "scrape_interval_ms": int(interval), "source": "logs", "topics_snapshot": i.topics_path,
            "topics_at_ms": c.anchor_ms if i.topics is not None else None, "log_timezone": tz or "UTC",
            "provenance": provenance(i),
        })
    seen = seen_replicas(events)
    listed, holders = _replica_brokers(clusters, seen)
    # the brokers a new ZooKeeper controller finds unregistered fail as at a failure callback: not a line of the logs,
    # so not in log_events
    sessions = events
    if any(p["active_set"] for p in periods.values()):
        failing = [m["cluster"] for m in metas if KafkaVersion.parse(m["kafka_version"]).at_least(OFFLINE_AT_FAILOVER)]
        replicas = [(n, clusters[n].start_ms, b) for n, b in listed]
        up_from_start = local_frame(spark, replicas, "cluster string, ts_ms long, broker int") if replicas else None
        sessions = events.unionByName(unregistered(events, F.col("cluster").isin(*failing), up_from_start)
                                      .localCheckpoint(eager=False), allowMissingColumns=True)
    lines = parsed["line_times"].withColumn("ts_ms", in_utc(F.col("ts_ms"), tz))
    session_ms = {m["cluster"]: {c: session_timeout_ms(KafkaVersion.parse(m["kafka_version"]), c) for c in (ZOOKEEPER, KRAFT)}
                  for m in metas}
    brokers = _brokers(spark, sessions, clusters, listed, holders, lines, session_ms).localCheckpoint(eager=False)
    histories = _histories(events, clusters, seen)
    isr, leaders = _isr_and_leaders(spark, parsed, sessions, clusters, tz, brokers, assigned_rows(spark, histories))
    first = (isr.groupBy("cluster", "topic", "partition").agg(F.min("ts_ms").alias("i"))
             .join(leaders.groupBy("cluster", "topic", "partition").agg(F.min("ts_ms").alias("l")),
                   ["cluster", "topic", "partition"], "full").collect())
    never = 1 << 62
    known = {(r["cluster"], r["topic"], r["partition"]): max(never if r["i"] is None else r["i"],
                                                            never if r["l"] is None else r["l"]) for r in first}
    tables = {
        "assignments": assignment_rows(spark, histories, known).select(
            "*", F.lit(None).cast("array<string>").alias("log_dirs")),  # a replica's directory is in no line
        "leaders": leaders,
        "isr": isr.select("*", *[F.lit(None).cast("array<int>").alias(c) for c in ("elr", "last_known_elr")]),
        "brokers": brokers,
        "fetchers": line_tables.fetchers(events),
        "log_dirs": line_tables.log_dirs(events),
        "configs": _configs(spark, clusters, opts).unionByName(line_tables.logged_configs(events, opts)),
        "replica_offsets": local_frame(spark, [], from_arrow_schema(TELEMETRY["replica_offsets"])),
        "traffic": local_frame(spark, [], from_arrow_schema(TELEMETRY["traffic"])),
        "produce_errors": line_tables.produce_errors(events, interval),
    }
    tables = {name: conform(df, TELEMETRY[name]) for name, df in tables.items()}
    return Rebuilt(tables, metas, events, parsed["rejects"], parsed["line_counts"])


def _isr_and_leaders(spark: SparkSession, parsed: dict[str, DataFrame], events: DataFrame, clusters: dict[str, _Cluster],
                     tz: str | None, brokers: DataFrame, assigned: DataFrame) -> tuple[DataFrame, DataFrame]:
    """The reader's rows (seq doubled), the A-side of each ISR change line just before it, the snapshot's
    rows first when it precedes the logs, no leader while the whole cluster is down (``brokers``); repeats of a
    partition's previous ISR and epoch dropped."""
    keys = ["cluster", "topic", "partition"]
    isr = parsed["isr"].select(
        *keys, in_utc(F.col("ts_ms"), tz).alias("ts_ms"), (F.col("seq") * 2 + 1).alias("seq"), "isr",
        F.coalesce("leader_epoch", F.lit(UNKNOWN_EPOCH)).alias("leader_epoch"))
    lead = parsed["leaders"].select(
        *keys, in_utc(F.col("ts_ms"), tz).alias("ts_ms"), (F.col("seq") * 2 + 1).alias("seq"), "leader",
        "leader_epoch", "start_offset", "replicas_end_offset")
    changes = (events.where(F.col("kind").isin("isr_shrink", "isr_expand"))
               .select(*keys, "ts_ms", from_to_isr(1).alias("a"), F.array_sort(from_to_isr(2)).alias("b"))
               .where(F.size("a") > 0).dropDuplicates([*keys, "ts_ms", "b"]))
    before = (isr.join(changes, [*keys, "ts_ms"]).where(F.array_sort("isr") == F.col("b"))
              .select(*keys, "ts_ms", (F.col("seq") - 1).alias("seq"), F.col("a").alias("isr"), "leader_epoch"))
    read, isr = isr, isr.unionByName(before)
    requested_isr, requested_lead, requested = requested_state(events, parsed["isr"], parsed["leaders"])
    recorded_isr, recorded_lead, recorded = recorded_state(events, lead.unionByName(requested_lead))
    applied_isr, applied = isr_of_requested_leaders(events, lead)  # a leader line before 2.6 names no ISR
    lead = lead.unionByName(requested_lead).unionByName(recorded_lead).localCheckpoint(eager=False)
    elected_isr, elected_lead, elected = elected_state(events, lead)
    isr = isr.unionByName(requested_isr).unionByName(recorded_isr).unionByName(elected_isr).unionByName(applied_isr)
    lead = lead.unionByName(elected_lead)
    lead = lead.unionByName(leaderless_requests(events, lead))  # the controller elected no one
    rows = [(name, c.start_ms, -1 - n, p.topic, p.partition, list(p.isr), -1 if p.leader is None else p.leader)
            for name, c in clusters.items() if c.snapshot_first
            for n, p in enumerate(sorted(c.inputs.topics.partitions.values(), key=lambda p: (p.topic, p.partition)))]
    if rows:
        snap = local_frame(spark, rows, "cluster string, ts_ms long, seq long, topic string, partition int, "
                                        "isr array<int>, leader int")
        isr = isr.unionByName(snap.select(*keys, "ts_ms", "seq", "isr", F.lit(UNKNOWN_EPOCH).alias("leader_epoch")))
        lead = lead.unionByName(snap.select(*keys, "ts_ms", "seq", "leader",
                                            F.lit(None).cast("int").alias("leader_epoch"),
                                            *[F.lit(None).cast("long").alias(c)
                                              for c in ("start_offset", "replicas_end_offset")]))
    removals = any_isr_removal(events)
    if removals:  # a failed broker's ISRs, which no broker logs before 2.6
        isr = isr.localCheckpoint(eager=False)
        isr = isr.unionByName(isr_removals(isr, events))
    # each step below reads the leader rows before it, and adds its own: a checkpoint after each, else the plan of the
    # first rows is copied twice per step (a KRaft controller's five lines took 260 s to analyze, 45 s with these)
    lead = lead.localCheckpoint(eager=False)
    lead = lead.unionByName(followed_leaders(events, lead)).localCheckpoint(eager=False)
    if removals:
        lead = lead.unionByName(unless_elected_with_it(elected_at_removals(events, lead, isr, assigned, brokers),
                                                       elected_lead)).localCheckpoint(eager=False)
    lead = lead.unionByName(leaderless_while_cluster_down(brokers, lead)).localCheckpoint(eager=False)
    lead = lead.unionByName(inferred_leaders(events, lead)).localCheckpoint(eager=False)
    lead = lead.unionByName(stepped_down(events, lead)).localCheckpoint(eager=False)
    lead = lead.unionByName(first_isr_member_back(brokers, lead, isr, events)).localCheckpoint(eager=False)
    isr = isr.unionByName(isr_before_unseen_changes(events, read, lead))
    carried = (events.where((F.col("kind") == "leader_start") & F.col("isr").isNotNull())
               .select(*keys, "ts_ms").unionByName(requested).unionByName(recorded).unionByName(elected).unionByName(applied).distinct())
    isr, lead = _instant_order(isr, lead, carried)
    w = Window.partitionBy(*keys).orderBy("ts_ms", "seq")
    prev = F.lag(F.struct(F.array_sort("isr").alias("s"), F.col("leader_epoch").alias("e"))).over(w)
    isr = isr.select("*", prev.alias("prev"))
    isr = isr.where(F.col("prev").isNull() | (F.col("prev.s") != F.array_sort("isr"))
                    | ~F.col("prev.e").eqNullSafe(F.col("leader_epoch"))).drop("prev")
    return isr, lead


def _instant_order(isr: DataFrame, lead: DataFrame, carried: DataFrame) -> tuple[DataFrame, DataFrame]:
    """One ``seq`` over both tables. Lines of one millisecond in different files have no order of their own;
    a leader's ISR change is taken before a new leader's line of the same instant (the controller moves
    leadership after the ISR it saw: a reassignment completes once the target joined the ISR), so the
    change counts on the leader that made it (IsrExpandsPerSec). A leader line's own ISR row (the reader
    numbers it right after the line) stays with it, and so does the ISR the line names as in force before it
    (``isr_before_unseen_changes``, numbered right before it): after the other changes of the instant.
    ``carried`` holds the instants whose leader line names an ISR at all: before 2.6 none does, and the row
    numbered after such a line is another broker's change of that instant (the old leader's expansion that let
    a reassignment complete)."""
    keys = ["cluster", "topic", "partition", "ts_ms"]
    from_line = lead.join(carried, keys, "left_semi").select(
        *keys, F.explode(F.array(F.col("seq") + 2, F.col("seq") - 1)).alias("seq"), F.lit(True).alias("with_leader"))
    isr = isr.join(from_line, [*keys, "seq"], "left").select(
        "*", F.when(F.col("seq") < 0, -1).when(F.col("with_leader"), 1).otherwise(0).alias("rank")).drop("with_leader")
    lead = lead.select("*", F.when(F.col("seq") < 0, -1).otherwise(1).alias("rank"))
    both = (isr.select("*", F.lit(True).alias("is_isr"))
            .unionByName(lead.select("*", F.lit(False).alias("is_isr")), allowMissingColumns=True))
    both = numbered(both, "ts_ms", "rank", "seq")
    # an ISR row's epoch is the last leader line's in this order (the reader's own order may differ)
    upto = Window.partitionBy("cluster", "topic", "partition").orderBy("seq").rowsBetween(Window.unboundedPreceding, 0)
    epoch = F.coalesce(F.last(F.when(~F.col("is_isr"), F.col("leader_epoch")), ignorenulls=True).over(upto),
                       F.lit(UNKNOWN_EPOCH))
    by_leader = F.col("is_isr") & ~F.col("leader_epoch").eqNullSafe(CONTROLLER_ISR_EPOCH)  # not a failure's removal
    both = both.withColumn("leader_epoch", F.when(by_leader, epoch).otherwise(F.col("leader_epoch"))).localCheckpoint(eager=False)
    return both.where("is_isr"), both.where(~F.col("is_isr"))


Moves = dict[tuple[str, str, int], list[replay.Move]]


def _moves(events: DataFrame) -> tuple[Moves, Started]:
    """The controller's reassignment lines per partition (few: collected to the driver) but a KRaft controller's
    replay of records at its start (ingest/controller_restart.py), and each node's start instants."""
    kind = F.col("kind")
    moving = kind.isin("reassignment_started", "reassignment_completed") & F.col("topic").isNotNull() \
        & F.col("partition").isNotNull()
    lines = (events.where(moving | (kind.isin(*START_KINDS) & F.col("broker").isNotNull()))
             .select("cluster", "ts_ms", "source", "line_number", "kind", "topic", "partition", "isr", "message",
                     "broker")
             .orderBy("cluster", "ts_ms", "source", "line_number").collect())  # one job: the moves and the starts
    rows = [r for r in lines if r["kind"] not in START_KINDS]
    started = started_at(r for r in lines if r["kind"] in START_KINDS)
    replays = startup_replays(rows, started)
    out: Moves = {}
    for n, r in enumerate(rows):
        if n in replays:
            continue
        msg, listed = r["message"], tuple(r["isr"]) if r["isr"] is not None else None
        whole = None
        if r["kind"] == "reassignment_started":
            m24, mk = re.search(WHOLE_24, msg), re.search(WHOLE_KRAFT, msg)
            if m24 or mk:
                adding = broker_ids(m24.group(1) if m24 else mk.group(2))
                removing = broker_ids(m24.group(2) if m24 else mk.group(1))
                if adding is not None and removing is not None:
                    whole = replay.Assignment(listed or (), adding, removing)
            move = replay.Move(r["ts_ms"], n, "started", target=whole.target if whole else listed, whole=whole)
        else:
            move = replay.Move(r["ts_ms"], n, "completed", target=listed)
        out.setdefault((r["cluster"], r["topic"], r["partition"]), []).append(move)
    return out, started


def broker_ids(text: str) -> tuple[int, ...] | None:
    """The ids of a controller line's ``addingReplicas``/``removingReplicas`` list; None if one is no broker id
    (over Java's int, or digits ``int`` refuses): the line then does not give the whole assignment."""
    ids = tuple(parse_id(x) for x in re.split(r"[,\s]+", text) if x)
    return None if None in ids else ids  # type: ignore[return-value]


def _histories(events: DataFrame, clusters: dict[str, _Cluster], seen: dict[tuple[str, str, int], Seen]) -> History:
    """Each partition's assignments in time.

    The describe snapshot anchors a partition's history; without it, the lines naming its whole assignment
    give it (the first one's origin before them); without either, a partition no controller line moves has
    the replicas its lines show from the start of the logs (ingest/holders.py). A deleted partition ends
    with a row of no replicas."""
    (moves, started), deleted = _moves(events), topic_deletions(events)
    keys = {name: sorted({(name, *k) for k in (c.inputs.topics.partitions if c.inputs.topics else {})}
                         | {k for k in moves if k[0] == name} | {k for k in seen if k[0] == name})
            for name, c in clusters.items()}
    ends = [(c, t, None, ms) for c, t in {k[:2] for ks in keys.values() for k in ks} for ms in deleted.of(c, t)]
    gaps = recreated(events, [*ends, *((*k, ms) for k, s in seen.items() for ms in s.nonexistent_ms)])
    out: History = {}
    for name, c in clusters.items():
        snap = {(name, *k): v for k, v in c.inputs.topics.partitions.items()} if c.inputs.topics else {}
        for key in keys[name]:
            p, s = snap.get(key), seen.get(key)
            if p is None and s is not None:  # the snapshot's PartitionRecords a controller restates at its start
                s = without_restated_partitions(s, name, started, moves[key][0].ts_ms if key in moves else None)
            if p is not None:
                anchor = replay.Assignment(p.replicas, p.adding, p.removing)
                hist = replay.history(anchor, c.anchor_ms, moves.get(key, []), c.start_ms)
            elif s is not None and s.wholes:
                hist = _from_whole_lines(s, moves.get(key, []), c.start_ms)
            elif key not in moves and s is not None and s.holders:
                hist = [(c.start_ms, replay.Assignment(s.holders))]
            else:
                hist = replay.history(None, c.anchor_ms, moves.get(key, []), c.start_ms)
            gone = deleted.of(name, key[1], c.anchor_ms if p is not None else None)
            end = deleted_at(s or Seen(), gone, hist[-1][1].replicas) if hist else None
            if end is not None and end >= hist[-1][0]:
                hist = [*hist, (end, replay.Assignment(()))]  # no replica: the partition no longer exists
            for gone_ms, created_ms in gaps.get(key, ()) if hist else ():  # deleted, then created again
                if gone_ms in gone or s is not None and gone_ms in s.nonexistent_ms:
                    hist = _not_existing(hist, gone_ms, created_ms)
            if hist:
                out[key] = hist
    return out


def _not_existing(hist: list[tuple[int, replay.Assignment]], gone_ms: int,
                  created_ms: int) -> list[tuple[int, replay.Assignment]]:
    """``hist`` with no replica from ``gone_ms`` to ``created_ms``, then the assignment in force at ``created_ms``."""
    at = [a for t, a in hist if t <= created_ms]
    again = [(created_ms, at[-1])] if at and at[-1].replicas else []
    return [*((t, a) for t, a in hist if t < gone_ms), (gone_ms, replay.Assignment(())), *again,
            *((t, a) for t, a in hist if t > created_ms)]


def _from_whole_lines(seen: Seen, moves: list[replay.Move], start_ms: int) -> list[tuple[int, replay.Assignment]]:
    """A partition no snapshot names, from the lines naming its whole assignment (ingest/holders.py): the first
    one's origin from the start, then each such line and each controller line in time (a broker logs the
    controller's decision after the controller: later at one instant); repeats of one assignment dropped."""
    first = seen.wholes[0].assignment
    lines = [replay.Move(w.ts_ms, BROKER_SEES_LATER, "started", target=w.assignment.target, whole=w.assignment)
             for w in seen.wholes]
    hist = replay.history(replay.Assignment(first.origin), start_ms - 1, [*moves, *lines], start_ms)  # all after it
    return [h for i, h in enumerate(hist) if i == 0 or h[1] != hist[i - 1][1]]


def _replica_brokers(clusters: dict[str, _Cluster], shown: dict[tuple[str, str, int], Seen]
                     ) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
    """(listed, holders): brokers up from the start as the describe's, log-dirs' or lines' replicas; with holders."""
    listed, holders = [], []
    for name, c in clusters.items():
        ids = {b for p in c.inputs.topics.partitions.values() for b in p.replicas} if c.inputs.topics else set()
        ids |= {r.broker for r in c.inputs.log_dirs or ()}  # kafka-log-dirs answers from live brokers only
        lines = {b for k, s in shown.items() if k[0] == name for b in s.holders}
        if c.inputs.topics is None:  # the describe lists every replica's broker
            ids |= lines
        listed += [(name, b) for b in sorted(ids)]
        holders += [(name, b) for b in sorted(ids | lines)]
    return listed, holders


def _brokers(spark: SparkSession, events: DataFrame, clusters: dict[str, _Cluster], listed: list[tuple[str, int]],
             holders: list[tuple[str, int]], lines: DataFrame, session_ms: dict[str, dict[str, int]]) -> DataFrame:
    """Lifecycle lines as up/down rows (``lines``, ``session_ms``: a process that ended unlogged); a broker logging
    (or listed, or with no describe shown holding a replica) before any lifecycle line is up from the start. A KRaft controller that
    holds no replica anywhere is no broker (``holders.controllers_alone``)."""
    alone = controllers_alone(events)
    if holders:
        alone = alone.join(local_frame(spark, holders, "cluster string, broker int"), ["cluster", "broker"], "left_anti")
    starts = local_frame(spark, [(n, c.start_ms) for n, c in clusters.items()], "cluster string, start_ms long")
    life = (lifecycle(events, lines, session_ms).join(F.broadcast(alone), ["cluster", "broker"], "left_anti")
            .join(F.broadcast(starts), "cluster")  # an up row 1 ms before the logs' first line is at their start
            .withColumn("ts_ms", F.greatest("ts_ms", "start_ms")).drop("start_ms"))
    seen = (events.where(F.col("broker").isNotNull()).select("cluster", "broker")
            .join(F.broadcast(alone), ["cluster", "broker"], "left_anti")
            .unionByName(life.select("cluster", "broker")).distinct())
    if listed:
        seen = seen.unionByName(local_frame(spark, listed, "cluster string, broker int")).distinct()
    first = life.groupBy("cluster", "broker").agg(
        F.min_by("state", F.struct("ts_ms", "source", "line_number")).alias("first"))
    initial = (seen.join(F.broadcast(starts), "cluster").join(first, ["cluster", "broker"], "left")
               .where(F.col("first").isNull() | (F.col("first") != "up"))
               .select("cluster", F.col("start_ms").alias("ts_ms"), "broker", F.lit("").alias("source"),
                       F.lit(0).cast("long").alias("line_number"), F.lit("up").alias("state")))
    return numbered(life.unionByName(initial), "ts_ms", "source", "line_number")


def _configs(spark: SparkSession, clusters: dict[str, _Cluster], opts: RebuildOptions) -> DataFrame:
    """The describe's topic configs and the broker default, from the start of the logs."""
    data = []
    for name, c in clusters.items():
        rows = []
        if opts.min_insync_replicas is not None:
            rows.append(("broker", DEFAULT_BROKER, MIN_ISR, str(opts.min_insync_replicas)))
        if c.inputs.topics is not None:
            rows += [("topic", t.topic, k, v) for t in sorted(c.inputs.topics.topics.values(), key=lambda t: t.topic)
                     for k, v in sorted(t.configs.items())]
        data += [(name, c.start_ms, n, *r) for n, r in enumerate(rows)]
    return local_frame(spark, data, "cluster string, ts_ms long, seq long, entity_type string, entity string, "
                                    "name string, value string")


def provenance(inputs: ClusterInputs) -> dict[str, str]:
    """Where each table came from (the report's provenance line; docs/real-cluster.md has the table)."""
    snap = "snapshot" if inputs.topics is not None else "unknown"
    return {
        "assignments": f"{snap}+logs" if inputs.topics is not None else "logs (replicas as far as the lines show)",
        "leaders": "logs", "isr": "logs", "brokers": "logs", "fetchers": "logs", "log_dirs": "logs",
        "configs": f"{snap}+logs (min ISR, throttles)" if inputs.topics is not None else "logs (min ISR, throttles)",
        "replica_offsets": "unknown", "traffic": "unknown", "produce_errors": "logs",
    }
