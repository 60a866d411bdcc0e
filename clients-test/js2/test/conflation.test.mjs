// Conflation (last-value delivery) through the 2.x client: the client refuses a broker that does not echo it.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { client, consumeWithin, createQueue, lag, unique } from '../lib/support.mjs'

let queen
before(() => { queen = client() })
after(async () => { await queen.close() })

async function pushTo(q, partition, values) {
  const r = await queen.queue(q).partition(partition).push(values.map(n => ({ data: { partition, n } })))
  assert.ok(r.every(x => x.status === 'queued'), JSON.stringify(r))
}

test('a conflating group gets only the newest message of each partition, and its ack settles the ones behind', async () => {
  const q = await createQueue(queen, 'confl')
  const group = unique('last')
  await pushTo(q, 'sensor-1', [1, 2, 3, 4, 5])
  await pushTo(q, 'sensor-2', [1, 2, 3])
  const msgs = await queen.queue(q).group(group).subscriptionMode('all').conflation().batch(10).wait(false).pop()
  assert.deepEqual(msgs.map(m => m.data).sort((a, b) => a.partition.localeCompare(b.partition)),
    [{ partition: 'sensor-1', n: 5 }, { partition: 'sensor-2', n: 3 }], JSON.stringify(msgs.map(m => m.data)))
  const res = await queen.ack(msgs, true)
  assert.equal(res.success, true, JSON.stringify(res))
  assert.equal(await lag(queen, q, group), 0, 'the superseded messages were acknowledged with the newest')
  const empty = await queen.queue(q).group(group).conflation().batch(10).wait(false).pop()
  assert.deepEqual(empty, [], 'an empty conflating pop is answered (with the echo), not refused by the client')
  await pushTo(q, 'sensor-1', [6, 7])
  const next = await queen.queue(q).group(group).conflation().batch(10).wait(false).pop()
  assert.deepEqual(next.map(m => m.data), [{ partition: 'sensor-1', n: 7 }])
})

test('a consume loop with conflation gets the newest value of the partition', async () => {
  const q = await createQueue(queen, 'conflc')
  const group = unique('lastc')
  await pushTo(q, 'only', [1, 2, 3, 4])
  const seen = []
  await consumeWithin(20000, signal => queen.queue(q).group(group).subscriptionMode('all').conflation().batch(5)
    .limit(1).timeoutMillis(500)
    .consume(async msgs => { seen.push(...(Array.isArray(msgs) ? msgs : [msgs]).map(m => m.data.n)) }, { signal }))
  assert.deepEqual(seen, [4])
  assert.equal(await lag(queen, q, group), 0)
})

test('conflation is refused with 400 in queue mode and together with commitOnDelivery', async () => {
  const q = await createQueue(queen, 'conflno')
  await pushTo(q, 'p', [1])
  await assert.rejects(queen.queue(q).conflation().batch(5).wait(false).pop(), e => e.status === 400)
  await assert.rejects(queen.queue(q).group(unique('g')).conflation().commitOnDelivery().batch(5).wait(false).pop(),
    e => e.status === 400)
})
