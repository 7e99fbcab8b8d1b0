"""The end of a broker process that logged none: a second start with no shutdown line between (docs/real-cluster.md,
``brokers``, "A process that ends unlogged").

A broker killed (``kill -9``, an OOM kill, a machine that lost power) writes no ``shutting down`` or ``shut down
completed`` (KafkaServer.shutdown, BrokerServer.shutdown never run). Its next process logs its start again
(KafkaServer.startup's ``starting`` … ``started``; KafkaRaftServer's ``Kafka Server started``). Where no line of the
broker's own has it down between the two starts, the old process ended between its last line and the
new process's first: the broker is down from the millisecond after that last line until the new start (or the new
process's first line as a replica, ``broker_sessions.serving_while_down``: it registered before "started").

The controller's failure callback or fencing between the two starts does not change that: it is the controller
noticing, a session timeout after the broker's last heartbeat (ZooKeeper's session expiry, KRaft's
``broker.session.timeout.ms``), not the end of the process. The process ended no later than that line less the
timeout (``session_ms``, the release's default: the last heartbeat), and no earlier than its own last line: the down
row is at the later of the two, so a broker that logged little is not down long before it crashed.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from replicaflow.ingest.log_files import ROTATION_SUFFIX
from replicaflow.ingest.regex_literals import guarded_rlike

# the first records of a broker process, before it registers (KafkaServer.startup's `starting`; KafkaConfig's dump
# and Log4jControllerRegistration at Kafka.main; BrokerServer's lifecycle, 2.8+): where the new process begins
START_MARKER = (r"^(?:\[(?:Kafka Server \d+\],|KafkaServer id=\d+\]) starting\s*$"
                r"|\[BrokerServer id=\d+\] Transition from SHUTDOWN to STARTING\s*$"
                r"|KafkaConfig values:|Registered kafka:type=kafka\.Log4jController MBean\s*$)")


def start_marker(message: str = "message") -> Column:
    """True on a line that opens a broker process (``START_MARKER``), the regex run only where its literals are."""
    return F.coalesce(guarded_rlike(F.col(message), START_MARKER), F.lit(False))


def unlogged_ends(rows: DataFrame, lines: DataFrame, refused: DataFrame | None = None) -> DataFrame:
    """Down rows (cluster, ts_ms, broker, source, line_number, state) of the processes that ended unlogged.

    ``rows``: the lifecycle rows (cluster, ts_ms, broker, source, line_number, state, own_start: the broker's own
    "started", own: a row of the broker's own line, session_ms: on a controller's row of a session that ended, the
    session timeout it came after); ``lines``: every readable line (cluster, broker, ts_ms, source, line_number,
    start: ``start_marker``). For each own "started" whose row before, of the broker's own "started" and down rows,
    is an own "started", the new process begins at the broker's first start marker after that earlier start, and the
    old process's last line is the broker's last line before it, at or after that earlier start. The down row is 1 ms
    after that line (the process wrote it, so it ran through that millisecond), or the controller's first
    session end after that line and by the new "started", less its timeout, if later; never past the new process's
    first line; in that line's file and number. Without a marker (an excerpt of event lines) no row: the new
    process's lines before its "started" (its LeaderAndIsr) cannot be told from the old one's. ``refused``
    (cluster, broker, ts_ms, source, line_number): starts ZooKeeper refused as already registered, which end the
    process before them as a new "started" would where that process's own "started" is the broker's last own row and
    in the same file (a broker of that id on another host runs on): the old process was killed, its session lingered,
    and the restart failed (``_refused_pairs``)."""
    at = F.struct("ts_ms", "source", "line_number")
    w = Window.partitionBy("cluster", "broker").orderBy("ts_ms", "source", "line_number")
    # the controller's rows between the two starts are its view: a session end it noticed late, a registration
    own = rows.where(F.col("own_start") | F.col("own") & (F.col("state") == "down"))
    pairs = (own.select("cluster", "broker", "own_start", at.alias("at"), F.lag(at).over(w).alias("prev"),
                        F.lag("own_start").over(w).alias("before"))
             .where(F.col("own_start") & F.col("before")).select("cluster", "broker", "prev", "at"))
    if refused is not None:
        pairs = pairs.unionByName(_refused_pairs(own, refused, at))
    # each frame below is read by two or more: checkpoints, else every reader copies the lifecycle's plan beneath it
    # (docs/real-cluster.md, "A fleet")
    pairs = pairs.localCheckpoint()
    if pairs.isEmpty():  # the usual case: every start follows a down row, and no line need be scanned
        return rows.select("cluster", "ts_ms", "broker", "source", "line_number", "state").limit(0)
    mine = lines.select("cluster", "broker", "start", at.alias("l"))
    opened = (mine.where("start").join(F.broadcast(pairs), ["cluster", "broker"])
              .where((F.col("l") > F.col("prev")) & (F.col("l") < F.col("at")))
              .groupBy("cluster", "broker", "at").agg(F.min("l").alias("opened")))
    bounds = pairs.join(opened, ["cluster", "broker", "at"]).select("cluster", "broker", "prev", "at",
                                                                    F.col("opened").alias("bound")).localCheckpoint(eager=False)
    last = (mine.join(F.broadcast(bounds), ["cluster", "broker"])
            .where((F.col("l") >= F.col("prev")) & (F.col("l") < F.col("bound")))
            .groupBy("cluster", "broker", "bound").agg(F.max("l").alias("last")))
    ends = (rows.where(F.col("session_ms").isNotNull())
            .select("cluster", "broker", "ts_ms", (F.col("ts_ms") - F.col("session_ms")).alias("beat")))
    noticed = (last.join(bounds, ["cluster", "broker", "bound"]).join(ends, ["cluster", "broker"])
               .where((F.col("ts_ms") > F.col("last.ts_ms")) & (F.col("ts_ms") <= F.col("at.ts_ms")))
               .groupBy("cluster", "broker", "bound").agg(F.min_by("beat", "ts_ms").alias("beat")))
    # never past the new process's first line: a last line in that millisecond keeps it
    ts = F.least(F.greatest(F.col("last.ts_ms") + 1, F.col("beat")), F.col("bound.ts_ms"))
    return (last.join(noticed, ["cluster", "broker", "bound"], "left")
            .select("cluster", ts.alias("ts_ms"), "broker", F.col("last.source").alias("source"),
                    F.col("last.line_number").alias("line_number"), F.lit("down").alias("state")))


def _refused_pairs(own: DataFrame, refused: DataFrame, at: Column) -> DataFrame:
    """(cluster, broker, prev, at) for each refused start (``at``) whose broker's last own row before it (``prev``)
    is a "started" in the same file or a rotated copy of it (``log_series``). Where a later start succeeds, the pair
    of the two "started" finds the same bound (the refused process's start marker), so the same down row, once."""
    seq = (own.select("cluster", "broker", at.alias("at"), "own_start", F.lit(False).alias("refused"))
           .unionByName(refused.select("cluster", "broker", at.alias("at"), F.lit(False).alias("own_start"),
                                       F.lit(True).alias("refused"))))
    before = Window.partitionBy("cluster", "broker").orderBy("at").rowsBetween(Window.unboundedPreceding, -1)
    last_own = F.last(F.when(~F.col("refused"), F.struct(F.col("at").alias("at"), "own_start")), ignorenulls=True)
    same_file = log_series(F.col("p.at.source")) == log_series(F.col("at.source"))
    return (seq.select("*", last_own.over(before).alias("p"))
            .where(F.col("refused") & F.col("p.own_start") & same_file)
            .select("cluster", "broker", F.col("p.at").alias("prev"), "at"))


def log_series(source: Column) -> Column:
    """The file a broker writes, of ``source`` or of a copy rotation made of it (``log_files.ROTATION_SUFFIX``):
    `d/server.log.2021-03-04-05` and `d/server.log` are one broker's file, `e/server.log` another's."""
    return F.regexp_replace(source, ROTATION_SUFFIX, "")
