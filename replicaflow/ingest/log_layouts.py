"""Broker log lines -> records: file decoding, line splitting, container/syslog envelopes and log4j layouts.

Everything here is a Spark built-in expression (no Python UDF). Every line is cut to
``MAX_LINE_CHARS`` before any regular expression sees it, and every pattern is free of repeated groups
(``(?:,\\d+)*`` recurses once per repetition in Java's regex engine: a 4 KB ISR list overflowed the
stack), so a hostile line costs linear time and ends as a reject, never as a failed job.
See docs/logs.md (layouts).
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

LEVELS = ("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL")

# A line longer than this is rejected unparsed (a fetcher line of ~20,000 partitions still fits).
MAX_LINE_CHARS = 1 << 20

_TS = r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[,.]\d{1,9})?"
_OFFSET = r"(?:Z|[+-]\d{2}:?\d{2})"

# --- envelopes: what a runtime wraps around the broker's own line ----------------------------------
CRI = rf"^(\d{{4}}-\d{{2}}-\d{{2}}T\d{{2}}:\d{{2}}:\d{{2}}(?:\.\d+)?{_OFFSET}) (stdout|stderr) ([FP]) ?(.*)$"
# docker compose `kafka-1  | `, `kafka | ` (service names are [a-zA-Z0-9._-])
COMPOSE = r"^([A-Za-z0-9][\w.-]{0,127}) *\| ?(.*)$"
# journald/syslog: `Jan 02 03:04:05 host ident[pid]: `, RFC 5424-ish `2024-01-02T03:04:05.1+00:00 host ident[pid]: `
SYSLOG = (rf"^(?:[A-Z][a-z]{{2}} [ \d]?\d \d{{2}}:\d{{2}}:\d{{2}}|\d{{4}}-\d{{2}}-\d{{2}}T\d{{2}}:\d{{2}}:\d{{2}}"
          rf"(?:\.\d+)?{_OFFSET}) [\w.:-]{{1,255}} [\w./@-]{{1,255}}(?:\[\d{{1,10}}\])?: (.*)$")

# --- layouts: log4j's `[%d] %p %m (%c)%n` (Kafka's default) and `%d %p %m (%c) [%t]%n` (Strimzi) --------
LAYOUT = rf"^(?:\[({_TS}){_OFFSET}?\]|({_TS}){_OFFSET}?) +([A-Za-z]{{1,10}}) +(.*)$"
LAYOUT_OFFSET = rf"^\[?{_TS}({_OFFSET})?[\] ]"
TS_START = r"^\[?\d{4}-\d{2}-\d{2}"
THREAD_SUFFIX = r"\) \[[^\[\]]{0,512}\]$"  # Strimzi's ` [thread]` after the logger
LOGGER = r"^[A-Za-z_$][\w.$]{0,511}\)$"
# A stack-trace line (an indent of spaces is gone: _unwrap drops it); a continuation line is one of those or
# the last line of a message that itself holds a newline (ZooKeeper's `Stat` ends in one), which ends in
# the layout's ` (%c)` (Strimzi: ` (%c) [%t]`), a dotted logger name.
STACK_LINE = (r"^\s*(?:at [\w$.<>/@-]{1,1024}\([^()]{0,1024}\)$|\.\.\. \d+ (?:more|common frames omitted)|Caused by: |"
              r"Suppressed: |[A-Za-z_$][\w$]{0,255}\.[\w$.]{0,1024}(?:Exception|Error|Throwable)(?::|$))")
CONTINUATION = (rf"{STACK_LINE}|^.{{0,4096}}(?:^|\s)\([A-Za-z_$][\w$]{{0,255}}\.[\w$.]{{0,1024}}\)"
                r"(?: \[[^\[\]]{0,512}\])?$")


def decode_files(whole: DataFrame, source: Column) -> DataFrame:
    """Whole files (``value`` as read by Spark's text source) -> source, file_utf8, file_utf16, text.

    A UTF-8 byte-order mark is dropped. A UTF-16 file (BOM ``FF FE``/``FE FF``, or NUL-interleaved
    ASCII) is read for its ASCII content: Spark decodes bytes as UTF-8 and ``decode(..., 'UTF-16')``
    fails the job on a malformed sequence, so the NULs are removed and the BOM (two U+FFFD) dropped;
    a non-ASCII character of such a file stays U+FFFD and its line is rejected.
    """
    v = F.col("value")
    # rlike sees the bytes decoded (invalid ones as U+FFFD); startswith would compare the raw bytes
    utf16 = F.substring(v, 1, 8).rlike(
        "^(?:\ufffd\ufffd)?(?:[\\x01-\\x7f]\\x00[\\x01-\\x7f]\\x00|\\x00[\\x01-\\x7f]\\x00[\\x01-\\x7f])")
    text = (F.when(utf16, F.regexp_replace(F.regexp_replace(v, "\x00", ""), "^\ufffd\ufffd", ""))
            .otherwise(F.regexp_replace(v, "^\ufeff", "")))
    return whole.select(source.alias("source"), F.is_valid_utf8(v).alias("file_utf8"), utf16.alias("file_utf16"),
                        text.alias("text"))


def split_lines(files: DataFrame) -> DataFrame:
    """One row per physical line: source, line_number (1-based), raw (at most MAX_LINE_CHARS), raw_length,
    utf8_ok."""
    exploded = files.select("source", "file_utf8", "file_utf16", F.split("text", "\n").alias("lines")).select(
        "source", "file_utf8", "file_utf16", F.size("lines").alias("n"), F.posexplode("lines").alias("pos", "line"))
    exploded = exploded.where((F.col("pos") < F.col("n") - 1) | (F.col("line") != ""))
    raw = F.substring("line", 1, MAX_LINE_CHARS + 1)
    raw = F.when(raw.endswith("\r"), F.substring(raw, 1, F.length(raw) - 1)).otherwise(raw)
    # split() decodes, replacing invalid bytes with U+FFFD; in a valid UTF-8 file a U+FFFD is genuine
    ok = F.when(F.col("file_utf16"), ~raw.contains("\ufffd")).otherwise(F.col("file_utf8") | ~raw.contains("\ufffd"))
    return exploded.select("source", (F.col("pos") + 1).cast("long").alias("line_number"),
                           F.substring(raw, 1, MAX_LINE_CHARS).alias("raw"), F.length("line").alias("raw_length"),
                           ok.alias("utf8_ok"), "file_utf16")


def _unwrap(raw: Column) -> tuple[Column, Column]:
    """(inner line, CRI flag): CRI, docker json-file, docker compose and syslog/journald envelopes removed,
    leading whitespace dropped."""
    line = F.ltrim(raw)
    is_cri = line.rlike(CRI)
    docker = F.when(line.startswith("{"), F.get_json_object(line, "$.log"))
    inner = (F.when(is_cri, F.regexp_extract(line, CRI, 4))
             .when(docker.isNotNull(), F.regexp_replace(docker, r"\r?\n$", ""))
             .otherwise(line))
    inner = F.ltrim(inner)
    # a compose or syslog prefix before a bracketed or ISO timestamp or a JSON record
    after_compose = F.regexp_extract(inner, COMPOSE, 2)
    # (a stack trace printed through the envelope keeps its lines under the record they continue)
    inner = F.when(inner.rlike(COMPOSE) & (F.ltrim(after_compose).rlike(r"^(?:\[\d{4}-|\d{4}-\d{2}-\d{2}[ T]|\{)")
                                          | after_compose.rlike(STACK_LINE)),
                   F.ltrim(after_compose)).otherwise(inner)
    after_syslog = F.regexp_extract(inner, SYSLOG, 1)
    inner = F.when(inner.rlike(SYSLOG) & F.ltrim(after_syslog).rlike(r"^(?:\[\d{4}-|\d{4}-\d{2}-\d{2}[ T]|\{)"),
                   F.ltrim(after_syslog)).otherwise(inner)
    return inner, F.when(is_cri, F.regexp_extract(line, CRI, 3))


def _stage(df: DataFrame, **cols: Column) -> DataFrame:
    """Add columns in their own projection. A Column used several times in one expression is evaluated
    as many times (Spark shares subexpressions only outside conditional branches), so every regular
    expression here is computed once into a column that later stages read; the optimizer keeps such
    a projection rather than inline a costly expression twice."""
    return df.select("*", *[c.alias(name) for name, c in cols.items()])


_TS_PATHS = ("$.timestamp", "$['@timestamp']", "$.time", "$.timeMillis", "$.instant.epochSecond")
_LOGGER_PATHS = ("$.logger", "$.loggerName", "$.logger_name", "$['log.logger']")


def parse_layout(df: DataFrame, log_timezone: str = "UTC") -> DataFrame:
    """Unwrap envelopes; parse pattern or JSON layouts into ts_ms, level, msg, logger.

    Timestamps written without an offset are in ``log_timezone`` (the zone of the broker's JVM: log4j
    writes local time); ``[,.]`` and the first three fraction digits give the milliseconds."""
    temp = set(df.columns)
    inner, cri_flag = _unwrap(F.col("raw"))
    df = _stage(df, inner=inner, cri_flag=cri_flag)
    j = F.col("inner")
    is_json = j.startswith("{")
    layout = ~is_json & j.rlike(LAYOUT)
    df = _stage(df, _json=is_json, _layout=layout,
                _j_msg=F.when(is_json, F.get_json_object(j, "$.message")),
                _j_ts=F.when(is_json, F.coalesce(*[F.get_json_object(j, p) for p in _TS_PATHS])),
                _j_level=F.when(is_json, F.upper(F.coalesce(F.get_json_object(j, "$.level"),
                                                            F.get_json_object(j, "$['log.level']")))),
                _j_logger=F.when(is_json, F.coalesce(*[F.get_json_object(j, p) for p in _LOGGER_PATHS])),
                _p_ts=F.when(layout, F.coalesce(F.nullif(F.regexp_extract(j, LAYOUT, 1), F.lit("")),
                                                F.regexp_extract(j, LAYOUT, 2))),
                _p_off=F.when(layout, F.nullif(F.regexp_extract(j, LAYOUT_OFFSET, 1), F.lit(""))),
                _p_level=F.when(layout, F.upper(F.regexp_extract(j, LAYOUT, 3))),
                _p_rest=F.when(layout, F.regexp_extract(j, LAYOUT, 4)))
    jt, rest = F.col("_j_ts"), F.col("_p_rest")
    json_layout = F.col("_json") & F.col("_j_msg").isNotNull()
    df = _stage(df, json_layout=json_layout,
                _epoch_ms=F.when(json_layout, F.when(jt.rlike(r"^\d{12,15}$"), jt.try_cast("long")).when(
                    jt.rlike(r"^\d{9,11}(?:\.\d{1,9})?$"), (jt.try_cast("double") * 1000).try_cast("long"))),
                _iso=F.when(json_layout, F.regexp_extract(jt, rf"^({_TS})({_OFFSET})?$", 1))
                .when(F.col("_layout"), F.col("_p_ts")),
                _off=F.when(json_layout, F.nullif(F.regexp_extract(jt, rf"^{_TS}({_OFFSET})$", 1), F.lit("")))
                .when(F.col("_layout"), F.col("_p_off")),
                _rest=F.when(rest.rlike(THREAD_SUFFIX), F.regexp_replace(rest, r" \[[^\[\]]*\]$", "")).otherwise(rest))
    rest = F.col("_rest")
    iso = F.col("_iso")
    df = _stage(df, _tail=F.substring_index(rest, " (", -1),
                _norm=F.when(iso != "", F.regexp_replace(F.regexp_replace(iso, "T", " "), r"[,.](\d{3})\d*$", ",$1")))
    norm, tail, off = F.col("_norm"), F.col("_tail"), F.col("_off")
    has_logger = rest.endswith(")") & rest.contains(" (") & tail.rlike(LOGGER)
    # read as UTC (the session zone), then moved from the line's zone
    local = F.try_to_timestamp(F.when(norm.rlike(r",\d{3}$"), norm).otherwise(F.concat(norm, F.lit(",000"))),
                               F.lit("yyyy-MM-dd HH:mm:ss,SSS"))
    df = _stage(df, _local=local, _has_logger=has_logger)
    local, has_logger = F.col("_local"), F.col("_has_logger")
    zone = F.when(off == "Z", F.lit("UTC")).otherwise(F.regexp_replace(off, r"^([+-]\d{2}):?(\d{2})$", "$1:$2"))
    local_ms = F.unix_millis(F.when(off.isNull(), F.to_utc_timestamp(local, F.lit(log_timezone)))
                             .otherwise(F.to_utc_timestamp(local, zone)))
    layout = F.col("_layout")
    out = df.select(
        "*",
        (F.col("_json") & ~F.col("json_layout")).alias("bad_json"),
        F.when(F.col("json_layout"), F.coalesce(F.col("_epoch_ms"), local_ms)).when(layout, local_ms).alias("ts_ms"),
        F.when(F.col("json_layout"), F.col("_j_level")).when(layout, F.col("_p_level")).alias("level"),
        F.when(F.col("json_layout"), F.substring(F.col("_j_msg"), 1, MAX_LINE_CHARS))
        .when(layout, F.when(has_logger, F.substring(rest, 1, F.length(rest) - F.length(tail) - 2)).otherwise(rest))
        .alias("msg"),
        F.when(F.col("json_layout"), F.col("_j_logger")).when(layout, F.when(has_logger, F.substring(
            tail, 1, F.length(tail) - 1))).alias("logger"),
        (F.col("json_layout") | layout).alias("has_layout"),
    )
    keep = [c for c in out.columns if not c.startswith("_") or c in temp]
    return out.select(*keep)


def line_status(df: DataFrame) -> DataFrame:
    """status: record / blank / bad, and the reason a bad line is not a record."""
    raw, inner = F.col("raw"), F.col("inner")
    too_long = F.col("raw_length") > MAX_LINE_CHARS
    record = ~too_long & F.col("has_layout") & F.col("ts_ms").isNotNull() & F.col("level").isin(*LEVELS) & \
        F.col("msg").isNotNull() & F.col("utf8_ok") & ~F.col("cri_flag").eqNullSafe("P")
    # the line after a CRI 'P' line is the rest of that split line, never a message's own continuation
    after_partial = F.lag("cri_flag").over(Window.partitionBy("source").orderBy("line_number")).eqNullSafe("P")
    reason = (
        F.when(too_long, F.concat(F.lit("line longer than "), F.lit(str(MAX_LINE_CHARS)), F.lit(" characters ("),
                                  F.col("raw_length").cast("string"), F.lit("): not parsed")))
        .when(~F.col("utf8_ok") & F.col("file_utf16"), F.lit("non-ASCII character in a UTF-16 file"))
        .when(~F.col("utf8_ok"), F.lit("invalid UTF-8"))
        .when(F.col("cri_flag") == "P", F.lit("partial line (CRI 'P' flag): long line split by the container runtime"))
        .when(after_partial, F.lit("rest of a partial line (CRI 'P' flag before it)"))
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
    blank = ~too_long & ((F.trim(inner) == "") | (F.trim(raw) == ""))
    return df.select("*", F.when(blank, F.lit("blank")).when(record, F.lit("record")).otherwise(F.lit("bad"))
                     .alias("status"), F.when(~blank, reason).alias("line_reason"))


REJECT_SHOWN_CHARS = 1000  # a 10 MB line stays a line in rejects, not 10 MB of report


def shown_raw(raw: Column, raw_length: Column) -> Column:
    """A rejected line as kept: control characters (NUL and the like from binary input, ESC) replaced by
    U+FFFD, at most REJECT_SHOWN_CHARS characters and a note of how many more there were."""
    clean = F.regexp_replace(F.substring(raw, 1, REJECT_SHOWN_CHARS),
                             "[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f]", "\ufffd")
    more = raw_length - REJECT_SHOWN_CHARS
    return F.when(more > 0, F.concat(clean, F.lit("… ("), more.cast("string"), F.lit(" more characters)"))) \
        .otherwise(clean)
