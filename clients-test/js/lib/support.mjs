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

/** Polls `probe` until it returns a truthy value, or fails after `timeoutMs` with `what` in the message. */
export async function eventually(what, probe, timeoutMs = 10000) {
  const deadline = Date.now() + timeoutMs
  let last
  while (Date.now() < deadline) {
    last = await probe()
    if (last) return last
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last probe gave ${JSON.stringify(last)}`)
}

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

/**
 * Runs a consume loop that should end by itself (its `limit`), aborting it after `ms` so that a loop which never
 * reaches its limit fails the test instead of hanging it.
 */
export async function consumeWithin(ms, start) {
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(), ms)
  try {
    await start(controller.signal)
  } finally {
    clearTimeout(timer)
  }
  if (controller.signal.aborted) throw new Error(`the consume loop did not reach its limit within ${ms} ms`)
}

/** How many messages of `queue` the group (queue mode when null) has not acked, from the consumer-group listing. */
export async function lag(queen, queue, group = null) {
  const detail = await queen.admin.getConsumerGroup(group ?? '__QUEUE_MODE__')
  const partitions = detail?.queues?.[queue]?.partitions
  if (!Array.isArray(partitions)) throw new Error(`no cursor of ${group ?? 'queue mode'} on ${queue}: ${JSON.stringify(detail)}`)
  return partitions.reduce((sum, p) => sum + p.lag, 0)
}
