"""Units as operators write them: every unit, round trips through the formatters, and rejections."""

from __future__ import annotations

import math

import pytest

from replicaflow.model.units import (
    counted,
    format_bytes,
    format_duration,
    format_rate,
    format_ts_ms,
    parse_bytes,
    parse_duration_ms,
    parse_rate_bps,
    plural,
)


@pytest.mark.parametrize(("text", "ms"), [
    ("100ms", 100), ("30s", 30_000), ("5m", 300_000), ("1h", 3_600_000), ("1.5s", 1_500), ("2d", 172_800_000),
    ("30 s", 30_000), (" 5m ", 300_000), ("3m30s", 210_000), ("1h30m", 5_400_000), ("0", 0), (0, 0), (0.0, 0),
    ("0ms", 0), (".5s", 500),
])
def test_parse_duration(text, ms):
    assert parse_duration_ms(text) == ms


@pytest.mark.parametrize("text", ["-1s", "5", 5, 1.5, "abc", "1x", "", "s", "1.5.2s", True, "30 seconds", "٣h", "1٣s"])
def test_parse_duration_rejects(text):
    with pytest.raises(ValueError, match="expected a duration"):
        parse_duration_ms(text)


@pytest.mark.parametrize("text", ["1.5ms", "0.4ms", "1.0001s", "150.5ms", "2.5ms"])
def test_a_duration_of_a_fraction_of_a_millisecond_is_refused(text):
    """Durations are stored in whole ms: '1.5ms' was rounded to 2 (a tick of 1.5ms ran at 2ms), '0.4ms' to 0."""
    with pytest.raises(ValueError, match=r"expected a duration of whole milliseconds, found '"):
        parse_duration_ms(text)
    assert parse_duration_ms("1.1s") == 1_100 and parse_duration_ms("0.1s0.2s") == 300  # float error is no fraction


@pytest.mark.parametrize(("text", "n"), [
    ("500B", 500), ("1KB", 1000), ("1KiB", 1024), ("5MB", 5_000_000), ("1MiB", 1_048_576),
    ("2GiB", 2 * 2**30), ("1.5GB", 1_500_000_000), ("1TB", 10**12), ("1TiB", 2**40), (4096, 4096),
    ("4096", 4096), ("10 MB", 10_000_000), (0, 0),
])
def test_parse_bytes(text, n):
    assert parse_bytes(text) == n


@pytest.mark.parametrize("text", ["-1MB", -5, "5XB", "MB", "1mb", "", True, "5MB/s", "٣MB"])
def test_parse_bytes_rejects(text):
    with pytest.raises(ValueError, match="size"):
        parse_bytes(text)


@pytest.mark.parametrize(("text", "bytes_"), [("1.5B", "1.5"), ("0.4", "0.4"), ("1.3KiB", "1331.2"),
                                              ("0.0001KB", "0.1")])
def test_a_size_of_part_of_a_byte_is_refused(text, bytes_):
    """Sizes are whole bytes, as durations are whole milliseconds: `1.5B` was read as 2 bytes, a third more."""
    with pytest.raises(ValueError, match=rf"expected a size of whole bytes, found '{text}' \({bytes_} bytes\)"):
        parse_bytes(text)
    assert parse_bytes("1.25KiB") == 1280 and parse_bytes("0.1KB") == 100 and parse_bytes("2.000001GB") == 2_000_001_000


@pytest.mark.parametrize(("text", "bps"), [
    ("5MB/s", 5e6), ("100KiB/s", 102_400.0), ("1GB/s", 1e9), ("500B/s", 500.0), ("1.5MB/s", 1.5e6),
    ("2MiB / s", 2 * 1_048_576.0), (1000, 1000.0), (12.5, 12.5), ("0B/s", 0.0), ("1000/s", 1000.0),
])
def test_parse_rate(text, bps):
    assert parse_rate_bps(text) == bps


@pytest.mark.parametrize("text", ["-5MB/s", -1, "5MB", "5MBs", "fast", "", True, "5MB/m", "٣MB/s", "1.٣MB/s"])
def test_parse_rate_rejects(text):
    with pytest.raises(ValueError, match="rate"):
        parse_rate_bps(text)


@pytest.mark.parametrize(("n", "text"), [
    (5_000_000, "5MB"), (1_500_000_000, "1.5GB"), (512, "512B"), (0, "0B"), (1536, "1.54KB"),
    (999, "999B"), (1000, "1KB"), (999_999, "1MB"), (999_400, "999KB"), (123_456_789, "123MB"), (12_345_678, "12.3MB"), (2 * 10**12, "2TB"),
])
def test_format_bytes(n, text):
    assert format_bytes(n) == text


@pytest.mark.parametrize(("bps", "text"), [(5e6, "5MB/s"), (math.inf, "unlimited"), (500.0, "500B/s"),
                                           (2.5e7, "25MB/s")])
def test_format_rate(bps, text):
    assert format_rate(bps) == text


@pytest.mark.parametrize(("ms", "text"), [
    (100, "100ms"), (30_000, "30s"), (300_000, "5m"), (5_400_000, "1h30m"), (12_500, "12.5s"),
    (3_600_000, "1h"), (210_000, "3m30s"), (0, "0ms"), (999.7, "1s"), (59_999, "1m"), (3_599_999, "1h"),
    (90_400, "1m30s"), (7_230_000, "2h"), (7_290_000, "2h2m"),
])
def test_format_duration(ms, text):
    assert format_duration(ms) == text


@pytest.mark.parametrize(("ms", "text"), [
    (694 * 3_600_000 + 27 * 60_000, "28d22h27m"), (86_400_000, "1d"), (86_340_000, "23h59m"),
    (86_369_999, "23h59m"), (86_370_000, "1d"), (88_200_000, "1d30m"), (90_000_000, "1d1h"),
    (7 * 86_400_000 + 29_999, "7d"), (7 * 86_400_000 + 45_000, "7d1m"), (-5_400_000, "-1h30m"), (-210_000, "-3m30s"),
])
def test_format_duration_past_a_day_writes_days_to_the_minute(ms, text):
    """Past 24 h (after rounding to the minute, as hours are) days lead: '694h27m' read as a count to divide by 24.
    Zero parts are left out, as '1h' and '3m' leave theirs; a negative is the positive with its sign."""
    assert format_duration(ms) == text


@pytest.mark.parametrize(("ts_ms", "text"), [
    (1_767_225_600_000, "2026-01-01 00:00:00"), (1_767_225_659_999, "2026-01-01 00:00:59"), (0, "1970-01-01 00:00:00"),
])
def test_format_ts_ms_is_utc_to_the_second(ts_ms, text):
    assert format_ts_ms(ts_ms) == text


@pytest.mark.parametrize("ms", [100, 1_500, 30_000, 210_000, 300_000, 3_600_000, 5_400_000, 12_500, 86_400_000,
                                88_200_000, 90_000_000, 2_500_020_000, 30 * 86_400_000])
def test_duration_round_trip(ms):
    assert parse_duration_ms(format_duration(ms)) == ms


@pytest.mark.parametrize("n", [512, 1000, 5_000_000, 1_500_000_000, 250_000, 10**12])
def test_bytes_round_trip(n):
    assert parse_bytes(format_bytes(n)) == n
    assert parse_rate_bps(format_rate(float(n))) == float(n)


def test_formatters_tolerate_non_finite():
    assert (format_bytes(math.nan), format_duration(math.inf), format_rate(None)) == ("n/a", "never", "unlimited")
    assert (format_duration(math.nan), format_rate(math.nan), format_bytes(-1500)) == ("n/a", "n/a", "-1.5KB")


def test_error_quote_bounds_and_escapes_values():
    """Error sentences quote at most 100 characters of a value and never pass control bytes through."""
    from replicaflow.errors import quote

    assert quote("orders") == "'orders'"
    assert quote("a" * 250) == "'" + "a" * 100 + "'… (150 more characters)"
    assert quote("x\x00y\n") == "'x\\x00y\\n'"
    assert quote(3.5) == "'3.5'"


@pytest.mark.parametrize(("n", "noun", "many", "text"), [
    (1, "move", None, "1 move"), (2, "move", None, "2 moves"), (0, "replica", None, "0 replicas"),
    (1_500, "partition", None, "1,500 partitions"), (1, "log file", None, "1 log file"),
    (3, "leader election", None, "3 leader elections"), (2, "entry", "entries", "2 entries"),
])
def test_counted_writes_the_singular_for_one_and_the_plural_otherwise(n, noun, many, text):
    """One form per count, never 'move(s)': English takes the plural for 0 as for 2."""
    assert counted(n, noun, many) == text
    assert plural(n, noun, many) == text.split(" ", 1)[1]
