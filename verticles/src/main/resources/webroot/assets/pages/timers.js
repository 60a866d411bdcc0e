// Timers: one queue's pending timers by key prefix, a page at a time (GET /api/v1/timers/:queue, keyset paged), a
// drawer that peeks one (its payload decoded from base64; an encrypted one is named, not shown), and a cancel after a
// confirmation. A timer leaves this list when it fires: its message is then in the queue.
import { get, post, qs, enc, can, describe } from '../api.js';
import { h, clear, table, section, when, pretty, drawer, notice, num, confirmButton, keysetPager, prefixFrame } from '../ui.js';

const PAGE = 50;

/**
 * One page of a queue's timers whose key starts with `prefix`: {rows, nextAfter}. The listing has no prefix filter, so
 * the first page peeks the key equal to the prefix and lists the keys after it; a page stops at the first key past
 * the prefix (keys are in byte order).
 */
export async function timerPage(queue, prefix, after) {
  const rows = [];
  if (prefix && after === null) {
    const exact = await get(`/api/v1/timers/${enc(queue)}/${enc(prefix)}`);
    if (exact.found) rows.push(exact);
  }
  const page = await get(`/api/v1/timers/${enc(queue)}` + qs({ after: after ?? (prefix || null), limit: PAGE }));
  const listed = page.rows || [];
  const inside = listed.filter((r) => r.timerKey.startsWith(prefix));
  rows.push(...inside);
  return { rows, nextAfter: page.truncated && inside.length === listed.length ? page.nextAfter : null };
}

/** A stored payload (base64) as JSON when it is UTF-8 JSON, else as text. */
export function decodePayload(b64) {
  const bytes = Uint8Array.from(atob(b64 || ''), (c) => c.charCodeAt(0));
  const text = new TextDecoder('utf-8').decode(bytes);
  try { return pretty(JSON.parse(text)); } catch { return h('pre', { class: 'payload' }, text); }
}

export async function render(main, params) {
  const queue = h('input', { id: 'timers-queue', list: 'timers-queues', placeholder: 'queue', value: params.get('queue') || '' });
  const known = h('datalist', { id: 'timers-queues' });
  const { prefix, out, list, trail } = prefixFrame(main, { id: 'timers', title: 'Timers', label: 'key prefix',
    placeholder: 'timer key prefix (any)', prefix: params.get('prefix'), before: h('label', null, 'queue', queue, known),
    note: 'Pending timers (POST /api/v1/timers): each pushes its message into the queue at its time, once. A queue need '
      + 'not exist yet: the first timer that fires creates it.' }, load);

  get('/api/v1/status/queues' + qs({ limit: 100 })).then((b) => clear(known,
    (b.queues || []).map((q) => h('option', { value: q.name })))).catch(() => {});

  const cancel = (q, r) => confirmButton('Cancel', `Cancel the timer ${r.timerKey}?`, async () => {
    try {
      const res = (await post('/api/v1/timers', { operations: [{ op: 'cancel', queue: q, timerKey: r.timerKey }] })).results[0];
      clear(out, res.ok
        ? notice('ok', `Cancelled ${r.timerKey}: it will not fire.`, { 'data-result': 'cancelled' })
        : notice('warn', `${r.timerKey} was no longer pending: it fired or was cancelled. Look for transaction `
          + `${r.txn} in ${q}.`, { 'data-result': 'absent' }));
    } catch (e) {
      clear(out, notice('error', describe(e)));
    }
    load();
  }, 'timer-cancel');

  async function load() {
    const q = queue.value.trim();
    if (!q) {
      clear(list, h('p', { class: 'muted', id: 'timers-pick' }, 'Name a queue to list its timers.'));
      return;
    }
    await section(list, async () => {
      const page = await timerPage(q, prefix.value, trail[trail.length - 1]);
      return [table([
        { title: 'Timer key', cell: (r) => h('code', null, r.timerKey) },
        { title: 'Partition', cell: (r) => r.partition },
        { title: 'Due', cell: (r) => when(r.deliverAt) },
        { title: 'Transaction', cell: (r) => h('code', null, r.txn) },
        { title: 'Attempts', num: true, cell: (r) => num(r.attempts) },
        { title: 'Last error', cell: (r) => r.lastError ?? '' },
        { title: '', cell: (r) => (can.write() ? cancel(q, r) : '') },
      ], page.rows, (r) => ({ class: 'clickable', 'data-timer': r.timerKey, onclick: () => peek(q, r.timerKey) }),
      prefix.value ? `No pending timer of ${q} starts with “${prefix.value}”.` : `${q} has no pending timers.`),
      keysetPager(trail, page.rows.length, page.nextAfter, load)];
    });
  }

  async function peek(q, key) {
    const body = drawer(`Timer ${key}`);
    await section(body, async () => {
      const t = await get(`/api/v1/timers/${enc(q)}/${enc(key)}`);
      if (!t.found) return h('p', { class: 'muted' }, 'No longer pending: it fired or was cancelled.');
      return [h('p', null, `${t.queue}/${t.partition} · due `, when(t.deliverAt), ` · ${num(t.attempts)} attempts`),
        h('p', { class: 'muted' }, 'transaction ', h('code', null, t.txn), ' · message ', h('code', null, t.messageId),
          ' · scheduled ', when(t.createdAt), t.producerSub ? ` by ${t.producerSub}` : ''),
        t.lastError ? [h('h3', null, 'Last error'), h('pre', null, t.lastError)] : null,
        h('h3', null, 'Payload'),
        t.encrypted ? h('p', { class: 'na', id: 'timer-encrypted' }, 'Encrypted at rest: not shown.') : decodePayload(t.payload)];
    });
  }

  await load();
  return { refresh: load };
}
