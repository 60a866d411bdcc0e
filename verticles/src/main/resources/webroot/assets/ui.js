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

/** A notice box; kind is ok, warn or error. */
export function notice(kind, text, attrs = {}) {
  return h('div', { class: 'outcome', 'data-kind': kind, ...attrs }, text);
}

/** What a section shows when its call failed: "not available" for a route this broker lacks, else the reason. */
export function failure(err) {
  return h('p', { class: err && err.missingRoute ? 'na' : 'outcome', 'data-kind': err && err.missingRoute ? null : 'error' },
    describe(err));
}

/** Runs load() into el, replacing el's content with what it returns, or with the failure. */
export async function section(el, load) {
  try {
    clear(el, await load());
  } catch (e) {
    clear(el, failure(e));
  }
}

export function pretty(v) {
  return h('pre', { class: 'payload' }, v === undefined ? 'undefined' : JSON.stringify(v, null, 2));
}

export function fmtTime(v) {
  if (v === null || v === undefined || v === '') return '—';
  const d = new Date(typeof v === 'number' ? v : String(v));
  return isNaN(d) ? String(v) : d.toISOString().replace('T', ' ').replace('Z', '');
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
  input.addEventListener('input', () => { go.disabled = input.value !== word; });
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
