-- Timers (R__97_timers.sql): schedule / reschedule / cancel, validation SQLSTATEs, the claim (due order, batch, SKIP
-- LOCKED across two sessions), the fire (claim + push + delete in one transaction, or nothing), failure backoff,
-- tenancy, peek, list and the probe. Time is passed explicitly (p_now), so nothing here sleeps.

-- One timer operation; its row as jsonb.
CREATE OR REPLACE FUNCTION qt.timer(op text, q text, k text, delay_ms bigint DEFAULT 1000, txn text DEFAULT 'tx',
                                    payload text DEFAULT '{"n":1}', part text DEFAULT NULL,
                                    at timestamptz DEFAULT NULL, t uuid DEFAULT qt.tenant()) RETURNS jsonb
LANGUAGE sql AS $$
  SELECT to_jsonb(r) FROM queen.timers_apply(t, 'sub-1', ARRAY[op], ARRAY[q], ARRAY[k], ARRAY[part], ARRAY[delay_ms],
                                             ARRAY[txn], ARRAY[gen_random_uuid()], ARRAY[convert_to(payload, 'UTF8')],
                                             NULL, at) r $$;

-- The timer keys timers_claim returns, in order, for the given instant (the claim's locks end with the caller's
-- transaction).
CREATE OR REPLACE FUNCTION qt.claimed(lim int, at timestamptz) RETURNS text[] LANGUAGE sql AS $$
  SELECT COALESCE(array_agg(c.timer_key ORDER BY o), '{}') FROM queen.timers_claim(lim, at) WITH ORDINALITY c(
    tenant_id, queue, timer_key, partition, due_at, transaction_id, message_id, payload, encrypted, producer_sub,
    attempts, late_ms, o) $$;

-- schedule, reschedule, cancel
DO $$
DECLARE r jsonb; at timestamptz := '2026-10-01 12:00:00+00'; mid uuid;
BEGIN
  r := qt.timer('schedule', 'tm.q', 'k1', 30000, 'tx-1', at => at);
  PERFORM qt.eq(r->>'status', 'scheduled', 'a new timer');
  PERFORM qt.eq(r->>'ok', 'true', 'ok');
  PERFORM qt.eq((r->>'deliver_at')::timestamptz, at + interval '30 seconds', 'due = now + delayMs');
  PERFORM qt.eq(r->>'txn', 'tx-1', 'echoes its transaction id');
  mid := (r->>'message_id')::uuid;
  PERFORM qt.eq((SELECT message_id FROM queen.timers_peek(NULL, 'tm.q', 'k1')), mid, 'the message id it promised');
  PERFORM qt.eq((SELECT producer_sub FROM queen.timers_peek(NULL, 'tm.q', 'k1')), 'sub-1', 'the caller''s subject');
  PERFORM qt.eq((SELECT partition FROM queen.timers_peek(NULL, 'tm.q', 'k1')), 'Default', 'partition defaults');
  UPDATE queen.timers SET attempts = 3, last_error = 'boom' WHERE timer_key = 'k1';

  r := qt.timer('reschedule', 'tm.q', 'k1', 60000, 'tx-2', '{"n":2}', 'p7', at => at);
  PERFORM qt.eq(r->>'status', 'rescheduled', 'the same key: rescheduled');
  PERFORM qt.eq((SELECT row_to_json(p)::jsonb - 'created_at' - 'updated_at' - 'message_id'
                 FROM queen.timers_peek(NULL, 'tm.q', 'k1') p),
                jsonb_build_object('queue', 'tm.q', 'timer_key', 'k1', 'partition', 'p7',
                                   'deliver_at', to_jsonb(at + interval '60 seconds'), 'transaction_id', 'tx-2',
                                   'payload', '\x' || encode(convert_to('{"n":2}', 'UTF8'), 'hex'), 'encrypted', false,
                                   'producer_sub', 'sub-1', 'attempts', 0, 'last_error', NULL),
                'a reschedule replaces everything and starts a new budget');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.timers WHERE timer_key = 'k1'), 1, 'one row per key');
  r := qt.timer('schedule', 'tm.q', 'k1', 1, 'tx-3', at => at);
  PERFORM qt.eq(r->>'status', 'rescheduled', 'schedule of an existing key reschedules too');

  r := qt.timer('cancel', 'tm.q', 'k1', NULL, 'mine', NULL, at => at);
  PERFORM qt.eq(r->>'status', 'cancelled', 'cancel of a pending timer');
  PERFORM qt.eq(r->>'txn', 'tx-3', 'answers the cancelled timer''s transaction id');
  r := qt.timer('cancel', 'tm.q', 'k1', NULL, 'mine', NULL, at => at);
  PERFORM qt.eq(r->>'status', 'absent', 'cancel of nothing: absent');
  PERFORM qt.eq(r->>'ok', 'false', 'not ok');
  PERFORM qt.eq(r->>'txn', 'mine', 'echoes the caller''s txn');

  -- one call, several operations: results in request order, applied in key order
  r := (SELECT jsonb_agg(jsonb_build_object('i', x.idx, 'k', x.timer_key, 's', x.status))
        FROM queen.timers_apply(NULL, NULL, ARRAY['schedule', 'schedule', 'cancel'], ARRAY['tm.q', 'tm.q', 'tm.q'],
                                ARRAY['zz', 'aa', 'mm'], NULL, ARRAY[1, 2, NULL]::bigint[], ARRAY['t1', 't2', NULL],
                                ARRAY[gen_random_uuid(), gen_random_uuid(), NULL],
                                ARRAY['\x7b7d'::bytea, '\x7b7d'::bytea, NULL], NULL, at) x);
  PERFORM qt.eq(r, '[{"i":0,"k":"zz","s":"scheduled"},{"i":1,"k":"aa","s":"scheduled"},{"i":2,"k":"mm","s":"absent"}]'::jsonb,
                'one row per operation in request order');
END $$;

-- Validation: QV9xx SQLSTATEs naming the operation; a refused call schedules nothing.
DO $$
DECLARE m text;
BEGIN
  m := qt.raises($q$SELECT * FROM queen.timers_apply(NULL, NULL, ARRAY['schedule','schedule'], ARRAY['tv','tv'],
        ARRAY['ok','bad'], NULL, ARRAY[1, NULL]::bigint[], ARRAY['t','t'], ARRAY[gen_random_uuid(), gen_random_uuid()],
        ARRAY['\x7b7d'::bytea, '\x7b7d'::bytea], NULL)$q$, 'QV906');
  PERFORM qt.ok(m LIKE 'timer operation 1:%delayMs%', 'names the operation and the field: ' || m);
  PERFORM qt.eq((SELECT count(*)::int FROM queen.timers WHERE queue = 'tv'), 0, 'a refused call schedules nothing');
  PERFORM qt.raises($q$SELECT qt.timer('fire', 'tv', 'k')$q$, 'QV902');
  PERFORM qt.raises($q$SELECT qt.timer('schedule', '', 'k')$q$, 'QV903');
  PERFORM qt.raises($q$SELECT qt.timer('schedule', repeat('q', 256), 'k')$q$, 'QV903');
  PERFORM qt.raises($q$SELECT qt.timer('schedule', 'tv', '')$q$, 'QV904');
  PERFORM qt.raises($q$SELECT qt.timer('schedule', 'tv', repeat('k', 513))$q$, 'QV905');
  PERFORM qt.raises($q$SELECT qt.timer('schedule', 'tv', 'k', 7776000001)$q$, 'QV907');
  PERFORM qt.eq(qt.timer('schedule', 'tv', 'edge', 7776000000)->>'status', 'scheduled', '90 days is within the horizon');
  PERFORM qt.raises($q$SELECT qt.timer('schedule', 'tv', 'k', 1, '')$q$, 'QV908');
  PERFORM qt.raises($q$SELECT qt.timer('schedule', 'tv', 'k', 1, 'tx', NULL)$q$, 'QV909');
  PERFORM qt.raises($q$SELECT qt.timer('schedule', 'tv', 'k', 1, 'tx', '"' || repeat('x', 1048575) || '"')$q$, 'QV910');
  PERFORM qt.raises($q$SELECT qt.timer('schedule', 'tv', 'k', 1, 'tx', '{}', '')$q$, 'QV913');
  PERFORM qt.raises($q$SELECT * FROM queen.timers_apply(NULL, NULL, ARRAY['schedule','cancel'], ARRAY['tv','tv'],
        ARRAY['d','d'], NULL, ARRAY[1, NULL]::bigint[], ARRAY['t',NULL], ARRAY[gen_random_uuid(), NULL],
        ARRAY['\x7b7d'::bytea, NULL], NULL)$q$, 'QV911');
  PERFORM qt.raises($q$SELECT * FROM queen.timers_apply(NULL, NULL, array_fill('cancel'::text, ARRAY[257]),
        array_fill('tv'::text, ARRAY[257]), (SELECT array_agg('k' || i) FROM generate_series(1, 257) i), NULL, NULL,
        NULL, NULL, NULL, NULL)$q$, 'QV912');
  PERFORM qt.raises($q$SELECT * FROM queen.timers_apply(NULL, NULL, ARRAY['schedule'], ARRAY['tv'], ARRAY['k'], NULL,
        ARRAY[1]::bigint[], ARRAY['t'], NULL, ARRAY['\x7b7d'::bytea], NULL)$q$, 'QV914');
  PERFORM qt.raises($q$SELECT * FROM queen.timers_apply(NULL, NULL, ARRAY['cancel'], ARRAY['tv','tv'], ARRAY['k'],
        NULL, NULL, NULL, NULL, NULL, NULL)$q$, 'QV914');
END $$;

-- The claim: only due timers, in due order, a batch at a time; late timers (after an outage) come first.
DO $$
DECLARE at timestamptz := '2026-10-02 12:00:00+00';
BEGIN
  DELETE FROM queen.timers;
  PERFORM qt.timer('schedule', 'tc.q', 'later', 5000, at => at);
  PERFORM qt.timer('schedule', 'tc.q', 'due-2', -1000, at => at);
  PERFORM qt.timer('schedule', 'tc.q', 'due-1', -60000, at => at);   -- missed during an outage
  PERFORM qt.timer('schedule', 'tc.q', 'due-3', 0, at => at);
  PERFORM qt.timer('schedule', 'tc.q', 'ancient', -99999999999, at => at);   -- clamped: due 90 days back
  PERFORM qt.eq(qt.claimed(10, at), ARRAY['ancient', 'due-1', 'due-2', 'due-3'], 'due timers, oldest first');
  PERFORM qt.eq(qt.claimed(2, at), ARRAY['ancient', 'due-1'], 'at most the batch');
  PERFORM qt.eq(qt.claimed(10, at + interval '5 seconds'), ARRAY['ancient', 'due-1', 'due-2', 'due-3', 'later'],
                'a timer is due at its due time');
  PERFORM qt.eq((SELECT late_ms FROM queen.timers_claim(1, at)), 7776000000::bigint, 'how late the oldest is');
END $$;

-- Two sweeps at once (needs dblink; skipped without it): each timer is claimed by one session only, nobody waits.
DO $$
DECLARE at timestamptz := '2026-10-03 12:00:00+00';
BEGIN
  DELETE FROM queen.timers;
  FOR i IN 1 .. 6 LOOP
    PERFORM qt.timer('schedule', 'tcc.q', 't' || i, -i * 1000, 'tx-' || i, '{"i":' || i || '}', at => at);
  END LOOP;
END $$;

DO $$
DECLARE cs text; b text[]; a text[]; t0 timestamptz; n int;
  claim text := $q$SELECT array_agg(c.timer_key ORDER BY c.due_at)::text FROM queen.timers_claim(3,
                   '2026-10-03 12:00:00+00') c$q$;
BEGIN
  IF NOT qt.dblink('concurrent claim') THEN RETURN; END IF;
  PERFORM set_config('lock_timeout', '1500ms', true);
  cs := qt.connstr();
  PERFORM dblink_connect('tmb', cs);
  PERFORM dblink_exec('tmb', 'BEGIN');
  SELECT x::text[] INTO b FROM dblink('tmb', claim) AS d(x text);
  t0 := clock_timestamp();
  a := qt.claimed(10, '2026-10-03 12:00:00+00');
  PERFORM qt.ok(clock_timestamp() - t0 < interval '1 second', 'the second claim did not wait');
  PERFORM qt.eq(b, ARRAY['t6', 't5', 't4'], 'session B claimed the three oldest');
  PERFORM qt.eq(a, ARRAY['t3', 't2', 't1'], 'session A got the others, none twice');
  -- B fires its three (push + delete in its transaction) and commits; A's transaction (this block) fires nothing
  PERFORM * FROM dblink('tmb', $q$SELECT qt.push('tcc.q', 'Default', 106, 3)::text$q$) AS d(x text);
  SELECT x INTO n FROM dblink('tmb', $q$SELECT queen.timers_fired(array_fill(qt.tenant(), ARRAY[3]),
      ARRAY['tcc.q','tcc.q','tcc.q'], ARRAY['t6','t5','t4'], (SELECT array_agg(message_id ORDER BY timer_key DESC)
      FROM queen.timers WHERE timer_key IN ('t4','t5','t6')))$q$) AS d(x int);
  PERFORM qt.eq(n, 3, 'B deleted the three it claimed');
  PERFORM dblink_exec('tmb', 'COMMIT');
  PERFORM dblink_disconnect('tmb');
END $$;

DO $$
BEGIN
  IF NOT qt.dblink('concurrent claim, follow-up') THEN RETURN; END IF;
  PERFORM qt.eq((SELECT array_agg(timer_key ORDER BY timer_key)::text[] FROM queen.timers WHERE queue = 'tcc.q'),
                ARRAY['t1', 't2', 't3'], 'B''s three are gone with its commit, A''s three wait for the next sweep');
  PERFORM qt.eq(qt.claimed(10, '2026-10-03 12:00:00+00'), ARRAY['t3', 't2', 't1'], 'and are claimable again');
END $$;

-- The fire: claim, push and delete in one transaction; a rolled-back fire leaves the timer, and pushes nothing.
DO $$
DECLARE at timestamptz := '2026-10-04 12:00:00+00'; c record; pushed jsonb;
BEGIN
  DELETE FROM queen.timers;
  PERFORM qt.timer('schedule', 'tf.q', 'go', -1, 'tf-1', '{"go":1}', 'p1', at => at);
  SELECT * INTO c FROM queen.timers_claim(10, at);
  pushed := qt.push(c.queue, c.partition, 500, 1);
  PERFORM qt.eq(pushed->>'status', 'queued', 'the timer''s message is pushed');
  PERFORM qt.eq(queen.timers_fired(ARRAY[c.tenant_id], ARRAY[c.queue], ARRAY[c.timer_key], ARRAY[c.message_id]), 1,
                'and the timer deleted in the same transaction');
END $$;

DO $$
DECLARE at timestamptz := '2026-10-04 12:00:00+00';
BEGIN
  PERFORM qt.eq((SELECT count(*)::int FROM queen.timers_peek(NULL, 'tf.q', 'go')), 0, 'fired: no longer pending');
  PERFORM qt.eq((SELECT last_offset FROM queen.log_partitions WHERE id = qt.pid('tf.q', 'p1')), 0::bigint,
                'one message in the queue');
  PERFORM qt.timer('schedule', 'tf.q', 'undone', -1, at => at);
  BEGIN
    PERFORM qt.push('tf.q', 'p1', 501, 1);
    PERFORM queen.timers_fired(ARRAY[qt.tenant()], ARRAY['tf.q'], ARRAY['undone'],
                               ARRAY[(SELECT message_id FROM queen.timers WHERE timer_key = 'undone')]);
    RAISE EXCEPTION 'crash before commit';
  EXCEPTION WHEN raise_exception THEN
    NULL;
  END;
  PERFORM qt.eq((SELECT count(*)::int FROM queen.timers_peek(NULL, 'tf.q', 'undone')), 1, 'a failed fire keeps the timer');
  PERFORM qt.eq((SELECT last_offset FROM queen.log_partitions WHERE id = qt.pid('tf.q', 'p1')), 0::bigint,
                'and pushed nothing');
  PERFORM qt.raises($q$SELECT queen.timers_fired(ARRAY[qt.tenant()], ARRAY['tf.q'], ARRAY['undone'],
                        ARRAY[gen_random_uuid()])$q$, 'QV950');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.timers_peek(NULL, 'tf.q', 'undone')), 1,
                'a delete that names a timer it did not claim refuses, and deletes nothing');
END $$;

-- A failed fire backs the timer off, counts the attempt and keeps the error; a reschedule starts afresh.
DO $$
DECLARE at timestamptz := '2026-10-05 12:00:00+00'; mid uuid; r record;
BEGIN
  DELETE FROM queen.timers;
  PERFORM qt.timer('schedule', 'tb.q', 'poison', -1, at => at);
  mid := (SELECT message_id FROM queen.timers WHERE timer_key = 'poison');
  PERFORM qt.eq(queen.timers_fail(ARRAY[qt.tenant()], ARRAY['tb.q'], ARRAY['poison'], ARRAY[mid], 30000, 'db down', at),
                1, 'one timer backed off');
  PERFORM qt.eq(qt.claimed(10, at + interval '29 seconds'), '{}'::text[], 'not claimable during the backoff');
  PERFORM qt.eq(qt.claimed(10, at + interval '30 seconds'), ARRAY['poison'], 'claimable after it');
  SELECT * INTO r FROM queen.timers_peek(NULL, 'tb.q', 'poison');
  PERFORM qt.eq(r.attempts, 1, 'the attempt is counted');
  PERFORM qt.eq(r.last_error, 'db down', 'the error kept');
  PERFORM qt.eq(r.deliver_at, at - interval '1 millisecond', 'its due time is unchanged');
  PERFORM qt.eq(queen.timers_fail(ARRAY[qt.tenant()], ARRAY['tb.q'], ARRAY['poison'], ARRAY[gen_random_uuid()], 30000,
                                  'x', at), 0, 'a timer rescheduled since its claim is left alone');
END $$;

-- Tenancy: the same queue and key in two tenants are two timers; a claim returns each with its own tenant.
DO $$
DECLARE a uuid := '00000000-0000-0000-0000-00000000031a'; b uuid := '00000000-0000-0000-0000-00000000031b';
  at timestamptz := '2026-10-06 12:00:00+00';
BEGIN
  DELETE FROM queen.timers;
  PERFORM qt.timer('schedule', 'tt.q', 'same', -2, 'tx-a', '{"t":"a"}', at => at, t => a);
  PERFORM qt.timer('schedule', 'tt.q', 'same', -1, 'tx-b', '{"t":"b"}', at => at, t => b);
  PERFORM qt.eq(qt.timer('cancel', 'tt.q', 'same', NULL, NULL, NULL, at => at, t => qt.tenant())->>'status', 'absent',
                'another tenant''s timer is absent');
  PERFORM qt.eq((SELECT array_agg(c.tenant_id::text || '/' || c.transaction_id ORDER BY c.due_at)::text[]
                 FROM queen.timers_claim(10, at) c),
                ARRAY[a::text || '/tx-a', b::text || '/tx-b'], 'each claimed with its own tenant');
  PERFORM qt.eq((SELECT transaction_id FROM queen.timers_peek(b, 'tt.q', 'same')), 'tx-b', 'peek is tenant-scoped');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.timers_list(a, 'tt.q', NULL, 10)), 1, 'list is tenant-scoped');
END $$;

-- list pages a queue by key; the probe.
DO $$
DECLARE at timestamptz := '2026-10-07 12:00:00+00'; r jsonb; p record;
BEGIN
  DELETE FROM queen.timers;
  FOR i IN 1 .. 5 LOOP
    PERFORM qt.timer('schedule', 'tl.q', 'k' || i, i * 1000, at => at);
  END LOOP;
  PERFORM qt.timer('schedule', 'tl.other', 'k9', 1000, at => at);
  r := (SELECT jsonb_agg(jsonb_build_object('k', l.timer_key, 'more', l.more)) FROM queen.timers_list(NULL, 'tl.q', NULL, 2) l);
  PERFORM qt.eq(r, '[{"k":"k1","more":true},{"k":"k2","more":true}]'::jsonb, 'a page of 2 with more');
  r := (SELECT jsonb_agg(jsonb_build_object('k', l.timer_key, 'more', l.more)) FROM queen.timers_list(NULL, 'tl.q', 'k4', 2) l);
  PERFORM qt.eq(r, '[{"k":"k5","more":false}]'::jsonb, 'the last page');
  SELECT * INTO p FROM queen.timers_probe(3, at + interval '2.5 seconds');
  PERFORM qt.eq(p.next_visible_at, at + interval '1 second', 'the next due time');
  PERFORM qt.eq(p.oldest_due_at, at + interval '1 second', 'the oldest late timer');
  PERFORM qt.eq(p.due, 3::bigint, 'k1, k2 and tl.other/k9 are due');
  PERFORM qt.eq(p.pending, 3::bigint, 'pending counted up to the cap');
  PERFORM qt.ok(p.pending_capped AND NOT p.due_capped, 'with the cap flagged');
END $$;
