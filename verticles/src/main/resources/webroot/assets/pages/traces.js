// Traces: names (paged), the traces of one name, and one message's trace timeline.
import { get, qs, enc } from '../api.js';
import { h, clear, table, pager, section, fmtTime, when, link } from '../ui.js';

const PAGE = 50;

/** A timeline of trace events, oldest first, each with its offset from the first one. */
export function timeline(traces) {
  if (!traces.length) return h('p', { class: 'muted' }, 'No trace events.');
  const at = (t) => new Date(t.createdAt || t.created_at || 0).getTime();
  const sorted = [...traces].sort((a, b) => at(a) - at(b));
  const t0 = at(sorted[0]);
  return h('ol', { class: 'timeline' }, sorted.map((t) => h('li', null,
    h('b', null, t.eventType || t.event_type || 'event'), ` +${((at(t) - t0) / 1000).toFixed(3)} s · ${fmtTime(t.createdAt || t.created_at)}`,
    t.queue_name ? ` · ${t.queue_name}/${t.partition_name ?? ''}` : '',
    t.consumerGroup || t.consumer_group ? ` · ${t.consumerGroup || t.consumer_group}` : '',
    (t.traceNames || t.trace_names || []).length ? ` · ${(t.traceNames || t.trace_names).join(', ')}` : '',
    h('pre', null, JSON.stringify(t.data ?? t, null, 2)))));
}

export async function render(main, params) {
  const names = h('div', { id: 'trace-names' });
  const byName = h('div', { id: 'trace-by-name' });
  const byMsg = h('div', { id: 'trace-by-message' });
  const p = h('input', { id: 't-partition', placeholder: 'partition id', value: params.get('partitionId') || '' });
  const t = h('input', { id: 't-transaction', placeholder: 'transaction id', value: params.get('transactionId') || '' });
  clear(main, h('h1', null, 'Traces'),
    h('div', { class: 'grid2' },
      h('section', { class: 'card' }, h('h2', null, 'Trace names'), names),
      h('section', { class: 'card' }, h('h2', null, 'By message'),
        h('form', { class: 'filters', onsubmit: (e) => { e.preventDefault(); loadMessage(); } },
          h('label', null, 'partition id', p), h('label', null, 'transaction id', t), h('button', { type: 'submit' }, 'Show')),
        byMsg)),
    h('section', { class: 'card' }, h('h2', null, 'By name'), byName));

  const ns = { offset: 0, limit: PAGE };
  async function loadNames() {
    await section(names, async () => {
      const r = await get('/api/v1/traces/names' + qs({ limit: ns.limit, offset: ns.offset }));
      const rows = (r.trace_names || r.names || []).map((n) => (typeof n === 'string' ? { trace_name: n } : n));
      return [table([
        { title: 'Name', cell: (n) => link('#/traces?name=' + enc(n.trace_name), n.trace_name) },
        { title: 'Events', num: true, cell: (n) => n.trace_count ?? '' },
        { title: 'Messages', num: true, cell: (n) => n.message_count ?? '' },
        { title: 'Last seen', cell: (n) => when(n.last_seen) },
      ], rows, (n) => ({ 'data-trace-name': n.trace_name }), 'No traces recorded.'), pager(ns, rows.length, (o) => { ns.offset = o; loadNames(); })];
    });
  }
  const bs = { offset: 0, limit: PAGE };
  async function loadByName(name) {
    await section(byName, async () => {
      const r = await get(`/api/v1/traces/by-name/${enc(name)}` + qs({ limit: bs.limit, offset: bs.offset }));
      const rows = r.traces || [];
      return [h('p', null, h('code', null, name)), timeline(rows), pager(bs, rows.length, (o) => { bs.offset = o; loadByName(name); })];
    });
  }
  async function loadMessage() {
    if (!p.value.trim() || !t.value.trim()) { clear(byMsg, h('p', { class: 'muted' }, 'Give both ids.')); return; }
    await section(byMsg, async () => timeline((await get(`/api/v1/traces/${enc(p.value.trim())}/${enc(t.value.trim())}`)).traces || []));
  }
  loadNames();
  if (params.get('name')) loadByName(params.get('name')); else clear(byName, h('p', { class: 'muted' }, 'Pick a name.'));
  if (p.value && t.value) loadMessage();
}
