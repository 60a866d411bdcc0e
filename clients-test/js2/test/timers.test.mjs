// Timers through queen.timer(queue): schedule, fire exactly once with two nodes sweeping, cancel, peek, list, and a
// timer that falls due while every node is down (the harness stops and starts both nodes).
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { client, clientB, createQueue, drainMessages, eventually, nodes, sleep, unique } from '../lib/support.mjs'

let queen, queenB
before(() => { queen = client(); queenB = clientB() })
after(async () => { await queen.close(); await queenB.close() })

/** Drains the queue from both nodes until `count` messages arrived, then checks for a while that no more come. */
async function deliveredExactly(q, count, quietMs = 2000) {
  const got = []
  await eventually(`${count} fired messages in ${q}`, async () => {
    got.push(...await drainMessages(queen, q), ...await drainMessages(queenB, q))
    return got.length >= count
  }, 20000, 200)
  await sleep(quietMs)
  got.push(...await drainMessages(queen, q), ...await drainMessages(queenB, q))
  return got
}

test('ten timers scheduled through one node fire exactly once each while two nodes sweep', async () => {
  const q = await createQueue(queen, 'tfire')
  const scheduled = []
  for (let i = 0; i < 10; i++) {
    const r = await queen.timer(q).key(`k-${i}`).delay('500ms').payload({ i }).schedule()
    assert.deepEqual([r.ok, r.status], [true, 'scheduled'], JSON.stringify(r))
    assert.ok(r.txn && r.messageId && r.deliverAt, `schedule answers txn, messageId, deliverAt: ${JSON.stringify(r)}`)
    scheduled.push(r)
  }
  const got = await deliveredExactly(q, 10)
  assert.equal(got.length, 10, `exactly ten messages: ${JSON.stringify(got.map(m => m.data))}`)
  assert.deepEqual(got.map(m => m.data.i).sort((a, b) => a - b), [...Array(10).keys()])
  assert.deepEqual(new Set(got.map(m => m.transactionId)), new Set(scheduled.map(r => r.txn)),
    'each message carries its timer txn')
  const peek = await queen.timer(q).key('k-0').peek()
  assert.equal(peek.found, false, `a fired timer is gone: ${JSON.stringify(peek)}`)
})

test('cancel: a cancelled timer never fires; a second cancel answers ok:false absent', async () => {
  const q = await createQueue(queen, 'tcancel')
  const s = await queen.timer(q).key('c1').delay('1500ms').payload({ never: true }).txn(unique('txn')).schedule()
  assert.equal(s.status, 'scheduled', JSON.stringify(s))
  const c = await queen.timer(q).key('c1').cancel()
  assert.deepEqual([c.ok, c.status, c.txn], [true, 'cancelled', s.txn], JSON.stringify(c))
  const again = await queen.timer(q).key('c1').txn('mine').cancel()
  assert.deepEqual([again.ok, again.status, again.txn], [false, 'absent', 'mine'], JSON.stringify(again))
  await sleep(2500)
  assert.deepEqual(await drainMessages(queen, q), [], 'the cancelled timer did not fire')
})

test('peek, list and reschedule of a pending timer', async () => {
  const q = await createQueue(queen, 'tpeek')
  const s = await queen.timer(q).key('later/1').partition('p7').delay('60s').payload({ hello: 'world' }).schedule()
  const p = await queen.timer(q).key('later/1').peek()
  assert.equal(p.found, true, JSON.stringify(p))
  assert.deepEqual([p.queue, p.timerKey, p.partition, p.txn, p.messageId], [q, 'later/1', 'p7', s.txn, s.messageId])
  assert.deepEqual(JSON.parse(Buffer.from(p.payload, 'base64').toString('utf8')), { hello: 'world' })
  assert.equal(p.deliverAt, s.deliverAt)
  await queen.timer(q).key('later/2').delay('60s').payload(2).schedule()
  const page = await queen.timer(q).list({ limit: 1 })
  assert.deepEqual(page.rows.map(r => r.timerKey), ['later/1'], JSON.stringify(page))
  assert.deepEqual([page.truncated, page.nextAfter], [true, 'later/1'])
  const rest = await queen.timer(q).list({ after: page.nextAfter })
  assert.deepEqual(rest.rows.map(r => r.timerKey), ['later/2'])
  const r = await queen.timer(q).key('later/1').delay('250ms').payload({ hello: 'again' }).schedule()
  assert.equal(r.status, 'rescheduled', JSON.stringify(r))
  const got = await deliveredExactly(q, 1, 500)
  assert.deepEqual(got.map(m => [m.data, m.transactionId]), [[{ hello: 'again' }, r.txn]])
  const miss = await queen.timer(q).key('nothing').peek()
  assert.equal(miss.found, false, 'a miss is found:false with 200')
})

test('a delay beyond 90 days is refused: 403 timer_horizon_exceeded', async () => {
  const q = await createQueue(queen, 'thorizon')
  await assert.rejects(queen.timer(q).key('far').delay('91d').payload(1).schedule(), e => {
    assert.equal(e.status, 403)
    assert.equal(e.code, 'timer_horizon_exceeded')
    return true
  })
})

test('a timer that falls due while every node is down fires exactly once after they return', async () => {
  const q = await createQueue(queen, 'trestart')
  const s = await queen.timer(q).key('outage').delay('1500ms').payload({ survived: true }).schedule()
  await nodes('stop')
  try {
    await sleep(3000) // past the due time, with no node running
  } finally {
    await nodes('start')
  }
  const got = await deliveredExactly(q, 1)
  assert.deepEqual(got.map(m => [m.data, m.transactionId]), [[{ survived: true }, s.txn]])
})
