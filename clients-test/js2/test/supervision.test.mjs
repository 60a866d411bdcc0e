// Consumer supervision (2.0.4's Supervision.js, in the 2.0.3 tarball): a consume loop started with .supervision()
// writes its status record through POST /api/v1/kv (namespace queen-supervisor); read it back with queen.kv.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { client, createQueue, eventually, pushNumbered, unique } from '../lib/support.mjs'

let queen
before(() => { queen = client() })
after(async () => { await queen.close() })

/** The instances' documents of an application, read the way a dashboard does: head + chunks sharing `write`. */
async function records(app) {
  const rows = []
  for await (const row of queen.kv.listAll('queen-supervisor', `${app}/`)) rows.push(row)
  const byInstance = new Map()
  for (const row of rows) {
    const [, instance, ...rest] = row.key.split('/')
    const slot = byInstance.get(instance) ?? {}
    if (rest.join('/') === 'head') slot.head = row
    else slot.chunks = [...(slot.chunks ?? []), row]
    byInstance.set(instance, slot)
  }
  return [...byInstance.entries()].map(([instance, { head, chunks = [] }]) => {
    if (!head) return { instance, incomplete: true }
    const mine = chunks.filter(c => c.value.write === head.value.write).sort((a, b) => a.value.index - b.value.index)
    if (mine.length !== head.value.chunks) return { instance, incomplete: true }
    const doc = JSON.parse(Buffer.concat(mine.map(c => Buffer.from(c.value.data, 'base64'))).toString('utf8'))
    return { instance, head, doc }
  })
}

test('a supervised consume loop publishes its record (running, then stopped) readable through the kv API', async () => {
  const q = await createQueue(queen, 'sup')
  const app = unique('app')
  const group = unique('supg')
  await pushNumbered(queen, q, 6)
  const controller = new AbortController()
  let handled = 0
  const consumer = queen.queue(q).group(group).subscriptionMode('all').concurrency(2).batch(1).timeoutMillis(500)
    .supervision({ group: app })
    .consume(async () => { handled += 1 }, { signal: controller.signal })
  const loop = new Promise((resolve, reject) => consumer.then(resolve, reject)) // a consume loop starts when awaited
  let running
  try {
    running = await eventually('the running record of the consumer', async () => {
      const [r] = await records(app)
      return r && !r.incomplete && r.doc.state === 'running' ? r : null
    }, 10000, 200)
  } finally {
    await eventually('the six messages to be handled', async () => handled >= 6, 15000, 100).catch(() => {})
    controller.abort()
    await loop
  }
  assert.equal(running.head.value.format, 'queen.supervisor.remote-status/v1')
  assert.match(running.instance, /^[0-9a-f]{32}$/)
  assert.ok(running.head.expiresAt, 'the record expires (ttl 60 s)')
  const doc = running.doc
  assert.equal(doc.schema, 'queen.consumer.status/v1')
  assert.equal(doc.instance_id, running.instance)
  assert.equal(doc.engine, 'js')
  assert.equal(doc.pid > 0, true)
  assert.equal(doc.pool_status.length, 1)
  assert.deepEqual([doc.pool_status[0].queue, doc.pool_status[0].consumer_group, doc.pool_status[0].desired],
    [q, group, 2], JSON.stringify(doc.pool_status[0]))
  const stopped = await eventually('the stopped record', async () => {
    const [r] = await records(app)
    return r && !r.incomplete && r.doc.state === 'stopped' ? r : null
  }, 10000, 200)
  assert.equal(stopped.doc.pool_status[0].completed, 6, JSON.stringify(stopped.doc.pool_status[0]))
  assert.equal(stopped.doc.pool_status[0].failed, 0)
})
