"""Read Kafka broker logs (0.10 to 4.x, docs/logs.md) into replication events, with Spark.

Each file is read whole (``wholetext``), decoded (UTF-8, BOM, UTF-16) and split into numbered lines
natively (``log_layouts``); a line is unwrapped from its envelope (CRI, docker, compose, syslog) and
parsed as a log4j layout, and its message is matched against the rule table of ``log_messages``.
Every line ends in exactly one category:

- ``event``: a replication message -> ``log_events`` (and ``isr`` / ``leaders`` change rows);
- ``other``: a readable log line that is not a replication event (counted, not kept);
- ``attached``: a stack-trace line following a record (part of that record);
- ``blank``: ignored;
- ``reject``: unreadable -> ``rejects`` with its reason.

Only Spark built-in expressions are used (no Python UDF).
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pyspark.errors import AnalysisException
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from replicaflow.errors import ReplicaflowError
from replicaflow.ingest.log_changes import changes, mark_refused
from replicaflow.ingest.log_layouts import decode_files, line_status, parse_layout, shown_raw, split_lines
from replicaflow.ingest.log_messages import (
    FETCHER_TOKEN,
    LIST_TOKEN,
    PREFIX_PARTITION_KINDS,
    RULES,
    TRUNCATED_LIST,
    TRUNCATED_STARTS,
)
from replicaflow.telemetry.schema import ANALYSIS
from replicaflow.telemetry.spark import conform, spark_path

# --- message prefixes (logIdent) -----------------------------------------------------------------
PART_NEW = r"^\[Partition (\S+)-(\d+) broker=(\d+)\] "
PART_OLD = r"^Partition \[([^\[\]]+),(\d+)\] on broker (\d+): "
ID_PREFIX = (r"^\[(?:Broker id|ReplicaFetcher replicaId|ReplicaFetcherManager on broker|Controller id|Controller|"
             r"QuorumController id|KafkaServer id|Kafka Server|KafkaRaftServer nodeId|BrokerServer id|"
             r"ControllerServer id|ReplicaManager broker|ReplicaAlterLogDirsManager on broker|"
             r"BrokerLifecycleManager id|LogManager broker)[= ](\d+)[\], ]")
STRIP_PREFIX = (r"^(?:\[Partition \S+-\d+ broker=\d+\] |Partition \[[^\[\]]+,\d+\] on broker \d+: |"
                r"\[[A-Za-z][^\[\]]{0,200}\][,:]? )")
PATH_BROKER = r"(?i)(?:^|[/_-])(?:broker|kafka)[-_]?(\d+)(?:[/_.]|$)"
TP_TEXT = r"^\[([^\[\]]+),(\d+)\]$|^(\S+)-(\d+)$"
LIST_FIELDS = ("isr", "replicas", "adding", "removing")


def _x(col: Column | str, pattern: str, idx: int) -> Column:
    """regexp_extract that yields null (not '') when the pattern or the group does not match."""
    return F.nullif(F.regexp_extract(col, pattern, idx), F.lit(""))


def _int(col: Column) -> Column:
    return col.try_cast("int")


def _ids(col: Column) -> Column:
    """'1,2,3', '1, 2, 3', '[1, 2]', 'List(1, 2)' -> array<int>; '' or '[]' -> []; null -> null."""
    return F.when(col.isNull(), F.lit(None)).otherwise(
        F.transform(F.filter(F.split(F.regexp_replace(col, r"[^\d,]", ""), ","), lambda s: s != ""),
                    lambda s: s.try_cast("int")))


def check_timezone(log_timezone: str) -> str:
    """The IANA zone the brokers' JVMs log in (log4j writes local time without an offset)."""
    try:
        ZoneInfo(log_timezone)
    except (ZoneInfoNotFoundError, ValueError):
        raise ReplicaflowError(f"--log-timezone: '{log_timezone}' is not an IANA time zone (e.g. UTC, "
                               f"Europe/Paris)") from None
    return log_timezone


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
    try:
        whole = spark.read.text([spark_path(f) for f in files], wholetext=True)
    except AnalysisException as exc:
        raise ReplicaflowError(f"--logs: cannot read {files[0] if len(files) == 1 else 'the log files'}: "
                               f"{str(exc).splitlines()[0]}") from None
    return split_lines(decode_files(whole, _source(shown_as)))


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


def _pick(values: list) -> Column:
    """``values[rule]``: one literal per rule, picked by the row's rule index (null rule -> null)."""
    rule = F.col("rule")
    return F.when(rule.isNotNull(), F.element_at(F.array(*[F.lit(v) for v in values]), rule + 1))


_GROUP_SEP = "\x00"  # between a rule's groups in `rule_groups`; NUL is taken out of the text first


def _rule_groups(text: Column) -> Column:
    """Every group of the row's rule, from one match: ``regexp_replace`` with the rule's pattern
    (a literal per rule, compiled once per task) turns the whole text into its groups joined by NUL.
    A pattern taken from a column would be compiled again on every row whose rule differs from the
    previous row's, for every field: that was most of the time spent reading a log. ``^.*?(?:P)``
    finds the leftmost match of P, as ``rlike`` and ``regexp_extract`` do; a group that took no part
    in it is empty, as in ``regexp_extract``."""
    clean = F.translate(text, _GROUP_SEP, "\ufffd")
    rule = F.col("rule")
    out = None
    for i, r in enumerate(RULES):
        n = re.compile(r.pattern).groups
        joined = F.regexp_replace(clean, F.lit(f"(?s)^.*?(?:{r.pattern}).*$"),
                                  F.lit(_GROUP_SEP.join(f"${g}" for g in range(1, n + 1))))
        out = F.when(rule == i, joined) if out is None else out.when(rule == i, joined)
    return F.split(out, F.lit(_GROUP_SEP), -1)


def _field(name: str) -> Column:
    """The raw text of field ``name`` of the row's rule: its group of the rule's pattern (from
    ``rule_groups``), or a key inside that group (``(group, sub-pattern, sub-group)``); null where the
    rule has no such field."""
    specs = [r.fields.get(name) for r in RULES]
    group = [-1 if s is None else (s if isinstance(s, int) else s[0]) for s in specs]
    g = _pick(group)
    outer = F.element_at(F.col("rule_groups"), F.greatest(g, F.lit(1)))
    subs = {s[1:] for s in specs if isinstance(s, tuple)}
    if len(subs) == 1:
        ((sub, sub_group),) = subs
        outer = F.when(_pick([isinstance(s, tuple) for s in specs]), F.regexp_extract(outer, sub, sub_group)) \
            .otherwise(outer)
    elif subs:
        raise ValueError(f"field {name!r}: one sub-pattern per field")
    # a broker list group that matched nothing is the empty list (`adding replicas []`), not unknown
    # (a rule that leaves unchanged fields out says nothing about them: null)
    keep_empty = _pick([name in LIST_FIELDS and isinstance(spec, int) and not rule.sparse
                        for rule, spec in zip(RULES, specs, strict=True)])
    value = F.when(g >= 1, F.when(keep_empty, outer).otherwise(F.nullif(outer, F.lit(""))))
    if name == "state":
        value = F.coalesce(value, _pick([r.state for r in RULES]))
    return value


def _classify(df: DataFrame) -> DataFrame:
    """Match the rule table: kind and fields of every record (and of attached exception lines)."""
    body, msg = F.col("body"), F.col("msg")
    is_record = F.col("status") == "record"
    attachable = (F.col("status") == "bad") & (F.col("line_reason") == "continuation line") & \
        F.col("parent").isNotNull()
    inner = F.trim(F.col("inner"))
    rule_col = None
    for i, rule in enumerate(RULES):
        if rule.parent is None:
            cond = is_record & body.rlike(rule.pattern)
            if rule.ident is not None:
                cond = cond & msg.rlike(rule.ident)
        else:
            cond = attachable & F.col("parent.body").rlike(rule.parent) & inner.rlike(rule.pattern)
        rule_col = F.when(cond, F.lit(i)) if rule_col is None else rule_col.when(cond, F.lit(i))
    df = df.select("*", rule_col.alias("rule"))
    parented = _pick([r.parent is not None for r in RULES])
    df = df.select("*", _pick([r.kind for r in RULES]).alias("kind"),
                   F.when(parented, inner).otherwise(body).alias("rule_text"))
    df = df.select("*", _rule_groups(F.col("rule_text")).alias("rule_groups"))
    names = sorted({n for rule in RULES for n in rule.fields} | {"state"})
    df = df.select("*", *[_field(n).alias(f"f_{n}") for n in names])
    f = {n: F.col(f"f_{n}") for n in names}

    started_like = None
    for name, pattern in TRUNCATED_STARTS:
        cond = body.rlike(pattern)
        started_like = F.when(cond, F.lit(name)) if started_like is None else started_like.when(cond, F.lit(name))
    part_topic = F.coalesce(_x(msg, PART_NEW, 1), _x(msg, PART_OLD, 1))
    part_num = F.coalesce(_x(msg, PART_NEW, 2), _x(msg, PART_OLD, 2))
    k = F.col("kind")
    tp = F.coalesce(f["tp"], f["tp2"])
    topic = F.when(k.isin(*PREFIX_PARTITION_KINDS), part_topic).otherwise(
        F.coalesce(_x(tp, TP_TEXT, 1), _x(tp, TP_TEXT, 3), f["topic_name"]))
    partition = F.when(k.isin(*PREFIX_PARTITION_KINDS), part_num).otherwise(
        F.coalesce(_x(tp, TP_TEXT, 2), _x(tp, TP_TEXT, 4), f["partition_index"]))
    isr = F.coalesce(_ids(f["isr"]), _ids(f["old_isr"]),
                     F.when(f["isr_states"].isNotNull(), F.transform(
                         F.regexp_extract_all(f["isr_states"], F.lit(r"brokerId=(\d+)"), 1), lambda s: s.cast("int"))))
    # reassignment rows keep the target replicas in `isr` too (the column's meaning before `replicas` existed)
    isr = F.when(k.startswith("reassignment_"), _ids(f["replicas"])).otherwise(isr)
    is_parented = F.col("status") == "bad"
    broker = F.coalesce(F.when(is_parented, F.col("parent.broker")), _int(f["broker"]), F.col("prefix_broker"),
                        F.col("fallback_broker"))
    reason = (
        F.when(F.col("status") == "bad", F.when(~attachable, F.col("line_reason")))
        .when(~is_record, F.lit(None))
        .when(k.isin(*PREFIX_PARTITION_KINDS) & part_topic.isNull(),
              F.lit("no partition prefix ([Partition topic-N broker=B]) on an ISR message"))
        .when(k.isNotNull() & broker.isNull(), F.lit("unknown broker id (no prefix, path has no broker-N)"))
        .when(k.isNotNull(), F.lit(None))
        .when(started_like.isNotNull() & body.rlike(TRUNCATED_LIST), F.lit("truncated ISR list"))
        .when(started_like.isNotNull(), F.concat(F.lit("truncated or malformed "), started_like, F.lit(" message")))
        .when(((F.col("logger") == "kafka.cluster.Partition") | part_topic.isNotNull()) & body.contains("ISR"),
              F.lit("unknown message"))
    )
    return df.select(
        "*", topic.alias("topic"), _int(partition).alias("partition"), isr.alias("isr"),
        _int(f["leader_epoch"]).alias("leader_epoch"), broker.alias("broker"), reason.alias("reason"),
        _int(F.coalesce(f["leader"], f["old_leader"])).alias("leader"), _int(f["target_broker"]).alias("target_broker"),
        *[_ids(f[n]).alias(n) for n in LIST_FIELDS if n != "isr"],
        _int(f["partition_epoch"]).alias("partition_epoch"), f["offset"].try_cast("long").alias("offset"),
        _int(F.coalesce(f["min_isr"], f["min_isr2"])).alias("min_isr"),
        F.regexp_replace(f["state"], r"^\((.*)\)$", "$1").alias("state"), f["log_dir"].alias("log_dir"),
        f["error"].alias("error"),
        F.when(is_parented, F.concat_ws(" ", F.col("parent.msg"), F.trim("inner"))).otherwise(msg).alias("message"),
        F.when(is_parented, F.col("parent.ts_ms")).otherwise(F.col("ts_ms")).alias("event_ts_ms"),
        F.when(k.isin("fetcher_added", "fetcher_removed", "log_dir_offline"),
               F.regexp_extract(body, r"^[^(\[]*?(?:partitions|Partitions) (.*)$", 1)).alias("listed"),
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
                   shown_as: tuple[str, str] | None = None, log_timezone: str = "UTC") -> DataFrame:
    """Every physical line of the logs with its category, reason and parsed fields (debugging aid)."""
    check_timezone(log_timezone)
    df = _lines(spark, resolve_paths(paths), shown_as)
    return df.transform(lambda d: parse_layout(d, log_timezone)).transform(line_status).transform(_with_parent) \
        .transform(_classify).transform(_category)


EVENT_COLUMNS = ("kind", "topic", "partition", "isr", "leader_epoch", "broker", "leader", "target_broker", "replicas",
                 "adding", "removing", "partition_epoch", "offset", "min_isr", "state", "log_dir", "error")


def _cluster_column(cluster: str | Mapping[str, str], shown_as: tuple[str, str] | None) -> Column:
    """The cluster of a line: one name, or each file's (``{file: cluster}``, files as ``resolve_paths`` names
    them), looked up by the line's ``source``."""
    if isinstance(cluster, str):
        return F.lit(cluster)

    def shown(path: str) -> str:
        if shown_as is not None and path.startswith(shown_as[0]):
            return shown_as[1] + path[len(shown_as[0]):]
        return path
    pairs = [F.lit(x) for f, name in cluster.items() for x in (shown(os.path.abspath(f)), name)]
    return F.element_at(F.create_map(*pairs), F.col("source"))


def _events(lines: DataFrame, cluster: Column) -> DataFrame:
    """One row per event; a fetcher or log-directory line listing partitions gives one row per partition."""
    ev = lines.where(F.col("category") == "event")
    listed = F.col("listed")
    tokens = (F.when(F.col("kind") == "fetcher_added", F.regexp_extract_all(listed, F.lit(FETCHER_TOKEN), 0))
              .when(F.col("kind").isin("fetcher_removed", "log_dir_offline"),
                    F.regexp_extract_all(listed, F.lit(LIST_TOKEN), 0)))
    ev = ev.select("*", F.explode_outer(tokens).alias("token"))
    t = F.col("token")
    tok_topic = F.coalesce(_x(t, r"^\[\[?([^\[\]]+),(\d+)\]", 1), _x(t, r"^\[?(\S+)-(\d+)(?:, initOffset| -> |$)", 1))
    tok_part = F.coalesce(_x(t, r"^\[\[?([^\[\]]+),(\d+)\]", 2), _x(t, r"^\[?(\S+)-(\d+)(?:, initOffset| -> |$)", 2))
    is_list = F.col("kind").isin("fetcher_added", "fetcher_removed", "log_dir_offline")
    ev = ev.where(~is_list | t.isNotNull()).select(
        cluster.alias("cluster"), F.col("event_ts_ms").alias("ts_ms"), "source", "line_number", "message",
        *[c for c in EVENT_COLUMNS if c not in ("topic", "partition")],
        F.when(is_list, tok_topic).otherwise(F.col("topic")).alias("topic"),
        F.when(is_list, _int(tok_part)).otherwise(F.col("partition")).alias("partition"))
    return conform(mark_refused(ev), ANALYSIS["log_events"])


def read_logs(spark: SparkSession, paths: str | Path | Iterable[str | Path], cluster: str | Mapping[str, str],
              shown_as: tuple[str, str] | None = None, log_timezone: str = "UTC") -> dict[str, DataFrame]:
    """Broker logs -> ``log_events``, ``rejects`` (ANALYSIS schemas), ``isr``, ``leaders`` (TELEMETRY
    schemas) and ``line_counts`` (source, category, lines: how every line was accounted for).

    ``cluster``: the cluster's name, or for a fleet each file's cluster (``{file: cluster}``, every file of
    ``paths``). A fleet is read as one query: the reader's plan is large (a rule table of expressions),
    and one plan per cluster, unioned, grew the driver's heap with the number of clusters (ten clusters of
    a few kilobytes each filled 4 GB).

    ``paths`` is a file, a directory, a glob or a list of them. ``log_timezone`` (IANA name) is the zone
    of timestamps written without an offset (log4j's default layout). A path that matches nothing or an
    unknown zone raises ReplicaflowError, before Spark reads anything. The classified lines are persisted
    (only the columns the outputs need) so writing every output parses the logs once.
    """
    lines = classify_lines(spark, paths, shown_as, log_timezone)
    is_event, is_reject = F.col("category") == "event", F.col("category") == "reject"
    lines = lines.select(
        "source", "line_number", "category", "reason", "event_ts_ms", "listed", *EVENT_COLUMNS,
        F.when(is_reject, F.col("raw")).alias("raw"), F.when(is_reject, F.col("raw_length")).alias("raw_length"),
        F.when(is_event, F.col("message")).alias("message"),
    ).persist()
    events = _events(lines, _cluster_column(cluster, shown_as))
    rejects = conform(lines.where(is_reject).select(
        "source", "line_number", shown_raw(F.col("raw"), F.col("raw_length")).alias("raw_line"), "reason"),
        ANALYSIS["rejects"])
    counts = lines.groupBy("source", "category").agg(F.count(F.lit(1)).alias("lines"))
    isr, leaders = changes(events)
    return {"log_events": events, "rejects": rejects, "isr": isr, "leaders": leaders, "line_counts": counts}
