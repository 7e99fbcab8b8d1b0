"""Read Kafka broker logs (0.10 to 4.x, docs/logs.md) into replication events, with Spark.

Each file is read whole (``wholetext``), decoded (UTF-8, BOM, UTF-16) and split into numbered lines
natively (``log_text``); a line is unwrapped from its envelope (CRI, docker, compose, syslog;
``log_envelopes``) and parsed as a log4j layout (``log_layouts``), and its message is matched against
the rule table of ``log_messages``.
Every line ends in exactly one category:

- ``event``: a replication message -> ``log_events`` (and ``isr`` / ``leaders`` change rows);
- ``other``: a readable log line that is not a replication event (counted, not kept);
- ``attached``: a stack-trace line following a record (part of that record);
- ``blank``: ignored (also grep's ``--`` and a paste's code-block marks);
- ``reject``: unreadable -> ``rejects`` with its reason.

Only Spark built-in expressions are used (no Python UDF).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pyspark.errors import AnalysisException
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from replicaflow.errors import ReplicaflowError
from replicaflow.ingest.kraft_elections import ELECTION_KINDS, name_topics
from replicaflow.ingest.log_changes import changes, mark_refused
from replicaflow.ingest.log_envelopes import grep_path, stream, unwrap
from replicaflow.ingest.log_files import resolve_paths
from replicaflow.ingest.log_layouts import (
    CAUSE,
    CAUSE_CHARS,
    CONTINUATION_LINE,
    line_checks,
    line_status,
    parse_layout,
    shown_raw,
)
from replicaflow.ingest.log_match import FIELDS, MATCHERS, match_rules
from replicaflow.ingest.log_messages import (
    ACTIVE_SET,
    BROKER_LIST_KINDS,
    FAILED_ELECTION,
    LIST_FIELDS,
    LOG_DIR_MOVER,
    LOG_DIR_MOVER_THREAD,
    PREFIX_PARTITION_KINDS,
    RULES,
)
from replicaflow.ingest.log_text import decode_files, groups, id_list, method_boundary, split_lines
from replicaflow.ingest.log_truncation import TRUNCATED_LIST, TRUNCATED_STARTS
from replicaflow.ingest.regex_literals import guard, guarded_rlike
from replicaflow.ingest.unlogged_ends import start_marker
from replicaflow.telemetry.schema import ANALYSIS
from replicaflow.telemetry.spark import conform, local_frame, spark_path

# --- message prefixes (logIdent) -----------------------------------------------------------------
# `[Partition t-p broker=B] ` (1.0+) or `Partition [t,p] on broker B: ` (0.8-0.11)
PART = r"^(?:\[Partition (\S+)-(\d+) broker=(\d+)\] |Partition \[([^\[\]]+),(\d+)\] on broker (\d+): )"
# `[Log partition=t-p, dir=D] ` (Log, 1.1-3.0) or `[UnifiedLog partition=t-p, dir=D] ` (3.1+; Confluent Server's
# `[MergedLog partition=t-p, dir=D] `): the partition of a log's own lines (truncation), which name it nowhere else
LOG_PART = r"^\[(?:Unified|Merged)?Log partition=(\S+)-(\d+), dir=[^\[\]]*\] "
ID_PREFIX = (r"^\[(?:Broker id|ReplicaFetcher replicaId|ReplicaFetcherManager on broker|Controller id|Controller|"
             r"QuorumController id|KafkaServer id|Kafka Server|KafkaRaftServer nodeId|BrokerServer id|"
             r"ControllerServer id|ReplicaManager broker|Replica Manager on Broker|ReplicaAlterLogDirsManager on broker|"
             r"BrokerLifecycleManager id|LogManager broker|Admin Manager on Broker|BrokerMetadataPublisher id|"
             r"DynamicConfigPublisher (?:nodeType=)?broker id)[= ](\d+)[\], ]")
STRIP_PREFIX = (r"^(?:\[Partition \S+-\d+ broker=\d+\] |Partition \[[^\[\]]+,\d+\] on broker \d+: |"
                r"\[[A-Za-z][^\[\]]{0,200}\][,:]? )")
PATH_BROKER = r"(?i)(?:^|[/_-])(?:broker|kafka)[-_]?(\d+)(?:[/_.]|$)"
TP_TEXT = r"^(?:\[([^\[\]]+),(\d+)\]|(\S+)-(\d+))$"
# The fetcher thread's logIdent names the leader it fetches from: `[ReplicaFetcher replicaId=F, leaderId=L,
# fetcherId=I] ` (AbstractFetcherThread, 1.0+), `[ReplicaFetcherThread-I-L], ` (0.10-0.11, the thread's name).
FETCHER_LEADER = r"^\[(?:ReplicaFetcher replicaId=\d+, leaderId=|ReplicaFetcherThread-\d+-)(\d+)[\],]"
FETCHER_KINDS = ("fetch_error", "fetch_epoch_mismatch", "fetch_offset_reset", "fetch_request_failed", "truncation_failed",
                 "truncated_below_hw", "truncation_refused", "partition_failed")
PARENTS = list(dict.fromkeys(r.parent for r in RULES if r.parent is not None))  # what attached lines follow


def _x(col: Column | str, pattern: str, idx: int) -> Column:
    """regexp_extract that yields null (not '') when the pattern or the group does not match."""
    return F.nullif(F.regexp_extract(col, pattern, idx), F.lit(""))


def _int(col: Column) -> Column:
    return col.try_cast("int")


def check_timezone(log_timezone: str) -> str:
    """The IANA zone the brokers' JVMs log in (log4j writes local time without an offset)."""
    try:
        ZoneInfo(log_timezone)
    except (ZoneInfoNotFoundError, ValueError):
        raise ReplicaflowError(f"--log-timezone: '{log_timezone}' is not an IANA time zone (e.g. UTC, "
                               f"Europe/Paris)") from None
    return log_timezone


def _source(shown_as: tuple[str, str] | None) -> Column:
    """The file a line came from as a path: Spark gives a URL (``%20`` for a space, ``%5B`` for ``[``).
    ``shown_as`` = (staging prefix, final prefix) names logs read from a command's staging folder by the
    path they have once the command commits (``run --logs``)."""
    url = F.regexp_replace(F.col("_metadata.file_path"), r"^file:(//)?", "")
    path = F.url_decode(F.replace(url, F.lit("+"), F.lit("%2B")))
    if shown_as is None:
        return path
    staged, final = shown_as
    return F.when(path.startswith(staged), F.concat(F.lit(final), F.substring(path, len(staged) + 1, 1 << 30))) \
        .otherwise(path)


def _lines(spark: SparkSession, files: list[str], shown_as: tuple[str, str] | None = None) -> DataFrame:
    try:
        whole = spark.read.text([spark_path(f) for f in files], wholetext=True)
    except AnalysisException as exc:
        raise ReplicaflowError(f"--logs: cannot read {files[0] if len(files) == 1 else 'the log files'}: "
                               f"{str(exc).splitlines()[0]}") from None
    # one shuffle of whole files: every later per-file step (line order, stack traces, refused ISR writes)
    # then finds a file's lines in one partition, where a shuffle of parsed lines would move several times
    # the bytes
    parts = min(len(files), 4 * spark.sparkContext.defaultParallelism)
    decoded = decode_files(whole, _source(shown_as))
    decoded = decoded.select("*", _int(_x("source", PATH_BROKER, 1)).alias("path_broker"))
    return split_lines(decoded.repartition(parts, "source"))


def _prefixes(df: DataFrame) -> DataFrame:
    """A record's logIdent prefix: the partition it names (``part``: [partition, broker, topic]), the broker
    it names (``prefix_broker``), the message without it (``body``), and ``parent_tags``: which of the
    rule table's parent patterns the body matches (bit i: ``PARENTS[i]``), for the lines attached to it."""
    is_record, msg = F.col("is_record"), F.col("msg")
    # (no logIdent of ID_PREFIX starts like a Partition prefix)
    df = df.select("*", F.when(is_record & (msg.startswith("[Partition ") | msg.startswith("Partition [")),
                               groups(msg, PART, ["$2$5", "$3$6", "$1$4"])).alias("part"),
                   F.when(is_record & (msg.startswith("[Log partition=") | msg.startswith("[UnifiedLog partition=")
                                        | msg.startswith("[MergedLog partition=")),
                          groups(msg, LOG_PART, ["$1", "$2"])).alias("log_part"),
                   F.when(is_record & msg.startswith("[") & ~msg.startswith("[Partition "),
                          F.regexp_extract(msg, ID_PREFIX, 1)).alias("_id"),
                   F.when(is_record, F.when(msg.startswith("[") | msg.startswith("Partition ["),
                                            F.regexp_replace(msg, STRIP_PREFIX, "")).otherwise(msg)).alias("body"))
    df = method_boundary(df)  # (the code that follows, with the sort's, is a method of its own: see _rows)
    body = F.col("body")
    tags = F.lit(0)
    for i, p in enumerate(PARENTS):
        tags = tags + F.when(guarded_rlike(body, p), F.lit(1 << i)).otherwise(F.lit(0))
    return df.select(*[c for c in df.columns if c != "_id"],
                     _int(F.coalesce(F.col("part")[1], F.nullif(F.col("_id"), F.lit("")))).alias("prefix_broker"),
                     F.when(is_record, tags).alias("parent_tags"))


def _context(df: DataFrame) -> DataFrame:
    """What a line takes from the lines before and after it in its file: whether the line before is a CRI 'P'
    line (``after_partial``), the record a continuation line (stack trace) is attached to (``parent``: its time,
    broker, parent tags, and its message where a tag is set), the line after a record where it continues it
    (``follows``: the first line of its stack trace) and the broker of a line that names none
    (``fallback_broker``). The lines before and after are those of the line's stream (``log_envelopes.stream``): in
    `docker compose logs` of a cluster, a broker's exception follows its record with other brokers' lines between
    them, and a line naming no broker is its own service's broker's; `grep -r` over several brokers' files puts each
    file's name before its lines. A line naming no broker takes that of the file grep names (`broker-2/server.log`),
    else its stream's first, else the path's; a line of no stream takes the path's first. A continuation line
    whose stream has no record before it continues the file's last record where that one has no envelope (a paste
    that cut the first line's compose prefix). No line continues a record across grep's `--` or a paste's code-block
    mark (``log_envelopes.CUT_MARK``): the lines between are not in the file. Two windows, two sorts of each file's
    lines: the file's and the stream's."""
    tags, is_record, cut = F.col("parent_tags"), F.col("is_record"), F.col("cut_mark")
    base = [F.col("ts_ms").alias("ts_ms"), F.col("prefix_broker").alias("broker"), tags.alias("tags"),
            F.when(tags != 0, F.col("msg")).alias("msg")]
    by_file = Window.partitionBy("source").orderBy("line_number")
    before = (Window.unboundedPreceding, Window.currentRow)
    # a cut mark (no time, broker, tags or message of its own) is the file's last "record" for the lines after it,
    # one that no line continues
    enveloped = F.coalesce(F.col("grep_name"), F.col("grep_match_name"), F.col("envelope_stream")).isNotNull() | cut
    in_file = F.when(is_record | cut, F.struct(*base, enveloped.alias("enveloped")))
    df = df.select("*", grep_path(by_file).alias("stream_path"),
                   F.lag("cri_flag").over(by_file).eqNullSafe("P").alias("after_partial"),
                   F.last(in_file, ignorenulls=True).over(by_file.rowsBetween(*before)).alias("_in_file"),
                   F.sum(cut.cast("int")).over(by_file.rowsBetween(*before)).alias("_segment"))
    df = df.select("*", stream(F.col("stream_path")).alias("stream"))
    by_stream = Window.partitionBy("source", "stream").orderBy("line_number")
    own = F.when(is_record, F.struct(*base, F.col("_segment").alias("segment")))
    named = F.first("prefix_broker", ignorenulls=True).over(
        by_stream.rowsBetween(Window.unboundedPreceding, Window.unboundedFollowing))
    continues = (F.col("_then") == CONTINUATION_LINE) & ~F.col("after_partial")
    df = df.select("*", F.last(own, ignorenulls=True).over(by_stream.rowsBetween(*before)).alias("_own"),
                   named.alias("_named"),
                   F.lead(F.when(continues, F.struct("inner", "_segment"))).over(by_stream).alias("_next"))
    own, in_file = F.col("_own"), F.col("_in_file")
    parent = F.coalesce(F.when(own.segment == F.col("_segment"), own.dropFields("segment")),
                        F.when(~in_file.enveloped, in_file.dropFields("enveloped")))
    path, named = F.col("path_broker"), F.col("_named")
    fallback = F.coalesce(_int(_x("stream_path", PATH_BROKER, 1)),
                          F.when(F.col("stream").isNull(), F.coalesce(path, named)).otherwise(F.coalesce(named, path)))
    follows = F.when(is_record & (F.col("_next._segment") == F.col("_segment")), F.col("_next.inner"))
    return df.select(*[c for c in df.columns if c not in ("_own", "_named", "_in_file", "_segment", "_next")],
                     parent.alias("parent"), fallback.alias("fallback_broker"), follows.alias("follows"))


def _classify(df: DataFrame) -> DataFrame:
    """Match the rule table: kind and fields of every record (and of attached exception lines)."""
    body, msg = F.col("body"), F.col("msg")
    is_record = F.col("status") == "record"
    attachable = (F.col("status") == "bad") & (F.col("line_reason") == CONTINUATION_LINE) & \
        F.col("parent").isNotNull()
    inner = F.trim(F.col("inner"))
    # a record of a replica moving between its broker's own directories is no replication event: no rule is tried
    replicating = is_record & ~msg.startswith(LOG_DIR_MOVER) & ~msg.startswith(LOG_DIR_MOVER_THREAD)
    conds = []
    for m in MATCHERS:
        rule = RULES[m.single] if m.single is not None else None
        if rule is None or (rule.parent is None and rule.ident is None):
            conds.append(replicating)
        elif rule.parent is None:
            conds.append(replicating & guard(body, rule.pattern) & guarded_rlike(msg, rule.ident))
        else:
            tag = 1 << PARENTS.index(rule.parent)
            conds.append(attachable & (F.col("parent.tags").bitwiseAND(F.lit(tag)) != 0) & guard(inner, rule.pattern))
    df = match_rules(df, conds, body, inner).withColumn("kind", F.col("meta.kind"))
    f = {n: F.col(f"f_{n}") for n in FIELDS}

    started_like = None
    for name, pattern in TRUNCATED_STARTS:
        cond = guarded_rlike(body, pattern)
        started_like = F.when(cond, F.lit(name)) if started_like is None else started_like.when(cond, F.lit(name))
    k = F.col("kind")
    df = method_boundary(df.select(
        "*", groups(F.coalesce(f["tp"], f["tp2"]), TP_TEXT, ["$2$4", "$1$3"]).alias("tp_text"),
        F.when(replicating & k.isNull(), started_like).alias("started_like"),
        F.when(F.col("meta.listing"), F.regexp_extract(body, LISTED, 1))  # rules with `explode`
        .alias("_listed")))
    # a log directory's list ends before the directory (`... are offline due to failure on log directory /data-0`)
    df = df.withColumn("listed", F.when(k.isin(*LISTED_BEFORE_END), F.regexp_replace(F.col("_listed"), LISTED_END, ""))
                       .otherwise(F.col("_listed"))).drop("_listed")
    part_topic, part_num, tp_text = F.col("part")[2], F.col("part")[0], F.col("tp_text")
    log_part = F.col("log_part")  # a log's own line names its partition only in the prefix
    # (an exception attached to a record names its partition itself: no Partition-logger prefix)
    prefixed = k.isin(*PREFIX_PARTITION_KINDS) & (F.col("status") != "bad")
    topic = F.when(prefixed, part_topic).otherwise(
        F.coalesce(F.nullif(tp_text[1], F.lit("")), f["topic_name"], log_part[0]))
    partition = F.when(prefixed, part_num).otherwise(
        F.coalesce(F.nullif(tp_text[0], F.lit("")), f["partition_index"], log_part[1]))
    isr = F.coalesce(id_list(f["isr"]), id_list(f["old_isr"]),
                     F.when(f["isr_states"].isNotNull(), F.regexp_extract_all(
                         f["isr_states"], F.lit(r"brokerId=(\d+)"), 1).try_cast("array<int>")))
    # reassignment rows keep the target replicas in `isr` too (the column's meaning before `replicas` existed)
    isr = F.when(k.startswith("reassignment_"), id_list(f["replicas"])).otherwise(isr)
    lists = {n: id_list(f[n]) for n in LIST_FIELDS}
    # a failed election's exception (0.8-1.0, the record's next line) names the dead ISR, or the assigned replicas,
    # all dead (unclean election on): the selector throws before it writes, and the ISR is as it was (an unclean
    # election later says so itself: log_changes.changes)
    failed = F.substring(F.when(k == "partition_offline", F.col("follows")), 1, FAILED_ELECTION_CHARS)
    named, failed_ids = F.regexp_extract(failed, FAILED_ELECTION, 1), id_list(F.regexp_extract(failed, FAILED_ELECTION, 2))
    isr = F.coalesce(isr, F.when(named == "ISR brokers", failed_ids))
    lists["replicas"] = F.coalesce(lists["replicas"], F.when(named == "Assigned replicas", failed_ids))
    df = method_boundary(df.select("*", topic.alias("topic"), partition.alias("partition_text"), isr.alias("isr"),
                                   *[lists[n].alias(n) for n in LIST_FIELDS if n != "isr"]))
    # from the columns just made: built from the expressions, each list was computed twice on every event line
    out_of_range = _out_of_range(f, F.col("partition_text"), {n: F.col(n) for n in LIST_FIELDS})
    is_parented = F.col("status") == "bad"
    broker = F.coalesce(F.when(is_parented, F.col("parent.broker")), _int(f["broker"]), F.col("prefix_broker"),
                        F.col("fallback_broker"))
    started_like = F.col("started_like")
    reason = (
        F.when(F.col("status") == "bad", F.when(~attachable, F.col("line_reason")).when(k.isNotNull(), out_of_range))
        .when(~is_record, F.lit(None))
        .when(k.isin(*PREFIX_PARTITION_KINDS) & part_topic.isNull(),
              F.lit("no partition prefix ([Partition topic-N broker=B]) on an ISR message"))
        .when(k.isNotNull() & broker.isNull(), F.lit("unknown broker id (no prefix, path has no broker-N)"))
        .when(k.isNotNull(), out_of_range)
        .when(started_like.isNotNull() & body.rlike(TRUNCATED_LIST), F.lit("truncated ISR list"))
        .when(started_like.isNotNull(), F.concat(F.lit("truncated or malformed "), started_like, F.lit(" message")))
        .when(((F.col("logger") == "kafka.cluster.Partition") | part_topic.isNotNull()) & body.contains("ISR"),
              F.lit("unknown message"))
    )
    return df.select(
        # a KRaft controller's election line of 4.1 names the epoch before it: the record raises it by one
        "*", _int(F.col("partition_text")).alias("partition"),
        F.coalesce(_int(f["leader_epoch"]), F.when(k.isin(*ELECTION_KINDS), _int(f["prev_leader_epoch"]) + 1))
        .alias("leader_epoch"), broker.alias("broker"), reason.alias("reason"),
        # -2 names no broker: a PartitionChangeRecord's "no change", ZooKeeper's LeaderDuringDelete
        F.nullif(_int(F.coalesce(f["leader"], f["old_leader"], F.when(k.isin(*FETCHER_KINDS),
                                                                      _x(msg, FETCHER_LEADER, 1)))), F.lit(-2))
        .alias("leader"), _previous_leader(k, f).alias("target_broker"),
        _int(f["partition_epoch"]).alias("partition_epoch"), f["offset"].try_cast("long").alias("offset"),
        _int(F.coalesce(f["min_isr"], f["min_isr2"])).alias("min_isr"),
        F.when(f["state"].startswith("("), F.regexp_replace(f["state"], r"^\((.*)\)$", "$1")).otherwise(f["state"])
        .alias("state"), f["log_dir"].alias("log_dir"),
        F.coalesce(f["error"], F.when(k.isNotNull(), F.nullif(
            F.regexp_extract(F.substring("follows", 1, CAUSE_CHARS), CAUSE, 1), F.lit("")))).alias("error"),
        F.when(is_parented, F.concat_ws(" ", F.col("parent.msg"), F.trim("inner"))).otherwise(msg).alias("message"),
        F.when(is_parented, F.col("parent.ts_ms")).otherwise(F.col("ts_ms")).alias("event_ts_ms"),
    ).drop("partition_text")


# fields Kafka writes as an int: broker ids, leader and partition epochs, partition numbers, counts
INT_FIELDS = ("leader", "old_leader", "leader_epoch", "prev_leader_epoch", "partition_epoch", "broker", "target_broker",
              "min_isr", "min_isr2", "partition_index", "isr_size")
NUMBER = r"^-?\d+$"
# a partition number in a line's list: `t-p` before a separator, or `[t,p]`
LISTED_PARTITION = r"(?:-(?=\d+(?:[,)\s]|$))|,(?=\d+\]))(\d+)"


def _overflows(text: Column, kind: str = "int") -> Column:
    """A number too large for Kafka's int (10 digits or more) or long (19): shorter text is neither cast nor matched."""
    return (F.length(text) >= (10 if kind == "int" else 19)) & text.try_cast(kind).isNull() & text.rlike(NUMBER)


def _out_of_range(f: dict[str, Column], partition: Column, lists: dict[str, Column]) -> Column:
    """Why an event line's numbers cannot be Kafka's, or null: a number too large for the int (ids, epochs,
    partitions) or long (offsets) Kafka writes it as, a list naming such an id or partition, or a leader below -2
    (-1 is no leader, -2 a KRaft record's "no change"). Such a line is corrupt or forged; read, it lost the field."""
    checks = [*[(n, _overflows(f[n])) for n in INT_FIELDS], ("partition", _overflows(partition)),
              ("offset", _overflows(f["offset"], "long"))]
    field = F.coalesce(*[F.when(c, F.lit(f"{n} field")) for n, c in checks])
    # the lists of brokers (ISR, replicas; `Broker failure callback for 1,2`) and of partitions (fetchers, log dirs)
    brokers = F.col("kind").isin(*BROKER_LIST_KINDS)
    # (no run of 10 digits: every id and partition listed fits)
    listed = F.when(F.col("listed").rlike(r"\d{10}"), F.when(brokers, F.regexp_extract_all("listed", F.lit(r"\d+"), 0))
                    .otherwise(F.regexp_extract_all("listed", F.lit(LISTED_PARTITION), 1)))
    lists = {**{f"{n} list": c for n, c in lists.items()}, "listed": listed.try_cast("array<int>")}
    named = F.coalesce(*[F.when(F.size(F.array_compact(c)) < F.size(c), F.lit(n)) for n, c in lists.items()])
    named = F.when(named == "listed", F.when(brokers, F.lit("broker list")).otherwise(F.lit("partition list"))) \
        .otherwise(named)
    leader = _int(F.coalesce(f["leader"], f["old_leader"]))
    return F.coalesce(F.concat(F.lit("a number too large for Kafka's "), F.coalesce(field, named)),
                      F.when(leader < -2, F.concat(F.lit("leader "), leader.cast("string"), F.lit(" is no broker id"))))


def _previous_leader(kind: Column, f: dict[str, Column]) -> Column:
    """``target_broker``, but not where a follower line's "previous" leader epoch is its new one: Partition.makeFollower
    3.6 - 4.1 sets the new leader and epoch before it logs them as the previous ones (KAFKA-19776), and a follower
    line is only written for a new leader epoch, so that leader is the current one, and the previous one unknown."""
    stale = (kind == "follower_start") & (f["prev_leader_epoch"] == f["leader_epoch"])
    return F.when(~stale | stale.isNull(), _int(f["target_broker"]))


def _category(df: DataFrame) -> DataFrame:
    k, status = F.col("kind"), F.col("status")
    cat = (F.when(status == "blank", F.lit("blank"))
           .when(F.col("reason").isNotNull(), F.lit("reject"))
           .when(k.isNotNull(), F.lit("event"))
           .when(status == "bad", F.lit("attached"))
           .otherwise(F.lit("other")))
    return df.select("*", cat.alias("category"))


# The partitions a line lists: after the first "partitions", where 2.1-2.4's fetcher line names its leader as
# `to broker BrokerEndPoint(id=L, host=h:p) ` first (AbstractFetcherManager logged the endpoint, later its id); the
# brokers a controller's `Broker failure callback for 1,2` lists (a row each, the broker as target_broker).
LISTED = (r"^(?:Added fetcher to broker BrokerEndPoint\([^()]*\) )?(?:[^(\[]*?(?:partitions|Partitions)|(?:Broker failure|"
          r"New broker startup) callback for|Currently active brokers in the cluster:|Starting replica leader election "
          r"\(\w+\) for partitions) (.*)$")
# where a list ends before the rest of its line: a failed directory's, a 2.4+ leader election's (`... triggered by T`)
LISTED_END = r" (?:are offline|and stopped moving logs|because they are|triggered by) .*$"
LISTED_BEFORE_END = ("log_dir_offline", "preferred_election_started", "unclean_election_started")
FAILED_ELECTION_CHARS = 4096  # a NoReplicaOnlineException's line: a partition, the live brokers, the ISR or replicas
EVENT_COLUMNS = ("kind", "topic", "partition", "isr", "leader_epoch", "broker", "leader", "target_broker", "replicas",
                 "adding", "removing", "partition_epoch", "offset", "min_isr", "state", "log_dir", "error")
# A fetcher line's partition token: to 2.0 `[t-p, initOffset O to broker BrokerEndPoint(L,host,port)] `; 2.1+ adds the
# leader's epoch: `t-p -> (offset=O, leaderEpoch=E)` to 2.7, then `t-p -> InitialFetchState([Some(id),]…,E,O)`.
FETCHER_TOKEN = (r"(?:\[\[[^\[\]]+,\d+\]|\[[^\s\[\],]+-\d+), initOffset(?: -?\d+ to broker BrokerEndPoint\(\d+)?"
                 r"|[^\s,()\[\]]+-\d+ -> (?:\(offset=-?\d+, leaderEpoch=-?\d+|InitialFetchState\((?:Some\([^()]*\),|None,)?"
                 r"BrokerEndPoint\([^()]*\),-?\d+)?")
TOKEN_LEADER, TOKEN_EPOCH = r"to broker BrokerEndPoint\((\d+)$", r"(?:leaderEpoch=|\),)(-?\d+)$"
LIST_TOKEN = r"\[[^\[\],]+,\d+\]|[^\s,()\[\]]+-\d+"
# a listed partition: `[t,p]` (TopicAndPartition) before `t-p` (TopicPartition), one match giving both fields
_TOKEN = r"^(?:\[\[?([^\[\]]+),(\d+)\]|\[?(\S+)-(\d+)(?:, initOffset| -> |$))"


# AppInfoParser's line at every start of a broker (`Kafka version : X` up to 2.1, `Kafka version: X` from 2.2)
PRINTED_VERSION = r"^Kafka version ?: *(\S+)\s*$"


def _rows(lines: DataFrame) -> DataFrame:
    """The one frame every output is read from: a row per line, and for an event line listing partitions
    (fetchers, log directories) a row per partition it lists; ``first`` marks each line's first row,
    ``event_row`` the rows that are ``log_events``. Only the columns the outputs need are kept."""
    k, is_event = F.col("kind"), F.col("category") == "event"
    listed = F.col("listed")
    is_list = is_event & listed.isNotNull()
    brokers = k.isin(*BROKER_LIST_KINDS)
    tokens = F.when(is_event, F.when(k == "fetcher_added", F.regexp_extract_all(listed, F.lit(FETCHER_TOKEN), 0))
                    .when(brokers, F.regexp_extract_all(listed, F.lit(r"\d+"), 0))
                    .when(is_list, F.regexp_extract_all(listed, F.lit(LIST_TOKEN), 0)))
    is_reject = F.col("category") == "reject"
    df = lines.select(
        "source", "line_number", "category", "reason", "event_ts_ms", *EVENT_COLUMNS, is_list.alias("is_list"),
        F.when(is_reject, shown_raw(F.col("raw"), F.col("raw_length"))).alias("raw_line"),
        F.when(is_event | (F.col("category") == "other") & F.col("message").startswith("Kafka version"),
               F.col("message")).alias("message"),
        start_marker().alias("start"),  # a process's first lines (ingest/unlogged_ends.py)
        F.posexplode_outer(tokens).alias("token_pos", "token"))
    t, is_list = F.col("token"), F.col("is_list")
    # (a method of its own: with the explode's code and the sort's, one generated method outgrew what
    # HotSpot's C2 compiles in under 2 s, and it was compiled again after each deoptimization)
    df = method_boundary(df.select("*", F.when(is_list, groups(t, _TOKEN, ["$1$3", "$2$4"])).alias("tp_token")))
    tp_token = F.col("tp_token")
    event_row = F.col("category") == "event"
    # a new controller that finds no broker registered (`Set()`) still tells that each broker is not: one row
    event_row = event_row & (~is_list | t.isNotNull() | F.col("state").eqNullSafe(ACTIVE_SET))
    printed = F.when(F.col("category") == "other", F.nullif(F.regexp_extract("message", PRINTED_VERSION, 1), F.lit("")))
    return df.select(
        "source", "line_number", "category", "reason", "raw_line", "message", "event_ts_ms", printed.alias("printed"),
        "start",
        *[c for c in EVENT_COLUMNS if c not in ("topic", "partition", "leader", "leader_epoch", "target_broker")],
        F.coalesce(F.col("leader_epoch"), F.when(F.col("kind") == "fetcher_added", _int(F.nullif(
            F.regexp_extract(t, TOKEN_EPOCH, 1), F.lit(""))))).alias("leader_epoch"),
        F.when(brokers, _int(t)).otherwise(F.col("target_broker")).alias("target_broker"),
        F.coalesce(F.col("leader"), _int(F.nullif(F.regexp_extract(t, TOKEN_LEADER, 1), F.lit("")))).alias("leader"),
        F.when(is_list, tp_token[0]).otherwise(F.col("topic")).alias("topic"),
        F.when(is_list, _int(tp_token[1])).otherwise(F.col("partition")).alias("partition"),
        event_row.alias("event_row"), F.coalesce(F.col("token_pos") == 0, F.lit(True)).alias("first"))


# Columns read by the line checks (before the context window) and by the window and line_status (after it),
# dropped once read: Spark's generated code passes every column to each of a stage's methods as two
# arguments, and HotSpot's C2 gives up on a method with too many ("unsupported incoming calling
# sequence"), leaving it in C1's slower code; the window's sort also copies fewer bytes.
_CHECKS_ONLY = ("file_utf16", "utf8_ok", "json_layout", "bad_json", "has_layout", "level", "config_line")
_CONTEXT_ONLY = ("path_broker", "stream", "stream_path", "cri_flag", "blank", "is_record", "parent_tags",
                 "after_partial", "grep_name", "grep_long_name", "grep_match_name", "grep_numbered", "envelope_stream",
                 "cut_mark")


def classify_lines(spark: SparkSession, paths: str | Path | Iterable[str | Path],
                   shown_as: tuple[str, str] | None = None, log_timezone: str = "UTC") -> DataFrame:
    """Every physical line of the logs with its category, reason and parsed fields (debugging aid)."""
    check_timezone(log_timezone)
    df = _lines(spark, resolve_paths(paths), shown_as)
    return df.transform(unwrap).transform(lambda d: parse_layout(d, log_timezone)).transform(line_checks) \
        .drop(*_CHECKS_ONLY).transform(method_boundary).transform(_prefixes) \
        .transform(_context).transform(line_status).drop(*_CONTEXT_ONLY).transform(_classify).transform(_category)


def _with_cluster(spark: SparkSession, rows: DataFrame, cluster: str | Mapping[str, str],
                  shown_as: tuple[str, str] | None) -> DataFrame:
    """``rows`` with each line's ``cluster``: one name, or each file's (``{file: cluster}``, files as
    ``resolve_paths`` names them) joined by the line's ``source`` from a small broadcast table, not a map literal
    copied into every later plan and searched at every line (docs/real-cluster.md, "A fleet")."""
    names = {cluster} if isinstance(cluster, str) else set(cluster.values())
    if len(names) == 1:
        return rows.withColumn("cluster", F.lit(names.pop()))

    def shown(path: str) -> str:
        if shown_as is not None and path.startswith(shown_as[0]):
            return shown_as[1] + path[len(shown_as[0]):]
        return path
    files = {shown(os.path.abspath(f)): name for f, name in cluster.items()}  # type: ignore[union-attr]
    return rows.join(F.broadcast(local_frame(spark, sorted(files.items()), "source string, cluster string")),
                     "source", "left")


def read_logs(spark: SparkSession, paths: str | Path | Iterable[str | Path], cluster: str | Mapping[str, str],
              shown_as: tuple[str, str] | None = None, log_timezone: str = "UTC") -> dict[str, DataFrame]:
    """Broker logs -> ``log_events``, ``rejects`` (ANALYSIS schemas), ``isr``, ``leaders`` (TELEMETRY
    schemas), ``line_counts`` (source, category, lines: how every line was accounted for),
    ``printed_versions`` (cluster, kafka_version: what each `Kafka version: X` line says, AppInfoParser at a start)
    and ``line_times`` (cluster, ts_ms, broker, source, line_number, start: every readable line, for the end of the
    logged period and the end of a process that logged none, ``unlogged_ends``).

    ``cluster``: the cluster's name, or for a fleet each file's cluster (``{file: cluster}``, every file of
    ``paths``). A fleet is read as one query: the reader's plan is large (a rule table of expressions),
    and one plan per cluster, unioned, grew the driver's heap with the number of clusters (ten clusters of
    a few kilobytes each filled 4 GB).

    ``paths`` is a file, a directory, a glob or a list of them. ``log_timezone`` (IANA name) is the zone
    of timestamps written without an offset (log4j's default layout). A path that matches nothing or an
    unknown zone raises ReplicaflowError, before Spark reads anything. Every output is read from one
    local checkpoint of ``_rows`` (refused ISR writes marked), so writing them all parses the logs once. A
    checkpoint, not a cache: a query over a cached frame still carries the reader's whole plan, which Spark
    analyzes and matches against its cache at every later query; over the checkpoint the plan is one scan
    (rebuilding a 60 s story's six files took 99 s cached, 20 s checkpointed: docs/real-cluster.md).
    """
    rows = _with_cluster(spark, mark_refused(_rows(classify_lines(spark, paths, shown_as, log_timezone))), cluster,
                         shown_as).localCheckpoint(eager=False)
    events = conform(rows.where("event_row").select(
        "cluster", F.col("event_ts_ms").alias("ts_ms"), "source",
        "line_number", "message", *EVENT_COLUMNS), ANALYSIS["log_events"]).transform(name_topics)
    rejects = conform(rows.where(F.col("category") == "reject").select("source", "line_number", "raw_line", "reason"),
                      ANALYSIS["rejects"])
    counts = rows.where("first").groupBy("source", "category").agg(F.count(F.lit(1)).alias("lines"))
    printed = rows.where(F.col("printed").isNotNull()).select(
        "cluster", F.col("printed").alias("kafka_version")).distinct()
    times = rows.where(F.col("category").isin("event", "other") & F.col("event_ts_ms").isNotNull() & F.col("first")) \
        .select("cluster", F.col("event_ts_ms").alias("ts_ms"), "broker", "source", "line_number", "start")
    isr, leaders = changes(events)
    return {"log_events": events, "rejects": rejects, "isr": isr, "leaders": leaders, "line_counts": counts,
            "printed_versions": printed, "line_times": times}
