-- Key-value state (R__96_kv.sql): versions and compare-and-set, expiry that no reader sees past its deadline, incr,
-- prefix pages, validation SQLSTATEs, required preconditions, tenancy, the sweep and the listings.
-- Time is passed explicitly (p_now), so nothing here sleeps.

-- One single-key operation; its result row as jsonb.
CREATE OR REPLACE FUNCTION qt.kv1(op text, ns text, k text, val text DEFAULT NULL, ttl bigint DEFAULT NULL,
                                  forever boolean DEFAULT NULL, expect bigint DEFAULT NULL, delta numeric DEFAULT NULL,
                                  mn numeric DEFAULT NULL, mx numeric DEFAULT NULL, required boolean DEFAULT NULL,
                                  at timestamptz DEFAULT NULL, t uuid DEFAULT qt.tenant()) RETURNS jsonb
LANGUAGE sql AS $$
  SELECT to_jsonb(r) FROM queen.kv_apply(t, ARRAY[op], ARRAY[ns], ARRAY[k], ARRAY[val], ARRAY[ttl], ARRAY[forever],
                                         ARRAY[expect], ARRAY[delta], ARRAY[mn], ARRAY[mx], ARRAY[required], NULL, NULL,
                                         NULL, NULL, NULL, false, at) r
  WHERE r.kind = 'result' $$;

-- put, get, versions, compare-and-set
DO $$
DECLARE r jsonb; v1 bigint; v2 bigint; at timestamptz := '2026-10-01 12:00:00+00';
BEGIN
  r := qt.kv1('put', 'cas', 'k', '{"n":1}', ttl => 3600, at => at);
  PERFORM qt.eq(r->>'applied', 'true', 'put applies');
  v1 := (r->>'version')::bigint;
  PERFORM qt.eq(r->>'value', '{"n":1}', 'put answers the value it wrote');
  r := qt.kv1('get', 'cas', 'k', at => at);
  PERFORM qt.eq(r->>'present', 'true', 'get finds it');
  PERFORM qt.eq((r->>'version')::bigint, v1, 'get reads the version');
  PERFORM qt.eq((r->>'expires_at')::timestamptz, at + interval '3600 seconds', 'expiry is now + ttlSeconds');

  -- expect N: only that version is replaced, and the version grows
  r := qt.kv1('put', 'cas', 'k', '{"n":2}', ttl => 3600, expect => v1, at => at);
  PERFORM qt.eq(r->>'applied', 'true', 'expect = current version applies');
  v2 := (r->>'version')::bigint;
  PERFORM qt.ok(v2 > v1, 'a later write has a higher version');
  r := qt.kv1('put', 'cas', 'k', '{"n":3}', ttl => 3600, expect => v1, at => at);
  PERFORM qt.eq(r->>'applied', 'false', 'a stale expect does not apply');
  PERFORM qt.eq(r->>'reason', 'version', 'reason version');
  PERFORM qt.eq((r->>'version')::bigint, v2, 'the loser is told the current version');
  PERFORM qt.eq(r->>'value', '{"n":2}', 'and the current value');
  PERFORM qt.eq(qt.kv1('get', 'cas', 'k', at => at)->>'value', '{"n":2}', 'the stale write changed nothing');

  -- expect N on an absent key creates nothing
  r := qt.kv1('put', 'cas', 'nope', '1', ttl => 60, expect => 5, at => at);
  PERFORM qt.eq(r->>'reason', 'absent', 'expect on an absent key: absent');
  PERFORM qt.eq((r->>'version')::bigint, 0::bigint, 'version 0 stands for absent');
  PERFORM qt.eq(qt.kv1('get', 'cas', 'nope', at => at)->>'present', 'false', 'and it was not created');

  -- putIfAbsent: one winner, the loser gets the winner's value and version
  r := qt.kv1('putIfAbsent', 'cas', 'once', '"first"', forever => true, at => at);
  PERFORM qt.eq(r->>'applied', 'true', 'the first putIfAbsent wins');
  v1 := (r->>'version')::bigint;
  r := qt.kv1('putIfAbsent', 'cas', 'once', '"second"', forever => true, at => at);
  PERFORM qt.eq(r->>'applied', 'false', 'the second loses');
  PERFORM qt.eq(r->>'reason', 'exists', 'reason exists');
  PERFORM qt.eq(r->>'value', '"first"', 'with the winner''s value');
  PERFORM qt.eq((r->>'version')::bigint, v1, 'and version');
  PERFORM qt.eq((qt.kv1('get', 'cas', 'once', at => at + interval '100 years')->>'expires_at'), NULL,
                'forever has no expiry');

  -- delete: plain, expect 0, expect N
  r := qt.kv1('delete', 'cas', 'k', expect => v1, at => at);
  PERFORM qt.eq(r->>'reason', 'version', 'delete with a stale expect: version');
  r := qt.kv1('delete', 'cas', 'k', expect => 0, at => at);
  PERFORM qt.eq(r->>'reason', 'exists', 'delete expect 0 of a live key: exists');
  r := qt.kv1('delete', 'cas', 'k', expect => v2, at => at);
  PERFORM qt.eq(r->>'applied', 'true', 'delete with the current version applies');
  PERFORM qt.eq(r->>'value', '{"n":2}', 'and answers what it deleted');
  r := qt.kv1('delete', 'cas', 'k', at => at);
  PERFORM qt.eq(r->>'reason', 'absent', 'delete of an absent key: absent');
  PERFORM qt.eq(qt.kv1('delete', 'cas', 'k', expect => 0, at => at)->>'applied', 'true',
                'delete expect 0 of an absent key applies');
END $$;

-- Concurrent putIfAbsent (needs dblink; skipped without it): the second waits on the first's row, then loses to it.
DO $$
DECLARE busy boolean; ra text; rb text; cs text;
  sql text := $q$SELECT to_jsonb(r)::text FROM queen.kv_apply(NULL, ARRAY['putIfAbsent'], ARRAY['race'], ARRAY['m'],
                ARRAY['%s'], NULL, ARRAY[true], NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL) r$q$;
BEGIN
  IF NOT qt.dblink('concurrent putIfAbsent') THEN RETURN; END IF;
  cs := qt.connstr();
  PERFORM dblink_connect('kva', cs);
  PERFORM dblink_connect('kvb', cs);
  PERFORM dblink_exec('kva', 'BEGIN');
  SELECT x INTO ra FROM dblink('kva', format(sql, '"a"')) AS d(x text);
  PERFORM dblink_send_query('kvb', format(sql, '"b"'));
  PERFORM pg_sleep(0.3);
  busy := dblink_is_busy('kvb') = 1;
  PERFORM dblink_exec('kva', 'COMMIT');
  SELECT x INTO rb FROM dblink_get_result('kvb') AS d(x text);
  PERFORM dblink_disconnect('kva');
  PERFORM dblink_disconnect('kvb');
  PERFORM qt.ok(busy, 'the second putIfAbsent waited for the first');
  PERFORM qt.eq(ra::jsonb->>'applied', 'true', 'the first wins');
  PERFORM qt.eq(rb::jsonb->>'applied', 'false', 'the second loses');
  PERFORM qt.eq(rb::jsonb->>'value', '"a"', 'and reads the winner''s value, committed after its snapshot');
END $$;

-- Expiry: never visible at or past the deadline, whether swept or not; an expired key does not exist for any write.
DO $$
DECLARE r jsonb; v bigint; at timestamptz := '2026-10-01 12:00:00+00';
BEGIN
  PERFORM qt.kv1('put', 'ttl', 'k', '"v"', ttl => 10, at => at);
  PERFORM qt.eq(qt.kv1('get', 'ttl', 'k', at => at + interval '9.999999 seconds')->>'present', 'true',
                'alive a microsecond before its deadline');
  PERFORM qt.eq(qt.kv1('get', 'ttl', 'k', at => at + interval '10 seconds')->>'present', 'false',
                'gone at its deadline');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.kv_entries WHERE namespace = 'ttl'), 1, 'still in the table');
  r := (SELECT jsonb_agg(to_jsonb(x)) FROM queen.kv_apply(NULL, ARRAY['getMany'], ARRAY['ttl'], NULL, NULL, NULL,
          NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, ARRAY[0], ARRAY['k'], false,
          at + interval '10 seconds') x);
  PERFORM qt.eq(r->0->>'kind', 'missing', 'getMany past the deadline: missing');
  PERFORM qt.eq(qt.kv1('put', 'ttl', 'k', '"w"', ttl => 10, expect => 1, at => at + interval '11 seconds')->>'reason',
                'absent', 'a CAS on an expired key: absent');
  PERFORM qt.eq(qt.kv1('delete', 'ttl', 'k', at => at + interval '11 seconds')->>'reason', 'absent',
                'deleting an expired key deletes nothing that existed');
  PERFORM qt.kv1('put', 'ttl', 'k2', '"v"', ttl => 10, at => at);
  r := qt.kv1('putIfAbsent', 'ttl', 'k2', '"new"', ttl => 10, at => at + interval '10 seconds');
  PERFORM qt.eq(r->>'applied', 'true', 'putIfAbsent wins over an expired, unswept key');
  PERFORM qt.eq(qt.kv1('get', 'ttl', 'k2', at => at + interval '11 seconds')->>'value', '"new"', 'a new lineage');
  -- a put does not inherit the previous expiry: it declares its own
  PERFORM qt.kv1('put', 'ttl', 'k3', '1', ttl => 10, at => at);
  PERFORM qt.kv1('put', 'ttl', 'k3', '2', forever => true, at => at + interval '5 seconds');
  PERFORM qt.eq(qt.kv1('get', 'ttl', 'k3', at => at + interval '1 day')->>'value', '2', 'forever replaces a ttl');
END $$;

-- The sweep deletes expired entries only, a batch at a time, with the readers' boundary.
DO $$
DECLARE at timestamptz := '2026-10-01 12:00:00+00'; n int;
BEGIN
  FOR i IN 1 .. 5 LOOP
    PERFORM qt.kv1('put', 'sweep', 'e' || i, '1', ttl => 10, at => at);
  END LOOP;
  PERFORM qt.kv1('put', 'sweep', 'live', '1', ttl => 100, at => at);
  PERFORM qt.kv1('put', 'sweep', 'forever', '1', forever => true, at => at);
  PERFORM qt.eq(queen.kv_sweep_expired(100, at + interval '9 seconds'), 0, 'nothing expired yet');
  PERFORM qt.eq(queen.kv_sweep_expired(3, at + interval '10 seconds'), 3, 'a batch of 3');
  PERFORM qt.eq(queen.kv_sweep_expired(3, at + interval '10 seconds'), 2, 'the rest');
  PERFORM qt.eq(queen.kv_sweep_expired(3, at + interval '10 seconds'), 0, 'then nothing');
  PERFORM qt.eq((SELECT array_agg(key ORDER BY key)::text[] FROM queen.kv_entries WHERE namespace = 'sweep'),
                ARRAY['forever', 'live'], 'live and forever keys stay');
  SELECT expired_unswept INTO n FROM queen.kv_stats();
  PERFORM qt.ok(n >= 0, 'kv_stats answers');
END $$;

-- incr: no CAS, bounded by min/max without saturating, create-only expiry, type and limit verdicts
DO $$
DECLARE r jsonb; at timestamptz := '2026-10-01 12:00:00+00';
BEGIN
  r := qt.kv1('incr', 'ctr', 'c', delta => 2, ttl => 60, at => at);
  PERFORM qt.eq(r->>'value', '2', 'incr of an absent key starts from 0');
  r := qt.kv1('incr', 'ctr', 'c', delta => 2.5, ttl => 999, mx => 5, at => at + interval '30 seconds');
  PERFORM qt.eq(r->>'value', '4.5', 'adds');
  PERFORM qt.eq((qt.kv1('get', 'ctr', 'c', at => at)->>'expires_at')::timestamptz, at + interval '60 seconds',
                'a live counter keeps its expiry: the window does not slide');
  r := qt.kv1('incr', 'ctr', 'c', delta => 1, ttl => 60, mx => 5, at => at + interval '31 seconds');
  PERFORM qt.eq(r->>'applied', 'false', 'an increment past max does not apply');
  PERFORM qt.eq(r->>'reason', 'limit', 'reason limit');
  PERFORM qt.eq(r->>'value', '4.5', 'the current value, not saturated');
  r := qt.kv1('incr', 'ctr', 'c', delta => -10, ttl => 60, mn => 0, at => at + interval '31 seconds');
  PERFORM qt.eq(r->>'reason', 'limit', 'below min: limit');
  r := qt.kv1('incr', 'ctr', 'fresh', delta => 10, ttl => 60, mx => 5, at => at);
  PERFORM qt.eq(r->>'reason', 'limit', 'the first increment of a window is bounded too');
  PERFORM qt.eq(qt.kv1('get', 'ctr', 'fresh', at => at)->>'present', 'false', 'and created nothing');
  r := qt.kv1('incr', 'ctr', 'c', delta => 1, ttl => 60, mx => 5, at => at + interval '60 seconds');
  PERFORM qt.eq(r->>'value', '1', 'an expired counter starts a new window from 0');
  PERFORM qt.eq((qt.kv1('get', 'ctr', 'c', at => at + interval '60 seconds')->>'expires_at')::timestamptz,
                at + interval '120 seconds', 'with the expiry of the increment that created it');
  PERFORM qt.kv1('put', 'ctr', 'obj', '{"count":0}', ttl => 10, at => at);
  r := qt.kv1('incr', 'ctr', 'obj', delta => 1, ttl => 10, at => at);
  PERFORM qt.eq(r->>'reason', 'type', 'a live non-number: type');
  PERFORM qt.eq(r->>'value', '{"count":0}', 'with its value');
  PERFORM qt.eq(qt.kv1('incr', 'ctr', 'obj', delta => 1, ttl => 10, at => at + interval '10 seconds')->>'value', '1',
                'an expired non-number counts as 0');
  PERFORM qt.kv1('put', 'ctr', 'big', '1e3', forever => true, at => at);
  PERFORM qt.eq(qt.kv1('incr', 'ctr', 'big', delta => 1, forever => true, at => at)->>'value', '1001',
                'a stored JSON number in exponent form counts');
  PERFORM qt.kv1('put', 'ctr', 'huge', '1e1000000', forever => true, at => at);
  PERFORM qt.eq(qt.kv1('incr', 'ctr', 'huge', delta => 1, forever => true, at => at)->>'reason', 'type',
                'a number beyond numeric is no counter (type), never an error');
END $$;

-- Values are the JSON text as received, including what jsonb refuses.
DO $$
DECLARE at timestamptz := '2026-10-01 12:00:00+00';
BEGIN
  PERFORM qt.kv1('put', 'text', 'nul', '{"s":"\u0000"}', forever => true, at => at);
  PERFORM qt.kv1('put', 'text', 'big', '[1e1000000, 2]', forever => true, at => at);
  PERFORM qt.kv1('put', 'text', 'null', 'null', forever => true, at => at);
  PERFORM qt.eq(qt.kv1('get', 'text', 'nul', at => at)->>'value', '{"s":"\u0000"}', 'a NUL escape survives');
  PERFORM qt.eq(qt.kv1('get', 'text', 'big', at => at)->>'value', '[1e1000000, 2]', 'a huge number survives');
  PERFORM qt.eq(qt.kv1('get', 'text', 'null', at => at)->>'present', 'true', 'null is a value: found');
  PERFORM qt.eq(qt.kv1('get', 'text', 'null', at => at)->>'value', 'null', 'whose text is null');
END $$;

-- getPrefix pages: keyset cursor, limit, keysOnly, metacharacters literal, the read budget
DO $$
DECLARE r jsonb; at timestamptz := '2026-10-01 12:00:00+00'; after text; got text[] := '{}'; pages int := 0;
BEGIN
  FOR i IN 1 .. 25 LOOP
    PERFORM qt.kv1('put', 'pfx', 'p/' || lpad(i::text, 3, '0'), i::text, forever => true, at => at);
  END LOOP;
  PERFORM qt.kv1('put', 'pfx', 'p0', '"sibling"', forever => true, at => at);
  PERFORM qt.kv1('put', 'pfx', 'q/001', '"other"', forever => true, at => at);
  PERFORM qt.kv1('put', 'pfx', 'a%b', '1', forever => true, at => at);
  PERFORM qt.kv1('put', 'pfx', 'axb', '1', forever => true, at => at);
  PERFORM qt.kv1('put', 'pfx', 'p/zz', '1', ttl => 1, at => at);   -- expired below
  LOOP
    r := (SELECT jsonb_agg(to_jsonb(x) ORDER BY o) FROM queen.kv_apply(NULL, ARRAY['getPrefix'], ARRAY['pfx'],
            ARRAY['p/'], NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, ARRAY[10], ARRAY[after], NULL, NULL, NULL,
            false, at + interval '5 seconds') WITH ORDINALITY x(idx, kind, key, applied, present, reason, version, value,
                                                                 expires_at, updated_at, truncated, next_after, o));
    pages := pages + 1;
    got := got || (SELECT array_agg(e->>'key' ORDER BY n) FROM jsonb_array_elements(r) WITH ORDINALITY j(e, n)
                   WHERE e->>'kind' = 'row');
    EXIT WHEN (r->-1->>'truncated')::boolean IS NOT TRUE;
    after := r->-1->>'next_after';
    PERFORM qt.eq(after, got[array_upper(got, 1)], 'nextAfter is the page''s last key');
    EXIT WHEN pages > 5;
  END LOOP;
  PERFORM qt.eq(pages, 3, '25 keys in pages of 10');
  PERFORM qt.eq(cardinality(got), 25, 'every key once, no expired one, no sibling');
  PERFORM qt.eq(got[1], 'p/001', 'in key order');
  PERFORM qt.eq(got[25], 'p/025', 'to the end');

  r := (SELECT jsonb_agg(to_jsonb(x)) FROM queen.kv_apply(NULL, ARRAY['getPrefix'], ARRAY['pfx'], ARRAY['a%'], NULL,
          NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, ARRAY[true], NULL, NULL, false, at) x);
  PERFORM qt.eq(r->0->>'key', 'a%b', '% is a literal');
  PERFORM qt.eq(r->0->>'value', NULL, 'keysOnly returns no value');
  PERFORM qt.eq(jsonb_array_length(r), 2, 'one row and the result');

  -- the 4 MiB read budget: 70 values of 64 KiB stop after the one that crosses it, with a cursor to go on
  FOR i IN 1 .. 70 LOOP
    PERFORM qt.kv1('put', 'fat', 'f' || lpad(i::text, 3, '0'), '"' || repeat('x', 65530) || '"', forever => true,
                   at => at);
  END LOOP;
  r := (SELECT jsonb_agg(jsonb_build_object('kind', x.kind, 'key', x.key, 'truncated', x.truncated,
                                            'next', x.next_after))
        FROM queen.kv_apply(NULL, ARRAY['getPrefix'], ARRAY['fat'], ARRAY['f'], NULL, NULL, NULL, NULL, NULL, NULL,
                            NULL, NULL, ARRAY[1000], NULL, NULL, NULL, NULL, false, at) x);
  PERFORM qt.eq(jsonb_array_length(r) - 1, 65, 'the page stops at the row that crosses 4 MiB (65 x 64 KiB)');
  PERFORM qt.eq(r->-1->>'truncated', 'true', 'and says it was cut');
  PERFORM qt.eq(r->-1->>'next', 'f065', 'with the cursor of its last row');
END $$;

-- getMany: request order, missing keys explicit, duplicates allowed, the call's own writes seen
DO $$
DECLARE r jsonb; at timestamptz := '2026-10-01 12:00:00+00';
BEGIN
  r := (SELECT jsonb_agg(jsonb_build_object('idx', x.idx, 'kind', x.kind, 'key', x.key, 'value', x.value))
        FROM queen.kv_apply(NULL, ARRAY['getMany', 'put'], ARRAY['many', 'many'], ARRAY[NULL, 'b'],
                            ARRAY[NULL, '"B"'], ARRAY[NULL, 60]::bigint[], NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                            NULL, NULL, ARRAY[0, 0, 0], ARRAY['c', 'b', 'a'], false, at) x);
  PERFORM qt.eq(r, '[{"idx":0,"kind":"missing","key":"c","value":null},{"idx":0,"kind":"row","key":"b","value":"\"B\""},
                     {"idx":0,"kind":"missing","key":"a","value":null},{"idx":0,"kind":"result","key":null,"value":null},
                     {"idx":1,"kind":"result","key":"b","value":"\"B\""}]'::jsonb,
                'getMany lists its keys in request order, sees the put of the same call, and ends with its result');
END $$;

-- Validation: every refusal is a QV8xx SQLSTATE naming the operation, and nothing of the call is written.
DO $$
DECLARE m text;
BEGIN
  m := qt.raises($q$SELECT * FROM queen.kv_apply(NULL, ARRAY['put','put'], ARRAY['val','val'], ARRAY['ok','no'],
        ARRAY['1','1'], ARRAY[60, NULL]::bigint[], NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)$q$,
        'QV807');
  PERFORM qt.ok(m LIKE 'kv operation 1:%ttlSeconds%', 'names the operation and the field: ' || m);
  PERFORM qt.eq(qt.kv1('get', 'val', 'ok')->>'present', 'false', 'a refused call writes nothing');
  PERFORM qt.raises($q$SELECT qt.kv1('put', 'val', 'k', '1', ttl => 60, forever => true)$q$, 'QV807');
  PERFORM qt.raises($q$SELECT qt.kv1('put', 'val', 'k', '1', ttl => 0)$q$, 'QV808');
  PERFORM qt.raises($q$SELECT qt.kv1('put', 'Val', 'k', '1', ttl => 60)$q$, 'QV803');
  PERFORM qt.raises($q$SELECT qt.kv1('put', 'val', '', '1', ttl => 60)$q$, 'QV804');
  PERFORM qt.raises($q$SELECT qt.kv1('put', 'val', repeat('k', 513), '1', ttl => 60)$q$, 'QV805');
  PERFORM qt.eq(qt.kv1('put', 'val', repeat('k', 512), '1', ttl => 60)->>'applied', 'true', '512 bytes is a key');
  PERFORM qt.raises($q$SELECT qt.kv1('put', 'val', 'k', '"' || repeat('x', 65535) || '"', ttl => 60)$q$, 'QV806');
  PERFORM qt.raises($q$SELECT qt.kv1('put', 'val', 'k', NULL, ttl => 60)$q$, 'QV801');
  PERFORM qt.raises($q$SELECT qt.kv1('put', 'val', 'k', '1', ttl => 60, expect => -1)$q$, 'QV809');
  PERFORM qt.raises($q$SELECT qt.kv1('putIfAbsent', 'val', 'k', '1', ttl => 60, expect => 3)$q$, 'QV809');
  PERFORM qt.raises($q$SELECT qt.kv1('incr', 'val', 'k', delta => 1, ttl => 60, expect => 3)$q$, 'QV801');
  PERFORM qt.raises($q$SELECT qt.kv1('incr', 'val', 'k', ttl => 60)$q$, 'QV801');
  PERFORM qt.raises($q$SELECT qt.kv1('incr', 'val', 'k', delta => 1e400, ttl => 60)$q$, 'QV801');
  PERFORM qt.raises($q$SELECT qt.kv1('check', 'val', 'k')$q$, 'QV809');
  PERFORM qt.raises($q$SELECT qt.kv1('frob', 'val', 'k')$q$, 'QV802');
  PERFORM qt.raises($q$SELECT * FROM queen.kv_apply(NULL, ARRAY['put','delete'], ARRAY['val','val'], ARRAY['d','d'],
        ARRAY['1',NULL], ARRAY[60,NULL]::bigint[], NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)$q$,
        'QV810');
  PERFORM qt.raises($q$SELECT * FROM queen.kv_apply(NULL, array_fill('get'::text, ARRAY[257]),
        array_fill('val'::text, ARRAY[257]), array_fill('k'::text, ARRAY[257]), NULL, NULL, NULL, NULL, NULL, NULL,
        NULL, NULL, NULL, NULL, NULL, NULL, NULL)$q$, 'QV811');
  PERFORM qt.raises($q$SELECT * FROM queen.kv_apply(NULL, array_fill('get'::text, ARRAY[65]),
        array_fill('val'::text, ARRAY[65]), array_fill('k'::text, ARRAY[65]), NULL, NULL, NULL, NULL, NULL, NULL,
        NULL, NULL, NULL, NULL, NULL, NULL, NULL, true)$q$, 'QV811');
  PERFORM qt.raises($q$SELECT * FROM queen.kv_apply(NULL, ARRAY['getPrefix','getPrefix','getPrefix','getPrefix',
        'getPrefix'], array_fill('val'::text, ARRAY[5]), array_fill('p'::text, ARRAY[5]), NULL, NULL, NULL, NULL, NULL,
        NULL, NULL, NULL, array_fill(1000, ARRAY[5]), NULL, NULL, NULL, NULL)$q$, 'QV812');
  PERFORM qt.raises($q$SELECT * FROM queen.kv_apply(NULL, ARRAY['getPrefix'], ARRAY['val'], ARRAY[''], NULL, NULL,
        NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)$q$, 'QV813');
  PERFORM qt.raises($q$SELECT * FROM queen.kv_apply(NULL, ARRAY['getPrefix'], ARRAY['val'], ARRAY['p'], NULL, NULL,
        NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, true)$q$, 'QV814');
  PERFORM qt.raises($q$SELECT * FROM queen.kv_apply(NULL, ARRAY['get'], ARRAY['val','val'], ARRAY['k'], NULL, NULL,
        NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)$q$, 'QV898');
  PERFORM qt.raises($q$SELECT * FROM queen.kv_apply(NULL, ARRAY['get'], ARRAY['val'], ARRAY['k'], NULL, NULL,
        NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, ARRAY[0], ARRAY['x'])$q$, 'QV898');
END $$;

-- required: a lost precondition raises QV820 with the verdict in the DETAIL, and the call's other writes roll back.
DO $$
DECLARE st text; detail text; msg text; at timestamptz := '2026-10-01 12:00:00+00';
BEGIN
  PERFORM qt.kv1('put', 'req', 'marker', '{"by":"w1"}', forever => true, at => at);
  BEGIN
    PERFORM * FROM queen.kv_apply(NULL, ARRAY['put', 'putIfAbsent'], ARRAY['req', 'req'], ARRAY['effect', 'marker'],
                                  ARRAY['1', '{"by":"w2"}'], NULL, ARRAY[true, true], NULL, NULL, NULL, NULL,
                                  ARRAY[false, true], NULL, NULL, NULL, NULL, NULL, false, at);
    RAISE EXCEPTION 'ASSERT FAILED: a lost required precondition raised nothing';
  EXCEPTION WHEN SQLSTATE 'QV820' THEN
    GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL, msg = MESSAGE_TEXT;
  END;
  PERFORM qt.eq(msg, 'kv precondition failed', 'the message names no key');
  PERFORM qt.eq(detail::jsonb - 'version', '{"index":1,"op":"putIfAbsent","ns":"req","key":"marker","reason":"exists",
                                             "value":{"by":"w1"}}'::jsonb, 'the verdict, with the winner''s value');
  PERFORM qt.ok((detail::jsonb->>'version')::bigint > 0, 'and its version');
  PERFORM qt.eq(qt.kv1('get', 'req', 'effect', at => at)->>'present', 'false', 'the other write rolled back');
  PERFORM qt.eq(qt.kv1('putIfAbsent', 'req', 'marker', '2', forever => true, at => at)->>'applied', 'false',
                'without required the loss is a verdict');
  -- check: a precondition that writes nothing
  PERFORM qt.eq(qt.kv1('check', 'req', 'marker', expect => 0, at => at)->>'reason', 'exists', 'check 0 of a live key');
  PERFORM qt.eq(qt.kv1('check', 'req', 'nothing', expect => 0, at => at)->>'applied', 'true', 'check 0 of no key');
  PERFORM qt.eq(qt.kv1('check', 'req', 'nothing', expect => 7, at => at)->>'reason', 'absent', 'check N of no key');
  PERFORM qt.raises(format($q$SELECT qt.kv1('check', 'req', 'marker', expect => 1, required => true, at => %L)$q$, at),
                    'QV820');
END $$;

-- Tenancy: the same namespace and key are two entries in two tenants; nothing crosses.
DO $$
DECLARE a uuid := '00000000-0000-0000-0000-00000000030a'; b uuid := '00000000-0000-0000-0000-00000000030b';
BEGIN
  PERFORM qt.kv1('put', 'shared', 'k', '"A"', forever => true, t => a);
  PERFORM qt.eq(qt.kv1('get', 'shared', 'k', t => b)->>'present', 'false', 'B does not see A''s key');
  PERFORM qt.eq(qt.kv1('putIfAbsent', 'shared', 'k', '"B"', forever => true, t => b)->>'applied', 'true',
                'B''s putIfAbsent creates B''s own key');
  PERFORM qt.eq(qt.kv1('get', 'shared', 'k', t => a)->>'value', '"A"', 'A''s key is untouched');
  PERFORM qt.eq(qt.kv1('delete', 'shared', 'k', t => b)->>'applied', 'true', 'B deletes B''s key');
  PERFORM qt.eq(qt.kv1('get', 'shared', 'k', t => a)->>'present', 'true', 'not A''s');
  PERFORM qt.eq((SELECT array_agg(namespace)::text[] FROM queen.kv_namespaces(b)), NULL::text[], 'B has no namespace');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.kv_list(b, 'shared', '', NULL, 10, false, true) WHERE key IS NOT NULL),
                0, 'B''s listing is empty');
END $$;

-- The console's listing and namespaces: empty prefix, expired rows on request, paging, counts.
DO $$
DECLARE t uuid := '00000000-0000-0000-0000-00000000030c'; at timestamptz := '2026-10-01 12:00:00+00'; r jsonb;
BEGIN
  PERFORM qt.kv1('put', 'list-a', 'x1', '1', forever => true, at => at, t => t);
  PERFORM qt.kv1('put', 'list-a', 'x2', '2', ttl => 1, at => at, t => t);
  PERFORM qt.kv1('put', 'list-a', 'y1', '3', forever => true, at => at, t => t);
  PERFORM qt.kv1('put', 'list-b', 'z', '4', forever => true, at => at, t => t);
  r := (SELECT jsonb_agg(jsonb_build_object('key', l.key, 'expired', l.expired, 'more', l.more))
        FROM queen.kv_list(t, 'list-a', '', NULL, 10, false, true, at + interval '5 seconds') l);
  PERFORM qt.eq(r, '[{"key":"x1","expired":false,"more":null},{"key":"x2","expired":true,"more":null},
                     {"key":"y1","expired":false,"more":null},{"key":null,"expired":null,"more":false}]'::jsonb,
                'an empty prefix lists the namespace, expired rows flagged, and ends with the marker');
  r := (SELECT jsonb_agg(jsonb_build_object('key', l.key, 'more', l.more))
        FROM queen.kv_list(t, 'list-a', '', NULL, 1, true, false, at + interval '5 seconds') l);
  PERFORM qt.eq(r, '[{"key":"x1","more":null},{"key":null,"more":true}]'::jsonb, 'a page of 1, more to come');
  r := (SELECT jsonb_agg(jsonb_build_object('key', l.key, 'more', l.more))
        FROM queen.kv_list(t, 'list-a', '', 'x1', 1, true, false, at + interval '5 seconds') l);
  PERFORM qt.eq(r, '[{"key":"y1","more":null},{"key":null,"more":false}]'::jsonb,
                'after x1: y1 (the expired x2 hidden), the last page');
  r := (SELECT jsonb_agg(jsonb_build_object('key', l.key, 'more', l.more))
        FROM queen.kv_list(t, 'list-a', 'x', 'x1', 1, true, false, at + interval '5 seconds') l);
  PERFORM qt.eq(r, '[{"key":null,"more":false}]'::jsonb, 'prefix x after x1: nothing live');
  r := (SELECT jsonb_agg(jsonb_build_object('ns', n.namespace, 'keys', n.keys, 'capped', n.keys_capped)
                         ORDER BY n.namespace) FROM queen.kv_namespaces(t) n);
  PERFORM qt.eq(r, '[{"ns":"list-a","keys":3,"capped":false},{"ns":"list-b","keys":1,"capped":false}]'::jsonb,
                'namespaces with their rows');
  PERFORM qt.eq((SELECT n.keys FROM queen.kv_namespaces(t, 2) n WHERE n.namespace = 'list-a'), 2::bigint,
                'counted up to the cap');
  PERFORM qt.raises($q$SELECT * FROM queen.kv_list(NULL, 'Bad', '', NULL, 10, false, false)$q$, 'QV803');
END $$;

-- The prefix bound: the byte successor of the last character that can grow; surrogates jumped.
DO $$
BEGIN
  PERFORM qt.eq(queen._kv_prefix_end('ab'), 'ac', 'plain');
  PERFORM qt.eq(queen._kv_prefix_end('a' || chr(55295)), 'a' || chr(57344), 'across the surrogate block');
  PERFORM qt.eq(queen._kv_prefix_end('a' || chr(1114111)), 'b', 'U+10FFFF cannot grow: the one before does');
  PERFORM qt.eq(queen._kv_prefix_end(chr(1114111)), NULL::text, 'nothing above');
  PERFORM qt.eq(queen._kv_prefix_end(''), NULL::text, 'no prefix, no bound');
END $$;
