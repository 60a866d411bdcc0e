// Bulk redrive tasks (POST/GET /api/v1/dlq/redrive, admin): start one, watch its progress live, cancel it.
import { get, post, qs, enc, describe, ApiError } from '../api.js';
import { h, clear, table, num, when, notice } from '../ui.js';

const POLL_MS = 500;

/** Mounts the redrive form, the live progress of the watched task and the recent tasks into el. */
export function redrivePanel(el, queue, onProgress) {
  const f = {
    queue: h('input', { id: 'redrive-queue', value: queue, placeholder: 'source queue' }),
    group: h('input', { id: 'redrive-group', placeholder: 'all groups' }),
    destQueue: h('input', { id: 'redrive-dest', placeholder: 'same queue' }),
    destPartition: h('input', { id: 'redrive-dest-partition', placeholder: 'same partition' }),
    rate: h('input', { id: 'redrive-rate', type: 'number', min: 1, max: 10000, value: 100 }),
    limit: h('input', { id: 'redrive-limit', type: 'number', min: 1, placeholder: 'all rows' }),
  };
  const progress = h('div', { id: 'redrive-progress-box' });
  const recent = h('div');
  let timer = null;

  async function watch(taskId, expected) {
    if (timer) clearInterval(timer);
    let last = null;
    const bar = h('progress', { id: 'redrive-progress', max: expected || null });
    const status = h('p', { id: 'redrive-status' });
    const cancel = h('button', { type: 'button', id: 'redrive-cancel', class: 'danger', onclick: async () => {
      try { render(await post(`/api/v1/dlq/redrive/${enc(taskId)}/cancel`, {})); } catch (e) { clear(status, describe(e)); }
    } }, 'Cancel');
    clear(progress, h('p', null, 'Task ', h('code', null, taskId)), bar, status, cancel);

    function render(t) {
      const done = t.moved + t.duplicate + t.gone + t.failed;
      const now = Date.now();
      const rate = last && now > last.at ? ((done - last.done) * 1000) / (now - last.at) : 0;
      last = { at: now, done };
      const total = expected || t.limit;
      if (total) { bar.max = Math.max(total, done); bar.value = t.status === 'running' ? done : bar.max; }
      else if (t.status !== 'running') { bar.max = 1; bar.value = 1; }
      status.dataset.status = t.status;
      status.textContent = `${t.status} · moved ${num(t.moved)} · duplicate ${num(t.duplicate)} · gone ${num(t.gone)} · `
        + `failed ${num(t.failed)}` + (total ? ` of ${num(total)}` : '') + (t.status === 'running' ? ` · ${rate.toFixed(0)}/s` : '')
        + (t.lastError ? ` · last error: ${t.lastError}` : '');
      cancel.disabled = t.status !== 'running';
      if (t.status !== 'running') { clearInterval(timer); timer = null; onProgress(); loadRecent(); }
    }
    const poll = async () => {
      try { render(await get(`/api/v1/dlq/redrive/${enc(taskId)}`)); } catch (e) { clear(status, describe(e)); clearInterval(timer); timer = null; }
    };
    timer = setInterval(poll, POLL_MS);
    poll();
  }

  async function start() {
    const q = f.queue.value.trim();
    const body = { queue: q, maxPerSecond: Number(f.rate.value) };
    if (f.group.value.trim()) body.consumerGroup = f.group.value.trim();
    if (f.limit.value) body.limit = Number(f.limit.value);
    if (f.destQueue.value.trim() || f.destPartition.value.trim()) {
      body.destination = {};
      if (f.destQueue.value.trim()) body.destination.queue = f.destQueue.value.trim();
      if (f.destPartition.value.trim()) body.destination.partition = f.destPartition.value.trim();
    }
    // the denominator of the bar: the queue's dead-letter count (one bounded status row), capped by the limit
    let expected = null;
    try {
      const s = await get('/api/v1/status/queues' + qs({ queue: q, limit: 1 }));
      if (s.queues && s.queues[0]) expected = Number(s.queues[0].messages.deadLetter);
    } catch { expected = null; }
    if (body.limit && expected !== null) expected = Math.min(expected, body.limit);
    try {
      const t = await post('/api/v1/dlq/redrive', body);
      watch(t.taskId, expected);
    } catch (e) {
      if (e instanceof ApiError && e.status === 409 && e.body && e.body.taskId) {
        clear(progress, notice('warn', 'A redrive task is already running for this queue; watching it.'));
        watch(e.body.taskId, expected);
      } else {
        clear(progress, notice('error', describe(e), { id: 'redrive-error' }));
      }
    }
  }

  async function loadRecent() {
    try {
      const r = await get('/api/v1/dlq/redrive');
      clear(recent, table([
        { title: 'Created', cell: (t) => when(t.createdAt) },
        { title: 'Queue', cell: (t) => t.queue },
        { title: 'Status', cell: (t) => t.status },
        { title: 'Moved', num: true, cell: (t) => num(t.moved) },
        { title: '', cell: (t) => h('button', { type: 'button', onclick: () => watch(t.taskId, null) }, 'Watch') },
      ], (r.tasks || []).slice(0, 10), null, 'No redrive tasks yet.'));
    } catch (e) { clear(recent, h('p', { class: 'na' }, describe(e))); }
  }

  clear(el, h('p', { class: 'muted' }, 'Moves every dead letter of a queue back to the log (or elsewhere), rate-limited; each row is one move with its own verdict.'),
    h('form', { class: 'filters', onsubmit: (e) => { e.preventDefault(); start(); } },
      h('label', null, 'queue', f.queue), h('label', null, 'group', f.group), h('label', null, 'to queue', f.destQueue),
      h('label', null, 'to partition', f.destPartition), h('label', null, 'per second', f.rate), h('label', null, 'limit', f.limit),
      h('button', { type: 'submit', class: 'primary', id: 'redrive-start' }, 'Start redrive')),
    progress, h('h3', null, 'Recent tasks'), recent);
  loadRecent();
  return () => { if (timer) clearInterval(timer); };
}
