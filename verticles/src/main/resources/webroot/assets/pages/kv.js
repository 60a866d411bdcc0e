// Key-value: a namespace's entries by key prefix, a page at a time (POST /api/v1/resources/kv/list, keyset paged),
// expired entries the sweep has not deleted yet greyed; a drawer with the whole value; delete after a confirmation,
// only at the version shown. The Locks and Consumers pages read their namespaces through kvList too.
import { get, post, can, describe } from '../api.js';
import { h, clear, table, section, when, preview, pretty, drawer, notice, num, confirmButton, keysetPager, prefixFrame } from '../ui.js';

const PAGE = 50;

/** One page of a namespace: {rows:[{key, value, version, expiresAt, updatedAt, expired}], truncated, nextAfter}. */
export function kvList(namespace, { prefix = '', after = null, limit = PAGE, includeExpired = false } = {}) {
  const body = { namespace, prefix, limit, includeExpired };
  if (after !== null) body.after = after;
  return post('/api/v1/resources/kv/list', body);
}

/**
 * Deletes one entry if it still holds the version shown (`expect`), so a value written since it was shown stays.
 * The delete travels in the body of POST /api/v1/kv, where a key is any string (a path would be normalised: a key
 * "a/../b" or ".." cannot be named there). Answers the operation's result: {applied, reason?, version, ...}.
 */
export async function kvDelete(ns, key, version) {
  const r = await post('/api/v1/kv', { operations: [{ op: 'delete', ns, key, expect: version }] });
  return r.results[0];
}

/** A delete's answer as a notice: deleted, changed since it was shown (kept), or already gone. */
export function deleteNotice(what, res) {
  if (res.applied) return notice('ok', `Deleted ${what}.`, { 'data-result': 'deleted' });
  if (res.reason === 'version') {
    return notice('warn', `Not deleted: ${what} changed since it was shown (now version ${res.version}). Look again.`,
      { 'data-result': 'changed' });
  }
  return notice('warn', `Not deleted: ${what} no longer exists.`, { 'data-result': 'gone' });
}

/** A delete button of one entry, asked first: the verdict goes to `out`, then the listing reloads. */
export function deleteButton(out, { ns, entry, what, question, cls }, reload) {
  return confirmButton('Delete', question, async () => {
    try {
      clear(out, deleteNotice(what, await kvDelete(ns, entry.key, entry.version)));
    } catch (e) {
      clear(out, notice('error', describe(e)));
    }
    reload();
  }, cls);
}

export async function render(main, params) {
  const nsSelect = h('select', { id: 'kv-ns' });
  const { prefix, out, list, trail } = prefixFrame(main, { id: 'kv', title: 'Key-value', label: 'prefix',
    placeholder: 'key prefix (any)', prefix: params.get('prefix'), before: h('label', null, 'namespace', nsSelect) }, load);

  let namespaces = [];
  async function loadNamespaces() {
    namespaces = await get('/api/v1/resources/kv/namespaces');
    const want = nsSelect.value || params.get('ns') || (namespaces[0] && namespaces[0].namespace) || '';
    const names = namespaces.map((n) => n.namespace);
    if (want && !names.includes(want)) names.unshift(want);
    const label = (n) => {
      const c = namespaces.find((x) => x.namespace === n);
      return c ? `${n} (${num(c.keys)}${c.keysCapped ? '+' : ''} key${c.keys === 1 ? '' : 's'})` : `${n} (empty)`;
    };
    const opts = names.map((n) => h('option', { value: n }, label(n)));
    if (opts.map((o) => o.outerHTML).join() !== [...nsSelect.options].map((o) => o.outerHTML).join()) clear(nsSelect, opts);
    nsSelect.value = want;
  }

  const remove = (ns, r) => deleteButton(out, { ns, entry: r, what: `${ns}/${r.key}`, question: `Delete ${r.key}?`,
    cls: 'kv-delete' }, load);

  async function load() {
    await section(list, async () => {
      await loadNamespaces();
      const ns = nsSelect.value;
      if (!ns) {
        return h('div', { class: 'empty', id: 'kv-empty' }, h('p', null, h('b', null, 'No key-value entries yet.')),
          h('p', { class: 'muted' }, 'A namespace appears with its first entry (POST /api/v1/kv), such as the 2.x '
            + 'consumers\' supervision records in queen-supervisor or lock permits in queen-locks.'));
      }
      const page = await kvList(ns, { prefix: prefix.value, after: trail[trail.length - 1], includeExpired: true });
      const rows = page.rows || [];
      return [table([
        { title: 'Key', cell: (r) => h('code', null, r.key) },
        { title: 'Value', cell: (r) => h('code', null, preview(r.value, 60)) },
        { title: 'Version', num: true, cell: (r) => r.version },
        { title: 'Expires', cell: (r) => (r.expired ? 'expired' : r.expiresAt ? when(r.expiresAt) : 'never') },
        { title: 'Updated', cell: (r) => when(r.updatedAt) },
        { title: '', cell: (r) => (can.write() ? remove(ns, r) : '') },
      ], rows, (r) => ({ class: 'clickable' + (r.expired ? ' expired' : ''), 'data-key': r.key,
        'data-expired': String(!!r.expired), onclick: () => detail(ns, r) }),
      prefix.value ? `No key of ${ns} starts with “${prefix.value}”.` : `${ns} holds no keys.`),
      keysetPager(trail, rows.length, page.truncated ? page.nextAfter : null, load)];
    });
  }

  function detail(ns, r) {
    const body = drawer(`${ns} / ${r.key}`);
    clear(body, h('p', null, `version ${r.version} · updated `, when(r.updatedAt), ' · ',
      r.expired ? 'expired (not swept yet)' : r.expiresAt ? ['expires ', when(r.expiresAt)] : 'never expires'),
    pretty(r.value));
  }

  nsSelect.addEventListener('change', () => { trail.splice(1); clear(out); load(); });
  await load();
  return { refresh: load };
}
