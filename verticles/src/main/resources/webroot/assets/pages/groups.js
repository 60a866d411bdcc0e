// Consumer groups: lag per queue and partition, seek (to the end or to a time) and delete, with confirmation.
import { get, getPage, post, del, qs, enc, can, describe, ApiError } from '../api.js';
import { h, clear, table, section, num, fmtAge, when, link, notice, typedConfirm } from '../ui.js';
import { barChart } from '../chart.js';

const PAGE = 25;
const QUEUE_MODE = '__QUEUE_MODE__';

/** A group's name linking to its page; queue mode's reserved name says what it is. */
export function groupName(name) {
  return [link('#/groups?name=' + enc(name), name), name === QUEUE_MODE ? h('span', { class: 'muted' }, ' (queue mode)') : null];
}

/**
 * A group's state from the figures shown beside it, so two groups with the same figures read the same: Caught up
 * (nothing waiting), Keeping up (the oldest waiting message is under a minute old), Lagging (a minute or more), and the
 * broker's Dead (nobody consumed for an hour while messages older than an hour wait).
 */
export function groupState(g) {
  const waiting = Number(g.maxTimeLag) || 0;
  let word;
  let why;
  if (g.state === 'Dead') {
    word = 'Dead';
    why = 'no consumer for an hour while messages older than an hour wait';
  } else if (!Number(g.totalLag)) {
    word = 'Caught up';
    why = 'no message waits for this group';
  } else if (waiting >= 60) {
    word = 'Lagging';
    why = `the oldest message waiting is ${fmtAge(waiting)} old (a minute or more)`;
  } else {
    word = 'Keeping up';
    why = 'messages wait, the oldest under a minute old';
  }
  return h('span', { class: 'state', 'data-state': word, title: why }, word);
}

/** A cursor: -1 (or none) means nothing of the partition was acknowledged yet. */
export function committed(v) {
  if (v === null || v === undefined || Number(v) < 0) {
    return h('span', { class: 'muted', title: 'no message of this partition has been acknowledged yet' }, 'none yet');
  }
  return num(v);
}

export async function render(main, params) {
  const name = params.get('name');
  if (name) return detail(main, name);
  const list = h('div', { id: 'group-list' });
  clear(main, h('h1', null, 'Consumer groups'),
    h('p', { class: 'muted' }, `Queue mode is the group ${QUEUE_MODE}. Lag counts messages not yet acknowledged; `
      + '"oldest waiting" is the age of the oldest of them.'),
    list);
  // GET /api/v1/consumer-groups pages by name: 25 groups a call, "More groups" follows the X-Next-Cursor of the last
  // page; a refresh reads the pages shown again, 25 a call
  let pages = [];
  // "More groups" and the refresh run one after the other, never both at once
  let queue = Promise.resolve();
  const serial = (fn) => { queue = queue.then(fn, fn); return queue; };
  const show = () => {
    const rows = pages.flatMap((p) => p.rows);
    const next = pages.length ? pages[pages.length - 1].next : null;
    return [table([
      { title: 'Group', cell: (g) => groupName(g.name) },
      { title: 'Queues', cell: (g) => (g.topics || []).join(', ') },
      { title: 'Members', num: true, cell: (g) => num(g.members) },
      { title: 'Lag (msgs)', num: true, cell: (g) => num(g.totalLag) },
      { title: 'Oldest waiting', num: true, cell: (g) => fmtAge(g.maxTimeLag) },
      { title: 'State', cls: 'state', cell: (g) => groupState(g) },
    ], rows, (g) => ({ 'data-group': g.name }), 'No consumer groups yet.'),
    h('div', { class: 'pager' }, h('span', { class: 'muted' }, `${num(rows.length)} groups shown`),
      next ? h('button', { type: 'button', id: 'groups-more', class: 'next', onclick: more }, 'More groups') : null)];
  };
  const fetchPage = async (cursor) => {
    const page = await getPage('/api/v1/consumer-groups' + qs({ limit: PAGE, cursor }));
    return { rows: page.json || [], next: page.next };
  };
  const more = () => serial(() => section(list, async () => {
    pages.push(await fetchPage(pages.length ? pages[pages.length - 1].next : null));
    return show();
  }));
  const refresh = () => serial(() => section(list, async () => {
    const again = [];
    for (let i = 0, cursor = null; i < Math.max(1, pages.length); i++) {
      const p = await fetchPage(cursor);
      again.push(p);
      if (!p.next) break;
      cursor = p.next;
    }
    pages = again;
    return show();
  }));
  await more();
  return { refresh };
}

async function detail(main, name) {
  const body = h('div', { id: 'group-detail' });
  const out = h('div', { id: 'group-outcome' });
  clear(main, h('h1', null, 'Consumer group ', h('code', null, name)), h('p', null, link('#/groups', '← all groups')), out, body);
  const say = (kind, text) => clear(out, notice(kind, text));

  async function load() {
    await section(body, async () => {
      let g;
      try {
        g = await get('/api/v1/consumer-groups/' + enc(name));
      } catch (e) {
        if (!(e instanceof ApiError && e.status === 404 && !e.missingRoute)) throw e;
        return h('div', { class: 'empty', id: 'group-empty' }, h('p', null, h('b', null, `No consumer group named ${name}.`)),
          h('p', { class: 'muted' }, 'A group appears with its first pop (consumerGroup=…) or seek, and is gone once deleted.'));
      }
      const queues = Object.entries(g.queues || {});
      const blocks = queues.map(([queue, q]) => {
        const chartEl = h('div');
        const parts = q.partitions || [];
        if (parts.length > 1) setTimeout(() => barChart(chartEl, parts.map((p) => p.partition), parts.map((p) => Number(p.lag)), { label: 'lag (msgs)' }));
        const time = h('input', { type: 'datetime-local', class: 'seek-time', step: 1,
          oninput: (e) => { if (e.target.value) e.target.dataset.dirty = '1'; else delete e.target.dataset.dirty; } });
        const seek = async (payload) => {
          try {
            const r = await post(`/api/v1/consumer-groups/${enc(name)}/queues/${enc(queue)}/seek`, payload);
            say('ok', `Seek done on ${queue}: ${num(r.partitionsUpdated)} partitions moved.`);
            load();
          } catch (e) { say('error', describe(e)); }
        };
        const actions = can.write() ? h('p', null,
          h('button', { type: 'button', class: 'seek-end', onclick: () => seek({ toEnd: true }) }, 'Seek to end'), ' or to ', time,
          h('span', { class: 'muted' }, ' (your local time) '),
          h('button', { type: 'button', class: 'seek-time-go', onclick: () => {
            if (!time.value) { say('error', 'Pick a time to seek to.'); return; }
            seek({ timestamp: new Date(time.value).toISOString() });
          } }, 'Seek to time')) : null;
        const remove = can.admin() ? typedConfirm(queue, 'Forget this queue', async () => {
          try { await del(`/api/v1/consumer-groups/${enc(name)}/queues/${enc(queue)}` + qs({ deleteMetadata: true })); say('ok', `Cursors on ${queue} deleted; the group re-reads it from the start.`); load(); }
          catch (e) { say('error', describe(e)); }
        }, 'cg-queue-delete') : null;
        return h('section', { class: 'card', 'data-queue': queue }, h('h2', null, queue),
          table([
            { title: 'Partition', cell: (p) => p.partition },
            { title: 'Committed', num: true, cls: 'committed', cell: (p) => committed(p.committed) },
            { title: 'Last offset', num: true, cell: (p) => num(p.lastOffset) },
            { title: 'Lag', num: true, cls: 'lag', cell: (p) => num(p.lag) },
            { title: 'Oldest waiting', num: true, cell: (p) => fmtAge(p.timeLag) },
            { title: 'Lease until', cell: (p) => when(p.leaseExpiresAt) },
          ], parts, (p) => ({ 'data-partition': p.partition })), chartEl, actions, remove);
      });
      const delGroup = can.admin() ? h('section', { class: 'card' }, h('h2', null, 'Delete group'),
        typedConfirm(name, 'Delete group', async () => {
          try { const r = await del('/api/v1/consumer-groups/' + enc(name)); say('ok', `Group deleted (${num(r.deletedPartitions)} partition cursors).`); }
          catch (e) { say('error', describe(e)); }
        }, 'cg-delete')) : null;
      return [h('p', { id: 'group-summary' }, groupState(g), ` · ${num(g.members)} live members · total lag ${num(g.totalLag)} · `
        + `oldest waiting ${fmtAge(g.maxTimeLag)}`), blocks, delGroup];
    });
  }
  await load();
  return { refresh: load };
}
