// Queue detail: partitions with offsets, lag and per-group cursors, a test message push, the configuration (a form
// of Queen's options, or raw JSON), delete. A queue that does not exist is one empty state with the ways to make it.
import { get, del, enc, can, describe, ApiError } from '../api.js';
import { h, clear, table, section, num, fmtAge, when, link, notice, typedConfirm } from '../ui.js';
import { barChart } from '../chart.js';
import { configureForm, createQueueDrawer, pushDrawer, pushForm } from '../forms.js';
import { committed } from './groups.js';

/** The queue's options, or null when the broker has no queue of that name (404 Queue not found). */
async function optionsOf(name) {
  try {
    const q = await get('/api/v1/resources/queues/' + enc(name) + '?limit=1');
    return q.options || {};
  } catch (e) {
    if (e instanceof ApiError && e.status === 404 && !e.missingRoute) return null;
    throw e;
  }
}

function missing(main, name) {
  // once the queue exists, the page is rendered again (the router reads the same address)
  const reopen = () => window.dispatchEvent(new HashChangeEvent('hashchange'));
  clear(main,
    h('h1', null, 'Queue ', h('code', { id: 'queue-name' }, name)),
    h('section', { class: 'card empty', id: 'queue-empty' },
      h('p', null, h('b', null, `There is no queue named “${name}”.`)),
      h('p', { class: 'muted' }, 'It was deleted, or never created. A queue is created by configuring it '
        + '(POST /api/v1/configure) or by its first push.'),
      can.write() ? h('p', null,
        h('button', { type: 'button', class: 'primary', id: 'empty-create', onclick: () => createQueueDrawer(name, reopen) }, `Create ${name}`), ' ',
        h('button', { type: 'button', id: 'empty-push', onclick: () => pushDrawer(name, reopen) }, `Push a message to ${name}`)) : null,
      h('p', null, link('#/', '← all queues'))));
}

export async function render(main, params) {
  const name = params.get('name') || '';
  if (!name) { clear(main, h('p', { class: 'na' }, 'No queue named. Pick one on the Overview.')); return null; }
  let options;
  try {
    options = await optionsOf(name);
  } catch (e) {
    clear(main, h('h1', null, 'Queue ', h('code', { id: 'queue-name' }, name)), notice('error', describe(e)));
    return null;
  }
  if (options === null) {
    missing(main, name);
    // the queue made elsewhere meanwhile: the page becomes its detail
    const appeared = async () => {
      if (await optionsOf(name).catch(() => null) !== null) window.dispatchEvent(new HashChangeEvent('hashchange'));
    };
    return { refresh: appeared };
  }

  const parts = h('div', { id: 'partitions' });
  const chartEl = h('div', { id: 'lag-chart' });
  const depth = h('div', { id: 'depth' });
  const danger = h('div');
  clear(main,
    h('h1', null, 'Queue ', h('code', { id: 'queue-name' }, name)),
    h('p', null, link('#/messages?queue=' + enc(name), 'Browse messages'), ' · ',
      link('#/dlq?queue=' + enc(name), 'Dead letters')),
    h('section', { class: 'card' }, h('h2', null, 'Partitions'), parts, chartEl),
    h('section', { class: 'card' }, h('h2', null, 'Depth by readiness'), depth),
    can.write() ? h('div', { class: 'grid2' },
      h('section', { class: 'card' }, h('h2', null, 'Push a test message'), pushForm(name, () => refresh())),
      h('section', { class: 'card' }, h('h2', null, 'Configuration'), configureForm(name, options)))
      : h('section', { class: 'card' }, h('h2', null, 'Configuration'), h('pre', null, JSON.stringify(options, null, 2))),
    can.admin() ? h('section', { class: 'card' }, h('h2', null, 'Delete queue'), danger) : null);

  let chartKey = null;
  const loadParts = () => section(parts, async () => {
    const q = await get('/api/v1/status/queues/' + enc(name));
    const rows = q.partitions || [];
    // messages after the queue-mode cursor, per partition; drawn again only when they change
    const labels = rows.map((p) => p.name);
    const values = rows.map((p) => Number(p.lastOffset) - Math.max(Number(p.committed ?? -1), Number(p.logStart ?? 0) - 1));
    const key = JSON.stringify([labels, values]);
    if (key !== chartKey) {
      chartKey = key;
      clear(chartEl);
      if (rows.length) {
        barChart(chartEl, labels, values, { label: 'messages not yet consumed in queue mode',
          width: Math.min(1100, main.clientWidth - 60) });
      }
    }
    return table([
      { title: 'Partition', cell: (p) => p.name },
      { title: 'Last offset', num: true, cell: (p) => num(p.lastOffset) },
      { title: 'Log start', num: true, cell: (p) => num(p.logStart) },
      { title: 'Committed', num: true, cls: 'committed', cell: (p) => committed(p.committed) },
      { title: 'Pending', num: true, cls: 'pending', cell: (p) => num(p.messages.pending) },
      { title: 'In flight', num: true, cell: (p) => num(p.messages.processing) },
      { title: 'DLQ', num: true, cell: (p) => num(p.messages.deadLetter) },
      { title: 'Oldest waiting', num: true, cell: (p) => fmtAge(p.lag && p.lag.seconds) },
      { title: 'Last write', cell: (p) => when(p.lastWriteAt) },
    ], rows, (p) => ({ 'data-partition': p.name }), 'No partitions yet: the first push to this queue makes one.');
  });

  const loadDepth = () => section(depth, async () => {
    const d = await get('/api/v1/resources/queues/' + enc(name) + '/depth');
    return table([
      { title: 'Partition', cell: (p) => p.partition },
      { title: 'Pending', num: true, cell: (p) => num(p.pending) },
      { title: 'Processing', num: true, cell: (p) => num(p.processing) },
      { title: 'Ready', num: true, cell: (p) => num(p.ready) },
    ], d.partitions || [], null, 'No partitions yet.');
  });

  async function refresh() {
    // the queue deleted meanwhile (here or elsewhere): the page becomes its empty state
    const exists = await optionsOf(name).catch(() => ({})) !== null;
    if (!exists) { missing(main, name); return; }
    if (!main.contains(parts)) { window.dispatchEvent(new HashChangeEvent('hashchange')); return; }
    await Promise.all([loadParts(), loadDepth()]);
  }

  if (can.admin()) {
    const out = h('div', { id: 'queue-delete-outcome' });
    clear(danger, h('p', { class: 'muted' }, 'Deletes partitions, segments, cursors and dead letters of this queue.'),
      typedConfirm(name, 'Delete queue', async () => {
        try {
          const r = await del('/api/v1/resources/queues/' + enc(name));
          clear(out, notice(r.existed ? 'ok' : 'warn', r.existed ? 'Queue deleted.' : (r.message || 'Nothing was deleted.')));
        } catch (e) { clear(out, notice('error', describe(e))); }
      }, 'queue-delete'), out);
  }
  await Promise.all([loadParts(), loadDepth()]);
  return { refresh };
}
