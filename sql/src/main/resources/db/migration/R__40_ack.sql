-- =====================================================================================================================
-- Ack (ENGINE §5): hash-resolved acks and the dead-letter hand-off (filing and abort).
-- A repeatable migration: the rules for editing it are at the top of R__10_common.sql.
-- =====================================================================================================================

-- ---------------------------------------------------------------------------------------------------------------------
-- Ack
-- ---------------------------------------------------------------------------------------------------------------------

-- Hash-resolved ack for one (partition, group) (ENGINE §5.2). Index arrays (noop/stale/unresolved, superseded, pending,
-- poisonIndex, blockedBy) are 0-based positions in p_hashes.
-- Implicit ack: the cursor goes to the highest completed offset of the call that no unmet negative signal precedes.
-- The negative signals are walked in offset order (one per offset; tie dlq > failed > retry). With a leased batch:
--   * dlq, or failed with the budget spent and the DLQ on: a POISON; it is dead-lettered and the walk goes on past it
--     (the retry count resets, as a dead-letter move resets it);
--   * failed with the budget spent and the DLQ off: DROPPED; the walk goes on past it (count reset);
--   * failed with budget left (charged once) or retry (budget-free): the STOP; it and everything after it redelivers.
-- Without a leased batch the first signal is the stop and acts on nothing. Completed acks at or after the stop, and dlq
-- acks after it, cannot take effect (Queen's rule: a nack is never skipped by a later ack): they are listed in
-- "superseded" with "blockedBy" the stop's index, and the broker answers them success:false.
-- Poisons make the call a dead-letter HAND-OFF: the cursor moves to the completed prefix below the first poison and the
-- batch is held by the token 'dlq-handoff:<worker>' (worker_id), so no other ack can move the cursor past a poison
-- that is not filed yet. The broker decodes the poison frames and calls log_dlq_file with the token, which files them
-- and moves the cursor to "target"; when filing fails it calls log_dlq_abort, which releases the batch (redelivered
-- from the first poison). A token left by a crashed broker lapses with the lease, and a pop then takes the batch over.
-- Generic plans (SET plan_cache_mode = force_generic_plan here and on log_ack_many), as on the push and pop paths:
-- custom plans for the array-parameter statements were re-planned on every ack. Each statement is a key probe or an
-- index range over one partition's (partition_id, base_offset), the same plan whatever the values.
-- One-statement ack (issue 39). The ack of the lease's next message (one completed item, its worker's live lease,
-- the hash of offset committed + 1: a batch-1 pop's one message, or a batch acked one message at a time in order) is
-- one statement: no FOR UPDATE before the update (one row version and no lock record of the cursor row per ack), one
-- probe of the segment hashes instead of two, no second and third statement. Its update is a compare-and-set on the row as the
-- statement read it, so it acts only where the full path would have found the same row and acked the same offset
-- with the same outcome (the cursor one further; at the batch's end the lease released and the retry and attempt
-- counts reset); whatever else it finds (no lease, another worker's, an expired one, a negative status, a hash that is
-- not the next message's, an ack out of order, a row that changed meanwhile) falls through to the full path
-- unchanged, at the price of the one statement.
DROP FUNCTION IF EXISTS queen.log_dlq_head(uuid, text, text, bigint, uuid, text, jsonb, text);

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
    v_sig_offs    bigint[];
    v_sig_kinds   text[];
    v_sig_idxs    integer[];
    v_k           integer := 1;
    v_cnt         integer;
    v_stop_off    bigint;
    v_stop_kind   text;
    v_stop_idx    integer;
    v_poisons     jsonb := '[]'::jsonb;
    v_first       bigint;
    v_first_idx   integer;
    v_last_poison bigint;
    v_drop_max    bigint;
    v_drop_pre    bigint;
    v_max_ok      bigint;
    v_pre_ok      bigint;
    v_pre         bigint;
    v_new         bigint;
    v_delta       bigint;
    v_noop        jsonb := '[]'::jsonb;
    v_stale       jsonb := '[]'::jsonb;
    v_unres       jsonb := '[]'::jsonb;
    v_superseded  jsonb := '[]'::jsonb;
    v_pending     jsonb := '[]'::jsonb;
    v_release     boolean;
    v_reset       boolean;
    v_final_cnt   integer;
    v_handoff     text;
    v_all_ok      boolean;
    v_max_eff     bigint;
BEGIN
    IF p_statuses IS NOT NULL AND cardinality(p_statuses) <> v_n THEN
        RAISE EXCEPTION 'QACK misaligned arrays: % hashes, % statuses', v_n, cardinality(p_statuses) USING ERRCODE = 'QV301';
    END IF;

    -- The in-order ack in ONE statement (see the header, "One-statement ack"): one completed item, acked by the worker
    -- holding a live lease, whose hash is the one the segment row holds for the lease's first unacked offset (committed + 1:
    -- a batch-1 pop's one message, or the next message of a batch acked one by one in order). The cursor row is read
    -- under the statement's snapshot, without a lock; the hash is compared at that one offset (one index probe); the
    -- update then writes the row only if it is still the version that was read (same cursor, same lease, still live).
    -- A concurrent change (an expiry and a new lease, a hand-off) makes it update nothing, and the full path decides.
    IF v_n = 1 AND v_worker <> '' AND NOT starts_with(v_worker, 'dlq-handoff:')
       AND (p_statuses IS NULL OR p_statuses <@ '{"",completed,success,acked,ok}'::text[]) THEN
        WITH r AS MATERIALIZED (
            SELECT c0.committed, c0.batch_end
            FROM queen.log_consumers c0
            JOIN queen.log_partitions p ON p.id = c0.partition_id
            JOIN queen.queues q ON q.id = p.queue_id
            CROSS JOIN LATERAL (
                SELECT t0.base_offset, t0.end_offset, t0.hashes
                FROM queen.log_segments t0
                WHERE t0.partition_id = p_pid AND t0.base_offset <= c0.committed + 1
                ORDER BY t0.base_offset DESC LIMIT 1) t
            WHERE c0.partition_id = p_pid AND c0.consumer_group = v_group AND q.tenant_id = v_tenant
              AND c0.worker_id = v_worker AND c0.lease_expires_at >= clock_timestamp()
              AND c0.batch_end > c0.committed AND p.txns_start <= c0.committed + 1
              AND t.end_offset > c0.committed
              AND substring(t.hashes FROM (c0.committed + 1 - t.base_offset)::integer * 16 + 1 FOR 16) = p_hashes[1]
        )
        UPDATE queen.log_consumers c SET
            committed = r.committed + 1,
            worker_id = CASE WHEN r.committed + 1 >= r.batch_end THEN NULL ELSE c.worker_id END,
            lease_expires_at = CASE WHEN r.committed + 1 >= r.batch_end THEN NULL ELSE c.lease_expires_at END,
            batch_end = CASE WHEN r.committed + 1 >= r.batch_end THEN NULL ELSE c.batch_end END,
            batch_retry_count = CASE WHEN r.committed + 1 >= r.batch_end THEN 0 ELSE c.batch_retry_count END,
            attempt_offset = CASE WHEN r.committed + 1 >= r.batch_end THEN NULL ELSE c.attempt_offset END,
            attempt_count = CASE WHEN r.committed + 1 >= r.batch_end THEN 0 ELSE c.attempt_count END,
            total_consumed = c.total_consumed + 1
        FROM r
        WHERE c.partition_id = p_pid AND c.consumer_group = v_group
          AND c.committed = r.committed AND c.batch_end = r.batch_end AND c.worker_id = v_worker
          AND c.lease_expires_at >= clock_timestamp()
        RETURNING c.committed AS committed, c.batch_end IS NULL AS released, c.batch_retry_count AS retry_count
        INTO v_c;
        IF FOUND THEN
            RETURN jsonb_build_object(
                'ok', true, 'dlq', false, 'dropped', false, 'leaseReleased', v_c.released,
                'committed', v_c.committed, 'acked', 1, 'retryCount', v_c.retry_count,
                'noop', '[]'::jsonb, 'stale', '[]'::jsonb, 'unresolved', '[]'::jsonb,
                'superseded', '[]'::jsonb, 'blockedBy', NULL);
        END IF;
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

    -- A dead-letter hand-off holds the batch until its poisons are filed (or it is aborted, or its lease lapses and a
    -- pop takes the batch over): no ack, with or without a lease, may move this cursor meanwhile.
    IF starts_with(COALESCE(v_c.worker_id, ''), 'dlq-handoff:') THEN
        RETURN jsonb_build_object('ok', false,
            'error', 'a dead-letter hand-off holds this batch: nothing was acked; ack again once it completes');
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
                    SELECT 1 FROM queen.log_segments t CROSS JOIN LATERAL queen.log_unnest_hashes(t.hashes) th
                     WHERE t.partition_id = p_pid AND t.base_offset >= v_c.txns_start AND t.base_offset <= v_c.committed
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
    v_cnt := v_c.batch_retry_count;

    v_st := '{}';
    IF v_n > 0 THEN
        -- Phase 1, one statement: normalise the statuses (completed | failed | retry | dlq) and resolve each hash
        -- inside the ackable span only: the batch's segment rows from the one covering lo (cheap on the happy path),
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
                FROM queen.log_segments t
                CROSS JOIN LATERAL queen.log_unnest_hashes_between(
                    t.hashes, v_lo - t.base_offset, COALESCE(v_hi, 9223372036854775807) - t.base_offset) th
                WHERE t.partition_id = p_pid
                  AND t.base_offset >= COALESCE((SELECT t0.base_offset FROM queen.log_segments t0
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
        ELSE
            -- Phase 2 (only when something did not resolve in the span): is there a match at or below the cursor?
            IF array_position(v_eff, NULL) IS NOT NULL THEN
                SELECT array_agg(x.below ORDER BY x.ord) INTO v_below
                FROM (
                    SELECT u.ord, (COUNT(o.off) > 0) AS below
                    FROM unnest(p_hashes) WITH ORDINALITY AS u(h, ord)
                    LEFT JOIN (
                        SELECT th.h, t.base_offset + th.idx AS off
                        FROM queen.log_segments t
                        CROSS JOIN LATERAL queen.log_unnest_hashes(t.hashes) th
                        WHERE t.partition_id = p_pid AND t.base_offset >= v_c.txns_start
                          AND t.base_offset <= v_c.committed
                    ) o ON o.h = u.h AND o.off <= v_c.committed
                    GROUP BY u.ord
                ) x;
            ELSE
                v_below := array_fill(false, ARRAY[v_n]);
            END IF;

            -- The signals, one per offset in offset order (tie: dlq > failed > retry, then the lowest index), and the
            -- items that resolved nowhere in the span: no-ops (completed, at or below the cursor), stale (a negative
            -- verdict at or below the cursor) or unresolved (no match at all). Set-based on purpose: a plpgsql loop
            -- over a batch of 100 evaluated thousands of expressions (and text[] subscripts are linear), which made a
            -- batch ack cost milliseconds of database CPU. Only the (few) signals are walked one by one below.
            WITH u AS (
                SELECT * FROM unnest(v_eff, v_st, v_below) WITH ORDINALITY AS u(eff, st, below, ord)
            ), s AS (
                SELECT DISTINCT ON (u.eff) u.eff, u.st, (u.ord - 1)::integer AS idx
                FROM u WHERE u.eff IS NOT NULL AND u.st <> 'completed'
                ORDER BY u.eff, CASE u.st WHEN 'dlq' THEN 0 WHEN 'failed' THEN 1 ELSE 2 END, u.ord
            )
            SELECT (SELECT array_agg(s.eff ORDER BY s.eff) FROM s),
                   (SELECT array_agg(s.st ORDER BY s.eff) FROM s),
                   (SELECT array_agg(s.idx ORDER BY s.eff) FROM s),
                   COALESCE(jsonb_agg(u.ord - 1 ORDER BY u.ord)
                            FILTER (WHERE u.eff IS NULL AND u.below AND u.st = 'completed'), '[]'::jsonb),
                   COALESCE(jsonb_agg(u.ord - 1 ORDER BY u.ord)
                            FILTER (WHERE u.eff IS NULL AND u.below AND u.st <> 'completed'), '[]'::jsonb),
                   COALESCE(jsonb_agg(u.ord - 1 ORDER BY u.ord)
                            FILTER (WHERE u.eff IS NULL AND NOT COALESCE(u.below, false)), '[]'::jsonb)
            INTO v_sig_offs, v_sig_kinds, v_sig_idxs, v_noop, v_stale, v_unres
            FROM u;

            -- The walk (see the header): poisons and drops are passed, the first other signal stops it.
            WHILE v_k <= COALESCE(cardinality(v_sig_offs), 0) LOOP
                IF v_has_lease AND (v_sig_kinds[v_k] = 'dlq'
                                    OR (v_sig_kinds[v_k] = 'failed' AND v_cnt >= v_c.retry_limit AND v_c.dlq_on)) THEN
                    v_poisons := v_poisons || jsonb_build_object('off', v_sig_offs[v_k], 'index', v_sig_idxs[v_k],
                                                                 'retryCount', v_cnt);
                    IF v_first IS NULL THEN
                        v_first := v_sig_offs[v_k];
                        v_first_idx := v_sig_idxs[v_k];
                    END IF;
                    v_last_poison := v_sig_offs[v_k];
                    v_cnt := 0;
                ELSIF v_has_lease AND v_sig_kinds[v_k] = 'failed' AND v_cnt >= v_c.retry_limit THEN
                    v_drop_max := v_sig_offs[v_k];
                    IF v_first IS NULL THEN
                        v_drop_pre := v_sig_offs[v_k];
                    END IF;
                    v_cnt := 0;
                ELSE
                    v_stop_off := v_sig_offs[v_k];
                    v_stop_kind := v_sig_kinds[v_k];
                    v_stop_idx := v_sig_idxs[v_k];
                    EXIT;
                END IF;
                v_k := v_k + 1;
            END LOOP;

            -- The highest completed offset below the stop (and below the first poison), what cannot take effect, and
            -- what hangs on the filing of the poisons (from the first poison up to the stop).
            SELECT max(u.eff) FILTER (WHERE u.st = 'completed' AND (v_stop_off IS NULL OR u.eff < v_stop_off)),
                   max(u.eff) FILTER (WHERE u.st = 'completed' AND u.eff < v_first),
                   COALESCE(jsonb_agg(u.ord - 1 ORDER BY u.ord)
                            FILTER (WHERE u.eff >= v_stop_off AND u.ord - 1 <> v_stop_idx
                                      AND u.st IN ('completed', 'dlq')), '[]'::jsonb),
                   COALESCE(jsonb_agg(u.ord - 1 ORDER BY u.ord)
                            FILTER (WHERE u.eff >= v_first AND (v_stop_off IS NULL OR u.eff < v_stop_off)),
                            '[]'::jsonb)
            INTO v_max_ok, v_pre_ok, v_superseded, v_pending
            FROM unnest(v_eff, v_st) WITH ORDINALITY AS u(eff, st, ord);
            v_max_ok := GREATEST(v_max_ok, v_drop_max, v_last_poison);   -- GREATEST skips NULLs
        END IF;
    END IF;

    v_new := COALESCE(v_max_ok, v_c.committed);
    v_delta := GREATEST(v_new - v_c.committed, 0);
    -- A leased batch is released by any signal that acted (stop, poison, drop) or when its end is reached; otherwise the
    -- lease is kept so the rest of the batch can still be acked.
    v_release := v_has_lease AND (v_stop_off IS NOT NULL OR v_first IS NOT NULL OR v_drop_max IS NOT NULL
                                  OR v_new >= v_c.batch_end);
    v_reset := v_first IS NOT NULL OR v_drop_max IS NOT NULL OR (v_release AND v_stop_off IS NULL);
    v_final_cnt := CASE WHEN v_has_lease AND v_stop_kind = 'failed' THEN v_cnt + 1
                        WHEN v_stop_off IS NOT NULL THEN v_cnt
                        WHEN v_release THEN 0
                        ELSE v_cnt END;

    IF v_first IS NOT NULL THEN
        -- Dead-letter hand-off: commit the prefix below the first poison and hold the batch with the token.
        v_pre := GREATEST(v_c.committed, v_pre_ok, v_drop_pre);
        v_handoff := 'dlq-handoff:' || COALESCE(v_c.worker_id, '');
        UPDATE queen.log_consumers c SET
            committed = v_pre,
            worker_id = v_handoff,
            total_consumed = c.total_consumed + (v_pre - v_c.committed)
        WHERE c.partition_id = p_pid AND c.consumer_group = v_group;
        RETURN jsonb_build_object(
            'ok', true, 'dlq', true, 'dropped', v_drop_max IS NOT NULL, 'leaseReleased', false,
            'partitionId', p_pid, 'group', v_group, 'worker', v_worker, 'holder', v_c.worker_id,
            'handoff', v_handoff, 'off', v_first, 'poisonIndex', v_first_idx, 'poisons', v_poisons,
            'pending', v_pending, 'target', v_new, 'retryCount', v_final_cnt,
            'committed', v_pre, 'acked', v_pre - v_c.committed,
            'noop', v_noop, 'stale', v_stale, 'unresolved', v_unres,
            'superseded', v_superseded, 'blockedBy', v_stop_idx);
    END IF;

    IF v_release OR v_delta > 0 OR v_final_cnt <> v_c.batch_retry_count THEN
        UPDATE queen.log_consumers c SET
            committed = v_new,
            worker_id = CASE WHEN v_release THEN NULL ELSE c.worker_id END,
            lease_expires_at = CASE WHEN v_release THEN NULL ELSE c.lease_expires_at END,
            batch_end = CASE WHEN v_release THEN NULL ELSE c.batch_end END,
            batch_retry_count = v_final_cnt,
            attempt_offset = CASE WHEN v_reset THEN NULL ELSE c.attempt_offset END,
            attempt_count = CASE WHEN v_reset THEN 0 ELSE c.attempt_count END,
            total_consumed = c.total_consumed + v_delta
        WHERE c.partition_id = p_pid AND c.consumer_group = v_group;
    END IF;

    RETURN jsonb_build_object(
        'ok', true, 'dlq', false, 'dropped', v_drop_max IS NOT NULL, 'leaseReleased', COALESCE(v_release, false),
        'committed', v_new, 'acked', v_delta, 'retryCount', v_final_cnt,
        'noop', v_noop, 'stale', v_stale, 'unresolved', v_unres,
        'superseded', v_superseded, 'blockedBy', v_stop_idx);
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
        RAISE EXCEPTION 'QACK misaligned group arrays' USING ERRCODE = 'QV301';
    END IF;
    FOR v_i IN 1 .. v_n LOOP
        v_hi := v_lo + p_counts[v_i] - 1;
        RETURN NEXT queen.log_ack(p_tenants[v_i], p_pids[v_i], p_groups[v_i], p_workers[v_i],
                                  p_hashes[v_lo:v_hi], p_statuses[v_lo:v_hi]);
        v_lo := v_hi + 1;
    END LOOP;
END;
$$;

-- File the poisons of a dead-letter hand-off (ENGINE §7.1 step 5, several poisons per call): one log_dlq row per
-- poison (offset, message id, transaction id, the payload text exactly as the frame stores it, error, the retry count
-- it was dead-lettered at), then the cursor goes to p_target, the batch is released and the counters are set
-- (retry count p_retry_count, attempts reset). Only while p_handoff (log_ack's token) still holds the batch: a second
-- call, or a call after the hand-off was aborted or its batch taken over, changes nothing.
CREATE OR REPLACE FUNCTION queen.log_dlq_file(
    p_pid          uuid,
    p_group        text,
    p_handoff      text,
    p_offs         bigint[],
    p_mids         uuid[],
    p_txns         text[],
    p_payloads     text[],
    p_errors       text[],
    p_retry_counts integer[],
    p_target       bigint,
    p_retry_count  integer
) RETURNS jsonb
LANGUAGE plpgsql
AS $$
DECLARE
    v_group text := COALESCE(NULLIF(p_group, ''), '__QUEUE_MODE__');
    v_n     integer := COALESCE(cardinality(p_offs), 0);
    v_c     queen.log_consumers;
BEGIN
    IF v_n = 0 OR COALESCE(cardinality(p_mids), 0) <> v_n OR COALESCE(cardinality(p_txns), 0) <> v_n
       OR COALESCE(cardinality(p_payloads), 0) <> v_n OR COALESCE(cardinality(p_errors), 0) <> v_n
       OR COALESCE(cardinality(p_retry_counts), 0) <> v_n THEN
        RAISE EXCEPTION 'QDLQ misaligned arrays: % offsets', v_n USING ERRCODE = 'QV601';
    END IF;
    v_c := queen._log_lock_cursor(p_pid, v_group);
    IF v_c.partition_id IS NULL THEN
        RETURN jsonb_build_object('ok', false, 'error', 'consumer not found');
    END IF;
    IF v_c.worker_id IS DISTINCT FROM p_handoff THEN
        RETURN jsonb_build_object('ok', false,
            'error', 'dead-letter hand-off lost: its batch was released or leased again');
    END IF;

    INSERT INTO queen.log_dlq (partition_id, consumer_group, "offset", message_id, transaction_id,
                               payload, error, retry_count)
    SELECT p_pid, v_group, u.off, u.mid, u.txn, u.payload, u.err, u.rc
    FROM unnest(p_offs, p_mids, p_txns, p_payloads, p_errors, p_retry_counts) AS u(off, mid, txn, payload, err, rc);

    UPDATE queen.log_consumers c SET
        committed = GREATEST(c.committed, p_target),
        worker_id = NULL, lease_expires_at = NULL, batch_end = NULL,
        attempt_offset = NULL, attempt_count = 0, batch_retry_count = p_retry_count,
        total_consumed = c.total_consumed + GREATEST(p_target - c.committed, 0)
    WHERE c.partition_id = p_pid AND c.consumer_group = v_group;

    RETURN jsonb_build_object('ok', true, 'filed', v_n);
END;
$$;

-- A hand-off that could not file its poisons gives the batch back: released while p_holder (the hand-off token, or the
-- lease a rolled-back transaction left in place) still holds it, the cursor where it is, so the batch redelivers from
-- the first poison. True when it released something.
CREATE OR REPLACE FUNCTION queen.log_dlq_abort(p_pid uuid, p_group text, p_holder text)
RETURNS boolean
LANGUAGE sql
AS $$
    WITH r AS (
        UPDATE queen.log_consumers c SET worker_id = NULL, lease_expires_at = NULL, batch_end = NULL
        WHERE c.partition_id = p_pid AND c.consumer_group = COALESCE(NULLIF(p_group, ''), '__QUEUE_MODE__')
          AND c.worker_id = p_holder
        RETURNING 1)
    SELECT EXISTS (SELECT 1 FROM r)
$$;
