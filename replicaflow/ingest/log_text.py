"""The text of broker log files as Spark rows, and the Column helpers every reading step shares.

Files are decoded (UTF-8, UTF-16) and split into lines here; every line is cut to ``MAX_LINE_CHARS``
before any regular expression sees it. See docs/logs.md.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

# A line longer than this is rejected unparsed (a fetcher line of ~20,000 partitions still fits).
MAX_LINE_CHARS = 1 << 20


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
    df = stage(exploded, _cut=F.when(long, F.substring(line, 1, MAX_LINE_CHARS + 1)).otherwise(line))
    cut = F.col("_cut")
    df = stage(df, _raw=F.when(cut.endswith("\r"), head_bytes(cut, F.octet_length(cut) - 1)).otherwise(cut))
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


def method_boundary(df: DataFrame) -> DataFrame:
    """The same rows, with the Java code Spark generates for what follows in a method of its own. Spark
    inlines the expressions of a stage into one method; past a few thousand variables HotSpot's compilers
    give up on it ("out of virtual registers") and it runs interpreted, several times slower. An explode
    that keeps every column is where Spark starts a new method; this one explodes a one-element array."""
    return df.select("*", F.explode(F.array(F.lit(0))).alias("_boundary")).drop("_boundary")


def stage(df: DataFrame, **cols: Column) -> DataFrame:
    """Add columns in their own projection. A Column used several times in one expression is evaluated
    as many times (Spark shares subexpressions only outside conditional branches), so every regular
    expression here is computed once into a column that later stages read; the optimizer keeps such
    a projection rather than inline a costly expression twice."""
    return df.select("*", *[c.alias(name) for name, c in cols.items()])


def id_list(col: Column, strip: str = r"[^\d,]") -> Column:
    """A comma-separated list of broker ids as array<int>, once what matches ``strip`` is removed: by default
    '1,2,3', '1, 2, 3', '[1, 2]', 'List(1, 2)' -> [1, 2, 3]; '' or '[]' -> []; null -> null. An id that is
    not a number after stripping becomes a null element."""
    return F.array_remove(F.split(F.regexp_replace(col, strip, ""), ","), "").try_cast("array<int>")
