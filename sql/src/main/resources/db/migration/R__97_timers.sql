-- =====================================================================================================================
-- Timers (issue 36): the table timers (V21). A timer is a message promised for later: its row waits here and, once
-- due, ONE transaction claims it, pushes its message (the broker calls log_push_multi) and deletes it, so the message
-- reaches its queue exactly once across nodes and restarts. The wire contract, result shapes and SQLSTATE registry are
-- in docs/design/queen2-contract.md; the rules for editing a repeatable migration are at the top of R__10_common.sql.
--
--   timers_apply   schedule | reschedule | cancel, one call per POST /api/v1/timers, DELETE /api/v1/timers/...,
--                  and the `timers` rider of a transaction
--   timers_claim   the due timers, oldest first, locked FOR UPDATE SKIP LOCKED (inside the fire's transaction)
--   timers_fired   deletes the claimed timers whose messages the same transaction pushed
--   timers_fail    after a failed fire: backs the timers off and records the error
--   timers_peek    one timer with its payload
--   timers_list    one queue's timers, keyset-paged by key
--   timers_probe   the sweep's wake-up and the Prometheus gauges
--
-- Lock order: the timer rows a call touches are taken in ascending (queue, timer key) byte order; a transaction takes
-- them after its kv rows and before any queue, partition or cursor. The fire never waits on a timer row: its claim
-- skips the rows another transaction holds, and its delete touches only the rows its claim locked.
--
-- A timer never writes queues or partitions: the queue and partition are created when its message is pushed, as a
-- push creates them. Deleting a queue leaves its timers; they create it again when they fire.
-- =====================================================================================================================

-- Schedule, reschedule or cancel, every operation of one call. Parallel arrays, one element per operation in request
-- order; arrays of schedule-only fields may hold NULL for a cancel. p_delays are milliseconds from the call's instant
-- (negative is legal: the timer is due at once); p_message_ids are minted by the broker, never read from a client;
-- p_payloads are the message's JSON as bytes (the envelope when p_encrypted); p_producer_sub is the authenticated
-- subject of the caller. Validation happens before any write (QV9xx); the operations then run in ascending
-- (queue, timer key) byte order. schedule and reschedule are the same upsert: a new timer answers 'scheduled', a
-- replaced one 'rescheduled' (its attempts and last error reset). cancel deletes: 'cancelled' (ok, with the deleted
-- timer's transaction id) or 'absent' (not ok: no such timer pending, which may mean it already fired; the caller's
-- txn is echoed). A timer whose fire is in progress is locked by the fire's transaction: schedule and cancel wait for
-- it, then see it gone ('scheduled' anew, 'absent'). One row per operation, in request order.
CREATE OR REPLACE FUNCTION queen.timers_apply(
    p_tenant       uuid,
    p_producer_sub text,
    p_ops          text[],
    p_queues       text[],
    p_keys         text[],
    p_partitions   text[],
    p_delays       bigint[],
    p_txns         text[],
    p_message_ids  uuid[],
    p_payloads     bytea[],
    p_encrypted    boolean[],
    p_now          timestamptz DEFAULT NULL
) RETURNS TABLE (idx integer, ok boolean, status text, queue text, timer_key text, txn text, message_id uuid,
                 deliver_at timestamptz)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE
    v_tenant   uuid := COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001');
    v_now      timestamptz := COALESCE(p_now, clock_timestamp());
    v_n        integer := COALESCE(cardinality(p_ops), 0);
    v_i        integer;
    v_j        integer;
    v_op       text;
    v_part     text;
    v_due      timestamptz;
    v_ins      boolean;
    v_txn      text;
    r_ok       boolean[];
    r_status   text[];
    r_txn      text[];
    r_mid      uuid[];
    r_due      timestamptz[];
BEGIN
    IF COALESCE(cardinality(p_queues), 0) <> v_n OR COALESCE(cardinality(p_keys), 0) <> v_n
       OR (p_partitions IS NOT NULL AND cardinality(p_partitions) <> v_n)
       OR (p_delays IS NOT NULL AND cardinality(p_delays) <> v_n)
       OR (p_txns IS NOT NULL AND cardinality(p_txns) <> v_n)
       OR (p_message_ids IS NOT NULL AND cardinality(p_message_ids) <> v_n)
       OR (p_payloads IS NOT NULL AND cardinality(p_payloads) <> v_n)
       OR (p_encrypted IS NOT NULL AND cardinality(p_encrypted) <> v_n) THEN
        RAISE EXCEPTION 'timers_apply: misaligned arrays (% operations)', v_n USING ERRCODE = 'QV914';
    END IF;
    IF v_n = 0 THEN
        RETURN;
    END IF;
    IF v_n > 256 THEN
        RAISE EXCEPTION '% timer operations in one call, the most is 256', v_n USING ERRCODE = 'QV912';
    END IF;

    FOR v_i IN 1 .. v_n LOOP
        v_op := p_ops[v_i];
        IF v_op IS NULL OR v_op NOT IN ('schedule', 'reschedule', 'cancel') THEN
            RAISE EXCEPTION 'timer operation %: unknown op %, expected schedule, reschedule or cancel', v_i - 1,
                COALESCE(quote_literal(v_op), 'null') USING ERRCODE = 'QV902';
        END IF;
        IF p_queues[v_i] IS NULL OR p_queues[v_i] = '' OR char_length(p_queues[v_i]) > 255 THEN
            RAISE EXCEPTION 'timer operation %: queue must be a non-empty name of at most 255 characters', v_i - 1
                USING ERRCODE = 'QV903';
        END IF;
        IF p_keys[v_i] IS NULL OR p_keys[v_i] = '' THEN
            RAISE EXCEPTION 'timer operation %: timerKey must be a non-empty string', v_i - 1 USING ERRCODE = 'QV904';
        END IF;
        IF octet_length(p_keys[v_i]) > 512 THEN
            RAISE EXCEPTION 'timer operation %: timerKey is % bytes, the most is 512', v_i - 1,
                octet_length(p_keys[v_i]) USING ERRCODE = 'QV905';
        END IF;
        IF v_op = 'cancel' THEN
            CONTINUE;
        END IF;
        v_part := COALESCE(p_partitions[v_i], 'Default');
        IF v_part = '' OR char_length(v_part) > 255 THEN
            RAISE EXCEPTION 'timer operation %: partition must be a non-empty name of at most 255 characters', v_i - 1
                USING ERRCODE = 'QV913';
        END IF;
        IF p_delays[v_i] IS NULL THEN
            RAISE EXCEPTION 'timer operation %: delayMs (milliseconds from now, negative fires at once) is required',
                v_i - 1 USING ERRCODE = 'QV906';
        END IF;
        IF p_delays[v_i] > 7776000000 THEN
            RAISE EXCEPTION 'timer operation %: delayMs % is beyond the 7776000000 ms (90 days) horizon', v_i - 1,
                p_delays[v_i] USING ERRCODE = 'QV907';
        END IF;
        IF p_txns[v_i] IS NULL OR p_txns[v_i] = '' OR octet_length(p_txns[v_i]) > 65535 THEN
            RAISE EXCEPTION 'timer operation %: txn must be a non-empty transaction id of at most 65535 bytes', v_i - 1
                USING ERRCODE = 'QV908';
        END IF;
        IF p_payloads[v_i] IS NULL THEN
            RAISE EXCEPTION 'timer operation %: payload is required', v_i - 1 USING ERRCODE = 'QV909';
        END IF;
        -- 1 MiB of message, plus room for the encryption envelope when the broker encrypted it
        IF octet_length(p_payloads[v_i]) > 1048576 + (CASE WHEN COALESCE(p_encrypted[v_i], false) THEN 65536 ELSE 0 END)
        THEN
            RAISE EXCEPTION 'timer operation %: payload is % bytes, the most is 1048576', v_i - 1,
                octet_length(p_payloads[v_i]) USING ERRCODE = 'QV910';
        END IF;
        IF p_message_ids[v_i] IS NULL THEN
            RAISE EXCEPTION 'timers_apply: operation % has no message id (the broker mints it)', v_i - 1
                USING ERRCODE = 'QV914';
        END IF;
    END LOOP;

    SELECT min(d.first) INTO v_j FROM (
        SELECT min(s.i) AS first FROM generate_subscripts(p_ops, 1) s(i)
        GROUP BY p_queues[s.i] COLLATE "C", p_keys[s.i] COLLATE "C"
        HAVING count(*) > 1) d;
    IF v_j IS NOT NULL THEN
        RAISE EXCEPTION 'timer operation %: its (queue, timerKey) appears again in the same call; a timer may be named '
            'once per call', v_j - 1 USING ERRCODE = 'QV911';
    END IF;

    r_ok := array_fill(NULL::boolean, ARRAY[v_n]);
    r_status := array_fill(NULL::text, ARRAY[v_n]);
    r_txn := array_fill(NULL::text, ARRAY[v_n]);
    r_mid := array_fill(NULL::uuid, ARRAY[v_n]);
    r_due := array_fill(NULL::timestamptz, ARRAY[v_n]);

    FOR v_i IN
        SELECT s.i FROM generate_subscripts(p_ops, 1) s(i)
        ORDER BY p_queues[s.i] COLLATE "C", p_keys[s.i] COLLATE "C"
    LOOP
        IF p_ops[v_i] = 'cancel' THEN
            DELETE FROM queen.timers t
             WHERE t.tenant_id = v_tenant AND t.queue = p_queues[v_i] AND t.timer_key = p_keys[v_i]
            RETURNING t.transaction_id INTO v_txn;
            r_ok[v_i] := FOUND;
            r_status[v_i] := CASE WHEN FOUND THEN 'cancelled' ELSE 'absent' END;
            r_txn[v_i] := CASE WHEN FOUND THEN v_txn ELSE p_txns[v_i] END;
            CONTINUE;
        END IF;
        -- a due time more than 90 days back is due at once all the same
        v_due := v_now + make_interval(secs => GREATEST(p_delays[v_i], -7776000000)::double precision / 1000.0);
        INSERT INTO queen.timers AS t (tenant_id, queue, timer_key, partition, due_at, visible_at, transaction_id,
                                       message_id, payload, encrypted, producer_sub, attempts, last_error, created_at,
                                       updated_at)
        VALUES (v_tenant, p_queues[v_i], p_keys[v_i], COALESCE(p_partitions[v_i], 'Default'), v_due, v_due,
                p_txns[v_i], p_message_ids[v_i], p_payloads[v_i], COALESCE(p_encrypted[v_i], false), p_producer_sub, 0,
                NULL, v_now, v_now)
        ON CONFLICT (tenant_id, queue, timer_key) DO UPDATE
           SET partition = EXCLUDED.partition, due_at = EXCLUDED.due_at, visible_at = EXCLUDED.visible_at,
               transaction_id = EXCLUDED.transaction_id, message_id = EXCLUDED.message_id, payload = EXCLUDED.payload,
               encrypted = EXCLUDED.encrypted, producer_sub = EXCLUDED.producer_sub, attempts = 0, last_error = NULL,
               updated_at = EXCLUDED.updated_at
        RETURNING t.xmax = 0 INTO v_ins;
        r_ok[v_i] := true;
        r_status[v_i] := CASE WHEN v_ins THEN 'scheduled' ELSE 'rescheduled' END;
        r_txn[v_i] := p_txns[v_i];
        r_mid[v_i] := p_message_ids[v_i];
        r_due[v_i] := v_due;
    END LOOP;

    RETURN QUERY
    SELECT (s.i - 1)::integer, r_ok[s.i], r_status[s.i], p_queues[s.i], p_keys[s.i], r_txn[s.i], r_mid[s.i],
           r_due[s.i]
    FROM generate_subscripts(p_ops, 1) s(i)
    ORDER BY s.i;
END;
$$;

-- The due timers (visible_at at or before p_now), oldest first, at most p_limit (1..1000), each locked FOR UPDATE SKIP
-- LOCKED: rows another transaction holds (a concurrent fire, a schedule in a transaction) are skipped, never waited
-- for. Call it inside the fire's transaction: the locks are the claim and last until that transaction ends, so the
-- claim, the push (log_push_multi) and the delete (timers_fired) commit together or not at all. late_ms is how far
-- past its due time the timer is.
CREATE OR REPLACE FUNCTION queen.timers_claim(p_limit integer, p_now timestamptz DEFAULT NULL)
RETURNS TABLE (tenant_id uuid, queue text, timer_key text, partition text, due_at timestamptz, transaction_id text,
               message_id uuid, payload bytea, encrypted boolean, producer_sub text, attempts integer, late_ms bigint)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    v_now timestamptz := COALESCE(p_now, clock_timestamp());
BEGIN
    RETURN QUERY
    SELECT t.tenant_id, t.queue::text, t.timer_key::text, t.partition, t.due_at, t.transaction_id, t.message_id,
           t.payload, t.encrypted, t.producer_sub, t.attempts,
           GREATEST(floor(extract(epoch FROM (v_now - t.due_at)) * 1000), 0)::bigint
    FROM queen.timers t
    WHERE t.visible_at <= v_now
    ORDER BY t.visible_at
    LIMIT LEAST(GREATEST(COALESCE(p_limit, 100), 1), 1000)
    FOR UPDATE OF t SKIP LOCKED;
END;
$$;

-- Deletes the timers whose messages this transaction has just pushed: the rows its timers_claim locked, named by
-- (tenant, queue, key) and the message id the claim returned. Every named row must be deleted (QV950 otherwise: the
-- caller named a timer it did not claim, and the transaction must not commit). Returns the count.
CREATE OR REPLACE FUNCTION queen.timers_fired(p_tenants uuid[], p_queues text[], p_keys text[], p_message_ids uuid[])
RETURNS integer
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    v_n    integer := COALESCE(cardinality(p_keys), 0);
    v_done integer;
BEGIN
    IF COALESCE(cardinality(p_tenants), 0) <> v_n OR COALESCE(cardinality(p_queues), 0) <> v_n
       OR COALESCE(cardinality(p_message_ids), 0) <> v_n THEN
        RAISE EXCEPTION 'timers_fired: misaligned arrays (% keys)', v_n USING ERRCODE = 'QV914';
    END IF;
    WITH gone AS (
        DELETE FROM queen.timers t
        USING unnest(p_tenants, p_queues, p_keys, p_message_ids) AS u(tn, q, k, m)
        WHERE t.tenant_id = u.tn AND t.queue = u.q AND t.timer_key = u.k AND t.message_id = u.m
        RETURNING 1
    )
    SELECT count(*)::integer INTO v_done FROM gone;
    IF v_done <> v_n THEN
        RAISE EXCEPTION 'timers_fired: % of % timers were not claimed by this transaction', v_n - v_done, v_n
            USING ERRCODE = 'QV950';
    END IF;
    RETURN v_done;
END;
$$;

-- After a fire that failed (its transaction rolled back, so the timers are still there): each named timer whose
-- message id is still the one the claim returned (a reschedule since then is left alone) is taken out of the sweep
-- for p_backoff_ms, its attempts counted and p_error kept as last_error (shown by peek and list). Nothing is ever
-- dropped: every input of a timer was checked when it was scheduled, so a fire fails on trouble (the database, a
-- queue being deleted), and trouble passes. Rows in ascending (tenant, queue, key) order. Returns the count.
CREATE OR REPLACE FUNCTION queen.timers_fail(p_tenants uuid[], p_queues text[], p_keys text[], p_message_ids uuid[],
                                             p_backoff_ms integer, p_error text, p_now timestamptz DEFAULT NULL)
RETURNS integer
LANGUAGE plpgsql
AS $$
DECLARE
    v_now  timestamptz := COALESCE(p_now, clock_timestamp());
    v_done integer;
BEGIN
    WITH held AS (
        SELECT t.tenant_id, t.queue, t.timer_key
        FROM queen.timers t
        JOIN unnest(p_tenants, p_queues, p_keys, p_message_ids) AS u(tn, q, k, m)
          ON t.tenant_id = u.tn AND t.queue = u.q AND t.timer_key = u.k AND t.message_id = u.m
        ORDER BY t.tenant_id, t.queue, t.timer_key
        FOR UPDATE OF t
    ), upd AS (
        UPDATE queen.timers t
           SET visible_at = v_now + make_interval(secs => GREATEST(COALESCE(p_backoff_ms, 1000), 0) / 1000.0),
               attempts = t.attempts + 1, last_error = left(p_error, 4096), updated_at = v_now
          FROM held h
         WHERE t.tenant_id = h.tenant_id AND t.queue = h.queue AND t.timer_key = h.timer_key
        RETURNING 1
    )
    SELECT count(*)::integer INTO v_done FROM upd;
    RETURN v_done;
END;
$$;

-- One pending timer of the tenant, with its payload; no row when there is none (never fired yet, cancelled, or fired).
CREATE OR REPLACE FUNCTION queen.timers_peek(p_tenant uuid, p_queue text, p_key text)
RETURNS TABLE (queue text, timer_key text, partition text, deliver_at timestamptz, transaction_id text,
               message_id uuid, payload bytea, encrypted boolean, producer_sub text, attempts integer,
               last_error text, created_at timestamptz, updated_at timestamptz)
LANGUAGE sql STABLE
AS $$
    SELECT t.queue::text, t.timer_key::text, t.partition, t.due_at, t.transaction_id, t.message_id, t.payload,
           t.encrypted, t.producer_sub, t.attempts, t.last_error, t.created_at, t.updated_at
    FROM queen.timers t
    WHERE t.tenant_id = COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001')
      AND t.queue = p_queue AND t.timer_key = p_key
$$;

-- A page of one queue's pending timers in key (byte) order, after p_after (exclusive; NULL or '' = first page), at most
-- p_limit (default 100, clamped to 1..1000), without payloads. more (the same on every row) says a next page exists;
-- its cursor is the page's last timer_key.
CREATE OR REPLACE FUNCTION queen.timers_list(p_tenant uuid, p_queue text, p_after text, p_limit integer)
RETURNS TABLE (queue text, timer_key text, partition text, deliver_at timestamptz, transaction_id text,
               message_id uuid, encrypted boolean, producer_sub text, attempts integer, last_error text,
               created_at timestamptz, updated_at timestamptz, more boolean)
LANGUAGE sql STABLE
AS $$
    SELECT x.queue::text, x.timer_key::text, x.partition, x.due_at, x.transaction_id, x.message_id, x.encrypted,
           x.producer_sub, x.attempts, x.last_error, x.created_at, x.updated_at,
           count(*) OVER () > LEAST(GREATEST(COALESCE(p_limit, 100), 1), 1000)
    FROM (
        SELECT t.* FROM queen.timers t
        WHERE t.tenant_id = COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001') AND t.queue = p_queue
          AND t.timer_key > COALESCE(p_after, '')
        ORDER BY t.timer_key
        LIMIT LEAST(GREATEST(COALESCE(p_limit, 100), 1), 1000) + 1
    ) x
    ORDER BY x.timer_key
    LIMIT LEAST(GREATEST(COALESCE(p_limit, 100), 1), 1000)
$$;

-- The sweep's wake-up and the Prometheus gauges, cluster-wide: next_visible_at is when the next timer becomes due
-- (NULL: none pending), oldest_due_at the due time of the oldest timer that is due now (NULL: none late); pending and
-- due are counted up to p_cap each (pending_capped, due_capped: there are more). Costs two index probes and at most
-- 2 * p_cap index entries.
CREATE OR REPLACE FUNCTION queen.timers_probe(p_cap integer DEFAULT 10000, p_now timestamptz DEFAULT NULL)
RETURNS TABLE (next_visible_at timestamptz, oldest_due_at timestamptz, pending bigint, pending_capped boolean,
               due bigint, due_capped boolean)
LANGUAGE sql STABLE
AS $$
    WITH c AS (SELECT GREATEST(COALESCE(p_cap, 10000), 1) AS cap, COALESCE(p_now, clock_timestamp()) AS now)
    SELECT (SELECT min(t.visible_at) FROM queen.timers t),
           (SELECT min(t.due_at) FROM (SELECT t0.due_at FROM queen.timers t0, c WHERE t0.visible_at <= c.now
                                       ORDER BY t0.visible_at LIMIT 1000) t),
           LEAST(p.n, c.cap), p.n > c.cap, LEAST(d.n, c.cap), d.n > c.cap
    FROM c,
         LATERAL (SELECT count(*) AS n FROM (SELECT 1 FROM queen.timers t LIMIT c.cap + 1) x) p,
         LATERAL (SELECT count(*) AS n FROM (SELECT 1 FROM queen.timers t WHERE t.visible_at <= c.now
                                             LIMIT c.cap + 1) y) d
$$;
