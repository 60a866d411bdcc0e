// The overview's throughput chart: the last hour from the broker's per-minute history (GET
// /api/v1/analytics/workload: every node, this tenant), then extended live every 2 s from this node's counters
// (/metrics/prometheus deltas) until the next minutes reach the history. The history is read again every 30 s; a
// minute it has (flushed every QUEEN_STATS_FLUSH_MS) replaces the live points it covers.
import { get, qs } from './api.js';
import { h, clear, failure } from './ui.js';
import { timeChart } from './chart.js';

const NAMES = ['push/s', 'pop/s', 'ack/s', 'dead-lettered/s'];
const HISTORY_KEYS = ['pushMessages', 'popMessages', 'acked', 'dlq'];
const COUNTERS = ['queen_messages_pushed_total', 'queen_messages_popped_total', 'queen_messages_acked_total',
  'queen_messages_dead_lettered_total'];
const WINDOW_S = 3600;
const LIVE_MS = 2000;
const HISTORY_MS = 30000;

/** This node's message counters from its Prometheus page, in the order of COUNTERS (families summed over labels). */
async function counters() {
  const res = await fetch('/metrics/prometheus');
  if (!res.ok) throw new Error('metrics answered ' + res.status);
  const out = COUNTERS.map(() => 0);
  for (const line of (await res.text()).split('\n')) {
    COUNTERS.forEach((name, i) => {
      if (line.startsWith(name + ' ') || line.startsWith(name + '{')) out[i] += Number(line.slice(line.lastIndexOf(' ') + 1));
    });
  }
  return out;
}

/**
 * Mounts the chart in el and a line of current rates in ratesEl; returns {stop}. el carries what is drawn for tests
 * and tools: data-history-points, data-history-pushed (messages pushed in the history shown) and data-live-points.
 */
export function throughput(el, ratesEl, width) {
  const opened = Date.now() / 1000;
  const chart = timeChart(el, NAMES, { width, unit: 'messages / s', windowSeconds: WINDOW_S });
  const note = h('p', { class: 'muted', id: 'history-note' });
  el.after(note);
  let history = [];
  let live = [];
  let last = null;
  let historyAt = 0;

  function draw() {
    const end = history.length ? history[history.length - 1].t : 0;
    live = live.filter((p) => p.t > Math.max(end, Date.now() / 1000 - WINDOW_S));
    const points = [...history, ...live];
    chart.set([points.map((p) => p.t), ...NAMES.map((_, i) => points.map((p) => p.v[i]))]);
    el.dataset.livePoints = String(live.length);
  }

  async function loadHistory() {
    historyAt = Date.now();
    const from = new Date(Math.floor(historyAt / 60000) * 60000 - WINDOW_S * 1000);
    const at = historyAt / 1000;
    try {
      const body = await get('/api/v1/analytics/workload' + qs({ from: from.toISOString(),
        to: new Date(historyAt).toISOString(), points: 61 }));
      const width = body.bucketSeconds || 60;
      const out = [];
      for (const b of body.series || []) {
        const start = Date.parse(b.t) / 1000;
        const n = HISTORY_KEYS.map((k) => Number(b[k]) || 0);
        const closed = start + width <= at;
        // an empty minute that is still open, or that ended while the page was live, may just not be flushed yet:
        // the live points speak for it
        if (n.every((x) => x === 0) && (!closed || start + width > opened)) continue;
        const span = closed ? width : Math.max(1, at - start);
        out.push({ t: closed ? start + width : at, n, v: n.map((c) => c / span) });
      }
      history = out;
      el.dataset.historyPoints = String(out.length);
      el.dataset.historyPushed = String(out.reduce((s, p) => s + p.n[0], 0));
      clear(note, 'Per minute from the broker\'s history (all nodes), then live every 2 s from this node.');
      draw();
    } catch (e) {
      clear(note, failure(e));
    }
  }

  let busy = false;
  async function tick() {
    if (busy) return;
    busy = true;
    try {
      const now = await counters();
      const t = Date.now() / 1000;
      if (last) {
        const dt = Math.max(0.001, t - last.t);
        const v = now.map((c, i) => Math.max(0, (c - last.c[i]) / dt));
        live.push({ t, v });
        ratesEl.textContent = `now on this node: push ${v[0].toFixed(1)}/s · pop ${v[1].toFixed(1)}/s · `
          + `ack ${v[2].toFixed(1)}/s · dead-lettered ${v[3].toFixed(1)}/s`;
      }
      last = { t, c: now };
      if (Date.now() - historyAt >= HISTORY_MS) await loadHistory();
      else draw();
    } catch (e) {
      clear(ratesEl, failure(e));
    }
    busy = false;
  }

  const ready = loadHistory().then(tick);
  const timer = setInterval(tick, LIVE_MS);
  return { ready, stop() { clearInterval(timer); chart.destroy(); } };
}
