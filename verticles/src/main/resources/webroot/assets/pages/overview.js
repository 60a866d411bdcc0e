// Overview: throughput of the last hour (history, then live), the queue list with depth / in-flight / DLQ depth and
// oldest dead letter, lagging groups, node health, switches; create a queue or push a test message from here.
import { get, qs, enc, can } from '../api.js';
import { h, clear, table, pager, section, num, fmtAge, link } from '../ui.js';
import { throughput } from '../throughput.js';
import { createQueueDrawer, pushDrawer } from '../forms.js';
import { nodesTable } from './system.js';
import { groupState, groupName } from './groups.js';

const PAGE = 25;

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
  const rates = h('p', { class: 'muted', id: 'rates' }, 'Live rates: first reading in 2 s…');
  const queuesEl = h('div', { id: 'queues-section' });
  const groupsEl = h('div', { id: 'lagging-section' });
  const nodesEl = h('div', { id: 'nodes-section' });
  const switchesEl = h('div');
  const filter = h('input', { id: 'q-filter', placeholder: 'exact queue name', value: params.get('queue') || '' });
  // the filter applied (typing in the box changes nothing until Filter is pressed, refreshes included)
  const state = { offset: Number(params.get('offset') || 0), limit: PAGE, queue: filter.value.trim() };
  const changed = () => refresh();
  const createQueue = (name) => createQueueDrawer(name, changed);
  const pushMessage = (queue) => pushDrawer(queue, changed);
  const actions = can.write() ? h('div', { class: 'actions' },
    h('button', { type: 'button', class: 'primary', id: 'open-create-queue', onclick: () => createQueue('') }, 'Create queue'),
    h('button', { type: 'button', id: 'open-push', onclick: () => pushMessage('') }, 'Push a test message')) : null;

  clear(main,
    h('div', { class: 'title-row' }, h('h1', null, 'Overview'), actions),
    totals,
    h('section', { class: 'card' }, h('h2', null, 'Throughput, last hour (messages per second)'), chartEl, rates),
    h('section', { class: 'card' }, h('h2', null, 'Queues'),
      h('form', { class: 'filters', onsubmit: (e) => { e.preventDefault(); state.offset = 0; state.queue = filter.value.trim(); loadQueues(); } },
        h('label', null, 'Queue', filter), h('button', { type: 'submit', id: 'q-apply' }, 'Filter')),
      queuesEl),
    h('div', { class: 'grid2' },
      h('section', { class: 'card' }, h('h2', null, 'Consumer groups lagging a minute or more'), groupsEl),
      h('section', { class: 'card' }, h('h2', null, 'Maintenance switches'), switchesEl)),
    h('section', { class: 'card' }, h('h2', null, 'Nodes'), nodesEl));

  const loadTotals = () => section(totals, async () => {
    const overview = await get('/api/v1/resources/overview');
    const m = overview.messages || {};
    const stat = (label, v, id) => h('div', { class: 'stat', id }, h('b', null, num(v)), h('span', null, label));
    return [stat('queues', overview.queues, 'stat-queues'), stat('partitions', overview.partitions, 'stat-partitions'),
      stat('pending', m.pending, 'stat-pending'), stat('in flight', m.processing, 'stat-inflight'),
      stat('dead letters', m.deadLetter, 'stat-dlq')];
  });

  /** No queue at all: one empty state saying how a queue comes to be, with the two ways to make one. */
  const noQueues = () => h('div', { class: 'empty', id: 'no-queues' },
    h('p', null, h('b', null, 'No queues yet.')),
    h('p', { class: 'muted' }, 'A queue is created by configuring it (POST /api/v1/configure) or by its first push.'),
    can.write() ? h('p', null, h('button', { type: 'button', class: 'primary', onclick: () => createQueue('') }, 'Create a queue'), ' ',
      h('button', { type: 'button', onclick: () => pushMessage('') }, 'Push a test message')) : null);

  function loadQueues() {
    return section(queuesEl, async () => {
      const body = await get('/api/v1/status/queues' + qs({ limit: state.limit, offset: state.offset, queue: state.queue }));
      const rows = body.queues || [];
      if (!rows.length && !state.queue && state.offset === 0) return noQueues();
      return [table([
        { title: 'Queue', cell: (q) => link('#/queue?name=' + enc(q.name), q.name) },
        { title: 'Partitions', num: true, cell: (q) => num(q.partitions) },
        { title: 'Depth', num: true, cls: 'depth', cell: (q) => num(q.messages.pending) },
        { title: 'In flight', num: true, cls: 'inflight', cell: (q) => num(q.messages.processing) },
        { title: 'DLQ', num: true, cls: 'dlq', cell: (q) => q.messages.deadLetter
          ? link('#/dlq?queue=' + enc(q.name), num(q.messages.deadLetter)) : '0' },
        { title: 'Oldest DLQ', num: true, cls: 'dlq-oldest', cell: (q) => sinceIso(q.dlqOldestAt) },
        { title: 'Oldest unconsumed', num: true, cell: (q) => fmtAge(q.lag && q.lag.maxSeconds) },
      ], rows, (q) => ({ 'data-queue': q.name }), state.queue ? `No queue named ${state.queue}.` : 'No queues on this page.'),
      pager(state, rows.length, (off) => { state.offset = off; loadQueues(); })];
    });
  }

  const loadGroups = () => section(groupsEl, async () => {
    const groups = await get('/api/v1/consumer-groups/lagging' + qs({ minLagSeconds: 60 }));
    const top = groups.slice(0, 10);
    return [table([
      { title: 'Group', cell: (g) => groupName(g.name) },
      { title: 'Lag (msgs)', num: true, cell: (g) => num(g.totalLag) },
      { title: 'Oldest waiting', num: true, cell: (g) => fmtAge(g.maxTimeLag) },
      { title: 'State', cls: 'state', cell: (g) => groupState(g) },
    ], top, (g) => ({ 'data-group': g.name }), 'No group has a message waiting a minute or more.'),
    groups.length > top.length ? link('#/groups', `all ${groups.length} groups →`) : null];
  });

  const loadNodes = () => section(nodesEl, async () => nodesTable((await get('/api/v1/system/nodes')).nodes || []));

  const loadSwitches = () => section(switchesEl, async () => {
    if (!can.admin()) return h('p', { class: 'na' }, 'Needs an admin token.');
    const m = await get('/api/v1/system/maintenance');
    const badge = (on) => h('span', { class: on ? 'badge on' : 'badge' }, on ? 'ON' : 'off');
    return [h('p', null, 'push maintenance ', badge(m.maintenanceMode), '  pop maintenance ', badge(m.popMaintenanceMode)),
      h('p', { class: 'muted' }, `spool: ${num(m.bufferedMessages)} buffered, ${m.bufferHealthy ? 'healthy' : 'unhealthy'} · `,
        link('#/system', 'switch on System page'))];
  });

  function refresh() {
    return Promise.all([loadTotals(), loadQueues(), loadGroups(), loadNodes(), loadSwitches()]);
  }

  const chart = throughput(chartEl, rates, Math.min(1100, main.clientWidth - 60));
  await Promise.all([refresh(), chart.ready]);
  return { stop: chart.stop, refresh };
}
