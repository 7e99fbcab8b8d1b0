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
from collections.abc import Iterable, Sequence
from importlib import resources
from pathlib import Path

import jinja2

from replicaflow import __version__
from replicaflow.errors import ReplicaflowError
from replicaflow.model.units import counted, format_minutes
from replicaflow.report import tables
from replicaflow.report.data import Analysis, load_analysis
from replicaflow.report.openmetrics import openmetrics_chunks
from replicaflow.report.sections import all_charts, all_tables, cluster_section
from replicaflow.report.stories import StoryPair, what_changed
from replicaflow.telemetry.outputs import REPORT

# Tabulator (MIT, templates/vendor/tabulator.LICENSE): sortable, filterable tables.
TABULATOR_JS, TABULATOR_CSS = "tabulator-6.5.3.min.js", "tabulator_simple-6.5.3.min.css"
_SAFE = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def script_json(obj) -> str:
    """JSON that is safe inside a <script> element: no character of it can end the element."""
    text = json.dumps(obj, separators=(",", ":"), allow_nan=False)
    return re.sub("[<>&\u2028\u2029]", lambda m: _SAFE[m.group(0)], text)


def write_atomic(path: Path, text: str | Iterable[str]) -> None:
    """``text`` (or its pieces, written one by one) into ``path`` through a temporary sibling that replaces it
    only when whole; the sibling is removed whatever stops the write."""
    path = Path(path)
    tmp = path.parent / f".{path.name}.tmp-{os.getpid()}"
    try:
        with tmp.open("w", encoding="utf-8") as f:
            for piece in [text] if isinstance(text, str) else text:
                f.write(piece)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise ReplicaflowError(f"{path}: cannot write ({exc.strerror or exc})") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _template(name: str) -> str:
    return resources.files("replicaflow.report").joinpath("templates", name).read_text(encoding="utf-8")


def _plotly_js() -> str:
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


def _vendored(name: str) -> str:
    """A vendored library file (templates/vendor/, with its license), less its source-map comment: the page
    must not point at a file it does not carry."""
    text = _template(f"vendor/{name}")
    return re.sub(r"\n?/[/*]# sourceMappingURL=[^\n]*", "", text)


def count_text(value) -> object:
    """A count as a card shows it: ``824,000``, not ``824000``; anything else as it is."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and float(value).is_integer():
        return f"{int(value):,}"
    return value


def render(title: str, subtitle: str, sections: list[dict], stories: Sequence[dict] = (),
           rejects: dict | None = None) -> str:
    env = jinja2.Environment(autoescape=True, undefined=jinja2.ChainableUndefined, trim_blocks=False)
    env.filters["dur"] = format_minutes
    env.filters["n"] = count_text
    env.filters["counted"] = lambda n, noun: counted(int(n), noun)
    template = env.from_string(_template("report.html.j2"))
    shown = [*sections, *(st[side] for st in stories for side in ("before", "after"))]
    charts = [{"id": c.id, "figure": c.figure} for s in sections for c in all_charts(s)]
    charts += [{"id": c.id, "figure": c.figure} for st in stories for side in ("before", "after")
               for c in all_charts(st[side], gauges=False)]
    grids = [t for s in shown for t in all_tables(s)]
    if rejects is not None and rejects["rows"]:
        grids.append(rejects)
    nav = [{"anchor": st["anchor"], "label": st["title"]} for st in stories]
    nav += [{"anchor": s["anchor"], "label": s["cluster"]} for s in sections]
    if rejects is not None:
        nav.append({"anchor": "rejects", "label": "rejected lines"})
    return template.render(title=title, subtitle=subtitle, version=__version__, nav=nav, sections=sections,
                           stories=list(stories), rejects=rejects, show_rejects=rejects is not None,
                           data_json=script_json({"charts": charts, "tables": grids}), plotly_js=_plotly_js(),
                           table_js=_vendored(TABULATOR_JS), table_css=_vendored(TABULATOR_CSS),
                           report_js=_template("report.js"))


def _anchor(cluster: str, i: int) -> str:
    return f"c{i}-" + re.sub(r"[^A-Za-z0-9_-]+", "-", cluster)[:40]


def _rejects(analysis: Analysis) -> dict | None:
    if not (analysis.root / "analysis" / "rejects").is_dir():
        return None
    return tables.rejects(analysis)


def write_outputs(directory: Path, analysis: Analysis, html: str, naming: str = "strimzi") -> Path:
    """report.html, metrics.om (in the ``naming`` profile) and summary.json (the pipeline's headline numbers of
    every cluster shown) into ``directory``, each atomically."""
    grid = {c: analysis.grid(c) for c in analysis.clusters}
    om = openmetrics_chunks(analysis.tables["broker_metrics"], analysis.tables["partition_state"], analysis.meta,
                            grid, naming=naming)
    summary = {c: analysis.headline(c) for c in analysis.clusters}
    html_name, om_name, summary_name = REPORT
    write_atomic(directory / om_name, om)
    write_atomic(directory / summary_name, json.dumps(summary, indent=2, sort_keys=True) + "\n")
    write_atomic(directory / html_name, html)
    return directory / html_name


def check_report_dir(directory: Path) -> None:
    """``report DIR``: a folder, said in the sentence style of ``analyze``'s and ``--out``'s."""
    if Path(directory).is_file():
        raise ReplicaflowError(f"{directory}: is a file, expected a folder holding analysis/ (the output of `analyze`)")
    if not Path(directory).is_dir():
        raise ReplicaflowError(f"{directory}: report directory does not exist")


def build_report(directory: Path, metas: list[dict] | None = None, naming: str = "strimzi",
                 dest: Path | None = None, shown: Path | None = None) -> Path:
    """Read ``directory/analysis`` (+ ``telemetry/_meta.json``) and write the three outputs into ``dest``
    (default ``directory``). ``shown``: the folder the report names as its source, when ``directory`` is
    a staging folder that will not exist once the command commits (``run``)."""
    directory = Path(directory)
    check_report_dir(directory)
    analysis = load_analysis(directory, metas)
    if not analysis.clusters:
        raise ReplicaflowError(f"{directory / 'analysis'}: no cluster in broker_metrics or cluster_metrics")
    sections = [cluster_section(analysis, c, _anchor(c, i)) for i, c in enumerate(analysis.clusters)]
    names = ", ".join(analysis.clusters)
    html = render(f"replicaflow report: {names}", f"{counted(len(sections), 'cluster')} · {(shown or directory).resolve()}", sections,
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
        stories.append({"anchor": f"story-{p.key}", "title": p.title, "about": p.about, "hypothetical": p.hypothetical,
                        "sentence": what_changed(p.key, before["summary"], after["summary"]),
                        "before": before, "after": after})
    html = render("replicaflow demo: five KIPs, before and after",
                  f"{len(stories)} stories · {len(known)} clusters analyzed in one Spark job", [], stories)
    return write_outputs(directory, analysis, html)
