"""What the controller's lines about broker sessions say (docs/real-cluster.md, "What comes from where").

A crash leaves no line in the broker's own log: only the active controller tells of it, a session timeout
later, with ZooKeeper's ``Broker failure callback for N`` (KafkaController.onBrokerFailure) or KRaft's
``Fencing broker N because its session has timed out.`` (ReplicationControlManager.maybeFenceOneStaleBroker).
From those lines the rebuild takes the broker's down row (``lifecycle``) and the ISRs the controller then
wrote without it (``isr_removals``, also at the controller's grant of a controlled shutdown): before 2.6 no broker
line shows that ISR until the partition's next ISR change, and KRaft (3.6+) writes it under the same leader epoch,
with no leader line at all; and the leader it elects in place of a leader removed, or none (``elected_at_removals``).
From the rows of every broker, a whole cluster's outage (``leaderless_while_cluster_down``) and the return of a
partition's ISR member (``first_isr_member_back``).
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from replicaflow.ingest.log_messages import ACTIVE_SET
from replicaflow.ingest.unlogged_ends import unlogged_ends
from replicaflow.model.election import ALREADY_REGISTERED, KRAFT, ZOOKEEPER, removes_from_isr
from replicaflow.telemetry.schema import CONTROLLER_ISR_EPOCH
from replicaflow.telemetry.values import LIVE_STATES

# numbered before every other ISR row of its instant: the controller decides, then the brokers log
_FIRST = -(1 << 62)
# numbered after every other leader row of its instant: the cluster's last broker goes down after its lines
_LAST = 1 << 50
# numbered before the leader rows of its instant: the controller removes the leader, then elects (or not)
_REMOVED = -(1 << 49)
# the kinds a broker logs only as a replica the controller has registered: it leads or follows a partition, or
# changes an ISR as its leader
SERVING = ("leader_start", "follower_start", "become_leader", "become_follower", "leader_and_isr", "isr_shrink",
           "isr_expand", "isr_updated", "fetcher_added", "produce_rejected")
# the kinds after which the broker's process is gone at once (Exit.halt, Runtime.halt): no shutdown line follows
HALTS = ("broker_halted", "storage_halt")
# the state of the failure rows ``unregistered`` adds: a broker that a new controller's view leaves out
NOT_REGISTERED = "not registered"
# from 2.3 a new controller takes such a broker's replicas offline, out of the ISRs (ReplicaStateMachine.startup)
OFFLINE_AT_FAILOVER = "2.3"


def lifecycle(events: DataFrame, lines: DataFrame | None = None,
              session_ms: dict[str, dict[str, int]] | None = None) -> DataFrame:
    """(cluster, ts_ms, broker, source, line_number, state) up/down rows, and shutting_down at a running broker's
    controlled shutdown (``_shutting_down``): the broker's own "started" and "shut down completed", and the
    controller's view of it, the only one a crash leaves: ZooKeeper's failure and startup callbacks
    (KafkaController.onBrokerFailure, onBrokerStartup), KRaft's fencing of a broker whose session timed
    out and its grant of an unfence request (ReplicationControlManager.maybeFenceOneStaleBroker,
    BrokerHeartbeatManager). Where both tell of one change, the first line counts: a controller row that repeats
    the broker's state is dropped, and a broker's own row that repeats the controller's (in one millisecond the
    broker's own down row is kept, a session end dropped); two "started" of the
    broker's own are two process lifetimes (a crash between them), as before. The fence and unfence records a
    KRaft controller replays are logged by every standby and at every replay of its log: not the broker's state.
    A broker that serves as a replica while no line has it up is up from just before (``serving_while_down``).
    A halt (``HALTS``: a failed last log directory, a storage error before 1.0) is the broker's own down row: the
    process is gone with the line, and the controller's failure callback that follows, if any controller is left to
    log one, repeats it. LogManager's halt names no broker: in a file that several brokers wrote (one logs folder for
    a host's brokers) it is the broker whose ReplicaManager stopped serving one of the dirs it names (``_halted_by``),
    or, without that line, not taken. A second process of a running broker fails its start on the lock of the log
    dirs (LogManager.lockLogDirs: `Failed to acquire lock on file .lock in D. A Kafka instance in another process …`,
    under `Fatal error during KafkaServer startup`) and logs "shut down completed": not the broker's, which runs on
    (a public 3.8 broker read down twice for 17 s until its own controlled shutdown). So does a start ZooKeeper refuses
    as already registered (`startup_failed`): another broker with that id runs, or this one's killed process still
    holds its session, and then its end is the unlogged end below, before the refused process's start. With ``lines`` (the reader's
    ``line_times``), two own "started" with no down row of its own between are a process that ended unlogged (killed,
    its machine lost): down from its last line, or from the controller's failure callback or fencing less the session
    timeout (``session_ms``: each cluster's, by controller kind, ``model.election.session_timeout_ms``) where that is
    later (``unlogged_ends``)."""
    kind, state = F.col("kind"), F.col("state")
    halted = kind.isin(*HALTS)
    own = (kind.isin("broker_started", "broker_shutdown") | halted) & F.col("broker").isNotNull()
    controller = _session_ended() | (F.col("target_broker").isNotNull() & (
        kind.isin("broker_registered", "broker_unregistered") | ((kind == "broker_unfenced") & (state == "caught up"))))
    up = kind.isin("broker_started", "broker_registered", "broker_unfenced")
    shared = (events.where(F.col("broker").isNotNull()).groupBy("source").agg(F.countDistinct("broker").alias("n"))
              .where(F.col("n") > 1).select("source", F.lit(True).alias("shared")))
    line = ["cluster", "source", "line_number"]
    in_shared = halted & F.col("shared").isNotNull()
    # the first "shut down completed" after a failed start (the dirs' lock, a registration refused) is that process's
    failed = kind == "startup_failed"
    last = F.when(kind.isin("broker_started", "startup_failed", "broker_shutdown"), kind)
    since = F.last(last, ignorenulls=True).over(Window.partitionBy("cluster", "source", "broker")
                                                .orderBy("ts_ms", "line_number").rowsBetween(Window.unboundedPreceding, -1))
    told = (events.where(own | controller | failed).select("*", since.alias("since"))
            .where(~failed & ~((kind == "broker_shutdown") & F.col("since").eqNullSafe("startup_failed")))
            .drop("since").join(F.broadcast(shared), "source", "left")
            .join(F.broadcast(_halted_by(events.where(halted).join(shared, "source"), events)), line, "left")
            .where(~in_shared | F.col("halted_by").isNotNull()))
    rows = told.select(
        "cluster", "ts_ms",
        F.when(in_shared, F.col("halted_by")).when(own, F.col("broker")).otherwise(F.col("target_broker"))
        .alias("broker"),
        "source", "line_number", F.when(up, F.lit("up")).otherwise(F.lit("down")).alias("state"),
        (~own | halted).alias("repeatable"), (own & (kind == "broker_started")).alias("own_start"), own.alias("own"),
        F.when(_session_ended(), _session_timeout(session_ms or {})).alias("session_ms"), _session_ended().alias("ended"))
    # a session end in the millisecond of the broker's own down line is that stop, told once (docs/real-cluster.md)
    said = rows.where(F.col("own") & (F.col("state") == "down")).select("cluster", "broker", "ts_ms").distinct()
    rows = (rows.join(F.broadcast(said.withColumn("said", F.lit(True))), ["cluster", "broker", "ts_ms"], "left")
            .where(~F.col("ended") | F.col("said").isNull()).select(*rows.columns).drop("ended")
            .localCheckpoint(eager=False))
    if lines is not None:
        refused = events.where((kind == "startup_failed") & (state == ALREADY_REGISTERED) & F.col("broker").isNotNull())
        rows = rows.unionByName(unlogged_ends(rows, lines, refused).select(
            "*", F.lit(True).alias("repeatable"), F.lit(False).alias("own_start"), F.lit(True).alias("own"),
            F.lit(None).cast("int").alias("session_ms")))
    rows = rows.drop("own_start", "own", "session_ms")
    # the repeats go once the inferred rows are in: a down row that repeats an earlier one may follow a start that
    # only the broker's replica lines tell (a halt, the broker back, then its own "shut down completed")
    inferred = serving_while_down(events, rows).withColumn("repeatable", F.lit(True))
    life = _without_repeats(rows.unionByName(inferred), "repeatable").localCheckpoint(eager=False)
    return life.unionByName(_shutting_down(events, life))


def _shutting_down(events: DataFrame, life: DataFrame) -> DataFrame:
    """``shutting_down`` rows (``lifecycle``'s columns) at the first controlled-shutdown line of each lifetime of a
    running broker in ``life`` (up/down rows): ZooKeeper's `Starting controlled shutdown` (KafkaServer
    .controlledShutdown), KRaft's `Beginning controlled shutdown.` (BrokerLifecycleManager, only from RUNNING). The
    broker is live until its down row, as in the simulator's ``brokers`` (``LIVE_STATES``): a crash has no such row.
    Running: its row before the line is up, or it has none before and its first is not up (up from the start)."""
    at = F.struct("ts_ms", "source", "line_number")
    kind, state = F.col("kind"), F.col("state")
    lines = (events.where((kind == "broker_shutting_down") & (state == "controlled") & F.col("broker").isNotNull())
             .select("cluster", "broker", at.alias("at"), F.lit(None).cast("string").alias("was")))
    rows = life.select("cluster", "broker", at.alias("at"), F.col("state").alias("was"))
    w = Window.partitionBy("cluster", "broker").orderBy("at")
    row = F.when(F.col("was").isNotNull(), F.struct("at", "was"))
    prev = F.last(row, ignorenulls=True).over(w.rowsBetween(Window.unboundedPreceding, -1))
    first = F.first("was", ignorenulls=True).over(w.rowsBetween(Window.unboundedPreceding, Window.unboundedFollowing))
    told = lines.unionByName(rows).select("*", prev.alias("prev"), first.alias("first"))
    running = (F.col("prev.was") == "up") | (F.col("prev").isNull() & ~F.coalesce(F.col("first") == "up", F.lit(False)))
    firsts = (told.where(F.col("was").isNull() & running)
              .groupBy("cluster", "broker", F.col("prev.at").alias("since")).agg(F.min("at").alias("at")))
    return firsts.select("cluster", "at.ts_ms", "broker", "at.source", "at.line_number",
                         F.lit("shutting_down").alias("state"))


def _session_timeout(session_ms: dict[str, dict[str, int]]) -> Column:
    """The session timeout after which the controller ended a broker's session: its cluster's for KRaft at a fencing
    line, for ZooKeeper at a failure callback (``session_ms``: cluster → controller kind → ms)."""
    if not session_ms:
        return F.lit(None).cast("int")

    def of(controller: str) -> Column:
        return F.create_map(*[F.lit(x) for name, ms in session_ms.items() for x in (name, ms[controller])])[
            F.col("cluster")]
    return F.when(F.col("kind") == "broker_fenced", of(KRAFT)).otherwise(of(ZOOKEEPER))


def _halted_by(halts: DataFrame, events: DataFrame) -> DataFrame:
    """(cluster, source, line_number, halted_by): for each of ``halts``, the broker of the last `Stopping serving
    replicas in dir D` before it in its file, D one of the dirs it names. ReplicaManager.handleLogDirFailure logs
    that line with its broker, then hands the dir to LogManager, whose halt lists every configured dir (1.0+)."""
    at = F.struct("ts_ms", "line_number")
    failed = (events.where((F.col("kind") == "log_dir_failed") & F.col("broker").isNotNull())
              .select("cluster", "source", F.col("log_dir").alias("dir"), F.col("broker").alias("by"),
                      at.alias("by_at")))
    return (halts.select("cluster", "source", "line_number", at.alias("at"), F.split("log_dir", ", ").alias("dirs"))
            .join(failed, ["cluster", "source"])
            .where(F.array_contains("dirs", F.col("dir")) & (F.col("by_at") <= F.col("at")))
            .groupBy("cluster", "source", "line_number").agg(F.max_by("by", "by_at").alias("halted_by")))


def unregistered(events: DataFrame, failing: Column, up_from_start: DataFrame | None = None) -> DataFrame:
    """Event rows (state ``NOT_REGISTERED``, the broker as ``target_broker``) for each broker that a
    new ZooKeeper controller's `Currently active brokers in the cluster: Set(…)` leaves out while the lines before
    have it up (its last lifecycle row up, or none and a line of its own before, or none and ``up_from_start``:
    ``cluster, ts_ms, broker`` of a broker the rebuild has up from the start as a replica's, with no line of its
    own — a public 2.5 controller's broker, its own lines in a file not read, stayed up past that list).

    That list is the controller's whole view (KafkaController.initializeControllerContext): a broker not in it has no
    registration in ZooKeeper, its session gone with no failure callback, since the controller that would have logged
    one had itself failed. The new controller elects a leader for each partition such a broker led, from the live ISR
    (PartitionStateMachine.initializePartitionState, the ISR kept only with live members), and from 2.3 also takes it
    out of every ISR (ReplicaStateMachine.startup: OfflineReplica): a ``broker_failed`` row where ``failing`` holds
    (a Column over ``cluster``: the cluster's release is 2.3 or later), down and out of the ISRs and leaderships as
    at a failure callback. Before 2.3 the ISRs keep it, and it is a ``broker_unregistered`` row, down alone: the
    leaders the controller then elects are in its lines, and a partition it only followed keeps it in the ISR until
    the leader shrinks it, which the leader logs (a 0.10.2 cluster's 17 clean elections read as unclean when it left
    them). An empty list (`Set()`, a row with no ``target_broker``) leaves out every broker: a 0.10 controller that
    starts logs it before any broker, itself included, has registered. On a public 2.5 cluster's logs, two brokers
    missing from that list stayed up, and four partitions healthy, for the 77 s until they came back."""
    line = ["cluster", "ts_ms", "source", "line_number"]
    active = (events.where(active_set())
              .groupBy(*line, "broker").agg(F.collect_set("target_broker").alias("listed"))
              .select("*", F.struct("ts_ms", "source", "line_number").alias("at")))
    words = lifecycle(events).select("cluster", F.col("broker").alias("b"), "state",
                                     F.struct("ts_ms", "source", "line_number").alias("w"))
    seen = (events.where(F.col("broker").isNotNull())
            .groupBy("cluster", F.col("broker").alias("b"))
            .agg(F.min(F.struct("ts_ms", "source", "line_number")).alias("w"))
            .select("cluster", "b", F.lit("seen").alias("state"), "w"))
    if up_from_start is not None:
        origin = F.struct("ts_ms", F.lit("").alias("source"), F.lit(0).cast("long").alias("line_number"))
        seen = seen.unionByName(up_from_start.select("cluster", F.col("broker").alias("b"), F.lit("seen").alias("state"),
                                                     origin.alias("w")))
    before = (words.unionByName(seen).join(F.broadcast(active), "cluster").where(F.col("w") < F.col("at"))
              .where(~F.array_contains("listed", F.col("b")))
              .groupBy(*line, "broker", "b")
              .agg(F.max_by("state", F.struct(F.col("state") != "seen", "w")).alias("state")))
    return before.where(F.col("state").isin(*LIVE_STATES, "seen")).select(
        *line, F.when(failing, F.lit("broker_failed")).otherwise(F.lit("broker_unregistered")).alias("kind"), "broker",
        F.col("b").alias("target_broker"), F.lit(NOT_REGISTERED).alias("state"))


def active_set() -> Column:
    """An event row of a new ZooKeeper controller's `Currently active brokers in the cluster: Set(…)`."""
    return (F.col("kind") == "broker_registered") & (F.col("state") == ACTIVE_SET)


def _without_repeats(rows: DataFrame, flag: str) -> DataFrame:
    """``rows`` less a row that repeats the state before it where either of the two is ``flag``ged."""
    w = Window.partitionBy("cluster", "broker").orderBy("ts_ms", "source", "line_number")
    repeated = (F.lag("state").over(w) == F.col("state")) & (F.col(flag) | F.lag(flag).over(w))
    return (rows.withColumn("repeated", F.coalesce(repeated, F.lit(False))).where(~F.col("repeated"))
            .drop(flag, "repeated"))


def serving_while_down(events: DataFrame, life: DataFrame) -> DataFrame:
    """Up rows (``lifecycle``'s columns) of brokers that act as replicas while ``life`` has them not up.

    A broker leads or follows a partition, and changes an ISR as its leader (``SERVING``), only once the
    controller has registered it: a KafkaServer logs that between its start and its "started" line (and the
    controller that elects at a whole cluster's restart is such a broker), a BrokerServer before its controller
    unfences it. So where a broker's lifecycle lines have it down (after a down row), or not yet up (before its
    first row, when that row is up), its first such line makes it up 1 ms before that line, and the up row that
    follows is a repeat. Without it, the ISR changes and the elections of a restart, up to the "started" line,
    fell outside every broker lifetime, and the meters never counted them (docs/real-cluster.md, ``brokers``). A
    KafkaServer's `Starting controlled shutdown` tells the same: it runs only once the start completed (a 2.1 broker
    whose restart's lines were lost, then shut down, stayed down through its own shutdown).
    A line in the millisecond after a down row, or in that of the next row, is left to the lifecycle lines."""
    w = Window.partitionBy("cluster", "broker").orderBy("ts_ms", "source", "line_number")
    spans = life.select("cluster", "broker", "state", F.col("ts_ms").alias("from_ms"),
                        F.lead("ts_ms").over(w).alias("to_ms"), F.lag("state").over(w).alias("before"))
    not_up = (spans.where(F.col("state") == "down").select("cluster", "broker", "from_ms", "to_ms")
              .unionByName(spans.where(F.col("before").isNull() & (F.col("state") == "up")).select(
                  "cluster", "broker", F.lit(None).cast("long").alias("from_ms"), F.col("from_ms").alias("to_ms"))))
    kind = F.col("kind")
    running = kind.isin(*SERVING) | ((kind == "broker_shutting_down") & (F.col("state") == "controlled"))
    lines = (events.where(running & F.col("broker").isNotNull())
             .select("cluster", "broker", "ts_ms", "source", "line_number"))
    inside = ((F.col("from_ms").isNull() | (F.col("ts_ms") - 1 > F.col("from_ms")))
              & (F.col("to_ms").isNull() | (F.col("ts_ms") < F.col("to_ms"))))
    first = (lines.join(F.broadcast(not_up), ["cluster", "broker"]).where(inside)
             .groupBy("cluster", "broker", "from_ms").agg(F.min(F.struct("ts_ms", "source", "line_number")).alias("l")))
    return first.select("cluster", (F.col("l.ts_ms") - 1).alias("ts_ms"), "broker", "l.source", "l.line_number",
                        F.lit("up").alias("state"))


def _session_ended() -> Column:
    """An event row in which the controller drops a broker whose session ended (``target_broker``)."""
    kind = F.col("kind")
    return F.col("target_broker").isNotNull() & (
        (kind == "broker_failed") | ((kind == "broker_fenced") & (F.col("state") == "session timed out")))


def _leader_removal() -> Column:
    """An event row in which the controller takes a broker (``target_broker``) off the partitions it leads, electing
    another ISR member or none: its session ended (ZooKeeper ``onBrokerFailure``, KRaft's fencing) or, on KRaft, it
    grants the broker's controlled shutdown (state ``granted``), immediate shutdown or fencing
    (``handleBrokerInControlledShutdown``, ``handleBrokerFenced``). ZooKeeper's controlled shutdown leaves a leader
    without another live ISR member in place until its session ends (``ControlledShutdownLeaderElectionStrategy``
    fails)."""
    kind, state = F.col("kind"), F.col("state")
    granted = ((kind == "controlled_shutdown") & (state == "granted")) | \
        ((kind == "broker_fenced") & state.isin("controlled shutdown", "requested"))
    return _session_ended() | (F.col("target_broker").isNotNull() & granted)


def _isr_removal() -> Column:
    """An event row in which the controller takes a broker (``target_broker``) out of every ISR: ``_leader_removal``,
    and ZooKeeper's controlled shutdown (``KafkaController.doControlledShutdown``, `Shutting down broker N`: the
    partitions it follows), the broker still running."""
    zk_shutdown = (F.col("kind") == "controlled_shutdown") & (F.col("state") == "requested")
    return _leader_removal() | (F.col("target_broker").isNotNull() & zk_shutdown)


def failures_before(rows: DataFrame, events: DataFrame) -> DataFrame:
    """``rows`` (with cluster, ts_ms) and ``failures``: how many of its cluster's ISR removals (``_isr_removal``: broker
    failures, controlled shutdowns) the controller logged at or before the row (a handful per cluster: one broadcast
    array each)."""
    per_cluster = (events.where(_isr_removal()).groupBy("cluster")
                   .agg(F.collect_list("ts_ms").alias("failure_ts")))
    # SQL text, not F.filter: a Python lambda's variable is named from a counter of the JVM, and the name lands in
    # the generated code, which is then compiled again at every run in one session (pipeline/metrics.py)
    return (rows.join(F.broadcast(per_cluster), "cluster", "left")
            .withColumn("failures", F.expr("size(filter(coalesce(failure_ts, cast(array() AS array<bigint>)), "
                                           "t -> t <= ts_ms))"))
            .drop("failure_ts"))


def any_isr_removal(events: DataFrame) -> bool:
    """Whether the logs hold a controller's ISR removal at all (most do not: no ISR of theirs needs the work below)."""
    return bool(events.where(_isr_removal()).limit(1).count())


def isr_removals(isr: DataFrame, events: DataFrame) -> DataFrame:
    """ISR rows (cluster, topic, partition, ts_ms, seq, isr, leader_epoch) the controller wrote at each broker
    failure or controlled shutdown (``_isr_removal``): the ISR in force without the brokers removed since it was
    logged, one at a time, the last member kept (``model.election.removes_from_isr``; no ELR from logs). A
    partition's next logged ISR starts over; a failure that changes no ISR gives no row. ``isr`` as ``rebuild``."""
    keys = ["cluster", "topic", "partition"]
    failed = (events.where(_isr_removal()).groupBy("cluster", "ts_ms")
              .agg(F.array_sort(F.collect_set("target_broker")).alias("failed")))
    markers = (isr.select(*keys).distinct().join(failed, "cluster")
               .select(*keys, "ts_ms", F.lit(_FIRST).alias("seq"), F.lit(None).cast("array<int>").alias("isr"),
                       "failed"))
    rows = isr.select(*keys, "ts_ms", "seq", "isr", F.lit(None).cast("array<int>").alias("failed")) \
        .unionByName(markers)
    w = Window.partitionBy(*keys).orderBy("ts_ms", "seq").rowsBetween(Window.unboundedPreceding, Window.currentRow)
    rows = rows.select("*", F.last("isr", ignorenulls=True).over(w).alias("in_force"),
                       F.count("isr").over(w).alias("logged"))
    since = Window.partitionBy(*keys, "logged").orderBy("ts_ms", "seq").rowsBetween(Window.unboundedPreceding, -1)
    # what the controller left at the earlier failures; none left: it kept a lone member, which nothing removes
    old = F.array_sort(F.array_except("in_force", F.flatten(F.collect_list("failed").over(since))))
    rows = rows.select("*", old.alias("old"))
    left = F.array_except("old", "failed")
    new = F.array_sort(F.when(removes_from_isr(F.size(left), False), left)
                       .otherwise(F.array(F.array_max(F.array_intersect("old", "failed")))))
    return (rows.where(F.col("failed").isNotNull() & F.col("in_force").isNotNull() & (F.size("old") > 0))
            .select(*keys, "ts_ms", "seq", "old", new.alias("isr"))
            .where(F.col("isr") != F.col("old"))
            .select(*keys, "ts_ms", "seq", "isr", F.lit(CONTROLLER_ISR_EPOCH).alias("leader_epoch")))


def leaderless_while_cluster_down(brokers: DataFrame, lead: DataFrame) -> DataFrame:
    """Leader rows (``lead``'s columns) of no leader (-1) where a cluster's last live broker goes down (``brokers`` as
    ``rebuild`` numbers them), for every partition whose rows before name a leader.

    The partition's leader is then down and no controller is left to say so: ZooKeeper's writes no leader (-1) as it
    takes the last ISR member offline (``ReplicaStateMachine``'s OfflineReplica, ``removeReplicasFromIsr``), KRaft's
    elects none when the last one shuts down (``PartitionChangeBuilder``; its brokers log "Previous leader Some(-1)"
    on their return), both keeping that member in the ISR. Without it a whole cluster's outage counted as the ISR the
    lines last named, under-replicated or healthy for as long as it lasted."""
    keys = ["cluster", "topic", "partition"]
    prev = F.lag("state").over(Window.partitionBy("cluster", "broker").orderBy("seq"))
    was_up, is_up = F.coalesce(prev.isin(*LIVE_STATES), F.lit(False)), F.col("state").isin(*LIVE_STATES)
    change = F.when(is_up & ~was_up, 1).when(~is_up & was_up, -1).otherwise(0)
    live = Window.partitionBy("cluster").orderBy("seq").rowsBetween(Window.unboundedPreceding, Window.currentRow)
    down = (brokers.select("cluster", "ts_ms", "seq", change.alias("change"))
            .select("*", F.sum("change").over(live).alias("live"))
            .where((F.col("change") == -1) & (F.col("live") == 0)).select("cluster", "ts_ms").distinct())
    marks = (lead.select(*keys).distinct().join(F.broadcast(down), "cluster")
             .select(*keys, "ts_ms", F.lit(_LAST).alias("seq"), F.lit(-1).alias("leader"), F.lit(True).alias("mark")))
    rows = lead.select(*keys, "ts_ms", "seq", "leader", F.lit(False).alias("mark")).unionByName(marks)
    return lead_rows(rows.select("*", _told_before("mark").alias("before"))
                     .where(F.col("mark") & (F.col("before") != -1)))


def elected_at_removals(events: DataFrame, lead: DataFrame, isr: DataFrame, assigned: DataFrame,
                        brokers: DataFrame) -> DataFrame:
    """Leader rows (``lead``'s columns) where the controller takes a partition's leader off (``_isr_removal``): the
    first replica in assignment order that is in the ISR in force, not removed and not down (ZooKeeper
    ``OfflinePartitionLeaderElectionStrategy`` at a failure, ``ControlledShutdownPartitionLeaderElectionStrategy`` at a
    controlled shutdown; KRaft ``PartitionChangeBuilder.electLeader`` at fencing or a shutdown's grant, which skips
    brokers in controlled shutdown). None left: no leader (-1), the ISR kept (ZooKeeper ``removeReplicasFromIsr``:
    NoLeader), but at ZooKeeper's controlled shutdown, which leaves the leader in place until its session ends. The
    next leader row, or the first ISR member back (``first_isr_member_back``), ends a -1. From 2.6 the new leader's
    line is in state-change.log, and a follower's fetcher (``holders.followed_leaders``) needs a follower left.
    ``assigned``: (cluster, topic, partition, ts_ms, replicas) rows of each partition's assignment."""
    keys = ["cluster", "topic", "partition"]
    removal = events.where(_isr_removal()).select("cluster", "ts_ms", F.col("target_broker").alias("broker"),
                                                  _leader_removal().alias("ends"))
    instants = removal.groupBy("cluster", "ts_ms").agg(
        F.collect_set("broker").alias("removed"), F.collect_set(F.when(F.col("ends"), F.col("broker"))).alias("ending"))
    # each broker's last word at or before the instant: its up/down rows, and any removal (after its rows of that
    # millisecond), so that a broker in controlled shutdown is no candidate until it is up again
    words = (brokers.select("cluster", "broker", F.col("ts_ms").alias("at"), "seq", "state")
             .unionByName(removal.select("cluster", "broker", F.col("ts_ms").alias("at"),
                                         F.lit(_LAST).cast("long").alias("seq"), F.lit("removed").alias("state"))))
    out = (instants.select("cluster", "ts_ms").join(F.broadcast(words), "cluster").where(F.col("at") <= F.col("ts_ms"))
           .groupBy("cluster", "ts_ms", "broker").agg(F.max_by("state", F.struct("at", "seq")).alias("state"))
           .where(~F.col("state").isin(*LIVE_STATES)).groupBy("cluster", "ts_ms").agg(F.collect_set("broker").alias("out")))
    instants = instants.join(out, ["cluster", "ts_ms"], "left")
    marks = (lead.select(*keys).distinct().join(F.broadcast(instants), "cluster")
             .select(*keys, "ts_ms", "removed", "ending", "out", *[F.lit(None).cast(t).alias(c) for c, t in (
                 ("leader", "int"), ("isr", "array<int>"), ("replicas", "array<int>"))], F.lit(0).alias("first")))
    none = [F.lit(None).cast(t).alias(c) for c, t in (("removed", "array<int>"), ("ending", "array<int>"),
                                                       ("out", "array<int>"), ("first", "int"))]
    blank = {c: F.lit(None).cast(t).alias(c) for c, t in (("leader", "int"), ("isr", "array<int>"),
                                                           ("replicas", "array<int>"))}
    rows = (lead.select(*keys, "ts_ms", "seq", "leader").select("*", blank["isr"], blank["replicas"])
            .unionByName(isr.select(*keys, "ts_ms", "seq", "isr").select("*", blank["leader"], blank["replicas"]))
            .unionByName(assigned.select(*keys, "ts_ms", F.lit(_FIRST).alias("seq"), "replicas")
                         .select("*", blank["leader"], blank["isr"]))
            .select("*", *none).withColumn("first", F.lit(1)).unionByName(marks.withColumn("seq", F.lit(0).cast("long"))))
    # a mark sees the rows of earlier instants only: those of its own are the controller's decision, or after it
    earlier = Window.partitionBy(*keys).orderBy("ts_ms", "first", "seq").rowsBetween(Window.unboundedPreceding, -1)
    told_at = F.when((F.col("first") == 1) & F.col("leader").isNotNull(), F.col("ts_ms"))
    marks = (rows.select("*", F.last(told_at, ignorenulls=True).over(earlier).alias("told_at"),
                         *[F.last(c, ignorenulls=True).over(earlier).alias(f"{c}_then")
                           for c in ("leader", "isr", "replicas")])
             .where((F.col("first") == 0) & F.col("isr_then").isNotNull())
             .groupBy(*keys).agg(F.array_sort(F.collect_list(F.struct(
                 "ts_ms", "told_at", "leader_then", "isr_then", "replicas_then", "removed", "ending", "out")))
                 .alias("marks")))
    return lead_rows(marks.select(*keys, F.inline(F.expr(_ELECTIONS)))
                     .select(*keys, "ts_ms", F.lit(_REMOVED).alias("seq"), "leader"))


def unless_elected_with_it(removed: DataFrame, elected: DataFrame) -> DataFrame:
    """``elected_at_removals``' rows less a -1 that the controller's own election line of the partition follows within
    ``ELECTED_WITH_REMOVAL_MS`` (``controller_elections.elected_state``): a KRaft controller elects an unclean leader in
    the very record that fences the leader's broker, where the topic allows it (ReplicationControlManager
    .generateLeaderAndIsrUpdates), and logs it as `UNCLEAN partition change …` once it replays that record. The
    partition was never without a leader; the -1 made a one-millisecond offline incident of it. One window over both
    (each read once: ``removed`` carries the whole leader plan before it)."""
    keys = ["cluster", "topic", "partition"]
    both = (removed.select("*", F.lit(False).alias("_told"))
            .unionByName(elected.select(*removed.columns, F.lit(True).alias("_told"))))
    after = Window.partitionBy(*keys).orderBy("ts_ms", F.col("_told").asc(), "seq").rowsBetween(
        0, Window.unboundedFollowing)
    told = F.first(F.when(F.col("_told"), F.struct("ts_ms", "leader")), ignorenulls=True).over(after)
    # a line that says the partition had no leader until its election (4.1's `Previous partition: …leader=-1`, a
    # -1 row of elected_state's just before the election) confirms the -1: an ELR leader elected at a broker's unfence
    soon = (F.col("leader") == -1) & (told.ts_ms <= F.col("ts_ms") + ELECTED_WITH_REMOVAL_MS) & (told.leader != -1)
    return both.select("*", F.coalesce(soon, F.lit(False)).alias("_soon")).where(~F.col("_told") & ~F.col("_soon")) \
        .select(*removed.columns)


ELECTED_WITH_REMOVAL_MS = 1000


# The elections of one partition's marks in time order, each from the leader in force: the leader its rows told
# last, unless the election of an earlier mark came after that row (a row of the mark's own instant comes after its
# election, and wins) and elected a leader (after none, the first ISR member back leads, ``first_isr_member_back``,
# which comes later: the rows' leader stands for it, as it does for a partition with one replica). SQL text, not
# F.filter's Python lambda (``failures_before``); no assignment known: the ISR's own order. A leader removed with no
# candidate left: -1 if its session ends, else (ZooKeeper's controlled shutdown) no row, the leader kept.
_IN_FORCE = "IF(acc.at IS NULL OR m.told_at >= acc.at OR acc.leader = -1, m.leader_then, acc.leader)"
_CANDIDATES = ("filter(coalesce(m.replicas_then, m.isr_then), "
               "r -> array_contains(array_except(m.isr_then, coalesce(m.out, m.removed)), r))")
_ELECTED = (f"CASE WHEN NOT coalesce(array_contains(m.removed, {_IN_FORCE}), false) THEN NULL "
            f"WHEN size({_CANDIDATES}) > 0 THEN {_CANDIDATES}[0] "
            f"WHEN array_contains(m.ending, {_IN_FORCE}) THEN -1 END")
_ELECTIONS = f"""aggregate(marks,
    named_struct('leader', CAST(NULL AS INT), 'at', CAST(NULL AS BIGINT),
                 'rows', CAST(array() AS array<struct<ts_ms: bigint, leader: int>>)),
    (acc, m) -> named_struct(
        'leader', coalesce({_ELECTED}, {_IN_FORCE}),
        'at', IF({_ELECTED} IS NULL, acc.at, m.ts_ms),
        'rows', IF({_ELECTED} IS NULL, acc.rows, array_append(acc.rows, named_struct('ts_ms', m.ts_ms, 'leader',
                                                                                     {_ELECTED})))),
    acc -> acc.rows)"""


def first_isr_member_back(brokers: DataFrame, lead: DataFrame, isr: DataFrame, events: DataFrame) -> DataFrame:
    """Leader rows (``lead``'s columns): a partition without a leader (a -1 row of ``lead``) elects the first broker
    to come up again (its up row in ``brokers``) that is in the ISR in force then, unless a leader row comes first.
    Where a KRaft controller's own session lines are in the logs, a return is its grant of an unfence request, not a
    broker's start or first line: a BrokerServer that starts is fenced, and leads nothing, until the controller
    unfences it (a 3.9 broker's line said "Current leader is -1" 8 ms after such a start had elected it).

    The controller elects the returning ISR member (ZooKeeper ``KafkaController.onBrokerStartup``, KRaft
    ``ReplicationControlManager.handleBrokerUnfenced``); that leader's line is in state-change.log from 2.6, a file
    bug reports often leave out, and without this the partition stayed offline to the end of the logs. A broker's
    return counts only while the partition has no leader, and against the ISR of its instant: before 2026-12-05 a
    return was matched to every earlier -1 row, with that row's ISR, and a broker the controller had since taken out
    of the ISR led a partition that its own line, a millisecond later, showed without a leader."""
    keys = ["cluster", "topic", "partition"]
    kind = F.col("kind")
    granted = (kind == "broker_unfenced") & (F.col("state") == "caught up") & F.col("target_broker").isNotNull()
    kraft = events.where(granted | _session_ended() & (kind == "broker_fenced")).select("cluster").distinct()
    ups = (brokers.where(F.col("state") == "up").join(kraft, "cluster", "left_anti")
           .select("cluster", "broker", "ts_ms", F.col("seq").alias("up_seq"))
           .unionByName(events.where(granted).select("cluster", F.col("target_broker").alias("broker"), "ts_ms",
                                                     F.col("line_number").alias("up_seq"))))
    marks = (lead.where(F.col("leader") == -1).select(*keys).distinct().join(F.broadcast(ups), "cluster")
             .select(*keys, "ts_ms", F.lit(-_LAST).alias("seq"), "broker", "up_seq",
                     F.lit(None).cast("int").alias("leader"), F.lit(None).cast("array<int>").alias("isr")))
    rows = (lead.select(*keys, "ts_ms", "seq", "leader", F.lit(None).cast("array<int>").alias("isr"))
            .unionByName(isr.select(*keys, "ts_ms", "seq", F.lit(None).cast("int").alias("leader"), "isr"))
            .select("*", F.lit(None).cast("int").alias("broker"), F.lit(None).cast("long").alias("up_seq"))
            .unionByName(marks))
    before = Window.partitionBy(*keys).orderBy("ts_ms", "seq", "up_seq").rowsBetween(Window.unboundedPreceding, -1)
    told = F.col("leader").isNotNull()
    back = (rows.select("*", F.last("leader", ignorenulls=True).over(before).alias("leader_then"),
                        F.last("isr", ignorenulls=True).over(before).alias("isr_then"),
                        F.count(F.when(told, 1)).over(before).alias("told"))
            .where(F.col("broker").isNotNull() & (F.col("leader_then") == -1)
                   & F.array_contains("isr_then", F.col("broker")))
            .groupBy(*keys, "told").agg(F.min(F.struct("ts_ms", "up_seq", "broker")).alias("first")))
    return lead_rows(back.select(*keys, F.col("first.ts_ms").alias("ts_ms"), F.lit(-_LAST).alias("seq"),
                                 F.col("first.broker").alias("leader")))


def _told_before(added: str) -> Column:
    """On ``lead``'s rows with rows of its own (``added`` true): the leader the rows of ``lead`` told last before the
    row, in replay order."""
    return F.last(F.when(~F.col(added), F.col("leader")), ignorenulls=True).over(
        Window.partitionBy("cluster", "topic", "partition").orderBy("ts_ms", "seq")
        .rowsBetween(Window.unboundedPreceding, -1))


def lead_rows(rows: DataFrame, with_epoch: bool = False) -> DataFrame:
    """``rows`` (key, ts_ms, seq, leader[, leader_epoch]) as ``leaders`` rows whose offsets no line tells, and whose
    epoch none does either unless ``with_epoch`` (a controller's line or a request names it)."""
    epoch = F.col("leader_epoch") if with_epoch else F.lit(None).cast("int").alias("leader_epoch")
    return rows.select("cluster", "topic", "partition", "ts_ms", "seq", "leader", epoch,
                       *[F.lit(None).cast("long").alias(c) for c in ("start_offset", "replicas_end_offset")])
