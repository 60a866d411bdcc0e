// Small DOM helpers shared by the pages: element building, tables, pagers, notices, formatting.
import { describe } from './api.js';

/** Builds an element: h('a', {href: '#/x', class: 'y', onclick: fn}, 'text', child). */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k === 'value') el.value = v;
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat(Infinity)) if (c !== undefined && c !== null && c !== false) el.append(c instanceof Node ? c : String(c));
  return el;
}

export function clear(el, ...children) {
  el.replaceChildren(...children.flat(Infinity).filter((c) => c !== undefined && c !== null && c !== false));
  return el;
}

/**
 * A table: columns are {title, cell(row) -> node|string, num?}; rowAttrs(row) gives each tr's attributes.
 * An empty list shows `empty` in one cell.
 */
export function table(columns, rows, rowAttrs, empty = 'Nothing here.') {
  const head = h('tr', null, columns.map((c) => h('th', { class: c.num ? 'num' : null }, c.title)));
  const body = rows.length
    ? rows.map((r) => h('tr', rowAttrs ? rowAttrs(r) : null,
        columns.map((c) => h('td', { class: [c.num ? 'num' : '', c.cls || ''].join(' ').trim() || null }, c.cell(r)))))
    : [h('tr', null, h('td', { colspan: columns.length, class: 'muted' }, empty))];
  return h('table', null, h('thead', null, head), h('tbody', null, body));
}

/**
 * Offset paging, as the API pages (a short page is the last one; there is no total count).
 * state: {offset, limit}; shown: rows on the current page.
 */
export function pager(state, shown, go) {
  const prev = h('button', { type: 'button', class: 'prev', disabled: state.offset === 0 || null,
    onclick: () => go(Math.max(0, state.offset - state.limit)) }, '← Newer');
  const next = h('button', { type: 'button', class: 'next', disabled: shown < state.limit || null,
    onclick: () => go(state.offset + state.limit) }, 'Older →');
  return h('div', { class: 'pager' }, prev,
    h('span', { class: 'muted' }, shown ? `rows ${state.offset + 1}–${state.offset + shown}` : 'no rows'), next);
}

/** A notice box; kind is ok, warn or error; then its text and elements, and optionally an object of attributes last. */
export function notice(kind, ...parts) {
  const last = parts[parts.length - 1];
  const attrs = last && typeof last === 'object' && !(last instanceof Node) && !Array.isArray(last) ? parts.pop() : {};
  return h('div', { class: 'outcome', 'data-kind': kind, ...attrs }, parts);
}

/** What a section shows when its call failed: "not available" for a route this broker lacks, else the reason. */
export function failure(err) {
  return h('p', { class: err && err.missingRoute ? 'na' : 'outcome', 'data-kind': err && err.missingRoute ? null : 'error' },
    describe(err));
}

/**
 * Runs load() into el, replacing el's content with what it returns, or with the failure. Content that renders exactly
 * as what is shown is not swapped in, so a refresh that finds nothing new leaves the page (and anything the operator
 * is about to click) alone.
 */
export async function section(el, load) {
  let next;
  try {
    next = await load();
  } catch (e) {
    next = failure(e);
  }
  const nodes = [next].flat(Infinity).filter((c) => c !== undefined && c !== null && c !== false)
    .map((c) => (c instanceof Node ? c : document.createTextNode(String(c))));
  const probe = document.createElement('div');
  probe.append(...nodes.map((n) => n.cloneNode(true)));
  if (probe.innerHTML !== el.innerHTML) el.replaceChildren(...nodes);
}

export function pretty(v) {
  return h('pre', { class: 'payload' }, v === undefined ? 'undefined' : JSON.stringify(v, null, 2));
}

const pad = (n) => String(n).padStart(2, '0');
const ZONE = new Intl.DateTimeFormat('en-US', { timeZoneName: 'short' });

/** The browser's zone at a moment, as a short name or offset (UTC, CET, GMT+5:30). */
export function zoneAt(d = new Date()) {
  const part = ZONE.formatToParts(d).find((p) => p.type === 'timeZoneName');
  return part ? part.value : 'local time';
}

function toDate(v) {
  if (v === null || v === undefined || v === '') return null;
  const d = v instanceof Date ? v : new Date(typeof v === 'number' ? v : String(v));
  return isNaN(d) ? undefined : d;
}

/** A moment as the operator's local date and time with its zone: "2026-12-06 14:03:22 CET"; '—' for none. */
export function fmtTime(v) {
  const d = toDate(v);
  if (d === null) return '—';
  if (d === undefined) return String(v);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${fmtClock(d)}`;
}

/** The time of day with the zone: "14:03:22 CET". */
export function fmtClock(d) {
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())} ${zoneAt(d)}`;
}

/** A moment as a <time> element: local time with zone, the ISO UTC instant as its tooltip and datetime. */
export function when(v) {
  const d = toDate(v);
  if (!d) return fmtTime(v);
  const iso = d.toISOString();
  return h('time', { datetime: iso, title: iso + ' (UTC)' }, fmtTime(d));
}

export function fmtAge(seconds) {
  if (seconds === null || seconds === undefined) return '—';
  const s = Number(seconds);
  if (s < 60) return `${Math.round(s)} s`;
  if (s < 3600) return `${Math.round(s / 60)} min`;
  if (s < 86400) return `${(s / 3600).toFixed(1)} h`;
  return `${(s / 86400).toFixed(1)} d`;
}

export function num(v) {
  return v === null || v === undefined ? '—' : Number(v).toLocaleString('en-US');
}

export function preview(v, max = 80) {
  const s = v === undefined ? '' : JSON.stringify(v);
  return s && s.length > max ? s.slice(0, max) + '…' : s;
}

/** A confirmation that needs the exact word typed (bulk purge, deleting a queue or a group). */
export function typedConfirm(word, label, action, idPrefix) {
  const input = h('input', { id: idPrefix + '-confirm', placeholder: `type ${word}` });
  const go = h('button', { type: 'button', id: idPrefix + '-go', class: 'danger', disabled: true }, label);
  input.addEventListener('input', () => {
    go.disabled = input.value !== word;
    if (input.value) input.dataset.dirty = '1'; else delete input.dataset.dirty;
  });
  go.addEventListener('click', () => { if (input.value === word) action(); });
  return h('span', null, h('span', { class: 'muted' }, ` type “${word}” to confirm: `), input, ' ', go);
}

/** A drawer on the right; returns its body element. close() removes it. */
export function drawer(title) {
  document.querySelectorAll('.drawer').forEach((d) => d.remove());
  const body = h('div', { class: 'drawer-body' });
  const el = h('aside', { class: 'drawer', id: 'drawer' },
    h('button', { class: 'close', type: 'button', onclick: () => el.remove() }, '✕'), h('h2', null, title), body);
  document.body.append(el);
  return body;
}

export function link(href, text, attrs = {}) {
  return h('a', { href, ...attrs }, text);
}

/**
 * A button that asks before it acts: the first click turns it into the question with "Yes" and "No". While the
 * question is open it is marked data-dirty, so the auto-refresh does not redraw it away.
 */
export function confirmButton(label, question, action, cls = '') {
  const slot = h('span', { class: 'confirm' });
  const quiet = (fn) => (e) => { e.stopPropagation(); fn(); };
  const idle = () => clear(slot, h('button', { type: 'button', class: `danger ${cls}`.trim(), onclick: quiet(ask) }, label));
  const ask = () => clear(slot, h('span', { 'data-dirty': '1' }, question, ' ',
    h('button', { type: 'button', class: 'danger confirm-yes', onclick: quiet(action) }, 'Yes'), ' ',
    h('button', { type: 'button', class: 'confirm-no', onclick: quiet(idle) }, 'No')));
  idle();
  return slot;
}

/**
 * Keyset paging, as the key-value and timer listings page (an exclusive `after` cursor, the answer's nextAfter):
 * trail holds the cursor of every page up to the one shown (null for the first), so "back" needs no second cursor.
 */
export function keysetPager(trail, shown, nextAfter, go) {
  const prev = h('button', { type: 'button', class: 'prev', disabled: trail.length < 2 || null,
    onclick: () => { trail.pop(); go(); } }, '← Back');
  const next = h('button', { type: 'button', class: 'next', disabled: !nextAfter || null,
    onclick: () => { trail.push(nextAfter); go(); } }, 'Next →');
  return h('div', { class: 'pager' }, prev,
    h('span', { class: 'muted' }, shown ? `page ${trail.length}, ${shown} row${shown === 1 ? '' : 's'}` : 'no rows'), next);
}

/**
 * The frame of a listing searched by prefix and paged by key: the heading, a filter form (the `before` fields, then
 * the prefix), an optional note, an outcome slot and the list's card. A search starts again at the first page.
 * Answers {prefix, out, list, trail}; load is the page's own loader.
 */
export function prefixFrame(main, { id, title, label, placeholder, prefix, before = null, note = null }, load) {
  const input = h('input', { id: id + '-prefix', placeholder, value: prefix || '' });
  const out = h('div', { id: id + '-outcome', 'aria-live': 'polite' });
  const list = h('div', { id: id + '-list' });
  const trail = [null];
  clear(main, h('h1', null, title),
    h('form', { class: 'filters', onsubmit: (e) => { e.preventDefault(); trail.splice(1); clear(out); load(); } },
      before, h('label', null, label, input), h('button', { type: 'submit', class: 'primary', id: id + '-apply' }, 'Search')),
    note ? h('p', { class: 'muted' }, note) : null, out, h('section', { class: 'card' }, list));
  return { prefix: input, out, list, trail };
}
