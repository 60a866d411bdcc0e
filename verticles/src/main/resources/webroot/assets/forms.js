// Forms that write: a queue's options (create and configure, as fields or as raw JSON) and a test message push.
// Each form marks itself data-dirty while it holds unsent edits, which pauses the auto-refresh; the broker's refusals
// are shown inline, on the field it names when it names one ({"error", "invalid": "<key>"}).
import { get, post, enc, describe, ApiError } from './api.js';
import { h, clear, notice, link, drawer } from './ui.js';

/**
 * Queen's configure options (API.md §5.2): key, type, default, group and what it does. "Stored only" options are
 * kept and echoed, never enforced (Queen's contract).
 */
export const OPTIONS = [
  ['namespace', 'text', '', 'Naming', 'discovery pops and listings; a pushed queue takes the text before the first dot'],
  ['task', 'text', '', 'Naming', 'discovery pops; a pushed queue takes the text between the first and second dot'],
  ['leaseTime', 'int', 300, 'Delivery', 'seconds a pop holds its messages when it names no leaseSeconds'],
  ['retryLimit', 'int', 3, 'Delivery', 'failed acks a message may take before it is dead-lettered'],
  ['retryDelay', 'int', 1000, 'Delivery', 'ms; stored and echoed only: a failed message comes back at once'],
  ['delayedProcessing', 'int', 0, 'Delivery', 'seconds a message waits before it can be popped'],
  ['windowBuffer', 'int', 0, 'Delivery', 'seconds a partition must be quiet before it delivers'],
  ['minPopWaitTime', 'int', 0, 'Delivery', 'ms an under-full pop is held back (0 to 60000)', 0, 60000],
  ['priority', 'int', 0, 'Delivery', 'stored and echoed only'],
  ['deadLetterQueue', 'bool', true, 'Dead letters', 'file exhausted messages as dead letters (off together with the next: dropped)'],
  ['dlqAfterMaxRetries', 'bool', true, 'Dead letters', 'dead-letter after retryLimit failed acks'],
  ['retentionEnabled', 'bool', false, 'Retention', 'switches the next two on'],
  ['retentionSeconds', 'int', 0, 'Retention', 'delete messages older than this, consumed or not (0: never)'],
  ['completedRetentionSeconds', 'int', 0, 'Retention', 'delete messages every group has consumed, once this old'],
  ['maxWaitTimeSeconds', 'int', 0, 'Retention', 'evict messages older than this, leased ones included (0: never)'],
  ['ttl', 'int', 3600, 'Retention', 'seconds; stored and echoed only'],
  ['maxSize', 'int', 0, 'Retention', 'stored only: no cap is enforced'],
  ['dedupWindowSeconds', 'int', 3600, 'Other', 'seconds a transaction id is remembered against duplicates (0: off)', 0],
  ['encryptionEnabled', 'bool', false, 'Other', 'encrypt payloads at rest; needs QUEEN_ENCRYPTION_KEY on the broker'],
  ['retentionSinkHold', 'text', '', 'Other', 'S3 sink name: letters, digits, . _ - (at most 64)'],
  ['retentionSinkHoldMaxSeconds', 'int', 604800, 'Other', 'seconds a sink may hold retention back (60 to 31536000)', 60, 31536000],
].map(([key, type, def, group, hint, min, max]) => ({ key, type, def, group, hint, min, max }));
const KNOWN = new Set(OPTIONS.map((o) => o.key));

/** Marks a form dirty on every edit; clean(form) after it was sent. */
function trackEdits(form) {
  form.addEventListener('input', () => { form.dataset.dirty = '1'; });
  form.addEventListener('change', () => { form.dataset.dirty = '1'; });
}
const clean = (form) => { delete form.dataset.dirty; };

/** Shows the broker's refusal: on the field it names, else in `out`. */
function refusal(e, fields, out) {
  const key = e instanceof ApiError && e.body && e.body.invalid;
  if (key && fields[key]) {
    fields[key].error(e.message);
    clear(out, notice('error', `Not saved: ${e.message}`));
  } else {
    clear(out, notice('error', 'Not saved: ' + describe(e)));
  }
}

/** One option's input with its label, hint and error slot; value() is '' for "not set". */
function optionField(prefix, o, current) {
  const id = `${prefix}-${o.key}`;
  const has = current && current[o.key] !== undefined && current[o.key] !== null;
  let input;
  if (o.type === 'bool') {
    input = h('select', { id, name: o.key },
      h('option', { value: '' }, `default (${o.def ? 'on' : 'off'})`), h('option', { value: 'true' }, 'on'),
      h('option', { value: 'false' }, 'off'));
    input.value = has ? String(!!current[o.key]) : '';
  } else {
    input = h('input', { id, name: o.key, inputmode: o.type === 'int' ? 'numeric' : null, autocomplete: 'off',
      placeholder: o.def === '' ? '(none)' : String(o.def), value: has ? String(current[o.key]) : '' });
  }
  const err = h('span', { class: 'field-error', id: id + '-error' });
  const label = h('label', { class: 'field', for: id }, h('span', null, o.key), input,
    h('small', { class: 'muted' }, o.hint), err);
  const field = {
    label, input,
    error(text) { err.textContent = text || ''; input.classList.toggle('invalid', !!text); },
    set(v) { input.value = v === undefined || v === null ? '' : String(v); },
    /** {value} when set and valid, {unset:true} when empty, {error} otherwise. */
    read() {
      const raw = input.value.trim();
      if (raw === '') return { unset: true };
      if (o.type === 'bool') return { value: raw === 'true' };
      if (o.type === 'text') {
        if (o.key === 'retentionSinkHold' && !/^[A-Za-z0-9._-]{0,64}$/.test(raw)) {
          return { error: 'letters, digits, dot, underscore and dash only, at most 64' };
        }
        return { value: raw };
      }
      if (!/^[+-]?\d{1,10}$/.test(raw) || Math.abs(Number(raw)) > 2147483647) return { error: 'a whole number' };
      const n = Number(raw);
      if (o.min !== undefined && n < o.min) return { error: `at least ${o.min}` };
      if (o.max !== undefined && n > o.max) return { error: `at most ${o.max}` };
      return { value: n };
    },
  };
  return field;
}

/**
 * The options as form fields, grouped, with an "edit as raw JSON" switch. current: the stored options (edit) or
 * null (create: every field empty, meaning the default). read() gives {options} or {error}: the fields set (create)
 * or changed (edit), or the raw JSON object as typed; `unknown` lists keys the broker will ignore.
 */
export function optionsForm(prefix, current) {
  const fields = {};
  const groups = new Map();
  for (const o of OPTIONS) {
    fields[o.key] = optionField(prefix, o, current);
    if (!groups.has(o.group)) groups.set(o.group, []);
    groups.get(o.group).push(fields[o.key].label);
  }
  const fieldset = h('div', { class: 'option-groups', id: prefix + '-fields' },
    [...groups].map(([name, labels]) => h('fieldset', null, h('legend', null, name), labels)));
  const raw = h('textarea', { id: prefix + '-raw', rows: 14, cols: 60, spellcheck: 'false', hidden: true });
  const rawError = h('span', { class: 'field-error', id: prefix + '-raw-error' });
  const toggle = h('input', { type: 'checkbox', id: prefix + '-raw-toggle' });
  let baseline = { ...(current || {}) };

  function fromFields() {
    const options = {};
    let bad = false;
    for (const o of OPTIONS) {
      const r = fields[o.key].read();
      fields[o.key].error(r.error);
      if (r.error) { bad = true; continue; }
      if (r.unset) continue;
      if (!current || r.value !== baseline[o.key]) options[o.key] = r.value;
    }
    return bad ? { error: 'Some fields are not valid (marked in red).' } : { options, unknown: [] };
  }
  function fromRaw() {
    let parsed;
    try { parsed = JSON.parse(raw.value); } catch (e) { return { error: 'Not JSON: ' + e.message }; }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return { error: 'The options must be a JSON object.' };
    return { options: parsed, unknown: Object.keys(parsed).filter((k) => !KNOWN.has(k)) };
  }
  toggle.addEventListener('change', () => {
    rawError.textContent = '';
    if (toggle.checked) {
      const r = fromFields();
      if (r.error) { toggle.checked = false; rawError.textContent = r.error; return; }
      raw.value = JSON.stringify(current ? { ...baseline, ...r.options } : r.options, null, 2);
    } else {
      const r = fromRaw();
      if (r.error) { toggle.checked = true; rawError.textContent = r.error; return; }
      for (const o of OPTIONS) if (o.key in r.options) fields[o.key].set(r.options[o.key]);
    }
    raw.hidden = !toggle.checked;
    fieldset.hidden = toggle.checked;
  });
  return {
    fields,
    el: h('div', null, fieldset, h('label', { class: 'inline' }, toggle, ' edit as raw JSON (any key; keys the broker does not know are ignored)'), raw, rawError),
    read() {
      const r = toggle.checked ? fromRaw() : fromFields();
      if (r.error && toggle.checked) rawError.textContent = r.error;
      if (toggle.checked && current && r.options) {
        // raw JSON is the whole bag: send what differs from the stored options
        r.options = Object.fromEntries(Object.entries(r.options).filter(([k, v]) => baseline[k] !== v));
      }
      return r;
    },
    /** After a save: the echoed options become the baseline, the fields show them. */
    saved(options) {
      baseline = { ...baseline, ...options };
      for (const o of OPTIONS) if (o.key in options) fields[o.key].set(options[o.key]);
      if (toggle.checked) raw.value = JSON.stringify(baseline, null, 2);
    },
  };
}

/** The sentence for keys the broker ignores (Queen's contract: an unknown configure key is not an error). */
const ignored = (unknown) => (unknown && unknown.length ? ` The broker ignores keys it does not know: ${unknown.join(', ')}.` : '');

/** The configuration card of an existing queue: its stored options as fields, saved with a merge. */
export function configureForm(queue, options) {
  const out = h('div', { id: 'config-outcome', 'aria-live': 'polite' });
  const form = optionsForm('config', options);
  const el = h('form', { id: 'config-form', class: 'options-form', onsubmit: async (e) => {
    e.preventDefault();
    Object.values(form.fields).forEach((f) => f.error(''));
    const r = form.read();
    if (r.error) { clear(out, notice('error', r.error)); return; }
    if (!Object.keys(r.options).length) { clear(out, notice('warn', 'Nothing changed.')); clean(el); return; }
    try {
      const answer = await post('/api/v1/configure', { queue, options: r.options });
      form.saved(answer && answer.options ? answer.options : r.options);
      clean(el);
      clear(out, notice('ok', `Saved: ${Object.keys(r.options).join(', ')}.${ignored(r.unknown)}`));
    } catch (err) { refusal(err, form.fields, out); }
  } }, h('p', { class: 'muted' }, 'Changed fields are saved with POST /api/v1/configure (merge); an empty field keeps the stored value.'),
  form.el, h('div', null, h('button', { type: 'submit', class: 'primary', id: 'config-save' }, 'Save')), out);
  trackEdits(el);
  return el;
}

/** The "Create a queue" drawer: name and options; an existing name is refused before anything is written. */
export function createQueueDrawer(name, onCreated) {
  const body = drawer('Create a queue');
  const out = h('div', { id: 'cq-outcome', 'aria-live': 'polite' });
  const nameInput = h('input', { id: 'cq-name', value: name || '', required: true, autocomplete: 'off', placeholder: 'orders' });
  const nameError = h('span', { class: 'field-error', id: 'cq-name-error' });
  const form = optionsForm('cq', null);
  const el = h('form', { id: 'create-queue', class: 'options-form', onsubmit: async (e) => {
    e.preventDefault();
    nameError.textContent = '';
    Object.values(form.fields).forEach((f) => f.error(''));
    const q = nameInput.value.trim();
    if (!q) { nameError.textContent = 'A queue needs a name.'; return; }
    const r = form.read();
    if (r.error) { clear(out, notice('error', r.error)); return; }
    try {
      await get('/api/v1/resources/queues/' + enc(q) + '?limit=1');
      nameError.textContent = 'A queue with this name exists.';
      clear(out, notice('warn', 'Not created: ', link('#/queue?name=' + enc(q), `configure ${q} on its page`), ' instead.'));
      return;
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 404 && !err.missingRoute)) { clear(out, notice('error', describe(err))); return; }
    }
    try {
      await post('/api/v1/configure', { queue: q, options: r.options });
      clean(el);
      clear(out, notice('ok', `Queue ${q} created.${ignored(r.unknown)} `, link('#/queue?name=' + enc(q), 'Open it'), ' · ',
        h('a', { href: '#', id: 'cq-push', onclick: (ev) => { ev.preventDefault(); pushDrawer(q, onCreated); } }, 'push a test message')));
      if (onCreated) onCreated(q);
    } catch (err) { refusal(err, form.fields, out); }
  } },
  h('label', { class: 'field', for: 'cq-name' }, h('span', null, 'name'), nameInput,
    h('small', { class: 'muted' }, 'at most 255 characters; a dotted name (billing.invoices) derives namespace and task'), nameError),
  h('p', { class: 'muted' }, 'Leave a field empty for its default (shown greyed).'), form.el,
  h('div', null, h('button', { type: 'submit', class: 'primary', id: 'cq-go' }, 'Create queue')), out);
  trackEdits(el);
  clear(body, el);
  nameInput.focus();
  return el;
}

/**
 * A test message push: queue, partition, transaction id and a JSON payload editor that checks as you type.
 * onPushed(queue) runs after a stored push.
 */
export function pushForm(queue, onPushed) {
  const f = {
    queue: h('input', { id: 'push-queue', value: queue || '', required: true, autocomplete: 'off', placeholder: 'orders' }),
    partition: h('input', { id: 'push-partition', autocomplete: 'off', placeholder: 'Default' }),
    txn: h('input', { id: 'push-txn', autocomplete: 'off', placeholder: 'generated by the broker' }),
    payload: h('textarea', { id: 'push-payload', rows: 8, cols: 60, spellcheck: 'false' }, '{\n  "hello": "world"\n}'),
  };
  const check = h('span', { class: 'field-hint', id: 'push-payload-check' }, 'valid JSON');
  const out = h('div', { id: 'push-outcome', 'aria-live': 'polite' });
  const parse = () => {
    try {
      const v = JSON.parse(f.payload.value);
      check.textContent = 'valid JSON';
      check.dataset.valid = 'true';
      return { ok: true, v };
    } catch (e) {
      check.textContent = 'not JSON: ' + e.message;
      check.dataset.valid = 'false';
      return { ok: false };
    }
  };
  f.payload.addEventListener('input', parse);
  const format = () => { const p = parse(); if (p.ok) f.payload.value = JSON.stringify(p.v, null, 2); };
  const el = h('form', { id: 'push-form', class: 'push-form', onsubmit: async (e) => {
    e.preventDefault();
    const q = f.queue.value.trim();
    if (!q) { clear(out, notice('error', 'Name the queue to push to.')); return; }
    const p = parse();
    if (!p.ok) { clear(out, notice('error', 'The payload is not JSON; fix it first.')); return; }
    const item = { queue: q, payload: p.v };
    if (f.partition.value.trim()) item.partition = f.partition.value.trim();
    if (f.txn.value.trim()) item.transactionId = f.txn.value.trim();
    try {
      const [r] = await post('/api/v1/push', { items: [item] });
      const where = `${q}/${item.partition || 'Default'}`;
      const messages = link('#/messages?queue=' + enc(q), 'see it in Messages');
      if (r.status === 'queued') {
        clean(el);
        clear(out, notice('ok', `queued: ${r.transaction_id} is stored in ${where}. `, messages, { 'data-status': 'queued' }));
        if (onPushed) onPushed(q);
      } else if (r.status === 'duplicate') {
        clear(out, notice('warn', `duplicate: ${where} already holds transaction id ${r.transaction_id} within its dedup window; nothing was written.`, { 'data-status': 'duplicate' }));
      } else if (r.status === 'buffered') {
        clean(el);
        clear(out, notice('warn', `buffered: the broker spooled ${r.transaction_id} to disk (database unavailable or push maintenance on); it is written when it can be.`, { 'data-status': 'buffered' }));
      } else {
        clear(out, notice('error', `${r.status}: ${r.error || 'the push was not stored'}.`, { 'data-status': r.status }));
      }
    } catch (err) { clear(out, notice('error', 'Not pushed: ' + describe(err))); }
  } },
  h('div', { class: 'filters' }, h('label', null, 'queue', f.queue), h('label', null, 'partition', f.partition),
    h('label', null, 'transaction id', f.txn)),
  h('label', { class: 'field', for: 'push-payload' }, h('span', null, 'payload (JSON)'), f.payload, check),
  h('div', null, h('button', { type: 'button', id: 'push-format', onclick: format }, 'Format'), ' ',
    h('button', { type: 'submit', class: 'primary', id: 'push-go' }, 'Push')), out);
  trackEdits(el);
  return el;
}

/** pushForm in a drawer. */
export function pushDrawer(queue, onPushed) {
  const body = drawer('Push a test message');
  const form = pushForm(queue, onPushed);
  clear(body, h('p', { class: 'muted' }, 'Sent with POST /api/v1/push; a push to a queue that does not exist creates it.'), form);
  (queue ? form.querySelector('#push-payload') : form.querySelector('#push-queue')).focus();
  return form;
}
