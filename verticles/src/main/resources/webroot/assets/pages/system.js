// System: maintenance switches (push, pop) with the spool state, nodes, PostgreSQL statistics, recent API calls.
import { get, post, can, describe, calls } from '../api.js';
import { h, clear, table, section, num, notice, pretty, fmtAge } from '../ui.js';

/** Renders an object of scalars as a two-column table; nested values as JSON. */
function kv(obj) {
  return table([{ title: 'Key', cell: (r) => r[0] }, { title: 'Value', cell: (r) => (typeof r[1] === 'object' && r[1] !== null ? pretty(r[1]) : String(r[1])) }],
    Object.entries(obj || {}));
}

/** The cluster's nodes (GET /api/v1/system/nodes): one row each; a member that did not answer is marked unreachable. */
export function nodesTable(rows) {
  const t = table([
    { title: 'Node', cls: 'wrap', cell: (n) => n.serverId ?? n.nodeId },
    { title: 'Reachable', cls: 'reachable', cell: (n) => (n.reachable ? 'yes' : h('span', { class: 'badge on' }, 'NO')) },
    { title: 'Database', cls: 'database', cell: (n) => n.database ?? '—' },
    { title: 'Version', cell: (n) => n.version ?? '—' },
    { title: 'Up', num: true, cell: (n) => fmtAge(n.uptimeSeconds) },
    { title: 'HTTP', cls: 'wrap', cell: (n) => n.httpUrl ?? (n.httpPort ? `port ${n.httpPort}` : '—') },
    { title: 'Maintenance', cell: (n) => (n.reachable ? `push ${n.maintenanceMode ? 'ON' : 'off'}, pop ${n.popMaintenanceMode ? 'ON' : 'off'}` : '—') },
  ], rows, (n) => ({ 'data-node': n.serverId ?? n.nodeId, 'data-reachable': String(!!n.reachable) }), 'No nodes.');
  t.classList.add('nodes');
  return t;
}

/**
 * The PostgreSQL servers each node watches (databaseServers of GET /api/v1/system/nodes): role, timeline, replay lag
 * and what the node sends there; empty when the nodes use one server as it is.
 */
export function serversTable(nodes) {
  const rows = [];
  for (const n of nodes) for (const s of n.databaseServers || []) rows.push({ node: n.serverId ?? n.nodeId, ...s });
  if (rows.length === 0) return h('p', { class: 'muted' }, 'One PostgreSQL server, used as it is (no failover, no read replicas).');
  return table([
    { title: 'Node', cell: (r) => r.node },
    { title: 'Server', cell: (r) => r.server },
    { title: 'Role', cls: 'role', cell: (r) => (r.role === 'primary' ? r.role : h('span', { class: r.role === 'standby' ? 'muted' : 'badge on' }, r.role)) },
    { title: 'Timeline', num: true, cell: (r) => r.timeline ?? '' },
    { title: 'Lag ms', num: true, cell: (r) => (r.lagMs == null ? '' : num(r.lagMs)) },
    { title: 'Used for', cell: (r) => r.use ?? '' },
    { title: 'Error', cell: (r) => r.error ?? '' },
  ], rows, (r) => ({ 'data-server': r.server, 'data-role': r.role }), 'No servers.');
}

export async function render(main) {
  const sw = h('div', { id: 'switches' });
  const spool = h('div', { id: 'spool' });
  const nodes = h('div');
  const pg = h('div', { id: 'pg-stats' });
  const log = h('div');
  clear(main, h('h1', null, 'System'),
    h('section', { class: 'card' }, h('h2', null, 'Maintenance switches'), sw),
    h('div', { class: 'grid2' },
      h('section', { class: 'card' }, h('h2', null, 'Spool (file buffer)'), spool),
      h('section', { class: 'card' }, h('h2', null, 'Nodes'), nodes)),
    h('section', { class: 'card' }, h('h2', null, 'PostgreSQL'), pg),
    h('section', { class: 'card' }, h('h2', null, 'API calls made by this page session'), log));

  function loadSwitches() {
    return section(sw, async () => {
      if (!can.admin()) return h('p', { class: 'na' }, 'Needs an admin token.');
      const m = await get('/api/v1/system/maintenance');
      const out = h('div');
      const toggle = (path, on, label) => h('button', { type: 'button', class: on ? 'primary' : 'danger', id: 'toggle-' + label,
        onclick: async () => {
          try { const r = await post(path, { enabled: !on }); clear(out, notice('ok', r.message || 'done')); loadSwitches(); }
          catch (e) { clear(out, notice('error', describe(e))); }
        } }, `${on ? 'Turn off' : 'Turn on'} ${label} maintenance`);
      return [h('p', null, `Push maintenance is ${m.maintenanceMode ? 'ON: pushes go to the spool, DLQ replays answer 503' : 'off'}. `,
        toggle('/api/v1/system/maintenance', m.maintenanceMode, 'push')),
      h('p', null, `Pop maintenance is ${m.popMaintenanceMode ? 'ON: every pop answers 204' : 'off'}. `,
        toggle('/api/v1/system/maintenance/pop', m.popMaintenanceMode, 'pop')),
      h('p', { class: 'muted' }, `${num(m.bufferedMessages)} messages buffered; spool ${m.bufferHealthy ? 'healthy' : 'unhealthy'}.`), out];
    });
  }
  const loadSpool = () => section(spool, async () => {
    let b;
    try { b = await get('/api/v1/status/buffers'); } catch (e) {
      if (!can.admin()) throw e;
      return kv((await get('/api/v1/system/maintenance')).bufferStats || {});
    }
    if (!Array.isArray(b.nodes)) return kv(b);
    return [table([
      { title: 'Node', cell: (n) => n.nodeId },
      { title: 'Waiting events', num: true, cell: (n) => num(n.pendingEvents) },
      { title: 'Files', num: true, cell: (n) => num(n.files) },
      { title: 'Failed', num: true, cell: (n) => num(n.failedEvents) },
      { title: 'Replays', cell: (n) => (n.healthy ? 'healthy' : 'failing') },
    ], b.nodes, (n) => ({ 'data-spool-node': n.nodeId }), 'No nodes.'),
    h('p', { class: 'muted' }, `spool ${b.healthy ? 'healthy' : 'unhealthy'} on every node`)];
  });
  const loadNodes = () => section(nodes, async () => {
    const list = (await get('/api/v1/system/nodes')).nodes || [];
    return [nodesTable(list), h('h3', null, 'PostgreSQL servers'), serversTable(list)];
  });
  const loadPg = () => section(pg, async () => {
    const s = await get('/api/v1/analytics/postgres-stats');
    const db = s.database || {};
    const c = s.connections || {};
    return [h('p', null, `${s.version || ''} · database ${db.name ?? ''} · ${num(db.sizeBytes)} bytes · cache hit `
        + `${db.cacheHitRatio == null ? '—' : (db.cacheHitRatio * 100).toFixed(1) + ' %'} · commits ${num(db.commits)}`
        + ` · rollbacks ${num(db.rollbacks)} · deadlocks ${num(db.deadlocks)}`),
      h('p', null, `connections: ${num(c.total)} of ${num(c.max)} (${num(c.active)} active, ${num(c.idle)} idle, `
        + `${num(c.idleInTransaction)} idle in transaction, ${num(c.waiting)} waiting)`),
      table(Object.keys((s.tables || [])[0] || { table: '' }).map((k) => ({ title: k, num: k !== 'table',
        cell: (t) => (k === 'table' ? t[k] : num(t[k])) })), (s.tables || []).slice(0, 15),
      (t) => ({ 'data-table': t.table }), 'No tables.')];
  });
  const showLog = () => clear(log, table([
    { title: 'Call', cell: (c) => `${c.method} ${c.path}` }, { title: 'Status', num: true, cell: (c) => c.status },
    { title: 'Rows', num: true, cell: (c) => (c.rows === null ? '' : c.rows) }, { title: 'ms', num: true, cell: (c) => c.ms },
  ], calls.slice(-30).reverse()));
  const refresh = () => Promise.all([loadSwitches(), loadSpool(), loadNodes(), loadPg()]).then(showLog);
  await refresh();
  return { refresh };
}
