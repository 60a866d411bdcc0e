// The 2.x client's admin surface (queen.admin): every read it offers answers, and the two reads the 2.x line added
// (partitions by pending, a group's seek to the end, the 2.x replacement of clearQueue) behave as the client says.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { client, createQueue, drain, lag, pushNumbered, unique } from '../lib/support.mjs'

let queen
before(() => { queen = client() })
after(async () => { await queen.close() })

test('every admin read of the 2.x client answers (no 404 no_such_route, no 5xx)', async () => {
  const q = await createQueue(queen, 'adm')
  await pushNumbered(queen, q, 3)
  const [m] = await queen.queue(q).batch(1).partitions(1).wait(false).pop()
  const reads = {
    getOverview: () => queen.admin.getOverview(),
    getNamespaces: () => queen.admin.getNamespaces(),
    getTasks: () => queen.admin.getTasks(),
    listQueues: () => queen.admin.listQueues({ limit: 10 }),
    getQueue: () => queen.admin.getQueue(q),
    getQueueDepth: () => queen.admin.getQueueDepth(q),
    getPartitions: () => queen.admin.getPartitions({ queue: q }),
    listMessages: () => queen.admin.listMessages({ queue: q }),
    getMessage: () => queen.admin.getMessage(m.partitionId, m.transactionId),
    getTraceNames: () => queen.admin.getTraceNames(),
    getTracesForMessage: () => queen.admin.getTracesForMessage(m.partitionId, m.transactionId),
    getStatus: () => queen.admin.getStatus(),
    getQueueStats: () => queen.admin.getQueueStats(),
    getQueueDetail: () => queen.admin.getQueueDetail(q),
    getAnalytics: () => queen.admin.getAnalytics(),
    listConsumerGroups: () => queen.admin.listConsumerGroups(),
    getConsumerGroup: () => queen.admin.getConsumerGroup('__QUEUE_MODE__'),
    getLaggingConsumers: () => queen.admin.getLaggingConsumers(60),
    health: () => queen.admin.health(),
    getSystemMetrics: () => queen.admin.getSystemMetrics(),
    getWorkerMetrics: () => queen.admin.getWorkerMetrics()
  }
  const failed = []
  for (const [name, call] of Object.entries(reads)) {
    try {
      const body = await call()
      if (body === null || body === undefined) failed.push(`${name}: no body`)
    } catch (e) {
      failed.push(`${name}: ${e.status} ${e.code ?? ''} ${e.message}`)
    }
  }
  assert.deepEqual(failed, [], 'admin reads that failed')
  await queen.ack(m, true)
})

test('getPartitions lists the partitions holding the most pending first', async () => {
  const q = await createQueue(queen, 'admparts')
  await queen.queue(q).partition('big').push([1, 2, 3, 4].map(n => ({ data: { n } })))
  await queen.queue(q).partition('small').push([{ data: { n: 1 } }])
  const r = await queen.admin.getPartitions({ queue: q })
  assert.ok(Array.isArray(r?.partitions), JSON.stringify(r))
  assert.deepEqual(r.partitions.map(p => [p.queue, p.partition, p.pending]), [[q, 'big', 4], [q, 'small', 1]],
    JSON.stringify(r))
})

test('seekConsumerGroup to the end (the 2.x client\'s answer to clearQueue) leaves the group nothing', async () => {
  const q = await createQueue(queen, 'admseek')
  const group = unique('seekg')
  await pushNumbered(queen, q, 2)
  assert.deepEqual((await drain(queen, q, { group, mode: 'all' })).length, 2)
  await pushNumbered(queen, q, 3, { first: 3 })
  await queen.admin.seekConsumerGroup(group, q, { toEnd: true })
  assert.equal(await lag(queen, q, group), 0)
  assert.deepEqual(await drain(queen, q, { group }), [])
  await assert.rejects(queen.admin.clearQueue(q), /no route that clears a queue/, 'the client refuses before sending')
})
