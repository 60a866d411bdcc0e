// Pop autopilot: the 2.x client leaves batch/partitions it was not given to the broker (autopilot=true) and reads the
// broker's decision back (popResult().autopilot); with both pinned it sends no autopilot at all.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { client, consumeWithin, createQueue, pushNumbered, lag, tapFetch, unique } from '../lib/support.mjs'

let queen
before(() => { queen = client() })
after(async () => { await queen.close() })

test('a pop without batch and partitions engages autopilot and gets the broker decision back', async () => {
  const q = await createQueue(queen, 'ap')
  const group = unique('apg')
  await pushNumbered(queen, q, 30)
  const tap = tapFetch('/api/v1/pop')
  let result
  try {
    result = await queen.queue(q).group(group).subscriptionMode('all').wait(false).popResult()
  } finally {
    tap.stop()
  }
  assert.match(tap.seen[0].url, /[?&]autopilot=true/, 'the client asked for autopilot')
  assert.ok(result.messages.length >= 1, 'the broker sized a non-empty pop')
  const ap = result.autopilot
  assert.ok(ap, `the answer echoes the decision: ${JSON.stringify(tap.seen[0].body)}`)
  assert.ok(Number.isInteger(ap.batch) && ap.batch >= 1, JSON.stringify(ap))
  assert.ok(Number.isInteger(ap.partitions) && ap.partitions >= 1 && ap.partitions <= 64, JSON.stringify(ap))
  assert.ok(result.messages.length <= ap.batch, 'no more messages than the batch it reports')
  assert.ok(Number.isFinite(ap.waitMillis) && ap.waitMillis >= 0)
})

test('with batch and partitions both pinned no autopilot travels and none comes back', async () => {
  const q = await createQueue(queen, 'appin')
  await pushNumbered(queen, q, 3)
  const tap = tapFetch('/api/v1/pop')
  let result
  try {
    result = await queen.queue(q).batch(2).partitions(1).wait(false).popResult()
  } finally {
    tap.stop()
  }
  assert.doesNotMatch(tap.seen[0].url, /autopilot/)
  assert.equal(result.messages.length, 2)
  assert.equal(result.autopilot, null)
})

test('a consume loop left to autopilot consumes and acks everything', async () => {
  const q = await createQueue(queen, 'apc')
  const group = unique('apcg')
  await pushNumbered(queen, q, 40)
  const got = []
  await consumeWithin(30000, signal => queen.queue(q).group(group).subscriptionMode('all').limit(40).timeoutMillis(500)
    .consume(async msgs => { got.push(...(Array.isArray(msgs) ? msgs : [msgs]).map(m => m.data.n)) }, { signal }))
  assert.deepEqual(got.sort((a, b) => a - b), Array.from({ length: 40 }, (_, i) => i + 1))
  assert.equal(await lag(queen, q, group), 0)
})
