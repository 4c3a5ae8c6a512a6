// The status page: follows /api/events (server-sent events) and draws the cluster with uPlot.
// "cluster" events carry the launcher's view of each process; "report" events a worker's own report
// (its rank on the first line). Rates and charts are computed here, from successive reports.
(function () {
  "use strict";
  const WINDOW = 120;            // points kept per chart: a minute at two updates a second
  const workers = new Map();     // rank -> {process, report, previous, rate}
  const charts = {};
  let events = 0;

  function text(value) { return value === undefined || value === null ? "" : String(value); }
  function cell(row, value, cls) {
    const td = document.createElement("td");
    td.textContent = text(value);
    if (cls) td.className = cls;
    row.appendChild(td);
    return td;
  }
  function palette(i) { return ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"][i % 8]; }

  // A line chart of named series over time; series appear as their names first show up.
  function chart(id, unit) {
    const element = document.getElementById(id);
    const state = { element, unit, digits: unit === " ms" ? 2 : 0, names: [], x: [], ys: new Map(), plot: null };
    charts[id] = state;
    return state;
  }
  function push(state, t, values) {        // values: name -> number (or {value, dash})
    state.x.push(t);
    for (const [name, ys] of state.ys) ys.push(values.has(name) ? values.get(name) : null);
    for (const [name, value] of values) {
      if (!state.ys.has(name)) {
        state.ys.set(name, state.x.map(() => null));
        state.ys.get(name)[state.x.length - 1] = value;
        state.names.push(name);
      }
    }
    if (state.x.length > WINDOW) {
      state.x.shift();
      for (const ys of state.ys.values()) ys.shift();
    }
    draw(state);
  }
  function draw(state) {
    const data = [state.x, ...state.names.map((name) => state.ys.get(name))];
    if (!state.plot || state.plot.series.length !== state.names.length + 1) {
      if (state.plot) state.plot.destroy();
      state.plot = new uPlot({
        width: 460, height: 240,
        scales: { x: { time: true } },
        series: [{}, ...state.names.map((name, i) => ({
          label: name, stroke: palette(Math.floor(i / (state.pairs ? 2 : 1))), width: 2,
          dash: state.pairs && i % 2 === 1 ? [6, 4] : undefined, spanGaps: true,
          value: (u, v) => v === null || v === undefined ? "–" : v.toFixed(state.digits) + state.unit,
        }))],
        axes: [{}, { size: 70 }],
      }, data, state.element);
    } else {
      state.plot.setData(data);
    }
    state.element.dataset.points = String(state.x.length);
  }

  function seriesChart(state, t) {
    // Reported series are drawn by step, not time: one uPlot per set of names, redrawn in full.
    const lines = [];
    for (const [rank, w] of [...workers.entries()].sort((a, b) => a[0] - b[0])) {
      const series = w.report && w.report.series ? w.report.series : {};
      for (const name of Object.keys(series)) lines.push({ label: w.report.worker + " " + name, points: series[name] });
    }
    const steps = [...new Set(lines.flatMap((l) => l.points.map((p) => p[0])))].sort((a, b) => a - b);
    const index = new Map(steps.map((s, i) => [s, i]));
    const data = [steps, ...lines.map((l) => {
      const ys = steps.map(() => null);
      for (const [s, v] of l.points) ys[index.get(s)] = v;
      return ys;
    })];
    const key = lines.map((l) => l.label).join("|");
    if (!state.plot || state.key !== key) {
      if (state.plot) state.plot.destroy();
      state.key = key;
      state.plot = new uPlot({
        width: 460, height: 240, scales: { x: { time: false } },
        series: [{ label: "step" }, ...lines.map((l, i) => ({ label: l.label, stroke: palette(i), width: 2, spanGaps: true }))],
        axes: [{}, { size: 60 }],
      }, data, state.element);
    } else {
      state.plot.setData(data);
    }
    state.element.dataset.points = String(steps.length);
  }

  function onReport(rank, report) {
    const w = workers.get(rank) || { rank };
    w.previous = w.report;
    w.report = report;
    if (w.previous && w.previous.pid !== report.pid) {
      // the rank was started again: its counters start from zero, so no rate against the old process's
      w.previous = undefined;
      w.rate = undefined;
      w.peerRates = undefined;
    }
    if (w.previous && report.timeMs > w.previous.timeMs) {
      const dt = (report.timeMs - w.previous.timeMs) / 1000;
      const sent = (r) => Object.values(r.peers || {}).reduce((sum, p) => sum + p.sent, 0);
      w.rate = (sent(report) - sent(w.previous)) / dt;
      w.peerRates = new Map(Object.entries(report.peers || {}).map(([peer, p]) => {
        const before = (w.previous.peers || {})[peer];
        return [peer, (p.sent - (before ? before.sent : 0)) / dt];
      }));
    }
    workers.set(rank, w);
  }

  function onCluster(cluster) {
    events++;
    document.body.dataset.events = String(events);
    for (const p of cluster.workers) {
      const w = workers.get(p.rank) || { rank: p.rank };
      w.process = p;
      workers.set(p.rank, w);
    }
    renderWorkers();
    renderErrors();
    const t = cluster.timeMs / 1000;
    const rates = new Map();
    const latency = new Map();
    for (const w of workers.values()) {
      // a process gone, or started again and not yet reporting, makes no calls: its last report's rates are old
      if (!w.process || w.process.state === "gone" || w.process.state === "starting") continue;
      for (const [peer, rate] of (w.peerRates || new Map())) {
        if (((w.report.peers || {})[peer] || {}).sent > 0) rates.set(peer, (rates.get(peer) || 0) + rate);
      }
      for (const [peer, p] of Object.entries((w.report && w.report.peers) || {})) {
        if (p.windowCalls > 0) {
          latency.set(peer + " p50", Math.max(latency.get(peer + " p50") || 0, p.p50Us / 1000));
          latency.set(peer + " p99", Math.max(latency.get(peer + " p99") || 0, p.p99Us / 1000));
        }
      }
    }
    const calls = charts["calls-chart"];
    push(calls, t, rates);
    calls.element.dataset.lastTotal = String([...rates.values()].reduce((a, b) => a + b, 0));
    const lat = charts["latency-chart"];
    lat.pairs = true;
    const ordered = new Map([...latency.entries()].sort());
    push(lat, t, ordered);
    seriesChart(charts["series-chart"], t);
    const alive = cluster.workers.filter((p) => p.state !== "gone").length;
    document.getElementById("summary").textContent = cluster.workers.length + " workers, " + alive + " alive";
  }

  function renderWorkers() {
    const body = document.querySelector("#workers tbody");
    body.textContent = "";
    for (const w of [...workers.values()].sort((a, b) => a.rank - b.rank)) {
      const p = w.process || {};
      const r = w.report || {};
      // The launcher's view first (gone, starting, unresponsive), else what the worker says; a worker
      // whose last report said it closed and has stopped reporting is shutting down, not unresponsive.
      const closed = r.state === "CLOSED" || r.state === "SHUTTING_DOWN";
      const state = p.state === "gone" ? "gone" : p.state === "reporting" || (p.state === "unresponsive" && closed)
        ? (r.state || "reporting").toLowerCase().replace("_", " ") : p.state;
      const row = document.createElement("tr");
      row.dataset.rank = String(w.rank);
      row.dataset.state = p.state || "starting";
      if (p.state === "gone") row.className = "gone";
      cell(row, r.rank !== undefined ? r.rank : w.rank, "num"); // the global rank, on any node
      cell(row, r.worker || "worker " + (w.rank + 1) + " of this node");
      const badge = document.createElement("span");
      badge.className = "badge state-" + (p.state || "starting");
      badge.textContent = p.state === "gone" ? "gone (exit " + p.exitCode + (p.exitCode === 137 ? ", killed" : "") + ")" : state;
      cell(row, "").appendChild(badge);
      cell(row, r.host);
      cell(row, p.pid > 0 ? p.pid : r.pid, "num");
      cell(row, p.incarnation, "num");
      cell(row, w.rate === undefined || p.state === "gone" || p.state === "starting" ? "" : w.rate.toFixed(0), "num");
      cell(row, r.inFlight, "num");
      cell(row, r.activeRequests, "num");
      cell(row, r.queued, "num");
      cell(row, r.rrefsOwned, "num");
      cell(row, r.rrefForks, "num");
      cell(row, p.reportAgeMs >= 0 ? (p.reportAgeMs / 1000).toFixed(1) + " s ago" : "never", "num");
      body.appendChild(row);
    }
  }

  function renderErrors() {
    const all = [];
    for (const w of workers.values()) {
      for (const e of ((w.report && w.report.errors) || [])) all.push(Object.assign({ seenBy: w.report.worker }, e));
    }
    all.sort((a, b) => b.timeMs - a.timeMs);
    const body = document.querySelector("#errors tbody");
    body.textContent = "";
    for (const e of all.slice(0, 20)) {
      const row = document.createElement("tr");
      cell(row, new Date(e.timeMs).toLocaleTimeString());
      cell(row, e.seenBy);
      cell(row, e.side);
      cell(row, e.peer);
      cell(row, e.function);
      cell(row, e.type);
      cell(row, e.worker);
      cell(row, e.message, "message");
      body.appendChild(row);
    }
  }

  chart("calls-chart", "/s");
  chart("latency-chart", " ms");
  charts["series-chart"] = { element: document.getElementById("series-chart") };

  const source = new EventSource("/api/events");
  const connection = document.getElementById("connection");
  source.onopen = () => { connection.textContent = "live"; connection.className = "badge online"; };
  source.onerror = () => { connection.textContent = "offline"; connection.className = "badge"; };
  source.addEventListener("cluster", (event) => onCluster(JSON.parse(event.data)));
  source.addEventListener("report", (event) => {
    const newline = event.data.indexOf("\n");
    const rank = Number(event.data.substring(0, newline));
    try {
      onReport(rank, JSON.parse(event.data.substring(newline + 1)));
    } catch (e) {
      console.warn("worker " + rank + " sent a report that is not JSON", e);
    }
  });
})();
