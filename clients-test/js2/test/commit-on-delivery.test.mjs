// commitOnDelivery (2.0.2's name for autoAck at pop): the cursor moves as the messages are handed out, nothing to ack.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { client, createQueue, pushNumbered, lag, http, unique } from '../lib/support.mjs'

let queen
before(() => { queen = client() })
after(async () => { await queen.close() })

test('pop with commitOnDelivery: no lease, no redelivery, the group has nothing left', async () => {
  const q = await createQueue(queen, 'cod')
  const group = unique('codg')
  await pushNumbered(queen, q, 5)
  const msgs = await queen.queue(q).group(group).subscriptionMode('all').commitOnDelivery().batch(10).partitions(1)
    .wait(false).pop()
  assert.deepEqual(msgs.map(m => m.data.n), [1, 2, 3, 4, 5])
  assert.ok(msgs.every(m => !m.leaseId), `no lease on a committed delivery: ${JSON.stringify(msgs.map(m => m.leaseId))}`)
  assert.equal(await lag(queen, q, group), 0, 'committed at delivery')
  assert.deepEqual(await queen.queue(q).group(group).batch(10).partitions(1).wait(false).pop(), [])
})

test('the wire name commitOnDelivery=true commits at delivery like autoAck=true', async () => {
  const q = await createQueue(queen, 'codwire')
  const group = unique('codw')
  await pushNumbered(queen, q, 3)
  const r = await http('GET', `/api/v1/pop/queue/${q}?consumerGroup=${group}&subscriptionMode=all&batch=10&wait=false&commitOnDelivery=true`)
  assert.equal(r.status, 200, JSON.stringify(r.body))
  assert.equal(r.body.messages.length, 3)
  assert.equal(await lag(queen, q, group), 0)
})

test('consume refuses commitOnDelivery client-side (a consume loop always leases)', () => {
  assert.throws(() => queen.queue('x').commitOnDelivery().consume(async () => {}))
})
