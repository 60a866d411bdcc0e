// Waits shared by the client test projects (clients-test/js for queen-mq 1.0.6, clients-test/js2 for 2.0.3). No
// import of the client here: each project brings its own, and these only call what both versions have.

export const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

/** Polls `probe` until it returns a truthy value, or fails after `timeoutMs` with `what` in the message. */
export async function eventually(what, probe, timeoutMs = 10000, everyMs = 100) {
  const deadline = Date.now() + timeoutMs
  let last
  while (Date.now() < deadline) {
    last = await probe()
    if (last) return last
    await sleep(everyMs)
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last probe gave ${JSON.stringify(last)}`)
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

