-- =====================================================================================================================
-- Ack (ENGINE §5): hash-resolved acks and the DLQ head snapshot.
-- A repeatable migration: the rules for editing it are at the top of R__10_common.sql.
-- =====================================================================================================================

-- ---------------------------------------------------------------------------------------------------------------------
-- Ack
-- ---------------------------------------------------------------------------------------------------------------------

-- Hash-resolved ack for one (partition, group) (ENGINE §5.2). Index arrays (noop/stale/unresolved, poisonIndex) are
-- 0-based positions in p_hashes. Implicit ack: the new cursor is the highest completed offset strictly below the head
-- signal (lowest failed/dlq/retry; tie dlq > failed > retry). Negative signals act only on a leased batch.
-- Generic plans (SET plan_cache_mode = force_generic_plan here and on log_ack_many), as on the push and pop paths:
-- custom plans for the array-parameter statements were re-planned on every ack. Each statement is a key probe or an
-- index range over one partition's (partition_id, base_offset), the same plan whatever the values.
CREATE OR REPLACE FUNCTION queen.log_ack(
    p_tenant   uuid,
    p_pid      uuid,
    p_group    text,
    p_worker   text,
    p_hashes   bytea[],
    p_statuses text[]
) RETURNS jsonb
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    v_tenant      uuid := COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001');
    v_group       text := COALESCE(NULLIF(p_group, ''), '__QUEUE_MODE__');
    v_worker      text := COALESCE(p_worker, '');
    v_n           integer := COALESCE(cardinality(p_hashes), 0);
    v_c           record;
    v_has_lease   boolean;
    v_lo          bigint;
    v_hi          bigint;
    v_st          text[];
    v_eff         bigint[];
    v_below       boolean[];
    v_sig_off     bigint;
    v_sig_rank    integer;
    v_sig_idx     integer;
    v_sig_kind    text;
    v_max_ok      bigint;
    v_new         bigint;
    v_delta       bigint;
    v_noop        jsonb := '[]'::jsonb;
    v_stale       jsonb := '[]'::jsonb;
    v_unres       jsonb := '[]'::jsonb;
    v_released    boolean := false;
    v_retry_ct    integer;
    v_all_ok      boolean;
    v_max_eff     bigint;
BEGIN
    IF p_statuses IS NOT NULL AND cardinality(p_statuses) <> v_n THEN
        RAISE EXCEPTION 'QACK misaligned arrays: % hashes, % statuses', v_n, cardinality(p_statuses);
    END IF;

    -- The ownership gate and the only lock the ack path takes, in one statement: the group's cursor row on a partition
    -- of one of the tenant's queues, locked FOR UPDATE (only the cursor row is locked). No row: a partition that is
    -- missing or another tenant's, or no cursor.
    SELECT c.partition_id, c.committed, c.worker_id, c.lease_expires_at, c.batch_end, c.batch_retry_count,
           q.retry_limit, (q.dead_letter_queue OR q.dlq_after_max_retries) AS dlq_on, p.txns_start
    INTO v_c
    FROM queen.log_consumers c
    JOIN queen.log_partitions p ON p.id = c.partition_id
    JOIN queen.queues q ON q.id = p.queue_id
    WHERE c.partition_id = p_pid AND c.consumer_group = v_group AND q.tenant_id = v_tenant
    FOR UPDATE OF c;
    IF NOT FOUND THEN
        IF EXISTS (SELECT 1 FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
                   WHERE p.id = p_pid AND q.tenant_id = v_tenant) THEN
            RETURN jsonb_build_object('ok', false, 'error', 'consumer not found');
        END IF;
        RETURN jsonb_build_object('ok', false, 'error', 'partition not owned by tenant');
    END IF;

    -- The lease is checked only when a worker is given; a lease-less ack still advances the cursor.
    IF v_worker <> '' AND (v_c.worker_id IS DISTINCT FROM v_worker
                           OR v_c.lease_expires_at IS NULL
                           OR v_c.lease_expires_at < clock_timestamp()) THEN
        -- The same batch acked again with its (since released) lease is all success, as no-ops (ENGINE.md §5.3
        -- "rowless_messages"): every status is completed and every hash resolves at or below the cursor.
        IF v_n > 0
           AND NOT EXISTS (SELECT 1 FROM unnest(p_statuses) s(s)
                            WHERE NOT (s.s IS NULL OR s.s IN ('', 'completed', 'success', 'acked', 'ok')))
           AND (SELECT bool_and(EXISTS (
                    SELECT 1 FROM queen.log_txns t CROSS JOIN LATERAL queen.log_unnest_hashes(t.hashes) th
                     WHERE t.partition_id = p_pid AND t.base_offset <= v_c.committed
                       AND th.h = u.h AND t.base_offset + th.idx <= v_c.committed))
                  FROM unnest(p_hashes) u(h)) THEN
            RETURN jsonb_build_object('ok', true, 'leaseReleased', false, 'acked', 0,
                'noop', (SELECT jsonb_agg(i - 1) FROM generate_series(1, v_n) i),
                'stale', '[]'::jsonb, 'unresolved', '[]'::jsonb, 'committed', v_c.committed,
                'dlq', false, 'dropped', false);
        END IF;
        RETURN jsonb_build_object('ok', false, 'error', 'invalid or expired lease');
    END IF;

    v_has_lease := v_c.batch_end IS NOT NULL;
    v_lo := GREATEST(v_c.committed + 1, v_c.txns_start);
    v_hi := CASE WHEN v_has_lease THEN v_c.batch_end END;    -- NULL = unbounded (lease-less)

    v_st := '{}';
    IF v_n > 0 THEN
        -- Phase 1, one statement: normalise the statuses (completed | failed | retry | dlq) and resolve each hash
        -- inside the ackable span only: the batch's txns rows from the one covering lo (cheap on the happy path),
        -- cutting out of each row only the hashes of offsets in [lo, hi]. eff = the lowest matching offset in [lo, hi].
        SELECT array_agg(x.st ORDER BY x.ord), array_agg(x.eff ORDER BY x.ord),
               bool_and(x.st = 'completed' AND x.eff IS NOT NULL), max(x.eff)
        INTO v_st, v_eff, v_all_ok, v_max_eff
        FROM (
            SELECT u.ord,
                   CASE WHEN u.s IS NULL OR u.s IN ('', 'completed', 'success', 'acked', 'ok') THEN 'completed'
                        WHEN u.s IN ('retry', 'dlq', 'failed') THEN u.s
                        ELSE 'failed' END AS st,
                   MIN(o.off) AS eff
            FROM unnest(p_hashes, p_statuses) WITH ORDINALITY AS u(h, s, ord)
            LEFT JOIN (
                SELECT th.h, t.base_offset + th.idx AS off
                FROM queen.log_txns t
                CROSS JOIN LATERAL queen.log_unnest_hashes_between(
                    t.hashes, v_lo - t.base_offset, COALESCE(v_hi, 9223372036854775807) - t.base_offset) th
                WHERE t.partition_id = p_pid
                  AND t.base_offset >= COALESCE((SELECT t0.base_offset FROM queen.log_txns t0
                                                 WHERE t0.partition_id = p_pid AND t0.base_offset <= v_lo
                                                 ORDER BY t0.base_offset DESC LIMIT 1), v_lo)
                  AND t.base_offset <= COALESCE(v_hi, 9223372036854775807)   -- an index bound in the generic plan
            ) o ON o.h = u.h AND o.off >= v_lo AND (v_hi IS NULL OR o.off <= v_hi)
            GROUP BY u.ord, u.s
        ) x;

        -- Every item completed and resolved in the span (the common ack): no signal, nothing left over, the cursor
        -- goes to the highest of them. The statements below would find exactly that; this skips them.
        IF v_all_ok THEN
            v_max_ok := v_max_eff;
        -- Phase 2 (only when something did not resolve in the span): is there a match at or below the cursor?
        ELSIF array_position(v_eff, NULL) IS NOT NULL THEN
            SELECT array_agg(x.below ORDER BY x.ord) INTO v_below
            FROM (
                SELECT u.ord, (COUNT(o.off) > 0) AS below
                FROM unnest(p_hashes) WITH ORDINALITY AS u(h, ord)
                LEFT JOIN (
                    SELECT th.h, t.base_offset + th.idx AS off
                    FROM queen.log_txns t
                    CROSS JOIN LATERAL queen.log_unnest_hashes(t.hashes) th
                    WHERE t.partition_id = p_pid AND t.base_offset <= v_c.committed
                ) o ON o.h = u.h AND o.off <= v_c.committed
                GROUP BY u.ord
            ) x;
        ELSE
            v_below := array_fill(false, ARRAY[v_n]);
        END IF;

        IF NOT v_all_ok THEN
            -- Head signal: lowest eff among negative signals; tie at one offset: dlq > failed > retry; then lowest
            -- index. Completed items below it advance the cursor; unresolved items are no-ops (completed, at or below
            -- the cursor), stale (a negative verdict at or below the cursor) or unresolved (no match at all). One
            -- set-based statement on purpose: a plpgsql loop over a batch of 100 evaluated thousands of expressions
            -- (and text[] subscripts are linear), which made a batch ack cost milliseconds of database CPU.
            WITH u AS (
                SELECT * FROM unnest(v_eff, v_st, v_below) WITH ORDINALITY AS u(eff, st, below, ord)
            ), sig AS (
                SELECT u.eff, CASE u.st WHEN 'dlq' THEN 0 WHEN 'failed' THEN 1 ELSE 2 END AS rank, u.ord, u.st
                FROM u WHERE u.eff IS NOT NULL AND u.st <> 'completed'
                ORDER BY 1, 2, 3
                LIMIT 1
            )
            SELECT sig.eff, sig.rank, (sig.ord - 1)::integer, sig.st,
                   max(u.eff) FILTER (WHERE u.eff IS NOT NULL AND u.st = 'completed'
                                        AND (sig.eff IS NULL OR u.eff < sig.eff)),
                   COALESCE(jsonb_agg(u.ord - 1 ORDER BY u.ord)
                            FILTER (WHERE u.eff IS NULL AND u.below AND u.st = 'completed'), '[]'::jsonb),
                   COALESCE(jsonb_agg(u.ord - 1 ORDER BY u.ord)
                            FILTER (WHERE u.eff IS NULL AND u.below AND u.st <> 'completed'), '[]'::jsonb),
                   COALESCE(jsonb_agg(u.ord - 1 ORDER BY u.ord)
                            FILTER (WHERE u.eff IS NULL AND NOT COALESCE(u.below, false)), '[]'::jsonb)
            INTO v_sig_off, v_sig_rank, v_sig_idx, v_sig_kind, v_max_ok, v_noop, v_stale, v_unres
            FROM u LEFT JOIN sig ON true
            GROUP BY sig.eff, sig.rank, sig.ord, sig.st;
        END IF;
    END IF;

    v_new := COALESCE(v_max_ok, v_c.committed);
    v_delta := GREATEST(v_new - v_c.committed, 0);

    -- dlq hand-off: explicit 'dlq', or 'failed' with the budget spent and the DLQ enabled. Advance to the completed
    -- prefix and KEEP the lease; the broker snapshots the poison frame and calls log_dlq_head.
    IF v_has_lease AND (v_sig_kind = 'dlq'
                        OR (v_sig_kind = 'failed' AND v_c.batch_retry_count >= v_c.retry_limit AND v_c.dlq_on)) THEN
        UPDATE queen.log_consumers c SET
            committed = v_new,
            total_consumed = c.total_consumed + v_delta
        WHERE c.partition_id = p_pid AND c.consumer_group = v_group;
        RETURN jsonb_build_object(
            'ok', true, 'dlq', true, 'dropped', false, 'leaseReleased', false,
            'partitionId', p_pid, 'group', v_group, 'worker', v_worker,
            'off', v_sig_off, 'poisonIndex', v_sig_idx,
            'committed', v_new, 'acked', v_delta,
            'noop', v_noop, 'stale', v_stale, 'unresolved', v_unres);
    END IF;

    IF v_has_lease AND v_sig_kind = 'failed' THEN
        v_retry_ct := v_c.batch_retry_count;
        IF v_retry_ct < v_c.retry_limit THEN
            -- Budget left: charge once, release; everything from the poison on redelivers.
            UPDATE queen.log_consumers c SET
                committed = v_new,
                worker_id = NULL, lease_expires_at = NULL, batch_end = NULL,
                batch_retry_count = v_retry_ct + 1,
                total_consumed = c.total_consumed + v_delta
            WHERE c.partition_id = p_pid AND c.consumer_group = v_group;
            RETURN jsonb_build_object(
                'ok', true, 'dlq', false, 'dropped', false, 'leaseReleased', true,
                'committed', v_new, 'acked', v_delta, 'retryCount', v_retry_ct + 1,
                'noop', v_noop, 'stale', v_stale, 'unresolved', v_unres);
        END IF;
        -- Budget spent, DLQ disabled: drop the poison (committed = its offset), reset the count, release.
        UPDATE queen.log_consumers c SET
            committed = v_sig_off,
            worker_id = NULL, lease_expires_at = NULL, batch_end = NULL,
            batch_retry_count = 0, attempt_offset = NULL, attempt_count = 0,
            total_consumed = c.total_consumed + GREATEST(v_sig_off - v_c.committed, 0)
        WHERE c.partition_id = p_pid AND c.consumer_group = v_group;
        RETURN jsonb_build_object(
            'ok', true, 'dlq', false, 'dropped', true, 'leaseReleased', true,
            'off', v_sig_off, 'poisonIndex', v_sig_idx,
            'committed', v_sig_off, 'acked', GREATEST(v_sig_off - v_c.committed, 0),
            'noop', v_noop, 'stale', v_stale, 'unresolved', v_unres);
    END IF;

    IF v_has_lease AND v_sig_kind = 'retry' THEN
        -- Budget-free retry: release at the completed prefix, count unchanged.
        UPDATE queen.log_consumers c SET
            committed = v_new,
            worker_id = NULL, lease_expires_at = NULL, batch_end = NULL,
            total_consumed = c.total_consumed + v_delta
        WHERE c.partition_id = p_pid AND c.consumer_group = v_group;
        RETURN jsonb_build_object(
            'ok', true, 'dlq', false, 'dropped', false, 'leaseReleased', true,
            'committed', v_new, 'acked', v_delta,
            'noop', v_noop, 'stale', v_stale, 'unresolved', v_unres);
    END IF;

    -- All completed (or no leased batch): advance. Reaching batch_end completes the batch: release and reset counters;
    -- otherwise keep the lease so the rest of the batch can still be acked.
    IF v_has_lease AND v_new >= v_c.batch_end THEN
        UPDATE queen.log_consumers c SET
            committed = v_new,
            worker_id = NULL, lease_expires_at = NULL, batch_end = NULL,
            attempt_offset = NULL, attempt_count = 0, batch_retry_count = 0,
            total_consumed = c.total_consumed + v_delta
        WHERE c.partition_id = p_pid AND c.consumer_group = v_group;
        v_released := true;
    ELSIF v_delta > 0 THEN
        UPDATE queen.log_consumers c SET
            committed = v_new,
            total_consumed = c.total_consumed + v_delta
        WHERE c.partition_id = p_pid AND c.consumer_group = v_group;
    END IF;

    RETURN jsonb_build_object(
        'ok', true, 'dlq', false, 'dropped', false, 'leaseReleased', v_released,
        'committed', v_new, 'acked', v_delta,
        'noop', v_noop, 'stale', v_stale, 'unresolved', v_unres);
END;
$$;

-- Several acks in one transaction (one commit, one WAL flush): the broker fuses the ack groups of concurrent requests
-- into one call. Group i is log_ack(p_tenants[i], p_pids[i], p_groups[i], p_workers[i], its p_counts[i] hashes and
-- statuses, taken in order from the flat p_hashes / p_statuses); one result row per group, in group order. The groups
-- run one after the other exactly as separate calls would; the caller sorts them by (partition, group) so that two
-- fused calls lock cursors in the same order.
CREATE OR REPLACE FUNCTION queen.log_ack_many(
    p_tenants  uuid[],
    p_pids     uuid[],
    p_groups   text[],
    p_workers  text[],
    p_counts   integer[],
    p_hashes   bytea[],
    p_statuses text[]
) RETURNS SETOF jsonb
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    v_n  integer := COALESCE(cardinality(p_pids), 0);
    v_lo integer := 1;
    v_hi integer;
BEGIN
    IF COALESCE(cardinality(p_tenants), 0) <> v_n OR COALESCE(cardinality(p_groups), 0) <> v_n
       OR COALESCE(cardinality(p_workers), 0) <> v_n OR COALESCE(cardinality(p_counts), 0) <> v_n THEN
        RAISE EXCEPTION 'QACK misaligned group arrays';
    END IF;
    FOR v_i IN 1 .. v_n LOOP
        v_hi := v_lo + p_counts[v_i] - 1;
        RETURN NEXT queen.log_ack(p_tenants[v_i], p_pids[v_i], p_groups[v_i], p_workers[v_i],
                                  p_hashes[v_lo:v_hi], p_statuses[v_lo:v_hi]);
        v_lo := v_hi + 1;
    END LOOP;
END;
$$;

-- File the poison frame of a dlq hand-off (ENGINE §7.1 step 5). A second call fails the lease check and changes nothing.
CREATE OR REPLACE FUNCTION queen.log_dlq_head(
    p_pid        uuid,
    p_group      text,
    p_worker     text,
    p_off        bigint,
    p_message_id uuid,
    p_txn        text,
    p_payload    jsonb,
    p_error      text
) RETURNS jsonb
LANGUAGE plpgsql
AS $$
DECLARE
    v_group text := COALESCE(NULLIF(p_group, ''), '__QUEUE_MODE__');
    v_c     queen.log_consumers;
    v_id    uuid;
BEGIN
    v_c := queen._log_lock_cursor(p_pid, v_group);
    IF v_c.partition_id IS NULL THEN
        RETURN jsonb_build_object('ok', false, 'error', 'consumer not found');
    END IF;
    IF COALESCE(p_worker, '') <> '' AND (v_c.worker_id IS DISTINCT FROM p_worker
                                         OR v_c.lease_expires_at IS NULL
                                         OR v_c.lease_expires_at < clock_timestamp()) THEN
        RETURN jsonb_build_object('ok', false, 'error', 'invalid or expired lease');
    END IF;

    INSERT INTO queen.log_dlq (partition_id, consumer_group, "offset", message_id, transaction_id,
                               payload, error, retry_count)
    VALUES (p_pid, v_group, p_off, p_message_id, p_txn, p_payload, p_error, v_c.batch_retry_count)
    RETURNING id INTO v_id;

    UPDATE queen.log_consumers c SET
        committed = GREATEST(c.committed, p_off),
        worker_id = NULL, lease_expires_at = NULL, batch_end = NULL,
        attempt_offset = NULL, attempt_count = 0, batch_retry_count = 0,
        total_consumed = c.total_consumed + 1
    WHERE c.partition_id = p_pid AND c.consumer_group = v_group;

    RETURN jsonb_build_object('ok', true, 'id', v_id);
END;
$$;
