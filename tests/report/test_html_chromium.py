"""report.html in headless Chromium at 800, 1000 and 1400 px: it renders offline, every chart has data
points, nothing overlaps, no console error, and text from logs stays text.

The page records what it drew and where each chart and table landed (``#render-status``, written by
report.js once every figure and table is built); ``--dump-dom`` hands that back. Screenshots of every
width are kept under the test's tmp dir (``screenshots/<report>-<width>.png``) for a person to look at.
"""

from __future__ import annotations

import json
import re
import subprocess
from itertools import combinations
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from replicaflow.model.metrics import jmx
from replicaflow.report.build import build_report
from tests.conftest import require_tool
from tests.report.tiny import T0, write_analysis

WIDTHS = (800, 1000, 1400)
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0",
         "--virtual-time-budget=60000", "--hide-scrollbars", "--no-first-run", "--disable-extensions"]


def _chromium(*args: str, tmp: Path) -> subprocess.CompletedProcess:
    return subprocess.run([require_tool("chromium", "chromium"), *FLAGS, f"--user-data-dir={tmp / 'profile'}", *args],
                          capture_output=True, text=True, timeout=240)


def _status(dom: str) -> dict:
    m = re.search(r'<pre id="render-status"[^>]*data-done="1"[^>]*>(.*?)</pre>', dom, re.S)
    assert m, "the report's script never finished rendering"
    return json.loads(m.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">")
                      .replace("&amp;", "&"))


def render_status(html: Path, tmp: Path, width: int = 1400) -> tuple[dict, str, str]:
    """(the page's own record of what it drew, where, and any error; the DOM; Chromium's stderr)."""
    dom = _chromium("--dump-dom", f"--window-size={width},2000", html.resolve().as_uri(), tmp=tmp)
    assert dom.returncode == 0, dom.stderr[-3000:]
    return _status(dom.stdout), dom.stdout, dom.stderr


def screenshot(html: Path, png: Path, width: int, tmp: Path) -> bytes:
    png.parent.mkdir(parents=True, exist_ok=True)
    shot = _chromium(f"--screenshot={png}", f"--window-size={width},2400", html.resolve().as_uri(), tmp=tmp)
    assert shot.returncode == 0, shot.stderr[-3000:]
    return png.read_bytes()


def console_errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "CONSOLE" in line and "rror" in line]


def _inside(inner: dict, outer: dict, slack: float = 1.0) -> bool:
    return inner["left"] >= outer["left"] - slack and inner["right"] <= outer["right"] + slack


def _overlap(a: dict, b: dict) -> bool:
    return (min(a["right"], b["right"]) - max(a["left"], b["left"]) > 1
            and min(a["bottom"], b["bottom"]) - max(a["top"], b["top"]) > 1)


def layout_problems(status: dict) -> list[str]:
    """Every chart/table that crosses its column or the viewport, every pair of charts that overlap, a page
    wider than the window, and cut timestamps."""
    lay = status["layout"]
    problems = []
    view = {"left": 0, "right": lay["viewport"]}
    for it in lay["items"]:
        if it["col"] is None:
            problems.append(f"{it['id']}: in no column")
            continue
        for what, box in (("box", it["box"]), ("plot", it["svg"])):
            if box is not None and not _inside(box, it["col"]):
                problems.append(f"{it['id']}: {what} {box['left']:.0f}–{box['right']:.0f} crosses its column "
                                f"{it['col']['left']:.0f}–{it['col']['right']:.0f}")
            if box is not None and not _inside(box, view):
                problems.append(f"{it['id']}: {what} crosses the viewport ({lay['viewport']} px)")
    charts = [it for it in lay["items"] if it["kind"] == "chart"]
    problems += [f"{a['id']} overlaps {b['id']}" for a, b in combinations(charts, 2) if _overlap(a["box"], b["box"])]
    problems += [f"{it['id']}: two event labels overlap at {a['left']:.0f} and {b['left']:.0f} px" for it in charts
                 for a, b in combinations(it["labels"], 2) if _overlap(a, b)]
    problems += [f"{it['id']}: an event label at {a['left']:.0f} px overlaps the title" for it in charts
                 for a in it["labels"] if it["title"] and _overlap(a, it["title"])]
    if lay["scroll_width"] > lay["viewport"]:
        problems.append(f"the page is {lay['scroll_width']} px wide in a {lay['viewport']} px window")
    if lay["ts_cut"]:
        problems.append(f"{lay['ts_cut']} of {lay['ts_cells']} timestamps cut")
    return problems


def check_report(html: Path, name: str, tmp: Path) -> dict[int, dict]:
    """Render ``html`` at every width: screenshots, and every assertion of this module; the statuses by width."""
    text = html.read_text()
    ids = set(re.findall(r'<div class="chart" id="([^"]+)"', text))
    tables = set(re.findall(r'<div class="grid-table" id="([^"]+)"', text))
    out = {}
    for width in WIDTHS:
        status, dom, stderr = render_status(html, tmp, width)
        assert status["done"] and status["errors"] == [], status["errors"]
        assert not console_errors(stderr), console_errors(stderr)
        assert ids and set(status["charts"]) == ids
        empty = {k: v for k, v in status["charts"].items() if v <= 0}
        assert not empty, f"charts without data points: {empty}"
        assert dom.count('class="main-svg"') >= len(ids)          # Plotly drew SVG for each chart
        assert set(status["tables"]) == tables and all(n > 0 for n in status["tables"].values())
        problems = layout_problems(status)
        assert not problems, f"{name} at {width} px:\n" + "\n".join(problems[:20])
        data = screenshot(html, tmp / "screenshots" / f"{name}-{width}.png", width, tmp)
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        assert int.from_bytes(data[16:20], "big") == width
        assert len(data) > 50_000          # a blank page compresses to a few KB; charts and tables do not
        out[width] = status
    return out


def test_single_cluster_report_at_three_widths(built_alpha, tmp_path_factory):
    root, _ = built_alpha
    statuses = check_report(root / "report.html", "single", tmp_path_factory.mktemp("chromium-single"))
    charts = statuses[1400]["charts"]
    assert {"c0-alpha-health", "c0-alpha-urp", "c0-alpha-traffic-ReassignmentBytesInPerSec"} <= set(charts)
    assert statuses[1400]["layout"]["ts_cells"] > 0


def test_two_columns_wide_one_column_narrow(built_alpha, tmp_path_factory):
    """Side-by-side charts share a row at 1400 px and stack below 1100 px."""
    root, _ = built_alpha
    tmp = tmp_path_factory.mktemp("chromium-cols")
    for width, side_by_side in ((1400, True), (1000, False), (800, False)):
        items = {it["id"]: it["box"] for it in render_status(root / "report.html", tmp, width)[0]["layout"]["items"]}
        health, urp = items["c0-alpha-health"], items["c0-alpha-urp"]
        assert (health["top"] == urp["top"] and health["right"] < urp["left"]) is side_by_side, width


def test_event_labels_close_in_time_never_overlap(tmp_path):
    """A rolling restart: eight broker events 12 s apart on a 5-minute axis. Each keeps its dotted line; the
    labels that do not fit beside the others are counted by the label before them (``b1 down +2``), whose
    hover lists them, at every width (figures._marker_shapes); no label overlaps a chart's title."""
    write_analysis(tmp_path, ("alpha",))
    # 40 brokers: the ISR churn heat map is tall, and its title must stay clear of the labels too
    bm = pq.read_table(tmp_path / "analysis" / "broker_metrics")
    extra = [{"cluster": "alpha", "ts_ms": T0 + 10_000 * i, "broker": b, "name": jmx(meter), "value": 0.0}
             for b in range(5, 41) for i in range(31) for meter in ("IsrShrinksPerSec", "IsrExpandsPerSec")]
    pq.write_table(pa.concat_tables([bm, pa.Table.from_pylist(extra, schema=bm.schema)]),
                   tmp_path / "analysis" / "broker_metrics" / "part-00000.parquet")
    meta_path = tmp_path / "telemetry" / "_meta.json"
    meta = json.loads(meta_path.read_text())
    meta["events"] = [{"ts_ms": T0 + (100 + 12 * i) * 1000, "kind": "broker_down" if i % 2 == 0 else "broker_up",
                       "text": f"broker {1 + i // 2} {'down' if i % 2 == 0 else 'up'}"} for i in range(8)]
    meta_path.write_text(json.dumps(meta))
    html = build_report(tmp_path)
    statuses = check_report(html, "rolling", tmp_path)
    labels = {it["id"]: len(it["labels"]) for it in statuses[1400]["layout"]["items"] if it["kind"] == "chart"}
    assert 0 < labels["c0-alpha-health"] < 8, labels
    data = json.loads(html.read_text().split('<script type="application/json" id="report-data">')[1]
                      .split("</script>")[0])
    (health,) = [c for c in data["charts"] if c["id"] == "c0-alpha-health"]
    layout = health["figure"]["layout"]
    assert len(layout["shapes"]) == 8
    assert sum(n["hovertext"].count(" UTC: ") for n in layout["annotations"]) == 8
    assert any(re.search(r" \+\d$", n["text"]) for n in layout["annotations"])


def test_log_text_is_text_in_the_rendered_tables(built, tmp_path_factory):
    """The topic ``<script>alert(1)</script>`` and the rejected line ``garbage <b>bold</b>`` reach the DOM as
    text inside table cells: no element of theirs exists."""
    root, _ = built
    status, dom, _ = render_status(root / "report.html", tmp_path_factory.mktemp("chromium-xss"))
    assert status["errors"] == []
    assert "&lt;script&gt;alert(1)&lt;/script&gt;-3" in dom
    assert "garbage &lt;b&gt;bold&lt;/b&gt;" in dom
    assert "<script>alert(1)" not in dom and "<b>bold</b>" not in dom


def test_works_offline_no_external_resource(built):
    html = (built[0] / "report.html").read_text()
    assert not re.search(r'<(script|link|img)[^>]+(src|href)=["\']https?:', html)
    assert "sourceMappingURL" not in html


@pytest.mark.spark
@pytest.mark.slow
def test_demo_report_at_three_widths(demo, tmp_path_factory):
    _, path = demo
    statuses = check_report(path, "demo", tmp_path_factory.mktemp("chromium-demo"))
    charts = statuses[1400]["charts"]
    # the KIP-542 pair shows traffic against the throttle on both sides
    assert any(k.startswith("c8-kip542-before-traffic-") for k in charts)
    assert any(k.startswith("c9-kip542-after-traffic-") for k in charts)
