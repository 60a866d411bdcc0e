-- =====================================================================================================================
-- Helpers every other R__ file uses, and the ground rules of the log engine (ENGINE.md §1-§7).
-- Functions live in the repeatable migrations R__*.sql, each defined exactly once under its current name (no _v1/_v2
-- suffixes; SqlFunctionsTest fails on a second definition). Versioned migrations V*.sql hold tables, indexes and
-- data changes only. A repeatable migration re-runs whenever its file changes, so every statement in it must stay
-- idempotent: CREATE OR REPLACE FUNCTION, and DROP FUNCTION IF EXISTS of the old signature before a signature (or
-- return type) changes. Repeatables run after every pending versioned migration, in the order of their names, so a
-- LANGUAGE sql function (its body is checked when it is created) must sit in a file after the functions it calls.
--
-- Ground rules (shared/spec):
--   * SQL never hashes and never decodes a blob. The broker sends 16-byte xxh3-128 hashes (one per frame, frame order)
--     and an opaque, already-packed blob; SQL stores bytea and slices by offset arithmetic. (The one exception: a pop's
--     byte budget reads the uncompressedLength field of the segment header, R__30_pop.sql.)
--   * Positions are one dense BIGINT offset per partition. A segment covers [base_offset, end_offset] (inclusive).
--   * log_consumers.committed is the LAST acked offset (next wanted = committed + 1); a lease covers (committed, batch_end].
--   * Lock order (ENGINE §1.4): queues -> the partitions' push locks (advisory, ascending key; R__20_push.sql) ->
--     log_partitions (ascending id, or any order under the push locks) -> log_consumers (ascending partition_id, group)
--     -> insert-only tables. Pushes take the partition row with FOR NO KEY UPDATE (not FOR UPDATE): it serialises pushes
--     exactly the same way, but does not conflict with the FOR KEY SHARE lock that FK checks take, so a pop inserting a
--     cursor row (FK -> log_partitions) never waits behind an in-flight push. Pops never wait: SKIP LOCKED + try locks.
--   * Every timestamp rendered into JSON is ISO-8601 UTC with microseconds and 'Z' (queen._log_ts).
-- =====================================================================================================================

-- ---------------------------------------------------------------------------------------------------------------------
-- Helpers
-- ---------------------------------------------------------------------------------------------------------------------

-- Cut a hash blob into 16-byte slices with 0-based indexes. Plain SQL + IMMUTABLE so the planner inlines it.
CREATE OR REPLACE FUNCTION queen.log_unnest_hashes(p_hashes bytea)
RETURNS TABLE (idx integer, h bytea)
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT g.i, substring(p_hashes FROM g.i * 16 + 1 FOR 16)
    FROM generate_series(0, octet_length(p_hashes) / 16 - 1) AS g(i)
$$;

-- The slices of a hash blob whose index lies in [p_from, p_to], clamped to the blob: an ack that knows which offsets
-- it may resolve cuts only those out of a row of hundreds. Plain SQL + IMMUTABLE so the planner inlines it.
CREATE OR REPLACE FUNCTION queen.log_unnest_hashes_between(p_hashes bytea, p_from bigint, p_to bigint)
RETURNS TABLE (idx integer, h bytea)
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT g.i, substring(p_hashes FROM g.i * 16 + 1 FOR 16)
    FROM generate_series(LEAST(GREATEST(p_from, 0), 2147483647)::integer,
                         LEAST(p_to, octet_length(p_hashes) / 16 - 1)::integer) AS g(i)
$$;

-- ISO-8601 UTC with microseconds and 'Z'.
CREATE OR REPLACE FUNCTION queen._log_ts(p_ts timestamptz)
RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT to_char(p_ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
$$;

-- Namespace / task derived from a dotted queue name (ENGINE §3.4): namespace = text before the first dot (the whole
-- name when there is none), task = the second dot-part, or '' when the name has no dot.
CREATE OR REPLACE FUNCTION queen._log_name_ns(p_name text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT split_part(p_name, '.', 1) $$;

CREATE OR REPLACE FUNCTION queen._log_name_task(p_name text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT CASE WHEN position('.' IN p_name) > 0 THEN split_part(p_name, '.', 2) ELSE '' END $$;

-- ---------------------------------------------------------------------------------------------------------------------
-- Push
-- ---------------------------------------------------------------------------------------------------------------------

-- Resolve (tenant, queue, partition) to a partition id, provisioning the queue (column defaults, dotted-name
-- namespace/task) and the partition when missing. Concurrency-safe (ON CONFLICT DO NOTHING, then re-read).
CREATE OR REPLACE FUNCTION queen._log_ensure_partition(p_tenant uuid, p_queue text, p_partition text)
RETURNS uuid
LANGUAGE plpgsql
AS $$
DECLARE
    v_qid uuid;
    v_pid uuid;
BEGIN
    SELECT p.id INTO v_pid
    FROM queen.queues q JOIN queen.log_partitions p ON p.queue_id = q.id
    WHERE q.tenant_id = p_tenant AND q.name = p_queue AND p.name = p_partition;
    IF v_pid IS NOT NULL THEN
        RETURN v_pid;
    END IF;

    SELECT q.id INTO v_qid FROM queen.queues q WHERE q.tenant_id = p_tenant AND q.name = p_queue;
    IF v_qid IS NULL THEN
        INSERT INTO queen.queues (tenant_id, name, namespace, task)
        VALUES (p_tenant, p_queue, queen._log_name_ns(p_queue), queen._log_name_task(p_queue))
        ON CONFLICT (tenant_id, name) DO NOTHING;
        SELECT q.id INTO v_qid FROM queen.queues q WHERE q.tenant_id = p_tenant AND q.name = p_queue;
    END IF;
    IF v_qid IS NULL THEN
        RAISE EXCEPTION 'QPUSH unknown queue/partition: %/%', p_queue, p_partition USING ERRCODE = 'QV101';
    END IF;

    INSERT INTO queen.log_partitions (queue_id, name) VALUES (v_qid, p_partition)
    ON CONFLICT (queue_id, name) DO NOTHING;
    SELECT p.id INTO v_pid FROM queen.log_partitions p WHERE p.queue_id = v_qid AND p.name = p_partition;
    IF v_pid IS NULL THEN
        RAISE EXCEPTION 'QPUSH unknown queue/partition: %/%', p_queue, p_partition USING ERRCODE = 'QV101';
    END IF;
    RETURN v_pid;
END;
$$;

-- Where queue mode stands on one partition: cur = the last consumed offset, clamped to the retained range
-- (LEAST(GREATEST(committed, log_start - 1), last_offset)); proc = the frames under a LIVE lease (worker set, batch_end
-- set, lease_expires_at > now()). p_committed etc. NULL = no cursor row yet. Inlined by the planner (plain SQL).
CREATE OR REPLACE FUNCTION queen._log_queue_position(p_log_start bigint, p_last bigint, p_committed bigint,
                                                     p_worker text, p_expires timestamptz, p_batch_end bigint)
RETURNS TABLE (cur bigint, proc bigint)
LANGUAGE sql STABLE
AS $$
    SELECT LEAST(GREATEST(COALESCE(p_committed, -1), p_log_start - 1), p_last),
           CASE WHEN p_worker IS NOT NULL AND p_expires > now() AND p_batch_end IS NOT NULL
                THEN GREATEST(LEAST(p_batch_end, p_last) - LEAST(GREATEST(p_committed, p_log_start - 1), p_last), 0)
                ELSE 0 END
$$;

-- The tenant's queue row by name (the default tenant when p_tenant is NULL); all fields NULL when there is none.
CREATE OR REPLACE FUNCTION queen._log_queue(p_tenant uuid, p_queue text)
RETURNS queen.queues
LANGUAGE sql STABLE
AS $$
    SELECT * FROM queen.queues q
    WHERE q.tenant_id = COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001') AND q.name = p_queue
$$;

-- Locks one (partition, group) cursor row FOR UPDATE and returns it; all fields NULL when there is none
-- (log_dlq_file's lock). PL/pgSQL rather than SQL: a SQL function that cannot be inlined (a FOR UPDATE, a composite
-- result) is parsed and planned again on every call, about 0.1 ms of PostgreSQL CPU; PL/pgSQL keeps its plan.
CREATE OR REPLACE FUNCTION queen._log_lock_cursor(p_pid uuid, p_group text)
RETURNS queen.log_consumers
LANGUAGE plpgsql
AS $$
DECLARE
    v_c queen.log_consumers;
BEGIN
    SELECT * INTO v_c FROM queen.log_consumers c WHERE c.partition_id = p_pid AND c.consumer_group = p_group FOR UPDATE;
    RETURN v_c;
END;
$$;
