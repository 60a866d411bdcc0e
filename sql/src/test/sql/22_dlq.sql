-- DLQ: delete_message, get_dlq_messages, purge_dlq, dlq_row, dlq_newest_for_address (ENGINE §7.2).

CREATE OR REPLACE FUNCTION qt.dlq_ids(r jsonb) RETURNS uuid[] LANGUAGE sql IMMUTABLE AS $$
  SELECT COALESCE(array_agg((e->>'id')::uuid ORDER BY o), '{}') FROM jsonb_array_elements(r->'messages') WITH ORDINALITY x(e, o) $$;

-- delete_message: every group's row of the address, tenant-scoped.
DO $$
DECLARE
  t uuid := '00000000-0000-0000-0000-0000000022a1';
  o uuid := '00000000-0000-0000-0000-0000000022a2';
  p uuid; p2 uuid; r jsonb;
BEGIN
  PERFORM qt.push('dlq.del', 'a', 1, 3, t);
  PERFORM qt.push('dlq.del', 'b', 1, 3, t);
  p := qt.pid('dlq.del', 'a', t); p2 := qt.pid('dlq.del', 'b', t);
  INSERT INTO queen.log_dlq (partition_id, consumer_group, "offset", transaction_id, payload, error, retry_count) VALUES
    (p, 'g1', 1, 'tx-1', '{"a":1}', 'e', 1), (p, 'g2', 1, 'tx-1', '{"a":1}', 'e', 1), (p, '__QUEUE_MODE__', 1, 'tx-1', '{"a":1}', 'e', 1),
    (p, 'g1', 2, 'tx-2', '{"a":2}', 'e', 1), (p2, 'g1', 1, 'tx-1', '{"a":1}', 'e', 1);

  PERFORM qt.eq(queen.delete_message(o, p, 'tx-1'), '{"deleted":0}'::jsonb, 'foreign tenant deletes nothing');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.log_dlq WHERE partition_id = p), 4, 'rows intact');
  PERFORM qt.eq(queen.delete_message(t, p, 'tx-1'), '{"deleted":3}'::jsonb, 'all groups deleted');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.log_dlq WHERE partition_id = p AND transaction_id = 'tx-1'), 0, 'address gone');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.log_dlq WHERE partition_id = p AND transaction_id = 'tx-2'), 1, 'other address kept');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.log_dlq WHERE partition_id = p2), 1, 'same txn on another partition kept');
  PERFORM qt.eq(queen.delete_message(t, p, 'tx-1'), '{"deleted":0}'::jsonb, 'idempotent');
  PERFORM qt.eq(queen.delete_message(t, gen_random_uuid(), 'tx-2'), '{"deleted":0}'::jsonb, 'unknown partition');
END $$;

-- get_dlq_messages: order, shape, tenant scoping, retryCount fallback, filters, paging, cursor.
DO $$
DECLARE
  t uuid := '00000000-0000-0000-0000-0000000022a3';
  o uuid := '00000000-0000-0000-0000-0000000022a4';
  pa uuid; pb uuid; px uuid; po uuid; r jsonb; e jsonb; ids uuid[]; seen uuid[] := '{}'; cur text; n int := 0;
  base timestamptz := '2026-07-30 10:00:00+00';
  id1 uuid; id2 uuid; id3 uuid; id4 uuid; id5 uuid; idt1 uuid; idt2 uuid;
BEGIN
  PERFORM qt.push('dlq.list', 'a', 1, 1, t);
  PERFORM qt.push('dlq.list', 'b', 1, 1, t);
  PERFORM qt.push('dlq.other', 'x', 1, 1, t);
  PERFORM qt.push('dlq.list', 'a', 1, 1, o);
  pa := qt.pid('dlq.list', 'a', t); pb := qt.pid('dlq.list', 'b', t); px := qt.pid('dlq.other', 'x', t);
  po := qt.pid('dlq.list', 'a', o);
  UPDATE queen.queues SET retry_limit = 9 WHERE tenant_id = t AND name = 'dlq.list';

  INSERT INTO queen.log_dlq (partition_id, consumer_group, "offset", message_id, transaction_id, payload, error, retry_count, failed_at)
  VALUES (pa, 'g1', 0, '0198aaaa-0000-7000-8000-000000000001', 'order-1', '{"amount":41,"nested":{"k":[1,2]}}', 'Test error', 3, base + interval '1 minute')
  RETURNING id INTO id1;
  INSERT INTO queen.log_dlq (partition_id, consumer_group, "offset", transaction_id, payload, error, retry_count, failed_at)
  VALUES (pa, 'g2', 0, 'order-1', '"just a string"', 'e2', NULL, base + interval '2 minutes') RETURNING id INTO id2;
  INSERT INTO queen.log_dlq (partition_id, consumer_group, "offset", transaction_id, payload, error, retry_count, failed_at)
  VALUES (pb, 'g1', 0, 'order-2', NULL, NULL, 0, base + interval '3 minutes') RETURNING id INTO id3;
  INSERT INTO queen.log_dlq (partition_id, consumer_group, "offset", transaction_id, payload, error, retry_count, failed_at)
  VALUES (px, 'g1', 0, 'other-1', '{"encrypted":"AAA","iv":"BBB","authTag":"CCC"}', 'e4', 1, base + interval '4 minutes') RETURNING id INTO id4;
  INSERT INTO queen.log_dlq (partition_id, consumer_group, "offset", transaction_id, payload, error, retry_count, failed_at)
  VALUES (po, 'g1', 0, 'foreign', '{}', 'e', 1, base + interval '5 minutes');
  INSERT INTO queen.log_dlq (partition_id, consumer_group, "offset", transaction_id, payload, error, retry_count, failed_at)
  VALUES (gen_random_uuid(), 'g1', 0, 'orphan', '{}', 'e', 1, base + interval '6 minutes');   -- partition deleted
  -- two rows with the same failed_at: id DESC breaks the tie
  INSERT INTO queen.log_dlq (id, partition_id, consumer_group, "offset", transaction_id, payload, error, retry_count, failed_at)
  VALUES ('00000000-0000-4000-8000-0000000000f1', pb, 'g2', 0, 'tie-1', '1', 'e', 1, base),
         ('00000000-0000-4000-8000-0000000000f2', pb, 'g3', 0, 'tie-2', '2', 'e', 1, base);
  idt1 := '00000000-0000-4000-8000-0000000000f1'; idt2 := '00000000-0000-4000-8000-0000000000f2';

  r := queen.get_dlq_messages(t, '{}');
  PERFORM qt.eq(qt.dlq_ids(r), ARRAY[id4, id3, id2, id1, idt2, idt1], 'failed_at DESC, id DESC; tenant only; orphans hidden');
  PERFORM qt.eq(r->'pagination', '{"limit":100,"offset":0}'::jsonb, 'pagination defaults');
  PERFORM qt.eq(r->'total', '6'::jsonb, 'total = page length');
  PERFORM qt.eq(r->'nextCursor', 'null'::jsonb, 'short page');
  SELECT x INTO e FROM jsonb_array_elements(r->'messages') x WHERE x->>'id' = id1::text;
  PERFORM qt.eq(e, jsonb_build_object('id', id1, 'transactionId', 'order-1', 'partitionId', pa, 'queue', 'dlq.list',
        'partition', 'a', 'consumerGroup', 'g1', 'errorMessage', 'Test error', 'retryCount', 3,
        'payloadText', '{"amount":41,"nested":{"k":[1,2]}}', 'producerSub', NULL,
        'createdAt', '2026-07-30T10:01:00.000Z', 'failedAt', '2026-07-30T10:01:00.000Z'), 'item shape');
  SELECT x INTO e FROM jsonb_array_elements(r->'messages') x WHERE x->>'id' = id2::text;
  PERFORM qt.eq(e->'retryCount', '9'::jsonb, 'NULL retry_count -> queue retry_limit');
  PERFORM qt.eq(e->>'payloadText', '"just a string"', 'scalar payload verbatim');
  SELECT x INTO e FROM jsonb_array_elements(r->'messages') x WHERE x->>'id' = id3::text;
  PERFORM qt.eq(e->'retryCount', '0'::jsonb, 'retry_count 0 kept');
  PERFORM qt.eq(e->>'payloadText', 'null', 'NULL payload -> null');
  PERFORM qt.eq(e->'errorMessage', 'null'::jsonb, 'NULL error');
  SELECT x INTO e FROM jsonb_array_elements(r->'messages') x WHERE x->>'id' = id4::text;
  PERFORM qt.eq(e->>'payloadText', '{"encrypted":"AAA","iv":"BBB","authTag":"CCC"}', 'envelope verbatim');

  -- other tenant sees only its own row
  r := queen.get_dlq_messages(o, '{}');
  PERFORM qt.eq(jsonb_array_length(r->'messages'), 1, 'foreign tenant: own row only');
  PERFORM qt.eq(r->'messages'->0->>'transactionId', 'foreign', 'foreign row');
  PERFORM qt.eq(jsonb_array_length(queen.get_dlq_messages(qt.tenant(), '{"queue":"dlq.list"}')->'messages'), 0, 'default tenant');

  -- filters
  PERFORM qt.eq(qt.dlq_ids(queen.get_dlq_messages(t, '{"queue":"dlq.list"}')), ARRAY[id3, id2, id1, idt2, idt1], 'queue');
  PERFORM qt.eq(qt.dlq_ids(queen.get_dlq_messages(t, '{"queue":"dlq"}')), '{}'::uuid[], 'queue exact');
  PERFORM qt.eq(qt.dlq_ids(queen.get_dlq_messages(t, '{"consumerGroup":"g1"}')), ARRAY[id4, id3, id1], 'consumerGroup');
  PERFORM qt.eq(qt.dlq_ids(queen.get_dlq_messages(t, '{"queue":"dlq.list","partition":"a"}')), ARRAY[id2, id1], 'partition');
  PERFORM qt.eq(qt.dlq_ids(queen.get_dlq_messages(t, '{"from":"2026-07-30T10:02:00Z","to":"2026-07-30T10:04:00Z"}')),
                ARRAY[id3, id2], 'from inclusive, to exclusive');
  PERFORM qt.ok(queen.get_dlq_messages(t, '{"from":"garbage"}') ? 'error', 'bad from');

  -- limit / offset
  r := queen.get_dlq_messages(t, '{"limit":"2","offset":"1"}');
  PERFORM qt.eq(qt.dlq_ids(r), ARRAY[id3, id2], 'limit/offset');
  PERFORM qt.eq(r->'pagination', '{"limit":2,"offset":1}'::jsonb, 'pagination echo');
  PERFORM qt.eq(r->'total', '2'::jsonb, 'total');
  PERFORM qt.ok(r->>'nextCursor' IS NOT NULL, 'full page -> cursor');

  -- cursor paging with inserts between pages (newer rows never show up in later pages)
  r := queen.get_dlq_messages(t, '{"limit":"2"}');
  LOOP
    n := n + 1;
    seen := seen || qt.dlq_ids(r);
    cur := r->>'nextCursor';
    EXIT WHEN cur IS NULL OR n > 20;
    INSERT INTO queen.log_dlq (partition_id, consumer_group, "offset", transaction_id, payload, error, retry_count, failed_at)
    VALUES (pa, 'g9', 0, 'late-' || n, '{}', 'e', 1, base + interval '1 hour');
    r := queen.get_dlq_messages(t, jsonb_build_object('limit', '2', 'offset', '5', 'cursor', cur));
    PERFORM qt.eq(r->'pagination'->'offset', '0'::jsonb, 'cursor ignores offset');
  END LOOP;
  PERFORM qt.eq(seen, ARRAY[id4, id3, id2, id1, idt2, idt1], 'cursor pages: every row once (incl. the failed_at tie)');
  PERFORM qt.eq(n, 4, 'three full pages + the empty one');
  PERFORM qt.ok(queen.get_dlq_messages(t, '{"cursor":"zzz"}') ? 'error', 'bad cursor');
  PERFORM qt.ok(queen.get_dlq_messages(t, jsonb_build_object('cursor', queen._msg_cursor_encode(1, now(), pa, 1))) ? 'error',
                'listing cursor rejected');
END $$;

-- purge_dlq: exact queue, optional group, tenant-scoped.
DO $$
DECLARE
  t uuid := '00000000-0000-0000-0000-0000000022a5';
  o uuid := '00000000-0000-0000-0000-0000000022a6';
  p1 uuid; p2 uuid; p3 uuid; po uuid;
BEGIN
  PERFORM qt.push('purge.q', 'a', 1, 1, t);
  PERFORM qt.push('purge.q', 'b', 1, 1, t);
  PERFORM qt.push('purge.q2', 'a', 1, 1, t);
  PERFORM qt.push('purge.q', 'a', 1, 1, o);
  p1 := qt.pid('purge.q', 'a', t); p2 := qt.pid('purge.q', 'b', t); p3 := qt.pid('purge.q2', 'a', t); po := qt.pid('purge.q', 'a', o);
  INSERT INTO queen.log_dlq (partition_id, consumer_group, "offset", transaction_id, payload)
  SELECT pid, g, 0, 'tx', '{}' FROM unnest(ARRAY[p1, p2, p3, po]) pid, unnest(ARRAY['g1', 'g2']) g;

  PERFORM qt.eq(queen.purge_dlq(t, 'purge', NULL), '{"deleted":0}'::jsonb, 'exact queue name only');
  PERFORM qt.eq(queen.purge_dlq(t, '', NULL), '{"deleted":0}'::jsonb, 'empty queue deletes nothing');
  PERFORM qt.eq(queen.purge_dlq(t, NULL, NULL), '{"deleted":0}'::jsonb, 'NULL queue deletes nothing');
  PERFORM qt.eq(queen.purge_dlq(t, 'purge.q', 'g1'), '{"deleted":2}'::jsonb, 'one group across partitions');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.log_dlq WHERE partition_id IN (p1, p2) AND consumer_group = 'g2'), 2, 'other group kept');
  PERFORM qt.eq(queen.purge_dlq(t, 'purge.q', ''), '{"deleted":2}'::jsonb, 'empty group = all groups');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.log_dlq WHERE partition_id IN (p1, p2)), 0, 'queue purged');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.log_dlq WHERE partition_id = p3), 2, 'other queue kept');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.log_dlq WHERE partition_id = po), 2, 'other tenant kept');
  PERFORM qt.eq(queen.purge_dlq(t, 'purge.q', NULL), '{"deleted":0}'::jsonb, 'idempotent');
  PERFORM qt.eq(queen.purge_dlq(o, 'purge.q', NULL), '{"deleted":2}'::jsonb, 'owner tenant purges its own');
END $$;

-- dlq_row / dlq_newest_for_address.
DO $$
DECLARE
  t uuid := '00000000-0000-0000-0000-0000000022a7';
  o uuid := '00000000-0000-0000-0000-0000000022a8';
  p uuid; r record; id1 uuid; id2 uuid;
BEGIN
  PERFORM qt.push('row.q', 'eu', 1, 3, t);
  p := qt.pid('row.q', 'eu', t);
  INSERT INTO queen.log_dlq (partition_id, consumer_group, "offset", message_id, transaction_id, payload, error, retry_count, failed_at)
  VALUES (p, 'g1', 2, '0198aaaa-0000-7000-8000-0000000000aa', 'order-9', '{"b": 2, "a": [1, "x"]}', 'e', 3, now() - interval '1 minute')
  RETURNING id INTO id1;
  INSERT INTO queen.log_dlq (partition_id, consumer_group, "offset", transaction_id, payload, error, retry_count, failed_at)
  VALUES (p, 'g2', 2, 'order-9', '"s"', 'e', NULL, now()) RETURNING id INTO id2;

  SELECT * INTO r FROM queen.dlq_row(t, id1::text);
  PERFORM qt.eq(r.id, id1, 'row id');
  PERFORM qt.eq(r.partition_id, p, 'partition_id');
  PERFORM qt.eq(r.queue || '/' || r.partition, 'row.q/eu', 'names');
  PERFORM qt.eq(r.consumer_group, 'g1', 'group');
  PERFORM qt.eq(r.transaction_id, 'order-9', 'txn');
  PERFORM qt.eq(r.message_id, '0198aaaa-0000-7000-8000-0000000000aa'::uuid, 'message_id');
  PERFORM qt.eq(r.payload, '{"b": 2, "a": [1, "x"]}', 'payload: the stored text');
  PERFORM qt.eq(r."offset", 2::bigint, 'offset');
  PERFORM qt.eq(r.retry_count, 3, 'retry_count');
  PERFORM qt.ok(r.failed_at IS NOT NULL, 'failed_at');
  -- spellings PostgreSQL accepts
  PERFORM qt.eq((SELECT x.id FROM queen.dlq_row(t, upper(id1::text)) x), id1, 'upper case');
  PERFORM qt.eq((SELECT x.id FROM queen.dlq_row(t, replace(id1::text, '-', '')) x), id1, 'no hyphens');
  PERFORM qt.eq((SELECT x.id FROM queen.dlq_row(t, '{' || id1 || '}') x), id1, 'braces');
  -- never raises, just no row
  PERFORM qt.eq((SELECT count(*)::int FROM queen.dlq_row(t, 'not-a-uuid')), 0, 'malformed id');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.dlq_row(t, '')), 0, 'empty id');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.dlq_row(t, NULL)), 0, 'NULL id');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.dlq_row(t, id1 || 'ff')), 0, 'too long');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.dlq_row(t, gen_random_uuid()::text)), 0, 'unknown id');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.dlq_row(o, id1::text)), 0, 'foreign tenant');

  SELECT * INTO r FROM queen.dlq_newest_for_address(t, p, 'order-9');
  PERFORM qt.eq(r.id, id2, 'newest row of the address');
  PERFORM qt.eq(r.payload, '"s"', 'payload text');
  PERFORM qt.eq(r.retry_count, NULL::int, 'NULL retry_count as stored');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.dlq_newest_for_address(t, p, 'order-9')), 1, 'at most one');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.dlq_newest_for_address(o, p, 'order-9')), 0, 'foreign tenant');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.dlq_newest_for_address(t, p, 'order-x')), 0, 'unknown txn');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.dlq_newest_for_address(t, gen_random_uuid(), 'order-9')), 0, 'unknown pid');
END $$;
