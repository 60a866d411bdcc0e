-- GET /api/v1/messages/:pid/:txn: queen.message_detail (ENGINE §8.2) and queen.log_segments_newest.
DO $$
DECLARE
  t uuid := '00000000-0000-0000-0000-0000000021a1';
  o uuid := '00000000-0000-0000-0000-0000000021a2';
  p uuid; r jsonb; lease timestamptz := now() + interval '3 minutes';
BEGIN
  -- dedup off so the same hash can land twice
  PERFORM queen.configure_queue(t, 'det.q', '{"dedupWindowSeconds":0,"retryLimit":5,"priority":3}', 'merge');
  PERFORM qt.push('det.q', 'p', 1, 3, t);                                     -- 0..2: h1 h2 h3
  PERFORM queen.log_push(t, 'det.q', 'p', 3, qt.hs(7, 2, 7), '\x01');     -- 3..5: h7 h2 h7
  PERFORM qt.push('det.q', 'p', 9, 2, t);                                     -- 6..7: h9 h10
  p := qt.pid('det.q', 'p', t);

  -- newest occurrence: h2 at 1 and 4 -> 4; h7 twice inside one segment -> 5 (idx DESC)
  r := queen.message_detail(t, p, qt.h(2));
  PERFORM qt.eq(r->>'found', 'true', 'found');
  PERFORM qt.eq((r->>'offset')::bigint, 4::bigint, 'newest occurrence across segments');
  PERFORM qt.eq(r->'segment'->>'base', '3', 'covering segment base');
  PERFORM qt.eq(r->'segment'->>'end', '5', 'covering segment end');
  PERFORM qt.ok(r->'segment'->>'createdAt' ~ '^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$', 'segment createdAt ms Z');
  PERFORM qt.eq((queen.message_detail(t, p, qt.h(7))->>'offset')::bigint, 5::bigint, 'newest occurrence inside a segment');
  PERFORM qt.eq((queen.message_detail(t, p, qt.h(1))->>'offset')::bigint, 0::bigint, 'single occurrence');
  PERFORM qt.eq(r->>'partitionId', p::text, 'partitionId');
  PERFORM qt.eq(r->>'queue' || '|' || (r->>'partition') || '|' || (r->>'queuePath'), 'det.q|p|det.q/p', 'names');
  PERFORM qt.eq(r->>'namespace' || '|' || (r->>'task'), 'det|q', 'dot-split fallback');
  PERFORM qt.eq(r->>'status', 'pending', 'pending');
  PERFORM qt.eq(r->'errorMessage', 'null'::jsonb, 'no error');
  PERFORM qt.eq(r->'retryCount', '0'::jsonb, 'retryCount 0 for a live message');
  PERFORM qt.eq(r->'leaseExpiresAt', 'null'::jsonb, 'no lease');
  PERFORM qt.eq(r->'queueConfig', jsonb_build_object('leaseTime', (SELECT lease_time FROM queen.queues WHERE tenant_id = t AND name = 'det.q'),
                'retryLimit', 5, 'retryDelay', 1000, 'ttl', 3600, 'priority', 3, 'dedupWindowSeconds', 0,
                'encryptionEnabled', false), 'queueConfig');
  PERFORM qt.eq(r->'mode', '{"hasQueueMode":false,"busGroupsCount":0,"type":"queue"}'::jsonb, 'mode without cursors');
  PERFORM qt.eq(r->'consumerGroups', '[]'::jsonb, 'no groups');

  -- not found / not owned
  PERFORM qt.eq(queen.message_detail(t, p, qt.h(99)), '{"found":false,"partitionExists":true}'::jsonb, 'unknown hash');
  PERFORM qt.eq(queen.message_detail(o, p, qt.h(2)), '{"found":false,"partitionExists":false}'::jsonb, 'foreign tenant');
  PERFORM qt.eq(queen.message_detail(qt.tenant(), p, qt.h(2)), '{"found":false,"partitionExists":false}'::jsonb, 'default tenant');
  PERFORM qt.eq(queen.message_detail(t, gen_random_uuid(), qt.h(2)), '{"found":false,"partitionExists":false}'::jsonb, 'no partition');
  PERFORM qt.eq(queen.message_detail(t, p, NULL), '{"found":false,"partitionExists":true}'::jsonb, 'no hash');

  -- explicit offset (the broker's fallback scan)
  r := queen.message_detail(t, p, qt.h(99), 6);
  PERFORM qt.eq((r->>'offset')::bigint, 6::bigint, 'explicit offset wins');
  PERFORM qt.eq(r->'segment'->>'base', '6', 'explicit offset segment');
  PERFORM qt.eq(queen.message_detail(t, p, qt.h(2), 8), '{"found":false,"partitionExists":true}'::jsonb, 'offset past the tail');
  PERFORM qt.eq(queen.message_detail(t, p, qt.h(2), -1), '{"found":false,"partitionExists":true}'::jsonb, 'negative offset');

  -- cursors: queue mode committed 4 with a live lease; bus groups g1 (committed 5, leased) and g0 (committed 3)
  INSERT INTO queen.log_consumers (partition_id, consumer_group, committed, batch_end, worker_id, lease_expires_at)
  VALUES (p, '__QUEUE_MODE__', 4, 6, 'wq', lease), (p, 'g1', 5, 7, 'wg', lease + interval '1 minute'), (p, 'g0', 3, NULL, NULL, NULL);
  r := queen.message_detail(t, p, qt.h(2));                       -- offset 4
  PERFORM qt.eq(r->>'status', 'processing', 'g0 has not passed 4 (bus groups first) -> live lease -> processing');
  PERFORM qt.eq(r->>'leaseExpiresAt', queen._msg_ts(lease), 'queue-mode lease');
  PERFORM qt.eq(r->'mode', '{"hasQueueMode":true,"busGroupsCount":2,"type":"bus"}'::jsonb, 'mode bus');
  PERFORM qt.eq(r->'consumerGroups', jsonb_build_array(
      jsonb_build_object('name', 'g0', 'group', 'g0', 'consumed', false, 'leaseExpiresAt', NULL),
      jsonb_build_object('name', 'g1', 'group', 'g1', 'consumed', true, 'leaseExpiresAt', queen._msg_ts(lease + interval '1 minute'))),
    'consumerGroups (named groups)');
  r := queen.message_detail(t, p, qt.h(3));                       -- offset 2
  PERFORM qt.eq(r->>'status', 'completed', 'all bus groups passed 2');
  DELETE FROM queen.log_consumers WHERE partition_id = p AND consumer_group <> '__QUEUE_MODE__';
  r := queen.message_detail(t, p, qt.h(2));                       -- offset 4, queue mode only
  PERFORM qt.eq(r->>'status', 'completed', 'queue-mode cursor passed 4');
  PERFORM qt.eq(r->'mode', '{"hasQueueMode":true,"busGroupsCount":0,"type":"queue"}'::jsonb, 'mode queue');
  PERFORM qt.eq((queen.message_detail(t, p, qt.h(9)))->>'status', 'processing', 'after the cursor, lease live');
  UPDATE queen.log_consumers SET lease_expires_at = now() - interval '1 second' WHERE partition_id = p;
  r := queen.message_detail(t, p, qt.h(9));
  PERFORM qt.eq(r->>'status', 'pending', 'expired lease -> pending');
  PERFORM qt.eq(r->'leaseExpiresAt', 'null'::jsonb, 'expired lease not reported');

  -- dead letter at offset 6: two groups' rows, the newest one reports
  INSERT INTO queen.log_dlq (partition_id, consumer_group, "offset", transaction_id, payload, error, retry_count, failed_at)
  VALUES (p, 'gA', 6, 'tx9', '1', 'old error', 2, now() - interval '1 minute'),
         (p, 'gB', 6, 'tx9', '1', 'new error', 4, now());
  r := queen.message_detail(t, p, qt.h(9));
  PERFORM qt.eq(r->>'status', 'dead_letter', 'dead_letter');
  PERFORM qt.eq(r->>'errorMessage', 'new error', 'newest DLQ error');
  PERFORM qt.eq(r->'retryCount', '4'::jsonb, 'DLQ retry_count');
  UPDATE queen.log_dlq SET retry_count = NULL WHERE partition_id = p AND consumer_group = 'gB';
  PERFORM qt.eq(queen.message_detail(t, p, qt.h(9))->'retryCount', '0'::jsonb, 'NULL retry_count -> 0');

  -- covering segment's payload taken by retention (a slim row): position resolves, segment null
  UPDATE queen.log_segments SET blob = ''::bytea WHERE partition_id = p AND base_offset = 0;
  r := queen.message_detail(t, p, qt.h(1));
  PERFORM qt.eq(r->>'found', 'true', 'still resolvable');
  PERFORM qt.eq(r->'segment', 'null'::jsonb, 'segment null');

  -- explicit namespace/task columns
  UPDATE queen.queues SET namespace = 'billing', task = 'invoice' WHERE tenant_id = t AND name = 'det.q';
  r := queen.message_detail(t, p, qt.h(2));
  PERFORM qt.eq(r->>'namespace' || '|' || (r->>'task'), 'billing|invoice', 'namespace/task columns');

  -- txns purged: not found (the broker then scans segments and retries with an offset)
  UPDATE queen.log_segments SET hashes = NULL WHERE partition_id = p;
  UPDATE queen.log_partitions SET txns_start = last_offset + 1 WHERE id = p;
  PERFORM qt.eq(queen.message_detail(t, p, qt.h(2)), '{"found":false,"partitionExists":true}'::jsonb, 'purged txns');
  PERFORM qt.eq((queen.message_detail(t, p, qt.h(2), 4)->>'offset')::bigint, 4::bigint, 'offset from the scan');
END $$;

-- log_segments_newest paging.
DO $$
DECLARE
  t uuid := '00000000-0000-0000-0000-0000000021a3';
  p uuid; i int; b bigint[];
BEGIN
  FOR i IN 0 .. 9 LOOP
    PERFORM qt.push('det.scan', 'p', 10 * i, 2, t);   -- bases 0, 2, ..., 18
  END LOOP;
  p := qt.pid('det.scan', 'p', t);
  SELECT array_agg(s.base_offset ORDER BY ord) INTO b
  FROM queen.log_segments_newest(p, NULL, 3) WITH ORDINALITY s(base_offset, end_offset, created_at, blob, ord);
  PERFORM qt.eq(b, ARRAY[18, 16, 14]::bigint[], 'newest first, limit');
  SELECT array_agg(s.base_offset ORDER BY ord) INTO b
  FROM queen.log_segments_newest(p, 14, 3) WITH ORDINALITY s(base_offset, end_offset, created_at, blob, ord);
  PERFORM qt.eq(b, ARRAY[12, 10, 8]::bigint[], 'before bound is exclusive');
  SELECT array_agg(s.base_offset ORDER BY ord) INTO b
  FROM queen.log_segments_newest(p, 4, 100) WITH ORDINALITY s(base_offset, end_offset, created_at, blob, ord);
  PERFORM qt.eq(b, ARRAY[2, 0]::bigint[], 'tail page');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.log_segments_newest(p, 0, 100)), 0, 'nothing before 0');
  PERFORM qt.eq((SELECT s.end_offset FROM queen.log_segments_newest(p, NULL, 1) s), 19::bigint, 'end_offset');
  PERFORM qt.eq((SELECT convert_from(s.blob, 'UTF8') FROM queen.log_segments_newest(p, NULL, 1) s), 'blob-90x2', 'blob');
END $$;
