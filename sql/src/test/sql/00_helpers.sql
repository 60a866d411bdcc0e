-- Test helpers (schema qt, test database only).
CREATE SCHEMA IF NOT EXISTS qt;

-- Fake 16-byte hash for integer n: 00..0n (big-endian).
CREATE OR REPLACE FUNCTION qt.h(n bigint) RETURNS bytea LANGUAGE sql IMMUTABLE AS
$$ SELECT decode(lpad(to_hex(n), 32, '0'), 'hex') $$;

-- Concatenated hashes for n .. n+cnt-1.
CREATE OR REPLACE FUNCTION qt.hseq(n bigint, cnt int) RETURNS bytea LANGUAGE sql IMMUTABLE AS
$$ SELECT string_agg(qt.h(i), ''::bytea ORDER BY i) FROM generate_series(n, n + cnt - 1) i $$;

-- Concatenated hashes of the given ids.
CREATE OR REPLACE FUNCTION qt.hs(VARIADIC ns bigint[]) RETURNS bytea LANGUAGE sql IMMUTABLE AS
$$ SELECT string_agg(qt.h(u.n), ''::bytea ORDER BY u.o) FROM unnest(ns) WITH ORDINALITY u(n, o) $$;

CREATE OR REPLACE FUNCTION qt.ok(cond boolean, msg text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF cond IS NOT TRUE THEN RAISE EXCEPTION 'ASSERT FAILED: %', msg; END IF;
END $$;

CREATE OR REPLACE FUNCTION qt.eq(got anyelement, want anyelement, msg text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF got IS DISTINCT FROM want THEN RAISE EXCEPTION 'ASSERT FAILED: % (got %, want %)', msg, got, want; END IF;
END $$;

CREATE OR REPLACE FUNCTION qt.tenant() RETURNS uuid LANGUAGE sql IMMUTABLE AS
$$ SELECT '00000000-0000-0000-0000-000000000001'::uuid $$;

-- Push cnt frames with hash ids n..n+cnt-1 to (queue, partition), default tenant.
CREATE OR REPLACE FUNCTION qt.push(q text, p text, n bigint, cnt int, t uuid DEFAULT qt.tenant()) RETURNS jsonb
LANGUAGE sql AS $$ SELECT queen.log_push(t, q, p, cnt, qt.hseq(n, cnt), convert_to('blob-' || n || 'x' || cnt, 'UTF8')) $$;

CREATE OR REPLACE FUNCTION qt.pid(q text, p text, t uuid DEFAULT qt.tenant()) RETURNS uuid LANGUAGE sql AS $$
  SELECT p2.id FROM queen.log_partitions p2 JOIN queen.queues q2 ON q2.id = p2.queue_id
  WHERE q2.tenant_id = t AND q2.name = q AND p2.name = p $$;

-- Pop summary: one row per delivered slice, as a compact jsonb array of
-- {"p":partition,"b":base,"s":start,"t":take,"a":attempt,"l":leased?}.
CREATE OR REPLACE FUNCTION qt.pop(q text, p text, grp text, budget int, maxp int, worker text,
                                  auto_ack boolean DEFAULT false, mode text DEFAULT 'all',
                                  sub_from timestamptz DEFAULT NULL, lease_s int DEFAULT 0,
                                  t uuid DEFAULT qt.tenant()) RETURNS jsonb
LANGUAGE sql AS $$
  SELECT COALESCE(jsonb_agg(jsonb_build_object('p', r.partition_name, 'b', r.base_offset, 's', r.start_idx,
                                               't', r.take, 'a', r.delivery_attempt, 'n', r.msg_count,
                                               'l', r.lease_expires_at IS NOT NULL, 'q', r.queue_name,
                                               'pid', r.partition_id)
                            ORDER BY r.ord), '[]'::jsonb)
  FROM (SELECT x.*, row_number() OVER () AS ord
        FROM queen.log_pop(t, q, p, grp, budget, maxp, lease_s, worker, auto_ack, mode, sub_from) x) r $$;

-- Total messages delivered in a pop summary.
CREATE OR REPLACE FUNCTION qt.taken(j jsonb) RETURNS int LANGUAGE sql IMMUTABLE AS
$$ SELECT COALESCE(sum((e->>'t')::int), 0)::int FROM jsonb_array_elements(j) e $$;

-- Delivered absolute offsets of a pop summary, in delivery order.
CREATE OR REPLACE FUNCTION qt.offs(j jsonb) RETURNS bigint[] LANGUAGE sql IMMUTABLE AS $$
  SELECT COALESCE(array_agg(o ORDER BY e.ord, o), '{}')
  FROM jsonb_array_elements(j) WITH ORDINALITY e(v, ord),
       LATERAL generate_series((v->>'b')::bigint + (v->>'s')::int, (v->>'b')::bigint + (v->>'s')::int + (v->>'t')::int - 1) o $$;

CREATE OR REPLACE FUNCTION qt.cursor(q text, p text, grp text) RETURNS queen.log_consumers LANGUAGE sql AS $$
  SELECT c.* FROM queen.log_consumers c WHERE c.partition_id = qt.pid(q, p) AND c.consumer_group = grp $$;

-- Ack hash ids with statuses.
CREATE OR REPLACE FUNCTION qt.ack(q text, p text, grp text, worker text, ids bigint[], sts text[]) RETURNS jsonb
LANGUAGE sql AS $$
  SELECT queen.log_ack(qt.tenant(), qt.pid(q, p), grp, worker,
                          (SELECT array_agg(qt.h(i) ORDER BY o) FROM unnest(ids) WITH ORDINALITY u(i, o)), sts) $$;

-- log_push_multi's rows as one jsonb array in input order ({status, partitionId, baseOffset | dups}), no promises.
CREATE OR REPLACE FUNCTION qt.multi(t uuid[], q text[], p text[], c int[], h bytea[], b bytea[]) RETURNS jsonb
LANGUAGE sql AS $$
  SELECT COALESCE(jsonb_agg(jsonb_strip_nulls(jsonb_build_object('status', r.status, 'partitionId', r.partition_id,
                                                                 'baseOffset', r.base_offset, 'dups', r.dups))
                            ORDER BY r.idx), '[]'::jsonb)
  FROM queen.log_push_multi(t, q, p, c, h, b, NULL, NULL, NULL, NULL) r $$;

-- The message of the error `sql` raises, which must carry SQLSTATE `state`.
CREATE OR REPLACE FUNCTION qt.raises(sql text, state text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE got text; msg text;
BEGIN
  BEGIN
    EXECUTE sql;
  EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS got = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
    IF got <> state THEN RAISE EXCEPTION 'ASSERT FAILED: % raised % (%), want %', sql, got, msg, state; END IF;
    RETURN msg;
  END;
  RAISE EXCEPTION 'ASSERT FAILED: % raised nothing, want %', sql, state;
END $$;

-- A connection string to this database, for a second session through dblink.
CREATE OR REPLACE FUNCTION qt.connstr() RETURNS text LANGUAGE sql AS $$
  SELECT format('dbname=%s port=%s user=%s host=%s', current_database(), current_setting('port'), current_user,
                COALESCE(host(inet_server_addr()), split_part(current_setting('unix_socket_directories'), ',', 1))) $$;

-- True when a second session can be driven through dblink (the extension is created on first use); false, with a
-- notice naming what is skipped, where the extension is not installed.
CREATE OR REPLACE FUNCTION qt.dblink(what text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'dblink') THEN
    RAISE NOTICE 'dblink not available: % skipped', what;
    RETURN false;
  END IF;
  CREATE EXTENSION IF NOT EXISTS dblink;
  RETURN true;
END $$;
