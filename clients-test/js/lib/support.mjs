// Shared helpers for the client tests: the broker's address, a client per test, unique names, bounded waits.
import { Queen } from 'queen-mq'

/** The broker under test; JsClientIT sets QUEEN_URL to the node it started. */
export const BROKER_URL = (process.env.QUEEN_URL || 'http://127.0.0.1:6632').replace(/\/+$/, '')

const RUN = Date.now().toString(36)
let seq = 0

/** A name no other test (and no earlier run against the same database) uses. */
export function unique(prefix) {
  seq += 1
  return `js-${prefix}-${RUN}-${seq}`
}

/** A client as an application builds it; signal handlers off because the test runner owns the process. */
export function client() {
  return new Queen({ url: BROKER_URL, handleSignals: false, retryAttempts: 1, retryDelayMillis: 200 })
}

/** Creates a queue with the given options (merged over the client's defaults) and returns its name. */
export async function createQueue(queen, prefix, options = {}) {
  const name = unique(prefix)
  await queen.queue(name).config(options).create()
  return name
}

/** Pushes `count` messages {n: first..first+count-1} to a queue and checks every one was queued. */
export async function pushNumbered(queen, queue, count, first = 1) {
  const items = Array.from({ length: count }, (_, i) => ({ data: { n: first + i } }))
  const results = await queen.queue(queue).push(items)
  const queued = results.filter(r => r.status === 'queued').length
  if (queued !== count) throw new Error(`pushed ${count}, broker queued ${queued}: ${JSON.stringify(results)}`)
  return results
}

export { eventually, consumeWithin, lag } from '../../lib/waits.mjs'

/**
 * Pops (wait=false) in batches until a pop returns nothing; acks each batch with the pop's group, and returns the
 * payloads in delivery order.
 */
export async function drain(queen, queue, { group = null, mode = null, batch = 10, max = 1000 } = {}) {
  const seen = []
  for (;;) {
    let builder = queen.queue(queue).batch(batch).wait(false)
    if (group) builder = builder.group(group)
    if (mode) builder = builder.subscriptionMode(mode)
    const msgs = await builder.pop()
    if (msgs.length === 0) return seen
    const res = await queen.ack(msgs, true, group ? { group } : {})
    if (!res.success) throw new Error(`ack rejected: ${res.error}`)
    seen.push(...msgs.map(m => m.data))
    if (seen.length > max) throw new Error(`drained more than ${max} messages from ${queue}`)
  }
}
