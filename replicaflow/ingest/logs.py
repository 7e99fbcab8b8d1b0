"""Read Kafka broker logs (every release family of docs/semantics.md §7) into replication events, with Spark.

Each file is read whole (``wholetext``) and split into numbered lines with ``posexplode``, so line
numbers are exact and native. A line is unwrapped from its container envelope (CRI
``<time> stdout F ``, docker ``{"log": ...}``), parsed as log4j's pattern layout
``[yyyy-MM-dd HH:mm:ss,SSS] LEVEL message (logger)`` or a JSON layout, and its message is matched
against the replication messages Kafka writes. Every line ends in exactly one category:

- ``event``: a replication message -> ``log_events`` (and ``isr`` / ``leaders`` change rows);
- ``other``: a readable log line that is not a replication event (counted, not kept);
- ``attached``: a stack-trace line following a record (part of that record);
- ``blank``: ignored;
- ``reject``: unreadable -> ``rejects`` with its reason.

Only Spark built-in expressions are used (no Python UDF). See docs/logs.md.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Iterable
from pathlib import Path

from pyspark.errors import AnalysisException
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from replicaflow.errors import ReplicaflowError
from replicaflow.telemetry.schema import ANALYSIS, TELEMETRY
from replicaflow.telemetry.spark import conform, spark_path

LEVELS = ("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL")
ISR_KINDS = ("isr_shrink", "isr_expand", "isr_updated", "isr_update_failed")
PARTITION_PREFIX_KINDS = ISR_KINDS  # kinds whose topic-partition is only in the message prefix

# --- envelopes and layouts -----------------------------------------------------------------------
CRI = r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})) (stdout|stderr) ([FP]) ?(.*)$"
LAYOUT = r"^\[(\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}[,.]\d{3})\] ([A-Za-z]+) (.*?)(?: \(([A-Za-z_$][\w.$]*)\))?$"
TS_START = r"^\[\d{4}-\d{2}-\d{2}"
CONTINUATION = (r"^(?:\s+at |\s*\.\.\. \d+ (?:more|common frames omitted)|Caused by: |\s+Suppressed: |"
                r"[A-Za-z_$][\w$]*(?:\.[\w$]+)+(?:Exception|Error|Throwable)(?::|$))")

# --- message prefixes (logIdent) -----------------------------------------------------------------
PART_NEW = r"^\[Partition (.+)-(\d+) broker=(\d+)\] "
PART_OLD = r"^Partition \[(.+),(\d+)\] on broker (\d+): "
ID_PREFIX = (r"^\[(?:Broker id|ReplicaFetcher replicaId|ReplicaFetcherManager on broker|Controller id|Controller|"
             r"QuorumController id|KafkaServer id|Kafka Server|KafkaRaftServer nodeId|BrokerServer id|"
             r"ControllerServer id)[= ](\d+)[\],]")
STRIP_PREFIX = r"^(?:\[Partition .+-\d+ broker=\d+\] |Partition \[.+,\d+\] on broker \d+: |\[[A-Za-z][^\[\]]*\][,:]? )"
PATH_BROKER = r"(?i)(?:^|[/_-])(?:broker|kafka)[-_]?(\d+)(?:[/_]|\.log|$)"

# --- replication messages (on the message body, prefix stripped) ---------------------------------
_L = r"(\d+(?:,\d+)*)"   # a non-empty broker list
_L0 = r"(\d*(?:,\d+)*)"  # a possibly empty broker list
SHRINK = (rf"^Shrinking ISR (?:for partition \[.+,\d+\] )?from {_L} to {_L}(?:\. Leader: \(highWatermark: -?\d+, "
          r"endOffset: (?:-?\d+|unknown)\)\. Out of sync replicas: .*\.)?$")
EXPAND = rf"^Expanding ISR (?:for partition \[.+,\d+\] )?from {_L} to {_L}$"
UPDATED = (rf"^ISR updated (?:from AlterIsr )?to \[?{_L0}\]?\s+(\(under-min-isr\)\s+)?"
           r"and (?:zk[Vv]ersion|version|partition epoch) updated to \[?(-?\d+)\]?$")
CACHED = r"^Cached zkVersion \[?(-?\d+)\]? not equal to that in zookeeper, skip updating ISR\.?$"
LEADER_NEW = (rf"^Leader (.+)-(\d+) (?:with topic id \S+ )?starts at leader epoch (-?\d+) from offset (-?\d+) with "
              rf"(?:partition epoch (-?\d+), )?high watermark (-?\d+),? ISR \[{_L0}\],? "
              rf"(?:addingReplicas|adding replicas) \[{_L0}\],? (?:removingReplicas|and removing replicas) \[{_L0}\]"
              r"(?: \(under-min-isr\))?\. Previous (?:leader (?:Some\((\d+)\)|None) and previous )?"
              r"leader epoch was (-?\d+)\.?$")
LEADER_OLD = r"^(.+)-(\d+) starts at Leader Epoch (-?\d+) from offset (-?\d+)\. Previous Leader Epoch was: (-?\d+)$"
ADDED = r"^Added fetcher (?:to broker .+? )?for partitions (.+)$"
ADDED_TOKEN = r"\[\[[^\[\]]+,\d+\], initOffset|\[[^\s\[\],]+-\d+, initOffset|[^\s,()\[\]]+-\d+ -> "
REMOVED = r"^Removed fetcher for partitions (.*)$"
REMOVED_TOKEN = r"\[[^\[\],]+,\d+\]|[^\s,()\[\]]+-\d+"
FAILED = r"^Partition (.+)-(\d+) marked as failed$"
DUE = r"^Error due to\s*$"
DIED = r"^\S*Exception: [Ee]rror processing data for partition (?:\[(.+),(\d+)\]|(.+)-(\d+)) offset (-?\d+)$"
HANDLING = rf"^Handling reassignment of partition (?:\[(.+),(\d+)\]|(.+)-(\d+)) to new replicas {_L}$"
SUCCESS = (rf"^Successfully updated assignment of partition (.+)-(\d+) to ReplicaAssignment\(replicas={_L0}, "
           rf"addingReplicas={_L0}, removingReplicas={_L0}\)$")
CAUGHT_UP = (r"^Target replicas List\(([\d, ]*)\) have all caught up with the leader for reassigning "
             r"partition (.+)-(\d+)$")
ZK_DONE = (r"^Removed partition (?:\[(.+),(\d+)\]|(.+)-(\d+)) from the list of reassigned partitions in "
           r"zookeeper$")
KRAFT_DONE = r"^AlterPartition request from node (\d+) for (.+)-(\d+) completed the ongoing partition reassignment\.$"
REPLAYED = (r"^Replayed partition assignment change PartitionChangeRecord\(partitionId=(\d+), .*, replicas=\[([\d, ]*)\], "
            r"removingReplicas=\[([\d, ]*)\], addingReplicas=\[([\d, ]*)\].*\) for topic (.+)$")
STARTED = r"^(?:Kafka Server )?started$"
SHUTDOWN = r"^shut down completed$"

# A line that begins like a replication message but does not match it in full.
TRUNCATED_STARTS = [
    ("isr_shrink", r"^Shrinking ISR"), ("isr_expand", r"^Expanding ISR"), ("isr_updated", r"^ISR updated"),
    ("isr_update_failed", r"^Cached zkVersion"),
    ("leader_start", r"^Leader .+ starts at leader epoch|starts at Leader Epoch"),
    ("fetcher_added", r"^Added fetcher"), ("fetcher_removed", r"^Removed fetcher"),
    ("partition_failed", r"^Partition .+ marked as failed"),
    ("reassignment", r"^Handling reassignment of partition|^Successfully updated assignment of partition|"
                     r"^Target replicas List|^AlterPartition request from node|^Replayed partition assignment change"),
]
TRUNCATED_LIST = r"(?:,|\[|\[\d+(?:,\d+)*|\b(?:from|to|ISR))$"


def _x(col: Column | str, pattern: str, idx: int) -> Column:
    """regexp_extract that yields null (not '') when the pattern or the group does not match."""
    return F.nullif(F.regexp_extract(col, pattern, idx), F.lit(""))


def _tp(col: Column | str, pattern: str, topic_idx: int, partition_idx: int) -> tuple[Column, Column]:
    """(topic, partition) from two groups of one pattern."""
    return _x(col, pattern, topic_idx), _x(col, pattern, partition_idx)


def _first_match(cases: list[tuple[Column, list[Column]]]) -> Column:
    """``CASE WHEN cond THEN coalesce(alternatives) ...``: the value of the first condition that holds."""
    out = None
    for cond, alternatives in cases:
        value = F.coalesce(*alternatives) if len(alternatives) > 1 else alternatives[0]
        out = F.when(cond, value) if out is None else out.when(cond, value)
    return out


def _int(col: Column) -> Column:
    return col.try_cast("int")


def _ids(col: Column) -> Column:
    """'1,2,3' (or '1, 2, 3') -> array<int>; '' -> []."""
    return F.when(col.isNull(), F.lit(None)).otherwise(
        F.transform(F.filter(F.split(F.regexp_replace(col, r"\s", ""), ","), lambda s: s != ""),
                    lambda s: s.try_cast("int")))


def _g(pattern: str, idx: int) -> Column:
    """Group ``idx`` of ``pattern`` on the message body, as a raw string ('' kept: empty lists)."""
    return F.regexp_extract("body", pattern, idx)


def resolve_paths(paths: str | Path | Iterable[str | Path]) -> list[str]:
    """Local files, directories (recursively) and globs (``**`` allowed); remote URIs pass through.

    Raises ReplicaflowError naming the first path or glob that matches no file.
    """
    items = [paths] if isinstance(paths, str | Path) else list(paths)
    if not items:
        raise ReplicaflowError("--logs: no log file, directory or glob was given")
    out: list[str] = []
    for item in items:
        text = str(item)
        if re.match(r"^[A-Za-z][\w+.-]*://", text) and not text.startswith("file:"):
            out.append(text)
            continue
        local = re.sub(r"^file:(//)?", "", text)
        literal = Path(local).expanduser()  # an existing path is itself, even with `[1]` in its name
        candidates = [Path(m) for m in sorted(glob.glob(local, recursive=True))] \
            if glob.has_magic(local) and not literal.exists() else [literal]
        found: list[Path] = []
        for c in candidates:
            if c.is_dir():
                found += sorted(f for f in c.rglob("*")
                                if f.is_file() and not any(p.startswith(".") for p in f.relative_to(c).parts))
            elif c.is_file():
                found.append(c)
        if not found:
            raise ReplicaflowError(f"--logs: '{text}' matches no file")
        out += [os.path.abspath(f) for f in found]  # not resolve(): a log behind a link keeps the name given
    return list(dict.fromkeys(out))


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
    """One row per physical line: source, line_number (1-based), raw, utf8_ok."""
    try:
        whole = spark.read.text([spark_path(f) for f in files], wholetext=True)
    except AnalysisException as exc:
        raise ReplicaflowError(f"--logs: cannot read {files[0] if len(files) == 1 else 'the log files'}: "
                               f"{str(exc).splitlines()[0]}") from None
    split = whole.select(
        _source(shown_as).alias("source"),
        F.is_valid_utf8("value").alias("file_utf8"), F.split("value", "\n").alias("lines"))
    exploded = split.select("source", "file_utf8", F.size("lines").alias("n"),
                            F.posexplode("lines").alias("pos", "line"))
    # the empty string after a file's final newline is not a line
    exploded = exploded.where((F.col("pos") < F.col("n") - 1) | (F.col("line") != ""))
    raw = F.regexp_replace("line", r"\r$", "")
    return exploded.select(
        "source", (F.col("pos") + 1).cast("long").alias("line_number"), raw.alias("raw"),
        # split() decodes, replacing invalid bytes with U+FFFD; in a file that was valid UTF-8 a U+FFFD is
        # genuine, so only lines of invalid files that carry one are flagged.
        (F.col("file_utf8") | ~raw.contains("\ufffd")).alias("utf8_ok"),
    )


def _parse_layout(df: DataFrame) -> DataFrame:
    """Unwrap container envelopes; parse pattern or JSON layouts into ts_ms, level, msg, logger."""
    raw = F.col("raw")
    is_cri = raw.rlike(CRI)
    docker = F.when(F.ltrim(raw).startswith("{"), F.get_json_object(raw, "$.log"))
    inner = (F.when(is_cri, F.regexp_extract(raw, CRI, 4))
             .when(docker.isNotNull(), F.regexp_replace(docker, r"\r?\n$", ""))
             .otherwise(raw))
    df = df.select("*", inner.alias("inner"), F.when(is_cri, F.regexp_extract(raw, CRI, 3)).alias("cri_flag"))

    j = F.col("inner")
    is_json = F.ltrim(j).startswith("{")
    j_msg = F.get_json_object(j, "$.message")
    j_ts_text = F.coalesce(*[F.get_json_object(j, p) for p in
                             ("$.timestamp", "$['@timestamp']", "$.time", "$.timeMillis", "$.instant.epochSecond")])
    j_ts = F.when(j_ts_text.rlike(r"^\d{12,}$"), j_ts_text.try_cast("long")).when(
        j_ts_text.rlike(r"^\d{9,11}(?:\.\d+)?$"), (j_ts_text.try_cast("double") * 1000).try_cast("long")).otherwise(
        F.unix_millis(F.coalesce(
            F.try_to_timestamp(F.regexp_replace(j_ts_text, r"[T ](\d{2}:\d{2}:\d{2})[,.](\d{3})\d*(Z)?$",
                                                " $1,$2"), F.lit("yyyy-MM-dd HH:mm:ss,SSS")),
            j_ts_text.try_cast("timestamp"))))
    j_level = F.upper(F.coalesce(F.get_json_object(j, "$.level"), F.get_json_object(j, "$['log.level']")))
    j_logger = F.coalesce(*[F.get_json_object(j, p) for p in ("$.logger", "$.loggerName", "$.logger_name",
                                                             "$['log.logger']")])
    p_ts_text = F.regexp_extract(j, LAYOUT, 1)
    p_ts = F.unix_millis(F.try_to_timestamp(
        F.regexp_replace(F.regexp_replace(p_ts_text, "T", " "), r"\.(\d{3})$", ",$1"),
        F.lit("yyyy-MM-dd HH:mm:ss,SSS")))
    is_layout = j.rlike(LAYOUT)
    json_layout = is_json & j_msg.isNotNull()
    return df.select(
        "*",
        (is_json & ~json_layout).alias("bad_json"),
        F.when(json_layout, j_ts).when(is_layout, p_ts).alias("ts_ms"),
        F.when(json_layout, j_level).when(is_layout, F.upper(F.regexp_extract(j, LAYOUT, 2))).alias("level"),
        F.when(json_layout, j_msg).when(is_layout, F.regexp_extract(j, LAYOUT, 3)).alias("msg"),
        F.when(json_layout, j_logger).when(is_layout, _x(j, LAYOUT, 4)).alias("logger"),
        (json_layout | is_layout).alias("has_layout"),
        json_layout.alias("json_layout"),
    )


def _line_status(df: DataFrame) -> DataFrame:
    """Decide per line: blank / reject (with reason) / record / continuation, before messages are matched."""
    inner, raw = F.col("inner"), F.col("raw")
    record = F.col("has_layout") & F.col("ts_ms").isNotNull() & F.col("level").isin(*LEVELS) & \
        F.col("msg").isNotNull() & F.col("utf8_ok") & ~F.col("cri_flag").eqNullSafe("P")
    reason = (
        F.when(~F.col("utf8_ok"), F.lit("invalid UTF-8"))
        .when(F.col("cri_flag") == "P", F.lit("partial line (CRI 'P' flag): long line split by the container runtime"))
        .when(record, F.lit(None))
        .when(F.col("bad_json"), F.lit("unreadable JSON log record (no message field or invalid JSON)"))
        .when(F.col("json_layout") & F.col("ts_ms").isNull(), F.lit("no timestamp in JSON log record"))
        .when(F.col("has_layout") & F.col("ts_ms").isNull(), F.lit("invalid timestamp"))
        .when(F.col("has_layout") & ~F.col("level").isin(*LEVELS),
              F.concat(F.lit("unknown log level '"), F.coalesce(F.col("level"), F.lit("")), F.lit("'")))
        .when(inner.rlike(CONTINUATION), F.lit("continuation line"))
        .when(inner.rlike(TS_START), F.lit("truncated or malformed timestamp/layout"))
        .otherwise(F.lit("no timestamp"))
    )
    blank = (F.trim(inner) == "") | (F.trim(raw) == "")
    return df.select("*", F.when(blank, F.lit("blank")).when(record, F.lit("record")).otherwise(F.lit("bad"))
                     .alias("status"), F.when(~blank, reason).alias("line_reason"))


def _with_parent(df: DataFrame) -> DataFrame:
    """Attach continuation lines (stack traces) to the preceding record of the same file."""
    w = Window.partitionBy("source").orderBy("line_number")
    preceding = w.rowsBetween(Window.unboundedPreceding, Window.currentRow)
    whole_file = w.rowsBetween(Window.unboundedPreceding, Window.unboundedFollowing)
    is_record = F.col("status") == "record"
    msg = F.col("msg")
    prefix_broker = _int(F.coalesce(_x(msg, PART_NEW, 3), _x(msg, PART_OLD, 3), _x(msg, ID_PREFIX, 1)))
    df = df.select("*", F.when(is_record, prefix_broker).alias("prefix_broker"),
                   F.when(is_record, F.regexp_replace(msg, STRIP_PREFIX, "")).alias("body"))
    parent = F.last(F.when(is_record, F.struct(
        F.col("ts_ms").alias("ts_ms"), F.col("msg").alias("msg"), F.col("body").alias("body"),
        F.col("prefix_broker").alias("broker"))), ignorenulls=True).over(preceding)
    file_broker = F.first("prefix_broker", ignorenulls=True).over(whole_file)
    path_broker = _int(_x("source", PATH_BROKER, 1))
    return df.select("*", parent.alias("parent"), F.coalesce(path_broker, file_broker).alias("fallback_broker"))


def _classify(df: DataFrame) -> DataFrame:
    """Match the replication messages: kind, topic, partition, isr, leader_epoch, broker, reason."""
    body, msg = F.col("body"), F.col("msg")
    is_record = F.col("status") == "record"
    attachable = (F.col("status") == "bad") & (F.col("line_reason") == "continuation line") & \
        F.col("parent").isNotNull()
    died = attachable & F.col("parent.body").rlike(DUE) & F.col("inner").rlike(DIED)

    success_adding, success_removing = _g(SUCCESS, 4), _g(SUCCESS, 5)
    replayed_changes = F.regexp_replace(F.concat(_g(REPLAYED, 3), _g(REPLAYED, 4)), r"[\s,]", "") != ""
    kinds = [
        ("isr_shrink", body.rlike(SHRINK)),
        ("isr_expand", body.rlike(EXPAND)),
        ("isr_updated", body.rlike(UPDATED)),
        ("isr_update_failed", body.rlike(CACHED)),
        ("leader_start", body.rlike(LEADER_NEW) | body.rlike(LEADER_OLD)),
        ("fetcher_added", body.rlike(ADDED)),
        ("fetcher_removed", body.rlike(REMOVED)),
        ("partition_failed", body.rlike(FAILED)),
        ("reassignment_started", body.rlike(HANDLING)
         | (body.rlike(SUCCESS) & ((success_adding != "") | (success_removing != "")))
         | (body.rlike(REPLAYED) & replayed_changes)),
        ("reassignment_caught_up", body.rlike(CAUGHT_UP)),
        ("reassignment_completed", body.rlike(SUCCESS) | body.rlike(ZK_DONE) | body.rlike(KRAFT_DONE)),
        ("broker_started", body.rlike(STARTED)),
        ("broker_shutdown", body.rlike(SHUTDOWN)),
    ]
    kind_expr = F.when(F.lit(False), F.lit(None))
    for name, cond in kinds:
        kind_expr = kind_expr.when(cond, F.lit(name))
    kind = F.when(died, F.lit("thread_died")).when(is_record, kind_expr)

    started_like = F.when(F.lit(False), F.lit(None))
    for name, pattern in TRUNCATED_STARTS:
        started_like = started_like.when(body.rlike(pattern), F.lit(name))
    part_topic = F.coalesce(_x(msg, PART_NEW, 1), _x(msg, PART_OLD, 1))
    part_num = F.coalesce(_x(msg, PART_NEW, 2), _x(msg, PART_OLD, 2))

    df = df.select("*", kind.alias("kind"), F.when(is_record, started_like).alias("started_like"),
                   part_topic.alias("part_topic"), part_num.alias("part_num"))
    k = F.col("kind")
    # where each message kind carries its topic and partition: (condition, [(topic, partition), ...]),
    # the alternatives (message forms of different releases) coalesced in order
    where = [
        (k.isin(*ISR_KINDS), [(F.col("part_topic"), F.col("part_num"))]),
        (k == "leader_start", [_tp(body, LEADER_NEW, 1, 2), _tp(body, LEADER_OLD, 1, 2)]),
        (k == "partition_failed", [_tp(body, FAILED, 1, 2)]),
        (k == "thread_died", [_tp("inner", DIED, 1, 2), _tp("inner", DIED, 3, 4)]),
        (body.rlike(HANDLING), [_tp(body, HANDLING, 1, 2), _tp(body, HANDLING, 3, 4)]),
        (body.rlike(SUCCESS), [_tp(body, SUCCESS, 1, 2)]),
        (k == "reassignment_caught_up", [_tp(body, CAUGHT_UP, 2, 3)]),
        (body.rlike(ZK_DONE), [_tp(body, ZK_DONE, 1, 2), _tp(body, ZK_DONE, 3, 4)]),
        (body.rlike(KRAFT_DONE), [_tp(body, KRAFT_DONE, 2, 3)]),
        (body.rlike(REPLAYED), [_tp(body, REPLAYED, 5, 1)]),
    ]
    topic, partition = (_first_match([(cond, [alt[i] for alt in alts]) for cond, alts in where]) for i in (0, 1))
    isr = (F.when(k.isin("isr_shrink"), _g(SHRINK, 2))
           .when(k == "isr_expand", _g(EXPAND, 2))
           .when(k == "isr_updated", _g(UPDATED, 1))
           .when(k == "leader_start", F.when(body.rlike(LEADER_NEW), _g(LEADER_NEW, 7)))
           .when(body.rlike(HANDLING), _g(HANDLING, 5))  # reassignment rows: the target replicas
           .when(body.rlike(SUCCESS), _g(SUCCESS, 3))
           .when(k == "reassignment_caught_up", _g(CAUGHT_UP, 1))
           .when(body.rlike(REPLAYED), _g(REPLAYED, 2)))
    epoch = F.when(k == "leader_start", _int(F.coalesce(_x(body, LEADER_NEW, 3), _x(body, LEADER_OLD, 3))))
    broker = F.coalesce(F.when(k == "thread_died", F.col("parent.broker")), F.col("prefix_broker"),
                        F.col("fallback_broker"))
    reason = (
        F.when(F.col("status") == "bad", F.when(~attachable, F.col("line_reason")))
        .when(~is_record, F.lit(None))
        .when(k.isin(*PARTITION_PREFIX_KINDS) & F.col("part_topic").isNull(),
              F.lit("no partition prefix ([Partition topic-N broker=B]) on an ISR message"))
        .when(k.isNotNull() & broker.isNull(), F.lit("unknown broker id (no prefix, path has no broker-N)"))
        .when(k.isNotNull(), F.lit(None))
        .when(F.col("started_like").isNotNull() & body.rlike(TRUNCATED_LIST), F.lit("truncated ISR list"))
        .when(F.col("started_like").isNotNull(),
              F.concat(F.lit("truncated or malformed "), F.col("started_like"), F.lit(" message")))
        .when(((F.col("logger") == "kafka.cluster.Partition") | F.col("part_topic").isNotNull())
              & body.contains("ISR"), F.lit("unknown message"))
    )
    return df.select(
        "*", topic.alias("topic"), _int(partition).alias("partition"), _ids(isr).alias("isr"),
        epoch.alias("leader_epoch"), broker.alias("broker"), reason.alias("reason"),
        F.when(k == "thread_died", F.concat_ws(" ", F.col("parent.msg"), F.trim("inner"))).otherwise(msg)
        .alias("message"),
        F.when(k == "thread_died", F.col("parent.ts_ms")).otherwise(F.col("ts_ms")).alias("event_ts_ms"),
    )


def _category(df: DataFrame) -> DataFrame:
    k, status = F.col("kind"), F.col("status")
    cat = (F.when(status == "blank", F.lit("blank"))
           .when(F.col("reason").isNotNull(), F.lit("reject"))
           .when(k.isNotNull(), F.lit("event"))
           .when(status == "bad", F.lit("attached"))
           .otherwise(F.lit("other")))
    return df.select("*", cat.alias("category"))


def classify_lines(spark: SparkSession, paths: str | Path | Iterable[str | Path],
                   shown_as: tuple[str, str] | None = None) -> DataFrame:
    """Every physical line of the logs with its category, reason and parsed fields (debugging aid)."""
    df = _lines(spark, resolve_paths(paths), shown_as)
    return df.transform(_parse_layout).transform(_line_status).transform(_with_parent).transform(_classify) \
        .transform(_category)


def _events(lines: DataFrame, cluster: str) -> DataFrame:
    ev = lines.where(F.col("category") == "event")
    tokens = (F.when(F.col("kind") == "fetcher_added", F.regexp_extract_all(_g(ADDED, 1), F.lit(ADDED_TOKEN), 0))
              .when(F.col("kind") == "fetcher_removed", F.regexp_extract_all(_g(REMOVED, 1), F.lit(REMOVED_TOKEN), 0)))
    ev = ev.select("*", F.explode_outer(tokens).alias("token"))
    t = F.col("token")
    fetch_topic = F.coalesce(_x(t, r"^\[\[?(.+),(\d+)\]", 1), _x(t, r"^\[?(.+)-(\d+)(?:, initOffset| -> |$)", 1))
    fetch_part = F.coalesce(_x(t, r"^\[\[?(.+),(\d+)\]", 2), _x(t, r"^\[?(.+)-(\d+)(?:, initOffset| -> |$)", 2))
    is_fetch = F.col("kind").isin("fetcher_added", "fetcher_removed")
    ev = ev.where(~is_fetch | t.isNotNull()).select(
        F.lit(cluster).alias("cluster"), F.col("event_ts_ms").alias("ts_ms"), "broker", "source", "line_number",
        "kind", F.when(is_fetch, fetch_topic).otherwise(F.col("topic")).alias("topic"),
        F.when(is_fetch, _int(fetch_part)).otherwise(F.col("partition")).alias("partition"),
        "isr", "leader_epoch", "message")
    return conform(ev, ANALYSIS["log_events"])


def _changes(events: DataFrame) -> tuple[DataFrame, DataFrame]:
    """`isr` and `leaders` change rows (TELEMETRY schemas) from the events that carry them.

    From 2.7 (KIP-497) "Shrinking/Expanding ISR" is only a proposal; the committed ISR is the
    "ISR updated" line. A partition whose leader logs AlterPartition-style updates (no zkVersion)
    therefore takes its ISR history from the "ISR updated" and leader lines only; up to 2.6 the
    shrink/expand lines are the synchronous ZooKeeper writes and count. Rows are ordered by
    (ts_ms, source, line_number) and numbered ``seq``; an ISR row that repeats the previous ISR and
    leader epoch of its partition is dropped.
    """
    k = F.col("kind")
    keys = ["cluster", "broker", "topic", "partition"]
    alter_style = events.where((k == "isr_updated") & ~F.col("message").contains("zkVersion")) \
        .select(*keys).distinct()
    proposals = events.where(k.isin("isr_shrink", "isr_expand")).join(alter_style, keys, "left_anti")
    base = events.where((k == "isr_updated") | ((k == "leader_start") & F.col("isr").isNotNull())) \
        .unionByName(proposals).select("*", F.lit(True).alias("is_isr"))
    leaders = events.where(k == "leader_start").select("*", F.lit(False).alias("is_isr"))
    changes = base.unionByName(leaders).where(F.col("topic").isNotNull() & F.col("partition").isNotNull())
    order = Window.partitionBy("cluster").orderBy("ts_ms", "source", "line_number", F.col("is_isr").asc())
    changes = changes.select("*", F.row_number().over(order).cast("long").alias("seq"))
    by_part = Window.partitionBy("cluster", "topic", "partition").orderBy("seq")
    epoch = F.last(F.when(~F.col("is_isr"), F.col("leader_epoch")), ignorenulls=True).over(
        by_part.rowsBetween(Window.unboundedPreceding, Window.currentRow))
    changes = changes.select("*", epoch.alias("epoch_now")).persist()  # feeds both tables
    isr = changes.where("is_isr").select("*", F.lag(F.struct(F.array_sort("isr").alias("s"),
                                                             F.col("epoch_now").alias("e"))).over(by_part).alias("prev"))
    keep = F.col("prev").isNull() | (F.col("prev.s") != F.array_sort("isr")) | \
        ~F.col("prev.e").eqNullSafe(F.col("epoch_now"))
    isr = isr.where(keep).select("cluster", "ts_ms", "seq", "topic", "partition", "isr",
                                 F.col("epoch_now").alias("leader_epoch"))
    lead = changes.where(~F.col("is_isr")).select("cluster", "ts_ms", "seq", "topic", "partition",
                                                   F.col("broker").alias("leader"), "leader_epoch")
    return conform(isr, TELEMETRY["isr"]), conform(lead, TELEMETRY["leaders"])


REJECT_SHOWN_CHARS = 1000  # a 10 MB line stays a line in rejects, not 10 MB of report


def shown_raw(raw: Column) -> Column:
    """A rejected line as kept: control characters (NUL and the like from binary input) replaced by U+FFFD,
    at most REJECT_SHOWN_CHARS characters and a note of how many more there were."""
    clean = F.regexp_replace(raw, "[\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f]", "\ufffd")
    more = F.length(clean) - REJECT_SHOWN_CHARS
    return F.when(more > 0, F.concat(F.substring(clean, 1, REJECT_SHOWN_CHARS),
                                     F.lit("… ("), more.cast("string"), F.lit(" more characters)"))).otherwise(clean)


def read_logs(spark: SparkSession, paths: str | Path | Iterable[str | Path], cluster: str,
              shown_as: tuple[str, str] | None = None) -> dict[str, DataFrame]:
    """Broker logs -> ``log_events``, ``rejects`` (ANALYSIS schemas), ``isr``, ``leaders`` (TELEMETRY
    schemas) and ``line_counts`` (source, category, lines: how every line was accounted for).

    ``paths`` is a file, a directory, a glob or a list of them. A path that matches nothing raises
    ReplicaflowError. The classified lines are persisted (memory and disk, only the columns the
    outputs need) so writing every output parses the logs once.
    """
    lines = classify_lines(spark, paths, shown_as)
    is_event, is_reject = F.col("category") == "event", F.col("category") == "reject"
    lines = lines.select(
        "source", "line_number", "category", "reason", "kind", "topic", "partition", "isr", "leader_epoch",
        "broker", "event_ts_ms",
        F.when(is_reject, F.col("raw")).alias("raw"),
        F.when(is_event, F.col("message")).alias("message"),
        F.when(F.col("kind").isin("fetcher_added", "fetcher_removed"), F.col("body")).alias("body"),
    ).persist()
    events = _events(lines, cluster)
    rejects = conform(lines.where(F.col("category") == "reject")
                       .select("source", "line_number", shown_raw(F.col("raw")).alias("raw_line"), "reason"),
                       ANALYSIS["rejects"])
    counts = lines.groupBy("source", "category").agg(F.count(F.lit(1)).alias("lines"))
    isr, leaders = _changes(events)
    return {"log_events": events, "rejects": rejects, "isr": isr, "leaders": leaders, "line_counts": counts}
