-- Resources listing / detail and queue deletion (cascade incl. the FK-less tables). Own tenant for isolation.
DO $$
DECLARE
  t uuid := '00000000-0000-0000-0000-0000000000ee';
  r jsonb; q jsonb; p jsonb; pa uuid; pb uuid; pk uuid; d jsonb; qid uuid;
BEGIN
  PERFORM qt.push('adm.one', 'a', 1, 4, t);     -- a: 0..3
  PERFORM qt.push('adm.one', 'a', 5, 2, t);     -- a: 4..5
  PERFORM qt.push('adm.one', 'b', 1, 3, t);     -- b: 0..2
  PERFORM qt.push('adm.keep', 'k', 1, 1, t);
  pa := qt.pid('adm.one', 'a', t); pb := qt.pid('adm.one', 'b', t); pk := qt.pid('adm.keep', 'k', t);
  qid := (SELECT id FROM queen.queues WHERE tenant_id = t AND name = 'adm.one');
  -- queue mode: a has 0..1 completed and 2..3 leased; b untouched. A named group and a DLQ row too.
  PERFORM qt.pop('adm.one', 'a', '__QUEUE_MODE__', 2, 1, 'w', t => t);
  PERFORM queen.log_ack(t, pa, '__QUEUE_MODE__', 'w', ARRAY[qt.h(2)], ARRAY['completed']);
  PERFORM qt.pop('adm.one', 'a', '__QUEUE_MODE__', 2, 1, 'w2', t => t);
  PERFORM qt.pop('adm.one', NULL, 'bus', 100, 0, 'wb', t => t);
  INSERT INTO queen.log_dlq (partition_id, consumer_group, "offset", payload, error, retry_count) VALUES (pa, 'bus', 0, '1', 'x', 3);
  INSERT INTO queen.retention_history (partition_id, messages_deleted, retention_type) VALUES (pa, 0, 'retention');

  r := queen.get_queues(t);
  PERFORM qt.eq(jsonb_array_length(r->'queues'), 2, 'two queues for the tenant');
  SELECT e INTO q FROM jsonb_array_elements(r->'queues') e WHERE e->>'name' = 'adm.one';
  PERFORM qt.eq(q->>'id', qid::text, 'id');
  PERFORM qt.eq(q->>'namespace' || '/' || (q->>'task'), 'adm/one', 'namespace/task');
  PERFORM qt.eq((q->>'partitions')::int, 2, 'partition count');
  PERFORM qt.eq(q->'segments', '{"segments":3,"messages":9}'::jsonb, 'segments');
  PERFORM qt.eq(q->'messages', '{"total":9,"pending":5,"processing":2}'::jsonb, 'messages (queue-mode cursor)');
  PERFORM qt.ok((q->>'retainedBytes')::bigint > 0, 'retainedBytes');
  PERFORM qt.ok(q->>'createdAt' LIKE '%Z', 'createdAt');
  PERFORM qt.eq(queen.get_queues('00000000-0000-0000-0000-0000000000ef'), '{"queues":[]}'::jsonb, 'empty tenant');

  r := (SELECT g.body::jsonb FROM queen.get_queue(t, 'adm.one', NULL, NULL) g);
  PERFORM qt.eq((SELECT count(*)::int FROM jsonb_object_keys(r->'options')), 21, 'detail options: 21 keys');
  PERFORM qt.eq(r->'totals', '{"total":9,"pending":5,"processing":2,"completed":2,"deadLetter":1}'::jsonb, 'totals');
  PERFORM qt.eq(r->'segments', '{"segments":3,"messages":9}'::jsonb, 'detail segments');
  PERFORM qt.eq(jsonb_array_length(r->'partitions'), 2, 'detail partitions');
  p := r->'partitions'->0;
  PERFORM qt.eq(p->>'name', 'a', 'partitions by name');
  PERFORM qt.eq(p->>'id', pa::text, 'partition id');
  PERFORM qt.eq(p->'stats', '{"total":6,"pending":2,"processing":2,"completed":2,"failed":null,"deadLetter":1}'::jsonb, 'partition stats');
  PERFORM qt.ok(p->>'oldestMessage' <= p->>'newestMessage', 'oldest <= newest');
  -- one partition a page: a, then b after a, and no page after b; the totals stay the queue's
  PERFORM qt.eq((SELECT jsonb_path_query_array(g.body::jsonb, '$.partitions[*].name')
                        || COALESCE(to_jsonb(g.next_after), 'null'::jsonb)
                 FROM queen.get_queue(t, 'adm.one', NULL, 1) g), '["a","a"]'::jsonb, 'first page of one');
  PERFORM qt.eq((SELECT jsonb_path_query_array(g.body::jsonb, '$.partitions[*].name')
                        || COALESCE(to_jsonb(g.next_after), 'null'::jsonb)
                 FROM queen.get_queue(t, 'adm.one', 'a', 1) g), '["b",null]'::jsonb, 'page after a, the last');
  PERFORM qt.eq((SELECT g.body::jsonb->'totals' FROM queen.get_queue(t, 'adm.one', 'a', 1) g), r->'totals',
                'a page keeps the totals');
  PERFORM qt.eq((SELECT g.body::jsonb FROM queen.get_queue(t, 'nope', NULL, NULL) g),
                '{"error":"Queue not found"}'::jsonb, 'missing queue');
  PERFORM qt.eq((SELECT g.body::jsonb FROM queen.get_queue(qt.tenant(), 'adm.one', NULL, NULL) g),
                '{"error":"Queue not found"}'::jsonb, 'other tenant cannot see it');

  -- delete
  d := queen.delete_queue(t, 'adm.one');
  PERFORM qt.eq(d->>'deleted' || '/' || (d->>'existed') || '/' || (d->>'queue'), 'true/true/adm.one', 'delete answer');
  PERFORM qt.eq((SELECT array_agg(x::uuid ORDER BY x::uuid) FROM jsonb_array_elements_text(d->'partitionIds') x),
                (SELECT array_agg(x ORDER BY x) FROM unnest(ARRAY[pa, pb]) x), 'partitionIds');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.queues WHERE id = qid), 0, 'queue gone');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.log_partitions WHERE queue_id = qid), 0, 'partitions gone');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.log_segments WHERE partition_id IN (pa, pb)), 0, 'segments gone');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.log_consumers WHERE partition_id IN (pa, pb)), 0, 'cursors gone');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.log_dlq WHERE partition_id IN (pa, pb)), 0, 'dlq rows gone');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.retention_history WHERE partition_id IN (pa, pb)), 0, 'history gone');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.consumer_groups_metadata WHERE queue_id = qid), 0, 'metadata gone');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.consumer_watermarks WHERE queue_id = qid), 0, 'watermarks gone');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.log_segments WHERE partition_id = pk), 1, 'other queue untouched');
  d := queen.delete_queue(t, 'adm.one');
  PERFORM qt.eq(d->>'existed', 'false', 'second delete: existed false');
  PERFORM qt.eq(d->>'deleted', 'true', 'SP always says deleted');
  -- recreate after delete: fresh offsets, and a fresh group registration
  r := qt.push('adm.one', 'a', 1, 1, t);
  PERFORM qt.eq((r->>'baseOffset')::bigint, 0::bigint, 'recreated from offset 0 (same txn id accepted again)');
  PERFORM qt.eq(qt.offs(qt.pop('adm.one', NULL, 'bus', 10, 0, 'w', mode => 'all', t => t)), ARRAY[0]::bigint[], 'group re-registers');
END $$;
