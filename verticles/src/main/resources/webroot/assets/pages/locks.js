// Locks and semaphores: the live permits, read from the key-value namespace queen-locks where each permit is the
// entry <name>#<slot> (value {owner, since}, version = its fencing token, expiry = the lease). Read-only but for a
// stuck permit, which an operator may delete after a confirmation (at the token shown; the holder's next renew or
// guarded transaction then fails).
import { can, describe } from '../api.js';
import { h, clear, table, section, when, notice, confirmButton, keysetPager } from '../ui.js';
import { kvList, kvDelete, deleteNotice } from './kv.js';

const NS = 'queen-locks';

/** A permit's key split at its last '#': {name, slot}. */
export function permitOf(key) {
  const at = key.lastIndexOf('#');
  return at < 0 ? { name: key, slot: '' } : { name: key.slice(0, at), slot: key.slice(at + 1) };
}

export async function render(main, params) {
  const prefix = h('input', { id: 'locks-prefix', placeholder: 'lock name prefix (any)', value: params.get('prefix') || '' });
  const out = h('div', { id: 'locks-outcome', 'aria-live': 'polite' });
  const list = h('div', { id: 'locks-list' });
  const trail = [null];
  clear(main, h('h1', null, 'Locks'),
    h('form', { class: 'filters', onsubmit: (e) => { e.preventDefault(); trail.splice(1); clear(out); load(); } },
      h('label', null, 'name', prefix), h('button', { type: 'submit', class: 'primary', id: 'locks-apply' }, 'Search')),
    h('p', { class: 'muted' }, 'Held permits of locks and semaphores (POST /api/v1/locks). A lease that ends frees its '
      + 'permit; its holder is not told, so it must check its fencing token (the transaction guard).'),
    out, h('section', { class: 'card' }, list));

  const release = (r) => confirmButton('Delete', `Delete the permit ${r.key}? Its holder loses it.`, async () => {
    try {
      clear(out, deleteNotice(`the permit ${r.key}`, await kvDelete(NS, r.key, r.version)));
    } catch (e) {
      clear(out, notice('error', describe(e)));
    }
    load();
  }, 'lock-delete');

  async function load() {
    await section(list, async () => {
      const page = await kvList(NS, { prefix: prefix.value, after: trail[trail.length - 1] });
      const rows = (page.rows || []).map((r) => ({ ...r, ...permitOf(r.key), holder: r.value && r.value.owner }));
      return [table([
        { title: 'Lock', cell: (r) => h('code', null, r.name) },
        { title: 'Slot', num: true, cell: (r) => r.slot },
        { title: 'Holder', cls: 'holder', cell: (r) => (r.holder == null ? h('span', { class: 'muted' }, 'unnamed') : r.holder) },
        { title: 'Since', cell: (r) => when(r.value && r.value.since) },
        { title: 'Last renewal', cell: (r) => when(r.updatedAt) },
        { title: 'Lease ends', cell: (r) => when(r.expiresAt) },
        { title: 'Token', num: true, cell: (r) => r.version },
        { title: '', cell: (r) => (can.write() ? release(r) : '') },
      ], rows, (r) => ({ 'data-lock': r.name, 'data-slot': r.slot }),
      prefix.value ? `No held lock starts with “${prefix.value}”.` : 'No lock is held.'),
      keysetPager(trail, rows.length, page.truncated ? page.nextAfter : null, load)];
    });
  }
  await load();
  return { refresh: load };
}
