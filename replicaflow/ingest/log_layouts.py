"""Broker log lines -> records: file decoding, line splitting, container/syslog envelopes and log4j layouts.

Everything here is a Spark built-in expression (no Python UDF). Every line is cut to
``MAX_LINE_CHARS`` before any regular expression sees it, and every pattern is free of repeated groups
(``(?:,\\d+)*`` recurses once per repetition in Java's regex engine: a 4 KB ISR list overflowed the
stack), so a hostile line costs linear time and ends as a reject, never as a failed job.
See docs/logs.md (layouts).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pyspark.sql import Column, DataFrame, Window, WindowSpec
from pyspark.sql import functions as F

LEVELS = ("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL")

# A line longer than this is rejected unparsed (a fetcher line of ~20,000 partitions still fits).
MAX_LINE_CHARS = 1 << 20

_TS = r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[,.]\d{1,9})?"
_OFFSET = r"(?:Z|[+-]\d{2}:?\d{2})"
# LinkedIn's layout writes the date with slashes (`%d{yyyy/MM/dd HH:mm:ss.SSS}`; see LINKEDIN below)
_TS_SLASH = r"\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}(?:[,.]\d{1,9})?"
# what starts a record without brackets: an ISO date, or LinkedIn's
_BARE_DATE = r"\d{4}-\d{2}-\d{2}[ T]|\d{4}/\d{2}/\d{2} "

# a host or stream name after a time is never a level word: that time is the record's own (`%d{ISO8601} %p %m`, where
# `... ERROR org.apache.kafka.common.errors.KafkaStorageException: Error while ...` read as host ERROR, ident, message)
_NOT_LEVEL = r"(?!(?:TRACE|DEBUG|INFO|WARN|ERROR|FATAL)\b)"

# --- envelopes: what a runtime wraps around the broker's own line ----------------------------------
# `grep -r`/`zgrep` over several files (`server.log.1:[2018-…`) or `grep -n` (`path:12:`, `12:`): the file name
# (no space, `[`, `|` or `{`) and line number, taken off only before a bracketed or ISO timestamp or a stack-trace
# line. A context line of `-A`/`-B`/`-C` has `-` where a matching line has `:` (`server.log-[2018-…`,
# `server.log-12-\tat …`); its file name is ambiguous where it ends in `-digits` (`server.log.2019-10-09-19-[…` is
# that file without `-n`, or `server.log.2019-10-09` at line 19): `grep_path` settles it.
# groups: the file name (or the line number of `grep -n`), the separator (`:`/`-` and the line number), the number
# of a `-` separator, the line. The stack-trace forms are those of ``STACK_LINE`` led as Java writes them (a frame
# by its indent, an exception's toString by no blank): `Suppressed: java.io.IOException` is not `Suppressed`'s line.
_GREP_REST = (r"\[\d{4}-\d{2}-\d{2}[ T].*|(?:" + _BARE_DATE + r").*|\s+at [\w$.<>/@-]{1,1024}+\(.*|"
              r"\s*\.\.\. \d+ (?:more|common frames omitted).*|\s*(?:Caused by|Suppressed): .*|"
              r"[A-Za-z_$][\w$.]{0,1024}+(?<=Exception|Error|Throwable)(?::.*)?")
GREP = rf"^([^\s\[|{{]{{1,4096}}?)(:(?:\d{{1,10}}:)?|-(?:(\d{{1,10}})-)?)({_GREP_REST})$"
# A line that says lines were left out between those around it: grep's `--` between the groups of context it prints,
# a paste's code-block mark (Jira's `{code}`, `{code:java}`, `{noformat}`, `{quote}`, `{panel}`; a Markdown fence,
# ```` ```log ````), alone on its line
CUT_MARK = (r"^(?:>[ >]{0,8})?\s{0,8}(?:--|`{3,}[\w+.-]{0,32}|\{(?:code|noformat|quote|panel)(?::[^{}]{0,200})?\})"
            r"\s*$")
CRI = rf"^(\d{{4}}-\d{{2}}-\d{{2}}T\d{{2}}:\d{{2}}:\d{{2}}(?:\.\d+)?{_OFFSET}) (stdout|stderr) ([FP]) ?(.*)$"
# pdsh and clush, a command run on every broker host at once (`pdsh -w kafka[1-6] grep ... server.log`):
# `<host>: <line>`. A host name as DNS writes it, never an exception's class or `Suppressed`
# (`java.util.concurrent.ExecutionException: org.apache.kafka.common.errors.TimeoutException: ...` is one
# stack-trace line). groups: the host, the line
PDSH = r"^([A-Za-z0-9][\w.-]{0,252}+)(?<!Exception|Error|Throwable|Suppressed): (.*)$"
# docker compose `kafka-1  | `, `kafka | ` (service names are [a-zA-Z0-9._-])
COMPOSE = r"^([A-Za-z0-9][\w.-]{0,127}) *\| ?(.*)$"
# stern (`stern kafka`, the Kubernetes multi-pod tail): `<pod> <container> <line>`, DNS names, no other mark
STERN = r"^([a-z0-9][-a-z0-9.]{0,252}) [a-z0-9][-a-z0-9]{0,62} (.*)$"
# `kubectl logs --prefix` (1.17+; `oc logs --prefix`), the logs of several pods in one stream (`-l app=kafka`, a
# StatefulSet): `[pod/<pod>/<container>] <line>`. groups: the pod, the line
KUBECTL = r"^\[pod/([a-z0-9][-a-z0-9.]{0,252})/[a-z0-9][-a-z0-9]{0,62}\] (.*)$"
# `aws logs tail` of a CloudWatch log group (Amazon MSK delivers each broker's log to one; the default "detailed"
# format): the event's RFC 3339 time, the log stream's name, the message. Taken off before a record or a stack-trace
# line only; a level word is no stream (a layout writing its own ISO time, `... +0100 ERROR java.io.IOException: x`).
# groups: the log stream, the line
CLOUDWATCH = (rf"^\d{{4}}-\d{{2}}-\d{{2}}T\d{{2}}:\d{{2}}:\d{{2}}(?:\.\d{{1,9}})?{_OFFSET} "
              rf"{_NOT_LEVEL}([^\s:*\[]{{1,512}}) (.*)$")
# `docker logs -t`, `docker compose logs -t`, `kubectl logs --timestamps`: the runtime's RFC 3339 time, a space,
# the line (taken off only before a bracketed or ISO timestamp or a JSON record: the broker's own layout follows)
STAMP = rf"^\d{{4}}-\d{{2}}-\d{{2}}T\d{{2}}:\d{{2}}:\d{{2}}(?:\.\d{{1,9}})?{_OFFSET} (.*)$"
# where a level word follows such a time, the time is the record's own (a layout `%d{yyyy-MM-dd'T'HH:mm:ss.SSSZ} %p
# %m (%c)`), not a runtime's: the line is read whole, not as the tail of the record before it
LEVEL_START = r"^\[?(?:TRACE|DEBUG|INFO|WARN|ERROR|FATAL)\b"
# the colours `docker compose up` / `docker-compose logs` give each service's name when they write to a terminal
# (`ESC[36mkafka_1  |ESC[0m [2019-...`), kept where that output was saved or pasted: SGR sequences, taken off first
ANSI_COLOR = r"\x1b\[[0-9;]{0,32}m"
# a log tool's CSV export (Kibana, Datadog: `"2023-08-18T09:07:17.150Z","INFO","kafka.server.KafkaServer","[KafkaServer
# id=1] shutting down"`, a quote inside doubled): rewritten as Kafka's own layout, `[ts] LEVEL message (logger)`.
# groups: time, level, logger, message (its closing quote may be lost where a paste cut the line)
CSV = (r'^"(\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[,.]\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})?)","([A-Za-z]{1,10})",'
       r'"([A-Za-z_$][\w.$]{0,511})","(.*?)"?$')
# journald/syslog: `Jan 02 03:04:05 host ident[pid]: `, RFC 5424-ish `2024-01-02T03:04:05.1+00:00 host ident[pid]: `
SYSLOG = (rf"^(?:[A-Z][a-z]{{2}} [ \d]?\d \d{{2}}:\d{{2}}:\d{{2}}|\d{{4}}-\d{{2}}-\d{{2}}T\d{{2}}:\d{{2}}:\d{{2}}"
          rf"(?:\.\d+)?{_OFFSET}) {_NOT_LEVEL}([\w.:-]{{1,255}}) [\w./@-]{{1,255}}(?:\[\d{{1,10}}\])?: (.*)$")

# --- layouts: log4j's `[%d] %p %m (%c)%n` (Kafka's default) and `%d %p %m (%c) [%t]%n` (Strimzi) --------
# groups: timestamp and offset of `[ts]` (1, 2; also `{ts}`, KAFKA-903's `{%d} %p [%t] (%F:%L) - %m`) or of `ts` (3, 4;
# also `ts]`, a record whose first character a bug report's paste lost; also LinkedIn's `yyyy/MM/dd`), level (5; also
# `[%-5p]`), the rest (6). ZooKeeper's
# own `%d{ISO8601} [myid:%X{myid}] - %-5p [%t:%C{1}@%L] - %m` is read too: a ZooKeeper server's lines sit between the
# broker's in `docker compose logs` of a ZooKeeper-era cluster, and are records, not broken lines. So is a thread
# before the level (`%d [%t] %-5p %c - %m`, logback's habit), when a level word follows it.
LAYOUT = (rf"^(?:[\[{{]({_TS})({_OFFSET})?[\]}}]|({_TS}|{_TS_SLASH})({_OFFSET})?\]?)(?: \[myid:\d{{0,10}}\] -| \[[^\[\]]{{1,512}}\]"
          r"(?= +(?:TRACE|DEBUG|INFO|WARN|ERROR|FATAL)\b))? +\[?([A-Za-z]{1,10}) *\]? +(.*)$")
# The level first: Confluent for Kubernetes' `[%p] %d [%t] %c %M - %m`, in CP 8 with the MDC (`app=kafka,
# clusterId=…, server=0 - `) before the message. groups as LAYOUT's: timestamp (3), offset (4), level (5), the rest (6)
LEVEL_FIRST = rf"^\[(TRACE|DEBUG|INFO|WARN|ERROR|FATAL) ?\] ({_TS})({_OFFSET})? +(.*)$"
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
# KAFKA-903's `{%d} %p [%t] (%F:%L) - %m`: the thread and the source file's line before the message. group: message
THREAD_FILE = r"^\[[^\[\]]{0,512}\] \([\w$.-]{1,255}:\d{1,9}\) - (.*)$"
# ` (%c)`, or ` (%c:%L)` with the logging call's line (the layout of Kafka's own tests, and of some deployments)
_CALL_LINE = r"(?::\d{1,9})?"
DEFAULT_SUFFIX = rf"\s\([A-Za-z_$][\w$]{{0,255}}\.[\w.$]{{0,1024}}{_CALL_LINE}\)$"
# a line that starts with a date (`yyyy-MM-dd`, LinkedIn's `yyyy/MM/dd`, `{%d}`) but is no record is a broken or unknown
# layout, never a stack-trace line or a message tail, even where it ends in ` (logger)`
TS_START = r"^[\[{]?\d{4}[-/]\d{2}[-/]\d{2}"
# What a log pasted into Markdown (an issue, a wiki, a blog) puts before its lines: a quote's `> `, a list item's
# `4. ` or `- `, inline code's backticks (a fence's glued to the first line), and a code block's mark glued to a
# line's start or end (Jira's `{noformat}[2019-…`, a fence's ```` ``` ```` after the last). Taken off before a record
# (with the envelopes and grep's file name below behind it) or a stack-trace line only. groups: the line
PASTE = (r"^(?:>[ >]{0,8})?(?:\d{1,4}\.|[-*+])?\s{0,8}`{0,3}(?:\{(?:code|noformat|quote|panel)(?::[^{}]{0,200})?\})?"
         r"(.*?)(?:`{3}|\{(?:code|noformat|quote|panel)\})?\s*$")
PASTED = (r"^(?:(?:[A-Za-z0-9][\w.-]{0,127} *\| ?|\[pod/[^\s\[\]]{1,320}\] |"
          r"[^\s\[|{]{1,4096}?(?::(?:\d{1,10}:)?|-(?:\d{1,10}-)?))?(?:\[\d{4}-|" + _BARE_DATE + r")|"
          r"\s*at [\w$.<>/@-]{1,1024}\(|[A-Za-z_$][\w$.]{0,1024}(?:Exception|Error)(?::|$))")
# what an envelope must leave: a bracketed, ISO or LinkedIn timestamp, a JSON record, or a level before a date
RECORD_START = rf"^(?:\[\d{{4}}-|{_BARE_DATE}|\{{|\[[A-Z]{{4,5}} ?\] \d{{4}}-)"
# a whole log4j record (`[ts] LEVEL ` or Strimzi's `ts LEVEL `) behind a prefix no envelope rule knows: not a
# stack-trace line even where it ends in ` (logger)`, so not attached to the record before it
EMBEDDED_RECORD = (rf"^\S.{{0,255}}?(?:\[\d{{4}}-\d{{2}}-\d{{2}}[ T]\d{{2}}:\d{{2}}:\d{{2}}[,.]\d{{1,9}}\]|(?:{_BARE_DATE})"
                   r"\d{2}:\d{2}:\d{2}[,.]\d{1,9}) +\[?(?:TRACE|DEBUG|INFO|WARN|ERROR|FATAL)\b")
THREAD_SUFFIX = r"\) \[[^\[\]]{0,512}\]$"  # Strimzi's ` [thread]` after the logger
# Confluent for Kubernetes' MDC after the logger (`(logger:line) - app=connect, clusterId=…, server=0`)
MDC_SUFFIX = r"\) - [A-Za-z_][\w.-]{0,63}=[^()\[\]]{0,2048}$"
LOGGER = rf"^[A-Za-z_$][\w.$]{{0,511}}{_CALL_LINE}\)$"
# a ` (logger)` cut after a dot (a paste wrapped it: `(kafka.server.Replic`, `aFetcherThread)`): the message is whole
CUT_LOGGER = r"^[A-Za-z_$][\w$]{0,255}\.[\w.$]{0,1024}$"
# A stack-trace line (an indent of spaces is gone: _unwrap drops it): a frame (log4j2, Kafka 4.x, appends the
# frame's jar, ` ~[kafka-metadata-4.0.0.jar:?]`, `[?:?]`), or an exception's toString, a class name (bare where the
# class overrides toString: ZooKeeper's `EndOfStreamException: Unable to read additional data ...`); a continuation
# line is one of those or the last line of a message that itself holds a newline (ZooKeeper's `Stat` ends in
# one), which ends in the layout's ` (%c)` (Strimzi: ` (%c) [%t]`), a dotted logger name.
STACK_LINE = (r"^\s*(?:at [\w$.<>/@-]{1,1024}\([^()]{0,1024}\)(?: ~?\[[^\[\]]{0,1024}\])?$|"
              r"\.\.\. \d+ (?:more|common frames omitted)|Caused by: |Suppressed: |"
              r"[A-Za-z_$][\w$.]{0,1024}(?:Exception|Error|Throwable)(?::|$))")
# A line of the config dump Kafka writes at start-up (AbstractConfig.logAll: `KafkaConfig values: ` then a line
# `\t<name> = <value>` per setting, then the layout's ` (kafka.server.KafkaConfig)`), on the text an envelope left
# before leading whitespace is dropped: the indent is what tells it from a message. A tab as Kafka writes it, or
# two or more spaces where a bug report or a blog pasted the log and its tabs became spaces.
CONFIG_LINE = r"^(?:\t| {2,64})[A-Za-z][\w.-]{0,255} =(?: .{0,1048576})?$"
CONTINUATION = (rf"{STACK_LINE}|^.{{0,4096}}(?:^|\s)\([A-Za-z_$][\w$]{{0,255}}\.[\w$.]{{0,1024}}{_CALL_LINE}\)"
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
    """One row per physical line: the file's columns but ``text`` and ``file_utf8``, line_number (1-based), raw
    (at most MAX_LINE_CHARS), raw_length, utf8_ok."""
    keep = [c for c in files.columns if c != "text"]
    exploded = files.select(*keep, F.split("text", "\n").alias("lines")).select(
        *keep, F.size("lines").alias("n"), F.posexplode("lines").alias("pos", "line"))
    exploded = exploded.where((F.col("pos") < F.col("n") - 1) | (F.col("line") != ""))
    # (a line of at most MAX_LINE_CHARS bytes has at most as many characters: only a longer one is cut, as
    # substring counts the characters of the whole line first)
    line = F.col("line")
    long = F.octet_length(line) > MAX_LINE_CHARS
    df = _stage(exploded, _cut=F.when(long, F.substring(line, 1, MAX_LINE_CHARS + 1)).otherwise(line))
    cut = F.col("_cut")
    df = _stage(df, _raw=F.when(cut.endswith("\r"), head_bytes(cut, F.octet_length(cut) - 1)).otherwise(cut))
    raw = F.col("_raw")
    # split() decodes, replacing invalid bytes with U+FFFD; in a valid UTF-8 file a U+FFFD is genuine
    ok = F.when(F.col("file_utf16"), ~raw.contains("\ufffd")).otherwise(F.col("file_utf8") | ~raw.contains("\ufffd"))
    return df.select(*[c for c in keep if c != "file_utf8"], (F.col("pos") + 1).cast("long").alias("line_number"),
                     F.when(long, F.substring(raw, 1, MAX_LINE_CHARS)).otherwise(raw).alias("raw"),
                     F.length(line).alias("raw_length"), ok.alias("utf8_ok"))


def head_bytes(text: Column, n: Column) -> Column:
    """The first ``n`` bytes of ``text``, cut where a character ends (after an ASCII character, as every
    caller's cut is). ``substring`` counts the characters of the whole text before cutting it, once per
    call; a binary slice does not."""
    return F.substring(text.cast("binary"), 1, n).cast("string")


def byte_at(text: Column, pos: int, char: str) -> Column:
    """Whether byte ``pos`` (1-based) of ``text`` is the ASCII ``char``; the same as character ``pos`` in
    a text whose first ``pos - 1`` characters are ASCII, which every pattern it guards requires."""
    return F.substring(text.cast("binary"), pos, 1) == F.lit(char.encode("ascii"))


def groups(text: Column, pattern: str, fields: int | Sequence[str]) -> Column:
    """The groups of ``pattern`` matched at the start of ``text`` as an array, from one regular expression
    call (each call decodes the whole line into a Java string, and ``regexp_extract`` gives one group per
    call); null where it does not match. ``fields`` are replacement texts such as ``"$1$4"`` (or ``n``:
    groups 1..n). ``regexp_replace`` rewrites the whole text into NUL + field 1 + NUL + ... and a split
    with a limit takes it apart, so the last field alone may hold a NUL. ``pattern`` starts with ``^`` and
    cannot match a text that starts with NUL, which tells a rewritten text from an unmatched one."""
    fields = [f"${g}" for g in range(1, fields + 1)] if isinstance(fields, int) else list(fields)
    out = F.regexp_replace(text, F.lit(f"{pattern}[\\s\\S]*"), F.lit("".join(f"\x00{f}" for f in fields)))
    n = len(fields)
    return F.when(out.startswith("\x00") & ~text.startswith("\x00"), F.slice(F.split(out, "\x00", n + 1), 2, n))


def _config_line(text: Column) -> Column:
    """Whether ``text`` (as an envelope left it, leading whitespace kept) is a line of Kafka's config dump."""
    return F.coalesce((text.startswith("\t") | text.startswith("  ")) & text.rlike(CONFIG_LINE), F.lit(False))


# The prefixes taken off in turn before a bracketed or ISO timestamp or a JSON record, or before a line that
# continues one: (name, the prefix's groups, the text after it last, or null; whether the record may start after
# blanks; whether the first group names the line's stream). Each pattern runs only on a line holding a character it
# needs at a fixed place. A stream is the process a line came from where one file holds several: the service of
# `docker compose logs`, the pod of stern or `kubectl logs --prefix`, the host of pdsh or of a central syslog file, the
# log stream of CloudWatch.
_ENVELOPES: tuple[tuple[str, Callable[[Column], Column], bool, bool], ...] = (
    ("csv", lambda inner: F.when(inner.startswith('"'), F.array(F.regexp_replace(
        groups(inner, CSV, ["[$1] $2 $4 ($3)"])[0], '""', '"'))), False, False),
    ("pdsh", lambda inner: F.when(inner.contains(": "), groups(inner, PDSH, 2)), False, True),
    ("compose", lambda inner: F.when(inner.contains("|"), groups(inner, COMPOSE, 2)), True, True),
    ("stern", lambda inner: F.when(F.substring(inner, 1, 1).between("a", "z") & inner.contains(" "),
                                   groups(inner, STERN, 2)), False, True),
    ("kubectl", lambda inner: F.when(inner.startswith("[pod/"), groups(inner, KUBECTL, 2)), False, True),
    ("cloudwatch", lambda inner: F.when(byte_at(inner, 11, "T"), groups(inner, CLOUDWATCH, 2)), False, True),
    ("stamp", lambda inner: F.when(byte_at(inner, 11, "T"), groups(inner, STAMP, 1)), False, False),
    ("syslog", lambda inner: F.when(byte_at(inner, 4, " ") | byte_at(inner, 11, "T"), groups(inner, SYSLOG, 2)),
     True, True),
)


def _unwrap(df: DataFrame) -> DataFrame:
    """inner (the line with terminal colours, grep's file name, CRI, docker json-file and the ``_ENVELOPES``
    removed, leading whitespace dropped), cri_flag, config_line (``CONFIG_LINE``, told before the indent is
    dropped), the file grep names (``grep_match_name`` and ``grep_numbered`` on a matching line, ``grep_name`` and
    ``grep_long_name`` on a context line: for ``grep_path``), envelope_stream (the service, pod or host an
    envelope names) and cut_mark (``CUT_MARK``). Each envelope's pattern is tried only on lines holding a
    character it requires at a fixed place (most lines have no envelope). An envelope is taken off before a record,
    and before the lines that continue one (a stack trace, a config dump, a message's last line) printed through
    the same envelope."""
    line = F.col("_line")
    trimmed, plain = F.col("_trimmed"), F.col("_plain")
    raw = F.col("raw")
    df = _stage(df, _plain=F.when(raw.contains("\x1b"), F.regexp_replace(raw, ANSI_COLOR, "")).otherwise(raw))
    df = _stage(df, _trimmed0=F.ltrim(plain))
    t0 = F.col("_trimmed0")
    df = _stage(df, _pasted=F.when(F.substring(t0, 1, 1).isin(">", "`", "-", "*", "+", "{") | byte_at(t0, 2, ".")
                                   | byte_at(t0, 3, ".") | t0.endswith("}") | t0.endswith("`"),
                                   groups(t0, PASTE, 1)[0]))
    pasted = F.col("_pasted")
    df = _stage(df, _trimmed=F.when((pasted != t0) & pasted.rlike(PASTED), pasted).otherwise(t0))
    df = _stage(df, _grep=F.when(~trimmed.startswith("[") & (trimmed.contains(":") | trimmed.contains("-")),
                                 groups(trimmed, GREP, 4)))
    df = _stage(df, _line=F.coalesce(F.col("_grep")[3], trimmed))
    df = _stage(df, _cri=F.when(byte_at(line, 11, "T"), groups(line, CRI, 4)),
                _docker=F.when(line.startswith("{"), F.get_json_object(line, "$.log")))
    cri, docker = F.col("_cri"), F.col("_docker")
    payload = F.when(cri.isNotNull(), cri[3]).when(docker.isNotNull(), F.regexp_replace(docker, r"\r?\n$", ""))
    df = _stage(df, _inner0=F.ltrim(F.coalesce(payload, line)), _config0=_config_line(F.coalesce(payload, plain)),
                cri_flag=cri[2])
    inner, config = F.col("_inner0"), F.col("_config0")

    def continues(after: Column) -> Column:
        return after.rlike(CONTINUATION) | _config_line(after)

    streams = []
    for i, (name, envelope, trim, named) in enumerate(_ENVELOPES):
        df = _stage(df, **{f"_{name}": envelope(inner)})
        after = F.element_at(F.col(f"_{name}"), -1)
        own_time = after.rlike(LEVEL_START) if name == "stamp" else F.lit(False)
        follows = after.rlike(STACK_LINE) if name == "cloudwatch" else continues(after)
        df = _stage(df, **{f"_take_{name}": after.isNotNull() & ~own_time
                           & ((F.ltrim(after) if trim else after).rlike(RECORD_START) | follows)})
        take = F.col(f"_take_{name}")
        last = i == len(_ENVELOPES) - 1
        inner_name, config_name = ("inner", "config_line") if last else (f"_inner_{name}", f"_config_{name}")
        df = _stage(df, **{inner_name: F.when(take, F.ltrim(after)).otherwise(inner),
                           config_name: config | (take & _config_line(after))})
        inner, config = F.col(inner_name), F.col(config_name)
        if named:
            streams.append(F.when(take, F.col(f"_{name}")[0]))
    grep = F.col("_grep")
    number_only = grep[0].rlike(r"^\d+$")  # `grep -n`'s line number over one file
    path = F.when(~number_only, grep[0])
    context = grep[1].startswith("-")
    return df.select("*", F.when(context, path).alias("grep_name"),
                     F.when(context, F.concat(path, F.lit("-"), F.nullif(grep[2], F.lit("")))).alias("grep_long_name"),
                     F.when(~context, path).alias("grep_match_name"),
                     F.when(~context, number_only | (grep[1] != ":")).alias("grep_numbered"),
                     F.coalesce(*streams).alias("envelope_stream"),
                     F.coalesce((F.substring(t0, 1, 1).isin("-", "`", "{", ">") & t0.rlike(CUT_MARK)), F.lit(False))
                     .alias("cut_mark"))


def grep_path(by_file: WindowSpec) -> Column:
    """The file grep names before a line (null where none does). A context line's name ending in `-digits` is
    ambiguous (`server.log.2019-10-09-19-[…`): it is that name where the matching lines before it carry no line
    number (no `-n`), else the name without its last `-digits`, which were the line number. Before any matching
    line (a first group's `-B` lines), it is the name with them where they make a rotated file's name: log4j's
    DailyRollingFileAppender's `server.log.yyyy-MM-dd-HH`, logrotate's `dateext` `server.log-yyyyMMdd`. A running
    window over the file's lines (a frame that looks ahead costs Spark the square of a file's lines)."""
    numbered = F.last("grep_numbered", ignorenulls=True).over(by_file.rowsBetween(Window.unboundedPreceding, 0))
    name, long = F.col("grep_name"), F.col("grep_long_name")
    hourly = long.rlike(r"(?:\d{4}-\d{2}-\d{2}-\d{2}|-(?:19|20)\d{6})$")
    return F.coalesce(F.col("grep_match_name"), F.when(long.isNull(), name).when(numbered, name)
                      .when(~numbered, long).when(hourly, long).otherwise(name))


def stream(path: Column) -> Column:
    """The stream a line belongs to where one file holds several: the file grep names (``grep_path``) and the
    service, pod or host an envelope names; null for neither."""
    return F.nullif(F.concat_ws(" ", path, F.col("envelope_stream")), F.lit(""))


def method_boundary(df: DataFrame) -> DataFrame:
    """The same rows, with the Java code Spark generates for what follows in a method of its own. Spark
    inlines the expressions of a stage into one method; past a few thousand variables HotSpot's compilers
    give up on it ("out of virtual registers") and it runs interpreted, several times slower. An explode
    that keeps every column is where Spark starts a new method; this one explodes a one-element array."""
    return df.select("*", F.explode(F.array(F.lit(0))).alias("_boundary")).drop("_boundary")


def _stage(df: DataFrame, **cols: Column) -> DataFrame:
    """Add columns in their own projection. A Column used several times in one expression is evaluated
    as many times (Spark shares subexpressions only outside conditional branches), so every regular
    expression here is computed once into a column that later stages read; the optimizer keeps such
    a projection rather than inline a costly expression twice."""
    return df.select("*", *[c.alias(name) for name, c in cols.items()])


_TS_PATHS = ("$.timestamp", "$['@timestamp']", "$.time", "$.timeMillis", "$.instant.epochSecond")
# The logger (and its line) then ` - ` before the message, no thread first: log4j's tutorial pattern `%d %-5p %c{1}:%L
# - %m` and `%c - %m`. A dotted name, or a short one with its line number; never where the line ends in the default
# layout's ` (logger)`. groups: logger (1 or 2), message (3)
LOGGER_DASH = (r"^(?:([A-Za-z_$][\w$]{0,255}\.[\w.$]{1,511})(?::\d{1,9})?|([A-Za-z_$][\w$]{0,255}):\d{1,9}) - "
               r"(.*)$")
_LOGGER_PATHS = ("$.logger", "$.loggerName", "$.logger_name", "$['log.logger']")


def parse_layout(df: DataFrame, log_timezone: str = "UTC") -> DataFrame:
    """Unwrap envelopes; parse pattern or JSON layouts into ts_ms, level, msg, logger.

    Timestamps written without an offset are in ``log_timezone`` (the zone of the broker's JVM: log4j
    writes local time); ``[,.]`` and the first three fraction digits give the milliseconds."""
    temp = set(df.columns)
    df = method_boundary(_unwrap(df))
    j = F.col("inner")
    is_json = j.startswith("{") & j.rlike(r'^\{\s*["}]')  # not a Jira `{code}` mark or a `{%d}` layout
    level_first = j.startswith("[") & F.substring(j, 2, 1).between("A", "Z")
    df = _stage(df, _g=F.when(~is_json, F.coalesce(groups(j, LAYOUT, 6), F.when(level_first, groups(
        j, LEVEL_FIRST, LEVEL_FIRST_GROUPS)))))
    g = F.col("_g")
    layout = g.isNotNull()
    df = _stage(df, _json=is_json, _layout=layout,
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
    df = _stage(df, json_layout=json_layout,
                _epoch_ms=F.when(json_layout, F.when(jt.rlike(r"^\d{12,15}$"), jt.try_cast("long")).when(
                    jt.rlike(r"^\d{9,11}(?:\.\d{1,9})?$"), (jt.try_cast("double") * 1000).try_cast("long"))),
                _iso=F.when(json_layout, F.regexp_extract(jt, rf"^({_TS})({_OFFSET})?$", 1))
                .when(F.col("_layout"), F.col("_p_ts")),
                _off=F.when(json_layout, F.nullif(F.regexp_extract(jt, rf"^{_TS}({_OFFSET})$", 1), F.lit("")))
                .when(F.col("_layout"), F.col("_p_off")),
                _rest=F.when(rest.endswith("]") & rest.rlike(THREAD_SUFFIX), F.regexp_replace(rest, r" \[[^\[\]]*\]$", ""))
                .when(rest.contains(") - ") & rest.rlike(MDC_SUFFIX), F.regexp_replace(rest, MDC_SUFFIX, ")"))
                .otherwise(rest),
                _pre=F.when(F.col("_layout") & rest.startswith("[") & (F.substring(F.col("_p_ts"), 5, 1) == "/"),
                            groups(rest, LINKEDIN, 2))
                .when(F.col("_layout") & rest.startswith("[") & j.startswith("{"), groups(rest, THREAD_FILE, ["", "$1"]))
                .when(F.col("_layout") & rest.startswith("[") & rest.contains(" - "),
                      groups(rest, THREAD_LOGGER, ["$1$2$3", "$4"]))
                .when(F.col("_layout") & ~(rest.endswith(")") & rest.rlike(DEFAULT_SUFFIX)), F.coalesce(
                    F.when(rest.contains(": "), groups(rest, LOGGER_COLON, ["$1$2", "$3"])),
                    F.when(rest.contains(" - "), groups(rest, LOGGER_DASH, ["$1$2", "$3"])))))
    pre = F.col("_pre")
    df = _stage(df, _pre_logger=F.nullif(pre[0], F.lit("")), _rest2=F.coalesce(pre[1], F.col("_rest")))
    rest = F.col("_rest2")
    iso = F.col("_iso")
    # log4j's own `yyyy-MM-dd HH:mm:ss,SSS` needs no rewriting
    as_is = (F.length(iso) == 23) & (F.substring(iso, 11, 1) == " ") & (F.substring(iso, 20, 1) == ",")
    df = _stage(df, _tail=F.substring_index(rest, " (", -1),
                _norm=F.when(as_is, iso).when(iso != "", F.regexp_replace(F.translate(iso, "T/", " -"),
                                                                        r"[,.](\d{3})\d*$", ",$1")))
    norm, tail, off = F.col("_norm"), F.col("_tail"), F.col("_off")
    has_logger = F.col("_pre").isNull() & rest.endswith(")") & rest.contains(" (") & tail.rlike(LOGGER)
    cut_logger = F.col("_pre").isNull() & ~rest.endswith(")") & rest.contains(" (") & tail.rlike(CUT_LOGGER)
    # read as UTC (the session zone), then moved from the line's zone
    local = F.try_to_timestamp(F.when(as_is | norm.rlike(r",\d{3}$"), norm).otherwise(F.concat(norm, F.lit(",000"))),
                               F.lit("yyyy-MM-dd HH:mm:ss,SSS"))
    df = method_boundary(_stage(df, _local=local, _has_logger=has_logger, _cut_logger=cut_logger))
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
              .otherwise(rest))
        .alias("msg"),
        F.when(F.col("json_layout"), F.col("_j_logger")).when(layout, F.coalesce(F.col("_pre_logger"), F.when(
            has_logger, F.substring_index(head_bytes(tail, F.octet_length(tail) - 1), ":", 1))
            .when(cut_logger, tail))).alias("logger"),
        (F.col("json_layout") | layout).alias("has_layout"),
    )
    keep = [c for c in out.columns if not c.startswith("_") or c in temp]
    return out.select(*keep)


PARTIAL_REST = "rest of a partial line (CRI 'P' flag before it)"


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
        .when(inner.rlike(CONTINUATION) | F.col("config_line"), F.lit("continuation line"))
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
