"""Plotly figures of the report, built in Python: one look for every time chart, and the rules that keep
busy charts readable.

- Every time axis carries the run's event markers (a dotted vertical line and a short label; the
  full text on hover): an operator reads "URP rose here" against "broker 2 went down here".
- Step lines (a gauge holds until the next scrape) that overlap exactly would hide each other, so
  identical series are drawn once under a joined name (``under-replicated = reassigning``), and the
  others cycle through dash patterns as well as colours.
- A chart with more series than :data:`TOP_N` keeps the largest ones and folds the rest into one
  ``others`` line: a 40-entry legend answers nothing.
- A chart whose series are all empty or zero is not drawn: :func:`collapse` gives the one sentence
  that says so instead of half a page of flat lines.

Everything that comes from data (topic names, event texts) goes through :func:`plotly_text`: plotly
reads ``<a href>``, ``<b>``, ``<br>`` in names and labels as markup.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import plotly.graph_objects as go

from replicaflow.model.units import format_ts_ms

TOP_N = 8
PALETTE = ("#1f6feb", "#d1242f", "#1a7f37", "#9a6700", "#8250df", "#bf3989", "#0a7ea4", "#57606a",
           "#e16f24", "#116329")
DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
HYPOTHETICAL = "hypothetical (never shipped in Kafka)"


def plotly_text(text: str) -> str:
    """Text from data as plotly shows it literally: plotly reads ``<a href>``, ``<b>``, ``<br>`` in names and
    labels as markup, so a topic name could otherwise become a live link in a legend."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


@dataclass
class Series:
    """One line: values on the chart's x (None = no sample, drawn as a gap)."""

    name: str
    y: list[float | None]
    width: float = 2.0
    dash: str | None = None
    color: str | None = None
    fill_to_previous: bool = False
    emphasis: bool = False  # a total or a limit: never folded into "others"

    def peak(self) -> float:
        vals = [v for v in self.y if v is not None]
        return max(vals) if vals else 0.0


@dataclass(frozen=True)
class Marker:
    """An event on the time axis: where, a label of a few characters, and the full text for the hover."""

    ts_ms: int
    label: str
    text: str


@dataclass
class Chart:
    """A drawn chart (``figure``) or, when there is nothing to draw, the sentence that replaces it."""

    id: str
    title: str
    figure: dict | None = None
    sentence: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def drawn(self) -> bool:
        return self.figure is not None


def clean(values) -> list[float | None]:
    out = []
    for v in values:
        f = None if v is None else float(v)
        out.append(None if f is None or math.isnan(f) else f)
    return out


def collapse(series: Sequence[Series]) -> str | None:
    """Why a chart of ``series`` is not worth drawing, or None: no sample at all, or zero throughout."""
    values = [v for s in series for v in s.y if v is not None]
    if not values:
        return "no samples"
    if all(v == 0 for v in values):
        return "0 throughout"
    return None


def top_n(series: list[Series], n: int = TOP_N, others: str = "sum", unit: str = "") -> list[Series]:
    """The ``n`` series with the highest peaks (emphasised ones always kept) and one ``others`` line that
    sums (or takes the max of) the rest, in place of a legend nobody can read."""
    keep = [s for s in series if s.emphasis]
    rest = sorted((s for s in series if not s.emphasis), key=lambda s: -s.peak())
    if len(rest) <= n + 1:
        return keep + rest
    shown, folded = rest[:n], rest[n:]
    combined = []
    for column in zip(*(s.y for s in folded), strict=True):
        vals = [v for v in column if v is not None]
        combined.append(None if not vals else (sum(vals) if others == "sum" else max(vals)))
    how = "total" if others == "sum" else "max"
    return keep + shown + [Series(f"others ({len(folded)}, {how}{unit})", combined, width=1.5, color="#8c959f",
                                  dash="dot")]


def _merge_identical(series: list[Series]) -> list[Series]:
    """Exactly equal series drawn once under a joined name: a step line on top of another hides it."""
    out: list[Series] = []
    for s in series:
        twin = next((o for o in out if o.y == s.y and not o.fill_to_previous and not s.fill_to_previous), None)
        if twin is not None:
            twin.name = f"{twin.name} = {s.name}"
        else:
            out.append(Series(s.name, s.y, s.width, s.dash, s.color, s.fill_to_previous, s.emphasis))
    return out


def _time_axis(xs: Sequence[int]) -> dict:
    day = format_ts_ms(xs[0])[:10] if xs else ""
    return {"type": "date", "tickformat": "%H:%M:%S", "hoverformat": "%Y-%m-%d %H:%M:%S",
            "title": {"text": f"time (UTC, {day})", "font": {"size": 11}}, "automargin": True}


# Marker labels: rows above the plot, and what a label takes of the narrowest plot a report draws (two charts
# side by side in a 1400 px window leave each about 560 px; tests/report/test_html_chromium.py measures them).
MARKER_ROWS = 2
PLOT_PX = 520
LABEL_PX_PER_CHAR = 6.5  # font size 10
LABEL_ROW_PX = 17  # a label's height at font size 10 (16 px) and a pixel between rows


def _label_half_width(label: str) -> float:
    """Half a label's width, as a fraction of the plot's width."""
    return (len(label) * LABEL_PX_PER_CHAR + 8) / 2 / PLOT_PX


def _marker_shapes(markers: Sequence[Marker], xs: Sequence[int]) -> tuple[list[dict], list[dict]]:
    """Dotted vertical lines and short labels of the events inside the chart's time range.

    Every event keeps its line. A label goes on the first row where it clears the labels before it; where
    none does (a rolling restart is four events in a few minutes of an eight-hour axis), the label before it
    counts it (``b7 down +2``) and its hover lists every event, instead of labels printed over each other."""
    if not xs:
        return [], []
    lo, hi = xs[0], xs[-1]
    span = max(hi - lo, 1)
    shapes: list[dict] = []
    notes: list[dict] = []
    placed: list[tuple[str, int, int, float]] = []  # per label: its text, row, events counted, place on the axis
    row_end = [-math.inf] * MARKER_ROWS
    for m in (x for x in markers if lo <= x.ts_ms <= hi):
        x = format_ts_ms(m.ts_ms)
        hover = plotly_text(f"{format_ts_ms(m.ts_ms)} UTC: {m.text}")
        shapes.append({"type": "line", "xref": "x", "yref": "paper", "x0": x, "x1": x, "y0": 0, "y1": 1,
                       "line": {"color": "#6e7781", "width": 1, "dash": "dot"}, "layer": "below"})
        at = (m.ts_ms - lo) / span
        row = next((r for r in range(MARKER_ROWS) if row_end[r] <= at - _label_half_width(m.label)), None)
        if row is None:  # the first label always fits: every row is empty
            label, row, count, where = placed[-1]
            placed[-1] = (label, row, count + 1, where)
            notes[-1]["text"] = plotly_text(f"{label} +{count}")
            notes[-1]["hovertext"] += f"<br>{hover}"
            row_end[row] = max(row_end[row], where + _label_half_width(f"{label} +{count}"))
            continue
        row_end[row] = at + _label_half_width(m.label)
        placed.append((m.label, row, 1, at))
        notes.append({"x": x, "xref": "x", "yref": "paper", "y": 1.0, "yshift": LABEL_ROW_PX * row, "yanchor": "bottom",
                      "showarrow": False, "text": plotly_text(m.label), "font": {"size": 10, "color": "#57606a"},
                      "hovertext": hover, "captureevents": False})
    return shapes, notes


def _layout(title: str, y_title: str, legend_rows: int, height: int, markers: bool) -> dict:
    return {
        # the title at a fixed 8 px from the top, whatever the chart's height (a fraction of a tall heat map's
        # height put it over the event labels above the plot)
        "title": {"text": plotly_text(title), "font": {"size": 14}, "x": 0, "xanchor": "left", "y": 1,
                  "yref": "container", "yanchor": "top", "pad": {"t": 8}},
        "autosize": True, "height": height + 20 * max(0, legend_rows - 1),
        "margin": {"l": 56, "r": 16, "t": 64 if markers else 40, "b": 40},
        "yaxis": {"title": {"text": plotly_text(y_title), "font": {"size": 11}}, "rangemode": "tozero",
                  "automargin": True},
        "legend": {"orientation": "h", "yanchor": "top", "y": -0.22, "x": 0, "font": {"size": 11}},
        "hovermode": "x unified", "font": {"family": "system-ui, sans-serif", "size": 12},
        "paper_bgcolor": "#ffffff", "plot_bgcolor": "#fbfcfd",
    }


def as_json(traces: Sequence, layout: dict, shapes: list[dict], notes: list[dict]) -> dict:
    """The figure as plain JSON data for the report's data block. Traces are plotly objects (validated as they
    are built); the layout is assembled as a dict and handed over as is, since validating a layout with
    shapes and annotations costs ~70 ms a chart (tests/report/test_figures.py validates every one)."""
    data = [t.to_plotly_json() for t in traces]
    return {"data": data, "layout": {**layout, "shapes": shapes, "annotations": notes}}


def line_chart(chart_id: str, title: str, y_title: str, xs: Sequence[int], series: list[Series],
               markers: Sequence[Marker] = (), unit: str = "", what: str | None = None) -> Chart:
    """Step lines on the scrape grid ``xs`` (epoch ms); collapsed to a sentence when empty or zero throughout."""
    why = collapse(series)
    if why:
        return Chart(chart_id, title, sentence=f"{what or title}: {why}.")
    series = _merge_identical(series)
    x = [format_ts_ms(t) for t in xs]
    traces = []
    for i, s in enumerate(series):
        dash = s.dash or ("solid" if s.emphasis else DASHES[i % len(DASHES)])
        line = {"width": s.width, "shape": "hv", "color": s.color or PALETTE[i % len(PALETTE)], "dash": dash}
        trace = go.Scatter(x=x, y=s.y, name=plotly_text(s.name), mode="lines", line=line, connectgaps=False,
                           hovertemplate=f"%{{y:.4~g}}{unit}<extra>{plotly_text(s.name)}</extra>")
        if s.fill_to_previous:
            trace.update(fill="tonexty", fillcolor="rgba(209,36,47,0.18)")
        traces.append(trace)
    shapes, notes = _marker_shapes(markers, xs)
    layout = _layout(title, y_title, legend_rows=math.ceil(len(series) / 3), height=320, markers=bool(notes))
    layout["xaxis"] = _time_axis(xs)
    if unit:
        layout["yaxis"]["ticksuffix"] = unit
    return Chart(chart_id, title, figure=as_json(traces, layout, shapes, notes))


def heatmap_chart(chart_id: str, title: str, xs: Sequence[int], rows: Sequence[str],
                  z: list[list[float | None]], markers: Sequence[Marker] = (), what: str | None = None) -> Chart:
    """A broker × time heat map; collapsed when every cell is empty or zero."""
    why = collapse([Series("", row) for row in z])
    if why:
        return Chart(chart_id, title, sentence=f"{what or title}: {why}.")
    zmax = max(1.0, max((v for row in z for v in row if v is not None), default=1.0))
    trace = go.Heatmap(x=[format_ts_ms(t) for t in xs], y=[plotly_text(r) for r in rows], z=z,
                               zmin=0, zmax=zmax, hoverongaps=False, name="ISR changes",
                               colorscale=[[0, "#f6f8fa"], [0.001, "#fff1c2"], [1, "#d1242f"]],
                               colorbar={"title": {"text": "changes"}, "thickness": 12})
    shapes, notes = _marker_shapes(markers, xs)
    layout = _layout(title, "broker", 1, height=max(200, 90 + 26 * len(rows)), markers=bool(notes))
    layout.update(xaxis=_time_axis(xs), hovermode="closest")
    layout["yaxis"].update(type="category")
    del layout["yaxis"]["rangemode"]
    return Chart(chart_id, title, figure=as_json([trace], layout, shapes, notes))
