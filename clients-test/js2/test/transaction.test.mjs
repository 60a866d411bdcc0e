// Transactions with riders through queen.transaction(): push + ack + kv + timer in one bundle, committed together or,
// when a required precondition fails, rolled back with nothing of it visible.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { client, createQueue, drain, drainMessages, lag, pushNumbered, sleep, unique } from '../lib/support.mjs'

let queen
before(() => { queen = client() })
after(async () => { await queen.close() })

async function popOne(q) {
  const [m] = await queen.queue(q).batch(1).partitions(1).wait(false).pop()
  assert.ok(m, `a message to pop in ${q}`)
  return m
}

test('a failed precondition rolls back the push, the ack, the kv writes and the timer of the bundle', async () => {
  const src = await createQueue(queen, 'rbsrc', { leaseTime: 2 })
  const dst = await createQueue(queen, 'rbdst')
  const ns = unique('rbkv')
  await queen.kv.put(ns, 'done:42', { by: 'w1' }, { forever: true })
  await pushNumbered(queen, src, 1, { first: 42 })
  const m = await popOne(src)
  const tx = queen.transaction()
  tx.ack(m)
  tx.queue(dst).push([{ data: { shipped: 42 } }])
  tx.kv.put(ns, 'side', { written: true }, { forever: true })
  tx.kv.incr(ns, 'count', 1, { forever: true })
  tx.timer(dst).key('reminder-42').delay('200ms').payload({ remind: 42 }).schedule()
  tx.once(ns, 'done:42', { forever: true })
  const res = await tx.commit()
  assert.equal(res.success, false, JSON.stringify(res))
  assert.equal(res.reason, 'kv_precondition')
  assert.equal(res.kvReason, 'exists')
  assert.equal(res.failedIndex, 4, 'flat index: ack 0, push 1, kv 2..4 (the once is 4), timer 5')
  assert.deepEqual(res.value, { by: 'w1' })
  // nothing of it is visible
  assert.deepEqual(await drain(queen, dst), [], 'the push was rolled back')
  assert.deepEqual((await queen.kv.getMany(ns, ['side', 'count'])).missing, ['side', 'count'], 'kv writes rolled back')
  assert.equal((await queen.timer(dst).key('reminder-42').peek()).found, false, 'the timer was rolled back')
  await sleep(700)
  assert.deepEqual(await drain(queen, dst), [], 'and so it never fires')
  assert.equal(await lag(queen, src), 1, 'the ack was rolled back: the message is still pending')
  const redelivered = await (async () => {
    for (let i = 0; i < 40; i++) {
      const got = await drainMessages(queen, src)
      if (got.length) return got
      await sleep(250)
    }
    return []
  })()
  assert.deepEqual(redelivered.map(x => x.data.n), [42], 'after its lease the message is delivered again')
})

test('the same bundle without the losing precondition commits all of it, results in the flat index space', async () => {
  const src = await createQueue(queen, 'oksrc')
  const dst = await createQueue(queen, 'okdst')
  const ns = unique('okkv')
  await pushNumbered(queen, src, 1, { first: 7 })
  const m = await popOne(src)
  const tx = queen.transaction()
  tx.ack(m)
  tx.queue(dst).push([{ data: { shipped: 7 } }])
  tx.kv.put(ns, 'side', { written: true }, { forever: true })
  tx.timer(dst).key('reminder-7').delay('200ms').payload({ remind: 7 }).schedule()
  tx.once(ns, 'done:7', { forever: true })
  const res = await tx.commit()
  assert.equal(res.success, true, JSON.stringify(res))
  assert.equal(res.results.length, 5, JSON.stringify(res.results))
  assert.deepEqual(res.results.map(r => r.index), [0, 1, 2, 3, 4])
  assert.deepEqual([res.results[2].type, res.results[2].applied], ['kv', true], JSON.stringify(res.results[2]))
  assert.deepEqual([res.results[3].type, res.results[3].applied], ['kv', true], JSON.stringify(res.results[3]))
  assert.deepEqual([res.results[4].type, res.results[4].status], ['timer', 'scheduled'], JSON.stringify(res.results[4]))
  assert.equal(await lag(queen, src), 0)
  assert.deepEqual((await queen.kv.get(ns, 'side')).value, { written: true })
  assert.equal((await queen.kv.get(ns, 'done:7')).value, true)
  const got = []
  for (let i = 0; i < 40 && got.length < 2; i++) {
    got.push(...await drain(queen, dst))
    if (got.length < 2) await sleep(150)
  }
  assert.deepEqual(got.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
    [{ remind: 7 }, { shipped: 7 }], 'the push and the fired timer')
})
