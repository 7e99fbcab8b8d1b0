"""What wraps a broker's own log line: container runtimes, log shippers, syslog, grep, pdsh and pastes.

``unwrap`` takes those envelopes off before ``log_layouts.parse_layout`` reads the record's layout. Every
pattern is free of repeated groups and runs only on lines holding a character it needs at a fixed place,
so a hostile line costs linear time. See docs/logs.md (envelopes).
"""

from __future__ import annotations

from collections.abc import Callable

from pyspark.sql import Column, DataFrame, Window, WindowSpec
from pyspark.sql import functions as F

from replicaflow.ingest.log_layouts import BARE_DATE, CONTINUATION, OFFSET, RECORD_START, STACK_LINE
from replicaflow.ingest.log_text import byte_at, groups, stage

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
_GREP_REST = (r"\[\d{4}-\d{2}-\d{2}[ T].*|(?:" + BARE_DATE + r").*|\s+at [\w$.<>/@-]{1,1024}+\(.*|"
              r"\s*\.\.\. \d+ (?:more|common frames omitted).*|\s*(?:Caused by|Suppressed): .*|"
              r"[A-Za-z_$][\w$.]{0,1024}+(?<=Exception|Error|Throwable)(?::.*)?")
GREP = rf"^([^\s\[|{{]{{1,4096}}?)(:(?:\d{{1,10}}:)?|-(?:(\d{{1,10}})-)?)({_GREP_REST})$"
# A line that says lines were left out between those around it: grep's `--` between the groups of context it prints,
# a paste's code-block mark (Jira's `{code}`, `{code:java}`, `{noformat}`, `{quote}`, `{panel}`; a Markdown fence,
# ```` ```log ````), alone on its line
CUT_MARK = (r"^(?:>[ >]{0,8})?\s{0,8}(?:--|`{3,}[\w+.-]{0,32}|\{(?:code|noformat|quote|panel)(?::[^{}]{0,200})?\})"
            r"\s*$")
CRI = rf"^(\d{{4}}-\d{{2}}-\d{{2}}T\d{{2}}:\d{{2}}:\d{{2}}(?:\.\d+)?{OFFSET}) (stdout|stderr) ([FP]) ?(.*)$"
# pdsh and clush, a command run on every broker host at once (`pdsh -w kafka[1-6] grep ... server.log`):
# `<host>: <line>`. A host name as DNS writes it, never an exception's class or `Suppressed`
# (`java.util.concurrent.ExecutionException: org.apache.kafka.common.errors.TimeoutException: ...` is one
# stack-trace line). groups: the host, the line
PDSH = r"^([A-Za-z0-9][\w.-]{0,252}+)(?<!Exception|Error|Throwable|Suppressed): (.*)$"
# A Java service wrapper's log file (Kafka run as a Windows or Unix service), which writes each line the JVM prints
# behind the wrapper's own fields, `|`-separated, its time last: YAJSW's `L|P|N|T|M` (`INFO|5652/0|Service
# org.apache.kafka|22-01-19 10:44:46|[2022-01-19 10:44:46,289] ERROR ...`, a yy-MM-dd time), the Tanuki wrapper's
# `L|P|T|M` (`INFO   | jvm 1    | 2022/01/19 10:44:46 | [2022-...`). The level is the wrapper's (stdout), not the
# record's. groups: the line
WRAPPER = (r"^[A-Z]{3,7} *\| ?[^|]{1,64}\|(?:[^|]{1,256}\|)? ?(?:\d{2}|\d{4})[-/]\d{2}[-/]\d{2} "
           r"\d{2}:\d{2}:\d{2}(?:[.,]\d{1,3})? ?\| ?(.*)$")
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
CLOUDWATCH = (rf"^\d{{4}}-\d{{2}}-\d{{2}}T\d{{2}}:\d{{2}}:\d{{2}}(?:\.\d{{1,9}})?{OFFSET} "
              rf"{_NOT_LEVEL}([^\s:*\[]{{1,512}}) (.*)$")
# `docker logs -t`, `docker compose logs -t`, `kubectl logs --timestamps`: the runtime's RFC 3339 time, a space,
# the line (taken off only before a bracketed or ISO timestamp or a JSON record: the broker's own layout follows)
STAMP = rf"^\d{{4}}-\d{{2}}-\d{{2}}T\d{{2}}:\d{{2}}:\d{{2}}(?:\.\d{{1,9}})?{OFFSET} (.*)$"
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
# journald/syslog: `Jan 02 03:04:05 host ident[pid]: ` (journalctl's `short`; `short-precise` adds microseconds),
# RFC 5424-ish `2024-01-02T03:04:05.1+00:00 host ident[pid]: ` (rsyslog's RSYSLOG_FileFormat, journalctl's `short-iso`
# `2024-01-02T03:04:05+0000` and `short-iso-precise`), journalctl's `short-full` `Tue 2024-01-02 03:04:05 UTC` (the
# weekday in English, the zone's abbreviation, `+03` where tzdata has none; no fraction) and `short-unix`
# `1704164645.123456` (seconds since the epoch, microseconds). Tried before the runtime's time (`stamp`) and
# CloudWatch's, which would take the ISO time off alone: the rest ends in the record's ` (logger)`, so it read as a
# message's tail
SYSLOG = (rf"^(?:[A-Z][a-z]{{2}} (?:[ \d]?\d \d{{2}}:\d{{2}}:\d{{2}}(?:\.\d{{1,9}})?|\d{{4}}-\d{{2}}-\d{{2}} \d{{2}}:\d{{2}}:\d{{2}} "
          rf"(?:[A-Za-z]{{1,6}}|[+-]\d{{2}}(?:\d{{2}})?))|\d{{4}}-\d{{2}}-\d{{2}}T\d{{2}}:\d{{2}}:\d{{2}}(?:\.\d+)?{OFFSET}|"
          rf"\d{{10}}\.\d{{6}}) {_NOT_LEVEL}([\w.:-]{{1,255}}) [\w./@-]{{1,255}}(?:\[\d{{1,10}}\])?: (.*)$")

# What a log pasted into Markdown (an issue, a wiki, a blog) puts before its lines: a quote's `> `, a list item's
# `4. ` or `- `, inline code's backticks (a fence's glued to the first line; at the end, with a hard break's `\`
# after it), and a code block's mark glued to a line's start or end (Jira's `{noformat}[2019-…`, a fence's ```` ``` ````
# after the last). Taken off before a record (with the envelopes and grep's file name below behind it) or a
# stack-trace line only. groups: the line
PASTE = (r"^(?:>[ >]{0,8})?(?:\d{1,4}\.|[-*+])?\s{0,8}`{0,3}(?:\{(?:code|noformat|quote|panel)(?::[^{}]{0,200})?\})?"
         r"(.*?)(?:`{3}|`\\?|\{(?:code|noformat|quote|panel)\})?\s*$")
PASTED = (r"^(?:(?:[A-Za-z0-9][\w.-]{0,127} *\| ?|\[pod/[^\s\[\]]{1,320}\] |"
          r"[^\s\[|{]{1,4096}?(?::(?:\d{1,10}:)?|-(?:\d{1,10}-)?))?(?:\[\d{4}-|" + BARE_DATE + r")|"
          r"\s*at [\w$.<>/@-]{1,1024}\(|(?:Caused by: )?[A-Za-z_$][\w$.]{0,1024}(?:Exception|Error)(?::|$))")
# A line of the config dump Kafka writes at start-up (AbstractConfig.logAll: `KafkaConfig values: ` then a line
# `\t<name> = <value>` per setting, then the layout's ` (kafka.server.KafkaConfig)`), on the text an envelope left
# before leading whitespace is dropped: the indent is what tells it from a message. A tab as Kafka writes it, or
# two or more spaces where a bug report or a blog pasted the log and its tabs became spaces.
CONFIG_LINE = r"^(?:\t| {2,64})[A-Za-z][\w.-]{0,255} =(?: .{0,1048576})?$"


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
    ("wrapper", lambda inner: F.when(F.substring(inner, 1, 1).between("A", "Z") & inner.contains("|"),
                                     groups(inner, WRAPPER, 1)), True, False),
    ("compose", lambda inner: F.when(inner.contains("|"), groups(inner, COMPOSE, 2)), True, True),
    ("stern", lambda inner: F.when(F.substring(inner, 1, 1).between("a", "z") & inner.contains(" "),
                                   groups(inner, STERN, 2)), False, True),
    ("kubectl", lambda inner: F.when(inner.startswith("[pod/"), groups(inner, KUBECTL, 2)), False, True),
    ("syslog", lambda inner: F.when(byte_at(inner, 4, " ") | byte_at(inner, 11, "T") | byte_at(inner, 11, "."),
                                    groups(inner, SYSLOG, 2)), True, True),
    ("cloudwatch", lambda inner: F.when(byte_at(inner, 11, "T"), groups(inner, CLOUDWATCH, 2)), False, True),
    ("stamp", lambda inner: F.when(byte_at(inner, 11, "T"), groups(inner, STAMP, 1)), False, False),
)


def _json_envelope(line: Column) -> Column:
    """The broker's line a JSON envelope holds: docker json-file's `log` (a string: a log shipper's ECS event has a
    `log` object, `{"offset":…,"file":{…}}`, which is no line), journald's `MESSAGE` (`journalctl -o json`), or a
    shipper's `message` where it is a whole record (Filebeat, Logstash and Fluent Bit ship the line as read:
    `{"@timestamp":…,"message":"[2024-01-02 03:04:05,678] INFO … (kafka.cluster.Partition)",…}`), its first line
    where a multiline setting joined a stack trace on. A log4j2 JSON layout's `message` is the bare message (no
    timestamp before it): that record is read by ``log_layouts.parse_layout``. Until 2026-12-07 the last two were
    `unreadable JSON log record` rejects."""
    message = F.get_json_object(line, "$.message")
    return F.coalesce(
        F.when(line.rlike(r'"log"\s*:\s*"'), F.get_json_object(line, "$.log")),
        F.when(line.contains('"MESSAGE"'), F.get_json_object(line, "$.MESSAGE")),
        F.when(~message.startswith("{") & message.rlike(RECORD_START), F.substring_index(message, "\n", 1)))


def unwrap(df: DataFrame) -> DataFrame:
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
    df = stage(df, _plain=F.when(raw.contains("\x1b"), F.regexp_replace(raw, ANSI_COLOR, "")).otherwise(raw))
    df = stage(df, _trimmed0=F.ltrim(plain))
    t0 = F.col("_trimmed0")
    df = stage(df, _pasted=F.when(F.substring(t0, 1, 1).isin(">", "`", "-", "*", "+", "{") | byte_at(t0, 2, ".")
                                   | byte_at(t0, 3, ".") | t0.endswith("}") | t0.endswith("`"),
                                   groups(t0, PASTE, 1)[0]))
    pasted = F.col("_pasted")
    df = stage(df, _trimmed=F.when((pasted != t0) & pasted.rlike(PASTED), pasted).otherwise(t0))
    df = stage(df, _grep=F.when(~trimmed.startswith("[") & (trimmed.contains(":") | trimmed.contains("-")),
                                 groups(trimmed, GREP, 4)))
    df = stage(df, _line=F.coalesce(F.col("_grep")[3], trimmed))
    df = stage(df, _cri=F.when(byte_at(line, 11, "T"), groups(line, CRI, 4)),
                _docker=F.when(line.startswith("{"), _json_envelope(line)))
    cri, docker = F.col("_cri"), F.col("_docker")
    payload = F.when(cri.isNotNull(), cri[3]).when(docker.isNotNull(), F.regexp_replace(docker, r"\r?\n$", ""))
    df = stage(df, _inner0=F.ltrim(F.coalesce(payload, line)), _config0=_config_line(F.coalesce(payload, plain)),
                cri_flag=cri[2])
    inner, config = F.col("_inner0"), F.col("_config0")

    def continues(after: Column) -> Column:
        return after.rlike(CONTINUATION) | _config_line(after)

    streams = []
    for i, (name, envelope, trim, named) in enumerate(_ENVELOPES):
        df = stage(df, **{f"_{name}": envelope(inner)})
        after = F.element_at(F.col(f"_{name}"), -1)
        own_time = after.rlike(LEVEL_START) if name == "stamp" else F.lit(False)
        follows = after.rlike(STACK_LINE) if name == "cloudwatch" else continues(after)
        if name == "wrapper":  # the wrapper writes the JVM's empty lines too (a blank between a record and its trace)
            follows = follows | (F.trim(after) == "")
        df = stage(df, **{f"_take_{name}": after.isNotNull() & ~own_time
                           & ((F.ltrim(after) if trim else after).rlike(RECORD_START) | follows)})
        take = F.col(f"_take_{name}")
        last = i == len(_ENVELOPES) - 1
        inner_name, config_name = ("inner", "config_line") if last else (f"_inner_{name}", f"_config_{name}")
        df = stage(df, **{inner_name: F.when(take, F.ltrim(after)).otherwise(inner),
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
