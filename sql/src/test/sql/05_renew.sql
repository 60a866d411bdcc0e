-- Lease renewal: never shortens, only live leases of that worker, tenant-scoped.
DO $$
DECLARE r jsonb; e1 timestamptz; e2 timestamptz;
BEGIN
  PERFORM qt.push('renq', 'a', 1, 1);
  PERFORM qt.push('renq', 'b', 2, 1);
  PERFORM qt.push('renq', 'c', 3, 1);
  r := qt.pop('renq', NULL, 'g', 10, 0, 'rw', lease_s => 30);
  PERFORM qt.eq(qt.taken(r), 3, 'three partitions leased by rw');
  -- make one lease expired: it must not be renewed
  UPDATE queen.log_consumers SET lease_expires_at = now() - interval '1 second'
  WHERE partition_id = qt.pid('renq', 'c') AND consumer_group = 'g';
  e1 := (qt.cursor('renq', 'a', 'g')).lease_expires_at;

  r := queen.log_renew_lease(qt.tenant(), 'rw', 10);
  PERFORM qt.eq((r->>'renewed')::int, 2, 'two live leases renewed');
  PERFORM qt.eq((qt.cursor('renq', 'a', 'g')).lease_expires_at, e1, 'a shorter renew never shortens');
  PERFORM qt.ok(r->>'expiresAt' ~ '^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$', 'expiresAt format');
  PERFORM qt.ok((r->>'expiresAt')::timestamptz BETWEEN now() + interval '25 seconds' AND now() + interval '35 seconds', 'expiresAt = kept 30 s');
  PERFORM qt.ok((qt.cursor('renq', 'c', 'g')).lease_expires_at < now(), 'expired lease untouched');

  r := queen.log_renew_lease(qt.tenant(), 'rw', 300);
  PERFORM qt.eq((r->>'renewed')::int, 2, 'renewed again');
  e2 := (qt.cursor('renq', 'b', 'g')).lease_expires_at;
  PERFORM qt.ok(e2 BETWEEN now() + interval '290 seconds' AND now() + interval '310 seconds', 'extended to 300 s');
  PERFORM qt.eq((r->>'expiresAt')::timestamptz, least(e2, (qt.cursor('renq', 'a', 'g')).lease_expires_at), 'earliest new expiry');

  r := queen.log_renew_lease('00000000-0000-0000-0000-0000000000cc', 'rw', 300);
  PERFORM qt.eq(r, '{"renewed":0,"expiresAt":null}'::jsonb, 'foreign tenant renews nothing');
  r := queen.log_renew_lease(qt.tenant(), 'nobody', 300);
  PERFORM qt.eq(r, '{"renewed":0,"expiresAt":null}'::jsonb, 'unknown worker');
  r := queen.log_renew_lease(qt.tenant(), '', 300);
  PERFORM qt.eq(r, '{"renewed":0,"expiresAt":null}'::jsonb, 'empty worker');
  -- the renewed lease is still the one live lease: another worker cannot claim
  PERFORM qt.eq(qt.pop('renq', 'a', 'g', 10, 1, 'other'), '[]'::jsonb, 'renewed lease holds');
END $$;
