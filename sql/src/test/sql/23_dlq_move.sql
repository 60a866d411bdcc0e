-- queen.log_dlq_move: the DLQ move primitive (ENGINE §7.3, "What dlq_move_semantics asserts").

CREATE OR REPLACE FUNCTION qt.dlq_row(p uuid, grp text, off bigint, txn text, payload jsonb DEFAULT '{"v":1}')
RETURNS uuid LANGUAGE sql AS $$
  INSERT INTO queen.log_dlq (partition_id, consumer_group, "offset", message_id, transaction_id, payload, error, retry_count)
  VALUES (p, grp, off, gen_random_uuid(), txn, payload, 'boom', 2) RETURNING id $$;

CREATE OR REPLACE FUNCTION qt.move(t uuid, id uuid, q text, p text, n bigint) RETURNS jsonb LANGUAGE sql AS $$
  SELECT queen.log_dlq_move(t, id, q, p, qt.h(n), convert_to('moved-' || n, 'UTF8')) $$;

-- moved / gone / two groups / in place.
DO $$
DECLARE
  t uuid := '00000000-0000-0000-0000-0000000023a1';
  p uuid; r jsonb; id1 uuid; id2 uuid; mid uuid;
BEGIN
  PERFORM qt.push('mv.src', 'eu', 1, 3, t);                                  -- 0..2
  p := qt.pid('mv.src', 'eu', t);
  id1 := qt.dlq_row(p, 'g1', 1, 'order-2');
  id2 := qt.dlq_row(p, 'g2', 1, 'order-2');
  mid := (SELECT message_id FROM queen.log_dlq WHERE id = id1);

  r := qt.move(t, id1, 'mv.src', 'eu', 1001);
  PERFORM qt.eq(r->>'result', 'moved', 'moved');
  PERFORM qt.eq((r->>'offset')::bigint, 3::bigint, 'lands at the tail');
  PERFORM qt.eq(r->>'queue' || '/' || (r->>'partition'), 'mv.src/eu', 'destination names');
  PERFORM qt.eq(r->>'destPartitionId', p::text, 'destPartitionId');
  PERFORM qt.eq(r->>'sourcePartitionId', p::text, 'sourcePartitionId');
  PERFORM qt.eq(r->>'consumerGroup', 'g1', 'the moved row''s group');
  PERFORM qt.eq(r->>'transactionId', 'order-2', 'source transactionId');
  PERFORM qt.eq(r->>'messageId', mid::text, 'source messageId');
  PERFORM qt.eq(r->>'dlqId', id1::text, 'dlqId');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.log_dlq WHERE id = id1), 0, 'row deleted');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.log_dlq WHERE id = id2), 1, 'other group''s row survives');
  PERFORM qt.eq((SELECT last_offset FROM queen.log_partitions WHERE id = p), 3::bigint, 'one frame allocated');
  PERFORM qt.eq((SELECT hashes FROM queen.log_segments WHERE partition_id = p AND base_offset = 3), qt.h(1001), 'txns hash');
  PERFORM qt.eq((SELECT convert_from(blob, 'UTF8') FROM queen.log_segments WHERE partition_id = p AND base_offset = 3), 'moved-1001',
                'blob stored');

  -- same id again -> gone, nothing allocated
  r := qt.move(t, id1, 'mv.src', 'eu', 1001);
  PERFORM qt.eq(r, jsonb_build_object('result', 'gone', 'dlqId', id1), 'second move -> gone');
  r := qt.move(t, id1, 'mv.src', 'eu', 1002);
  PERFORM qt.eq(r->>'result', 'gone', 'gone even with another hash');
  PERFORM qt.eq((SELECT last_offset FROM queen.log_partitions WHERE id = p), 3::bigint, 'still one frame');
  PERFORM qt.eq(qt.move(t, gen_random_uuid(), 'mv.src', 'eu', 1003)->>'result', 'gone', 'unknown id -> gone');

  -- the other group's row moves on its own
  r := qt.move(t, id2, 'mv.src', 'eu', 1004);
  PERFORM qt.eq(r->>'result' || '@' || (r->>'offset') || '/' || (r->>'consumerGroup'), 'moved@4/g2', 'second group moved');
END $$;

-- duplicate keeps the row; a new destination is provisioned with its first frame at offset 0.
DO $$
DECLARE
  t uuid := '00000000-0000-0000-0000-0000000023a2';
  p uuid; d uuid; r jsonb; id1 uuid; id2 uuid; q queen.queues;
BEGIN
  PERFORM qt.push('mv.dup', 'a', 1, 2, t);
  p := qt.pid('mv.dup', 'a', t);
  id1 := qt.dlq_row(p, 'g1', 0, 'tx-0');
  id2 := qt.dlq_row(p, 'g1', 1, 'tx-1');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.queues WHERE tenant_id = t AND name = 'mv.dest.new'), 0, 'destination absent');

  r := qt.move(t, id1, 'mv.dest.new', 'part-x', 2002);
  PERFORM qt.eq(r->>'result', 'moved', 'first move');
  PERFORM qt.eq((r->>'offset')::bigint, 0::bigint, 'first frame of a new destination at offset 0');
  d := qt.pid('mv.dest.new', 'part-x', t);
  PERFORM qt.ok(d IS NOT NULL, 'destination queue + partition provisioned under the tenant');
  PERFORM qt.eq(r->>'destPartitionId', d::text, 'destPartitionId');
  PERFORM qt.eq(r->>'sourcePartitionId', p::text, 'sourcePartitionId');
  SELECT * INTO q FROM queen.queues WHERE tenant_id = t AND name = 'mv.dest.new';
  PERFORM qt.eq(q.namespace || '|' || q.task, 'mv|dest', 'provisioned like a push (dotted name)');
  PERFORM qt.eq(q.dedup_window_seconds, 3600, 'push defaults');

  -- the same frame hash again into that destination -> duplicate, nothing allocated, row kept
  r := qt.move(t, id2, 'mv.dest.new', 'part-x', 2002);
  PERFORM qt.eq(r->>'result', 'duplicate', 'duplicate');
  PERFORM qt.eq((r->>'offset')::bigint, 0::bigint, 'existing copy''s offset');
  PERFORM qt.eq(r->>'consumerGroup' || '|' || (r->>'transactionId'), 'g1|tx-1', 'source row fields');
  PERFORM qt.eq(r->>'destPartitionId', d::text, 'duplicate destPartitionId');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.log_dlq WHERE id = id2), 1, 'row kept on duplicate');
  PERFORM qt.eq((SELECT last_offset FROM queen.log_partitions WHERE id = d), 0::bigint, 'nothing allocated');
  -- a fresh hash (what the broker would send: dlq:<id2>) moves it
  r := qt.move(t, id2, 'mv.dest.new', 'part-x', 2003);
  PERFORM qt.eq(r->>'result' || '@' || (r->>'offset'), 'moved@1', 'moved after the duplicate');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.log_dlq WHERE id = id2), 0, 'row deleted now');

  -- dedup off at the destination: the same hash is not a duplicate
  id1 := qt.dlq_row(p, 'g2', 0, 'tx-0');
  UPDATE queen.queues SET dedup_window_seconds = 0 WHERE tenant_id = t AND name = 'mv.dest.new';
  r := qt.move(t, id1, 'mv.dest.new', 'part-x', 2002);
  PERFORM qt.eq(r->>'result' || '@' || (r->>'offset'), 'moved@2', 'destination dedup window applies (off)');
END $$;

-- foreign tenant -> gone, destination NOT provisioned; the owner can still move it. Queue override keeps the
-- partition name; the moved frame is poppable there.
DO $$
DECLARE
  t uuid := '00000000-0000-0000-0000-0000000023a3';
  o uuid := '00000000-0000-0000-0000-0000000023a4';
  p uuid; r jsonb; id1 uuid; pop jsonb;
BEGIN
  PERFORM qt.push('mv.own', 'eu-2', 1, 1, t);
  p := qt.pid('mv.own', 'eu-2', t);
  id1 := qt.dlq_row(p, '__QUEUE_MODE__', 0, 'tx');

  r := qt.move(o, id1, 'mv.own.retry', 'eu-2', 3001);
  PERFORM qt.eq(r->>'result', 'gone', 'foreign tenant -> gone');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.queues WHERE name = 'mv.own.retry'), 0, 'destination not provisioned (any tenant)');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.log_dlq WHERE id = id1), 1, 'row survives');
  r := qt.move(o, id1, 'mv.own', 'eu-2', 3001);
  PERFORM qt.eq(r->>'result', 'gone', 'foreign tenant, same-named queue in its own tenant -> gone');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.queues WHERE tenant_id = o), 0, 'nothing provisioned for the foreign tenant');

  r := qt.move(t, id1, 'mv.own.retry', 'eu-2', 3001);
  PERFORM qt.eq(r->>'result' || '@' || (r->>'offset'), 'moved@0', 'owner moves it');
  PERFORM qt.eq(r->>'queue' || '/' || (r->>'partition'), 'mv.own.retry/eu-2', 'override destination');
  PERFORM qt.eq((SELECT q.tenant_id FROM queen.queues q WHERE q.name = 'mv.own.retry'), t, 'provisioned under the owner');
  pop := qt.pop('mv.own.retry', 'eu-2', '__QUEUE_MODE__', 10, 1, 'w', t => t);
  PERFORM qt.eq(qt.offs(pop), ARRAY[0]::bigint[], 'the moved frame pops at the destination');
  PERFORM qt.eq(qt.move(t, id1, 'mv.own.retry', 'eu-2', 3001)->>'result', 'gone', 'second replay of the id -> gone');
END $$;

-- guards raise and leave the row (and provision nothing).
DO $$
DECLARE
  t uuid := '00000000-0000-0000-0000-0000000023a5';
  p uuid; id1 uuid; msg text; ok boolean;
  bad record;
BEGIN
  PERFORM qt.push('mv.guard', 'a', 1, 1, t);
  p := qt.pid('mv.guard', 'a', t);
  id1 := qt.dlq_row(p, 'g1', 0, 'tx');

  FOR bad IN
    SELECT * FROM (VALUES
      ('mv.guard.d1', 'a', substring(qt.h(1) FROM 1 FOR 15), '\x00'::bytea, 'QMOVE bad segment'),
      ('mv.guard.d2', 'a', qt.h(1) || qt.h(2), '\x00'::bytea, 'QMOVE bad segment'),
      ('mv.guard.d3', 'a', NULL, '\x00'::bytea, 'QMOVE bad segment'),
      ('mv.guard.d4', 'a', qt.h(1), NULL, 'QMOVE bad segment'),
      ('', 'a', qt.h(1), '\x00'::bytea, 'QMOVE unnamed destination'),
      ('   ', 'a', qt.h(1), '\x00'::bytea, 'QMOVE unnamed destination'),
      (NULL, 'a', qt.h(1), '\x00'::bytea, 'QMOVE unnamed destination'),
      ('mv.guard.d5', '', qt.h(1), '\x00'::bytea, 'QMOVE unnamed destination'),
      ('mv.guard.d6', E' \t', qt.h(1), '\x00'::bytea, 'QMOVE unnamed destination'),
      ('mv.guard.d7', NULL, qt.h(1), '\x00'::bytea, 'QMOVE unnamed destination')
    ) v(q, pn, h, b, want)
  LOOP
    ok := false;
    BEGIN
      PERFORM queen.log_dlq_move(t, id1, bad.q, bad.pn, bad.h, bad.b);
    EXCEPTION WHEN OTHERS THEN
      GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT;
      ok := msg LIKE bad.want || '%';
    END;
    PERFORM qt.ok(ok, format('guard %L/%L raises %s (got %s)', bad.q, bad.pn, bad.want, msg));
  END LOOP;
  PERFORM qt.eq((SELECT count(*)::int FROM queen.log_dlq WHERE id = id1), 1, 'row left in place');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.queues WHERE tenant_id = t), 1, 'no destination provisioned');
  PERFORM qt.eq((SELECT last_offset FROM queen.log_partitions WHERE id = p), 0::bigint, 'nothing allocated');
  -- a guard raises even for a row that does not exist (the guards run first)
  ok := false;
  BEGIN
    PERFORM queen.log_dlq_move(t, gen_random_uuid(), 'x', 'y', '\x01', '\x00');
  EXCEPTION WHEN OTHERS THEN ok := true;
  END;
  PERFORM qt.ok(ok, 'guards before the claim');
  PERFORM qt.eq(qt.move(t, id1, 'mv.guard', 'a', 5)->>'result', 'moved', 'the row still moves afterwards');
END $$;

-- Two movers on one row (needs dblink; skipped when it is not available): the second blocks on the row lock, then
-- gets gone; exactly one frame lands.
DO $$
DECLARE
  t uuid := '00000000-0000-0000-0000-0000000023a6';
  p uuid;
BEGIN
  PERFORM qt.push('mv.race', 'a', 1, 1, t);
  p := qt.pid('mv.race', 'a', t);
  PERFORM qt.dlq_row(p, 'g1', 0, 'tx');
END $$;

DO $$
DECLARE
  t uuid := '00000000-0000-0000-0000-0000000023a6';
  p uuid := qt.pid('mv.race', 'a', '00000000-0000-0000-0000-0000000023a6');
  id1 uuid := (SELECT id FROM queen.log_dlq WHERE partition_id = p);
  cs text; ra text; rb text; busy int; i int;
  sql text := format('SELECT queen.log_dlq_move(%L, %L, %L, %L, %L::bytea, %L::bytea)::text',
                     t, id1, 'mv.race', 'a', qt.h(77), '\x01');
BEGIN
  BEGIN
    CREATE EXTENSION IF NOT EXISTS dblink;
    cs := format('dbname=%s port=%s host=%s user=%s', current_database(), current_setting('port'),
                 split_part(current_setting('unix_socket_directories'), ',', 1), current_user);
    PERFORM dblink_connect('mva', cs);
    PERFORM dblink_connect('mvb', cs);
  EXCEPTION WHEN OTHERS THEN
    RAISE NOTICE 'two-mover race skipped: %', SQLERRM;
    RETURN;
  END;
  PERFORM dblink_exec('mva', 'BEGIN');
  SELECT x INTO ra FROM dblink('mva', sql) AS d(x text);
  PERFORM qt.eq(ra::jsonb->>'result', 'moved', 'first mover (transaction still open)');
  PERFORM dblink_send_query('mvb', sql);
  PERFORM pg_sleep(0.3);
  busy := dblink_is_busy('mvb');
  PERFORM qt.eq(busy, 1, 'second mover blocks on the row lock');
  PERFORM dblink_exec('mva', 'COMMIT');
  SELECT x INTO rb FROM dblink_get_result('mvb') AS d(x text);
  PERFORM dblink_get_result('mvb');   -- drain
  PERFORM qt.eq(rb::jsonb->>'result', 'gone', 'loser is told the row is gone');
  PERFORM dblink_disconnect('mva');
  PERFORM dblink_disconnect('mvb');
  PERFORM qt.eq((SELECT last_offset FROM queen.log_partitions WHERE id = p), 1::bigint, 'exactly one frame landed');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.log_dlq WHERE id = id1), 0, 'row gone');
END $$;
