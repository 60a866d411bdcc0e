// The basics through the 2.x client: push, pop, ack, a consume loop and a push+ack transaction, as before 2.x.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { client, createQueue, pushNumbered, drain, consumeWithin, lag, unique, http } from '../lib/support.mjs'

const range = (from, to) => Array.from({ length: to - from + 1 }, (_, i) => from + i)

let queen
before(() => { queen = client() })
after(async () => { await queen.close() })

test('push then pop (batch and partitions pinned) gets the messages leased, and ack settles them', async () => {
  const q = await createQueue(queen, 'basic')
  await pushNumbered(queen, q, 5)
  const msgs = await queen.queue(q).batch(10).partitions(1).wait(false).pop()
  assert.deepEqual(msgs.map(m => m.data.n), range(1, 5))
  for (const m of msgs) {
    assert.ok(m.transactionId && m.partitionId, `a popped message carries transactionId and partitionId: ${JSON.stringify(m)}`)
    assert.ok(m.leaseId, 'a pop without commitOnDelivery is leased')
  }
  const res = await queen.ack(msgs, true)
  assert.equal(res.success, true, JSON.stringify(res))
  assert.equal(await lag(queen, q), 0)
  assert.deepEqual(await drain(queen, q), [], 'nothing is redelivered after the ack')
})

test('a consume loop of a group gets every message once, in order, and acks them', async () => {
  const q = await createQueue(queen, 'consume')
  const group = unique('workers')
  await pushNumbered(queen, q, 20)
  const got = []
  await consumeWithin(20000, signal => queen.queue(q).group(group).subscriptionMode('all').batch(5).limit(20)
    .timeoutMillis(1000).consume(async msgs => { got.push(...msgs.map(m => m.data.n)) }, { signal }))
  assert.deepEqual(got, range(1, 20))
  assert.equal(await lag(queen, q, group), 0)
})

test('a transaction acks a popped message and pushes its result, atomically', async () => {
  const src = await createQueue(queen, 'txsrc')
  const dst = await createQueue(queen, 'txdst')
  await pushNumbered(queen, src, 1, { first: 7 })
  const [m] = await queen.queue(src).batch(1).partitions(1).wait(false).pop()
  assert.equal(m.data.n, 7)
  const res = await queen.transaction().ack(m).queue(dst).push([{ data: { doubled: 14 } }]).commit()
  assert.equal(res.success, true, JSON.stringify(res))
  assert.equal(await lag(queen, src), 0, 'the ack of the transaction landed')
  assert.deepEqual(await drain(queen, dst), [{ doubled: 14 }], 'the push of the transaction landed')
})

test('an unknown route answers 404 with code no_such_route (2.x error bodies carry a machine code)', async () => {
  const r = await http('GET', '/api/v1/no-such-route-' + unique('r'))
  assert.equal(r.status, 404)
  assert.equal(r.body?.code, 'no_such_route', JSON.stringify(r.body))
})
