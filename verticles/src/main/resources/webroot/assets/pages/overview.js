// Overview: live throughput, the queue list with depth / in-flight / DLQ depth and oldest dead letter, lagging groups,
// node health, switches.
import { get, qs, enc, can } from '../api.js';
import { h, clear, table, pager, section, num, fmtAge, link, failure } from '../ui.js';
import { liveChart } from '../chart.js';
import { nodesTable } from './system.js';

const PAGE = 25;
const COUNTERS = {
  push: 'queen_messages_pushed_total',
  pop: 'queen_messages_popped_total',
  ack: 'queen_messages_acked_total',
  dlq: 'queen_messages_dead_lettered_total',
};

/** Sums each counter family of a Prometheus exposition (one node's counters). */
function counters(text) {
  const out = {};
  for (const line of text.split('\n')) {
    for (const [key, name] of Object.entries(COUNTERS)) {
      if (line.startsWith(name + ' ') || line.startsWith(name + '{')) {
        out[key] = (out[key] || 0) + Number(line.slice(line.lastIndexOf(' ') + 1));
      }
    }
  }
  return out;
}

async function prometheus() {
  const res = await fetch('/metrics/prometheus');
  if (!res.ok) throw new Error('metrics answered ' + res.status);
  return counters(await res.text());
}

/** How long ago an ISO time was, as text with the time itself as the title; '—' for none. */
function sinceIso(iso) {
  if (!iso) return '—';
  const at = Date.parse(iso);
  if (isNaN(at)) return String(iso);
  return h('span', { title: iso }, fmtAge(Math.max(0, (Date.now() - at) / 1000)));
}

export async function render(main, params) {
  const totals = h('div', { class: 'stats', id: 'totals' });
  const chartEl = h('div', { id: 'throughput-chart' });
  const rates = h('p', { class: 'muted', id: 'rates' }, 'Measuring…');
  const queuesEl = h('div', { id: 'queues-section' });
  const groupsEl = h('div');
  const nodesEl = h('div', { id: 'nodes-section' });
  const switchesEl = h('div');
  const filter = h('input', { id: 'q-filter', placeholder: 'exact queue name', value: params.get('queue') || '' });
  const state = { offset: Number(params.get('offset') || 0), limit: PAGE };

  clear(main,
    h('h1', null, 'Overview'),
    totals,
    h('section', { class: 'card' }, h('h2', null, 'Throughput (messages per second, this node)'), chartEl, rates),
    h('section', { class: 'card' }, h('h2', null, 'Queues'),
      h('form', { class: 'filters', onsubmit: (e) => { e.preventDefault(); state.offset = 0; loadQueues(); } },
        h('label', null, 'Queue', filter), h('button', { type: 'submit', id: 'q-apply' }, 'Filter')),
      queuesEl),
    h('div', { class: 'grid2' },
      h('section', { class: 'card' }, h('h2', null, 'Consumer groups lagging over a minute'), groupsEl),
      h('section', { class: 'card' }, h('h2', null, 'Nodes'), nodesEl),
      h('section', { class: 'card' }, h('h2', null, 'Maintenance switches'), switchesEl)));

  section(totals, async () => {
    const o = await get('/api/v1/resources/overview');
    const m = o.messages || {};
    const stat = (label, v, id) => h('div', { class: 'stat', id }, h('b', null, num(v)), h('span', null, label));
    return [stat('queues', o.queues, 'stat-queues'), stat('partitions', o.partitions), stat('pending', m.pending),
      stat('in flight', m.processing), stat('dead letters', m.deadLetter, 'stat-dlq')];
  });

  async function loadQueues() {
    await section(queuesEl, async () => {
      const body = await get('/api/v1/status/queues' + qs({ limit: state.limit, offset: state.offset,
        queue: filter.value.trim() }));
      const rows = body.queues || [];
      return [table([
        { title: 'Queue', cell: (q) => link('#/queue?name=' + enc(q.name), q.name) },
        { title: 'Partitions', num: true, cell: (q) => num(q.partitions) },
        { title: 'Depth', num: true, cls: 'depth', cell: (q) => num(q.messages.pending) },
        { title: 'In flight', num: true, cls: 'inflight', cell: (q) => num(q.messages.processing) },
        { title: 'DLQ', num: true, cls: 'dlq', cell: (q) => q.messages.deadLetter
          ? link('#/dlq?queue=' + enc(q.name), num(q.messages.deadLetter)) : '0' },
        { title: 'Oldest DLQ', num: true, cls: 'dlq-oldest', cell: (q) => sinceIso(q.dlqOldestAt) },
        { title: 'Oldest unconsumed', num: true, cell: (q) => fmtAge(q.lag && q.lag.maxSeconds) },
      ], rows, (q) => ({ 'data-queue': q.name }), 'No queues.'),
      pager(state, rows.length, (off) => { state.offset = off; loadQueues(); })];
    });
  }
  loadQueues();

  section(groupsEl, async () => {
    const groups = await get('/api/v1/consumer-groups/lagging' + qs({ minLagSeconds: 60 }));
    const top = groups.slice(0, 10);
    return [table([
      { title: 'Group', cell: (g) => link('#/groups?name=' + enc(g.name), g.name) },
      { title: 'Lag (msgs)', num: true, cell: (g) => num(g.totalLag) },
      { title: 'Lag (time)', num: true, cell: (g) => fmtAge(g.maxTimeLag) },
      { title: 'State', cell: (g) => g.state },
    ], top, null, 'No group lags by more than a minute.'),
    groups.length > top.length ? link('#/groups', `all ${groups.length} groups →`) : null];
  });

  section(nodesEl, async () => nodesTable((await get('/api/v1/system/nodes')).nodes || []));

  section(switchesEl, async () => {
    if (!can.admin()) return h('p', { class: 'na' }, 'Needs an admin token.');
    const m = await get('/api/v1/system/maintenance');
    const badge = (on) => h('span', { class: on ? 'badge on' : 'badge' }, on ? 'ON' : 'off');
    return [h('p', null, 'push maintenance ', badge(m.maintenanceMode), '  pop maintenance ', badge(m.popMaintenanceMode)),
      h('p', { class: 'muted' }, `spool: ${num(m.bufferedMessages)} buffered, ${m.bufferHealthy ? 'healthy' : 'unhealthy'} · `,
        link('#/system', 'switch on System page'))];
  });

  // live throughput: counter deltas of /metrics/prometheus every 2 s
  let chart = null;
  let last = null;
  async function tick() {
    try {
      const now = await prometheus();
      const t = Date.now() / 1000;
      if (last) {
        const dt = t - last.t;
        const r = Object.keys(COUNTERS).map((k) => Math.max(0, ((now[k] || 0) - (last.c[k] || 0)) / dt));
        if (!chart) chart = liveChart(chartEl, ['push/s', 'pop/s', 'ack/s', 'DLQ inflow/s'],
          { width: Math.min(1100, main.clientWidth - 60) });
        chart.push(t, r);
        rates.textContent = `push ${r[0].toFixed(1)}/s · pop ${r[1].toFixed(1)}/s · ack ${r[2].toFixed(1)}/s · `
          + `dead-lettered ${r[3].toFixed(1)}/s`;
      }
      last = { t, c: now };
    } catch (e) {
      clear(rates, failure(e));
    }
  }
  tick();
  const timer = setInterval(tick, 2000);
  return () => { clearInterval(timer); if (chart) chart.destroy(); };
}
