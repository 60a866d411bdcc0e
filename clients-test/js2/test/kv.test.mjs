// Key-value through queen.kv (every call is POST /api/v1/kv): every operation, expiry, CAS conflicts, required.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { client, unique, eventually, http, ms } from '../lib/support.mjs'

let queen
before(() => { queen = client() })
after(async () => { await queen.close() })

test('put (forever) then get returns the row: found, value, version, no expiry', async () => {
  const ns = unique('kv')
  const w = await queen.kv.put(ns, 'a', { x: 1, s: 'é' }, { forever: true })
  assert.equal(w.applied, true, JSON.stringify(w))
  assert.ok(Number.isInteger(w.version) && w.version > 0, `a write answers its version: ${JSON.stringify(w)}`)
  const r = await queen.kv.get(ns, 'a')
  assert.equal(r.found, true, JSON.stringify(r))
  assert.deepEqual(r.value, { x: 1, s: 'é' })
  assert.equal(r.version, w.version)
  assert.equal(r.expiresAt, null, 'forever has no expiry')
  const absent = await queen.kv.get(ns, 'nope')
  assert.equal(absent.found, false, JSON.stringify(absent))
  const nul = await queen.kv.put(ns, 'null', null, { forever: true })
  assert.equal(nul.applied, true)
  const rn = await queen.kv.get(ns, 'null')
  assert.deepEqual([rn.found, rn.value], [true, null], 'null is a value, not an absence')
})

test('getMany answers found rows and the missing keys explicitly', async () => {
  const ns = unique('kv')
  await queen.kv.put(ns, 'k1', 1, { forever: true })
  await queen.kv.put(ns, 'k3', 3, { forever: true })
  const r = await queen.kv.getMany(ns, ['k1', 'k2', 'k3'])
  assert.deepEqual(r.rows.map(x => [x.key, x.value]), [['k1', 1], ['k3', 3]], JSON.stringify(r))
  assert.deepEqual(r.missing, ['k2'])
  assert.equal(r.truncated, false)
})

test('getPrefix pages with limit and nextAfter, keysOnly drops values, listAll walks every page', async () => {
  const ns = unique('kv')
  for (const k of ['p:1', 'p:2', 'p:3', 'q:1']) await queen.kv.put(ns, k, { k }, { forever: true })
  const page = await queen.kv.getPrefix(ns, 'p:', { limit: 2 })
  assert.deepEqual(page.rows.map(x => x.key), ['p:1', 'p:2'], JSON.stringify(page))
  assert.equal(page.truncated, true)
  assert.equal(page.nextAfter, 'p:2')
  const rest = await queen.kv.getPrefix(ns, 'p:', { limit: 2, after: page.nextAfter })
  assert.deepEqual(rest.rows.map(x => x.key), ['p:3'])
  assert.equal(rest.truncated, false)
  const keys = await queen.kv.getPrefix(ns, 'p:', { keysOnly: true })
  assert.deepEqual(keys.rows.map(x => x.key), ['p:1', 'p:2', 'p:3'])
  assert.ok(keys.rows.every(x => !('value' in x)), `keysOnly rows carry no value: ${JSON.stringify(keys.rows)}`)
  const all = []
  for await (const row of queen.kv.listAll(ns, 'p:', { limit: 1 })) all.push(row.key)
  assert.deepEqual(all, ['p:1', 'p:2', 'p:3'])
})

test('putIfAbsent and once: the first wins, the loser gets the winner value and version', async () => {
  const ns = unique('kv')
  const first = await queen.kv.putIfAbsent(ns, 'order-1', { by: 'w1' }, { ttl: '1h' })
  assert.equal(first.applied, true, JSON.stringify(first))
  const second = await queen.kv.putIfAbsent(ns, 'order-1', { by: 'w2' }, { ttl: '1h' })
  assert.equal(second.applied, false, JSON.stringify(second))
  assert.equal(second.reason, 'exists')
  assert.deepEqual(second.value, { by: 'w1' })
  assert.equal(second.version, first.version)
  const a = await queen.kv.once(ns, 'idem-9', { ttl: '24h' })
  const b = await queen.kv.once(ns, 'idem-9', { ttl: '24h' })
  assert.deepEqual([a.won, b.won], [true, false])
  assert.equal(b.value, true)
})

test('delete applies once; a second delete answers applied:false reason absent', async () => {
  const ns = unique('kv')
  await queen.kv.put(ns, 'd', 'x', { forever: true })
  const d1 = await queen.kv.delete(ns, 'd')
  assert.equal(d1.applied, true, JSON.stringify(d1))
  const d2 = await queen.kv.delete(ns, 'd')
  assert.equal(d2.applied, false, JSON.stringify(d2))
  assert.equal(d2.reason, 'absent')
  assert.equal((await queen.kv.get(ns, 'd')).found, false)
})

test('incr counts without CAS, and max refuses the increment that would break it (reason limit, current value)', async () => {
  const ns = unique('kv')
  const a = await queen.kv.incr(ns, 'c', 5, { forever: true })
  assert.deepEqual([a.applied, a.value], [true, 5], JSON.stringify(a))
  const b = await queen.kv.incr(ns, 'c', 2, { max: 7, forever: true })
  assert.deepEqual([b.applied, b.value], [true, 7], JSON.stringify(b))
  const c = await queen.kv.incr(ns, 'c', 1, { max: 7, forever: true })
  assert.equal(c.applied, false, JSON.stringify(c))
  assert.equal(c.reason, 'limit')
  assert.equal(c.value, 7)
  const parallel = await Promise.all(Array.from({ length: 10 }, () => queen.kv.incr(ns, 'p', 1, { forever: true })))
  assert.ok(parallel.every(r => r.applied), JSON.stringify(parallel))
  assert.equal((await queen.kv.get(ns, 'p')).value, 10, 'ten concurrent increments make 10')
})

test('TTL: an entry answers its expiry, and once past it is never returned and does not exist for putIfAbsent', async () => {
  const ns = unique('kv')
  const before = Date.now()
  const w = await queen.kv.put(ns, 'long', 1, { ttlSeconds: 60 })
  assert.equal(w.applied, true)
  const exp = ms((await queen.kv.get(ns, 'long')).expiresAt)
  assert.ok(exp >= before + 59000 && exp <= Date.now() + 61000, `expiresAt about now + 60 s, got ${exp - before} ms`)
  await queen.kv.put(ns, 'short', { v: 1 }, { ttlSeconds: 1 })
  assert.equal((await queen.kv.get(ns, 'short')).found, true)
  await eventually('the 1 s entry to expire', async () => (await queen.kv.get(ns, 'short')).found === false, 5000)
  const m = await queen.kv.getMany(ns, ['short'])
  assert.deepEqual(m.missing, ['short'], 'getMany does not return an expired entry')
  const again = await queen.kv.putIfAbsent(ns, 'short', { v: 2 }, { forever: true })
  assert.equal(again.applied, true, `an expired entry does not exist for putIfAbsent: ${JSON.stringify(again)}`)
})

test('incr TTL is create-only: a live counter keeps its expiry', async () => {
  const ns = unique('kv')
  await queen.kv.incr(ns, 'win', 1, { ttlSeconds: 60 })
  const first = (await queen.kv.get(ns, 'win')).expiresAt
  await queen.kv.incr(ns, 'win', 1, { ttlSeconds: 3600 })
  const r = await queen.kv.get(ns, 'win')
  assert.equal(r.value, 2)
  assert.equal(r.expiresAt, first, 'the second incr did not extend the window')
})

test('CAS: a put with a stale expect loses (reason version, the current version), expect on absent loses (absent)', async () => {
  const ns = unique('kv')
  const v1 = await queen.kv.put(ns, 'cas', { n: 1 }, { forever: true })
  const v2 = await queen.kv.put(ns, 'cas', { n: 2 }, { forever: true, expect: v1.version })
  assert.equal(v2.applied, true, JSON.stringify(v2))
  assert.ok(v2.version > v1.version, 'versions grow')
  const stale = await queen.kv.put(ns, 'cas', { n: 3 }, { forever: true, expect: v1.version })
  assert.equal(stale.applied, false, JSON.stringify(stale))
  assert.equal(stale.reason, 'version')
  assert.equal(stale.version, v2.version)
  assert.deepEqual(stale.value, { n: 2 })
  assert.deepEqual((await queen.kv.get(ns, 'cas')).value, { n: 2 }, 'the losing write changed nothing')
  const absent = await queen.kv.put(ns, 'never', 1, { forever: true, expect: 5 })
  assert.deepEqual([absent.applied, absent.reason], [false, 'absent'], JSON.stringify(absent))
  assert.equal((await queen.kv.get(ns, 'never')).found, false, 'expect N never creates')
  const fenced = await queen.kv.delete(ns, 'cas', { expect: v1.version })
  assert.deepEqual([fenced.applied, fenced.reason], [false, 'version'], JSON.stringify(fenced))
})

test('CAS under contention: of 10 concurrent writers with the same expect exactly one applies', async () => {
  const ns = unique('kv')
  const base = await queen.kv.put(ns, 'hot', 0, { forever: true })
  const clients = Array.from({ length: 10 }, () => client())
  try {
    const results = await Promise.all(clients.map((c, i) =>
      c.kv.put(ns, 'hot', i + 1, { forever: true, expect: base.version })))
    const won = results.filter(r => r.applied)
    assert.equal(won.length, 1, JSON.stringify(results))
    assert.ok(results.filter(r => !r.applied).every(r => r.reason === 'version' && r.version === won[0].version),
      `every loser names the winner version: ${JSON.stringify(results)}`)
    assert.equal((await queen.kv.get(ns, 'hot')).value, won[0].value)
  } finally {
    await Promise.all(clients.map(c => c.close()))
  }
})

test('required: a lost precondition comes back as precondition:true and rolls back the whole call', async () => {
  const ns = unique('kv')
  await queen.kv.put(ns, 'taken', 'w1', { forever: true })
  const r = await queen.kv.putIfAbsent(ns, 'taken', 'w2', { forever: true, required: true })
  assert.equal(r.applied, false, JSON.stringify(r))
  assert.equal(r.precondition, true)
  assert.equal(r.reason, 'exists')
  const raw = await http('POST', '/api/v1/kv', { operations: [
    { op: 'put', ns, key: 'side', value: 1, forever: true },
    { op: 'putIfAbsent', ns, key: 'taken', value: 'w3', forever: true, required: true }] })
  assert.equal(raw.status, 200)
  assert.deepEqual([raw.body.ok, raw.body.reason, raw.body.failedIndex, raw.body.kvReason],
    [false, 'kv_precondition', 1, 'exists'], JSON.stringify(raw.body))
  assert.equal((await queen.kv.get(ns, 'side')).found, false, 'the other write of the call was rolled back')
})

test('refusals: a bad namespace and a missing expiry are 400 kv_bad_request with their reason', async () => {
  await assert.rejects(queen.kv.put('Not A Namespace', 'k', 1, { forever: true }), e => {
    assert.equal(e.status, 400)
    assert.equal(e.code, 'kv_bad_request')
    return true
  })
  const r = await http('POST', '/api/v1/kv', { operations: [{ op: 'put', ns: unique('kv'), key: 'k', value: 1 }] })
  assert.equal(r.status, 400)
  assert.deepEqual([r.body.error, r.body.reason], ['kv_bad_request', 'kv_expiry_not_specified'], JSON.stringify(r.body))
})

test('the path routes: PUT, GET (with ETag) and DELETE /api/v1/kv/:ns/*key', async () => {
  const ns = unique('kv')
  const put = await http('PUT', `/api/v1/kv/${ns}/order/9f1`, { value: { a: 1 }, ttlSeconds: 60 })
  assert.equal(put.status, 200, JSON.stringify(put.body))
  assert.equal(put.body.applied, true, JSON.stringify(put.body))
  const get = await http('GET', `/api/v1/kv/${ns}/order/9f1`)
  assert.equal(get.status, 200)
  assert.deepEqual([get.body.found, get.body.value], [true, { a: 1 }], JSON.stringify(get.body))
  assert.equal(get.headers.get('etag'), `"${put.body.version}"`)
  assert.equal((await queen.kv.get(ns, 'order/9f1')).found, true, 'the rest of the path is one key')
  const del = await http('DELETE', `/api/v1/kv/${ns}/order/9f1`)
  assert.equal(del.body.applied, true, JSON.stringify(del.body))
})
