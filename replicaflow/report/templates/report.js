/* replicaflow report: draws every chart from the JSON block, then records what it drew. */
(function () {
  "use strict";
  var status = { charts: {}, errors: [], done: false };
  function note(msg) { status.errors.push(String(msg)); }
  window.addEventListener("error", function (e) { note(e.message || e); });
  var origError = console.error;
  console.error = function () { note(Array.prototype.join.call(arguments, " ")); origError.apply(console, arguments); };

  var palette = ["#1f6feb", "#d1242f", "#1a7f37", "#9a6700", "#8250df", "#bf3989", "#0a7ea4", "#57606a",
                 "#e16f24", "#116329"];

  function traceOf(spec, t, i) {
    if (spec.kind === "heatmap") {
      return { type: "heatmap", x: t.x, y: t.y, z: t.z, name: t.name, colorscale: [[0, "#f6f8fa"], [0.001, "#fff1c2"], [1, "#d1242f"]], zmin: 0, zmax: t.zmax, hoverongaps: false,
               colorbar: { title: { text: "changes" } } };
    }
    var line = { width: t.width || 2, color: palette[i % palette.length], shape: "hv" };
    if (t.dash) { line.dash = "dot"; }
    var tr = { type: "scatter", mode: "lines", x: t.x, y: t.y, name: t.name, line: line, connectgaps: false };
    if (t.fill) { tr.fill = t.fill; tr.fillcolor = "rgba(209,36,47,0.18)"; tr.name = t.name + " — shaded: " + t.fillname; }
    return tr;
  }

  function points(gd, spec) {
    var n = 0;
    (gd.calcdata || []).forEach(function (cd) {
      cd.forEach(function (pt) {
        if (spec.kind === "heatmap" && pt.z) {
          pt.z.forEach(function (row) { row.forEach(function (v) { if (v !== null && isFinite(v)) { n += 1; } }); });
        } else if (pt.y !== undefined && pt.y !== null && isFinite(pt.y)) { n += 1; }
      });
    });
    return n;
  }

  function draw(spec) {
    var el = document.getElementById(spec.id);
    if (!el) { note("no element for chart " + spec.id); return Promise.resolve(); }
    var layout = {
      title: { text: spec.title, font: { size: 15 } },
      margin: { l: 60, r: 20, t: 44, b: 44 }, height: spec.kind === "heatmap" ? 260 : 300,
      xaxis: { type: "date" },
      yaxis: { title: { text: spec.y_title }, rangemode: "tozero", automargin: true },
      legend: { orientation: "h", y: -0.18 }, hovermode: "x unified", font: { family: "system-ui, sans-serif" },
      paper_bgcolor: "#ffffff", plot_bgcolor: "#fbfcfd"
    };
    if (spec.kind === "heatmap") { layout.yaxis.rangemode = undefined; layout.yaxis.type = "category"; layout.hovermode = "closest"; }
    var traces = spec.traces.map(function (t, i) { return traceOf(spec, t, i); });
    return Plotly.newPlot(el, traces, layout, { displaylogo: false, displayModeBar: false, responsive: true })
      .then(function (gd) { status.charts[spec.id] = points(gd, spec); })
      .catch(function (e) { note("chart " + spec.id + ": " + e); });
  }

  function finish() {
    status.done = true;
    var out = document.getElementById("render-status");
    out.textContent = JSON.stringify(status);
    out.setAttribute("data-done", "1");
  }

  try {
    var data = JSON.parse(document.getElementById("report-data").textContent);
    var specs = data.charts || [];
    specs.reduce(function (p, s) { return p.then(function () { return draw(s); }); }, Promise.resolve())
      .then(finish, function (e) { note(e); finish(); });
  } catch (e) { note(e); finish(); }
})();
