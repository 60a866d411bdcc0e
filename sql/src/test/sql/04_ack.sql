-- Ack: implicit ack, partial batch keeps the lease, noop / stale / unresolved, signal clamp, retry budget,
-- DLQ hand-off + log_dlq_file / log_dlq_abort, budget-free retry, forced dlq, drop when the DLQ is off, completed acks
-- past a poison or a drop, superseded acks behind a stop, lease-less acks, errors.
DO $$
DECLARE r jsonb; c queen.log_consumers; pid uuid;
BEGIN
  PERFORM qt.push('ackq', 'p', 1, 5);                                   -- ids 1..5 at offsets 0..4
  pid := qt.pid('ackq', 'p');
  r := qt.pop('ackq', 'p', '__QUEUE_MODE__', 5, 1, 'w');
  PERFORM qt.eq(qt.taken(r), 5, 'batch of 5');

  -- partial implicit ack: cursor to 2, lease kept
  r := qt.ack('ackq', 'p', '__QUEUE_MODE__', 'w', ARRAY[3], ARRAY['completed']);
  PERFORM qt.eq(r->>'ok', 'true', 'ok');
  PERFORM qt.eq((r->>'committed')::bigint, 2::bigint, 'implicit ack of 0..2');
  PERFORM qt.eq((r->>'leaseReleased')::boolean, false, 'partial ack keeps the lease');
  PERFORM qt.eq((r->'noop') || (r->'stale') || (r->'unresolved'), '[]'::jsonb, 'no lists');
  PERFORM qt.eq((r->>'dlq')::boolean, false, 'dlq false');
  PERFORM qt.eq((r->>'dropped')::boolean, false, 'dropped false');
  c := qt.cursor('ackq', 'p', '__QUEUE_MODE__');
  PERFORM qt.eq(c.worker_id, 'w', 'still leased');
  PERFORM qt.eq(c.total_consumed, 3::bigint, 'total_consumed += 3');

  -- below the cursor: completed -> noop, negative -> stale; unknown -> unresolved
  r := qt.ack('ackq', 'p', '__QUEUE_MODE__', 'w', ARRAY[1], ARRAY['completed']);
  PERFORM qt.eq(r->'noop', '[0]'::jsonb, 'noop');
  PERFORM qt.eq((r->>'committed')::bigint, 2::bigint, 'noop does not move');
  r := qt.ack('ackq', 'p', '__QUEUE_MODE__', 'w', ARRAY[2], ARRAY['failed']);
  PERFORM qt.eq(r->'stale', '[0]'::jsonb, 'stale');
  PERFORM qt.eq((qt.cursor('ackq', 'p', '__QUEUE_MODE__')).batch_retry_count, 0, 'stale failed charges nothing');
  PERFORM qt.eq((qt.cursor('ackq', 'p', '__QUEUE_MODE__')).worker_id, 'w', 'stale failed does not release');
  r := qt.ack('ackq', 'p', '__QUEUE_MODE__', 'w', ARRAY[999], ARRAY['completed']);
  PERFORM qt.eq(r->'unresolved', '[0]'::jsonb, 'unresolved');
  -- mixed call, indexes into the input array
  r := qt.ack('ackq', 'p', '__QUEUE_MODE__', 'w', ARRAY[1, 999, 5, 2], ARRAY['completed', 'completed', 'completed', 'retry']);
  PERFORM qt.eq(r->'noop', '[0]'::jsonb, 'mixed noop');
  PERFORM qt.eq(r->'unresolved', '[1]'::jsonb, 'mixed unresolved');
  PERFORM qt.eq(r->'stale', '[3]'::jsonb, 'mixed stale');
  PERFORM qt.eq((r->>'committed')::bigint, 4::bigint, 'mixed advances to the batch end');
  PERFORM qt.eq((r->>'leaseReleased')::boolean, true, 'batch end reached: released');
  c := qt.cursor('ackq', 'p', '__QUEUE_MODE__');
  PERFORM qt.eq(c.worker_id || '', NULL::text, 'released');
  PERFORM qt.eq(c.batch_end, NULL::bigint, 'batch_end cleared');
  PERFORM qt.eq(c.total_consumed, 5::bigint, 'total_consumed 5');
  -- an ack above a leased batch: the hash is not in the ack window
  PERFORM qt.push('ackq', 'p', 11, 5);                                  -- ids 11..15 at 5..9
  r := qt.pop('ackq', 'p', '__QUEUE_MODE__', 2, 1, 'w2');               -- batch 5..6
  r := qt.ack('ackq', 'p', '__QUEUE_MODE__', 'w2', ARRAY[15], ARRAY['completed']);
  PERFORM qt.eq(r->'unresolved', '[0]'::jsonb, 'beyond batch_end: unresolved');
  PERFORM qt.eq((r->>'committed')::bigint, 4::bigint, 'beyond batch_end: no move');

  -- signal clamp: completed acks above a failure redeliver; the failure is the head signal
  r := qt.ack('ackq', 'p', '__QUEUE_MODE__', 'w2', ARRAY[12, 11], ARRAY['completed', 'failed']);
  PERFORM qt.eq((r->>'committed')::bigint, 4::bigint, 'failure at 5 clamps the cursor below it');
  PERFORM qt.eq((r->>'leaseReleased')::boolean, true, 'failed releases');
  PERFORM qt.eq((qt.cursor('ackq', 'p', '__QUEUE_MODE__')).batch_retry_count, 1, 'failed charges 1');
  r := qt.pop('ackq', 'p', '__QUEUE_MODE__', 3, 1, 'w3');
  PERFORM qt.eq(qt.offs(r), ARRAY[5,6,7]::bigint[], 'redelivered from the poison');
  PERFORM qt.eq((r->0->>'a')::int, 2, 'attempt 2');
  r := qt.ack('ackq', 'p', '__QUEUE_MODE__', 'w3', ARRAY[11, 13, 12], ARRAY['completed', 'completed', 'retry']);
  PERFORM qt.eq((r->>'committed')::bigint, 5::bigint, 'retry at 6 clamps to 5 although 7 was completed');
  PERFORM qt.eq((qt.cursor('ackq', 'p', '__QUEUE_MODE__')).batch_retry_count, 1, 'retry: count unchanged');
  r := qt.pop('ackq', 'p', '__QUEUE_MODE__', 10, 1, 'w4');
  PERFORM qt.eq(qt.offs(r), ARRAY[6,7,8,9]::bigint[], 'after retry');
  r := qt.ack('ackq', 'p', '__QUEUE_MODE__', 'w4', ARRAY[15], ARRAY['completed']);
  PERFORM qt.eq((r->>'committed')::bigint, 9::bigint, 'batch complete');
  c := qt.cursor('ackq', 'p', '__QUEUE_MODE__');
  PERFORM qt.eq(c.batch_retry_count || '/' || c.attempt_count, '0/0', 'completion resets counters');
END $$;

-- retry_limit = 3: a message that always fails is delivered 4 times, dead-lettered on the 4th failure, retry_count 3.
DO $$
DECLARE r jsonb; d jsonb; c queen.log_consumers; pid uuid; k int; dl record;
BEGIN
  PERFORM qt.push('retq', 'p', 1, 2);                                   -- ids 1, 2 at offsets 0, 1
  pid := qt.pid('retq', 'p');
  FOR k IN 1 .. 3 LOOP
    r := qt.pop('retq', 'p', 'grp', 1, 1, 'w' || k);
    PERFORM qt.eq(qt.offs(r), ARRAY[0]::bigint[], 'delivery ' || k);
    PERFORM qt.eq((r->0->>'a')::int, k, 'deliveryAttempt ' || k);
    r := qt.ack('retq', 'p', 'grp', 'w' || k, ARRAY[1], ARRAY['failed']);
    PERFORM qt.eq((r->>'dlq')::boolean, false, 'failure ' || k || ' redelivers');
    PERFORM qt.eq((r->>'leaseReleased')::boolean, true, 'failure ' || k || ' releases');
    PERFORM qt.eq((qt.cursor('retq', 'p', 'grp')).batch_retry_count, k, 'retry count ' || k);
  END LOOP;
  r := qt.pop('retq', 'p', 'grp', 1, 1, 'w4');
  PERFORM qt.eq((r->0->>'a')::int, 4, '4th delivery');
  r := qt.ack('retq', 'p', 'grp', 'w4', ARRAY[1], ARRAY['failed']);
  PERFORM qt.eq((r->>'dlq')::boolean, true, '4th failure: dlq hand-off');
  PERFORM qt.eq((r->>'off')::bigint, 0::bigint, 'poison offset');
  PERFORM qt.eq((r->>'poisonIndex')::int, 0, 'poison index');
  PERFORM qt.eq(r->>'worker', 'w4', 'worker echoed');
  PERFORM qt.eq(r->>'handoff', 'dlq-handoff:w4', 'hand-off token');
  PERFORM qt.eq(r->'poisons', '[{"off":0,"index":0,"retryCount":3}]'::jsonb, 'one poison, filed at retry count 3');
  PERFORM qt.eq((r->>'target')::bigint, 0::bigint, 'the cursor goes past the poison once it is filed');
  PERFORM qt.eq((r->>'leaseReleased')::boolean, false, 'hand-off keeps the batch');
  c := qt.cursor('retq', 'p', 'grp');
  PERFORM qt.eq(c.worker_id, 'dlq-handoff:w4', 'the token holds the batch for the broker');
  PERFORM qt.eq(c.committed, -1::bigint, 'cursor at the completed prefix');
  -- while the hand-off holds the batch, no ack moves the cursor: not with the lease, not lease-less
  r := qt.ack('retq', 'p', 'grp', 'w4', ARRAY[2], ARRAY['completed']);
  PERFORM qt.eq(r->>'ok', 'false', 'ack with the lease refused during the hand-off');
  r := qt.ack('retq', 'p', 'grp', '', ARRAY[1], ARRAY['completed']);
  PERFORM qt.ok(r->>'error' LIKE 'a dead-letter hand-off holds this batch%', 'lease-less ack refused: ' || r::text);
  PERFORM qt.eq((qt.cursor('retq', 'p', 'grp')).committed, -1::bigint, 'cursor unmoved');

  d := queen.log_dlq_file(pid, 'grp', 'w4', ARRAY[0]::bigint[], ARRAY[gen_random_uuid()], ARRAY['txn-1'],
                          ARRAY['{"n":1}'], ARRAY['boom'], ARRAY[3], 0, 0);
  PERFORM qt.eq(d->>'ok', 'false', 'the lease id is not the token');
  -- a payload jsonb refuses is filed as its text, byte for byte
  d := queen.log_dlq_file(pid, 'grp', 'dlq-handoff:w4', ARRAY[0]::bigint[],
                          ARRAY['0198aaaa-0000-7000-8000-000000000001'::uuid], ARRAY['txn-1'],
                          ARRAY['{"n":1,"z":"\u0000","big":1e1000000}'], ARRAY['boom'], ARRAY[3], 0, 0);
  PERFORM qt.eq(d, '{"ok":true,"filed":1}'::jsonb, 'dlq file ok');
  SELECT * INTO dl FROM queen.log_dlq WHERE partition_id = pid;
  PERFORM qt.eq(dl.retry_count, 3, 'log_dlq retry_count 3');
  PERFORM qt.eq(dl."offset", 0::bigint, 'log_dlq offset');
  PERFORM qt.eq(dl.consumer_group || '|' || dl.transaction_id || '|' || dl.error || '|' || dl.payload,
                'grp|txn-1|boom|{"n":1,"z":"\u0000","big":1e1000000}', 'log_dlq row, payload verbatim');
  c := qt.cursor('retq', 'p', 'grp');
  PERFORM qt.eq(c.committed, 0::bigint, 'advanced past the poison');
  PERFORM qt.eq(c.worker_id, NULL::text, 'lease cleared');
  PERFORM qt.eq(c.batch_retry_count || '/' || c.attempt_count, '0/0', 'counters reset');
  PERFORM qt.eq(c.total_consumed, 1::bigint, 'total_consumed += 1');
  d := queen.log_dlq_file(pid, 'grp', 'dlq-handoff:w4', ARRAY[0]::bigint[], ARRAY[NULL::uuid], ARRAY['txn-1'],
                          ARRAY['null'], ARRAY['again'], ARRAY[0], 0, 0);
  PERFORM qt.eq(d->>'ok', 'false', 'second filing refused');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.log_dlq WHERE partition_id = pid), 1, 'one dlq row');
  r := qt.pop('retq', 'p', 'grp', 5, 1, 'w5');
  PERFORM qt.eq(qt.offs(r), ARRAY[1]::bigint[], 'next message');
  PERFORM qt.eq((r->0->>'a')::int, 1, 'fresh attempt');

  -- retry costs no budget
  PERFORM qt.push('rtq', 'p', 1, 1);
  FOR k IN 1 .. 5 LOOP
    r := qt.pop('rtq', 'p', 'g', 1, 1, 'r' || k);
    PERFORM qt.eq((r->0->>'a')::int, k, 'retry delivery ' || k);
    r := qt.ack('rtq', 'p', 'g', 'r' || k, ARRAY[1], ARRAY['retry']);
    PERFORM qt.eq((r->>'dlq')::boolean, false, 'retry never dlqs');
  END LOOP;
  PERFORM qt.eq((qt.cursor('rtq', 'p', 'g')).batch_retry_count, 0, 'retry: no budget spent');
  PERFORM qt.eq((qt.cursor('rtq', 'p', 'g')).worker_id, NULL::text, 'retry releases');

  -- explicit dlq: immediate hand-off after the completed prefix; tie at one offset: dlq beats failed; a completed ack
  -- after the poison is not held back by it
  PERFORM qt.push('dlqq', 'p', 1, 4);
  pid := qt.pid('dlqq', 'p');
  r := qt.pop('dlqq', 'p', '__QUEUE_MODE__', 4, 1, 'x');
  r := qt.ack('dlqq', 'p', '__QUEUE_MODE__', 'x', ARRAY[1, 2, 2, 3], ARRAY['completed', 'failed', 'dlq', 'completed']);
  PERFORM qt.eq((r->>'dlq')::boolean, true, 'forced dlq');
  PERFORM qt.eq((r->>'off')::bigint, 1::bigint, 'poison at 1');
  PERFORM qt.eq((r->>'poisonIndex')::int, 2, 'dlq item wins the tie');
  PERFORM qt.eq((r->>'committed')::bigint, 0::bigint, 'completed prefix');
  PERFORM qt.eq((r->>'target')::bigint, 2::bigint, 'target: the completed ack after the poison');
  PERFORM qt.eq(r->'pending', '[1, 2, 3]'::jsonb, 'what hangs on the filing');
  PERFORM qt.eq(r->'superseded', '[]'::jsonb, 'nothing superseded');
  PERFORM qt.eq((qt.cursor('dlqq', 'p', '__QUEUE_MODE__')).batch_retry_count, 0, 'forced dlq: no charge');
  d := queen.log_dlq_file(pid, '__QUEUE_MODE__', r->>'handoff', ARRAY[1]::bigint[], ARRAY[NULL::uuid], ARRAY['t2'],
                          ARRAY['null'], ARRAY['forced'], ARRAY[0], (r->>'target')::bigint, (r->>'retryCount')::int);
  PERFORM qt.eq((SELECT retry_count FROM queen.log_dlq WHERE partition_id = pid), 0, 'forced dlq retry_count 0');
  PERFORM qt.eq((qt.cursor('dlqq', 'p', '__QUEUE_MODE__')).committed, 2::bigint, 'cursor past the completed ack');
  r := qt.pop('dlqq', 'p', '__QUEUE_MODE__', 3, 1, 'y');
  PERFORM qt.eq(qt.offs(r), ARRAY[3]::bigint[], 'only the unacked message redelivers');

  -- two poisons in one call, a failed (budget left after the reset) stops the walk; abort gives the batch back
  PERFORM queen.configure_queue(qt.tenant(), 'twoq', '{"retryLimit":1}', 'merge');
  PERFORM qt.push('twoq', 'p', 1, 6);                                   -- ids 1..6 at 0..5
  pid := qt.pid('twoq', 'p');
  r := qt.pop('twoq', 'p', 'g', 6, 1, 'v');
  r := qt.ack('twoq', 'p', 'g', 'v', ARRAY[1, 2, 3, 4, 5, 6],
              ARRAY['completed', 'dlq', 'completed', 'dlq', 'failed', 'completed']);
  PERFORM qt.eq(r->'poisons', '[{"off":1,"index":1,"retryCount":0},{"off":3,"index":3,"retryCount":0}]'::jsonb,
                'both dlq acks are poisons');
  PERFORM qt.eq((r->>'target')::bigint, 3::bigint, 'target: up to the stop at 4');
  PERFORM qt.eq((r->>'retryCount')::int, 1, 'the failed stop is charged');
  PERFORM qt.eq(r->'superseded', '[5]'::jsonb, 'the completed ack behind the stop cannot take effect');
  PERFORM qt.eq((r->>'blockedBy')::int, 4, 'blocked by the failed ack');
  PERFORM qt.eq(r->'pending', '[1, 2, 3]'::jsonb, 'pending: first poison up to the stop');
  PERFORM qt.eq(queen.log_dlq_abort(pid, 'g', 'v'), false, 'abort needs the holder');
  PERFORM qt.eq(queen.log_dlq_abort(pid, 'g', r->>'handoff'), true, 'abort releases');
  c := qt.cursor('twoq', 'p', 'g');
  PERFORM qt.eq(c.committed || '/' || COALESCE(c.worker_id, '-'), '0/-', 'prefix kept, batch released');
  r := qt.pop('twoq', 'p', 'g', 6, 1, 'v2');
  PERFORM qt.eq(qt.offs(r), ARRAY[1, 2, 3, 4, 5]::bigint[], 'redelivered from the first poison');

  -- an ack without a worker: the failed ack stops the cursor; the completed ack after it is superseded
  r := qt.ack('twoq', 'p', 'g', '', ARRAY[3, 4], ARRAY['failed', 'completed']);
  PERFORM qt.eq(r->'superseded', '[1]'::jsonb, 'lease-less: superseded');

  -- DLQ disabled + exhausted: drop
  PERFORM queen.configure_queue(qt.tenant(), 'dropq', '{"deadLetterQueue":false,"dlqAfterMaxRetries":false,"retryLimit":1}', 'merge');
  PERFORM qt.push('dropq', 'p', 1, 2);
  r := qt.pop('dropq', 'p', 'g', 5, 1, 'a');
  r := qt.ack('dropq', 'p', 'g', 'a', ARRAY[2], ARRAY['failed']);
  PERFORM qt.eq((r->>'committed')::bigint, -1::bigint, 'first failure at 1 when 0 was not acked: prefix -1');
  r := qt.pop('dropq', 'p', 'g', 5, 1, 'b');
  r := qt.ack('dropq', 'p', 'g', 'b', ARRAY[1, 2], ARRAY['completed', 'failed']);
  PERFORM qt.eq((r->>'dropped')::boolean, true, 'dropped');
  PERFORM qt.eq((r->>'dlq')::boolean, false, 'not dlq');
  PERFORM qt.eq((r->>'committed')::bigint, 1::bigint, 'committed = poison offset');
  c := qt.cursor('dropq', 'p', 'g');
  PERFORM qt.eq(c.batch_retry_count, 0, 'drop resets count');
  PERFORM qt.eq(c.worker_id, NULL::text, 'drop releases');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.log_dlq WHERE partition_id = qt.pid('dropq', 'p')), 0, 'no dlq row');
  -- a completed ack after a dropped message is not held back by it
  PERFORM queen.configure_queue(qt.tenant(), 'dropq', '{"retryLimit":0}', 'merge');
  PERFORM qt.push('dropq', 'p', 11, 3);                                 -- ids 11..13 at 2..4
  r := qt.pop('dropq', 'p', 'g', 5, 1, 'c');
  r := qt.ack('dropq', 'p', 'g', 'c', ARRAY[11, 12, 13], ARRAY['completed', 'failed', 'completed']);
  PERFORM qt.eq((r->>'dropped')::boolean, true, 'dropped mid-batch');
  PERFORM qt.eq((r->>'committed')::bigint, 4::bigint, 'cursor past the drop to the completed ack');
  PERFORM qt.eq(r->'superseded', '[]'::jsonb, 'nothing superseded');
END $$;

-- Lease-less acks, error answers.
DO $$
DECLARE r jsonb; pid uuid;
BEGIN
  PERFORM qt.push('llq', 'p', 1, 4);
  pid := qt.pid('llq', 'p');
  r := qt.pop('llq', 'p', 'g', 4, 1, 'lw');
  -- no worker given: no lease check, still advances inside the leased batch
  r := qt.ack('llq', 'p', 'g', '', ARRAY[2], ARRAY['completed']);
  PERFORM qt.eq((r->>'ok')::boolean, true, 'lease-less ok');
  PERFORM qt.eq((r->>'committed')::bigint, 1::bigint, 'lease-less advances');
  r := qt.ack('llq', 'p', 'g', NULL, ARRAY[4], ARRAY['completed']);
  PERFORM qt.eq((r->>'committed')::bigint, 3::bigint, 'NULL worker = lease-less');
  PERFORM qt.eq((r->>'leaseReleased')::boolean, true, 'reaching batch_end releases');
  -- no batch at all: ahead of the cursor is ackable
  PERFORM qt.push('llq', 'p', 10, 3);                                 -- 4..6, never popped
  r := qt.ack('llq', 'p', 'g', '', ARRAY[11], ARRAY['completed']);
  PERFORM qt.eq((r->>'committed')::bigint, 5::bigint, 'lease-less ack ahead of the cursor');
  PERFORM qt.eq(r->'noop', '[]'::jsonb, 'without noop');
  PERFORM qt.eq((r->>'leaseReleased')::boolean, false, 'nothing to release');
  -- a wrong worker is refused when given
  r := qt.pop('llq', 'p', 'g', 4, 1, 'lw2');
  r := qt.ack('llq', 'p', 'g', 'someone-else', ARRAY[12], ARRAY['completed']);
  PERFORM qt.eq(r, '{"ok":false,"error":"invalid or expired lease"}'::jsonb, 'wrong worker');
  PERFORM qt.eq((qt.cursor('llq', 'p', 'g')).committed, 5::bigint, 'refused ack changes nothing');

  r := qt.ack('llq', 'p', 'nobody', 'w', ARRAY[1], ARRAY['completed']);
  PERFORM qt.eq(r, '{"ok":false,"error":"consumer not found"}'::jsonb, 'consumer not found');
  r := queen.log_ack('00000000-0000-0000-0000-0000000000bb', pid, 'g', '', ARRAY[qt.h(12)], ARRAY['completed']);
  PERFORM qt.eq(r, '{"ok":false,"error":"partition not owned by tenant"}'::jsonb, 'foreign tenant');
  r := queen.log_ack(qt.tenant(), gen_random_uuid(), 'g', '', ARRAY[qt.h(12)], ARRAY['completed']);
  PERFORM qt.eq(r, '{"ok":false,"error":"partition not owned by tenant"}'::jsonb, 'unknown partition');
  r := queen.log_ack(qt.tenant(), pid, 'g', '', ARRAY[qt.h(12)], NULL);
  PERFORM qt.eq((r->>'committed')::bigint, 6::bigint, 'NULL statuses = completed');
  BEGIN
    PERFORM queen.log_ack(qt.tenant(), pid, 'g', '', ARRAY[qt.h(1), qt.h(2)], ARRAY['completed']);
    RAISE EXCEPTION 'no raise';
  EXCEPTION WHEN OTHERS THEN
    PERFORM qt.ok(SQLERRM LIKE 'QACK misaligned%', 'misaligned raises: ' || SQLERRM);
  END;
  r := queen.log_ack(qt.tenant(), pid, 'g', '', '{}'::bytea[], '{}'::text[]);
  PERFORM qt.eq((r->>'ok')::boolean, true, 'empty ack ok');
END $$;

-- The hash cut an ack reads: only the indexes in [from, to], clamped to the blob.
DO $$
BEGIN
  PERFORM qt.eq((SELECT array_agg(x.idx ORDER BY x.idx) FROM queen.log_unnest_hashes_between(qt.hseq(1, 10), 3, 5) x),
                ARRAY[3, 4, 5], 'inner range');
  PERFORM qt.eq((SELECT array_agg(x.h ORDER BY x.idx) FROM queen.log_unnest_hashes_between(qt.hseq(1, 10), 3, 4) x),
                ARRAY[qt.h(4), qt.h(5)], 'slices are the hashes at those indexes');
  PERFORM qt.eq((SELECT count(*) FROM queen.log_unnest_hashes_between(qt.hseq(1, 10), -7, 9223372036854775807)),
                10::bigint, 'clamped to the blob');
  PERFORM qt.eq((SELECT count(*) FROM queen.log_unnest_hashes_between(qt.hseq(1, 10), 10, 20)), 0::bigint,
                'past the end: nothing');
END $$;

-- The one-statement ack (one completed item, the lease's next message: R__40's "One-statement ack") acts exactly as
-- the full path, and everything it does not own falls through to it: a hash that is not the leased one, another
-- worker's lease, an expired lease, a status that is not completed, the same ack again, an ack out of order. It writes
-- one row version and reads the segment hashes through one index scan; the full path read it twice (a probe, then the range).
DO $$
DECLARE r jsonb; c queen.log_consumers; pid uuid; s0 bigint; u0 bigint;
BEGIN
  PERFORM qt.push('ack1q', 'p', 1, 1);                                  -- id 1 at offset 0
  PERFORM qt.push('ack1q', 'p', 2, 1);                                  -- id 2 at offset 1
  PERFORM qt.push('ack1q', 'p', 3, 1);                                  -- id 3 at offset 2
  pid := qt.pid('ack1q', 'p');
  r := qt.pop('ack1q', 'p', '__QUEUE_MODE__', 1, 1, 'w1');
  PERFORM qt.eq(qt.offs(r), ARRAY[0]::bigint[], 'one-message lease of offset 0');
  -- not the leased message's hash: unresolved, nothing moves, the lease stays
  r := qt.ack('ack1q', 'p', '__QUEUE_MODE__', 'w1', ARRAY[2], ARRAY['completed']);
  PERFORM qt.eq(r->'unresolved', '[0]'::jsonb, 'another message''s hash: unresolved');
  PERFORM qt.eq((qt.cursor('ack1q', 'p', '__QUEUE_MODE__')).worker_id, 'w1', 'lease kept');
  -- another worker: refused
  r := qt.ack('ack1q', 'p', '__QUEUE_MODE__', 'w9', ARRAY[1], ARRAY['completed']);
  PERFORM qt.eq(r->>'error', 'invalid or expired lease', 'another worker''s ack is refused');
  -- the worker's own ack: one row version, one log_segments index scan, the same verdict as the full path
  SELECT n_tup_upd INTO u0 FROM pg_stat_xact_user_tables WHERE relid = 'queen.log_consumers'::regclass;
  s0 := pg_stat_get_xact_numscans('queen.log_segments_pkey'::regclass);
  r := qt.ack('ack1q', 'p', '__QUEUE_MODE__', 'w1', ARRAY[1], ARRAY['completed']);
  PERFORM qt.eq(r, jsonb_build_object('ok', true, 'dlq', false, 'dropped', false, 'leaseReleased', true,
                                      'committed', 0, 'acked', 1, 'retryCount', 0, 'noop', '[]'::jsonb,
                                      'stale', '[]'::jsonb, 'unresolved', '[]'::jsonb, 'superseded', '[]'::jsonb,
                                      'blockedBy', NULL), 'batch-1 ack verdict');
  PERFORM qt.eq((SELECT n_tup_upd FROM pg_stat_xact_user_tables WHERE relid = 'queen.log_consumers'::regclass) - u0,
                1::bigint, 'one row version of the cursor');
  PERFORM qt.eq(pg_stat_get_xact_numscans('queen.log_segments_pkey'::regclass)
                - s0, 1::bigint, 'one log_segments index scan');
  c := qt.cursor('ack1q', 'p', '__QUEUE_MODE__');
  PERFORM qt.eq(c.committed, 0::bigint, 'cursor at 0');
  PERFORM qt.eq(c.worker_id || '', NULL::text, 'lease released');
  PERFORM qt.eq(c.batch_end, NULL::bigint, 'batch_end cleared');
  PERFORM qt.eq(c.attempt_count, 0, 'attempts reset');
  PERFORM qt.eq(c.total_consumed, 1::bigint, 'total_consumed 1');
  -- the same ack again: a no-op success (the full path's released-lease rule)
  r := qt.ack('ack1q', 'p', '__QUEUE_MODE__', 'w1', ARRAY[1], ARRAY['completed']);
  PERFORM qt.eq(r->'noop', '[0]'::jsonb, 'the same ack again: noop');
  -- an expired one-message lease: refused, the message is redelivered
  r := qt.pop('ack1q', 'p', '__QUEUE_MODE__', 1, 1, 'w2');
  PERFORM qt.eq(qt.offs(r), ARRAY[1]::bigint[], 'lease of offset 1');
  UPDATE queen.log_consumers SET lease_expires_at = clock_timestamp() - interval '1 second'
  WHERE partition_id = pid AND consumer_group = '__QUEUE_MODE__';
  r := qt.ack('ack1q', 'p', '__QUEUE_MODE__', 'w2', ARRAY[2], ARRAY['completed']);
  PERFORM qt.eq(r->>'error', 'invalid or expired lease', 'expired lease: refused');
  r := qt.pop('ack1q', 'p', '__QUEUE_MODE__', 1, 1, 'w3');
  PERFORM qt.eq(qt.offs(r), ARRAY[1]::bigint[], 'redelivered after expiry');
  PERFORM qt.eq((r->0->>'a')::int, 2, 'attempt 2');
  -- a negative status on a one-message lease goes the full path (retry budget charged, redelivered)
  r := qt.ack('ack1q', 'p', '__QUEUE_MODE__', 'w3', ARRAY[2], ARRAY['failed']);
  PERFORM qt.eq((r->>'committed')::bigint, 0::bigint, 'failed: no move');
  PERFORM qt.eq((qt.cursor('ack1q', 'p', '__QUEUE_MODE__')).batch_retry_count, 1, 'failed charges 1');
  r := qt.pop('ack1q', 'p', '__QUEUE_MODE__', 1, 1, 'w4');
  r := qt.ack('ack1q', 'p', '__QUEUE_MODE__', 'w4', ARRAY[2], ARRAY['completed']);
  PERFORM qt.eq((r->>'committed')::bigint, 1::bigint, 'acked after the retry');
  PERFORM qt.eq((qt.cursor('ack1q', 'p', '__QUEUE_MODE__')).batch_retry_count, 0, 'retry count reset on release');
END $$;

-- A batch acked one message at a time: in order, each ack is the one statement (the lease is kept until the batch's
-- end, then released with the counts reset); out of order, the full path (the implicit ack of everything below).
DO $$
DECLARE r jsonb; c queen.log_consumers; s0 bigint;
BEGIN
  PERFORM qt.push('ack1q2', 'p', 1, 5);                                 -- ids 1..5 at offsets 0..4, one txns row
  r := qt.pop('ack1q2', 'p', '__QUEUE_MODE__', 3, 1, 'w');
  PERFORM qt.eq(qt.offs(r), ARRAY[0, 1, 2]::bigint[], 'batch 0..2');
  s0 := pg_stat_get_xact_numscans('queen.log_segments_pkey'::regclass);
  r := qt.ack('ack1q2', 'p', '__QUEUE_MODE__', 'w', ARRAY[1], ARRAY['completed']);
  PERFORM qt.eq(r, jsonb_build_object('ok', true, 'dlq', false, 'dropped', false, 'leaseReleased', false,
                                      'committed', 0, 'acked', 1, 'retryCount', 0, 'noop', '[]'::jsonb,
                                      'stale', '[]'::jsonb, 'unresolved', '[]'::jsonb, 'superseded', '[]'::jsonb,
                                      'blockedBy', NULL), 'first of three: lease kept');
  PERFORM qt.eq(pg_stat_get_xact_numscans('queen.log_segments_pkey'::regclass) - s0, 1::bigint,
                'in-order ack: one log_segments index scan');
  c := qt.cursor('ack1q2', 'p', '__QUEUE_MODE__');
  PERFORM qt.eq(c.worker_id, 'w', 'still leased');
  PERFORM qt.eq(c.batch_end, 2::bigint, 'batch_end kept');
  PERFORM qt.eq(c.attempt_count, 1, 'attempt kept while leased');
  -- out of order: offset 2 before 1 goes the full path, which acks 1 and 2 implicitly and releases
  r := qt.ack('ack1q2', 'p', '__QUEUE_MODE__', 'w', ARRAY[3], ARRAY['completed']);
  PERFORM qt.eq((r->>'committed')::bigint, 2::bigint, 'out of order: implicit ack to 2');
  PERFORM qt.eq((r->>'acked')::bigint, 2::bigint, 'two acked');
  PERFORM qt.eq((r->>'leaseReleased')::boolean, true, 'batch end: released');
  -- in order to the batch's end: released on the last one
  r := qt.pop('ack1q2', 'p', '__QUEUE_MODE__', 2, 1, 'w2');
  PERFORM qt.eq(qt.offs(r), ARRAY[3, 4]::bigint[], 'batch 3..4');
  r := qt.ack('ack1q2', 'p', '__QUEUE_MODE__', 'w2', ARRAY[4], ARRAY['completed']);
  PERFORM qt.eq((r->>'leaseReleased')::boolean, false, '3: lease kept');
  r := qt.ack('ack1q2', 'p', '__QUEUE_MODE__', 'w2', ARRAY[5], ARRAY['completed']);
  PERFORM qt.eq((r->>'leaseReleased')::boolean, true, '4: released');
  PERFORM qt.eq((r->>'committed')::bigint, 4::bigint, 'cursor at 4');
  c := qt.cursor('ack1q2', 'p', '__QUEUE_MODE__');
  PERFORM qt.eq(c.worker_id || '', NULL::text, 'released');
  PERFORM qt.eq(c.attempt_count, 0, 'attempts reset at the batch end');
  PERFORM qt.eq(c.total_consumed, 5::bigint, 'total_consumed 5');
END $$;
