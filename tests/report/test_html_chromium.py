"""report.html in headless Chromium: it renders offline, every chart has data points, no console error."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import require_tool

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0",
         "--virtual-time-budget=20000", "--hide-scrollbars", "--no-first-run", "--disable-extensions"]


def _chromium(*args: str, tmp: Path) -> subprocess.CompletedProcess:
    return subprocess.run([require_tool("chromium", "chromium"), *FLAGS, f"--user-data-dir={tmp / 'profile'}", *args],
                          capture_output=True, text=True, timeout=240)


def render_status(html: Path, tmp: Path) -> tuple[dict, str]:
    """(the page's own record of what it drew and any error, Chromium's stderr) after --dump-dom."""
    dom = _chromium("--dump-dom", html.resolve().as_uri(), tmp=tmp)
    assert dom.returncode == 0, dom.stderr[-3000:]
    m = re.search(r'<pre id="render-status"[^>]*data-done="1"[^>]*>(.*?)</pre>', dom.stdout, re.S)
    assert m, "the report's script never finished rendering"
    return json.loads(m.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">")
                      .replace("&amp;", "&")), dom.stderr


@pytest.fixture(scope="module")
def rendered(built, tmp_path_factory):
    root, _ = built
    tmp = tmp_path_factory.mktemp("chromium")
    url = (root / "report.html").resolve().as_uri()
    dom = _chromium("--dump-dom", url, tmp=tmp)
    shot = _chromium(f"--screenshot={tmp / 'report.png'}", "--window-size=1400,2400", url, tmp=tmp)
    return root, dom, shot, tmp / "report.png"


def test_every_chart_rendered_points_without_errors(rendered):
    root, dom, _, _ = rendered
    assert dom.returncode == 0, dom.stderr[-3000:]
    m = re.search(r'<pre id="render-status"[^>]*data-done="1"[^>]*>(.*?)</pre>', dom.stdout, re.S)
    assert m, "the report's script never finished rendering"
    status = json.loads(m.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">")
                        .replace("&amp;", "&"))
    assert status["done"] and status["errors"] == []
    html = (root / "report.html").read_text()
    ids = re.findall(r'<div class="chart" id="([^"]+)"', html)
    assert len(ids) >= 20 and set(status["charts"]) == set(ids)
    empty = {k: v for k, v in status["charts"].items() if v <= 0}
    assert not empty, f"charts without data points: {empty}"
    # Plotly drew SVG for each chart
    assert dom.stdout.count('class="main-svg"') >= len(ids)


def test_no_console_errors_on_stderr(rendered):
    _, dom, shot, _ = rendered
    for proc in (dom, shot):
        bad = [line for line in proc.stderr.splitlines() if "CONSOLE" in line and ("ERROR" in line or "error" in line)]
        assert not bad, bad


def test_screenshot_is_a_real_picture(rendered):
    _, _, shot, png = rendered
    assert shot.returncode == 0, shot.stderr[-3000:]
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (1400, 2400)
    assert len(data) > 50_000          # a blank page compresses to a few KB; charts and tables do not


def test_works_offline_no_external_resource(built):
    html = (built[0] / "report.html").read_text()
    assert not re.search(r'<(script|link|img)[^>]+(src|href)=["\']https?:', html)
