-- Pop: FIFO, leases, one live lease per (partition, group), named groups, queue mode competition, lease expiry,
-- autoAck, shared budget, partition cap, provisioning, visibility knobs, seal, retention gaps, discovery.
DO $$
DECLARE r jsonb; pid uuid; c queen.log_consumers; exp timestamptz;
BEGIN
  PERFORM qt.push('popq', 'A', 1, 3);   -- offsets 0..2
  PERFORM qt.push('popq', 'A', 4, 2);   -- 3..4
  PERFORM qt.push('popq', 'A', 6, 1);   -- 5
  pid := qt.pid('popq', 'A');

  -- FIFO, slice arithmetic, lease
  r := qt.pop('popq', 'A', '__QUEUE_MODE__', 4, 1, 'w1');
  PERFORM qt.eq(qt.offs(r), ARRAY[0,1,2,3]::bigint[], 'first pop offsets 0..3');
  PERFORM qt.eq(jsonb_array_length(r), 2, 'two slices');
  PERFORM qt.eq(r->0->>'b' || '/' || (r->0->>'s') || '/' || (r->0->>'t') || '/' || (r->0->>'n'), '0/0/3/3', 'slice 1');
  PERFORM qt.eq(r->1->>'b' || '/' || (r->1->>'s') || '/' || (r->1->>'t') || '/' || (r->1->>'n'), '3/0/1/2', 'slice 2');
  PERFORM qt.eq((r->0->>'a')::int, 1, 'attempt 1');
  PERFORM qt.eq((r->0->>'l')::boolean, true, 'leased');
  PERFORM qt.eq(r->0->>'q', 'popq', 'queue name column');
  PERFORM qt.eq((r->0->>'pid')::uuid, pid, 'partition id column');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.log_pop(qt.tenant(), 'popq', 'A', NULL, 4, 1, 0, 'wx', false, 'all', NULL) x
                 WHERE x.blob IS NULL), 0, 'blob present (and NULL group = queue mode sees the live lease: no rows)');
  c := qt.cursor('popq', 'A', '__QUEUE_MODE__');
  PERFORM qt.eq(c.committed, -1::bigint, 'cursor not moved by a leased pop');
  PERFORM qt.eq(c.batch_end, 3::bigint, 'batch_end = last delivered');
  PERFORM qt.eq(c.worker_id, 'w1', 'worker');
  PERFORM qt.eq(c.attempt_offset, 0::bigint, 'attempt_offset = start');
  -- lease length: p_lease_s <= 0 -> queue lease_time (60)
  PERFORM qt.ok(c.lease_expires_at BETWEEN now() + interval '55 seconds' AND now() + interval '65 seconds', 'lease = queue lease_time 60');

  -- one live lease per (partition, group): same group, other worker -> nothing (pinned and wildcard)
  PERFORM qt.eq(qt.pop('popq', 'A', '__QUEUE_MODE__', 10, 1, 'w2'), '[]'::jsonb, 'leased partition: nothing (pinned)');
  PERFORM qt.eq(qt.pop('popq', NULL, '__QUEUE_MODE__', 10, 1, 'w2'), '[]'::jsonb, 'leased partition: nothing (wildcard)');
  PERFORM qt.eq((SELECT worker_id FROM queen.log_consumers WHERE partition_id = pid AND consumer_group = '__QUEUE_MODE__'),
                'w1', 'lease not stolen');

  -- two named groups each get everything
  r := qt.pop('popq', NULL, 'g1', 100, 1, 'wg1');
  PERFORM qt.eq(qt.offs(r), ARRAY[0,1,2,3,4,5]::bigint[], 'group g1 gets all');
  r := qt.pop('popq', NULL, 'g2', 100, 1, 'wg2');
  PERFORM qt.eq(qt.offs(r), ARRAY[0,1,2,3,4,5]::bigint[], 'group g2 gets all');

  -- ack the last delivered message: implicit ack of the batch, lease released, next pop continues
  r := qt.ack('popq', 'A', '__QUEUE_MODE__', 'w1', ARRAY[4], ARRAY['completed']);
  PERFORM qt.eq((r->>'committed')::bigint, 3::bigint, 'implicit ack to 3');
  r := qt.pop('popq', 'A', '__QUEUE_MODE__', 10, 1, 'w2', lease_s => 5);
  PERFORM qt.eq(qt.offs(r), ARRAY[4,5]::bigint[], 'continues at 4 (mid-segment)');
  PERFORM qt.eq((r->0->>'s')::int, 1, 'start_idx 1 inside segment 3..4');
  PERFORM qt.eq((r->0->>'a')::int, 1, 'fresh batch attempt 1');
  c := qt.cursor('popq', 'A', '__QUEUE_MODE__');
  PERFORM qt.ok(c.lease_expires_at BETWEEN now() + interval '3 seconds' AND now() + interval '7 seconds', 'explicit lease 5 s');

  -- lease expiry redelivers the same batch with attempt 2, to a new worker; the old worker's ack is refused
  UPDATE queen.log_consumers SET lease_expires_at = now() - interval '1 second'
  WHERE partition_id = pid AND consumer_group = '__QUEUE_MODE__';
  r := qt.pop('popq', 'A', '__QUEUE_MODE__', 10, 1, 'w3');
  PERFORM qt.eq(qt.offs(r), ARRAY[4,5]::bigint[], 'redelivered after expiry');
  PERFORM qt.eq((r->0->>'a')::int, 2, 'attempt 2');
  PERFORM qt.eq((qt.cursor('popq', 'A', '__QUEUE_MODE__')).batch_retry_count, 0, 'expiry costs no retry budget');
  r := qt.ack('popq', 'A', '__QUEUE_MODE__', 'w2', ARRAY[6], ARRAY['completed']);
  PERFORM qt.eq(r, '{"ok":false,"error":"invalid or expired lease"}'::jsonb, 'old worker refused');
  r := qt.ack('popq', 'A', '__QUEUE_MODE__', 'w3', ARRAY[6], ARRAY['completed']);
  PERFORM qt.eq((r->>'committed')::bigint, 5::bigint, 'new worker acks');
  PERFORM qt.eq((r->>'leaseReleased')::boolean, true, 'batch complete -> released');
  PERFORM qt.eq(qt.pop('popq', 'A', '__QUEUE_MODE__', 10, 1, 'w4'), '[]'::jsonb, 'drained');

  -- autoAck: commit in the pop, no lease, attempt 1, total_consumed
  PERFORM qt.push('autoq', 'Default', 1, 2);
  PERFORM qt.push('autoq', 'Default', 3, 2);
  r := qt.pop('autoq', NULL, '__QUEUE_MODE__', 3, 1, '', auto_ack => true);
  PERFORM qt.eq(qt.offs(r), ARRAY[0,1,2]::bigint[], 'autoAck delivers');
  PERFORM qt.eq((r->0->>'l')::boolean, false, 'autoAck: no lease');
  PERFORM qt.eq((r->0->>'a')::int, 1, 'autoAck attempt 1');
  c := qt.cursor('autoq', 'Default', '__QUEUE_MODE__');
  PERFORM qt.eq(c.committed, 2::bigint, 'autoAck committed');
  PERFORM qt.eq(c.worker_id, NULL::text, 'autoAck no worker');
  PERFORM qt.eq(c.total_consumed, 3::bigint, 'autoAck total_consumed');
  r := qt.pop('autoq', NULL, '__QUEUE_MODE__', 3, 1, '', auto_ack => true);
  PERFORM qt.eq(qt.offs(r), ARRAY[3]::bigint[], 'autoAck continues');
  PERFORM qt.eq(qt.pop('autoq', NULL, '__QUEUE_MODE__', 3, 1, '', auto_ack => true), '[]'::jsonb, 'autoAck drained');
END $$;

-- Queue mode competition, shared budget, partition cap, missing queue, discovery.
DO $$
DECLARE r1 jsonb; r2 jsonb; r3 jsonb; r jsonb;
BEGIN
  PERFORM qt.push('compq', 'P1', 1, 2);
  PERFORM qt.push('compq', 'P2', 3, 2);
  r1 := qt.pop('compq', NULL, '__QUEUE_MODE__', 10, 1, 'c1');
  r2 := qt.pop('compq', NULL, '__QUEUE_MODE__', 10, 1, 'c2');
  r3 := qt.pop('compq', NULL, '__QUEUE_MODE__', 10, 1, 'c3');
  PERFORM qt.eq(qt.taken(r1), 2, 'consumer 1 gets one partition');
  PERFORM qt.eq(qt.taken(r2), 2, 'consumer 2 gets the other');
  PERFORM qt.ok(r1->0->>'p' <> r2->0->>'p', 'different partitions');
  PERFORM qt.eq(r3, '[]'::jsonb, 'consumer 3 gets nothing');

  -- shared budget and the partition cap
  PERFORM qt.push('budq', 'a', 1, 2);
  PERFORM qt.push('budq', 'b', 3, 2);
  PERFORM qt.push('budq', 'c', 5, 2);
  r := qt.pop('budq', NULL, 'gb', 5, 0, 'b1');
  PERFORM qt.eq(qt.taken(r), 5, 'budget 5 shared across partitions (no cap)');
  PERFORM qt.eq((SELECT count(DISTINCT e->>'p')::int FROM jsonb_array_elements(r) e), 3, 'three partitions used');
  r := qt.pop('budq', NULL, 'gc', 100, 2, 'b2');
  PERFORM qt.eq((SELECT count(DISTINCT e->>'p')::int FROM jsonb_array_elements(r) e), 2, 'partition cap 2');
  PERFORM qt.eq(qt.taken(r), 4, 'cap 2 -> 4 messages');
  r := qt.pop('budq', NULL, 'gc', 100, 2, 'b3');
  PERFORM qt.eq(qt.taken(r), 2, 'the third partition for the next consumer');
  -- all lease rows of one pop share the worker
  PERFORM qt.eq((SELECT count(*)::int FROM queen.log_consumers c JOIN queen.log_partitions p ON p.id = c.partition_id
                 JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = 'budq' AND c.consumer_group = 'gb' AND c.worker_id = 'b1'), 3,
                'one worker id across partitions');

  -- a pop on a missing queue provisions the queue row (no partition) and returns nothing
  PERFORM qt.eq(qt.pop('nosuch.queue', NULL, 'gx', 10, 1, 'n1'), '[]'::jsonb, 'missing queue: nothing');
  PERFORM qt.eq((SELECT namespace || '|' || task FROM queen.queues WHERE name = 'nosuch.queue'), 'nosuch|queue', 'queue provisioned');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = 'nosuch.queue'), 0, 'no partition provisioned');
  PERFORM qt.eq(qt.pop('nosuch.queue', 'Default', 'gx', 10, 1, 'n1'), '[]'::jsonb, 'missing partition: nothing');

  -- discovery by namespace / task
  PERFORM qt.push('disc.alpha', 'p', 1, 1);
  PERFORM qt.push('disc.beta', 'p', 2, 1);
  PERFORM qt.push('other.alpha', 'p', 3, 1);
  PERFORM queen.configure_queue(qt.tenant(), 'renamed', '{"namespace":"disc","task":"gamma"}', 'merge');
  PERFORM qt.push('renamed', 'p', 4, 1);
  SELECT COALESCE(jsonb_agg(x.queue_name ORDER BY x.queue_name), '[]') INTO r
  FROM queen.log_pop(qt.tenant(), NULL, NULL, 'dg', 10, 0, 0, 'd1', false, 'all', NULL, 'disc', NULL) x;
  PERFORM qt.eq(r, '["disc.alpha","disc.beta","renamed"]'::jsonb, 'discovery by namespace (column wins over name)');
  SELECT COALESCE(jsonb_agg(x.queue_name ORDER BY x.queue_name), '[]') INTO r
  FROM queen.log_pop(qt.tenant(), NULL, NULL, 'dg2', 10, 0, 0, 'd2', false, 'all', NULL, NULL, 'alpha') x;
  PERFORM qt.eq(r, '["disc.alpha","other.alpha"]'::jsonb, 'discovery by task');
  SELECT COALESCE(jsonb_agg(x.queue_name ORDER BY x.queue_name), '[]') INTO r
  FROM queen.log_pop(qt.tenant(), NULL, NULL, 'dg3', 10, 0, 0, 'd3', false, 'all', NULL, 'disc', 'beta') x;
  PERFORM qt.eq(r, '["disc.beta"]'::jsonb, 'discovery by both');
  SELECT COALESCE(jsonb_agg(x.queue_name), '[]') INTO r
  FROM queen.log_pop(qt.tenant(), NULL, NULL, 'dg4', 10, 0, 0, 'd4', false, 'all', NULL, NULL, NULL) x;
  PERFORM qt.eq(r, '[]'::jsonb, 'discovery without namespace/task: nothing');
END $$;

-- Visibility: window_buffer, delayed_processing; seal; retention gaps.
DO $$
DECLARE r jsonb; pid uuid; c queen.log_consumers;
BEGIN
  -- window_buffer: a partition written within N s delivers nothing
  PERFORM queen.configure_queue(qt.tenant(), 'winq', '{"windowBuffer":5}', 'merge');
  PERFORM qt.push('winq', 'p', 1, 2);
  pid := qt.pid('winq', 'p');
  PERFORM qt.eq(qt.pop('winq', 'p', '__QUEUE_MODE__', 10, 1, 'x'), '[]'::jsonb, 'window buffer holds');
  UPDATE queen.log_segments SET created_at = created_at - interval '10 seconds' WHERE partition_id = pid;
  r := qt.pop('winq', 'p', '__QUEUE_MODE__', 10, 1, 'x');
  PERFORM qt.eq(qt.offs(r), ARRAY[0,1]::bigint[], 'quiet partition delivers');

  -- delayed_processing hides the young suffix only
  PERFORM queen.configure_queue(qt.tenant(), 'delq', '{"delayedProcessing":10}', 'merge');
  PERFORM qt.push('delq', 'p', 1, 2);
  pid := qt.pid('delq', 'p');
  UPDATE queen.log_segments SET created_at = created_at - interval '20 seconds' WHERE partition_id = pid;
  PERFORM qt.push('delq', 'p', 3, 2);
  r := qt.pop('delq', 'p', '__QUEUE_MODE__', 10, 1, 'x');
  PERFORM qt.eq(qt.offs(r), ARRAY[0,1]::bigint[], 'only the old segment is visible');
  PERFORM qt.ack('delq', 'p', '__QUEUE_MODE__', 'x', ARRAY[2], ARRAY['completed']);
  PERFORM qt.eq(qt.pop('delq', 'p', '__QUEUE_MODE__', 10, 1, 'x'), '[]'::jsonb, 'young segment hidden');
  PERFORM qt.eq((qt.cursor('delq', 'p', '__QUEUE_MODE__')).committed, 1::bigint, 'delayed: never sealed');

  -- retention gap: offsets below log_start are skipped
  PERFORM qt.push('gapq', 'p', 1, 2);   -- 0..1
  PERFORM qt.push('gapq', 'p', 3, 2);   -- 2..3
  PERFORM qt.push('gapq', 'p', 5, 2);   -- 4..5
  pid := qt.pid('gapq', 'p');
  r := qt.pop('gapq', 'p', '__QUEUE_MODE__', 1, 1, 'x');
  PERFORM qt.ack('gapq', 'p', '__QUEUE_MODE__', 'x', ARRAY[1], ARRAY['completed']);     -- committed 0
  DELETE FROM queen.log_segments WHERE partition_id = pid AND base_offset < 4;
  UPDATE queen.log_partitions SET log_start = 4 WHERE id = pid;
  r := qt.pop('gapq', 'p', '__QUEUE_MODE__', 10, 1, 'x');
  PERFORM qt.eq(qt.offs(r), ARRAY[4,5]::bigint[], 'gap skipped');
  PERFORM qt.eq((r->0->>'s')::int, 0, 'gap: from frame 0 of the next segment');
  r := qt.ack('gapq', 'p', '__QUEUE_MODE__', 'x', ARRAY[6], ARRAY['completed']);
  PERFORM qt.eq((r->>'committed')::bigint, 5::bigint, 'ack across the gap');

  -- seal: no segments at all past the cursor, last_offset > committed
  PERFORM qt.push('sealq', 'p', 1, 3);
  pid := qt.pid('sealq', 'p');
  PERFORM qt.pop('sealq', 'p', 'gs', 1, 1, 'x', auto_ack => true);                  -- creates the cursor at 0
  DELETE FROM queen.log_segments WHERE partition_id = pid;
  UPDATE queen.log_partitions SET log_start = 3 WHERE id = pid;
  PERFORM qt.eq(qt.pop('sealq', 'p', 'gs', 10, 1, 'x'), '[]'::jsonb, 'nothing to deliver');
  c := qt.cursor('sealq', 'p', 'gs');
  PERFORM qt.eq(c.committed, 2::bigint, 'sealed to last_offset');
  PERFORM qt.eq(c.worker_id, NULL::text, 'seal takes no lease');
END $$;

-- The wildcard candidate walk (log_pop_many, no empty-scan floor) starts at a random pivot and reads the ids at or
-- after it first; the ids before it are read only once those are spent (a second cursor, opened then). With every
-- partition but the one of the smallest id leased, almost every pivot lies past the free one, so the walk must wrap
-- around to find it: it always does, and once that one is leased too, nothing is found.
DO $$
DECLARE r jsonb; k int; free_p text; free_pid uuid;
BEGIN
  FOR k IN 1 .. 8 LOOP PERFORM qt.push('wrapq', 'p' || k, k, 1); END LOOP;
  SELECT p.name, p.id INTO free_p, free_pid FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
  WHERE q.name = 'wrapq' AND q.tenant_id = qt.tenant() ORDER BY p.id LIMIT 1;
  FOR k IN 1 .. 8 LOOP
    IF 'p' || k <> free_p THEN
      PERFORM qt.eq(qt.taken(qt.pop('wrapq', 'p' || k, '__QUEUE_MODE__', 1, 1, 'hold' || k)), 1, 'held p' || k);
    END IF;
  END LOOP;
  FOR k IN 1 .. 30 LOOP
    r := qt.pop('wrapq', NULL, '__QUEUE_MODE__', 1, 1, 'w' || k);
    PERFORM qt.eq(r->0->>'p', free_p, 'the one free partition is found whatever the pivot (pop ' || k || ')');
    UPDATE queen.log_consumers SET lease_expires_at = clock_timestamp() - interval '1 second'
    WHERE partition_id = free_pid AND consumer_group = '__QUEUE_MODE__';          -- expired: free again
  END LOOP;
  PERFORM qt.eq(qt.taken(qt.pop('wrapq', NULL, '__QUEUE_MODE__', 1, 1, 'last')), 1, 'taken once more');
  PERFORM qt.eq(qt.pop('wrapq', NULL, '__QUEUE_MODE__', 1, 1, 'none'), '[]'::jsonb, 'all leased: nothing');
END $$;

-- The walk reads a half only as far as it is fetched: a batch-1 pop over 40 free partitions no longer probes the
-- cursor row of every partition (the candidate query sorted both halves together, so each pop probed all 40 and then
-- the claim and the lease touched the row again: 42 scans of log_consumers a pop). Each probe is one scan of
-- log_consumers, whatever the plan (an index probe or, on a small table, a sequential scan), so the count is the
-- witness; 20 pops from random pivots read about half the partitions on average, and not 20 x 42.
DO $$
DECLARE k int; s0 bigint; s1 bigint;
BEGIN
  FOR k IN 1 .. 40 LOOP PERFORM qt.push('lazyq', 'p' || k, k, 1); END LOOP;
  PERFORM qt.pop('lazyq', 'p1', '__QUEUE_MODE__', 1, 1, 'seed');                 -- registers the queue mode cursors
  SELECT seq_scan + idx_scan INTO s0 FROM pg_stat_xact_user_tables WHERE relid = 'queen.log_consumers'::regclass;
  FOR k IN 1 .. 20 LOOP
    PERFORM qt.eq(qt.taken(qt.pop('lazyq', NULL, '__QUEUE_MODE__', 1, 1, 'w' || k)), 1, 'pop ' || k || ' served');
  END LOOP;
  SELECT seq_scan + idx_scan INTO s1 FROM pg_stat_xact_user_tables WHERE relid = 'queen.log_consumers'::regclass;
  RAISE NOTICE 'log_consumers scans per batch-1 pop over 40 partitions: %', (s1 - s0) / 20.0;
  PERFORM qt.ok(s1 - s0 < 20 * 36, 'the walk reads the candidates it needs, not all 40 a pop (' || (s1 - s0) || ')');
END $$;
