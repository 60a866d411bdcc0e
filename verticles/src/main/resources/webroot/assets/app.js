// The dashboard shell: navigation, the token/tenant bar, the auto-refresh, and a hash router that mounts one page
// module at a time. Client-side routes are hash routes (#/dlq), so a deep link also works when JWT auth is on (only /
// is public); a path route such as /dlq, served by the broker's SPA fallback, is read as the same page.
//
// A page's render(main, params) resolves once its first load is done, to nothing, a stop function, or
// {stop, refresh}: refresh() reloads the page's figures in place and is called every auto-refresh period, except while
// the operator edits (a form field of the page or of a drawer has focus, or a form is marked data-dirty).
import { session, onRefused, roles } from './api.js';
import { h, clear, fmtClock } from './ui.js';

const PAGES = {
  '': ['Overview', () => import('./pages/overview.js')],
  queue: [null, () => import('./pages/queue.js')],
  messages: ['Messages', () => import('./pages/messages.js')],
  dlq: ['Dead letters', () => import('./pages/dlq.js')],
  groups: ['Consumer groups', () => import('./pages/groups.js')],
  consumers: ['Consumers', () => import('./pages/consumers.js')],
  traces: ['Traces', () => import('./pages/traces.js')],
  kv: ['Key-value', () => import('./pages/kv.js')],
  timers: ['Timers', () => import('./pages/timers.js')],
  locks: ['Locks', () => import('./pages/locks.js')],
  system: ['System', () => import('./pages/system.js')],
};
const PERIOD_KEY = 'queen.refreshSeconds';
const DEFAULT_PERIOD = 5;

let current = { stop: null, refresh: null };
let generation = 0;
let lastLoad = 0;
let refreshing = false;

function location() {
  let raw = window.location.hash.replace(/^#\/?/, '');
  if (!raw && window.location.pathname !== '/') raw = window.location.pathname.slice(1) + window.location.search;
  const [path, query] = raw.split('?');
  const page = path.split('/')[0];
  return { page: page in PAGES ? page : '', params: new URLSearchParams(query || '') };
}

function renderNav(active) {
  clear(document.getElementById('nav'), Object.entries(PAGES).filter(([, [title]]) => title).map(([key, [title]]) =>
    h('a', { href: '#/' + key, class: key === active ? 'active' : null, id: 'nav-' + (key || 'overview') }, title)));
}

function renderWho() {
  const r = roles();
  document.getElementById('who').textContent = r === null ? 'no token' : `roles: ${[...r].join(', ') || 'none'}`;
}

function banner(text) {
  const b = document.getElementById('banner');
  b.textContent = text || '';
  b.hidden = !text;
}

/**
 * True while the operator is editing: a field of the page or a drawer has focus, or a form or field there holds
 * unsent input (marked data-dirty).
 */
export function editing() {
  const a = document.activeElement;
  if (a && a.matches('input, textarea, select') && a.closest('main, .drawer')) return true;
  return document.querySelector('main [data-dirty], .drawer [data-dirty]') !== null;
}

function period() {
  const v = localStorage.getItem(PERIOD_KEY);
  return v === null ? DEFAULT_PERIOD : Number(v) || 0;
}

/** The "Updated 14:03:22 CET" stamp: when the page's figures were last loaded. */
function stamp() {
  lastLoad = Date.now();
  const d = new Date(lastLoad);
  const el = document.getElementById('last-updated');
  el.textContent = 'Updated ' + fmtClock(d);
  el.title = d.toISOString() + ' (UTC)';
  el.dataset.at = String(lastLoad);
}

function showRefreshState() {
  const select = document.getElementById('refresh-every');
  const can = typeof current.refresh === 'function';
  select.disabled = !can;
  select.title = can ? 'how often this page reloads its figures' : 'this page reloads when you search';
  document.getElementById('refresh-paused').hidden = !(can && period() > 0 && editing());
}

async function tick() {
  showRefreshState();
  const p = period();
  if (!current.refresh || !p || refreshing || editing() || Date.now() - lastLoad < p * 1000) return;
  refreshing = true;
  const gen = generation;
  try {
    await current.refresh();
  } catch { /* a section shows its own failure */ }
  refreshing = false;
  if (gen === generation) stamp();
}

async function route() {
  const gen = ++generation;
  const previous = current;
  current = { stop: null, refresh: null };
  if (previous.stop) { try { previous.stop(); } catch { /* a page's cleanup must not block the next page */ } }
  banner('');
  document.querySelectorAll('.drawer').forEach((d) => d.remove());
  const { page, params } = location();
  renderNav(page);
  const main = document.getElementById('main');
  clear(main, h('p', { class: 'muted' }, 'Loading…'));
  const mod = await PAGES[page][1]();
  const answer = await mod.render(main, params);
  const next = typeof answer === 'function' ? { stop: answer, refresh: null }
    : { stop: (answer && answer.stop) || null, refresh: (answer && answer.refresh) || null };
  if (gen !== generation) {
    // the operator moved on while this page loaded
    if (next.stop) { try { next.stop(); } catch { /* ignored */ } }
    return;
  }
  current = next;
  stamp();
  showRefreshState();
}

function setupRefresh() {
  const select = document.getElementById('refresh-every');
  select.value = String(period());
  select.addEventListener('change', () => {
    localStorage.setItem(PERIOD_KEY, select.value);
    showRefreshState();
  });
  setInterval(tick, 500);
}

function setupAuth() {
  const token = document.getElementById('token');
  const tenant = document.getElementById('tenant');
  token.value = session.token;
  tenant.value = session.tenant;
  document.getElementById('auth').addEventListener('submit', (e) => {
    e.preventDefault();
    session.token = token.value;
    session.tenant = tenant.value;
    renderWho();
    route();
  });
  document.getElementById('token-clear').addEventListener('click', () => {
    session.token = '';
    session.tenant = '';
    token.value = '';
    tenant.value = '';
    renderWho();
    route();
  });
  onRefused((status, body) => banner(status === 401
    ? `Authentication required (401): ${body && body.error ? body.error : ''}. Paste a bearer token in the top bar.`
    : `This token may not do that (403): ${body && body.error ? body.error : ''}.`));
  renderWho();
}

setupAuth();
setupRefresh();
window.addEventListener('hashchange', route);
route();
