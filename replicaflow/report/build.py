"""`replicaflow report DIR`: report.html (self-contained, offline), metrics.om and summary.json.

Each output is written atomically (temporary sibling + ``os.replace``). The HTML is rendered by
Jinja2 with autoescape on, so everything that came from logs is escaped; the chart data travels
as JSON in a ``<script type="application/json">`` block whose ``<``, ``>`` and ``&`` are written as
``\\u003c`` etc., so no string in the data can close the block.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

import jinja2

from replicaflow import __version__
from replicaflow.errors import ReplicaflowError
from replicaflow.model.units import format_duration
from replicaflow.report.data import Analysis, load_analysis
from replicaflow.report.openmetrics import to_openmetrics
from replicaflow.report.sections import all_charts, cluster_section
from replicaflow.report.stories import StoryPair, what_changed
from replicaflow.telemetry.outputs import REPORT

_SAFE = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def script_json(obj) -> str:
    """JSON that is safe inside a <script> element: no character of it can end the element."""
    text = json.dumps(obj, separators=(",", ":"), allow_nan=False)
    return re.sub("[<>&\u2028\u2029]", lambda m: _SAFE[m.group(0)], text)


def write_atomic(path: Path, text: str) -> None:
    path = Path(path)
    tmp = path.parent / f".{path.name}.tmp-{os.getpid()}"
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise ReplicaflowError(f"{path}: cannot write ({exc.strerror or exc})") from None


def _template(name: str) -> str:
    return resources.files("replicaflow.report").joinpath("templates", name).read_text(encoding="utf-8")


def _plotly_js() -> str:
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


def render(title: str, subtitle: str, sections: list[dict], stories: Sequence[dict] = (),
           rejects: list[dict] | None = None) -> str:
    env = jinja2.Environment(autoescape=True, undefined=jinja2.ChainableUndefined, trim_blocks=False)
    env.filters["dur"] = lambda minutes: format_duration(float(minutes) * 60_000) if minutes else "0s"
    template = env.from_string(_template("report.html.j2"))
    charts = [c for s in sections for c in all_charts(s)]
    charts += [c for st in stories for side in ("before", "after") for c in all_charts(st[side], gauges=False)]
    nav = [{"anchor": st["anchor"], "label": st["title"]} for st in stories]
    nav += [{"anchor": s["anchor"], "label": s["cluster"]} for s in sections]
    if rejects is not None:
        nav.append({"anchor": "rejects", "label": "rejected lines"})
    return template.render(title=title, subtitle=subtitle, version=__version__, nav=nav, sections=sections,
                           stories=list(stories), rejects=rejects or [], show_rejects=rejects is not None,
                           data_json=script_json({"charts": charts}), plotly_js=_plotly_js(),
                           report_js=_template("report.js"))


def _anchor(cluster: str, i: int) -> str:
    return f"c{i}-" + re.sub(r"[^A-Za-z0-9_-]+", "-", cluster)[:40]


def _rejects(analysis: Analysis) -> list[dict] | None:
    if not (analysis.root / "analysis" / "rejects").is_dir():
        return None
    rj = analysis.tables["rejects"].sort_values(["source", "line_number"]).head(500)
    return [{"where": f"{r.source}:{r.line_number}", "reason": r.reason, "raw": r.raw_line} for r in rj.itertuples()]


def write_outputs(directory: Path, analysis: Analysis, html: str, naming: str = "strimzi") -> Path:
    """report.html, metrics.om (in the ``naming`` profile) and summary.json (the pipeline's headline numbers of
    every cluster shown) into ``directory``, each atomically."""
    grid = {c: analysis.grid(c) for c in analysis.clusters}
    om = to_openmetrics(analysis.tables["broker_metrics"], analysis.tables["partition_state"], analysis.meta, grid,
                        naming=naming)
    summary = {c: analysis.headline(c) for c in analysis.clusters}
    html_name, om_name, summary_name = REPORT
    write_atomic(directory / om_name, om)
    write_atomic(directory / summary_name, json.dumps(summary, indent=2, sort_keys=True) + "\n")
    write_atomic(directory / html_name, html)
    return directory / html_name


def build_report(directory: Path, metas: list[dict] | None = None, naming: str = "strimzi",
                 dest: Path | None = None, shown: Path | None = None) -> Path:
    """Read ``directory/analysis`` (+ ``telemetry/_meta.json``) and write the three outputs into ``dest``
    (default ``directory``). ``shown``: the folder the report names as its source, when ``directory`` is
    a staging folder that will not exist once the command commits (``run``)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise ReplicaflowError(f"report directory '{directory}' is not a directory")
    analysis = load_analysis(directory, metas)
    if not analysis.clusters:
        raise ReplicaflowError(f"{directory / 'analysis'}: no cluster in broker_metrics or cluster_metrics")
    sections = [cluster_section(analysis, c, _anchor(c, i)) for i, c in enumerate(analysis.clusters)]
    names = ", ".join(analysis.clusters)
    html = render(f"replicaflow report: {names}", f"{len(sections)} cluster(s) · {(shown or directory).resolve()}", sections,
                  rejects=_rejects(analysis))
    return write_outputs(Path(dest or directory), analysis, html, naming)


def build_demo_report(pairs: Sequence[StoryPair], directory: Path, metas: list[dict] | None = None) -> Path:
    """One report that puts each pair side by side with the sentence saying what changed."""
    directory = Path(directory)
    analysis = load_analysis(directory, metas)
    known = set(analysis.clusters)
    stories = []
    for i, p in enumerate(pairs):
        for name in (p.before, p.after):
            if name not in known:
                raise ReplicaflowError(f"{directory / 'analysis'}: no cluster '{name}' for story {p.key}")
        before = cluster_section(analysis, p.before, _anchor(p.before, 2 * i))
        after = cluster_section(analysis, p.after, _anchor(p.after, 2 * i + 1))
        stories.append({"anchor": f"story-{p.key}", "title": p.title, "about": p.about,
                        "sentence": what_changed(p.key, before["summary"], after["summary"]),
                        "before": before, "after": after})
    html = render("replicaflow demo: five KIPs, before and after",
                  f"{len(stories)} stories · {len(known)} clusters analyzed in one Spark job", [], stories)
    return write_outputs(directory, analysis, html)
