-- Pops never wait on locks (SKIP LOCKED / try locks). A second session is driven through dblink; the test is
-- skipped when the dblink extension is not installed. lock_timeout turns any lock wait into a failure.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'dblink') THEN
    CREATE EXTENSION IF NOT EXISTS dblink;
  ELSE
    RAISE NOTICE 'dblink not available: concurrency test skipped';
  END IF;
END $$;

DO $$
DECLARE r jsonb; t0 timestamptz;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'dblink') THEN RETURN; END IF;
  PERFORM set_config('lock_timeout', '1500ms', true);
  PERFORM qt.push('conc.q', 'p1', 1, 2);
  PERFORM qt.push('conc.q', 'p2', 3, 2);
  -- register group g up front (auto-acking offset 0 of p1), so scenario 1 exercises the cursor-row lock only
  PERFORM qt.pop('conc.q', 'p1', 'g', 1, 1, '', auto_ack => true);
  PERFORM dblink_connect('b', qt.connstr());
END $$;

-- (each DO block is its own transaction, so the setup above is committed and visible to session B)
DO $$
DECLARE r jsonb; n int; t0 timestamptz;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'dblink') THEN RETURN; END IF;
  PERFORM set_config('lock_timeout', '1500ms', true);

  -- 1. B holds one cursor row locked (an in-flight pop of partition p1, group g): A skips it and takes p2.
  PERFORM dblink_exec('b', 'BEGIN');
  PERFORM * FROM dblink('b', $q$SELECT count(*) FROM queen.log_pop('00000000-0000-0000-0000-000000000001',
      'conc.q', 'p1', 'g', 10, 1, 30, 'wb', false, 'all', NULL)$q$) AS x(n bigint);
  t0 := clock_timestamp();
  r := qt.pop('conc.q', NULL, 'g', 10, 0, 'wa');
  PERFORM qt.ok(clock_timestamp() - t0 < interval '1 second', 'pop did not wait');
  PERFORM qt.eq((SELECT string_agg(DISTINCT e->>'p', ',') FROM jsonb_array_elements(r) e), 'p2', 'locked partition skipped');
  PERFORM dblink_exec('b', 'ROLLBACK');
END $$;

DO $$
DECLARE r jsonb;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'dblink') THEN RETURN; END IF;
  PERFORM set_config('lock_timeout', '1500ms', true);
  -- 2. B is registering a brand-new group (metadata insert + bulk seed, uncommitted): A's pop of that group skips
  --    the queue instead of waiting on the registration.
  PERFORM dblink_exec('b', 'BEGIN');
  PERFORM * FROM dblink('b', $q$SELECT count(*) FROM queen.log_pop('00000000-0000-0000-0000-000000000001',
      'conc.q', NULL, 'fresh', 1, 1, 30, 'wb', false, 'all', NULL)$q$) AS x(n bigint);
  r := qt.pop('conc.q', NULL, 'fresh', 10, 0, 'wa');
  PERFORM qt.eq(r, '[]'::jsonb, 'concurrent registration: skipped, no wait');
  PERFORM dblink_exec('b', 'COMMIT');
END $$;

DO $$
DECLARE r jsonb;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'dblink') THEN RETURN; END IF;
  PERFORM set_config('lock_timeout', '1500ms', true);
  -- after B committed its registration, A pops what B did not lease
  r := qt.pop('conc.q', NULL, 'fresh', 10, 0, 'wa');
  PERFORM qt.eq(qt.taken(r), 2, 'after the registration committed: the other partition');

  -- 3. B has an uncommitted push on p1 (partition row lock held): A's pop of a new group on p1 (cursor insert with
  --    an FK check on that partition) does not wait and delivers the committed data only.
  PERFORM dblink_exec('b', 'BEGIN');
  PERFORM * FROM dblink('b', $q$SELECT queen.log_push('00000000-0000-0000-0000-000000000001', 'conc.q', 'p1', 1,
      decode('000000000000000000000000000000ff', 'hex'), '\x00')::text$q$) AS x(j text);
  r := qt.pop('conc.q', 'p1', 'during_push', 10, 1, 'wa');
  PERFORM qt.eq(qt.offs(r), ARRAY[0,1]::bigint[], 'pop during an in-flight push');
  -- a lease-less ack on p1 during the push does not wait either (acks lock cursor rows only)
  r := qt.ack('conc.q', 'p1', 'during_push', 'wa', ARRAY[2], ARRAY['completed']);
  PERFORM qt.eq((r->>'committed')::bigint, 1::bigint, 'ack during an in-flight push');
  PERFORM dblink_exec('b', 'COMMIT');
  PERFORM dblink_disconnect('b');
END $$;
