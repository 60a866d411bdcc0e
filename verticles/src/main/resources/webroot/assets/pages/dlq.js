// Dead letters: list with filters, grouped by error signature, detail, replay (in place or elsewhere), delete,
// bulk purge (typed confirmation) and bulk redrive tasks with live progress. Every replay verdict of the contract is
// shown as its own outcome: moved, duplicate (row kept), gone, maintenance (503), failed, unknown.
import { get, post, del, qs, enc, can, describe, ApiError } from '../api.js';
import { h, clear, table, pager, section, fmtTime, when, zoneAt, preview, pretty, drawer, notice, typedConfirm, num } from '../ui.js';
import { redrivePanel } from './redrive.js';

const PAGE = 50;

/** An error text with ids, numbers and quoted values blanked, so the same failure groups under one signature. */
export function signature(text) {
  return String(text || '(no error text)')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '<id>')
    .replace(/"[^"]*"|'[^']*'/g, '<v>')
    .replace(/\b\d+(\.\d+)?\b/g, '<n>')
    .slice(0, 160);
}

/** What a replay answered, as one verdict: {result, kind, text, removeRow}. */
export function verdict(res, err) {
  if (res) {
    const at = res.replayedAs || {};
    if (res.result === 'duplicate') {
      return { result: 'duplicate', text: `duplicate: the destination already holds ${at.transaction_id} at offset ${at.offset}; nothing was written and the dead-letter row is kept.`, removeRow: false };
    }
    return { result: 'moved', text: `moved: replayed to ${res.queue}/${res.partition} at offset ${at.offset} as ${at.transaction_id}; the dead-letter row is removed.`, removeRow: true };
  }
  const b = (err && err.body) || {};
  if (err instanceof ApiError && err.status === 404) {
    return { result: 'gone', text: 'gone: this dead letter no longer exists (already replayed or purged). Nothing was replayed now.', removeRow: true };
  }
  if (err instanceof ApiError && err.status === 503) {
    return { result: 'maintenance', text: 'maintenance (503): push maintenance is on, so nothing may be written. The row is untouched; replay again once it is off.', removeRow: false };
  }
  if (err instanceof ApiError && err.status === 500 && b.dlqRowRemoved === null) {
    return { result: 'unknown', text: `unknown: ${b.error || err.message}. Reload the list: if the row is gone, the move happened.`, removeRow: false };
  }
  if (err instanceof ApiError && err.status === 500) {
    return { result: 'failed', text: `failed: ${b.error || err.message}. Nothing was replayed; the row is untouched.`, removeRow: false };
  }
  return { result: 'refused', text: describe(err), removeRow: false };
}

export async function render(main, params) {
  const f = {
    queue: h('input', { id: 'dlq-queue', value: params.get('queue') || '', placeholder: 'exact name' }),
    consumerGroup: h('input', { id: 'dlq-group', value: params.get('group') || '' }),
    partition: h('input', { id: 'dlq-partition', value: params.get('partition') || '', placeholder: 'exact name' }),
    error: h('input', { id: 'dlq-error', value: params.get('error') || '', placeholder: 'text, any case' }),
    from: h('input', { id: 'dlq-from', type: 'datetime-local', step: 1, title: `failed at or after (your local time, ${zoneAt()})` }),
    to: h('input', { id: 'dlq-to', type: 'datetime-local', step: 1, title: `failed before (your local time, ${zoneAt()})` }),
  };
  const state = { offset: 0, limit: PAGE };
  let stopRedrive = null;
  const outcome = h('div', { id: 'outcome', 'aria-live': 'polite' });
  const sigs = h('div', { id: 'signatures' });
  const list = h('div', { id: 'dlq-list' });
  const purge = h('div', { id: 'purge' });
  const redrive = h('div', { id: 'redrive' });
  clear(main, h('h1', null, 'Dead letters'),
    h('form', { class: 'filters', onsubmit: (e) => { e.preventDefault(); state.offset = 0; load(); } },
      h('label', null, 'queue', f.queue), h('label', null, 'consumer group', f.consumerGroup),
      h('label', null, 'partition', f.partition),
      h('label', null, 'error contains', f.error), h('label', null, `from (${zoneAt()})`, f.from), h('label', null, `to (${zoneAt()})`, f.to),
      h('button', { type: 'submit', class: 'primary', id: 'dlq-apply' }, 'Search')),
    outcome,
    h('section', { class: 'card' }, h('h2', null, 'By error signature'), sigs),
    h('section', { class: 'card' }, h('h2', null, 'Dead-lettered messages (newest first)'), list),
    can.admin() ? h('div', { class: 'grid2' },
      h('section', { class: 'card' }, h('h2', null, 'Bulk redrive'), redrive),
      h('section', { class: 'card' }, h('h2', null, 'Bulk purge of a queue'), purge)) : null);

  const show = (v, id) => clear(outcome, h('div', { class: 'outcome', 'data-result': v.result, 'data-dlq-id': id }, v.text));

  async function replay(row, tr, dest) {
    let v;
    try {
      v = verdict(await post(`/api/v1/dlq/${enc(row.id)}/replay`, dest || {}), null);
    } catch (e) {
      v = verdict(null, e);
    }
    show(v, row.id);
    if (v.removeRow) tr.remove();
    else if (v.result === 'duplicate') tr.classList.add('kept');
  }

  function actions(row) {
    if (!can.write()) return '';
    const stop = (fn) => (e) => { e.stopPropagation(); fn(e); };
    const cell = h('span');
    const replayBtn = h('button', { type: 'button', class: 'replay', onclick: stop((e) => replay(row, e.target.closest('tr'))) }, 'Replay');
    const toBtn = h('button', { type: 'button', class: 'replay-to', onclick: stop((e) => {
      const tr = e.target.closest('tr');
      const q = h('input', { class: 'dest-queue', placeholder: 'queue', value: row.queue });
      const p = h('input', { class: 'dest-partition', placeholder: 'partition', value: row.partition });
      const go = h('button', { type: 'button', class: 'dest-go primary', onclick: stop(() => {
        const dest = {};
        if (q.value.trim() !== row.queue) dest.queue = q.value.trim();
        if (p.value.trim() !== row.partition) dest.partition = p.value.trim();
        if (q.value.trim() === '' || p.value.trim() === '') { dest.queue = q.value; dest.partition = p.value; }
        replay(row, tr, dest);
      }) }, 'Replay there');
      clear(cell, q, p, go);
      q.addEventListener('click', (ev) => ev.stopPropagation());
      p.addEventListener('click', (ev) => ev.stopPropagation());
    }) }, 'Replay to…');
    const delBtn = h('button', { type: 'button', class: 'delete danger', onclick: stop(async (e) => {
      const btn = e.target;
      if (!btn.dataset.armed) { btn.dataset.armed = '1'; btn.textContent = 'Delete every group’s record?'; return; }
      const tr = btn.closest('tr');
      try {
        await del(`/api/v1/messages/${enc(row.partitionId)}/${enc(row.transactionId)}`);
        clear(outcome, h('div', { class: 'outcome', 'data-result': 'deleted', 'data-kind': 'ok' }, `deleted: dead-letter records of ${row.transactionId} removed.`));
        tr.remove();
      } catch (err) {
        const gone = err instanceof ApiError && err.status === 404;
        show(gone ? { result: 'gone', text: 'gone: no dead-letter row at this address any more.' } : { result: 'refused', text: describe(err) }, row.id);
        if (gone) tr.remove();
      }
    }) }, 'Delete');
    return clear(cell, replayBtn, ' ', toBtn, ' ', delBtn);
  }

  // The filters are the listing's own query parameters: the broker filters, the page shows what it answered.
  // datetime-local values are the operator's local time, as the table shows failure times; they travel as UTC instants.
  const utc = (v) => (v && !isNaN(new Date(v)) ? new Date(v).toISOString().replace('.000Z', 'Z') : '');
  const filters = () => ({ queue: f.queue.value.trim(), consumerGroup: f.consumerGroup.value.trim(),
    partition: f.partition.value.trim(), error: f.error.value.trim(), from: utc(f.from.value), to: utc(f.to.value) });

  async function load() {
    let page = [];
    await section(list, async () => {
      const body = await get('/api/v1/dlq' + qs({ ...filters(), limit: state.limit, offset: state.offset }));
      page = body.messages || [];
      const rows = page;
      return [table([
        { title: 'Failed at', cell: (r) => when(r.failedAt) },
        { title: 'Queue / partition', cell: (r) => `${r.queue}/${r.partition}` },
        { title: 'Group', cell: (r) => r.consumerGroup },
        { title: 'Transaction', cell: (r) => h('code', null, r.transactionId) },
        { title: 'Error', cell: (r) => r.errorMessage },
        { title: 'Retries', num: true, cell: (r) => num(r.retryCount) },
        { title: 'Payload', cell: (r) => h('code', null, preview(r.data, 40)) },
        { title: '', cell: actions },
      ], rows, (r) => ({ class: 'clickable', 'data-dlq-id': r.id, 'data-txn': r.transactionId, onclick: () => detail(r) }),
      'No dead letters match.'), pager(state, page.length, (off) => { state.offset = off; load(); })];
    });
    loadSignatures(page);
  }

  // Grouped by the broker over every matching dead letter (not only this page): queue, group and the time window of
  // the filters; without from, the 30 days before to (or now).
  // A signature's longest literal run becomes the error filter on click.
  async function loadSignatures(page) {
    await section(sigs, async () => {
      const { queue, consumerGroup, from, to } = filters();
      const since = from || new Date((to ? Date.parse(to) : Date.now()) - 30 * 86400e3).toISOString();
      try {
        const s = await get('/api/v1/analytics/dlq-signatures' + qs({ queue, consumerGroup, from: since, to, limit: 20 }));
        const rows = Array.isArray(s) ? s : s.signatures || [];
        const narrow = (sig) => String(sig).split(/<[a-z]+>/).map((x) => x.trim()).sort((a, b) => b.length - a.length)[0];
        return table([
          { title: 'Signature', cell: (r) => h('code', null, r.signature ?? '') },
          { title: 'Queues', cell: (r) => (Array.isArray(r.queues) ? r.queues.join(', ') : r.queue ?? '') },
          { title: 'Count', num: true, cls: 'sig-count', cell: (r) => num(r.count ?? r.total) },
          { title: 'Last seen', cell: (r) => when(r.lastSeen) },
        ], rows, (r) => ({ class: 'clickable', 'data-signature': r.signature, title: 'filter the list by this error',
          onclick: () => { f.error.value = narrow(r.signature); state.offset = 0; load(); } }), 'No dead letters.');
      } catch (e) {
        if (!(e instanceof ApiError && e.missingRoute)) throw e;
        const counts = new Map();
        for (const r of page) { const k = signature(r.errorMessage); counts.set(k, (counts.get(k) || 0) + 1); }
        const rows = [...counts.entries()].sort((a, b) => b[1] - a[1]);
        return [h('p', { class: 'na' }, 'Signature analytics are not available on this broker; grouped from this page only.'),
          table([{ title: 'Signature', cell: (r) => h('code', null, r[0]) }, { title: 'On this page', num: true, cell: (r) => num(r[1]) }],
            rows, null, 'No dead letters on this page.')];
      }
    });
  }

  function detail(r) {
    const body = drawer(`Dead letter ${r.transactionId}`);
    clear(body, h('p', null, `${r.queue}/${r.partition} · group ${r.consumerGroup} · failed ${fmtTime(r.failedAt)} · ${r.retryCount} retries`),
      h('h3', null, 'Error'), h('pre', null, r.errorMessage || '—'),
      h('h3', null, 'Payload'), pretty(r.data),
      h('p', { class: 'muted' }, 'row id ', h('code', null, r.id), ' · partition ', h('code', null, r.partitionId)));
  }

  if (can.admin()) {
    const pq = h('input', { id: 'purge-queue', placeholder: 'queue', value: f.queue.value });
    const pg = h('input', { id: 'purge-group', placeholder: 'all groups' });
    const confirmSlot = h('span');
    const out = h('div');
    const rearm = () => clear(confirmSlot, pq.value.trim() ? typedConfirm(pq.value.trim(), 'Purge', async () => {
      try {
        const r = await del('/api/v1/dlq' + qs({ queue: pq.value.trim(), consumerGroup: pg.value.trim() }));
        clear(out, notice('ok', `Purged ${num(r.deleted)} dead-letter rows of ${r.queue}.`, { id: 'purge-result' }));
        load();
      } catch (e) { clear(out, notice('error', describe(e), { id: 'purge-result' })); }
    }, 'purge') : h('span', { class: 'muted' }, ' name a queue'));
    pq.addEventListener('input', rearm);
    rearm();
    clear(purge, h('p', { class: 'muted' }, 'Deletes every dead letter of one queue (optionally one group). It cannot be undone.'),
      h('label', null, 'queue', pq), h('label', null, 'consumer group', pg), confirmSlot, out);
    stopRedrive = redrivePanel(redrive, f.queue.value.trim(), () => load());
  }

  load();
  return () => { if (stopRedrive) stopRedrive(); };
}

