// Queue detail: partitions with offsets, lag and per-group cursors, the configuration (editable), delete.
import { get, post, del, qs, enc, can, describe } from '../api.js';
import { h, clear, table, section, num, fmtAge, fmtTime, link, notice, typedConfirm } from '../ui.js';
import { barChart } from '../chart.js';

export async function render(main, params) {
  const name = params.get('name') || '';
  if (!name) { clear(main, h('p', { class: 'na' }, 'No queue named. Pick one on the Overview.')); return; }
  const parts = h('div', { id: 'partitions' });
  const chartEl = h('div');
  const depth = h('div');
  const config = h('div');
  const danger = h('div');
  clear(main,
    h('h1', null, 'Queue ', h('code', { id: 'queue-name' }, name)),
    h('p', null, link('#/messages?queue=' + enc(name), 'Browse messages'), ' · ',
      link('#/dlq?queue=' + enc(name), 'Dead letters')),
    h('section', { class: 'card' }, h('h2', null, 'Partitions'), parts, chartEl),
    h('section', { class: 'card' }, h('h2', null, 'Depth by readiness'), depth),
    h('section', { class: 'card' }, h('h2', null, 'Configuration'), config),
    can.admin() ? h('section', { class: 'card' }, h('h2', null, 'Delete queue'), danger) : null);

  section(parts, async () => {
    const q = await get('/api/v1/status/queues/' + enc(name));
    const rows = q.partitions || [];
    clear(chartEl);
    if (rows.length) barChart(chartEl, rows.map((p) => p.name), rows.map((p) => Number(p.lastOffset) - Number(p.committed ?? p.lastOffset)),
      { label: 'frames past the queue-mode cursor', width: Math.min(1100, main.clientWidth - 60) });
    return table([
      { title: 'Partition', cell: (p) => p.name },
      { title: 'Last offset', num: true, cell: (p) => num(p.lastOffset) },
      { title: 'Log start', num: true, cell: (p) => num(p.logStart) },
      { title: 'Committed', num: true, cell: (p) => num(p.committed) },
      { title: 'Pending', num: true, cell: (p) => num(p.messages.pending) },
      { title: 'In flight', num: true, cell: (p) => num(p.messages.processing) },
      { title: 'DLQ', num: true, cell: (p) => num(p.messages.deadLetter) },
      { title: 'Lag', num: true, cell: (p) => fmtAge(p.lag && p.lag.seconds) },
      { title: 'Last write', cell: (p) => fmtTime(p.lastWriteAt) },
    ], rows, (p) => ({ 'data-partition': p.name }), 'No partitions.');
  });

  section(depth, async () => {
    const d = await get('/api/v1/resources/queues/' + enc(name) + '/depth');
    return table([
      { title: 'Partition', cell: (p) => p.partition },
      { title: 'Pending', num: true, cell: (p) => num(p.pending) },
      { title: 'Processing', num: true, cell: (p) => num(p.processing) },
      { title: 'Ready', num: true, cell: (p) => num(p.ready) },
    ], d.partitions || []);
  });

  section(config, async () => {
    const q = await get('/api/v1/resources/queues/' + enc(name));
    const options = q.options || {};
    if (!can.write()) return h('pre', null, JSON.stringify(options, null, 2));
    const text = h('textarea', { id: 'config-json', rows: 14, cols: 70 }, JSON.stringify(options, null, 2));
    const out = h('div');
    const save = async () => {
      let parsed;
      try { parsed = JSON.parse(text.value); } catch (e) { clear(out, notice('error', 'Not JSON: ' + e.message)); return; }
      try {
        await post('/api/v1/configure', { queue: name, options: parsed });
        clear(out, notice('ok', 'Saved.'));
      } catch (e) { clear(out, notice('error', describe(e))); }
    };
    return [h('p', { class: 'muted' }, 'Saved through POST /api/v1/configure.'), text,
      h('div', null, h('button', { type: 'button', class: 'primary', id: 'config-save', onclick: save }, 'Save')), out];
  });

  if (can.admin()) {
    const out = h('div');
    clear(danger, h('p', { class: 'muted' }, 'Deletes partitions, segments, cursors and dead letters of this queue.'),
      typedConfirm(name, 'Delete queue', async () => {
        try {
          const r = await del('/api/v1/resources/queues/' + enc(name));
          clear(out, notice(r.existed ? 'ok' : 'warn', r.existed ? 'Queue deleted.' : (r.message || 'Nothing was deleted.')));
        } catch (e) { clear(out, notice('error', describe(e))); }
      }, 'queue-delete'), out);
  }
}
