"""A strict little reader of the OpenMetrics text replicaflow writes (for the tests' own checks)."""

from __future__ import annotations

import re

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+) (\d+\.\d{3})$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse(text: str) -> tuple[list[tuple[str, str]], dict[tuple[str, tuple], list[tuple[int, float]]]]:
    """(families [(name, type)], {(sample name, labels): [(ts_ms, value)]}), series in file order."""
    families: list[tuple[str, str]] = []
    series: dict[tuple[str, tuple], list[tuple[int, float]]] = {}
    lines = text.split("\n")
    assert lines[-1] == "" and lines[-2] == "# EOF"
    for line in lines[:-2]:
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            families.append((name, kind))
            continue
        if line.startswith("# HELP "):
            assert line.split(" ")[2] == families[-1][0]
            continue
        m = SAMPLE.match(line)
        assert m, line
        labels = tuple(LABEL.findall(m.group(2) or ""))
        sec, ms = m.group(4).split(".")
        series.setdefault((m.group(1), labels), []).append((int(sec) * 1000 + int(ms), float(m.group(3))))
    return families, series
