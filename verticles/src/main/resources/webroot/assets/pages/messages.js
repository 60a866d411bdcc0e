// Message browser: the filters of GET /api/v1/messages, offset paging, and a detail drawer (payload, groups, traces).
import { get, qs, enc } from '../api.js';
import { h, clear, table, pager, section, fmtTime, when, preview, pretty, drawer, link, failure } from '../ui.js';
import { timeline } from './traces.js';

const PAGE = 50;
const STATUSES = ['', 'pending', 'processing', 'completed', 'dead_letter'];

function isoOrEmpty(v) { return v ? new Date(v).toISOString() : ''; }

export async function render(main, params) {
  const f = {
    queue: h('input', { id: 'f-queue', value: params.get('queue') || '' }),
    partition: h('input', { id: 'f-partition', value: params.get('partition') || '' }),
    namespace: h('input', { id: 'f-namespace', value: params.get('namespace') || '' }),
    task: h('input', { id: 'f-task', value: params.get('task') || '' }),
    status: h('select', { id: 'f-status' }, STATUSES.map((s) => h('option', { value: s }, s || 'any'))),
    from: h('input', { id: 'f-from', type: 'datetime-local' }),
    to: h('input', { id: 'f-to', type: 'datetime-local' }),
  };
  f.status.value = params.get('status') || '';
  const state = { offset: 0, limit: PAGE };
  const list = h('div', { id: 'message-list' });
  clear(main, h('h1', null, 'Messages'),
    h('form', { class: 'filters', id: 'message-filters', onsubmit: (e) => { e.preventDefault(); state.offset = 0; load(); } },
      Object.entries(f).map(([k, el]) => h('label', null, k, el)),
      h('button', { type: 'submit', class: 'primary', id: 'f-apply' }, 'Search')),
    h('p', { class: 'muted' }, 'Messages stay browsable while their dedup entry lives (at least 15 minutes); older ones are still stored and consumable.'),
    list);

  async function load() {
    await section(list, async () => {
      const body = await get('/api/v1/messages' + qs({
        queue: f.queue.value.trim(), partition: f.partition.value.trim(), namespace: f.namespace.value.trim(),
        task: f.task.value.trim(), status: f.status.value, from: isoOrEmpty(f.from.value), to: isoOrEmpty(f.to.value),
        limit: state.limit, offset: state.offset }));
      const rows = body.messages || [];
      return [table([
        { title: 'Created', cell: (m) => when(m.createdAt) },
        { title: 'Queue / partition', cell: (m) => m.queuePath || `${m.queue}/${m.partition}` },
        { title: 'Transaction', cell: (m) => h('code', null, m.transactionId ?? '—') },
        { title: 'Status', cell: (m) => m.status },
        { title: 'Payload', cell: (m) => m.payloadAvailable ? h('code', null, preview(m.payload)) : h('span', { class: 'na' }, 'segment gone') },
      ], rows, (m) => ({ class: 'clickable', 'data-txn': m.transactionId || '', onclick: () => detail(m) }),
      'No messages match.'), pager(state, rows.length, (off) => { state.offset = off; load(); })];
    });
  }
  if (f.queue.value || params.has('search')) load(); else clear(list, h('p', { class: 'muted' }, 'Pick filters and search.'));
}

/** The drawer of one message: payload, consumer groups, lease and trace timeline. */
export async function detail(m) {
  const body = drawer(`Message ${m.transactionId || ''}`);
  const traces = h('div');
  await section(body, async () => {
    const d = await get(`/api/v1/messages/${enc(m.partitionId)}/${enc(m.transactionId)}`);
    return [
      h('p', null, h('b', null, d.queuePath || d.queue), ` · ${d.status} · created ${fmtTime(d.createdAt)}`,
        d.leaseExpiresAt ? ` · lease until ${fmtTime(d.leaseExpiresAt)}` : ''),
      h('h3', null, 'Payload'), pretty(d.payload),
      d.errorMessage ? [h('h3', null, 'Error'), h('pre', null, d.errorMessage)] : null,
      h('h3', null, 'Consumer groups'),
      table([
        { title: 'Group', cell: (g) => g.name },
        { title: 'Consumed', cell: (g) => (g.consumed ? 'yes' : 'no') },
        { title: 'Lease', cell: (g) => when(g.leaseExpiresAt) },
      ], d.consumerGroups || [], null, 'No group has a cursor here.'),
      h('h3', null, 'Trace timeline'), traces,
      h('p', { class: 'muted' }, 'partition ', h('code', null, d.partitionId), ' · ',
        link(`#/traces?partitionId=${enc(d.partitionId)}&transactionId=${enc(d.transactionId)}`, 'open in Traces')),
    ];
  });
  try {
    const t = await get(`/api/v1/traces/${enc(m.partitionId)}/${enc(m.transactionId)}`);
    clear(traces, timeline(t.traces || []));
  } catch (e) {
    clear(traces, failure(e));
  }
}
