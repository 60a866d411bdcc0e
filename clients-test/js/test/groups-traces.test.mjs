// Consumer-group control (seek, delete), queue depth and message traces through queen-mq (API.md §5.8, §5.11, §5.13).
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { client, createQueue, pushNumbered, drain, consumeWithin, unique } from '../lib/support.mjs'

const range = (from, to) => Array.from({ length: to - from + 1 }, (_, i) => from + i)
const numbers = list => list.map(d => d.n)

let queen
before(() => { queen = client() })
after(async () => { await queen.close() })

/** A timestamp strictly between everything pushed before the call and everything pushed after it. */
async function boundary() {
  const at = new Date(Date.now() + 1)
  await new Promise(resolve => setTimeout(resolve, 25)) // later pushes get a later clock reading than `at`
  return at.toISOString()
}

test('seeking a group back to a timestamp redelivers exactly the messages from it on, in order', async () => {
  const q = await createQueue(queen, 'seekts')
  const group = unique('rewind')
  await pushNumbered(queen, q, 5)
  const at = await boundary()
  await pushNumbered(queen, q, 5, 6)
  assert.deepEqual(numbers(await drain(queen, q, { group, mode: 'all' })), range(1, 10))

  const res = await queen.admin.seekConsumerGroup(group, q, { timestamp: at })
  assert.equal(res.success, true, JSON.stringify(res))
  assert.deepEqual(numbers(await drain(queen, q, { group })), range(6, 10))
  assert.deepEqual(numbers(await drain(queen, q)), range(1, 10), 'queue mode is not moved by the group seek')
})

test('seeking a group to the end skips everything already stored', async () => {
  const q = await createQueue(queen, 'seekend')
  const group = unique('skip')
  await pushNumbered(queen, q, 2)
  assert.deepEqual(numbers(await drain(queen, q, { group, mode: 'all' })), [1, 2])
  await pushNumbered(queen, q, 3, 3)

  const res = await queen.admin.seekConsumerGroup(group, q, { toEnd: true })
  assert.equal(res.success, true, JSON.stringify(res))
  assert.deepEqual(await drain(queen, q, { group }), [], 'the three stored messages are skipped')
  await pushNumbered(queen, q, 1, 6)
  assert.deepEqual(numbers(await drain(queen, q, { group })), [6])
})

test('a seek with neither toEnd nor timestamp is a 400 naming both', async () => {
  const q = await createQueue(queen, 'seekbad')
  await assert.rejects(queen.admin.seekConsumerGroup(unique('g'), q, {}), err => {
    assert.equal(err.status, 400)
    assert.match(err.message, /toEnd.*timestamp/)
    return true
  })
})

test('deleteConsumerGroup makes the group start over from its subscription', async () => {
  const q = await createQueue(queen, 'cgdel')
  const group = unique('again')
  await pushNumbered(queen, q, 4)
  assert.deepEqual(numbers(await drain(queen, q, { group, mode: 'all' })), range(1, 4))

  const res = await queen.deleteConsumerGroup(group)
  assert.equal(res.success, true, JSON.stringify(res))
  assert.equal(res.consumerGroup, group)
  assert.equal(res.deletedPartitions, 1)
  assert.equal(res.metadataDeleted, true)
  const groups = await queen.admin.listConsumerGroups()
  assert.equal(groups.find(g => g.name === group), undefined, 'the group is no longer listed')

  assert.deepEqual(numbers(await drain(queen, q, { group, mode: 'all' })), range(1, 4), 'the group re-consumes')
})

test('deleting a group on one queue resets that queue only', async () => {
  const [q1, q2] = [await createQueue(queen, 'cgq1'), await createQueue(queen, 'cgq2')]
  const group = unique('partial')
  await pushNumbered(queen, q1, 2)
  await pushNumbered(queen, q2, 2)
  assert.deepEqual(numbers(await drain(queen, q1, { group, mode: 'all' })), [1, 2])
  assert.deepEqual(numbers(await drain(queen, q2, { group, mode: 'all' })), [1, 2])

  const res = await queen.admin.deleteConsumerGroupForQueue(group, q1)
  assert.equal(res.success, true, JSON.stringify(res))
  assert.equal(res.queueName, q1)
  assert.deepEqual(numbers(await drain(queen, q1, { group, mode: 'all' })), [1, 2], 'q1 starts over')
  assert.deepEqual(await drain(queen, q2, { group, mode: 'all' }), [], 'q2 keeps its cursor')
})

test('queue depth counts what a group still has to consume', async () => {
  const q = await createQueue(queen, 'depth')
  const group = unique('lagging')
  await pushNumbered(queen, q, 4)
  const [first] = await queen.queue(q).group(group).subscriptionMode('all').wait(false).pop()
  assert.equal((await queen.ack(first, true, { group })).success, true)

  const depth = await queen.admin.getQueueDepth(q, group)
  assert.equal(depth.queue, q)
  assert.equal(depth.group, group)
  assert.equal(depth.pending, 3)
  await assert.rejects(queen.admin.getQueueDepth(unique('no-such-queue')), err => err.status === 404)
})

test('message.trace() records events that read back by message address, by name, and in the name list', async () => {
  const q = await createQueue(queen, 'trace')
  const group = unique('tracers')
  const traceName = unique('order-flow')
  const marker = unique('marker')
  await pushNumbered(queen, q, 1)
  let address
  const results = []
  await consumeWithin(20000, signal => queen.queue(q).group(group).subscriptionMode('all').limit(1).timeoutMillis(1000)
    .each().consume(async msg => {
      address = { partitionId: msg.partitionId, transactionId: msg.transactionId }
      results.push(await msg.trace({ traceName: [traceName], eventType: 'step', data: { marker, step: 1 } }))
      results.push(await msg.trace({ traceName, data: { marker, step: 2 } }))
    }, { signal }))
  assert.equal(results.length, 2)
  for (const r of results) assert.equal(r.success, true, `trace() answered ${JSON.stringify(r)}`)

  const byAddress = traceList(await queen.admin.getTracesForMessage(address.partitionId, address.transactionId))
  const mine = byAddress.filter(t => t.data?.marker === marker)
  assert.deepEqual(mine.map(t => t.data.step).sort(), [1, 2])
  const [first, second] = [1, 2].map(n => mine.find(t => t.data.step === n))
  assert.equal(first.eventType ?? first.event_type, 'step')
  assert.equal(first.consumerGroup ?? first.consumer_group, group)
  assert.equal(second.eventType ?? second.event_type, 'info', 'eventType defaults to info')

  const byName = traceList(await queen.admin.getTracesByName(traceName, { limit: 10 }))
  assert.deepEqual(byName.filter(t => t.data?.marker === marker).map(t => t.data.step).sort(), [1, 2])

  const names = nameList(await queen.admin.getTraceNames({ limit: 1000 }))
  assert.ok(names.includes(traceName), `trace names ${JSON.stringify(names)} lack ${traceName}`)
})

test('the traces of an address in no partition of this tenant read back empty', async () => {
  const q = await createQueue(queen, 'tracebad')
  await pushNumbered(queen, q, 1)
  const [msg] = await queen.queue(q).wait(false).pop()
  await queen.ack(msg)
  const bogus = { partitionId: '00000000-0000-7000-8000-000000000000', transactionId: msg.transactionId }
  const traces = traceList(await queen.admin.getTracesForMessage(bogus.partitionId, bogus.transactionId))
  assert.deepEqual(traces, [])
})

/** The trace rows of a traces response: `{traces:[…]}` or a bare array. */
function traceList(res) {
  const list = Array.isArray(res) ? res : res?.traces
  assert.ok(Array.isArray(list), `expected a traces array in ${JSON.stringify(res)}`)
  return list
}

/** The names of a trace-names response: rows that are strings or carry traceName / trace_name / name. */
function nameList(res) {
  const list = Array.isArray(res) ? res : (res?.names ?? res?.traceNames ?? res?.trace_names)
  assert.ok(Array.isArray(list), `expected a names array in ${JSON.stringify(res)}`)
  return list.map(n => (typeof n === 'string' ? n : (n.traceName ?? n.trace_name ?? n.name)))
}
