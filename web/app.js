/* app.js - the page of `taskscope dashboard` (docs/dashboard.md), plain JS,
 * no build step; draws with uPlot (window.uPlot, /static/uPlot.iife.min.js).
 *
 * Data: on load GET /api/processes and, per process, /api/history?id=ID;
 * then live from EventSource('/api/events'): `snapshot` {id, snapshot},
 * `process` (a process connected or went away), `ack` {id, ack}.  The
 * event stream is opened before the histories are asked for; a snapshot
 * that arrives while its process's history is loading waits in `pending`
 * and is applied after it when its seq is newer, so nothing is counted
 * twice.  /api/processes is read again every few seconds (drops, snapshot
 * counts, any `process` event missed while reconnecting).
 *
 * Memory is bounded: each process keeps at most MAX_POINTS samples of the
 * series the page draws (older ones are cut in blocks), and the running
 * counts of at most MAX_TYPES task types.
 *
 * Drawing is coalesced: events only mark the page dirty; a timer redraws
 * at most every REDRAW_MS.  The global charts put every process on the
 * dashboard's clock: a snapshot's x is its process's origin (the
 * dashboard's Unix time of the process's t = 0, in /api/processes and in
 * each snapshot event) plus its t, binned to the shortest sampling period
 * among the processes so that ranks sampled at the same moments meet in
 * one point.  The total (sum of throughput, mean of the others) counts a
 * process only while it lived: from its first sample to its last, or to
 * now while it is connected, holding its last value in between; a
 * finished process's line ends there and the total breaks where none
 * lived.  The legends show each line's value at the cursor, and its latest
 * value while the cursor is not on the chart (the value held, for a
 * process between its samples).
 *
 * The page shows the most recent process still connected (the highest id)
 * until the user picks one; when the one shown finishes it moves to the
 * most recent running one.
 *
 * Controls send POST /api/control with the token typed into the header
 * (kept in sessionStorage); a refusal shows its HTTP status (403: wrong
 * token); the program's acknowledgement (`ack`) is shown next to the
 * control it names, and the value the next snapshot reports beside it.
 *
 * window.tsDashboard exposes read-only views for tests (points per chart,
 * processes, the selected process's reported parameters).
 */
'use strict';
(function () {
  const MAX_POINTS = 3000; // samples kept per process and per line
  const MAX_TYPES = 64; // task types whose running counts are kept per process
  const REDRAW_MS = 50;
  const GLOBAL_POINTS = 600; // the global charts' x values: a minute at 10 snapshots/s // at most 20 redraws a second, soon after new points arrive
  const REFRESH_MS = 2000; // re-reading /api/processes
  const STALE_S = 3; // a connected process without a snapshot for this long is said so
  const SERIES = ['node.speed', 'node.efficiency', 'node.power', 'node.power_estimate', 'node.score',
    'tasks.ended_per_s', 'proc.cpu_cores_used', 'proc.rss_bytes',
    'sys.net_rx_bytes_per_s', 'sys.net_tx_bytes_per_s', 'proc.io_read_bytes_per_s', 'proc.io_write_bytes_per_s'];
  const COLORS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2',
    '#7f7f7f', '#bcbd22', '#17becf'];
  const TOTAL_COLOR = '#111';
  const TOKEN_KEY = 'taskscope.token';

  const $ = (id) => document.getElementById(id);
  const procs = new Map(); // id -> process record (newProc)
  let selectedId = null;
  let dirty = true;
  /* snapshot send time (wall, s) -> drawn: the latency the page measures */
  const drawnWall = [];
  const latencies = [];
  const arrivals = []; // the same, when the event reached the page
  const MAX_LATENCIES = 20000;
  let globalCharts = {}; // name -> uPlot
  let globalKey = null; // what the global charts were built for
  let globalDrawn = []; // the processes they draw, in their order
  let procCharts = {}; // name -> uPlot
  let procKey = null;
  let controlsKey = null;
  let controlRows = new Map(); // param name -> {row, input, out, reported, ack, touchedAt, kind}
  let breakKey = null;
  let lastSent = null; // {where: 'control'|'debug', name, at}
  let events = null;
  let hadError = false;

  /* ---- formatting ---- */
  function fmt(v) {
    if (v == null || !isFinite(v)) return '–';
    const a = Math.abs(v);
    if (a >= 1e9) return (v / 1e9).toFixed(2) + 'G';
    if (a >= 1e6) return (v / 1e6).toFixed(2) + 'M';
    if (a >= 1e4) return (v / 1e3).toFixed(1) + 'k';
    if (a >= 100 || Number.isInteger(v)) return v.toFixed(0);
    if (a >= 1) return v.toFixed(2);
    if (a === 0) return '0';
    return v.toPrecision(2);
  }
  function fmtBytes(v) {
    if (v == null || !isFinite(v)) return '–';
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let i = 0;
    while (Math.abs(v) >= 1024 && i < units.length - 1) { v /= 1024; i++; }
    return (i ? v.toFixed(1) : v.toFixed(0)) + ' ' + units[i];
  }
  function fmtParam(p, v) {
    if (v == null) return '–';
    if (p.kind === 'choice' && Array.isArray(p.choices)) return String(p.choices[v] ?? v);
    if (p.kind === 'int') return String(Math.round(v));
    return fmt(Number(v));
  }
  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'class') e.className = v;
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v);
    }
    for (const k of kids) e.append(k);
    return e;
  }

  /* ---- the data ---- */
  function newProc(id) {
    return {
      id, info: { id }, t: [], s: Object.fromEntries(SERIES.map((n) => [n, []])),
      running: new Map(), typeColors: new Map(), last: null, lastSeq: null, lastT: null, lastAt: 0, origin: null,
      loading: false, pending: [], color: COLORS[procs.size % COLORS.length], acks: new Map()
    };
  }
  function getProc(id) {
    let p = procs.get(id);
    if (!p) { p = newProc(id); procs.set(id, p); }
    return p;
  }
  function isNewer(p, snap) {
    if (typeof snap.seq === 'number' && typeof p.lastSeq === 'number') return snap.seq > p.lastSeq;
    return p.lastT == null || Number(snap.t) > p.lastT;
  }
  /* Appends one snapshot to p's columns (the x: snapshot.t); an older or
   * repeated one is ignored. */
  function addSnapshot(p, snap) {
    if (!snap || typeof snap !== 'object' || !isNewer(p, snap)) return;
    const t = Number(snap.t);
    p.last = snap;
    p.lastSeq = typeof snap.seq === 'number' ? snap.seq : p.lastSeq;
    p.lastAt = performance.now();
    if (typeof snap.wall === 'number') { // its latency on arrival and once drawn
      drawnWall.push(snap.wall);
      arrivals.push(Date.now() / 1000 - snap.wall);
      if (arrivals.length > MAX_LATENCIES) arrivals.splice(0, arrivals.length - MAX_LATENCIES);
    }
    if (!isFinite(t) || (p.lastT != null && t <= p.lastT)) return; // x must grow
    p.lastT = t;
    const n = p.t.length;
    p.t.push(t);
    const series = snap.series || {};
    for (const name of SERIES) {
      const v = series[name];
      p.s[name].push(typeof v === 'number' ? v : null);
    }
    const seen = new Set();
    for (const ty of Array.isArray(snap.types) ? snap.types : []) {
      if (!ty || typeof ty.name !== 'string' || seen.has(ty.name)) continue;
      seen.add(ty.name);
      if (typeof ty.color === 'string' && /^#[0-9a-fA-F]{6}$/.test(ty.color)) p.typeColors.set(ty.name, ty.color);
      let col = p.running.get(ty.name);
      if (!col) {
        if (p.running.size >= MAX_TYPES) continue;
        col = new Array(n).fill(null);
        p.running.set(ty.name, col);
      }
      col.push(runningOf(ty, series));
    }
    for (const [name, col] of p.running) if (!seen.has(name)) col.push(null);
    if (p.t.length > MAX_POINTS + 200) trim(p, p.t.length - MAX_POINTS);
    dirty = true;
  }
  /* A type's running tasks: the snapshot's "running", else the sampler's
   * concurrency.TYPE series. */
  function runningOf(ty, series) {
    if (typeof ty.running === 'number') return ty.running;
    const v = series && series['concurrency.' + ty.name];
    return typeof v === 'number' ? v : null;
  }
  function trim(p, cut) {
    p.t.splice(0, cut);
    for (const name of SERIES) p.s[name].splice(0, cut);
    for (const [name, col] of p.running) {
      col.splice(0, cut);
      if (col.every((v) => v == null)) p.running.delete(name);
    }
  }
  function mergeInfo(info) {
    if (!info || info.id == null) return null;
    const p = getProc(info.id);
    Object.assign(p.info, info);
    if (typeof info.origin === 'number') p.origin = info.origin;
    dirty = true;
    return p;
  }

  async function getJSON(url) {
    const r = await fetch(url, { cache: 'no-store' });
    if (!r.ok) throw new Error(url + ': HTTP ' + r.status);
    return r.json();
  }
  async function loadHistory(p) {
    p.loading = true;
    try {
      const hist = await getJSON('/api/history?id=' + encodeURIComponent(p.id));
      for (const snap of Array.isArray(hist) ? hist : []) addSnapshot(p, snap);
    } catch (e) {
      // a process that went away meanwhile has no history: its live snapshots still count
    }
    p.loading = false;
    for (const snap of p.pending) addSnapshot(p, snap);
    p.pending = [];
    dirty = true;
  }
  async function refreshProcesses(withHistory) {
    let list;
    try {
      list = await getJSON('/api/processes');
    } catch (e) {
      return;
    }
    for (const info of Array.isArray(list) ? list : []) {
      const known = procs.has(info.id);
      const p = mergeInfo(info);
      if (p && (!known || withHistory)) loadHistory(p);
    }
    autoSelect();
  }

  /* ---- the event stream ---- */
  function setConn(state, text) {
    const c = $('conn');
    c.dataset.state = state;
    c.textContent = text;
  }
  function parse(e) {
    try { return JSON.parse(e.data); } catch (err) { return null; }
  }
  function openEvents() {
    events = new EventSource('/api/events');
    events.onopen = () => {
      setConn('live', 'live');
      if (hadError) { // missed events while away: read everything again
        hadError = false;
        for (const p of procs.values()) { p.lastSeq = null; p.lastT = null; trim(p, p.t.length); }
        refreshProcesses(true);
      }
    };
    events.onerror = () => {
      hadError = true;
      setConn('down', events.readyState === EventSource.CLOSED ? 'disconnected' : 'reconnecting…');
    };
    events.addEventListener('snapshot', (e) => {
      const d = parse(e);
      if (!d || d.id == null) return;
      const known = procs.has(d.id);
      const p = getProc(d.id);
      if (typeof d.origin === 'number') p.origin = d.origin;
      if (!known) { loadHistory(p); refreshProcesses(false); }
      if (p.loading) p.pending.push(d.snapshot);
      else addSnapshot(p, d.snapshot);
    });
    events.addEventListener('process', (e) => {
      const d = parse(e);
      if (!d) return;
      const info = d.process && typeof d.process === 'object' ? Object.assign({ id: d.id }, d.process) : d;
      const known = procs.has(info.id);
      const p = mergeInfo(info);
      if (p && !known) loadHistory(p);
      autoSelect();
    });
    events.addEventListener('ack', (e) => {
      const d = parse(e);
      if (d && d.ack) showAck(d.id, d.ack);
    });
  }

  /* ---- charts ---- */
  function chartWidth(box) {
    return Math.max(260, (box.clientWidth || 600) - 4);
  }
  /* A chart; clock: x is the dashboard's Unix time (the global charts),
   * else seconds since the process started. */
  function makeChart(container, name, title, series, data, yfmt, clock) {
    const box = el('div', { class: 'chart', 'data-chart': name });
    container.append(box);
    const xfmt = clock ? fmtClock : (v) => v.toFixed(1);
    const opts = {
      title, width: chartWidth(box), height: 190,
      scales: { x: { time: !!clock } },
      /* a legend of many processes costs the page more than all its lines
       * (each redraw lays it out again): past 8 lines only the chart */
      legend: { live: true, show: series.length <= 9 },
      cursor: { drag: { x: true, y: false } },
      series: [{ label: clock ? 'time' : 't (s)', value: (u, v, si, idx) => fmtOr(legendValue(u, 0, idx), xfmt) }].concat(
        series.map((s) => Object.assign({
          spanGaps: true, points: { show: false }, width: 1.5,
          value: (u, v, si, idx) => yfmt(legendValue(u, si, idx))
        }, s))),
      axes: [clock ? { label: "time (the dashboard's clock)", labelSize: 18, size: 36, space: 70, // one line: 17:33:50
        values: (u, vals) => vals.map((v) => (v == null ? '' : new Date(v * 1000).toTimeString().slice(0, 8))) }
        : { label: 'seconds since start', labelSize: 18, size: 36 },
        { size: yfmt === fmtBytes ? 78 : 60, values: yfmt === fmtBytes ? (u, vals) => vals.map(yfmt) : tickValues }]
    };
    const c = new uPlot(opts, data, box);
    c.tsSpans = []; // per series: [first, last] index of its life, 'exact' (no value held), or none (all)
    return c;
  }
  function fmtOr(v, f) {
    return v == null || !isFinite(v) ? '–' : f(v);
  }
  /* A Unix time as the browser's time of day, to the tenth of a second. */
  function fmtClock(v) {
    const d = new Date(v * 1000);
    return d.toTimeString().slice(0, 8) + '.' + Math.floor(d.getMilliseconds() / 100);
  }
  /* What series si's legend shows at data index idx (null: the cursor is not
   * on the chart, the latest): its value there, else the value it holds
   * (its last one before idx) while it lives ([first, last] of c.tsSpans);
   * null outside its life.  (The legends used to show the values at the
   * last x, where a global chart's other processes have no sample: "–" for
   * a live process; and "–" everywhere from when the cursor left a chart,
   * which makes uPlot pass idx null, to the next data.) */
  function legendValue(u, si, idx) {
    const col = u.data && u.data[si];
    if (!col || !col.length) return null;
    const span = u.tsSpans && u.tsSpans[si];
    if (span === 'exact') return col[idx == null ? col.length - 1 : idx] ?? null;
    const first = Array.isArray(span) ? span[0] : 0;
    const last = Array.isArray(span) ? span[1] : col.length - 1;
    let i = idx == null ? last : idx;
    if (i > last || i < first) return null;
    for (; i >= first; i--) if (col[i] != null) return col[i];
    return null;
  }
  /* The y ticks: as many decimals as the ticks' spacing needs; k, M, G for large ones. */
  function tickValues(u, vals, axisIdx, space, incr) {
    const dec = Math.max(0, Math.min(6, -Math.floor(Math.log10(incr || 1))));
    return vals.map((v) => (v == null ? '' : Math.abs(v) >= 1e4 ? fmt(v) : v.toFixed(dec)));
  }
  /* New data for chart c (spans: its series' lives, see legendValue); the
   * legend follows (uPlot updates it after setData, with the cursor's index:
   * null, the latest values, while the cursor is not on the chart). */
  function setData(c, data, spans) {
    c.tsSpans = spans || [];
    c.setData(data);
  }
  function destroyAll(charts, container) {
    for (const c of Object.values(charts)) c.destroy();
    container.replaceChildren();
    return {};
  }

  const GLOBAL = [
    { name: 'speed', title: 'speed (node.speed)', get: (p) => p.s['node.speed'], agg: 'mean' },
    { name: 'efficiency', title: 'efficiency (node.efficiency)', get: (p) => p.s['node.efficiency'], agg: 'mean' },
    { name: 'power', title: 'power / maximum (node.power)', get: powerOf, agg: 'mean', power: true },
    { name: 'score', title: 'score (node.score)', get: (p) => p.s['node.score'], agg: 'mean' },
    { name: 'throughput', title: 'throughput, tasks ended/s (tasks.ended_per_s)', get: (p) => p.s['tasks.ended_per_s'], agg: 'sum' }
  ];
  function powerEstimated(p) {
    return p.s['node.power'].every((v) => v == null) && p.s['node.power_estimate'].some((v) => v != null);
  }
  function powerOf(p) {
    return powerEstimated(p) ? p.s['node.power_estimate'] : p.s['node.power'];
  }
  function procLabel(p) {
    const i = p.info;
    return 'rank ' + (i.rank ?? '?') + ' pid ' + (i.pid ?? '?') + (i.connected === false ? ' (finished)' : '');
  }
  /* The global x: every process's last GLOBAL_POINTS samples on the
   * dashboard's clock (origin + t), binned to the shortest sampling period
   * (the global view shows the recent past; a process's own charts keep
   * MAX_POINTS), with one more x just after each finished process's last
   * sample, where the total says who lived on (and breaks if none did).
   * Bounding it bounds the work of each redraw, which with many processes
   * decides how soon a new point shows. */
  function globalGrid(list) {
    let res = Infinity;
    for (const p of list) {
      const n = p.t.length;
      if (n < 2) continue;
      const d = [];
      for (let i = Math.max(1, n - 50); i < n; i++) d.push(p.t[i] - p.t[i - 1]);
      d.sort((a, b) => a - b);
      res = Math.min(res, d[d.length >> 1]);
    }
    if (!isFinite(res) || res <= 0) res = 0.1;
    res = Math.min(60, Math.max(0.001, res));
    const bins = new Set();
    const from = list.map((p) => Math.max(0, p.t.length - GLOBAL_POINTS));
    const binsOf = list.map((p, k) => {
      const out = new Array(p.t.length - from[k]);
      for (let i = from[k]; i < p.t.length; i++) {
        const b = Math.round((p.origin + p.t[i]) / res);
        bins.add(b);
        out[i - from[k]] = b;
      }
      if (p.info.connected === false && out.length) bins.add(out[out.length - 1] + 1);
      return out;
    });
    let sorted = Array.from(bins).sort((a, b) => a - b);
    if (sorted.length > GLOBAL_POINTS) sorted = sorted.slice(sorted.length - GLOBAL_POINTS);
    const pos = new Map(sorted.map((b, i) => [b, i]));
    return { xs: sorted.map((b) => b * res), pos, binsOf, from };
  }
  /* The chart's columns for spec: one per process (its samples in their
   * bins), then the total; and their spans for the legend.  A process lives
   * from its first sample to its last, or to the end while connected. */
  function globalData(grid, list, spec) {
    const n = grid.xs.length;
    const cols = list.map((p, k) => {
      const col = new Array(n).fill(null);
      const vals = spec.get(p);
      const bins = grid.binsOf[k], off = grid.from[k];
      for (let i = 0; i < bins.length; i++) {
        const at = grid.pos.get(bins[i]);
        if (at !== undefined && vals[i + off] != null) col[at] = vals[i + off];
      }
      return col;
    });
    const first = list.map((p, k) => grid.pos.get(grid.binsOf[k][0]) ?? 0);
    const last = list.map((p, k) => {
      if (p.info.connected !== false) return n - 1;
      return grid.pos.get(grid.binsOf[k][grid.binsOf[k].length - 1]) ?? -1;
    });
    const hold = new Array(list.length).fill(null);
    const total = new Array(n).fill(null);
    for (let j = 0; j < n; j++) {
      let sum = 0, count = 0;
      for (let k = 0; k < list.length; k++) {
        if (cols[k][j] != null) hold[k] = cols[k][j];
        if (j >= first[k] && j <= last[k] && hold[k] != null) { sum += hold[k]; count++; }
      }
      if (count) total[j] = spec.agg === 'sum' ? sum : sum / count;
    }
    const spans = [null].concat(list.map((p, k) => [first[k], last[k]]), ['exact']);
    return { data: [grid.xs].concat(cols, [total]), spans };
  }
  /* The processes the global charts draw: those with samples and an origin. */
  function globalList() {
    return Array.from(procs.values()).filter((p) => p.t.length && typeof p.origin === 'number');
  }
  function drawGlobal() {
    const container = $('global-charts');
    const list = globalList();
    const key = list.map((p) => p.id + '|' + procLabel(p) + '|' + powerEstimated(p)).join(';');
    if (key !== globalKey) {
      globalCharts = destroyAll(globalCharts, container);
      globalKey = key;
      for (const spec of GLOBAL) {
        const anyEst = spec.power && list.some(powerEstimated);
        const series = list.map((p) => ({
          label: procLabel(p) + (spec.power && powerEstimated(p) ? ' (estimate, node.power_estimate)' : ''),
          stroke: p.color, dash: spec.power && powerEstimated(p) ? [6, 3] : undefined
        }));
        // the total breaks where no process lived
        series.push({ label: (spec.agg === 'sum' ? 'total' : 'mean') + (anyEst ? ' (estimate)' : ''), stroke: TOTAL_COLOR, width: 3, spanGaps: false });
        const title = anyEst ? 'power / maximum, estimated (node.power_estimate)' : spec.title;
        globalCharts[spec.name] = makeChart(container, 'global.' + spec.name, title, series,
          [[]].concat(series.map(() => [])), fmt, true);
      }
    }
    globalDrawn = list;
    const grid = globalGrid(list);
    for (const spec of GLOBAL) {
      const g = globalData(grid, list, spec);
      setData(globalCharts[spec.name], g.data, g.spans);
    }
  }

  function drawProcess() {
    const p = procs.get(selectedId);
    const container = $('proc-charts');
    if (!p) { procCharts = destroyAll(procCharts, container); procKey = null; return; }
    const types = Array.from(p.running.keys());
    // a type's colour is the pictures' (the snapshot's "color": by self time,
    // waits grey, src/export/palette.c); the chart is made again when one changes
    const typeColor = (name, i) => p.typeColors.get(name) || COLORS[i % COLORS.length];
    const key = p.id + '#' + types.map((name, i) => name + '=' + typeColor(name, i)).join('|');
    if (key !== procKey) {
      procCharts = destroyAll(procCharts, container);
      procKey = key;
      procCharts.cpu = makeChart(container, 'proc.cpu', 'CPU cores used (proc.cpu_cores_used)',
        [{ label: 'cores', stroke: p.color, fill: p.color + '22' }], [[], []], fmt);
      procCharts.memory = makeChart(container, 'proc.memory', 'memory, resident (proc.rss_bytes)',
        [{ label: 'rss', stroke: p.color, fill: p.color + '22' }], [[], []], fmtBytes);
      procCharts.network = makeChart(container, 'proc.network', 'network, bytes/s (the node: sys.net_rx/tx_bytes_per_s)',
        [{ label: 'received', stroke: COLORS[0] }, { label: 'sent', stroke: COLORS[1] }], [[], [], []], fmtBytes);
      procCharts.io = makeChart(container, 'proc.io', 'I/O, bytes/s (proc.io_read/write_bytes_per_s)',
        [{ label: 'read', stroke: COLORS[2] }, { label: 'written', stroke: COLORS[3] }], [[], [], []], fmtBytes);
      procCharts.concurrency = makeChart(container, 'proc.concurrency', 'running tasks by type',
        types.map((name, i) => ({ label: name, stroke: typeColor(name, i) })),
        [[]].concat(types.map(() => [])), fmt);
    }
    setData(procCharts.cpu, [p.t, p.s['proc.cpu_cores_used']]);
    setData(procCharts.memory, [p.t, p.s['proc.rss_bytes']]);
    setData(procCharts.network, [p.t, p.s['sys.net_rx_bytes_per_s'], p.s['sys.net_tx_bytes_per_s']]);
    setData(procCharts.io, [p.t, p.s['proc.io_read_bytes_per_s'], p.s['proc.io_write_bytes_per_s']]);
    setData(procCharts.concurrency, [p.t].concat(types.map((name) => p.running.get(name))));
  }

  /* ---- tables ---- */
  /* "finished": its connection ended (a process that reconnects comes back
   * as a new one). */
  function stateOf(p) {
    if (p.info.connected === false) return 'finished';
    const dbg = p.last && p.last.debug;
    if (dbg && dbg.paused) return 'connected, paused';
    return 'connected';
  }
  /* The table is rebuilt at most every TABLE_MS (with many processes a
   * rebuild per redraw cost more than the charts), at once when the
   * selection changed. */
  const TABLE_MS = 500;
  let tableAt = -Infinity, tableSelected = null;
  function drawProcessTable() {
    const now = performance.now();
    if (now - tableAt < TABLE_MS && tableSelected === selectedId) return;
    tableAt = now;
    tableSelected = selectedId;
    const body = $('proc-table').querySelector('tbody');
    const rows = [];
    for (const p of procs.values()) {
      const i = p.info;
      const tr = el('tr', { 'data-id': String(p.id), 'data-state': i.connected === false ? 'finished' : 'connected',
        class: (p.id === selectedId ? 'selected ' : '') + (i.connected === false ? 'finished' : '') },
        el('td', {}, el('span', { class: 'swatch', style: 'background:' + p.color }), String(p.id)),
        el('td', {}, String(i.pid ?? '')), el('td', {}, String(i.rank ?? '') + (i.nranks ? '/' + i.nranks : '')),
        el('td', {}, String(i.host ?? '')), el('td', {}, String(i.program ?? '')),
        el('td', { class: 'state' }, stateOf(p)),
        el('td', { class: 'n' }, String(i.snapshots ?? p.t.length)),
        el('td', { class: 'n' + (i.drops ? ' warn' : '') }, String(i.drops ?? (p.last ? p.last.drops ?? 0 : 0))),
        el('td', { class: 'n' }, p.lastT != null ? p.lastT.toFixed(1) : (i.last_t != null ? Number(i.last_t).toFixed(1) : '')));
      tr.addEventListener('click', () => select(p.id, true));
      rows.push(tr);
    }
    body.replaceChildren(...rows);
    $('proc-empty').hidden = procs.size > 0;
  }
  function drawDetailTables(p) {
    const snap = p.last || {};
    const types = Array.isArray(snap.types) ? snap.types : [];
    $('types-table').querySelector('tbody').replaceChildren(...types.map((ty) => el('tr', {},
      el('td', { class: 'name' }, el('span', { class: 'swatch', style: 'background:' + (p.typeColors.get(ty.name) || 'transparent') }),
        String(ty.name)), el('td', {}, fmt(ty.calls)), el('td', {}, fmtNum(ty.self_s)),
      el('td', {}, fmtNum(ty.total_s)), el('td', {}, fmt(runningOf(ty, snap.series))))));
    // the runtime's own counters first; those that repeat a sampler series below them
    const counters = snap.counters && typeof snap.counters === 'object' ? Object.entries(snap.counters) : [];
    const series = snap.series && typeof snap.series === 'object' ? snap.series : {};
    const row = ([k, v]) => el('tr', {}, el('td', { class: 'name' }, k),
      el('td', {}, typeof v === 'number' ? fmt(v) : String(v)));
    $('counters-table').querySelector('tbody').replaceChildren(...counters.filter(([k]) => !(k in series)).map(row));
    const sampled = Object.entries(series);
    $('series-count').textContent = String(sampled.length);
    $('series-table').querySelector('tbody').replaceChildren(...sampled.map(row));
  }
  function fmtNum(v) {
    return typeof v === 'number' ? v.toFixed(3) : '–';
  }

  /* ---- selection ---- */
  let chosen = false; // the user picked a process: the page no longer picks
  /* byUser: a click (or a test); else the page's own choice (autoSelect). */
  function select(id, byUser) {
    if (!procs.has(id)) return;
    if (byUser) chosen = true;
    selectedId = id;
    controlsKey = null;
    breakKey = null;
    dirty = true;
    redraw();
  }

  /* Until the user picks a process: the most recent one still connected
   * (the highest id), when none is shown or the one shown has finished;
   * when none is connected, the most recent one. */
  function autoSelect() {
    if (chosen) return;
    const cur = procs.get(selectedId);
    if (cur && cur.info.connected !== false) return;
    let best = null;
    for (const p of procs.values()) if (p.info.connected !== false && (!best || p.id > best.id)) best = p;
    if (!best && !cur) for (const p of procs.values()) if (!best || p.id > best.id) best = p;
    if (best && best.id !== selectedId) select(best.id, false);
  }

  /* ---- controls ---- */
  function tokenValue() {
    return $('token').value.trim();
  }
  async function sendCommand(body, statusEl, sent) {
    const token = tokenValue();
    if (!token) {
      statusEl.textContent = 'type the token first (printed by taskscope dashboard)';
      statusEl.dataset.state = 'refused';
      return null;
    }
    const target = $('control-target').value === 'all' ? 'all' : selectedId;
    // before the request: a quick process acknowledges before fetch returns
    lastSent = Object.assign({ at: performance.now() }, sent);
    statusEl.textContent = 'sending…';
    statusEl.dataset.state = 'sending';
    let r, text;
    try {
      r = await fetch('/api/control', {
        method: 'POST', headers: { 'Content-Type': 'application/json' }, cache: 'no-store',
        body: JSON.stringify(Object.assign({ token, process: target }, body))
      });
      text = await r.text();
    } catch (e) {
      lastSent = null;
      statusEl.textContent = 'request failed: ' + e.message;
      statusEl.dataset.state = 'refused';
      return null;
    }
    statusEl.dataset.status = String(r.status);
    if (!r.ok) lastSent = null; // refused: no acknowledgement will come
    if (r.status === 403) {
      statusEl.textContent = 'HTTP 403: wrong token, nothing was sent';
      statusEl.dataset.state = 'refused';
      return r.status;
    }
    if (r.status === 404) {
      statusEl.textContent = 'HTTP 404: unknown process';
      statusEl.dataset.state = 'refused';
      return r.status;
    }
    if (!r.ok) {
      statusEl.textContent = 'HTTP ' + r.status + ': ' + text.slice(0, 200);
      statusEl.dataset.state = 'refused';
      return r.status;
    }
    let n = null;
    try { n = JSON.parse(text).sent; } catch (e) { /* an answer without a count */ }
    statusEl.textContent = 'HTTP ' + r.status + ': sent to ' + (n ?? '?') + ' process' + (n === 1 ? '' : 'es');
    statusEl.dataset.state = 'sent';
    return r.status;
  }
  function paramsKeyOf(params) {
    return JSON.stringify(params.map((p) => [p.name, p.kind, p.min, p.max, p.choices]));
  }
  function buildControls(params) {
    const box = $('controls');
    controlRows = new Map();
    const rows = params.map((p) => {
      const out = el('output', { class: 'val' }, fmtParam(p, p.value));
      const reported = el('span', { class: 'reported' }, 'reported: ' + fmtParam(p, p.value));
      const ack = el('span', { class: 'ack', role: 'status' });
      const status = el('span', { class: 'status' });
      let input;
      if (p.kind === 'choice' && Array.isArray(p.choices)) {
        input = el('select', { name: p.name }, ...p.choices.map((c, i) => el('option', { value: String(i) }, String(c))));
        input.value = String(p.value);
      } else {
        const ranged = isFinite(p.min) && isFinite(p.max) && p.max > p.min;
        const step = p.kind === 'int' ? 1 : ranged ? (p.max - p.min) / 200 : 'any';
        input = el('input', ranged ? { type: 'range', min: String(p.min), max: String(p.max), step: String(step), name: p.name }
          : { type: 'number', step: String(step), name: p.name });
        input.value = String(p.value);
      }
      const row = { row: null, input, out, reported, ack, status, touchedAt: 0, param: p };
      input.addEventListener('input', () => {
        row.touchedAt = performance.now();
        out.textContent = fmtParam(p, Number(input.value));
      });
      input.addEventListener('change', () => {
        row.touchedAt = performance.now();
        const v = Number(input.value);
        const body = p.kind === 'choice' ? { op: 'set_choice', name: p.name, choice: String(p.choices[v]) }
          : { op: 'set', name: p.name, value: v };
        ack.textContent = '';
        delete ack.dataset.ok;
        sendCommand(body, status, { where: 'control', name: p.name });
      });
      row.row = el('div', { class: 'control', 'data-param': p.name },
        el('label', {}, el('span', { class: 'pname' }, p.name), ' ', out), input,
        el('div', { class: 'meta' }, reported, ' ', ack), status);
      controlRows.set(p.name, row);
      return row.row;
    });
    box.replaceChildren(...rows);
    if (!params.length) box.replaceChildren(el('p', { class: 'muted' }, 'this process reports no parameters'));
  }
  function updateControls(p) {
    const params = p && p.last && Array.isArray(p.last.params) ? p.last.params : [];
    const key = paramsKeyOf(params);
    if (key !== controlsKey) { controlsKey = key; buildControls(params); }
    const now = performance.now();
    for (const prm of params) {
      const row = controlRows.get(prm.name);
      if (!row) continue;
      row.param = prm;
      row.reported.textContent = 'reported: ' + fmtParam(prm, prm.value);
      row.reported.dataset.value = String(prm.value);
      if (document.activeElement !== row.input && now - row.touchedAt > 3000) {
        row.input.value = String(prm.value);
        row.out.textContent = fmtParam(prm, prm.value);
      }
    }
  }
  function showAck(procId, ack) {
    const p = procs.get(procId);
    const who = p ? 'pid ' + (p.info.pid ?? '?') : 'process ' + procId;
    const text = (ack.ok === false ? '✗ ' : '✓ ') + who + ': ' + String(ack.text ?? '');
    if (p) p.acks.set(ack.id, ack);
    // the control the acknowledgement names, else where the last command came from
    let target = null;
    const names = Array.from(controlRows.keys()).sort((a, b) => b.length - a.length);
    const atext = String(ack.text ?? '');
    for (const n of names) if (atext.includes(n)) { target = controlRows.get(n).ack; break; }
    if (!target && lastSent && performance.now() - lastSent.at < 10000) {
      if (lastSent.where === 'debug') target = $('debug-ack');
      else if (controlRows.has(lastSent.name)) target = controlRows.get(lastSent.name).ack;
    }
    if (!target) target = $('control-status');
    target.textContent = text;
    target.dataset.ok = String(ack.ok !== false);
  }

  /* ---- debugger ---- */
  function updateDebugger(p) {
    const snap = p && p.last;
    const dbg = snap && snap.debug;
    let text;
    if (!p) text = '–';
    else if (p.info.connected === false) text = 'finished';
    else if (!dbg) text = 'not reported by this process';
    else if (dbg.paused) text = 'paused (' + (dbg.held ?? 0) + ' task' + (dbg.held === 1 ? '' : 's') + ' held)';
    else {
      const quiet = (performance.now() - p.lastAt) / 1000;
      text = quiet > STALE_S ? 'running (no snapshot for ' + quiet.toFixed(0) + ' s)' : 'running';
    }
    if (dbg && dbg.break) text += ' · break on ' + dbg.break;
    if (dbg && dbg.hit) text += ' · stopped at a ' + dbg.hit + ' task';
    $('debug-state').textContent = text;
    $('debug-state').dataset.paused = String(!!(dbg && dbg.paused));
    const types = snap && Array.isArray(snap.types) ? snap.types.map((t) => String(t.name)) : [];
    const brk = dbg && dbg.break ? String(dbg.break) : '';
    if (brk && !types.includes(brk)) types.push(brk);
    const key = types.join('\n');
    const sel = $('dbg-break');
    if (key !== breakKey) {
      breakKey = key;
      const keep = sel.value;
      sel.replaceChildren(el('option', { value: '' }, '(none)'), ...types.map((n) => el('option', { value: n }, n)));
      sel.value = types.includes(keep) ? keep : '';
    }
    if (document.activeElement !== sel && (!lastSent || performance.now() - lastSent.at > 3000)) sel.value = brk;
  }
  function debugCommand(body) {
    $('debug-ack').textContent = '';
    return sendCommand(body, $('debug-status'), { where: 'debug', name: body.op });
  }


  /* ---- the task graph ---- */
  /* The type-level graph of the snapshot ([parent, child, tasks]) as SVG:
   * each type in the row of its shortest distance from the roots, filled
   * from yellow (little self time) to red (the most), as taskgraph.dot does;
   * edges labelled with their task counts, a loop for a type's own children. */
  const SVG = 'http://www.w3.org/2000/svg';
  function svg(tag, attrs, text) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
    if (text != null) e.textContent = text;
    return e;
  }
  let graphKey = null;
  function drawGraph(p) {
    const box = $('task-graph');
    const snap = p.last || {};
    const edges = Array.isArray(snap.graph) ? snap.graph.filter((e) => Array.isArray(e) && e.length === 3) : [];
    const self = new Map((Array.isArray(snap.types) ? snap.types : []).map((t) => [t.name, Number(t.self_s) || 0]));
    const key = p.id + JSON.stringify(edges) + JSON.stringify(Array.from(self));
    if (key === graphKey) return;
    graphKey = key;
    const names = new Set();
    for (const [a, b] of edges) { if (a !== '<root>') names.add(a); names.add(b); }
    if (!names.size) { box.replaceChildren(el('p', { class: 'muted' }, 'no tasks yet')); return; }
    const kids = new Map();
    for (const [a, b] of edges) { if (!kids.has(a)) kids.set(a, []); kids.get(a).push(b); }
    const depth = new Map();
    let frontier = (kids.get('<root>') || []).filter((n) => n !== '<root>');
    if (!frontier.length) frontier = [Array.from(names)[0]];
    for (const n of frontier) depth.set(n, 0);
    for (let d = 0; frontier.length; d++) {
      const next = [];
      for (const n of frontier) for (const c of kids.get(n) || []) if (!depth.has(c)) { depth.set(c, d + 1); next.push(c); }
      frontier = next;
    }
    let maxd = Math.max(0, ...depth.values());
    for (const n of names) if (!depth.has(n)) depth.set(n, ++maxd); // not reachable from a root
    const rows = [];
    for (const [n, d] of depth) (rows[d] = rows[d] || []).push(n);
    const W = 150, H = 34, GX = 40, GY = 60;
    const width = Math.max(...rows.map((r) => (r ? r.length : 0))) * (W + GX) + GX;
    const height = rows.length * (H + GY) + GY / 2;
    const pos = new Map();
    rows.forEach((r, d) => (r || []).forEach((n, i) => pos.set(n, { x: GX + i * (W + GX), y: GY / 2 + d * (H + GY) })));
    const most = Math.max(0, ...Array.from(names).map((n) => self.get(n) || 0));
    const root = svg('svg', { width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': 'task graph' });
    const defs = svg('defs');
    const marker = svg('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 10, refY: 5,
      markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' });
    marker.append(svg('path', { d: 'M 0 0 L 10 5 L 0 10 z', fill: '#555' }));
    defs.append(marker);
    root.append(defs);
    for (const [a, b, count] of edges) {
      if (a === '<root>' || !pos.has(a) || !pos.has(b)) continue;
      const s = pos.get(a), t = pos.get(b);
      let d, lx, ly;
      if (a === b) { // a loop on the box's right side
        d = `M ${s.x + W} ${s.y + 8} C ${s.x + W + 40} ${s.y - 10}, ${s.x + W + 40} ${s.y + H + 10}, ${s.x + W} ${s.y + H - 8}`;
        lx = s.x + W + 34; ly = s.y + H / 2 + 4;
      } else {
        const x1 = s.x + W / 2, y1 = s.y + H, x2 = t.x + W / 2, y2 = t.y;
        d = y2 > y1 ? `M ${x1} ${y1} L ${x2} ${y2}` : `M ${x1} ${s.y} C ${x1} ${s.y - 40}, ${x2} ${t.y + H + 40}, ${x2} ${t.y + H}`;
        lx = (x1 + x2) / 2 + 4; ly = (y1 + y2) / 2;
      }
      root.append(svg('path', { d, fill: 'none', stroke: '#555', 'marker-end': 'url(#arrow)', 'data-edge': a + '->' + b }));
      root.append(svg('text', { x: lx, y: ly, class: 'edge-label' }, fmt(count)));
    }
    for (const [n, at] of pos) {
      const share = most > 0 ? Math.min(1, Math.max(0, (self.get(n) || 0) / most)) : 0;
      const green = Math.round(255 * (1 - share));
      const g = svg('g', { 'data-type': n });
      g.append(svg('rect', { x: at.x, y: at.y, width: W, height: H, rx: 4, fill: `rgb(255,${green},0)`, stroke: '#333' }));
      g.append(svg('text', { x: at.x + W / 2, y: at.y + H / 2 + 4, 'text-anchor': 'middle',
        fill: share > 0.5 ? '#fff' : '#000', class: 'node-label' }, n.length > 22 ? n.slice(0, 21) + '…' : n));
      g.append(svg('title', {}, `${n}: self ${fmtNum(self.get(n) || 0)} s`));
      root.append(g);
    }
    box.replaceChildren(root);
  }

  /* ---- the redraw ---- */
  const redrawMs = []; // how long each redraw took (the page's own cost)
  function redraw() {
    if (!dirty) return;
    dirty = false;
    const began = performance.now();
    drawProcessTable();
    drawGlobal();
    const p = procs.get(selectedId);
    $('detail').hidden = !p;
    if (p) {
      $('detail-title').textContent = (p.info.program ?? '') + ' — rank ' + (p.info.rank ?? '?') + ', pid ' +
        (p.info.pid ?? '?') + (p.info.host ? ' on ' + p.info.host : '');
      $('detail-state').textContent = stateOf(p);
      $('detail-state').dataset.state = p.info.connected === false ? 'finished' : 'connected';
      drawProcess();
      drawDetailTables(p);
      updateControls(p);
      updateDebugger(p);
      drawGraph(p);
    }
    redrawMs.push(performance.now() - began);
    if (redrawMs.length > 1000) redrawMs.splice(0, redrawMs.length - 1000);
    const now = Date.now() / 1000;
    for (const w of drawnWall.splice(0)) latencies.push(now - w);
    if (latencies.length > MAX_LATENCIES) latencies.splice(0, latencies.length - MAX_LATENCIES);
  }

  function start() {
    if (typeof uPlot !== 'function') {
      setConn('down', 'uPlot did not load (/static/uPlot.iife.min.js): run scripts/web');
      return;
    }
    const tok = $('token');
    const fromHash = /(?:^#|&)token=([^&]+)/.exec(location.hash);
    if (fromHash) {
      sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(fromHash[1]));
      history.replaceState(null, '', location.pathname + location.search);
    }
    tok.value = sessionStorage.getItem(TOKEN_KEY) || '';
    tok.addEventListener('input', () => sessionStorage.setItem(TOKEN_KEY, tok.value.trim()));
    $('dbg-pause').addEventListener('click', () => debugCommand({ op: 'pause' }));
    $('dbg-resume').addEventListener('click', () => debugCommand({ op: 'resume' }));
    $('dbg-step').addEventListener('click', () => debugCommand({ op: 'step' }));
    $('dbg-break').addEventListener('change', (e) => {
      const v = e.target.value;
      debugCommand(v ? { op: 'break', type: v } : { op: 'clear_break' });
    });
    let resizeTimer = 0;
    window.addEventListener('resize', () => {
      clearTimeout(resizeTimer);
      resizeTimer = setTimeout(() => {
        for (const c of Object.values(globalCharts).concat(Object.values(procCharts))) {
          c.setSize({ width: chartWidth(c.root.parentNode), height: 190 });
        }
      }, 200);
    });
    openEvents();
    refreshProcesses(false);
    setInterval(redraw, REDRAW_MS);
    setInterval(() => { refreshProcesses(false); dirty = true; }, REFRESH_MS);
  }

  window.tsDashboard = {
    /* the number of x values a chart draws ('global.throughput', 'proc.cpu', ...), -1 for none */
    points(name) {
      const [group, chart] = name.split('.');
      const c = (group === 'global' ? globalCharts : procCharts)[chart];
      return c && c.data && c.data[0] ? c.data[0].length : -1;
    },
    charts: () => Object.keys(globalCharts).map((n) => 'global.' + n).concat(Object.keys(procCharts).map((n) => 'proc.' + n)),
    processes: () => Array.from(procs.values()).map((p) => Object.assign({ samples: p.t.length }, p.info)),
    selected: () => selectedId,
    select: (id) => select(id, true),
    /* a global chart's data as drawn ('throughput', ...): x (the dashboard's
     * Unix time), per process {id, label, values}, and the total (or mean) */
    global(name) {
      const c = globalCharts[name];
      if (!c || !c.data) return null;
      const list = globalDrawn;
      return {
        x: Array.from(c.data[0]),
        processes: list.map((p, k) => ({ id: p.id, label: c.series[k + 1].label, values: Array.from(c.data[k + 1]) })),
        total: Array.from(c.data[list.length + 1])
      };
    },
    /* the selected process's "running tasks by type" chart: [type, colour drawn] per series */
    typeStrokes() {
      const c = procCharts.concurrency;
      if (!c) return [];
      return c.series.slice(1).map((s, i) => [s.label, typeof s.stroke === 'function' ? s.stroke(c, i + 1) : s.stroke]);
    },
    /* a chart's legend as shown: [label, value text] per series */
    legend(name) {
      const [group, chart] = name.split('.');
      const c = (group === 'global' ? globalCharts : procCharts)[chart];
      if (!c) return null;
      return Array.from(c.root.querySelectorAll('.u-legend tr.u-series')).map((tr) => [
        (tr.querySelector('.u-label') || {}).textContent || '', (tr.querySelector('.u-value') || {}).textContent || '']);
    },
    /* the value the selected process's last snapshot reports for a parameter */
    param(name) {
      const p = procs.get(selectedId);
      const prm = p && p.last && Array.isArray(p.last.params) ? p.last.params.find((x) => x.name === name) : null;
      return prm ? prm.value : undefined;
    },
    lastSnapshot: () => { const p = procs.get(selectedId); return p ? p.last : null; },
    /* the task graph as drawn: its boxes (type names) and edges ("a->b") */
    graph: () => ({
      types: Array.from(document.querySelectorAll('#task-graph g[data-type]')).map((g) => g.dataset.type),
      edges: Array.from(document.querySelectorAll('#task-graph path[data-edge]')).map((e) => e.dataset.edge)
    }),
    /* seconds from each snapshot's "wall" (taken) to the redraw that drew it, oldest first */
    latencies: () => latencies.slice(),
    arrivals: () => arrivals.slice(),
    redrawMs: () => redrawMs.slice(),
    MAX_POINTS
  };

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
