-- Push: dense offsets, provisioning, dedup verdicts, window expiry, window 0, guards, multi push, covering segment.
DO $$
DECLARE r jsonb; pid uuid; q record; n int;
BEGIN
  -- dense offsets + provisioning with dotted-name namespace/task and column defaults
  r := qt.push('billing.invoice.v1', 'p1', 1, 3);
  PERFORM qt.eq(r->>'status', 'queued', 'first push queued');
  PERFORM qt.eq((r->>'baseOffset')::bigint, 0::bigint, 'first base 0');
  PERFORM qt.ok(r->>'createdAt' ~ '^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$', 'createdAt ISO micro Z: ' || (r->>'createdAt'));
  pid := qt.pid('billing.invoice.v1', 'p1');
  PERFORM qt.eq((r->>'partitionId')::uuid, pid, 'partitionId returned');
  r := qt.push('billing.invoice.v1', 'p1', 4, 2);
  PERFORM qt.eq((r->>'baseOffset')::bigint, 3::bigint, 'second base 3');
  r := qt.push('billing.invoice.v1', 'p1', 6, 1);
  PERFORM qt.eq((r->>'baseOffset')::bigint, 5::bigint, 'third base 5');
  PERFORM qt.eq((SELECT last_offset FROM queen.log_partitions WHERE id = pid), 5::bigint, 'last_offset 5');
  PERFORM qt.eq((SELECT string_agg(base_offset || '-' || end_offset, ',' ORDER BY base_offset)
                 FROM queen.log_segments WHERE partition_id = pid), '0-2,3-4,5-5', 'segment ranges');
  PERFORM qt.eq((SELECT string_agg(base_offset || '-' || end_offset || ':' || octet_length(hashes), ',' ORDER BY base_offset)
                 FROM queen.log_segments WHERE partition_id = pid), '0-2:48,3-4:32,5-5:16', 'hashes on the segment rows');
  SELECT * INTO q FROM queen.queues WHERE name = 'billing.invoice.v1';
  PERFORM qt.eq(q.namespace, 'billing', 'namespace derived');
  PERFORM qt.eq(q.task, 'invoice', 'task derived');
  PERFORM qt.eq(q.lease_time, 60, 'column default lease 60');
  PERFORM qt.eq(q.dedup_window_seconds, 3600, 'default dedup 3600');
  r := qt.push('plainq', 'Default', 1, 1);
  PERFORM qt.eq((SELECT namespace || '|' || task FROM queen.queues WHERE name = 'plainq'), 'plainq|', 'no-dot namespace/task');
  -- NULL partition means Default
  r := queen.log_push(qt.tenant(), 'plainq', NULL, 1, qt.h(2), '\x00');
  PERFORM qt.eq((r->>'baseOffset')::bigint, 1::bigint, 'NULL partition -> Default');

  -- duplicate verdict: frames 1 and 2 of the incoming segment already exist (ids 5 at off 4, 2 at off 1)
  r := queen.log_push(qt.tenant(), 'billing.invoice.v1', 'p1', 3, qt.hs(100, 5, 2), '\x01');
  PERFORM qt.eq(r->>'status', 'duplicate', 'dup status');
  PERFORM qt.eq(r->'dups', '[{"i":1,"off":4},{"i":2,"off":1}]'::jsonb, 'dups indexes + offsets');
  PERFORM qt.eq((r->>'partitionId')::uuid, pid, 'dup partitionId');
  PERFORM qt.eq((SELECT last_offset FROM queen.log_partitions WHERE id = pid), 5::bigint, 'dup wrote nothing (allocator)');
  PERFORM qt.eq((SELECT count(*) FROM queen.log_segments WHERE partition_id = pid), 3::bigint, 'dup wrote no segment');
  PERFORM qt.eq((SELECT count(*) FROM queen.log_segments WHERE partition_id = pid AND hashes IS NOT NULL), 3::bigint,
                'dup wrote no hashes');

  -- lowest matching offset when a hash exists twice (dedup off at the time)
  UPDATE queen.queues SET dedup_window_seconds = 0 WHERE name = 'billing.invoice.v1';
  r := queen.log_push(qt.tenant(), 'billing.invoice.v1', 'p1', 1, qt.h(1), '\x02');
  PERFORM qt.eq(r->>'status', 'queued', 'window 0: same hash accepted');
  PERFORM qt.eq((r->>'baseOffset')::bigint, 6::bigint, 'window 0 base 6');
  UPDATE queen.queues SET dedup_window_seconds = 3600 WHERE name = 'billing.invoice.v1';
  r := queen.log_push(qt.tenant(), 'billing.invoice.v1', 'p1', 1, qt.h(1), '\x03');
  PERFORM qt.eq(r->'dups', '[{"i":0,"off":0}]'::jsonb, 'lowest (original) offset reported');

  -- another partition never duplicates
  r := queen.log_push(qt.tenant(), 'billing.invoice.v1', 'p2', 1, qt.h(1), '\x04');
  PERFORM qt.eq(r->>'status', 'queued', 'other partition not dup');
  -- another tenant never duplicates either (and gets its own queue)
  r := queen.log_push('00000000-0000-0000-0000-0000000000aa', 'billing.invoice.v1', 'p1', 1, qt.h(1), '\x04');
  PERFORM qt.eq(r->>'status', 'queued', 'other tenant not dup');
  PERFORM qt.eq((r->>'baseOffset')::bigint, 0::bigint, 'other tenant own partition');

  -- window expiry: back-date the txns rows beyond the window -> accepted again
  UPDATE queen.log_segments SET created_at = created_at - interval '2 hours' WHERE partition_id = pid;
  r := queen.log_push(qt.tenant(), 'billing.invoice.v1', 'p1', 2, qt.hs(5, 2), '\x05');
  PERFORM qt.eq(r->>'status', 'queued', 'expired window: accepted');
  PERFORM qt.eq((r->>'baseOffset')::bigint, 7::bigint, 'expired window base 7');
  -- a smaller window: rows 30 min old are outside a 600 s window but inside 3600 s
  UPDATE queen.log_segments SET created_at = now() - interval '30 minutes' WHERE partition_id = pid AND base_offset = 7;
  r := queen.log_push(qt.tenant(), 'billing.invoice.v1', 'p1', 1, qt.h(5), '\x06');
  PERFORM qt.eq(r->>'status', 'duplicate', '30 min old inside 3600 s window');
  UPDATE queen.queues SET dedup_window_seconds = 600 WHERE name = 'billing.invoice.v1';
  r := queen.log_push(qt.tenant(), 'billing.invoice.v1', 'p1', 1, qt.h(5), '\x06');
  PERFORM qt.eq(r->>'status', 'queued', '30 min old outside 600 s window');
  -- purged txns (below txns_start) never match
  UPDATE queen.queues SET dedup_window_seconds = 3600 WHERE name = 'billing.invoice.v1';
  UPDATE queen.log_partitions SET txns_start = 10 WHERE id = pid;
  r := queen.log_push(qt.tenant(), 'billing.invoice.v1', 'p1', 1, qt.h(5), '\x07');
  PERFORM qt.eq(r->>'status', 'queued', 'below txns_start not probed');
  r := queen.log_push(qt.tenant(), 'billing.invoice.v1', 'p1', 1, qt.h(5), '\x07');
  PERFORM qt.eq(r->'dups', '[{"i":0,"off":10}]'::jsonb, 'dup against the row at txns_start');
  -- verified watermark: the broker promises nothing <= verified matches
  r := queen.log_push(qt.tenant(), 'billing.invoice.v1', 'p1', 1, qt.h(5), '\x07', 10);
  PERFORM qt.eq(r->>'status', 'queued', 'verified=10 skips the probe of offset 10');

  -- last_write_at changes at most once per second
  UPDATE queen.log_partitions SET last_write_at = now() - interval '10 seconds' WHERE id = pid;
  PERFORM qt.push('billing.invoice.v1', 'p1', 500, 1);
  PERFORM qt.ok((SELECT last_write_at > now() - interval '5 seconds' FROM queen.log_partitions WHERE id = pid), 'stale last_write_at refreshed');
  UPDATE queen.log_partitions SET last_write_at = '2100-01-01' WHERE id = pid;
  PERFORM qt.push('billing.invoice.v1', 'p1', 501, 1);
  PERFORM qt.eq((SELECT last_write_at FROM queen.log_partitions WHERE id = pid), '2100-01-01'::timestamptz, 'fresh last_write_at untouched');

  -- guards
  BEGIN
    PERFORM queen.log_push(qt.tenant(), 'guardq', 'p', 2, qt.h(1), '\x00');
    RAISE EXCEPTION 'no raise';
  EXCEPTION WHEN OTHERS THEN
    PERFORM qt.ok(SQLERRM LIKE 'QPUSH bad segment%', 'bad segment raises: ' || SQLERRM);
  END;
  BEGIN
    PERFORM queen.log_push(qt.tenant(), 'guardq', 'p', 0, ''::bytea, '\x00');
    RAISE EXCEPTION 'no raise';
  EXCEPTION WHEN OTHERS THEN
    PERFORM qt.ok(SQLERRM LIKE 'QPUSH bad segment%', 'count 0 raises: ' || SQLERRM);
  END;
  PERFORM qt.ok(NOT EXISTS (SELECT 1 FROM queen.queues WHERE name = 'guardq'), 'guard provisions nothing');

  -- covering segment
  PERFORM qt.eq((SELECT base_offset || '-' || end_offset FROM queen.log_segment_at(pid, 1)), '0-2', 'segment_at mid');
  PERFORM qt.eq((SELECT base_offset || '-' || end_offset FROM queen.log_segment_at(pid, 4)), '3-4', 'segment_at end');
  PERFORM qt.eq((SELECT encode(blob, 'escape') FROM queen.log_segment_at(pid, 0)), 'blob-1x3', 'segment_at blob');
  PERFORM qt.eq((SELECT count(*) FROM queen.log_segment_at(pid, 99999)), 0::bigint, 'segment_at past the end: no row');
  DELETE FROM queen.log_segments WHERE partition_id = pid AND base_offset = 3;
  PERFORM qt.eq((SELECT count(*) FROM queen.log_segment_at(pid, 4)), 0::bigint, 'segment_at in a gap: no row');
  PERFORM qt.eq((SELECT count(*) FROM queen.log_segment_at(pid, 2)), 1::bigint, 'segment_at before the gap');
END $$;

-- Multi push: alignment, ordering, same partition twice, per-segment duplicate verdicts, provisioning.
DO $$
DECLARE r jsonb; pa uuid; pb uuid;
BEGIN
  r := qt.multi(
      ARRAY[qt.tenant(), qt.tenant(), qt.tenant(), qt.tenant()]::uuid[],
      ARRAY['multi.a', 'multi.b', 'multi.a', 'multi.a'],
      ARRAY['x', 'y', 'x', 'z'],
      ARRAY[2, 1, 3, 1],
      ARRAY[qt.hseq(1, 2), qt.h(1), qt.hseq(3, 3), qt.h(9)],
      ARRAY['\x0a'::bytea, '\x0b'::bytea, '\x0c'::bytea, '\x0d'::bytea]);
  PERFORM qt.eq(jsonb_array_length(r), 4, 'multi aligned');
  pa := qt.pid('multi.a', 'x'); pb := qt.pid('multi.b', 'y');
  PERFORM qt.eq(r->0->>'status', 'queued', 'm0 queued');
  PERFORM qt.eq((r->0->>'baseOffset')::bigint, 0::bigint, 'm0 base 0');
  PERFORM qt.eq((r->1->>'baseOffset')::bigint, 0::bigint, 'm1 base 0 (other queue)');
  PERFORM qt.eq((r->2->>'baseOffset')::bigint, 2::bigint, 'm2 same partition again: base 2 (array order, dense)');
  PERFORM qt.eq((r->3->>'baseOffset')::bigint, 0::bigint, 'm3 base 0');
  PERFORM qt.eq((r->0->>'partitionId')::uuid, pa, 'm0 pid');
  PERFORM qt.eq((r->2->>'partitionId')::uuid, pa, 'm2 pid');
  PERFORM qt.eq((r->1->>'partitionId')::uuid, pb, 'm1 pid');
  PERFORM qt.eq((SELECT last_offset FROM queen.log_partitions WHERE id = pa), 4::bigint, 'multi dense last_offset');
  PERFORM qt.eq((SELECT namespace || '|' || task FROM queen.queues WHERE name = 'multi.b'), 'multi|b', 'multi provisioning');

  -- a duplicate segment does not disturb the others; a duplicate against an earlier element of the same call
  r := qt.multi(
      ARRAY[qt.tenant(), qt.tenant(), qt.tenant()]::uuid[],
      ARRAY['multi.a', 'multi.a', 'multi.a'],
      ARRAY['x', 'x', 'x'],
      ARRAY[1, 1, 1],
      ARRAY[qt.h(4), qt.h(50), qt.h(50)],
      ARRAY['\x01'::bytea, '\x02'::bytea, '\x03'::bytea]);
  PERFORM qt.eq(r->0->>'status', 'duplicate', 'multi dup verdict');
  PERFORM qt.eq(r->0->'dups', '[{"i":0,"off":3}]'::jsonb, 'multi dup offsets');
  PERFORM qt.eq((r->1->>'baseOffset')::bigint, 5::bigint, 'multi after dup base 5');
  PERFORM qt.eq(r->2->'dups', '[{"i":0,"off":5}]'::jsonb, 'dup of an earlier element of the same bundle');

  PERFORM qt.eq(qt.multi('{}', '{}', '{}', '{}', '{}', '{}'), '[]'::jsonb, 'empty multi');
  BEGIN
    PERFORM qt.multi(ARRAY[qt.tenant()], ARRAY['multi.a', 'multi.b'], ARRAY['x'], ARRAY[1], ARRAY[qt.h(1)], ARRAY['\x00'::bytea]);
    RAISE EXCEPTION 'no raise';
  EXCEPTION WHEN OTHERS THEN
    PERFORM qt.ok(SQLERRM LIKE 'QMULTI misaligned%', 'misaligned raises: ' || SQLERRM);
  END;
  BEGIN
    PERFORM qt.multi(ARRAY[qt.tenant()], ARRAY['multi.bad'], ARRAY['x'], ARRAY[2], ARRAY[qt.h(1)], ARRAY['\x00'::bytea]);
    RAISE EXCEPTION 'no raise';
  EXCEPTION WHEN OTHERS THEN
    PERFORM qt.ok(SQLERRM LIKE 'QPUSH bad segment%', 'multi bad segment raises: ' || SQLERRM);
  END;
END $$;
