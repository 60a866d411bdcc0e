// Shared helpers for the 2.x client tests: the brokers' addresses and the harness control, a client per file, unique
// names, the waits of ../../lib/waits.mjs, and the few raw HTTP calls the packaged client has no API for (locks, the
// KV path routes, /fetch).
import { Queen } from 'queen-mq'

/** The broker under test; JsClient2IT sets QUEEN_URL to the first node it started, QUEEN_URL_B to the second. */
export const BROKER_URL = (process.env.QUEEN_URL || 'http://127.0.0.1:6632').replace(/\/+$/, '')
export const BROKER_URL_B = (process.env.QUEEN_URL_B || BROKER_URL).replace(/\/+$/, '')

/** JsClient2IT's control: `POST /stop` stops both nodes, `POST /start` starts them again (same ports, same database). */
const CONTROL_URL = process.env.QUEEN_CONTROL_URL || null

/** Asks the harness to stop (`'stop'`) or start (`'start'`) every node; resolves once done. */
export async function nodes(action) {
  if (!CONTROL_URL) throw new Error('QUEEN_CONTROL_URL is not set: run this file under JsClient2IT')
  const res = await fetch(`${CONTROL_URL}/${action}`, { method: 'POST' })
  if (res.status !== 200) throw new Error(`the harness could not ${action} the nodes: ${res.status} ${await res.text()}`)
}

const RUN = Date.now().toString(36)
let seq = 0

/** A name no other test (and no earlier run against the same database) uses: lowercase, so it is a KV namespace too. */
export function unique(prefix) {
  seq += 1
  return `js2-${prefix}-${RUN}-${seq}`
}

/** A client as an application builds it; signal handlers off because the test runner owns the process. */
export function client(options = {}) {
  return new Queen({ url: BROKER_URL, handleSignals: false, retryAttempts: 1, retryDelayMillis: 200, ...options })
}

/** A client of the second node. */
export function clientB(options = {}) {
  return client({ url: BROKER_URL_B, ...options })
}

/** Creates a queue with the given options (merged over the client's defaults) and returns its name. */
export async function createQueue(queen, prefix, options = {}) {
  const name = unique(prefix)
  await queen.queue(name).config(options).create()
  return name
}

/** Pushes `count` messages {n: first..first+count-1} to a queue (partition optional) and checks each was queued. */
export async function pushNumbered(queen, queue, count, { first = 1, partition = null } = {}) {
  const items = Array.from({ length: count }, (_, i) => ({ data: { n: first + i } }))
  let builder = queen.queue(queue)
  if (partition) builder = builder.partition(partition)
  const results = await builder.push(items)
  const queued = results.filter(r => r.status === 'queued').length
  if (queued !== count) throw new Error(`pushed ${count}, broker queued ${queued}: ${JSON.stringify(results)}`)
  return results
}

export { sleep, eventually, consumeWithin, lag } from '../../lib/waits.mjs'

/**
 * Pops (wait=false, batch and partitions pinned so autopilot stays out of it) until a pop returns nothing; acks each
 * batch, and returns the messages in delivery order.
 */
export async function drainMessages(queen, queue, { group = null, mode = null, batch = 50, max = 1000 } = {}) {
  const seen = []
  for (;;) {
    let builder = queen.queue(queue).batch(batch).partitions(16).wait(false)
    if (group) builder = builder.group(group)
    if (mode) builder = builder.subscriptionMode(mode)
    const msgs = await builder.pop()
    if (msgs.length === 0) return seen
    const res = await queen.ack(msgs, true)
    if (!res.success) throw new Error(`ack rejected: ${res.error}`)
    seen.push(...msgs)
    if (seen.length > max) throw new Error(`drained more than ${max} messages from ${queue}`)
  }
}

/** drainMessages, payloads only. */
export async function drain(queen, queue, options = {}) {
  return (await drainMessages(queen, queue, options)).map(m => m.data)
}

/**
 * One raw HTTP call, for the routes the packaged client has no API for. Returns {status, headers, body} (body parsed
 * when it is JSON, else the text); never throws on a status.
 */
export async function http(method, path, body = undefined, base = BROKER_URL) {
  const init = { method, headers: {} }
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json'
    init.body = typeof body === 'string' ? body : JSON.stringify(body)
  }
  const res = await fetch(base + path, init)
  const text = await res.text()
  let parsed = text
  try { parsed = text ? JSON.parse(text) : null } catch { /* not JSON: keep the text */ }
  return { status: res.status, headers: res.headers, body: parsed }
}

/** POST, requiring 200, returning the body; a failure names the route, the status and the body. */
export async function post200(path, body) {
  const r = await http('POST', path, body)
  if (r.status !== 200) throw new Error(`POST ${path} answered ${r.status}: ${JSON.stringify(r.body)}`)
  return r.body
}

/** `POST /api/v1/locks` (Queen 2.1, not in the packaged 2.0.3 client): the results, one per operation. */
export async function locks(...operations) {
  const body = await post200('/api/v1/locks', { operations })
  if (!Array.isArray(body?.results) || body.results.length !== operations.length) {
    throw new Error(`locks: expected ${operations.length} results, got ${JSON.stringify(body)}`)
  }
  return body.results
}

/** Milliseconds since the epoch of one of the broker's ISO timestamps (microseconds cut to milliseconds). */
export function ms(iso) {
  if (typeof iso !== 'string') throw new Error(`not a timestamp: ${JSON.stringify(iso)}`)
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d+))?Z$/.exec(iso)
  if (!m) throw new Error(`not an ISO-8601 UTC timestamp ending in Z: ${iso}`)
  const fraction = ((m[2] || '') + '000').slice(0, 3)
  return Date.parse(`${m[1]}.${fraction}Z`)
}

/**
 * Records what the client's requests to paths starting with `prefix` answered ({method, url, status, body}), by
 * wrapping the global fetch the client calls; `stop()` restores it. For the echoes the client reads and drops (the
 * autopilot decision of a consume loop).
 */
export function tapFetch(prefix) {
  const original = globalThis.fetch
  const seen = []
  globalThis.fetch = async (input, init = {}) => {
    const res = await original(input, init)
    const url = typeof input === 'string' ? input : input.url
    if (new URL(url).pathname.startsWith(prefix)) {
      const entry = { method: init.method || 'GET', url, status: res.status, body: null }
      seen.push(entry)
      if (res.status === 200) {
        try { entry.body = await res.clone().json() } catch { /* not JSON */ }
      }
    }
    return res
  }
  return { seen, stop() { globalThis.fetch = original } }
}
