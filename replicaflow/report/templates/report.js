/* replicaflow report: draws the Plotly figures and the Tabulator tables from the JSON block, then records
   what it drew and where it landed (for the headless-Chromium tests) in #render-status. */
(function () {
  "use strict";
  var status = { charts: {}, tables: {}, errors: [], layout: null, done: false };
  function note(msg) { status.errors.push(String(msg)); }
  window.addEventListener("error", function (e) { note(e.message || e); });
  var origError = console.error;
  console.error = function () { note(Array.prototype.join.call(arguments, " ")); origError.apply(console, arguments); };

  // status words → colour of the tag (a fixed list: a value from data never becomes a class name)
  var TAGS = { "completed": "ok", "stalled": "bad", "starved": "bad", "never at this rate": "bad" };

  function points(gd) {
    var n = 0;
    (gd.data || []).forEach(function (t) {
      if (t.type === "heatmap") {
        (t.z || []).forEach(function (row) { row.forEach(function (v) { if (v !== null && isFinite(v)) { n += 1; } }); });
      } else {
        (t.y || []).forEach(function (v) { if (v !== null && isFinite(v)) { n += 1; } });
      }
    });
    return n;
  }

  function draw(spec) {
    var el = document.getElementById(spec.id);
    if (!el) { note("no element for chart " + spec.id); return Promise.resolve(); }
    var fig = spec.figure;
    return Plotly.newPlot(el, fig.data, fig.layout, { displaylogo: false, displayModeBar: false, responsive: true })
      .then(function (gd) { status.charts[spec.id] = points(gd); })
      .catch(function (e) { note("chart " + spec.id + ": " + e); });
  }

  // Tabulator writes tooltips and list-filter items with innerHTML: hand it elements holding text instead.
  function textEl(text) {
    var div = document.createElement("div");
    div.textContent = String(text);
    return div;
  }
  function cellTooltip(e, cell) {
    var v = cell.getValue();
    return (v === null || v === undefined || v === "") ? false : textEl(v);
  }

  function tagFormatter(cell) {
    var v = String(cell.getValue());
    var span = document.createElement("span");
    span.className = "tag " + (TAGS[v] || "");
    span.textContent = v;
    return span;
  }

  function column(c) {
    var col = { title: c.title, field: c.field, headerSort: true, tooltip: cellTooltip, maxWidth: 560 };
    if (c.kind === "num") { col.hozAlign = "right"; }
    if (c.kind === "mono") { col.cssClass = "mono"; }
    if (c.kind === "ts") { col.cssClass = "ts"; col.minWidth = 150; }
    if (c.kind === "tag") { col.formatter = tagFormatter; }
    if (c.filter === "input") { col.headerFilter = "input"; col.headerFilterPlaceholder = "filter"; }
    if (c.filter === "list") {
      col.headerFilter = "list";
      col.headerFilterParams = { valuesLookup: true, clearable: true, sort: "asc",
                                 itemFormatter: function (label) { return textEl(label); } };
      col.headerFilterFunc = "=";
      col.headerFilterPlaceholder = "all";
    }
    if (c.sort) {
      col.sorter = function (a, b, aRow, bRow) {
        var x = aRow.getData()[c.sort], y = bRow.getData()[c.sort];
        x = (x === null || x === undefined) ? -Infinity : x;
        y = (y === null || y === undefined) ? -Infinity : y;
        return x - y;
      };
    }
    return col;
  }

  function table(spec) {
    var el = document.getElementById(spec.id);
    if (!el) { note("no element for table " + spec.id); return Promise.resolve(); }
    return new Promise(function (resolve) {
      try {
        var t = new Tabulator(el, {
          data: spec.rows, columns: spec.columns.map(column), layout: "fitDataStretch",
          maxHeight: "360px", placeholder: "no row matches the filters", columnHeaderVertAlign: "bottom"
        });
        t.on("tableBuilt", function () { status.tables[spec.id] = t.getDataCount(); resolve(); });
      } catch (e) { note("table " + spec.id + ": " + e); resolve(); }
    });
  }

  function box(el) {
    var r = el.getBoundingClientRect();
    return { left: r.left + window.scrollX, right: r.right + window.scrollX, top: r.top + window.scrollY,
             bottom: r.bottom + window.scrollY };
  }

  // Where each chart and table landed, against its column (.col: a cluster section or one side of a story).
  function measure() {
    var items = [];
    document.querySelectorAll(".chart, .grid-table").forEach(function (el) {
      var col = el.closest(".col");
      var svg = el.querySelector(".main-svg");
      items.push({ id: el.id, kind: el.classList.contains("chart") ? "chart" : "table", box: box(el),
                   svg: svg ? box(svg) : null, col: col ? box(col) : null,
                   labels: Array.prototype.map.call(el.querySelectorAll("g.annotation"), box),
                   title: el.querySelector(".gtitle") ? box(el.querySelector(".gtitle")) : null });
    });
    var ts = document.querySelectorAll(".tabulator-cell.ts");
    var cut = Array.prototype.filter.call(ts, function (c) { return c.scrollWidth > c.clientWidth + 1; });
    return { viewport: document.documentElement.clientWidth, scroll_width: document.documentElement.scrollWidth,
             items: items, ts_cells: ts.length, ts_cut: cut.length };
  }

  function finish() {
    try { status.layout = measure(); } catch (e) { note(e); }
    status.done = true;
    var out = document.getElementById("render-status");
    out.textContent = JSON.stringify(status);
    out.setAttribute("data-done", "1");
  }

  try {
    var data = JSON.parse(document.getElementById("report-data").textContent);
    var tables = (data.tables || []).map(table);
    var charts = (data.charts || []).reduce(function (p, s) { return p.then(function () { return draw(s); }); },
                                            Promise.resolve());
    Promise.all([charts].concat(tables)).then(finish, function (e) { note(e); finish(); });
  } catch (e) { note(e); finish(); }
})();
