-- Locks and semaphores (R__98_locks.sql): one holder, owners that retry, renew and release by token, expiry, semaphore
-- limits, fencing tokens that only grow (across release, expiry and the fence sweep), the guard, validation SQLSTATEs
-- and tenancy. Time is passed explicitly (p_now), so nothing here sleeps.

-- One lock operation; its answer.
CREATE OR REPLACE FUNCTION qt.lock(op text, nm text, ttl bigint DEFAULT 30, owner text DEFAULT NULL,
                                   lim int DEFAULT NULL, token bigint DEFAULT NULL, slot int DEFAULT NULL,
                                   at timestamptz DEFAULT NULL, t uuid DEFAULT qt.tenant()) RETURNS jsonb
LANGUAGE sql AS $$
  SELECT r.result FROM queen.locks_apply(t, ARRAY[op], ARRAY[nm], ARRAY[ttl], ARRAY[owner], ARRAY[lim], ARRAY[token],
                                         ARRAY[slot], at) r $$;

-- acquire, held, already, get, renew, release
DO $$
DECLARE r jsonb; t0 bigint; t1 bigint; t2 bigint; at timestamptz := '2026-10-01 12:00:00+00';
BEGIN
  r := qt.lock('acquire', 'daily', owner => 'a', at => at);
  PERFORM qt.eq(r - 'token' - 'guard', '{"index":0,"op":"acquire","name":"daily","acquired":true,"slot":0,"owner":"a"}'::jsonb,
                'a free lock is acquired');
  t0 := (r->>'token')::bigint;
  PERFORM qt.ok(t0 > 0, 'with a token');
  PERFORM qt.eq(r->'guard', jsonb_build_object('op', 'check', 'ns', 'queen-locks', 'key', 'daily#0', 'expect', t0,
                                               'required', true), 'and the guard a transaction carries');
  r := qt.lock('acquire', 'daily', owner => 'b', at => at);
  PERFORM qt.eq(r, '{"index":0,"op":"acquire","name":"daily","acquired":false,"reason":"held",
                     "holders":[{"slot":0,"owner":"a"}]}'::jsonb, 'a held lock is refused, naming its holder');
  PERFORM qt.eq(qt.lock('acquire', 'daily', at => at)->>'reason', 'held', 'without an owner too');
  r := qt.lock('acquire', 'daily', owner => 'a', at => at);
  PERFORM qt.eq(r->>'already', 'true', 'the owner that holds it is answered its permit (a retried call)');
  PERFORM qt.eq((r->>'token')::bigint, t0, 'with the same token');

  -- the permit is a key-value entry
  r := (SELECT to_jsonb(x) FROM queen.kv_apply(NULL, ARRAY['get'], ARRAY['queen-locks'], ARRAY['daily#0'], NULL, NULL,
          NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, false, at) x WHERE x.kind = 'result');
  PERFORM qt.eq((r->>'version')::bigint, t0, 'its version is the token');
  PERFORM qt.eq((r->>'value')::jsonb->>'owner', 'a', 'its value names the owner');
  PERFORM qt.eq((r->>'expires_at')::timestamptz, at + interval '30 seconds', 'its expiry is the lease');

  r := qt.lock('get', 'daily', at => at + interval '5 seconds');
  PERFORM qt.eq(r->>'held', 'true', 'get: held');
  PERFORM qt.eq((r->'holders'->0) - 'since' - 'expiresAt' - 'renewedAt',
                jsonb_build_object('slot', 0, 'owner', 'a', 'token', t0), 'by a');
  PERFORM qt.eq(r->'holders'->0->>'since', queen._log_ts(at), 'since the acquire');

  r := qt.lock('renew', 'daily', ttl => 60, token => t0, at => at + interval '10 seconds');
  PERFORM qt.eq(r->>'renewed', 'true', 'the holder renews with its token');
  t1 := (r->>'token')::bigint;
  PERFORM qt.ok(t1 > t0, 'a renew answers a new, higher token');
  PERFORM qt.eq(r->'guard'->>'expect', t1::text, 'and a new guard');
  PERFORM qt.eq(qt.lock('get', 'daily', at => at + interval '10 seconds')->'holders'->0->>'since', queen._log_ts(at),
                'a renew does not move since');
  r := qt.lock('renew', 'daily', ttl => 60, token => t0, at => at + interval '11 seconds');
  PERFORM qt.eq(r->>'reason', 'lost', 'the old token no longer renews');
  PERFORM qt.eq(r->'holders', '[{"slot":0,"owner":"a"}]'::jsonb, 'and is told who holds it');
  r := qt.lock('renew', 'daily', ttl => 60, token => t0, owner => 'a', at => at + interval '11 seconds');
  PERFORM qt.eq(r->>'renewed', 'true', 'the owner''s stale token (its own renew''s answer was lost) is carried through');
  t2 := (r->>'token')::bigint;
  PERFORM qt.ok(t2 > t1, 'at a new token');

  r := qt.lock('release', 'daily', token => t1, at => at + interval '12 seconds');
  PERFORM qt.eq(r->>'reason', 'lost', 'release with a stale token: lost');
  PERFORM qt.eq(r->'holders', '[{"slot":0,"owner":"a"}]'::jsonb, 'the permit is still a''s');
  r := qt.lock('release', 'daily', token => t2, at => at + interval '12 seconds');
  PERFORM qt.eq(r, '{"index":0,"op":"release","name":"daily","released":true,"slot":0}'::jsonb, 'released');
  PERFORM qt.eq(qt.lock('get', 'daily', at => at + interval '12 seconds'), '{"index":0,"op":"get","name":"daily",
                "held":false,"holders":[]}'::jsonb, 'free');
  r := qt.lock('acquire', 'daily', owner => 'b', at => at + interval '12 seconds');
  PERFORM qt.eq(r->>'acquired', 'true', 'free after its release');
  PERFORM qt.ok((r->>'token')::bigint > t2, 'a later holder, a higher token');
END $$;

-- Expiry: a lease nobody renewed goes to the next caller, whose token is higher; the old holder has lost it.
DO $$
DECLARE r jsonb; ta bigint; tb bigint; at timestamptz := '2026-10-02 12:00:00+00';
BEGIN
  ta := (qt.lock('acquire', 'lease', ttl => 10, owner => 'a', at => at)->>'token')::bigint;
  PERFORM qt.eq(qt.lock('acquire', 'lease', owner => 'b', at => at + interval '9.999 seconds')->>'reason', 'held',
                'held until its deadline');
  r := qt.lock('acquire', 'lease', owner => 'b', at => at + interval '10 seconds');
  PERFORM qt.eq(r->>'acquired', 'true', 'free at its deadline');
  tb := (r->>'token')::bigint;
  PERFORM qt.ok(tb > ta, 'the next holder''s token is higher');
  r := qt.lock('renew', 'lease', token => ta, owner => 'a', at => at + interval '11 seconds');
  PERFORM qt.eq(r - 'index', '{"op":"renew","name":"lease","renewed":false,"reason":"lost","slot":0,
                               "holders":[{"slot":0,"owner":"b"}]}'::jsonb, 'the old holder''s renew: lost to b');
  PERFORM qt.eq(qt.lock('release', 'lease', token => ta, at => at + interval '11 seconds')->>'reason', 'lost',
                'and its release too');
  -- tokens keep growing after the fence row is swept
  PERFORM queen.locks_sweep(100, at + interval '40 seconds' + interval '1 hour');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.kv_lock_fences WHERE name = 'lease'), 1,
                'a fence row stays until an hour after its last lease');
  PERFORM qt.ok(queen.locks_sweep(100, at + interval '41 seconds' + interval '1 hour') >= 1, 'then it is swept');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.kv_lock_fences WHERE name = 'lease'), 0, 'the fence row is gone');
  r := qt.lock('acquire', 'lease', owner => 'c', at => at + interval '2 hours');
  PERFORM qt.ok((r->>'token')::bigint > tb, 'a lock acquired after the sweep still has a higher token');
END $$;

-- Semaphores: up to limit permits, the lowest free slot, a holder per slot.
DO $$
DECLARE r jsonb; at timestamptz := '2026-10-03 12:00:00+00'; t1 bigint;
BEGIN
  PERFORM qt.eq(qt.lock('acquire', 'gpu', owner => 'o1', lim => 3, at => at)->>'slot', '0', 'slot 0');
  r := qt.lock('acquire', 'gpu', owner => 'o2', lim => 3, at => at);
  PERFORM qt.eq(r->>'slot', '1', 'slot 1');
  t1 := (r->>'token')::bigint;
  PERFORM qt.eq(qt.lock('acquire', 'gpu', owner => 'o3', lim => 3, at => at)->>'slot', '2', 'slot 2');
  r := qt.lock('acquire', 'gpu', owner => 'o4', lim => 3, at => at);
  PERFORM qt.eq(r->>'reason', 'held', 'the fourth is refused: limit 3');
  PERFORM qt.eq(r->'holders', '[{"slot":0,"owner":"o1"},{"slot":1,"owner":"o2"},{"slot":2,"owner":"o3"}]'::jsonb,
                'with every holder');
  PERFORM qt.eq(qt.lock('acquire', 'gpu', owner => 'o2', lim => 3, at => at)->>'already', 'true',
                'a holder retrying gets its own slot');
  PERFORM qt.eq(qt.lock('release', 'gpu', token => t1, slot => 1, at => at)->>'released', 'true', 'slot 1 released');
  PERFORM qt.eq(qt.lock('acquire', 'gpu', owner => 'o4', lim => 3, at => at)->>'slot', '1', 'o4 takes slot 1');
  r := qt.lock('acquire', 'gpu', owner => 'o5', lim => 2, at => at);
  PERFORM qt.eq(r->'holders', '[{"slot":0,"owner":"o1"},{"slot":1,"owner":"o4"}]'::jsonb,
                'a smaller limit sees only its slots');
  PERFORM qt.eq(jsonb_array_length(qt.lock('get', 'gpu', at => at)->'holders'), 3, 'get lists every permit');
  PERFORM qt.eq(qt.lock('acquire', 'big', owner => 'x', lim => 1024, at => at)->>'acquired', 'true', '1024 permits');
  -- a row written by hand in the lock's range (SQL beside the broker, or a KV put before queen-locks was reserved)
  -- holds its slot, and one outside the range is no permit
  INSERT INTO queen.kv_entries (tenant_id, namespace, key, value, version, expires_at, created_at, updated_at)
  VALUES (qt.tenant(), 'queen-locks', 'hand#0', '"not an object"', nextval('queen.kv_version_seq'), NULL, at, at),
         (qt.tenant(), 'queen-locks', 'hand#07', '{"owner":"z"}', nextval('queen.kv_version_seq'), NULL, at, at),
         (qt.tenant(), 'queen-locks', 'odd#0', '{"owner":[1],"since":{}}', nextval('queen.kv_version_seq'), NULL, at, at);
  PERFORM qt.eq(jsonb_array_length(qt.lock('get', 'odd', at => at)->'holders'), 1, 'a value of any shape reads');
  r := qt.lock('acquire', 'hand', owner => 'y', lim => 2, at => at);
  PERFORM qt.eq(r->>'slot', '1', 'slot 0 is held by the hand-written row, #07 is not a slot');
  PERFORM qt.eq(qt.lock('get', 'hand', at => at)->'holders'->0->>'owner', NULL, 'a hand-written row has no owner');
END $$;

-- One call, several locks: answered in request order, each on its own; validation refuses the whole call.
DO $$
DECLARE r jsonb; at timestamptz := '2026-10-04 12:00:00+00';
BEGIN
  r := (SELECT jsonb_agg(x.result ORDER BY x.idx) FROM queen.locks_apply(NULL, ARRAY['acquire', 'get', 'acquire'],
          ARRAY['zeta', 'alpha', 'alpha2'], ARRAY[30, NULL, 30]::bigint[], ARRAY['o', NULL, 'o'], NULL, NULL, NULL, at) x);
  PERFORM qt.eq(jsonb_array_length(r), 3, 'one answer per operation');
  PERFORM qt.eq((SELECT array_agg(e->>'op' || ':' || (e->>'name') ORDER BY n)::text[]
                 FROM jsonb_array_elements(r) WITH ORDINALITY j(e, n)),
                ARRAY['acquire:zeta', 'get:alpha', 'acquire:alpha2'], 'in request order');
  PERFORM qt.raises($q$SELECT qt.lock('take', 'x')$q$, 'QV931');
  PERFORM qt.raises($q$SELECT qt.lock('get', 'a#b')$q$, 'QV932');
  PERFORM qt.raises($q$SELECT qt.lock('get', '')$q$, 'QV932');
  PERFORM qt.raises($q$SELECT qt.lock('get', E'a\nb')$q$, 'QV932');
  PERFORM qt.raises($q$SELECT qt.lock('get', repeat('n', 257))$q$, 'QV932');
  PERFORM qt.raises($q$SELECT qt.lock('acquire', 'x', ttl => NULL)$q$, 'QV933');
  PERFORM qt.raises($q$SELECT qt.lock('acquire', 'x', ttl => 0)$q$, 'QV934');
  PERFORM qt.raises($q$SELECT qt.lock('acquire', 'x', ttl => 86401)$q$, 'QV934');
  PERFORM qt.raises($q$SELECT qt.lock('acquire', 'x', owner => '')$q$, 'QV935');
  PERFORM qt.raises($q$SELECT qt.lock('acquire', 'x', lim => 0)$q$, 'QV936');
  PERFORM qt.raises($q$SELECT qt.lock('acquire', 'x', lim => 1025)$q$, 'QV936');
  PERFORM qt.raises($q$SELECT qt.lock('release', 'x')$q$, 'QV937');
  PERFORM qt.raises($q$SELECT qt.lock('release', 'x', token => 0)$q$, 'QV938');
  PERFORM qt.raises($q$SELECT qt.lock('release', 'x', token => 1, slot => 1024)$q$, 'QV939');
  PERFORM qt.raises($q$SELECT * FROM queen.locks_apply(NULL, ARRAY['get','release'], ARRAY['d','d'], NULL, NULL, NULL,
                        ARRAY[NULL, 1]::bigint[], NULL)$q$, 'QV940');
  PERFORM qt.raises($q$SELECT * FROM queen.locks_apply(NULL, array_fill('get'::text, ARRAY[65]),
                        (SELECT array_agg('l' || i) FROM generate_series(1, 65) i), NULL, NULL, NULL, NULL, NULL)$q$,
                    'QV941');
  PERFORM qt.raises($q$SELECT * FROM queen.locks_apply(NULL, array_fill('acquire'::text, ARRAY[5]),
                        (SELECT array_agg('l' || i) FROM generate_series(1, 5) i), array_fill(30::bigint, ARRAY[5]),
                        NULL, array_fill(1024, ARRAY[5]), NULL, NULL)$q$, 'QV942');
  PERFORM qt.raises($q$SELECT * FROM queen.locks_apply(NULL, ARRAY['get'], ARRAY['a','b'], NULL, NULL, NULL, NULL,
                        NULL)$q$, 'QV949');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.kv_lock_fences WHERE name = 'x'), 0, 'a refused call takes no lock');
END $$;

-- Tenancy: one name, two tenants, two locks.
DO $$
DECLARE a uuid := '00000000-0000-0000-0000-00000000032a'; b uuid := '00000000-0000-0000-0000-00000000032b';
BEGIN
  PERFORM qt.eq(qt.lock('acquire', 'shared', owner => 'a', t => a)->>'acquired', 'true', 'A holds its lock');
  PERFORM qt.eq(qt.lock('acquire', 'shared', owner => 'b', t => b)->>'acquired', 'true', 'B holds its own');
  PERFORM qt.eq(qt.lock('get', 'shared', t => a)->'holders'->0->>'owner', 'a', 'A''s holder is a');
END $$;

-- The guard: a transaction that carries it commits only while the lease is the caller's.
DO $$
DECLARE r jsonb; tok bigint; at timestamptz := clock_timestamp();
BEGIN
  r := qt.lock('acquire', 'job', ttl => 60, owner => 'w1');
  tok := (r->>'token')::bigint;
  PERFORM qt.eq(qt.kv1('check', 'queen-locks', 'job#0', expect => tok, required => true)->>'applied', 'true',
                'the guard of the current lease passes');
  r := qt.lock('renew', 'job', ttl => 60, token => tok);
  PERFORM qt.raises(format($q$SELECT qt.kv1('check', 'queen-locks', 'job#0', expect => %s, required => true)$q$, tok),
                    'QV820');
END $$;

-- The guard holds until commit (needs dblink; skipped without it): while a transaction has checked the permit, the
-- lock's next renew (or a new holder's acquire) waits for that transaction instead of slipping in before its commit.
DO $$
DECLARE cs text; tok bigint; r jsonb;
BEGIN
  IF NOT qt.dblink('guard lock') THEN RETURN; END IF;
  tok := (qt.lock('get', 'job')->'holders'->0->>'token')::bigint;
  cs := qt.connstr();
  PERFORM dblink_connect('lkb', cs);
  PERFORM dblink_exec('lkb', 'BEGIN');
  PERFORM * FROM dblink('lkb', format($q$SELECT qt.kv1('check', 'queen-locks', 'job#0', expect => %s,
                                                       required => true)::text$q$, tok)) AS d(x text);
  PERFORM set_config('lock_timeout', '300ms', true);
  PERFORM qt.raises(format($q$SELECT qt.lock('renew', 'job', ttl => 60, token => %s)$q$, tok), '55P03');
  PERFORM dblink_exec('lkb', 'COMMIT');
  PERFORM dblink_disconnect('lkb');
  r := qt.lock('renew', 'job', ttl => 60, token => tok);
  PERFORM qt.eq(r->>'renewed', 'true', 'after the guarded transaction committed, the renew goes through');
END $$;

-- The KV routes cannot mint a permit: put, putIfAbsent and incr into 'queen-locks' are refused (QV815), in a call and
-- in a transaction's rider, and refuse the whole call; reads, check (the guard) and delete (freeing a stuck permit)
-- stay, as does every write of any other namespace, 'queen-supervisor' included.
DO $$
DECLARE r jsonb; at timestamptz := '2026-10-04 12:00:00+00'; tok bigint;
BEGIN
  tok := (qt.lock('acquire', 'resv', owner => 'o', at => at)->>'token')::bigint;
  PERFORM qt.raises($q$SELECT qt.kv1('put', 'queen-locks', 'resv#0', '{"owner":"forger"}', forever => true)$q$,
                    'QV815');
  PERFORM qt.raises($q$SELECT qt.kv1('putIfAbsent', 'queen-locks', 'other#0', '{"owner":"forger"}', forever => true)$q$,
                    'QV815');
  PERFORM qt.raises($q$SELECT qt.kv1('incr', 'queen-locks', 'resv#0', delta => 1, forever => true)$q$, 'QV815');
  PERFORM qt.raises($q$SELECT * FROM queen.kv_apply(NULL, ARRAY['put', 'put'], ARRAY['free', 'queen-locks'],
        ARRAY['a', 'x#0'], ARRAY['1', '1'], NULL, ARRAY[true, true], NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
        NULL, NULL, true)$q$, 'QV815');
  PERFORM qt.eq(qt.kv1('get', 'free', 'a', at => at)->>'present', 'false', 'the refused call wrote nothing');
  PERFORM qt.eq((qt.kv1('get', 'queen-locks', 'resv#0', at => at)->>'version')::bigint, tok, 'get reads a permit');
  PERFORM qt.eq(qt.kv1('check', 'queen-locks', 'resv#0', expect => tok, at => at)->>'applied', 'true', 'check');
  PERFORM qt.eq(qt.kv1('delete', 'queen-locks', 'resv#0', at => at)->>'applied', 'true', 'delete frees it');
  PERFORM qt.eq(qt.lock('acquire', 'resv', owner => 'p', at => at)->>'acquired', 'true', 'and the lock is free');
  PERFORM qt.eq(qt.kv1('put', 'queen-supervisor', 'g/i/head', '{"write":"x"}', ttl => 60, at => at)->>'applied',
                'true', 'queen-supervisor stays writable');
END $$;
