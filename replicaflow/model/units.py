"""Units as operators write them: durations (`100ms`, `30s`, `5m`, `2d`), sizes (`1MiB`, `2GiB`), rates (`5MB/s`),
instants (epoch milliseconds shown as UTC ``2026-01-01 00:00:00``) and counts of things (``1 move``, ``2 moves``).

Sizes follow the SI/IEC convention: `MB` = 10^6 bytes, `MiB` = 2^20 bytes. Parsers raise ValueError
with a short reason; callers add the field path.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime

from replicaflow.errors import quote

_NUM = r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)"  # ASCII digits, as parse_id: `\d` took '٣' (Arabic-Indic 3) as 3
_DURATION_PART = rf"{_NUM}\s*(ms|s|m|h|d)"
_DURATION_RE = re.compile(rf"^\s*(?:{_DURATION_PART}\s*)+$")
_DURATION_PART_RE = re.compile(_DURATION_PART)
_BYTES_RE = re.compile(rf"^\s*{_NUM}\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)?\s*$")
_RATE_RE = re.compile(rf"^\s*{_NUM}\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)?\s*/\s*s\s*$")
DURATION_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
BYTES = {"B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
         "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}
INT64_MAX = 2**63 - 1
INT32_MAX = 2**31 - 1  # Java's int: Kafka's broker, partition and size fields, Spark's thread count
_ID_RE = re.compile(r"[0-9]{1,10}")


def parse_id(text: str) -> int | None:
    """A broker or partition id as Kafka writes one (ASCII digits, at most Java's int), or None.

    ``str.isdigit`` also takes '²', which ``int`` refuses, and ``int`` refuses more than 4,300 digits: a check
    by either let a traceback through."""
    text = text.strip()
    return int(text) if _ID_RE.fullmatch(text) and int(text) <= INT32_MAX else None


def _bounded(value: float, text, what: str) -> float:
    """Converted values are stored as int64 (ms, bytes, bytes/s): NaN, infinity or beyond int64 is refused."""
    if not math.isfinite(value) or abs(value) > INT64_MAX:
        raise ValueError(f"expected {what} that fits in 64 bits, found {quote(text)}")
    return value


def parse_duration_ms(text) -> int:
    """`100ms`, `30s`, `1.5s`, `5m`, `1h`, `2d`, `1h30m`, `3m30s` → milliseconds; a bare number only for 0."""
    if isinstance(text, bool):
        raise ValueError(f"expected a duration like '30s', found {quote(text)}")
    if isinstance(text, (int, float)):
        if text == 0:
            return 0
        raise ValueError(f"expected a duration with a unit like '30s' or '100ms', found {quote(text)}")
    if str(text).strip() == "0":
        return 0
    if not _DURATION_RE.match(str(text)):
        raise ValueError(f"expected a duration like '30s' or '100ms', found {quote(text)}")
    total = _bounded(sum(float(num) * DURATION_MS[unit] for num, unit in _DURATION_PART_RE.findall(str(text))),
                     text, "a duration")
    if abs(total - round(total)) > 1e-6:  # durations are whole ms: 'tick: 1.5ms' ran at 2ms, '0.4ms' was "not positive"
        raise ValueError(f"expected a duration of whole milliseconds, found {quote(text)}")
    return int(round(total))


def parse_bytes(text) -> int:
    """`500B`, `1KB`, `1KiB`, `5MB`, `2GiB`, `1.5GB`; a bare integer is bytes."""
    if isinstance(text, bool):
        raise ValueError(f"expected a size like '1MiB', found {quote(text)}")
    if isinstance(text, int):
        if text < 0:
            raise ValueError(f"expected a non-negative size, found {quote(text)}")
        return int(_bounded(text, text, "a size"))
    m = _BYTES_RE.match(str(text))
    if not m:
        raise ValueError(f"expected a size like '1MiB' or '500MB', found {quote(text)}")
    total = _bounded(float(m.group(1)) * BYTES[m.group(2) or "B"], text, "a size")
    if abs(total - round(total)) > max(1e-6, total * 1e-15):  # sizes are whole bytes: '1.5B' was read as 2
        raise ValueError(f"expected a size of whole bytes, found {quote(text)} ({total:g} bytes)")
    return int(round(total))


def parse_rate_bps(text) -> float:
    """`5MB/s`, `100KiB/s`, `1GB/s`, `500B/s`; a bare number is bytes/s."""
    if isinstance(text, bool):
        raise ValueError(f"expected a rate like '5MB/s', found {quote(text)}")
    if isinstance(text, (int, float)):
        if text < 0:
            raise ValueError(f"expected a non-negative rate, found {quote(text)}")
        return _bounded(float(text), text, "a rate")
    m = _RATE_RE.match(str(text))
    if not m:
        raise ValueError(f"expected a rate like '5MB/s', found {quote(text)}")
    return _bounded(float(m.group(1)) * BYTES[m.group(2) or "B"], text, "a rate")


def _short(value: float) -> str:
    """At most 3 significant digits, no trailing zeros: 5 → '5', 1.5 → '1.5', 12.34 → '12.3'."""
    if value == 0:
        return "0"
    digits = max(0, 2 - int(math.floor(math.log10(abs(value)))))
    text = f"{value:.{digits}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def format_bytes(n: float) -> str:
    """SI decimal, 3 significant digits: 5000000 → '5MB', 1536 → '1.54KB', 512 → '512B', 999999 → '1MB'."""
    if not math.isfinite(n):
        return "n/a"
    for unit, size in (("TB", 10**12), ("GB", 10**9), ("MB", 10**6), ("KB", 10**3)):
        if abs(n) / size >= 0.9995:  # would round to at least 1.00 of this unit
            return f"{_short(n / size)}{unit}"
    return f"{_short(float(n))}B"


def format_rate(bps: float) -> str:
    """5e6 → '5MB/s'; infinity → 'unlimited'."""
    if bps is None or math.isinf(bps):
        return "unlimited"
    if math.isnan(bps):
        return "n/a"
    return format_bytes(bps) + "/s"


def format_duration(ms: float) -> str:
    """100 → '100ms', 12500 → '12.5s', 210000 → '3m30s', 5400000 → '1h30m', 2500020000 → '28d22h27m': minutes to the
    second, hours to the minute, and past a day days too, still to the minute (as ``retention.ms`` reads in days);
    zero parts are left out ('2d', '1d30m'), and each reads back through :func:`parse_duration_ms`."""
    ms = float(ms)
    if not math.isfinite(ms):
        return "never" if ms > 0 else "n/a"
    if abs(ms) < 999.5:
        return f"{_short(ms)}ms"
    if abs(ms) < 59_950:
        return f"{_short(ms / 1000)}s"
    sign = "-" if ms < 0 else ""  # divmod of a negative read -5400000 as '-2h30m'
    if abs(ms) < 3_599_500:
        minutes, seconds = divmod(int(round(abs(ms) / 1000)), 60)
        return f"{sign}{minutes}m" + (f"{seconds}s" if seconds else "")
    hours, minutes = divmod(int(round(abs(ms) / 60_000)), 60)
    days, hours = divmod(hours, 24)
    return sign + "".join(f"{n}{unit}" for n, unit in ((days, "d"), (hours, "h"), (minutes, "m")) if n)


def format_minutes(minutes: float) -> str:
    """Minutes (the summary's partition-minutes, summed over partitions) as a duration: 0.5 → '30s', 90 → '1h30m'."""
    return format_duration(float(minutes) * 60_000) if minutes else "0s"


def format_ts_ms(ts_ms: int) -> str:
    """Epoch milliseconds as UTC to the second: 1767225600000 → '2026-01-01 00:00:00'."""
    return datetime.fromtimestamp(int(ts_ms) / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S")


def plural(n: int, noun: str, many: str | None = None) -> str:
    """``noun`` as it reads after the count ``n``: 'move' for 1, 'moves' (or ``many``) otherwise, 0 included."""
    return noun if n == 1 else many or noun + "s"


def counted(n: int, noun: str, many: str | None = None) -> str:
    """A count and its noun, with thousands separators: 1 → '1 move', 2 → '2 moves', 1500 → '1,500 moves'.
    A console line read '1 move(s)'."""
    return f"{n:,} {plural(n, noun, many)}"
