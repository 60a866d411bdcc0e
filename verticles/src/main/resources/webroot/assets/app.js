// The dashboard shell: navigation, the token/tenant bar, and a hash router that mounts one page module at a time.
// Client-side routes are hash routes (#/dlq), so a deep link also works when JWT auth is on (only / is public);
// a path route such as /dlq, served by the broker's SPA fallback, is read as the same page.
import { session, onRefused, roles } from './api.js';
import { h, clear } from './ui.js';

const PAGES = {
  '': ['Overview', () => import('./pages/overview.js')],
  queue: [null, () => import('./pages/queue.js')],
  messages: ['Messages', () => import('./pages/messages.js')],
  dlq: ['Dead letters', () => import('./pages/dlq.js')],
  groups: ['Consumer groups', () => import('./pages/groups.js')],
  traces: ['Traces', () => import('./pages/traces.js')],
  system: ['System', () => import('./pages/system.js')],
};

let stopCurrent = null;

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

async function route() {
  if (stopCurrent) { try { stopCurrent(); } catch { /* a page's cleanup must not block the next page */ } }
  stopCurrent = null;
  banner('');
  document.querySelectorAll('.drawer').forEach((d) => d.remove());
  const { page, params } = location();
  renderNav(page);
  const main = document.getElementById('main');
  clear(main, h('p', { class: 'muted' }, 'Loading…'));
  const mod = await PAGES[page][1]();
  const stop = await mod.render(main, params);
  stopCurrent = typeof stop === 'function' ? stop : null;
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
window.addEventListener('hashchange', route);
route();
