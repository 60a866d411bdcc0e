// Consumers: the supervision records that Queen 2.x consumers write into the key-value namespace queen-supervisor
// every 10 s (a head <group>/<instance>/head and its chunks <group>/<instance>/chunk/NNNN, 60 s TTL each): one row per
// consumer pool of each instance, a late heartbeat marked stale. The records carry no payloads.
import { h, clear, table, section, when, num, fmtAge } from '../ui.js';
import { kvList } from './kv.js';

const NS = 'queen-supervisor';
/** The consumer's own heartbeat_timeout when its record names none (the 2.x JavaScript client's value). */
const DEFAULT_TIMEOUT = 30;
/** Listing pages read per refresh at most (1000 keys each, two keys an instance). */
const MAX_PAGES = 10;

/** Every live entry of queen-supervisor, page after page: {rows, capped}. */
async function readAll() {
  const rows = [];
  let after = null;
  for (let i = 0; i < MAX_PAGES; i++) {
    const page = await kvList(NS, { after, limit: 1000 });
    rows.push(...(page.rows || []));
    if (!page.truncated) return { rows, capped: false };
    after = page.nextAfter;
  }
  return { rows, capped: true };
}

/** The document of a record: the head's chunks of the same write, in index order, base64 joined, then decoded. */
function decode(head, chunks) {
  const parts = [];
  for (let i = 0; i < Number(head.chunks); i++) {
    const c = chunks.get(i);
    if (!c || c.write !== head.write || typeof c.data !== 'string') return null;
    parts.push(c.data);
  }
  try {
    const bytes = Uint8Array.from(atob(parts.join('')), (ch) => ch.charCodeAt(0));
    return JSON.parse(new TextDecoder('utf-8').decode(bytes));
  } catch {
    return null;
  }
}

/**
 * The instances of the listing, grouped by <group>/<instanceId>: {group, instance, doc} (doc null while a record is
 * incomplete: a head without all its chunks of the same write, mid-write or cut by expiry).
 */
export function instances(rows) {
  const by = new Map();
  for (const r of rows) {
    const m = /^(.+)\/([0-9a-f]{32})\/(head|chunk\/(\d+))$/.exec(r.key);
    if (!m) continue;
    const id = `${m[1]}/${m[2]}`;
    if (!by.has(id)) by.set(id, { group: m[1], instance: m[2], head: null, chunks: new Map() });
    const e = by.get(id);
    if (m[3] === 'head') e.head = r.value || {};
    else e.chunks.set(Number(m[4]), r.value || {});
  }
  return [...by.values()].map((e) => ({ group: e.group, instance: e.instance, doc: e.head ? decode(e.head, e.chunks) : null }));
}

/**
 * Stale: a running consumer whose last heartbeat (the record's updated_at_epoch) is older than its own
 * heartbeat_timeout (30 s for the JavaScript client), by this browser's clock. A consumer writes every 10 s, so that
 * is three missed writes; the entries themselves expire after 60 s and the instance then leaves the page. A consumer
 * that stopped cleanly said so (state "stopped") and is not stale.
 */
export function staleness(doc, nowSeconds) {
  const timeout = Number(doc.configuration && doc.configuration.heartbeat_timeout) || DEFAULT_TIMEOUT;
  const age = nowSeconds - Number(doc.updated_at_epoch);
  return { age, timeout, stale: doc.state !== 'stopped' && !(age <= timeout) };
}

/** One row per consumer pool of each instance (an instance without pools still gets one). */
function poolRows(list, nowSeconds) {
  const out = [];
  for (const i of list) {
    if (!i.doc) { out.push({ ...i, pool: {}, s: null }); continue; }
    const s = staleness(i.doc, nowSeconds);
    const pools = Array.isArray(i.doc.pool_status) && i.doc.pool_status.length ? i.doc.pool_status : [{}];
    for (const pool of pools) out.push({ ...i, pool, s });
  }
  return out;
}

function heartbeat(r) {
  if (!r.s) return h('span', { class: 'muted' }, 'incomplete record');
  const at = [when(Number(r.doc.updated_at_epoch) * 1000), h('span', { class: 'muted' }, ` (${fmtAge(Math.max(0, r.s.age))} ago)`)];
  if (!r.s.stale) return at;
  return [at, ' ', h('span', { class: 'badge on stale-mark', title: `no heartbeat for ${fmtAge(r.s.age)}, more than its `
    + `timeout of ${r.s.timeout} s: the process may be gone or stuck` }, 'STALE')];
}

export async function render(main) {
  const summary = h('div', { id: 'consumers-summary' });
  const list = h('div', { id: 'consumers-list' });
  clear(main, h('h1', null, 'Consumers'),
    h('p', { class: 'muted' }, `Queen 2.x consumers started with supervision report here every 10 s (key-value `
      + `namespace ${NS}). Stale: a running consumer with no heartbeat for longer than its own heartbeat timeout (30 s); a record `
      + 'not renewed for 60 s expires and leaves the page. A heartbeat proves the process lives, not that it progresses.'),
    summary, h('section', { class: 'card' }, list));

  async function load() {
    let rows = [];
    let capped = false;
    await section(list, async () => {
      ({ rows, capped } = await readAll());
      const now = Date.now() / 1000;
      const all = instances(rows);
      const shown = poolRows(all, now);
      const t = table([
        { title: 'Application', cell: (r) => r.group },
        { title: 'Host', cell: (r) => (r.doc ? r.doc.hostname : '') },
        { title: 'PID', num: true, cell: (r) => (r.doc ? r.doc.pid : '') },
        { title: 'Queue', cell: (r) => r.pool.queue ?? [r.pool.namespace, r.pool.task].filter(Boolean).join('/') },
        { title: 'Consumer group', cell: (r) => r.pool.consumer_group ?? '' },
        { title: 'In flight', num: true, cls: 'busy', cell: (r) => num(r.pool.busy) },
        { title: 'Running / desired', num: true, cell: (r) => (r.pool.desired == null ? '—' : `${num(r.pool.running)} / ${num(r.pool.desired)}`) },
        { title: 'Completed', num: true, cell: (r) => num(r.pool.completed) },
        { title: 'Failed', num: true, cell: (r) => num(r.pool.failed) },
        { title: 'Last heartbeat', cls: 'heartbeat', cell: heartbeat },
        { title: 'State', cls: 'state', cell: (r) => (r.doc ? r.doc.state : '') },
      ], shown, (r) => ({ 'data-instance': r.instance, 'data-group': r.group, class: r.s && r.s.stale ? 'stale' : null,
        'data-stale': r.s ? String(r.s.stale) : null, title: `instance ${r.instance}` }),
      'No supervised consumer reports. Start a 2.x consumer with .supervision({group}) to see it here.');
      const stale = all.filter((i) => i.doc && staleness(i.doc, now).stale).length;
      clear(summary, h('p', null, `${num(all.length)} instances · ${num(stale)} stale`,
        capped ? ` · only the first ${num(MAX_PAGES * 1000)} keys read` : ''));
      return t;
    });
  }
  await load();
  return { refresh: load };
}
