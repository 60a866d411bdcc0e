-- GET /api/v1/messages: queen.list_messages (ENGINE §8.1). Own tenants for isolation.

-- queen.list_messages returns json (its keys already in jsonb's order); the assertions compare jsonb values.
CREATE OR REPLACE FUNCTION qt.lm(p_tenant uuid, p_filter jsonb) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT queen.list_messages(p_tenant, p_filter)::jsonb $$;

-- Collected (pid, offset) keys of a listing page, in page order.
CREATE OR REPLACE FUNCTION qt.lm_keys(r jsonb) RETURNS text[] LANGUAGE sql IMMUTABLE AS $$
  SELECT COALESCE(array_agg((e->>'partitionId') || '@' || ((e->'segment'->>'seq')::bigint + (e->'segment'->>'frameIdx')::bigint)
                            ORDER BY o), '{}')
  FROM jsonb_array_elements(r->'messages') WITH ORDINALITY x(e, o) $$;

-- Status of (pid, offset) in a listing, NULL when absent.
CREATE OR REPLACE FUNCTION qt.lm_status(r jsonb, pid uuid, off bigint) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT e->>'status' FROM jsonb_array_elements(r->'messages') e
  WHERE e->>'partitionId' = pid::text AND (e->'segment'->>'seq')::bigint + (e->'segment'->>'frameIdx')::bigint = off $$;

CREATE OR REPLACE FUNCTION qt.lm_item(r jsonb, pid uuid, off bigint) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
  SELECT e FROM jsonb_array_elements(r->'messages') e
  WHERE e->>'partitionId' = pid::text AND (e->'segment'->>'seq')::bigint + (e->'segment'->>'frameIdx')::bigint = off $$;

-- Shape, status derivation and mode.
DO $$
DECLARE
  t uuid := '00000000-0000-0000-0000-0000000020a1';
  w jsonb := jsonb_build_object('from', now() - interval '10 minutes', 'to', now() + interval '10 minutes');
  pa uuid; pb uuid; r jsonb; e jsonb; k text[];
BEGIN
  PERFORM qt.push('lm.orders', 'a', 1, 3, t);   -- a: 0..2
  PERFORM qt.push('lm.orders', 'a', 4, 2, t);   -- a: 3..4
  PERFORM qt.push('lm.orders', 'b', 10, 2, t);  -- b: 0..1
  pa := qt.pid('lm.orders', 'a', t); pb := qt.pid('lm.orders', 'b', t);

  -- No cursors at all: everything pending, mode none.
  r := qt.lm(t, w);
  PERFORM qt.eq(jsonb_array_length(r->'messages'), 7, 'all 7 frames listed');
  PERFORM qt.eq(r->'mode', '{"hasQueueMode":false,"busGroupsCount":0,"type":"none"}'::jsonb, 'mode none');
  PERFORM qt.eq(r->'nextCursor', 'null'::jsonb, 'short page: no cursor');
  -- the json text writes every object's keys in jsonb's order: a client parsing it sees what a jsonb gave
  PERFORM qt.eq((SELECT array_agg(x.key) FROM json_object_keys(queen.list_messages(t, w)) x(key)),
                (SELECT array_agg(x.key) FROM jsonb_object_keys(r) x(key)), 'body keys in jsonb order');
  PERFORM qt.eq((SELECT array_agg(x.key) FROM json_object_keys(queen.list_messages(t, w)->'messages'->0) x(key)),
                (SELECT array_agg(x.key) FROM jsonb_object_keys(r->'messages'->0) x(key)),
                'message keys in jsonb order');
  PERFORM qt.ok((SELECT bool_and(x->>'status' = 'pending' AND x->>'queueStatus' = 'pending') FROM jsonb_array_elements(r->'messages') x),
                'all pending');
  -- newest first: b's push is the newest row, then a's second push (offsets 4, 3), then a's first push.
  k := qt.lm_keys(r);
  PERFORM qt.eq(k, ARRAY[pb || '@1', pb || '@0', pa || '@4', pa || '@3', pa || '@2', pa || '@1', pa || '@0'], 'order');
  e := qt.lm_item(r, pa, 4);
  PERFORM qt.eq(e->>'txnHash', encode(qt.h(5), 'hex'), 'txnHash = 32 hex of the frame hash');
  PERFORM qt.eq(length(e->>'txnHash'), 32, 'txnHash length');
  PERFORM qt.eq(e->'segment', '{"seq":3,"frameIdx":1}'::jsonb, 'segment seq/frameIdx');
  PERFORM qt.eq(e->>'queuePath', 'lm.orders/a', 'queuePath');
  PERFORM qt.eq(e->>'namespace' || '|' || (e->>'task'), 'lm|orders', 'namespace/task from the dot-split');
  PERFORM qt.eq(e->'id', 'null'::jsonb, 'id null');
  PERFORM qt.eq(e->'transactionId', 'null'::jsonb, 'transactionId null');
  PERFORM qt.eq(e->'traceId', 'null'::jsonb, 'traceId null');
  PERFORM qt.eq(e->'producerSub', 'null'::jsonb, 'producerSub null');
  PERFORM qt.eq(e->'payloadAvailable', 'false'::jsonb, 'payloadAvailable false');
  PERFORM qt.eq(e->'queuePriority', '0'::jsonb, 'queuePriority');
  PERFORM qt.eq(e->'busStatus', '{"consumedBy":0,"totalGroups":0}'::jsonb, 'busStatus');
  PERFORM qt.eq(e->'leaseExpiresAt', 'null'::jsonb, 'no lease');
  PERFORM qt.ok(e->>'createdAt' ~ '^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$', 'createdAt ms Z: ' || (e->>'createdAt'));
  PERFORM qt.eq(e->>'createdAt',
                queen._msg_ts((SELECT created_at FROM queen.log_segments WHERE partition_id = pa AND base_offset = 3)),
                'createdAt = txns created_at');

  -- Queue mode: real pop of 2 on a (lease live), ack offset 0 -> committed 0, lease keeps offset 1.
  PERFORM qt.pop('lm.orders', 'a', '__QUEUE_MODE__', 2, 1, 'w1', t => t);
  PERFORM queen.log_ack(t, pa, '__QUEUE_MODE__', 'w1', ARRAY[qt.h(1)], ARRAY['completed']);
  PERFORM qt.eq((SELECT count(*)::int FROM queen.log_consumers WHERE partition_id = pa), 1, 'queue-mode cursor row exists');
  UPDATE queen.log_consumers SET committed = 0, batch_end = 1, worker_id = 'w1', lease_expires_at = now() + interval '5 minutes'
  WHERE partition_id = pa AND consumer_group = '__QUEUE_MODE__';
  r := qt.lm(t, w);
  PERFORM qt.eq(r->'mode', '{"hasQueueMode":true,"busGroupsCount":0,"type":"queue"}'::jsonb, 'mode queue');
  PERFORM qt.eq(qt.lm_status(r, pa, 0), 'completed', 'queue-mode cursor passed 0');
  PERFORM qt.eq(qt.lm_status(r, pa, 1), 'processing', 'leased frame');
  PERFORM qt.eq(qt.lm_status(r, pa, 4), 'processing', 'any live lease on the partition -> processing');
  PERFORM qt.eq(qt.lm_status(r, pb, 0), 'pending', 'other partition pending');
  PERFORM qt.eq(qt.lm_item(r, pa, 2)->>'leaseExpiresAt',
                queen._msg_ts((SELECT lease_expires_at FROM queen.log_consumers WHERE partition_id = pa AND consumer_group = '__QUEUE_MODE__')),
                'leaseExpiresAt = queue-mode lease');
  PERFORM qt.eq(qt.lm_item(r, pb, 0)->'leaseExpiresAt', 'null'::jsonb, 'no lease on b');

  -- Expired lease: not processing any more.
  UPDATE queen.log_consumers SET lease_expires_at = now() - interval '1 second'
  WHERE partition_id = pa AND consumer_group = '__QUEUE_MODE__';
  r := qt.lm(t, w);
  PERFORM qt.eq(qt.lm_status(r, pa, 1), 'pending', 'expired lease -> pending');
  PERFORM qt.eq(qt.lm_item(r, pa, 1)->'leaseExpiresAt', 'null'::jsonb, 'expired lease not reported');

  -- Dead letter at a:2.
  INSERT INTO queen.log_dlq (partition_id, consumer_group, "offset", transaction_id, payload, error, retry_count)
  VALUES (pa, '__QUEUE_MODE__', 2, 'tx-2', '{"v":2}', 'boom', 3);
  UPDATE queen.log_consumers SET committed = 2, batch_end = NULL, worker_id = NULL, lease_expires_at = NULL
  WHERE partition_id = pa AND consumer_group = '__QUEUE_MODE__';
  r := qt.lm(t, w);
  PERFORM qt.eq(qt.lm_status(r, pa, 2), 'dead_letter', 'dead_letter wins over completed');
  PERFORM qt.eq(qt.lm_status(r, pa, 1), 'completed', 'completed');
  PERFORM qt.eq(qt.lm_status(r, pa, 3), 'pending', 'pending after the cursor');
  r := qt.lm(t, w || '{"status":"pending"}');
  PERFORM qt.eq(qt.lm_keys(r), ARRAY[pb || '@1', pb || '@0', pa || '@4', pa || '@3'], 'status filter pending');
  r := qt.lm(t, w || '{"status":"completed"}');
  PERFORM qt.eq(qt.lm_keys(r), ARRAY[pa || '@1', pa || '@0'], 'status filter completed excludes the DLQ frame');
  r := qt.lm(t, w || '{"status":"processing"}');
  PERFORM qt.eq(r->'messages', '[]'::jsonb, 'status filter processing: no live lease');
  r := qt.lm(t, w || '{"status":"bogus"}');
  PERFORM qt.eq(r->'messages', '[]'::jsonb, 'unknown status matches nothing');
  PERFORM qt.eq(r->'mode'->>'type', 'queue', 'mode still reported');

  -- A named group on a: named groups first. g1 committed 0 -> only offset 0 completed (queue mode passed 2).
  INSERT INTO queen.log_consumers (partition_id, consumer_group, committed) VALUES (pa, 'g1', 0), (pa, 'g2', 3);
  r := qt.lm(t, w);
  PERFORM qt.eq(r->'mode', '{"hasQueueMode":true,"busGroupsCount":2,"type":"hybrid"}'::jsonb, 'mode hybrid');
  PERFORM qt.eq(qt.lm_status(r, pa, 0), 'completed', 'all named groups passed 0');
  PERFORM qt.eq(qt.lm_status(r, pa, 1), 'pending', 'g1 has not passed 1 (queue mode did): named groups first');
  PERFORM qt.eq(qt.lm_item(r, pa, 1)->'busStatus', '{"consumedBy":1,"totalGroups":2}'::jsonb, 'busStatus consumedBy');
  PERFORM qt.eq(qt.lm_item(r, pa, 0)->'busStatus', '{"consumedBy":2,"totalGroups":2}'::jsonb, 'busStatus both');
  PERFORM qt.eq(qt.lm_item(r, pa, 4)->'busStatus', '{"consumedBy":0,"totalGroups":2}'::jsonb, 'busStatus none');
  PERFORM qt.eq(qt.lm_item(r, pb, 0)->'busStatus', '{"consumedBy":0,"totalGroups":0}'::jsonb, 'b has no groups');
  -- bus group lease makes the partition processing
  UPDATE queen.log_consumers SET worker_id = 'wb', batch_end = 3, lease_expires_at = now() + interval '1 minute'
  WHERE partition_id = pa AND consumer_group = 'g1';
  r := qt.lm(t, w);
  PERFORM qt.eq(qt.lm_status(r, pa, 1), 'processing', 'bus lease -> processing');
  PERFORM qt.eq(qt.lm_item(r, pa, 1)->'leaseExpiresAt', 'null'::jsonb, 'leaseExpiresAt is the queue-mode lease only');

  -- Mode is computed over the filtered partition.
  -- (the queue-mode pop seeded a cursor on every partition of the queue; b becomes bus-only)
  DELETE FROM queen.log_consumers WHERE partition_id = pb AND consumer_group = '__QUEUE_MODE__';
  INSERT INTO queen.log_consumers (partition_id, consumer_group, committed) VALUES (pb, 'g1', 1);
  r := qt.lm(t, w || '{"queue":"lm.orders","partition":"b"}');
  PERFORM qt.eq(r->'mode', '{"hasQueueMode":false,"busGroupsCount":1,"type":"bus"}'::jsonb, 'mode bus on b');
  PERFORM qt.eq(jsonb_array_length(r->'messages'), 2, 'partition filter');
  PERFORM qt.eq(qt.lm_status(r, pb, 1), 'completed', 'bus group passed -> completed');

  -- status filter applies after derivation
  r := qt.lm(t, w || '{"status":"dead_letter"}');
  PERFORM qt.eq(qt.lm_keys(r), ARRAY[pa || '@2'], 'status filter dead_letter');
  r := qt.lm(t, w || '{"status":"completed"}');
  PERFORM qt.eq(qt.lm_keys(r), ARRAY[pb || '@1', pb || '@0', pa || '@0'], 'status filter completed');
  r := qt.lm(t, w || '{"status":"processing","limit":"2"}');
  PERFORM qt.eq(qt.lm_keys(r), ARRAY[pa || '@4', pa || '@3'], 'status filter + limit');
  PERFORM qt.ok(r->>'nextCursor' IS NOT NULL, 'full page -> nextCursor');
  r := qt.lm(t, w || jsonb_build_object('status', 'processing', 'limit', '2', 'cursor', r->>'nextCursor'));
  PERFORM qt.eq(qt.lm_keys(r), ARRAY[pa || '@1'], 'status filter cursor page 2');
  PERFORM qt.eq(r->'nextCursor', 'null'::jsonb, 'short page');

  -- Other tenant sees nothing
  r := qt.lm('00000000-0000-0000-0000-0000000020a9', w);
  PERFORM qt.eq(r->'messages', '[]'::jsonb, 'foreign tenant sees no messages');
  PERFORM qt.eq(r->'mode'->>'type', 'none', 'foreign tenant mode none');
  r := qt.lm(qt.tenant(), w || '{"queue":"lm.orders"}');
  PERFORM qt.eq(r->'messages', '[]'::jsonb, 'default tenant does not see it either');
END $$;

-- Filters: queue, partition, namespace (and ns), task, window, limit/offset, bad input.
DO $$
DECLARE
  t uuid := '00000000-0000-0000-0000-0000000020a2';
  w jsonb := jsonb_build_object('from', now() - interval '10 minutes', 'to', now() + interval '10 minutes');
  p1 uuid; p2 uuid; p3 uuid; r jsonb;
BEGIN
  PERFORM qt.push('billing.invoice', 'eu', 1, 2, t);
  PERFORM qt.push('billing.refund', 'eu', 3, 1, t);
  PERFORM qt.push('plain', 'Default', 4, 1, t);
  p1 := qt.pid('billing.invoice', 'eu', t); p2 := qt.pid('billing.refund', 'eu', t); p3 := qt.pid('plain', 'Default', t);
  -- explicit namespace/task columns win over the dot-split
  UPDATE queen.queues SET namespace = 'ops', task = 'cleanup' WHERE tenant_id = t AND name = 'plain';

  PERFORM qt.eq(jsonb_array_length(qt.lm(t, w)->'messages'), 4, 'all');
  PERFORM qt.eq(jsonb_array_length(qt.lm(t, w || '{"queue":"billing.invoice"}')->'messages'), 2, 'queue');
  PERFORM qt.eq(jsonb_array_length(qt.lm(t, w || '{"queue":"billing"}')->'messages'), 0, 'queue is exact');
  PERFORM qt.eq(jsonb_array_length(qt.lm(t, w || '{"partition":"eu"}')->'messages'), 3, 'partition across queues');
  PERFORM qt.eq(jsonb_array_length(qt.lm(t, w || '{"namespace":"billing"}')->'messages'), 3, 'namespace');
  PERFORM qt.eq(jsonb_array_length(qt.lm(t, w || '{"ns":"billing"}')->'messages'), 3, 'ns alias');
  PERFORM qt.eq(jsonb_array_length(qt.lm(t, w || '{"namespace":"billing","task":"refund"}')->'messages'), 1, 'task');
  r := qt.lm(t, w || '{"namespace":"ops"}');
  PERFORM qt.eq(jsonb_array_length(r->'messages'), 1, 'namespace column');
  PERFORM qt.eq(r->'messages'->0->>'task', 'cleanup', 'task column');
  PERFORM qt.eq(jsonb_array_length(qt.lm(t, w || '{"namespace":"plain"}')->'messages'), 0, 'column wins over split');
  UPDATE queen.queues SET priority = 7 WHERE tenant_id = t AND name = 'plain';
  PERFORM qt.eq(qt.lm(t, w || '{"queue":"plain"}')->'messages'->0->'queuePriority', '7'::jsonb, 'queuePriority');

  -- limit/offset
  r := qt.lm(t, w || '{"limit":"2"}');
  PERFORM qt.eq(qt.lm_keys(r), ARRAY[p3 || '@0', p2 || '@0'], 'limit 2');
  PERFORM qt.ok(r->>'nextCursor' IS NOT NULL, 'full page has a cursor');
  r := qt.lm(t, w || '{"limit":"2","offset":"2"}');
  PERFORM qt.eq(qt.lm_keys(r), ARRAY[p1 || '@1', p1 || '@0'], 'offset 2');
  r := qt.lm(t, w || '{"limit":"2","offset":"3"}');
  PERFORM qt.eq(qt.lm_keys(r), ARRAY[p1 || '@0'], 'offset 3');
  PERFORM qt.eq(r->'nextCursor', 'null'::jsonb, 'short page no cursor');
  PERFORM qt.eq(jsonb_array_length(qt.lm(t, w || '{"limit":"abc"}')->'messages'), 4, 'bad limit -> default');

  -- window: the txns row of 'plain' is 2 h old -> outside the default window, inside an explicit one
  UPDATE queen.log_segments SET created_at = now() - interval '2 hours' WHERE partition_id = p3;
  PERFORM qt.eq(jsonb_array_length(qt.lm(t, '{}')->'messages'), 3, 'default window: now-1h .. minute+1');
  PERFORM qt.eq(jsonb_array_length(qt.lm(t, NULL)->'messages'), 3, 'NULL filter = defaults');
  r := qt.lm(t, jsonb_build_object('from', now() - interval '3 hours', 'to', now() - interval '1 hour'));
  PERFORM qt.eq(qt.lm_keys(r), ARRAY[p3 || '@0'], 'explicit window');
  -- from inclusive, to exclusive
  r := qt.lm(t, jsonb_build_object('from', now() - interval '2 hours', 'to', now()));
  PERFORM qt.eq(qt.lm_keys(r), ARRAY[p3 || '@0'], 'from inclusive');
  r := qt.lm(t, jsonb_build_object('from', now() - interval '3 hours', 'to', now() - interval '2 hours'));
  PERFORM qt.eq(r->'messages', '[]'::jsonb, 'to exclusive');
  -- default "to" is the next minute boundary: a row stamped 30 s in the future of the current minute is still in
  UPDATE queen.log_segments SET created_at = date_trunc('minute', now()) + interval '59 seconds' WHERE partition_id = p3;
  PERFORM qt.eq(jsonb_array_length(qt.lm(t, '{}')->'messages'), 4, 'to = minute(now) + 1 min');
  UPDATE queen.log_segments SET created_at = date_trunc('minute', now()) + interval '1 minute' WHERE partition_id = p3;
  PERFORM qt.eq(jsonb_array_length(qt.lm(t, '{}')->'messages'), 3, 'exclusive default to');

  -- payload gone (retention slimmed the rows: blob emptied, hashes kept, log_start past them): the frames stay
  -- listed, seq falls back to the txns row's base offset, and the payload fetch finds no segment
  UPDATE queen.log_segments SET blob = ''::bytea WHERE partition_id = p1;
  UPDATE queen.log_partitions SET log_start = last_offset + 1 WHERE id = p1;
  r := qt.lm(t, w || '{"queue":"billing.invoice"}');
  PERFORM qt.eq(r->'messages'->0->'segment', '{"seq":0,"frameIdx":1}'::jsonb, 'seq without a segment');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.log_segments_of(ARRAY[p1], ARRAY[0::bigint])), 0,
                'a slim row is no payload');

  -- bad input
  PERFORM qt.eq(qt.lm(t, '{"from":"yesterday-ish"}')->>'error', 'invalid from: yesterday-ish',
                'bad from -> error naming from');
  PERFORM qt.eq(qt.lm(t, '{"to":"nope"}')->>'error', 'invalid to: nope', 'bad to -> error naming to');
  PERFORM qt.eq(qt.lm(t, '{"from":"2026-01-01T00:00:00Z","to":"nope"}')->>'error', 'invalid to: nope',
                'good from, bad to -> error naming to');
  PERFORM qt.ok(qt.lm(t, '{"cursor":"!!!"}') ? 'error', 'bad cursor -> error');
  PERFORM qt.eq(qt.lm(t, '{"cursor":"AQ"}')->>'error', 'invalid cursor', 'short cursor -> error');
  -- a DLQ cursor is not a listing cursor
  PERFORM qt.ok(qt.lm(t, jsonb_build_object('cursor', queen._msg_cursor_encode(2, now(), p1, 0))) ? 'error',
                'cursor kind checked');
END $$;

-- Cursor round trip keeps microseconds.
DO $$
DECLARE c record; u uuid := gen_random_uuid();
BEGIN
  SELECT * INTO c FROM queen._msg_cursor_decode(1, queen._msg_cursor_encode(1, '2026-07-30 10:41:02.010123+00', u, 9007199254740993));
  PERFORM qt.eq(c.ts, '2026-07-30 10:41:02.010123+00'::timestamptz, 'cursor ts');
  PERFORM qt.eq(c.id, u, 'cursor id');
  PERFORM qt.eq(c.off, 9007199254740993::bigint, 'cursor offset (beyond 2^53)');
  SELECT * INTO c FROM queen._msg_cursor_decode(1, queen._msg_cursor_encode(1, '1969-12-31 23:59:59.999999+00', u, -1));
  PERFORM qt.eq(c.ts, '1969-12-31 23:59:59.999999+00'::timestamptz, 'cursor ts before epoch');
  PERFORM qt.eq(c.off, -1::bigint, 'negative offset');
  PERFORM qt.ok(queen._msg_cursor_encode(1, now(), u, 1) ~ '^[A-Za-z0-9_-]{44}$', 'url-safe, 44 chars');
  -- filter timestamps: a value without a zone is UTC whatever the session TimeZone
  PERFORM set_config('timezone', 'America/New_York', true);
  PERFORM qt.eq(queen._msg_ts_in('2026-07-30T10:00:00'), '2026-07-30 10:00:00+00'::timestamptz, 'zone-less = UTC');
  PERFORM qt.eq(queen._msg_ts_in('2026-07-30'), '2026-07-30 00:00:00+00'::timestamptz, 'date only = UTC midnight');
  PERFORM qt.eq(queen._msg_ts_in('2026-07-30T10:00:00.250Z'), '2026-07-30 10:00:00.25+00'::timestamptz, 'Z');
  PERFORM qt.eq(queen._msg_ts_in('2026-07-30T12:00:00+02:00'), '2026-07-30 10:00:00+00'::timestamptz, 'offset');
  PERFORM qt.eq(queen._msg_ts('2026-07-30 10:00:00.25+00'), '2026-07-30T10:00:00.250Z', 'rendered in UTC with ms');
  PERFORM qt.eq(queen._msg_ts_in(' '), NULL::timestamptz, 'blank = absent');
END $$;

-- Cursor paging: every row exactly once while rows are inserted between pages; exact-timestamp ties across partitions.
DO $$
DECLARE
  t uuid := '00000000-0000-0000-0000-0000000020a3';
  w jsonb := jsonb_build_object('from', now() - interval '10 minutes', 'to', now() + interval '10 minutes');
  r jsonb; cur text; seen text[] := '{}'; want text[]; pg int := 0; i int; tie timestamptz := now() - interval '1 minute';
BEGIN
  FOR i IN 1 .. 12 LOOP
    PERFORM qt.push('lm.page', 'p' || (i % 3), 100 * i, 1 + (i % 4), t);
  END LOOP;
  -- three rows (one per partition) share one timestamp exactly
  UPDATE queen.log_segments x SET created_at = tie
  FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
  WHERE x.partition_id = p.id AND q.tenant_id = t AND x.base_offset = 0;
  -- the expected listing (offset paging, one big page), same order
  want := qt.lm_keys(qt.lm(t, w || '{"limit":"1000"}'));
  PERFORM qt.eq(cardinality(want), (SELECT sum(1 + (g % 4))::int FROM generate_series(1, 12) g), 'frame count');

  r := qt.lm(t, w || '{"limit":"4"}');
  LOOP
    pg := pg + 1;
    seen := seen || qt.lm_keys(r);
    cur := r->>'nextCursor';
    EXIT WHEN cur IS NULL;
    PERFORM qt.ok(jsonb_array_length(r->'messages') = 4, 'cursor only on a full page');
    -- new rows land between pages (newer than the cursor: never listed in later pages)
    PERFORM qt.push('lm.page', 'p' || (pg % 3), 10000 + pg * 10, 2, t);
    r := qt.lm(t, w || jsonb_build_object('limit', '4', 'cursor', cur, 'offset', '999'));
    EXIT WHEN pg > 100;
  END LOOP;
  PERFORM qt.eq(seen, want, 'cursor pages = the snapshot listing, each row once, in order');
  PERFORM qt.eq((SELECT count(DISTINCT s)::int FROM unnest(seen) s), cardinality(seen), 'no duplicates');

  -- offset paging after the inserts sees the new rows first
  r := qt.lm(t, w || '{"limit":"1000"}');
  PERFORM qt.eq(jsonb_array_length(r->'messages'), cardinality(want) + 2 * (pg - 1), 'new rows are listed afterwards');
END $$;
