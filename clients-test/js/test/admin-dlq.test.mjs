// The admin listings and the dead-letter path (fail past retryLimit, list, retry, consume again) through queen-mq.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { client, createQueue, pushNumbered, drain, consumeWithin, eventually, lag, unique } from '../lib/support.mjs'

let queen
before(() => { queen = client() })
after(async () => { await queen.close() })

test('admin listings show the queue, its messages and the consumer group that read it', async () => {
  const q = await createQueue(queen, 'admin')
  const group = unique('auditors')
  await pushNumbered(queen, q, 3)
  assert.deepEqual((await drain(queen, q, { group, mode: 'all' })).map(d => d.n), [1, 2, 3])

  const { queues } = await queen.admin.listQueues()
  const listed = queues.find(x => x.name === q)
  assert.ok(listed, `listQueues has ${q}`)
  assert.equal(listed.messages.total, 3)
  assert.equal(listed.partitions, 1)

  const detail = await queen.admin.getQueue(q)
  assert.equal(detail.name, q)
  assert.deepEqual(detail.partitions.map(p => p.name), ['Default'])

  const overview = await queen.admin.getOverview()
  assert.ok(overview.queues >= 1 && overview.messages.total >= 3, JSON.stringify(overview))

  const groups = await queen.admin.listConsumerGroups()
  const mine = groups.find(g => g.name === group)
  assert.ok(mine, `listConsumerGroups has ${group}`)
  assert.deepEqual(Object.keys(mine.queues), [q])
  assert.equal(mine.queues[q].partitions[0].lag, 0, 'the group acked everything')

  const one = await queen.admin.getConsumerGroup(group)
  assert.equal(one.name, group)
  assert.deepEqual(one.topics, [q])

  const { messages } = await queen.admin.listMessages({ queue: q })
  assert.deepEqual(messages.map(m => m.data.n).sort(), [1, 2, 3])
})

test('a message failed past retryLimit is dead-lettered, listed, retried, and consumed again', async () => {
  const q = await createQueue(queen, 'dlq', { retryLimit: 1 })
  const [pushed] = await pushNumbered(queen, q, 1, 42)
  let attempts = 0
  // The handler throws, so the client nacks each delivery: the retry budget of 1 is spent, then the message dies.
  await consumeWithin(20000, signal => queen.queue(q).limit(2).timeoutMillis(1000)
    .consume(async () => { attempts += 1; throw new Error('card declined') }, { signal }))
  assert.equal(attempts, 2)
  assert.deepEqual(await drain(queen, q), [], 'a dead letter is not delivered')

  const dead = await eventually('the dead letter to be listed', async () => {
    const { messages } = await queen.queue(q).dlq().get()
    return messages.length === 1 ? messages[0] : null
  })
  assert.equal(dead.queue, q)
  assert.equal(dead.data.n, 42)
  assert.equal(dead.transactionId, pushed.transaction_id ?? pushed.transactionId)
  assert.match(dead.errorMessage, /card declined/)

  const retried = await queen.admin.retryMessage(dead.partitionId, dead.transactionId)
  assert.equal(retried.success, true, JSON.stringify(retried))
  assert.equal(retried.result, 'moved')
  assert.deepEqual((await queen.queue(q).dlq().get()).messages, [], 'the row moved out of the DLQ')

  const again = []
  await consumeWithin(20000, signal => queen.queue(q).limit(1).timeoutMillis(1000)
    .each()
    .consume(async m => { again.push(m.data.n) }, { signal }))
  assert.deepEqual(again, [42], 'the replayed message is delivered again')
  assert.equal(await lag(queen, q), 0, 'and acked')
})
