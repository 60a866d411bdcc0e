// Consumer groups: lag per queue and partition, seek (to the end or to a time) and delete, with confirmation.
import { get, getPage, post, del, qs, enc, can, describe } from '../api.js';
import { h, clear, table, section, num, fmtAge, fmtTime, link, notice, typedConfirm } from '../ui.js';
import { barChart } from '../chart.js';

const PAGE = 25;

export async function render(main, params) {
  const name = params.get('name');
  if (name) return detail(main, name);
  const list = h('div', { id: 'group-list' });
  clear(main, h('h1', null, 'Consumer groups'),
    h('p', { class: 'muted' }, 'Queue mode is the group __QUEUE_MODE__. Lag counts frames not yet acknowledged; time lag is the age of the oldest of them.'),
    list);
  // GET /api/v1/consumer-groups pages by name: 25 groups a call, "More groups" follows the X-Next-Cursor of the last page
  const rows = [];
  let next = null;
  let loading = false;
  async function load() {
    if (loading) return;
    loading = true;
    await section(list, async () => {
      const page = await getPage('/api/v1/consumer-groups' + qs({ limit: PAGE, cursor: next }));
      rows.push(...(page.json || []));
      next = page.next;
      return [table([
        { title: 'Group', cell: (g) => link('#/groups?name=' + enc(g.name), g.name) },
        { title: 'Queues', cell: (g) => (g.topics || []).join(', ') },
        { title: 'Members', num: true, cell: (g) => num(g.members) },
        { title: 'Lag (msgs)', num: true, cell: (g) => num(g.totalLag) },
        { title: 'Lag (time)', num: true, cell: (g) => fmtAge(g.maxTimeLag) },
        { title: 'State', cell: (g) => g.state },
      ], rows, (g) => ({ 'data-group': g.name }), 'No consumer groups yet.'),
      h('div', { class: 'pager' }, h('span', { class: 'muted' }, `${num(rows.length)} groups shown`),
        next ? h('button', { type: 'button', id: 'groups-more', class: 'next', onclick: load }, 'More groups') : null)];
    });
    loading = false;
  }
  load();
}

async function detail(main, name) {
  const body = h('div', { id: 'group-detail' });
  const out = h('div', { id: 'group-outcome' });
  clear(main, h('h1', null, 'Consumer group ', h('code', null, name)), h('p', null, link('#/groups', '← all groups')), out, body);
  const say = (kind, text) => clear(out, notice(kind, text));

  async function load() {
    await section(body, async () => {
      const g = await get('/api/v1/consumer-groups/' + enc(name));
      const queues = Object.entries(g.queues || {});
      const blocks = queues.map(([queue, q]) => {
        const chartEl = h('div');
        const parts = q.partitions || [];
        if (parts.length > 1) setTimeout(() => barChart(chartEl, parts.map((p) => p.partition), parts.map((p) => Number(p.lag)), { label: 'lag (msgs)' }));
        const time = h('input', { type: 'datetime-local', class: 'seek-time' });
        const seek = async (payload) => {
          try {
            const r = await post(`/api/v1/consumer-groups/${enc(name)}/queues/${enc(queue)}/seek`, payload);
            say('ok', `Seek done on ${queue}: ${num(r.partitionsUpdated)} partitions moved.`);
            load();
          } catch (e) { say('error', describe(e)); }
        };
        const actions = can.write() ? h('p', null,
          h('button', { type: 'button', class: 'seek-end', onclick: () => seek({ toEnd: true }) }, 'Seek to end'), ' or to ', time, ' ',
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
            { title: 'Committed', num: true, cls: 'committed', cell: (p) => num(p.committed) },
            { title: 'Last offset', num: true, cell: (p) => num(p.lastOffset) },
            { title: 'Lag', num: true, cls: 'lag', cell: (p) => num(p.lag) },
            { title: 'Time lag', num: true, cell: (p) => fmtAge(p.timeLag) },
            { title: 'Lease until', cell: (p) => fmtTime(p.leaseExpiresAt) },
          ], parts, (p) => ({ 'data-partition': p.partition })), chartEl, actions, remove);
      });
      const delGroup = can.admin() ? h('section', { class: 'card' }, h('h2', null, 'Delete group'),
        typedConfirm(name, 'Delete group', async () => {
          try { const r = await del('/api/v1/consumer-groups/' + enc(name)); say('ok', `Group deleted (${num(r.deletedPartitions)} partition cursors).`); }
          catch (e) { say('error', describe(e)); }
        }, 'cg-delete')) : null;
      return [h('p', null, `${g.state} · ${num(g.members)} live members · total lag ${num(g.totalLag)} · max time lag ${fmtAge(g.maxTimeLag)}`),
        blocks, delGroup];
    });
  }
  load();
}
