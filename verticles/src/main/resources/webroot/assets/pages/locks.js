// Locks and semaphores: the live permits, read from the key-value namespace queen-locks where each permit is the
// entry <name>#<slot> (value {owner, since}, version = its fencing token, expiry = the lease). Read-only but for a
// stuck permit, which an operator may delete after a confirmation (at the token shown; the holder's next renew or
// guarded transaction then fails).
import { can } from '../api.js';
import { h, table, section, when, keysetPager, prefixFrame } from '../ui.js';
import { kvList, deleteButton } from './kv.js';

const NS = 'queen-locks';

/** A permit's key split at its last '#': {name, slot}. */
export function permitOf(key) {
  const at = key.lastIndexOf('#');
  return at < 0 ? { name: key, slot: '' } : { name: key.slice(0, at), slot: key.slice(at + 1) };
}

export async function render(main, params) {
  const { prefix, out, list, trail } = prefixFrame(main, { id: 'locks', title: 'Locks', label: 'name',
    placeholder: 'lock name prefix (any)', prefix: params.get('prefix'),
    note: 'Held permits of locks and semaphores (POST /api/v1/locks). A lease that ends frees its permit; its holder '
      + 'is not told, so it must check its fencing token (the transaction guard).' }, load);

  const release = (r) => deleteButton(out, { ns: NS, entry: r, what: `the permit ${r.key}`,
    question: `Delete the permit ${r.key}? Its holder loses it.`, cls: 'lock-delete' }, load);

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
