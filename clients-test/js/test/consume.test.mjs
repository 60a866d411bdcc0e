// Consume loops, consumer groups, transactions and leases through queen-mq, against a running broker.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { client, createQueue, pushNumbered, drain, consumeWithin, lag, unique } from '../lib/support.mjs'

const range = (from, to) => Array.from({ length: to - from + 1 }, (_, i) => from + i)

let queen
before(() => { queen = client() })
after(async () => { await queen.close() })

test('queue mode: a consume loop gets every message once, in order, acks them, and leaves nothing', async () => {
  const q = await createQueue(queen, 'qmode')
  await pushNumbered(queen, q, 25)
  const got = []
  await consumeWithin(20000, signal => queen.queue(q).batch(10).limit(25).timeoutMillis(1000)
    .consume(async msgs => { got.push(...msgs.map(m => m.data.n)) }, { signal }))
  assert.deepEqual(got, range(1, 25))
  assert.equal(await lag(queen, q), 0, 'the loop acked every message')
})

test('a consumer group consume loop (subscriptionMode all) gets the backlog and acks it for that group only', async () => {
  const q = await createQueue(queen, 'grp')
  const group = unique('workers')
  await pushNumbered(queen, q, 12)
  const got = []
  await consumeWithin(20000, signal => queen.queue(q).group(group).subscriptionMode('all').batch(5).limit(12)
    .timeoutMillis(1000).consume(async msgs => { got.push(...msgs.map(m => m.data.n)) }, { signal }))
  assert.deepEqual(got, range(1, 12))
  assert.equal(await lag(queen, q, group), 0, 'the loop acked every message for the group')
  assert.deepEqual((await drain(queen, q)).map(d => d.n), range(1, 12), 'queue mode keeps its own cursor')
})

test('two consumer groups each see every message', async () => {
  const q = await createQueue(queen, 'fanout')
  const [a, b] = [unique('ga'), unique('gb')]
  await pushNumbered(queen, q, 10)
  const seen = { [a]: [], [b]: [] }
  await Promise.all([a, b].map(group => consumeWithin(20000, signal => queen.queue(q).group(group)
    .subscriptionMode('all').batch(3).limit(10).timeoutMillis(1000)
    .consume(async msgs => { seen[group].push(...msgs.map(m => m.data.n)) }, { signal }))))
  assert.deepEqual(seen[a], range(1, 10))
  assert.deepEqual(seen[b], range(1, 10))
  assert.equal(await lag(queen, q, a), 0)
  assert.equal(await lag(queen, q, b), 0)
})

test('a group that names no subscriptionMode starts at new: it skips the backlog and gets later pushes', async () => {
  const q = await createQueue(queen, 'modenew')
  const group = unique('late')
  await pushNumbered(queen, q, 3)
  assert.deepEqual(await drain(queen, q, { group }), [], 'the default mode is new, so the backlog is skipped')
  await pushNumbered(queen, q, 2, 4)
  assert.deepEqual((await drain(queen, q, { group })).map(d => d.n), [4, 5])
})

test('a transaction acks a popped message and pushes its result atomically', async () => {
  const src = await createQueue(queen, 'txsrc')
  const dst = await createQueue(queen, 'txdst')
  await pushNumbered(queen, src, 1, 7)
  const [msg] = await queen.queue(src).wait(false).pop()
  assert.equal(msg.data.n, 7)
  const res = await queen.transaction().ack(msg).queue(dst).push([{ data: { derivedFrom: 7 } }]).commit()
  assert.equal(res.success, true)
  assert.equal(await lag(queen, src), 0, 'the ack committed')
  assert.deepEqual(await drain(queen, dst), [{ derivedFrom: 7 }], 'the push committed')
})

test('a transaction whose ack cannot be applied pushes nothing', async () => {
  const src = await createQueue(queen, 'txbad')
  const dst = await createQueue(queen, 'txbaddst')
  await pushNumbered(queen, src, 1)
  const [msg] = await queen.queue(src).wait(false).pop()
  const bogus = { ...msg, transactionId: unique('no-such-message') }
  await assert.rejects(queen.transaction().ack(bogus).queue(dst).push([{ data: { never: true } }]).commit())
  assert.deepEqual(await drain(queen, dst), [], 'the push rolled back with the ack')
  assert.equal((await queen.ack(msg)).success, true, 'the real message is still leased to us')
})

test('renew extends a lease past the queue leaseTime', async () => {
  const q = await createQueue(queen, 'renew', { leaseTime: 2 })
  await pushNumbered(queen, q, 1)
  const [msg] = await queen.queue(q).wait(false).pop()
  const renewed = await queen.renew(msg)
  assert.equal(renewed.success, true, JSON.stringify(renewed))
  assert.ok(Date.parse(renewed.newExpiresAt) > Date.now() + 30000, `new expiry ${renewed.newExpiresAt}`)
  // Let the queue's own 2 s lease run out: without the renewal the message would be delivered again now.
  await new Promise(resolve => setTimeout(resolve, 2500))
  assert.deepEqual(await queen.queue(q).wait(false).pop(), [], 'the renewed lease still holds the message')
  assert.equal((await queen.ack(msg)).success, true)
})

test('a consume loop with renewLease keeps a slow handler\'s lease until its ack', async () => {
  const q = await createQueue(queen, 'slow', { leaseTime: 2 })
  await pushNumbered(queen, q, 1)
  let calls = 0
  await consumeWithin(20000, signal => queen.queue(q).limit(1).timeoutMillis(1000).renewLease(true, 400)
    .consume(async () => {
      calls += 1
      await new Promise(resolve => setTimeout(resolve, 3000)) // longer than the queue's 2 s lease
    }, { signal }))
  assert.equal(calls, 1)
  assert.deepEqual(await drain(queen, q), [], 'the ack after 3 s was accepted, so nothing is redelivered')
})
