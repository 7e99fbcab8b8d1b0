"""Broker log lines -> records: the log4j and JSON layouts (time, level, logger, message) and each line's status.

Everything here is a Spark built-in expression (no Python UDF). Every line is cut to
``log_text.MAX_LINE_CHARS`` before any regular expression sees it, and every pattern is free of repeated groups
(``(?:,\\d+)*`` recurses once per repetition in Java's regex engine: a 4 KB ISR list overflowed the
stack), so a hostile line costs linear time and ends as a reject, never as a failed job.
See docs/logs.md (layouts).
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from replicaflow.ingest.log_text import MAX_LINE_CHARS, groups, head_bytes, method_boundary, stage

LEVELS = ("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL")

_TS = r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[,.]\d{1,9})?"
OFFSET = r"(?:Z|[+-]\d{2}:?\d{2})"
# LinkedIn's layout writes the date with slashes (`%d{yyyy/MM/dd HH:mm:ss.SSS}`; see LINKEDIN below)
_TS_SLASH = r"\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}(?:[,.]\d{1,9})?"
# Spark's log4j default `%d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n` (a broker embedded in a Spark job or its tests: a two-digit
# year, 20yy, and the logger's last name or two, then a colon)
_TS_YY = r"\d{2}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}(?:[,.]\d{1,9})?"
# what starts a record without brackets: an ISO date, LinkedIn's, or Spark's
BARE_DATE = r"\d{4}-\d{2}-\d{2}[ T]|\d{4}/\d{2}/\d{2} |\d{2}/\d{2}/\d{2} \d{2}:\d{2}:\d{2} "

# --- layouts: log4j's `[%d] %p %m (%c)%n` (Kafka's default) and `%d %p %m (%c) [%t]%n` (Strimzi) --------
# groups: timestamp and offset of `[ts]` (1, 2; also `{ts}`, KAFKA-903's `{%d} %p [%t] (%F:%L) - %m`) or of `ts` (3, 4;
# also `ts]`, a record whose first character a bug report's paste lost; also LinkedIn's `yyyy/MM/dd`), level (5; also
# `[%-5p]`), the rest (6). ZooKeeper's
# own `%d{ISO8601} [myid:%X{myid}] - %-5p [%t:%C{1}@%L] - %m` is read too: a ZooKeeper server's lines sit between the
# broker's in `docker compose logs` of a ZooKeeper-era cluster, and are records, not broken lines. So is a thread
# before the level (`%d [%t] %-5p %c - %m`, logback's habit), when a level word follows it. So is a ` -` or ` |` between
# the date and the level: Debezium's Kafka image (`%d{ISO8601} - %-5p [%t:%C{1}@%L] - %m`, THREAD_CLASS) and Huawei
# FusionInsight / MRS (`%d | %-5p | [%t] | %m | %c (%F:%L)`, PIPES).
LAYOUT = (rf"^(?:[\[{{]({_TS})({OFFSET})?[\]}}]|({_TS}|{_TS_SLASH}|{_TS_YY})({OFFSET})?\]?)(?: \[myid:\d{{0,10}}\] -|"
          r"(?: \[[^\[\]]{1,512}\]| [-|])(?= +(?:TRACE|DEBUG|INFO|WARN|ERROR|FATAL)\b))? +\[?([A-Za-z]{1,10}) *\]? +(.*)$")
# The level first: Confluent for Kubernetes' `[%p] %d [%t] %c %M - %m`, in CP 8 with the MDC (`app=kafka,
# clusterId=…, server=0 - `) before the message. groups as LAYOUT's: timestamp (3), offset (4), level (5), the rest (6)
LEVEL_FIRST = rf"^\[(TRACE|DEBUG|INFO|WARN|ERROR|FATAL) ?\] ({_TS})({OFFSET})? +(.*)$"
LEVEL_FIRST_GROUPS = ["", "", "$2", "$3", "$1", "$4"]
# Patterns that put the thread and the logger before the message: `[%t] %c{1}:%L - %m` (Strimzi's log4j2
# layout for Kafka 4.x), `[%t] [%c] - %m`, `[%t] %c - %m` (a dotted name; LEVEL_FIRST's `%c %M - ` and MDC too).
# groups: logger (1, 2 or 3), message (4)
THREAD_LOGGER = (r"^\[[^\[\]]{0,512}\] (?:\[([A-Za-z_$][\w.$]{0,511})\]|([A-Za-z_$][\w.$]{0,511}):\d{1,9}|"
                 r"([A-Za-z_$][\w$]{0,255}\.[\w.$]{1,511})(?: (?:[A-Za-z_$<][\w$<>]{0,255}|\?))?) - "
                 r"(?:[A-Za-z_][\w.-]{0,63}=[^\[\]]{0,2048}? - )?(.*)$")
# Patterns that put the logger and a colon before the message: Cloudera Manager's broker layout `%d{ISO8601} %p %c:
# %m%n` (a dotted name) and Spring Boot's logback default `%d %5p PID --- [%t] %-40.40logger{39} : %m%n` (an embedded
# broker; 3.4+ adds `[app] ` before the thread). groups: logger (1 or 2), message (3). Not where the line ends in the
# default layout's ` (logger)`: there the message itself starts with a name and a colon.
LOGGER_COLON = (r"^(?:\d{1,10} --- (?:\[[^\[\]]{0,512}\] )?\[[^\[\]]{0,512}\] ([A-Za-z_$][\w.$]{0,511}) *:|"
                r"([A-Za-z_$][\w$]{0,255}\.[\w.$]{1,511}):) (.*)$")
# LinkedIn's `%d{yyyy/MM/dd HH:mm:ss.SSS} %p [%c{1}] [%t] [app] [context] %m` (its fork's brokers, and the logs its
# engineers paste into Kafka's Jira since 0.8: KAFKA-1398, linkedin/kafka#458): four bracketed fields, the first the
# logger's short name, before the message (which may itself start with a bracketed logIdent). groups: logger, message
LINKEDIN = r"^\[([A-Za-z_$][\w.$]{0,511})\] \[[^\[\]]{0,512}\] \[[^\[\]]{0,512}\] \[[^\[\]]{0,512}\] (.*)$"
# `[%t:%C{1}@%L] - ` before the message: ZooKeeper's layout and Debezium's Kafka image (debezium/kafka, its tutorial's
# `2024-10-01 15:33:53,098 - INFO  [main:Logging@66] - [KafkaServer id=1] started`). `%C{1}` is the calling class, not
# the logger (Kafka's Scala classes log through the `Logging` trait, so it reads `Logging` or `Logging$class`): no
# logger is taken. group: message
THREAD_CLASS = r"^\[[^\[\]]{0,512}:[A-Za-z_$][\w$.]{0,255}@\d{1,9}\] - (.*)$"
# Huawei FusionInsight / MRS: `| [%t] | %m | %c (%F:%L)` after the level, or `%l` (`class.method(File:line)`) in
# place of `%c (%F:%L)`. groups: message (1), logger (2, or 3 for `%l`: the class)
PIPES = (r"^\| \[[^\[\]]{0,512}\] \| *(.*) \| (?:([A-Za-z_$][\w.$]{0,511}) \([^()]{0,255}\)|"
         r"([A-Za-z_$][\w.$]{0,511})\.[\w$<>]{1,255}\([^()]{0,255}\))$")
# KAFKA-903's `{%d} %p [%t] (%F:%L) - %m`: the thread and the source file's line before the message. group: message
THREAD_FILE = r"^\[[^\[\]]{0,512}\] \([\w$.-]{1,255}:\d{1,9}\) - (.*)$"
# ` (%c)`, or ` (%c:%L)` with the logging call's line (the layout of Kafka's own tests, and of some deployments)
_CALL_LINE = r"(?::\d{1,9})?"
_DOTTED = r"[A-Za-z_$][\w$]{0,255}\.[\w.$]{0,1024}"  # a dotted Java name: a logger, an exception's class
DEFAULT_SUFFIX = rf"\s\({_DOTTED}{_CALL_LINE}\)$"
# a line that starts with a date (`yyyy-MM-dd`, LinkedIn's `yyyy/MM/dd`, `{%d}`) but is no record is a broken or unknown
# layout, never a stack-trace line or a message tail, even where it ends in ` (logger)`
TS_START = r"^[\[{]?(?:\d{4}[-/]\d{2}[-/]\d{2}|\d{2}/\d{2}/\d{2} \d{2}:)"
# what an envelope must leave: a bracketed, ISO or LinkedIn timestamp, a JSON record, or a level before a date
RECORD_START = rf"^(?:\[\d{{4}}-|{BARE_DATE}|\{{|\[[A-Z]{{4,5}} ?\] \d{{4}}-)"
# a whole log4j record (`[ts] LEVEL ` or Strimzi's `ts LEVEL `) behind a prefix no envelope rule knows: not a
# stack-trace line even where it ends in ` (logger)`, so not attached to the record before it
EMBEDDED_RECORD = (rf"^\S.{{0,255}}?(?:\[\d{{4}}-\d{{2}}-\d{{2}}[ T]\d{{2}}:\d{{2}}:\d{{2}}[,.]\d{{1,9}}\]|(?:{BARE_DATE})"
                   r"\d{2}:\d{2}:\d{2}[,.]\d{1,9}) +\[?(?:TRACE|DEBUG|INFO|WARN|ERROR|FATAL)\b")
THREAD_SUFFIX = r"\) \[[^\[\]]{0,512}\]$"  # Strimzi's ` [thread]` after the logger
# Confluent for Kubernetes' MDC after the logger (`(logger:line) - app=connect, clusterId=…, server=0`)
MDC_SUFFIX = r"\) - [A-Za-z_][\w.-]{0,63}=[^()\[\]]{0,2048}$"
LOGGER = rf"^[A-Za-z_$][\w.$]{{0,511}}{_CALL_LINE}\)$"
# a ` (logger)` cut after a dot (a paste wrapped it: `(kafka.server.Replic`, `aFetcherThread)`): the message is whole
CUT_LOGGER = rf"^{_DOTTED}$"
# a ` (logger)` with the exception's stack trace joined on after it, no blank or newline between (a paste that lost
# the line breaks: apache/kafka#11294's `... at offset 31727 (kafka.server.ReplicaFetcherThread)java.lang.Illegal
# StateException: Offset mismatch ... at kafka.server...`): the message before it is whole, the trace is dropped
_THROWN = r"(?<=Exception|Error|Throwable)(?::|\s|$)"  # after a dotted name: it was an exception's class
FLAT_TRACE = rf"^{_DOTTED}{_CALL_LINE}\){_DOTTED}{_THROWN}"
# A record logged with an exception (`error(msg, e)`) is followed by its stack trace, whose first line names the
# exception's class (`org.apache.kafka.common.errors.UnknownTopicOrPartitionException: This server does not ...`):
# group 1, read from the line's first CAUSE_CHARS characters
CAUSE = rf"^\s*({_DOTTED}){_THROWN}"
CAUSE_CHARS = 400
# A stack-trace line (an indent of spaces is gone: _unwrap drops it): a frame (log4j2, Kafka 4.x, appends the
# frame's jar, ` ~[kafka-metadata-4.0.0.jar:?]`, `[?:?]`), or an exception's toString, a class name (bare where the
# class overrides toString: ZooKeeper's `EndOfStreamException: Unable to read additional data ...`); a continuation
# line is one of those or the last line of a message that itself holds a newline (ZooKeeper's `Stat` ends in
# one), which ends in the layout's ` (%c)` (Strimzi: ` (%c) [%t]`), a dotted logger name.
STACK_LINE = (r"^\s*(?:at [\w$.<>/@-]{1,1024}\([^()]{0,1024}\)(?: ~?\[[^\[\]]{0,1024}\])?$|"
              r"\.\.\. \d+ (?:more|common frames omitted)|Caused by: |Suppressed: |"
              r"[A-Za-z_$][\w$.]{0,1024}(?:Exception|Error|Throwable)(?::|$))")
CONTINUATION = (rf"{STACK_LINE}|^.{{0,4096}}(?:^|\s)\([A-Za-z_$][\w$]{{0,255}}\.[\w$.]{{0,1024}}{_CALL_LINE}\)"
                r"(?: \[[^\[\]]{0,512}\])?$")

BUDDHIST_ERA_YEARS = 543  # a Thai-locale JVM's year (BuddhistCalendar) less the common era's


_TS_PATHS = ("$.timestamp", "$['@timestamp']", "$.time", "$.timeMillis", "$.instant.epochSecond")
# The logger (and its line) then ` - ` before the message, no thread first: log4j's tutorial pattern `%d %-5p %c{1}:%L
# - %m` and `%c - %m`; also log4j 1's TTCC pattern `%d [%t] %-5p %c %x - %m`, whose empty NDC (`%x`) leaves two blanks
# before the dash (a padded `%-40c` more). A dotted name, or a short one with its line number; never where the line ends
# in the default layout's ` (logger)`. groups: logger (1 or 2), message (3)
SPARK_LOGGER = r"^([A-Za-z_$][\w.$]{0,511}): (.*)$"  # Spark's `%c{1}: ` (a short name: LOGGER_COLON's is dotted)
LOGGER_DASH = (r"^(?:([A-Za-z_$][\w$]{0,255}\.[\w.$]{1,511})(?::\d{1,9})?|([A-Za-z_$][\w$]{0,255}):\d{1,9}) {1,256}- "
               r"(.*)$")
_LOGGER_PATHS = ("$.logger", "$.loggerName", "$.logger_name", "$['log.logger']")


def parse_layout(df: DataFrame, log_timezone: str = "UTC") -> DataFrame:
    """Parse pattern or JSON layouts (of ``inner``, the line ``log_envelopes.unwrap`` left) into ts_ms, level, msg, logger.

    Timestamps written without an offset are in ``log_timezone`` (the zone of the broker's JVM: log4j
    writes local time); ``[,.]`` and the first three fraction digits give the milliseconds."""
    temp = set(df.columns)
    df = method_boundary(df)
    j = F.col("inner")
    is_json = j.startswith("{") & j.rlike(r'^\{\s*["}]')  # not a Jira `{code}` mark or a `{%d}` layout
    level_first = j.startswith("[") & F.substring(j, 2, 1).between("A", "Z")
    df = stage(df, _g=F.when(~is_json, F.coalesce(groups(j, LAYOUT, 6), F.when(level_first, groups(
        j, LEVEL_FIRST, LEVEL_FIRST_GROUPS)))))
    g = F.col("_g")
    layout = g.isNotNull()
    df = stage(df, _json=is_json, _layout=layout,
                _j_msg=F.when(is_json, F.get_json_object(j, "$.message")),
                _j_ts=F.when(is_json, F.coalesce(*[F.get_json_object(j, p) for p in _TS_PATHS])),
                _j_level=F.when(is_json, F.upper(F.coalesce(F.get_json_object(j, "$.level"),
                                                            F.get_json_object(j, "$['log.level']")))),
                _j_logger=F.when(is_json, F.coalesce(*[F.get_json_object(j, p) for p in _LOGGER_PATHS])),
                _p_ts=F.concat(g[0], g[2]), _p_off=F.nullif(F.concat(g[1], g[3]), F.lit("")),
                _p_level=F.upper(g[4]), _p_rest=g[5])
    df = method_boundary(df)
    jt, rest = F.col("_j_ts"), F.col("_p_rest")
    json_layout = F.col("_json") & F.col("_j_msg").isNotNull()
    df = stage(df, json_layout=json_layout,
                _epoch_ms=F.when(json_layout, F.when(jt.rlike(r"^\d{12,15}$"), jt.try_cast("long")).when(
                    jt.rlike(r"^\d{9,11}(?:\.\d{1,9})?$"), (jt.try_cast("double") * 1000).try_cast("long"))),
                _iso=F.when(json_layout, F.regexp_extract(jt, rf"^({_TS})({OFFSET})?$", 1))
                .when(F.col("_layout"), F.col("_p_ts")),
                _off=F.when(json_layout, F.nullif(F.regexp_extract(jt, rf"^{_TS}({OFFSET})$", 1), F.lit("")))
                .when(F.col("_layout"), F.col("_p_off")),
                _rest=F.when(rest.endswith("]") & rest.rlike(THREAD_SUFFIX), F.regexp_replace(rest, r" \[[^\[\]]*\]$", ""))
                .when(rest.contains(") - ") & rest.rlike(MDC_SUFFIX), F.regexp_replace(rest, MDC_SUFFIX, ")"))
                .otherwise(rest),
                _pre=F.when(F.col("_layout") & rest.startswith("[") & (F.substring(F.col("_p_ts"), 5, 1) == "/"),
                            groups(rest, LINKEDIN, 2))
                .when(F.col("_layout") & (F.substring(F.col("_p_ts"), 3, 1) == "/"), groups(rest, SPARK_LOGGER, 2))
                .when(F.col("_layout") & rest.startswith("[") & j.startswith("{"), groups(rest, THREAD_FILE, ["", "$1"]))
                .when(F.col("_layout") & rest.startswith("| ["), groups(rest, PIPES, ["$2$3", "$1"]))
                .when(F.col("_layout") & rest.startswith("[") & rest.contains(" - "), F.coalesce(
                    F.when(rest.contains("] - "), groups(rest, THREAD_CLASS, ["", "$1"])),
                    groups(rest, THREAD_LOGGER, ["$1$2$3", "$4"])))
                .when(F.col("_layout") & ~(rest.endswith(")") & rest.rlike(DEFAULT_SUFFIX)), F.coalesce(
                    F.when(rest.contains(": "), groups(rest, LOGGER_COLON, ["$1$2", "$3"])),
                    F.when(rest.contains(" - "), groups(rest, LOGGER_DASH, ["$1$2", "$3"])))))
    pre = F.col("_pre")
    df = stage(df, _pre_logger=F.nullif(pre[0], F.lit("")), _rest2=F.coalesce(pre[1], F.col("_rest")))
    rest = F.col("_rest2")
    iso = F.col("_iso")
    # log4j's own `yyyy-MM-dd HH:mm:ss,SSS` needs no rewriting
    as_is = (F.length(iso) == 23) & (F.substring(iso, 11, 1) == " ") & (F.substring(iso, 20, 1) == ",")
    df = stage(df, _tail=F.substring_index(rest, " (", -1),
                _norm=F.when(as_is, iso).when(iso != "", F.regexp_replace(F.translate(F.concat(F.when(
                    F.substring(iso, 3, 1) == "/", F.lit("20")).otherwise(F.lit("")), iso), "T/", " -"),
                    r"[,.](\d{3})\d*$", ",$1")))
    norm, tail, off = F.col("_norm"), F.col("_tail"), F.col("_off")
    has_logger = F.col("_pre").isNull() & rest.endswith(")") & rest.contains(" (") & tail.rlike(LOGGER)
    closed = F.locate(")", tail)  # a ` (logger)` ends at the tail's first `)`, the tail's end but for a FLAT_TRACE
    cut_logger = F.col("_pre").isNull() & rest.contains(" (") & (
        (~rest.endswith(")") & tail.rlike(CUT_LOGGER)) | closed.between(1, F.length(tail) - 1) & tail.rlike(FLAT_TRACE))
    # a JVM whose locale is Thai (th_TH) stamps the Buddhist Era's year, 543 past the common era's (Java's
    # BuddhistCalendar): `[2565-09-05 22:15:46,505]` is 2022; the month and day are the same
    year = F.substring(norm, 1, 4)
    norm = F.when(year.between("2543", "2643") & (F.substring(norm, 5, 1) == "-"),
                  F.concat((year.cast("int") - BUDDHIST_ERA_YEARS).cast("string"), F.substring(norm, 5, 64))) \
        .otherwise(norm)
    # read as UTC (the session zone), then moved from the line's zone
    local = F.try_to_timestamp(F.when(as_is | norm.rlike(r",\d{3}$"), norm).otherwise(F.concat(norm, F.lit(",000"))),
                               F.lit("yyyy-MM-dd HH:mm:ss,SSS"))
    df = method_boundary(stage(df, _local=local, _has_logger=has_logger, _cut_logger=cut_logger))
    local, has_logger, cut_logger = F.col("_local"), F.col("_has_logger"), F.col("_cut_logger")
    zone = F.when(off == "Z", F.lit("UTC")).otherwise(F.regexp_replace(off, r"^([+-]\d{2}):?(\d{2})$", "$1:$2"))
    in_zone = local if log_timezone == "UTC" else F.to_utc_timestamp(local, F.lit(log_timezone))
    local_ms = F.unix_millis(F.when(off.isNull(), in_zone).otherwise(F.to_utc_timestamp(local, zone)))
    layout = F.col("_layout")
    out = df.select(
        "*",
        (F.col("_json") & ~F.col("json_layout")).alias("bad_json"),
        F.when(F.col("json_layout"), F.coalesce(F.col("_epoch_ms"), local_ms)).when(layout, local_ms).alias("ts_ms"),
        F.when(F.col("json_layout"), F.col("_j_level")).when(layout, F.col("_p_level")).alias("level"),
        F.when(F.col("json_layout"), F.substring(F.col("_j_msg"), 1, MAX_LINE_CHARS))
        .when(layout, F.when(has_logger | cut_logger, head_bytes(rest, F.octet_length(rest) - F.octet_length(tail) - 2))
              .otherwise(F.rtrim(rest)))  # no ` (logger)`: blanks after the message are a paste's (KAFKA-13804's)
        .alias("msg"),
        F.when(F.col("json_layout"), F.col("_j_logger")).when(layout, F.coalesce(F.col("_pre_logger"), F.when(
            has_logger, F.substring_index(head_bytes(tail, F.octet_length(tail) - 1), ":", 1))
            .when(cut_logger, F.substring_index(F.substring_index(tail, ")", 1), ":", 1)))).alias("logger"),
        (F.col("json_layout") | layout).alias("has_layout"),
    )
    keep = [c for c in out.columns if not c.startswith("_") or c in temp]
    return out.select(*keep)


PARTIAL_REST = "rest of a partial line (CRI 'P' flag before it)"
CONTINUATION_LINE = "continuation line"  # the reason of a line that continues the record before it


def line_checks(df: DataFrame) -> DataFrame:
    """What a line says by itself, before its neighbours are known: ``blank``, ``is_record``, and the
    reason a line is not a record in two parts, the checks that come before and after "the line before
    was a CRI 'P' line" (``line_status`` puts them together)."""
    raw, inner = F.col("raw"), F.col("inner")
    too_long = F.col("raw_length") > MAX_LINE_CHARS
    record = ~too_long & F.col("has_layout") & F.col("ts_ms").isNotNull() & F.col("level").isin(*LEVELS) & \
        F.col("msg").isNotNull() & F.col("utf8_ok") & ~F.col("cri_flag").eqNullSafe("P")
    first = (
        F.when(too_long, F.concat(F.lit("line longer than "), F.lit(str(MAX_LINE_CHARS)), F.lit(" characters ("),
                                  F.col("raw_length").cast("string"), F.lit("): not parsed")))
        .when(~F.col("utf8_ok") & F.col("file_utf16"), F.lit("non-ASCII character in a UTF-16 file"))
        .when(~F.col("utf8_ok"), F.lit("invalid UTF-8"))
        .when(F.col("cri_flag") == "P", F.lit("partial line (CRI 'P' flag): long line split by the container runtime"))
    )
    then = (
        F.when(record, F.lit(None))
        .when(F.col("bad_json"), F.lit("unreadable JSON log record (no message field or invalid JSON)"))
        .when(F.col("json_layout") & F.col("ts_ms").isNull(), F.lit("no timestamp in JSON log record"))
        .when(F.col("has_layout") & F.col("ts_ms").isNull(), F.lit("invalid timestamp"))
        .when(F.col("has_layout") & ~F.col("level").isin(*LEVELS),
              F.concat(F.lit("unknown log level '"), F.coalesce(F.col("level"), F.lit("")), F.lit("'")))
        .when(inner.rlike(TS_START), F.lit("truncated or malformed timestamp/layout"))
        .when(inner.rlike(EMBEDDED_RECORD), F.lit("unknown prefix before a log record"))
        .when(inner.rlike(CONTINUATION) | F.col("config_line"), F.lit(CONTINUATION_LINE))
        .otherwise(F.lit("no timestamp"))
    )
    blank = ~too_long & ((F.trim(inner) == "") | (F.trim(raw) == "") | F.col("cut_mark"))
    df = df.select("*", blank.alias("blank"), (~blank & record).alias("is_record"), first.alias("_first"))
    return df.select("*", F.when(~F.col("blank") & F.col("_first").isNull(), then).alias("_then"))


def line_status(df: DataFrame) -> DataFrame:
    """status: record / blank / bad, and the reason a bad line is not a record (``after_partial``: the line
    before it in its file is a CRI 'P' line, whose rest this line is)."""
    reason = F.when(F.col("_first").isNotNull(), F.col("_first")) \
        .when(F.col("after_partial"), F.lit(PARTIAL_REST)).otherwise(F.col("_then"))
    status = F.when(F.col("blank"), F.lit("blank")).when(F.col("is_record"), F.lit("record")).otherwise(F.lit("bad"))
    return df.select(*[c for c in df.columns if c not in ("_first", "_then")], status.alias("status"),
                     F.when(~F.col("blank"), reason).alias("line_reason"))


REJECT_SHOWN_CHARS = 1000  # a 10 MB line stays a line in rejects, not 10 MB of report


def shown_raw(raw: Column, raw_length: Column) -> Column:
    """A rejected line as kept: control characters (NUL and the like from binary input, ESC) replaced by
    U+FFFD, at most REJECT_SHOWN_CHARS characters and a note of how many more there were."""
    clean = F.regexp_replace(F.substring(raw, 1, REJECT_SHOWN_CHARS),
                             "[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f]", "\ufffd")
    more = raw_length - REJECT_SHOWN_CHARS
    return F.when(more > 0, F.concat(clean, F.lit("… ("), more.cast("string"), F.lit(" more characters)"))) \
        .otherwise(clean)
