-- Hot-path shape with 10,000 partitions: pops must not scan every partition.
--   (a) backlog everywhere, no empty-scan floor: random-pivot walk stops at the candidate LIMIT;
--   (b) caught-up group: after one empty scan the floor limits candidates to recently written partitions.
-- Timings are printed; the bounds are deliberately generous (they catch O(partitions) regressions, not jitter).
DO $$
DECLARE k int; n int := 10000; b int := 1000; r jsonb; t0 timestamptz; ms numeric; total int;
BEGIN
  FOR k IN 0 .. n / b - 1 LOOP
    PERFORM qt.multi(
      array_fill(qt.tenant(), ARRAY[b]),
      array_fill('perf.q'::text, ARRAY[b]),
      (SELECT array_agg('p' || lpad((k * b + i)::text, 5, '0') ORDER BY i) FROM generate_series(0, b - 1) i),
      array_fill(1, ARRAY[b]),
      (SELECT array_agg(qt.h(k * b + i) ORDER BY i) FROM generate_series(0, b - 1) i),
      array_fill('\x00'::bytea, ARRAY[b]));
  END LOOP;
  PERFORM qt.eq((SELECT count(*)::int FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = 'perf.q'), n, '10k partitions');
END $$;
ANALYZE queen.log_partitions;
ANALYZE queen.log_consumers;

DO $$
DECLARE k int; r jsonb; t0 timestamptz; ms numeric; total int := 0;
BEGIN
  -- registration + bulk seed of 10k cursors happens in the first pop
  t0 := clock_timestamp();
  r := qt.pop('perf.q', NULL, '__QUEUE_MODE__', 10, 1, 'seed');
  RAISE NOTICE 'first pop (registers + seeds 10k cursors): % ms', round(extract(epoch FROM clock_timestamp() - t0) * 1000, 1);
  -- (a) 200 wildcard pops over a 10k-partition backlog
  t0 := clock_timestamp();
  FOR k IN 1 .. 200 LOOP
    r := qt.pop('perf.q', NULL, '__QUEUE_MODE__', 10, 1, 'w' || k);
    total := total + qt.taken(r);
  END LOOP;
  ms := extract(epoch FROM clock_timestamp() - t0) * 1000 / 200;
  RAISE NOTICE 'backlog pop: % ms/pop', round(ms, 2);
  PERFORM qt.eq(total, 200, 'every pop delivered one partition');
  PERFORM qt.ok(ms < 10, 'backlog pop under 10 ms (was ' || round(ms, 2) || ')');
END $$;

DO $$
DECLARE k int; r jsonb; t0 timestamptz; ms numeric; total int := 0;
BEGIN
  -- drain the queue for group 'idle' with big uncapped autoAck pops (each claims at most 512 candidates),
  -- then: one empty scan sets the floor
  FOR k IN 1 .. 40 LOOP
    r := qt.pop('perf.q', NULL, 'idle', 20000, 0, '', auto_ack => true);
    PERFORM qt.ok(qt.taken(r) <= 512, 'uncapped pop claims at most 512 candidates');
    total := total + qt.taken(r);
    EXIT WHEN r = '[]'::jsonb;
  END LOOP;
  PERFORM qt.eq(total, 10000, 'drained 10k');
  UPDATE queen.log_partitions p SET last_write_at = now() - interval '1 hour'
  FROM queen.queues q WHERE q.id = p.queue_id AND q.name = 'perf.q';
  t0 := clock_timestamp();
  r := qt.pop('perf.q', NULL, 'idle', 10, 1, 'e0');
  RAISE NOTICE 'first empty pop (full scan, sets the floor): % ms', round(extract(epoch FROM clock_timestamp() - t0) * 1000, 1);
  PERFORM qt.eq(r, '[]'::jsonb, 'empty');
  PERFORM qt.ok((SELECT last_empty_scan_at > now() - interval '1 minute' FROM queen.consumer_watermarks w
                 JOIN queen.queues q ON q.id = w.queue_id WHERE q.name = 'perf.q' AND w.consumer_group = 'idle'), 'floor set');
END $$;
ANALYZE queen.log_partitions;

DO $$
DECLARE k int; r jsonb; t0 timestamptz; ms numeric;
BEGIN
  t0 := clock_timestamp();
  FOR k IN 1 .. 200 LOOP
    r := qt.pop('perf.q', NULL, 'idle', 10, 1, 'e' || k);
  END LOOP;
  ms := extract(epoch FROM clock_timestamp() - t0) * 1000 / 200;
  RAISE NOTICE 'empty pop with floor: % ms/pop', round(ms, 3);
  PERFORM qt.eq(r, '[]'::jsonb, 'still empty');
  PERFORM qt.ok(ms < 5, 'empty pop under 5 ms (was ' || round(ms, 3) || ')');
  -- a push to one partition is found through the floor
  PERFORM qt.push('perf.q', 'p04242', 424242, 1);
  r := qt.pop('perf.q', NULL, 'idle', 10, 1, 'found');
  PERFORM qt.eq(r->0->>'p', 'p04242', 'fresh write found through the floor');
  -- a lease-held backlog is not stranded: with an expired lease and no new write, the partition is still found
  UPDATE queen.log_consumers SET lease_expires_at = now() - interval '1 second'
  WHERE partition_id = qt.pid('perf.q', 'p04242') AND consumer_group = 'idle';
  r := qt.pop('perf.q', NULL, 'idle', 10, 1, 'again');
  PERFORM qt.eq(r->0->>'p', 'p04242', 'expired lease redelivered');
  PERFORM qt.eq((r->0->>'a')::int, 2, 'attempt 2');
END $$;
