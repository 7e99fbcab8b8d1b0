"""`replicaflow demo` end to end on the real story scenarios (simulate → one Spark job → one report)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from replicaflow.pipeline.session import C1_ONLY
from replicaflow.report.data import load_analysis
from replicaflow.report.stories import STORIES
from replicaflow.telemetry.io import read_meta
from tests.conftest import require_tool
from tests.report.omparse import parse
from tests.report.promrules import RULES, expected_for, rules_test
from tests.report.test_promtool import RULES_FILE

pytestmark = [pytest.mark.spark, pytest.mark.slow]


def test_demo_terminal_output_is_clean_at_80_columns(demo_run):
    _, text = demo_run
    lines = [re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", line) for line in text.splitlines()]
    assert max(len(line) for line in lines) <= 80, "\n".join(line for line in lines if len(line) > 80)
    noise = [line for line in lines if re.search(r"WARN|WARNING|log4j|\.py:\d|Traceback|SparkR|setLogLevel", line)]
    assert not noise, noise
    assert any(line.startswith("demo report: ") for line in lines)
    assert sum(line.startswith(f"{s.key.upper()}: ") for s in STORIES for line in lines) == len(STORIES)


def test_the_demo_jvm_is_compiled_by_c1_alone(demo_run):
    """The demo's ten story scenarios write about 20,000 telemetry rows, a short run: its JVM starts with the
    C1 JIT alone (``session.java_options``; 21 s end to end against 28 s with C2, docs/pipeline.md)."""
    out, _ = demo_run
    assert C1_ONLY in (out.parent / f"{out.name}-spark.log").read_text().split()


def test_one_report_with_five_pairs_side_by_side(demo):
    out, path = demo
    assert path == out / "report.html"
    html = path.read_text()
    for story in STORIES:
        section = html.split(f'id="story-{story.key}"', 1)[1].split('<section', 1)[0]
        assert f"<h2>{story.before}</h2>" in section and f"<h2>{story.after}</h2>" in section
        sentence = re.search(r"<strong>What changed:</strong> (.*?)</div>", section).group(1)
        assert re.search(r"\d", sentence)                       # computed from the numbers
    summary = json.loads((out / "summary.json").read_text())
    assert sorted(summary) == sorted(n for s in STORIES for n in (s.before, s.after))
    _, series = parse((out / "metrics.om").read_text())
    assert {dict(lab)["cluster"] for _, lab in series} == set(summary)


def test_the_stories_show_their_kip(demo):
    out, _ = demo
    s = json.loads((out / "summary.json").read_text())
    assert s["kip16-before"]["isr_shrinks"] > 0 and s["kip16-after"]["isr_shrinks"] == 0
    assert s["kip164-before"]["peak_under_min_isr"] > 0                 # it happened, 0.11 had no metric for it
    assert s["kip352-before"]["peak_reassignment_induced_urp"] > 0
    assert s["kip352-after"]["peak_urp"] < s["kip352-before"]["peak_urp"]
    assert s["kip461-after"]["peak_failed_partitions"] > 0 and s["kip461-before"]["peak_failed_partitions"] == 0
    assert s["kip461-after"]["urp_minutes"] < s["kip461-before"]["urp_minutes"]


@pytest.mark.parametrize("cluster", ["kip164-after", "kip461-after"])
def test_strimzi_alerts_fire_on_a_real_scenario(demo, cluster, tmp_path):
    """promtool test rules on the simulator→pipeline output: alerts fire when partition_state says."""
    out, _ = demo
    promtool = require_tool("promtool", "prometheus")
    grid, expected = expected_for(load_analysis(out, [read_meta(out / cluster)]), cluster)
    if cluster == "kip164-after":
        assert any(f["alert"] == "UnderMinIsrPartitionCount" for fs in expected.values() for f in fs)
    shutil.copy(RULES_FILE, tmp_path / "rules.yaml")
    (tmp_path / "test.yaml").write_text(rules_test("rules.yaml", (out / "metrics.om").read_text(), grid, expected,
                                                   tuple(RULES), cluster))
    res = subprocess.run([promtool, "test", "rules", "test.yaml"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-4000:]


def test_printed_tables_fit_80_columns_and_degrade_to_plain_text(demo):
    from rich.console import Console

    from replicaflow.report.console import print_analyze, print_demo

    out, _ = demo
    s = json.loads((out / "analysis" / "_summary.json").read_text())
    timings = {"total": 1.0, "simulate": 0.2, "analyze": 0.7, "report": 0.1}
    terminal = Console(width=80, record=True, force_terminal=True)
    print_demo(terminal, STORIES, s, timings)
    print_analyze(terminal, s)
    text = terminal.export_text()
    assert max(len(line) for line in text.splitlines()) <= 80 and "…" not in text
    for label in ("peak URP", "under min ISR, summed over partitions", "incidents", "moves done", "ISR shrinks"):
        assert label in text
    assert json.loads((out / "summary.json").read_text()) == s          # the report renders the pipeline's numbers
    moved = s["kip352-after"]["reassignments"]
    assert f"{moved['completed']}/{sum(moved.values())}" in text and moved["completed"] > 0
    assert sum(line.startswith(f"{story.key.upper()}: ") for story in STORIES for line in text.splitlines()) \
        == len(STORIES)
    piped = Console(width=80, record=True, force_terminal=False)
    print_analyze(piped, s)
    plain = piped.export_text().splitlines()
    assert plain and max(len(line) for line in plain) <= 80 and not any("─" in line for line in plain)
    assert plain[plain.index("replicaflow analyze: kip542-after") + 1] == "  Kafka: 3.7 + KIP-542 (hypothetical)"
