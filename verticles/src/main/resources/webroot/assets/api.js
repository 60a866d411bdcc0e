// The dashboard's one door to the broker: the public HTTP API, with the token and tenant the operator typed.
// The token lives in sessionStorage only (gone when the browser session ends).
const TOKEN = 'queen.token';
const TENANT = 'queen.tenant';

export const session = {
  get token() { return sessionStorage.getItem(TOKEN) || ''; },
  set token(v) { v ? sessionStorage.setItem(TOKEN, v.trim()) : sessionStorage.removeItem(TOKEN); },
  get tenant() { return sessionStorage.getItem(TENANT) || ''; },
  set tenant(v) { v ? sessionStorage.setItem(TENANT, v.trim()) : sessionStorage.removeItem(TENANT); },
};

/** A non-2xx answer: the status, the parsed JSON body (or null) and the raw text. */
export class ApiError extends Error {
  constructor(status, body, text, path) {
    super((body && (body.error || body.message)) || text || `HTTP ${status}`);
    this.status = status;
    this.body = body;
    this.path = path;
  }
  /** The route does not exist on this broker (yet): the page shows "not available" instead of an error. */
  get missingRoute() { return this.status === 404 && this.body && this.body.code === 'no_such_route'; }
}

// Every call made, with how many rows its answer carried: shown on the System page and read by the scale test.
export const calls = [];
window.__queenCalls = calls;

const LISTS = ['messages', 'queues', 'tasks', 'traces', 'trace_names', 'names', 'signatures', 'partitions', 'nodes'];
function rowsOf(json) {
  if (Array.isArray(json)) return json.length;
  if (json && typeof json === 'object') for (const k of LISTS) if (Array.isArray(json[k])) return json[k].length;
  return null;
}

const listeners = new Set();
/** Subscribes to refused calls (401/403), so the shell can say so plainly. */
export function onRefused(fn) { listeners.add(fn); }

export async function api(method, path, body) {
  return (await request(method, path, body)).json;
}

/**
 * A GET of one page of a listing paged by cursor (consumer groups, a queue's partitions, a message's traces): the
 * answer, and the cursor of the next page from the X-Next-Cursor header (null on the last page).
 */
export async function getPage(path) {
  const { json, res } = await request('GET', path);
  return { json, next: res.headers.get('X-Next-Cursor') };
}

async function request(method, path, body) {
  const headers = {};
  if (session.token) headers.Authorization = 'Bearer ' + session.token;
  if (session.tenant) headers['x-queen-tenant'] = session.tenant;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const started = performance.now();
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = res.status === 204 ? '' : await res.text();
  let json = null;
  try { json = text ? JSON.parse(text) : null; } catch { json = null; }
  calls.push({ method, path, status: res.status, rows: rowsOf(json), ms: Math.round(performance.now() - started) });
  if (calls.length > 500) calls.shift();
  if (res.status === 401 || res.status === 403) listeners.forEach((fn) => fn(res.status, json));
  if (!res.ok) throw new ApiError(res.status, json, text, path);
  return { json, res };
}

export const get = (path) => api('GET', path);
export const post = (path, body) => api('POST', path, body === undefined ? {} : body);
export const del = (path) => api('DELETE', path);

/** A query string from an object, leaving out empty values. */
export function qs(params) {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') p.set(k, v);
  const s = p.toString();
  return s ? '?' + s : '';
}

export const enc = encodeURIComponent;

/** A sentence for a failed call: 401 and 403 are said plainly, a missing route is "not available". */
export function describe(err) {
  if (!(err instanceof ApiError)) return 'Request failed: ' + (err && err.message ? err.message : err);
  if (err.status === 401) return `Not authenticated (401): ${err.message}. Paste a bearer token above.`;
  if (err.status === 403) return `Not permitted for this token (403): ${err.message}.`;
  if (err.missingRoute) return 'Not available on this broker.';
  return `${err.status}: ${err.message}`;
}

/**
 * The roles the typed token claims (claims `role` and `roles`), or null when no token is set, which means the broker
 * runs without JWT or the operator has not logged in yet. The broker remains the judge: this only hides buttons.
 */
export function roles() {
  const t = session.token;
  if (!t) return null;
  try {
    const part = t.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
    const claims = JSON.parse(atob(part + '='.repeat((4 - (part.length % 4)) % 4)));
    const out = new Set();
    if (typeof claims.role === 'string') out.add(claims.role);
    if (Array.isArray(claims.roles)) claims.roles.forEach((r) => out.add(String(r)));
    return out;
  } catch {
    return new Set();
  }
}

export const can = {
  /** Replay, delete a dead letter, seek, configure. */
  write() { const r = roles(); return r === null || r.has('read-write') || r.has('admin'); },
  /** Purge, redrive, delete a queue or group, maintenance switches. */
  admin() { const r = roles(); return r === null || r.has('admin'); },
};
