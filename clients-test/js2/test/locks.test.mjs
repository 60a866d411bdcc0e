// Locks and semaphores (POST /api/v1/locks: Queen 2.1, which the packaged 2.0.3 client has no API for, so raw HTTP
// beside the client): mutual exclusion, a semaphore's limit, and fencing a transaction with the lock's guard.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { client, createQueue, drain, eventually, locks, post200, sleep, unique } from '../lib/support.mjs'

let queen
before(() => { queen = client() })
after(async () => { await queen.close() })

test('20 concurrent acquirers of one lock: exactly one holds it at a time, and all get their turn', async () => {
  const name = unique('mutex')
  const ns = unique('mutexns')
  await queen.kv.put(ns, 'counter', 0, { forever: true })
  let inside = 0
  let most = 0
  const grants = []
  const worker = async (w) => {
    for (;;) {
      const [r] = await locks({ op: 'acquire', name, ttlSeconds: 30, owner: `w${w}` })
      if (!r.acquired) {
        assert.equal(r.reason, 'held', JSON.stringify(r))
        await sleep(5 + Math.random() * 20)
        continue
      }
      inside += 1
      most = Math.max(most, inside)
      grants.push(r.token)
      // read-modify-write without CAS: only the lock keeps it correct
      const cur = await queen.kv.get(ns, 'counter')
      await sleep(2)
      await queen.kv.put(ns, 'counter', cur.value + 1, { forever: true })
      inside -= 1
      const [rel] = await locks({ op: 'release', name, token: r.token, slot: r.slot })
      assert.equal(rel.released, true, JSON.stringify(rel))
      return
    }
  }
  await Promise.all(Array.from({ length: 20 }, (_, w) => worker(w)))
  assert.equal(most, 1, 'never two holders at once')
  assert.equal((await queen.kv.get(ns, 'counter')).value, 20, 'every critical section saw the previous one')
  assert.ok(grants.every((t, i) => i === 0 || t > grants[i - 1]), `tokens only grow: ${grants}`)
})

test('20 simultaneous acquires of a free lock: exactly one is granted, the others see it held by that owner', async () => {
  const name = unique('race')
  const results = await Promise.all(Array.from({ length: 20 }, (_, w) =>
    locks({ op: 'acquire', name, ttlSeconds: 30, owner: `o${w}` }).then(([r]) => r)))
  const granted = results.filter(r => r.acquired)
  assert.equal(granted.length, 1, JSON.stringify(results))
  for (const r of results.filter(x => !x.acquired)) {
    assert.equal(r.reason, 'held')
    assert.deepEqual(r.holders.map(h => h.owner), [granted[0].owner], JSON.stringify(r))
  }
})

test('a semaphore of limit 3: 10 acquirers get 3 permits on slots 0..2; a release frees one', async () => {
  const name = unique('sem')
  const results = await Promise.all(Array.from({ length: 10 }, (_, w) =>
    locks({ op: 'acquire', name, ttlSeconds: 30, owner: `s${w}`, limit: 3 }).then(([r]) => r)))
  const granted = results.filter(r => r.acquired)
  assert.equal(granted.length, 3, JSON.stringify(results))
  assert.deepEqual(granted.map(r => r.slot).sort(), [0, 1, 2])
  const [held] = await locks({ op: 'get', name })
  assert.equal(held.held, true, JSON.stringify(held))
  assert.equal(held.holders.length, 3)
  const again = await locks({ op: 'acquire', name, ttlSeconds: 30, owner: granted[0].owner, limit: 3 })
  assert.equal(again[0].acquired, true)
  assert.equal(again[0].already, true, 'the owner of a permit gets the same permit back')
  await locks({ op: 'release', name, token: granted[1].token, slot: granted[1].slot })
  const [next] = await locks({ op: 'acquire', name, ttlSeconds: 30, owner: 'late', limit: 3 })
  assert.deepEqual([next.acquired, next.slot], [true, granted[1].slot], JSON.stringify(next))
})

test('fencing: a transaction guarded by an expired holder token is rolled back; the new holder commits', async () => {
  const name = unique('fence')
  const q = await createQueue(queen, 'fenced')
  const [old] = await locks({ op: 'acquire', name, ttlSeconds: 1, owner: 'old' })
  assert.equal(old.acquired, true, JSON.stringify(old))
  assert.deepEqual(old.guard, { op: 'check', ns: 'queen-locks', key: `${name}#0`, expect: old.token, required: true })
  const fresh = await eventually('the 1 s lease to lapse and another owner to acquire', async () => {
    const [r] = await locks({ op: 'acquire', name, ttlSeconds: 30, owner: 'new' })
    return r.acquired ? r : null
  }, 5000, 100)
  assert.ok(fresh.token > old.token, 'the new token is higher')
  const stale = await post200('/api/v1/transaction', {
    operations: [{ type: 'push', items: [{ queue: q, payload: { by: 'old' } }] }], requiredLeases: [], kv: [old.guard] })
  assert.equal(stale.success, false, JSON.stringify(stale))
  assert.equal(stale.reason, 'kv_precondition')
  assert.equal(stale.failedIndex, 1, 'the guard is index 1 of the flat space (after the one push)')
  assert.equal(stale.kvReason, 'version')
  const ok = await post200('/api/v1/transaction', {
    operations: [{ type: 'push', items: [{ queue: q, payload: { by: 'new' } }] }], requiredLeases: [], kv: [fresh.guard] })
  assert.equal(ok.success, true, JSON.stringify(ok))
  assert.deepEqual(await drain(queen, q), [{ by: 'new' }], 'only the holder of the current token wrote')
})
