// POST /api/v1/fetch (2.x reads by offset; raw HTTP, the 2.0.3 client has no API for it): records from an offset, the
// watermarks, the per-entry errors, and no lease or cursor taken.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { client, createQueue, drain, http, post200, pushNumbered, unique } from '../lib/support.mjs'

let queen
before(() => { queen = client() })
after(async () => { await queen.close() })

async function fetchOne(entry, extra = {}) {
  const body = await post200('/api/v1/fetch', { entries: [entry], ...extra })
  assert.equal(body.entries?.length, 1, JSON.stringify(body))
  return body.entries[0]
}

test('fetch by offset returns the records from that offset, with the watermarks, and takes no lease', async () => {
  const q = await createQueue(queen, 'fetch')
  await pushNumbered(queen, q, 10)
  const all = await fetchOne({ queue: q, partition: 'Default', offset: 0 })
  assert.equal(all.error ?? null, null, JSON.stringify(all))
  assert.equal(all.records.length, 10, JSON.stringify(all))
  assert.deepEqual(all.records.map(r => r.payload.n), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
  const first = all.records[0].offset
  assert.deepEqual(all.records.map(r => r.offset), all.records.map((_, i) => first + i), 'consecutive offsets')
  assert.equal(all.highWatermark, first + 10, JSON.stringify(all))
  assert.equal(all.logStartOffset, first)
  assert.ok(all.records.every(r => r.transactionId && r.ts), JSON.stringify(all.records[0]))
  const tail = await fetchOne({ queue: q, offset: first + 6 })
  assert.deepEqual(tail.records.map(r => r.payload.n), [7, 8, 9, 10], 'partition defaults to Default')
  const end = await fetchOne({ queue: q, offset: all.highWatermark })
  assert.deepEqual([end.records.length, end.error ?? null], [0, null], 'the high watermark is a valid, empty offset')
  const past = await fetchOne({ queue: q, offset: all.highWatermark + 1 })
  assert.equal(past.error, 'OFFSET_OUT_OF_RANGE', JSON.stringify(past))
  assert.deepEqual((await drain(queen, q)).map(d => d.n), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 'fetch took no lease')
})

test('fetch of an unknown queue answers UNKNOWN_TOPIC_OR_PARTITION for that entry; a negative offset is a 400', async () => {
  const e = await fetchOne({ queue: unique('nosuch'), offset: 0 })
  assert.equal(e.error, 'UNKNOWN_TOPIC_OR_PARTITION', JSON.stringify(e))
  const bad = await http('POST', '/api/v1/fetch', { entries: [{ queue: 'x', offset: -1 }] })
  assert.equal(bad.status, 400, JSON.stringify(bad.body))
})
