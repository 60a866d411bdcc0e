-- =====================================================================================================================
-- V2: the log engine ("segments"): tables, helpers and stored procedures. ENGINE.md §1-§7, API.md §5.2-§5.10.
--
-- Ground rules (shared/spec):
--   * SQL never hashes and never decodes a blob. The broker sends 16-byte xxh3-128 hashes (one per frame, frame order)
--     and an opaque, already-packed blob; SQL stores bytea and slices by offset arithmetic.
--   * Positions are one dense BIGINT offset per partition. A segment covers [base_offset, end_offset] (inclusive).
--   * log_consumers.committed is the LAST acked offset (next wanted = committed + 1); a lease covers (committed, batch_end].
--   * Lock order (ENGINE §1.4): queues -> log_partitions (ascending id) -> log_consumers (ascending partition_id, group)
--     -> insert-only tables. Pushes take the partition row with FOR NO KEY UPDATE (not FOR UPDATE): it serialises pushes
--     exactly the same way, but does not conflict with the FOR KEY SHARE lock that FK checks take, so a pop inserting a
--     cursor row (FK -> log_partitions) never waits behind an in-flight push. Pops never wait: SKIP LOCKED + try locks.
--   * Every timestamp rendered into JSON is ISO-8601 UTC with microseconds and 'Z' (queen._log_ts).
--
-- Runs inside one Flyway transaction: no CONCURRENTLY. Works on PostgreSQL 15 and 16 (NULLS NOT DISTINCT needs 15).
-- =====================================================================================================================

-- ---------------------------------------------------------------------------------------------------------------------
-- Tables
-- ---------------------------------------------------------------------------------------------------------------------

-- Queue identity and options. Column defaults are the push/pop auto-creation defaults (lease 60 s, dedup 3600 s, DLQ on);
-- /configure has its own defaults (leaseTime 300) applied in configure_queue_v1.
CREATE TABLE queen.queues (
    id                              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id                       uuid NOT NULL DEFAULT '00000000-0000-0000-0000-000000000001',
    name                            varchar(255) NOT NULL,
    namespace                       text,
    task                            text,
    priority                        integer NOT NULL DEFAULT 0,
    lease_time                      integer NOT NULL DEFAULT 60,
    retry_limit                     integer NOT NULL DEFAULT 3,
    retry_delay                     integer NOT NULL DEFAULT 1000,
    ttl                             integer NOT NULL DEFAULT 3600,
    max_queue_size                  integer NOT NULL DEFAULT 0,
    dead_letter_queue               boolean NOT NULL DEFAULT true,
    dlq_after_max_retries           boolean NOT NULL DEFAULT true,
    delayed_processing              integer NOT NULL DEFAULT 0,
    window_buffer                   integer NOT NULL DEFAULT 0,
    retention_seconds               integer NOT NULL DEFAULT 0,
    completed_retention_seconds     integer NOT NULL DEFAULT 0,
    retention_enabled               boolean NOT NULL DEFAULT false,
    encryption_enabled              boolean NOT NULL DEFAULT false,
    max_wait_time_seconds           integer NOT NULL DEFAULT 0,
    min_pop_wait_time               integer NOT NULL DEFAULT 0,
    dedup_window_seconds            integer NOT NULL DEFAULT 3600,
    retention_sink_hold             text NOT NULL DEFAULT '',
    retention_sink_hold_max_seconds integer NOT NULL DEFAULT 604800,
    created_at                      timestamptz NOT NULL DEFAULT now(),
    updated_at                      timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX queues_tenant_name_uk ON queen.queues (tenant_id, name);
CREATE INDEX idx_queues_name ON queen.queues (name);

-- One row per (queue, partition name). id is the wire partitionId (globally unique).
CREATE TABLE queen.log_partitions (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    queue_id       uuid NOT NULL REFERENCES queen.queues (id) ON DELETE CASCADE,
    name           text NOT NULL DEFAULT 'Default',
    last_offset    bigint NOT NULL DEFAULT -1,       -- allocator: next base = last_offset + 1
    log_start      bigint NOT NULL DEFAULT 0,        -- retention watermark: every offset below is gone
    txns_start     bigint NOT NULL DEFAULT 0,        -- log_txns purge watermark
    last_write_at  timestamptz NOT NULL DEFAULT now(), -- changes at most once per second (HOT-friendly)
    oldest_live_at timestamptz,                      -- retention work-list watermarks (NULL = nothing live)
    oldest_txn_at  timestamptz,
    created_at     timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT log_partitions_queue_name_uk UNIQUE (queue_id, name)
) WITH (fillfactor = 70, autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 500, vacuum_truncate = off);
-- Pop candidates of recently written partitions (empty-scan floor).
CREATE INDEX idx_log_partitions_queue_write ON queen.log_partitions (queue_id, last_write_at);
-- Random-pivot candidate walk (pop without an empty-scan floor): ordered by id inside one queue, stops at LIMIT.
CREATE INDEX idx_log_partitions_queue_id ON queen.log_partitions (queue_id, id);
-- Retention work lists (a fresh table, so no CONCURRENTLY is needed).
CREATE INDEX idx_log_partitions_oldest_live ON queen.log_partitions (queue_id, oldest_live_at) WHERE oldest_live_at IS NOT NULL;
CREATE INDEX idx_log_partitions_oldest_txn ON queen.log_partitions (queue_id, oldest_txn_at) WHERE oldest_txn_at IS NOT NULL;

-- Segments: the only home of payloads. No secondary index: the PK serves pops, covering lookups and retention.
CREATE TABLE queen.log_segments (
    partition_id uuid NOT NULL REFERENCES queen.log_partitions (id) ON DELETE CASCADE,
    base_offset  bigint NOT NULL,
    end_offset   bigint NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    blob         bytea NOT NULL,
    PRIMARY KEY (partition_id, base_offset),
    CONSTRAINT log_segments_range_ck CHECK (end_offset >= base_offset)
);
-- Blobs are already zstd-compressed by the broker: keep TOAST from trying again.
-- (ALTER rather than the column-level STORAGE clause, which CREATE TABLE only accepts from PG 16.)
ALTER TABLE queen.log_segments ALTER COLUMN blob SET STORAGE EXTERNAL;

-- Hash sidecar: one row per pushed segment, 16 bytes per frame in frame order. No FK (ack resolution, dedup probe).
CREATE TABLE queen.log_txns (
    partition_id uuid NOT NULL,
    base_offset  bigint NOT NULL,
    end_offset   bigint NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    hashes       bytea NOT NULL,
    PRIMARY KEY (partition_id, base_offset)
);
ALTER TABLE queen.log_txns ALTER COLUMN hashes SET STORAGE EXTERNAL;   -- random bytes: compression never pays

-- Consumption state: one row per (partition, consumer group). '__QUEUE_MODE__' is the queue-mode group.
CREATE TABLE queen.log_consumers (
    partition_id      uuid NOT NULL REFERENCES queen.log_partitions (id) ON DELETE CASCADE,
    consumer_group    text NOT NULL DEFAULT '__QUEUE_MODE__',
    committed         bigint NOT NULL DEFAULT -1,   -- last acked offset
    batch_end         bigint,                       -- last offset of the leased batch (NULL = no batch)
    worker_id         text,                         -- the wire leaseId
    lease_expires_at  timestamptz,
    lease_acquired_at timestamptz,
    batch_retry_count integer NOT NULL DEFAULT 0,   -- retry budget spent (explicit 'failed' acks only)
    attempt_offset    bigint,                       -- start offset of the last leased delivery
    attempt_count     integer NOT NULL DEFAULT 0,   -- deliveries of that start offset (redelivery telemetry)
    total_consumed    bigint NOT NULL DEFAULT 0,
    lease_conflated   boolean NOT NULL DEFAULT false,
    created_at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (partition_id, consumer_group)
) WITH (fillfactor = 50, autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 500, vacuum_truncate = off);

-- Dead letters: one row per (message, group); a verbatim payload snapshot taken by the broker. No FK on partition_id.
CREATE TABLE queen.log_dlq (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    partition_id   uuid NOT NULL,
    consumer_group text NOT NULL,
    "offset"       bigint NOT NULL,
    message_id     uuid,
    transaction_id text,
    payload        jsonb,
    error          text,
    retry_count    integer,
    failed_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX idx_log_dlq_partition_failed_at ON queen.log_dlq (partition_id, failed_at DESC);

-- Durable group registrations. Queue-wide rows: queue_id set, partition_name '', namespace '', task ''.
-- The first insert of a row elects the caller that bulk-seeds every partition's cursor and stores the subscription.
CREATE TABLE queen.consumer_groups_metadata (
    id                     uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id              uuid NOT NULL DEFAULT '00000000-0000-0000-0000-000000000001',
    consumer_group         text NOT NULL,
    queue_id               uuid REFERENCES queen.queues (id) ON DELETE CASCADE,  -- NULL only for discovery rows
    partition_name         text NOT NULL DEFAULT '',
    namespace              text,
    task                   text,
    subscription_mode      text NOT NULL DEFAULT 'all',
    subscription_timestamp timestamptz NOT NULL DEFAULT '1970-01-01 00:00:00+00',
    conflation             boolean NOT NULL DEFAULT false,
    created_at             timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT cgm_mode_ck CHECK (subscription_mode IN ('all', 'new', 'timestamp'))
);
CREATE UNIQUE INDEX cgm_identity_uk ON queen.consumer_groups_metadata
    (tenant_id, consumer_group, queue_id, partition_name, namespace, task) NULLS NOT DISTINCT;
CREATE INDEX idx_cgm_queue ON queen.consumer_groups_metadata (queue_id);

-- Empty-scan floor per (queue, group) for wildcard pops: partitions last written before
-- last_empty_scan_at - 2 min are not candidates. '-infinity' = no floor yet.
CREATE TABLE queen.consumer_watermarks (
    queue_id           uuid NOT NULL REFERENCES queen.queues (id) ON DELETE CASCADE,
    consumer_group     text NOT NULL,
    last_empty_scan_at timestamptz NOT NULL DEFAULT '-infinity',
    updated_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (queue_id, consumer_group)
) WITH (fillfactor = 70);

-- Retention audit (written by the retention steps). No FK.
CREATE TABLE queen.retention_history (
    id               bigserial PRIMARY KEY,
    partition_id     uuid NOT NULL,
    messages_deleted bigint NOT NULL DEFAULT 0,
    retention_type   text NOT NULL,
    executed_at      timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT retention_history_type_ck
        CHECK (retention_type IN ('retention', 'completed_retention', 'max_wait_time_eviction'))
);
CREATE INDEX idx_retention_history_partition ON queen.retention_history (partition_id, executed_at DESC);
CREATE INDEX idx_retention_history_executed ON queen.retention_history (executed_at);

-- ---------------------------------------------------------------------------------------------------------------------
-- Helpers
-- ---------------------------------------------------------------------------------------------------------------------

-- Cut a hash blob into 16-byte slices with 0-based indexes. Plain SQL + IMMUTABLE so the planner inlines it.
CREATE FUNCTION queen.log_unnest_hashes(p_hashes bytea)
RETURNS TABLE (idx integer, h bytea)
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT g.i, substring(p_hashes FROM g.i * 16 + 1 FOR 16)
    FROM generate_series(0, octet_length(p_hashes) / 16 - 1) AS g(i)
$$;

-- ISO-8601 UTC with microseconds and 'Z'.
CREATE FUNCTION queen._log_ts(p_ts timestamptz)
RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT to_char(p_ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
$$;

-- Namespace / task derived from a dotted queue name (ENGINE §3.4): namespace = text before the first dot (the whole
-- name when there is none), task = the second dot-part, or '' when the name has no dot.
CREATE FUNCTION queen._log_name_ns(p_name text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT split_part(p_name, '.', 1) $$;

CREATE FUNCTION queen._log_name_task(p_name text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT CASE WHEN position('.' IN p_name) > 0 THEN split_part(p_name, '.', 2) ELSE '' END $$;

-- ---------------------------------------------------------------------------------------------------------------------
-- Push
-- ---------------------------------------------------------------------------------------------------------------------

-- Resolve (tenant, queue, partition) to a partition id, provisioning the queue (column defaults, dotted-name
-- namespace/task) and the partition when missing. Concurrency-safe (ON CONFLICT DO NOTHING, then re-read).
CREATE FUNCTION queen._log_ensure_partition(p_tenant uuid, p_queue text, p_partition text)
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
        RAISE EXCEPTION 'QPUSH unknown queue/partition: %/%', p_queue, p_partition;
    END IF;

    INSERT INTO queen.log_partitions (queue_id, name) VALUES (v_qid, p_partition)
    ON CONFLICT (queue_id, name) DO NOTHING;
    SELECT p.id INTO v_pid FROM queen.log_partitions p WHERE p.queue_id = v_qid AND p.name = p_partition;
    IF v_pid IS NULL THEN
        RAISE EXCEPTION 'QPUSH unknown queue/partition: %/%', p_queue, p_partition;
    END IF;
    RETURN v_pid;
END;
$$;

-- The single allocator code path: lock the partition, probe the dedup window, allocate, write segment + txns.
-- p_verified: the broker's promise that no incoming hash exists at an offset <= p_verified (-1 = probe everything).
CREATE FUNCTION queen._log_push_into(p_pid uuid, p_count integer, p_hashes bytea, p_blob bytea, p_verified bigint)
RETURNS jsonb
LANGUAGE plpgsql
AS $$
DECLARE
    v_last    bigint;
    v_tstart  bigint;
    v_window  integer;
    v_now     timestamptz;
    v_from    bigint;
    v_dups    jsonb;
    v_end     bigint;
    v_base    bigint;
BEGIN
    SELECT p.last_offset, p.txns_start, q.dedup_window_seconds
    INTO v_last, v_tstart, v_window
    FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
    WHERE p.id = p_pid
    FOR NO KEY UPDATE OF p;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'QPUSH unknown queue/partition: %', p_pid;
    END IF;
    -- Stamped under the partition lock: created_at only grows in offset order within a partition.
    v_now := clock_timestamp();

    IF COALESCE(v_window, 0) > 0 THEN
        v_from := GREATEST(COALESCE(p_verified, -1), v_tstart - 1);
        IF v_last > v_from THEN
            SELECT jsonb_agg(jsonb_build_object('i', d.i, 'off', d.off) ORDER BY d.i)
            INTO v_dups
            FROM (
                SELECT inc.idx AS i, MIN(o.off) AS off
                FROM queen.log_unnest_hashes(p_hashes) inc
                JOIN (
                    SELECT th.h, t.base_offset + th.idx AS off
                    FROM queen.log_txns t
                    CROSS JOIN LATERAL queen.log_unnest_hashes(t.hashes) th
                    WHERE t.partition_id = p_pid
                      AND t.base_offset >= v_tstart
                      AND t.end_offset > v_from
                      AND t.created_at >= v_now - make_interval(secs => v_window)
                ) o ON o.h = inc.h
                GROUP BY inc.idx
            ) d;
            IF v_dups IS NOT NULL THEN
                RETURN jsonb_build_object('status', 'duplicate', 'partitionId', p_pid, 'dups', v_dups);
            END IF;
        END IF;
    END IF;

    UPDATE queen.log_partitions p SET
        last_offset    = p.last_offset + p_count,
        last_write_at  = CASE WHEN p.last_write_at < v_now - interval '1 second' THEN v_now ELSE p.last_write_at END,
        oldest_live_at = COALESCE(p.oldest_live_at, v_now),
        oldest_txn_at  = COALESCE(p.oldest_txn_at, v_now)
    WHERE p.id = p_pid
    RETURNING p.last_offset INTO v_end;
    v_base := v_end - p_count + 1;

    INSERT INTO queen.log_segments (partition_id, base_offset, end_offset, created_at, blob)
    VALUES (p_pid, v_base, v_end, v_now, p_blob);
    INSERT INTO queen.log_txns (partition_id, base_offset, end_offset, created_at, hashes)
    VALUES (p_pid, v_base, v_end, v_now, p_hashes);

    RETURN jsonb_build_object('status', 'queued', 'partitionId', p_pid,
                              'baseOffset', v_base, 'createdAt', queen._log_ts(v_now));
END;
$$;

-- Push one segment (ENGINE §3.3). Returns {"status":"queued","partitionId","baseOffset","createdAt"} or
-- {"status":"duplicate","partitionId","dups":[{"i","off"}]} (nothing written).
CREATE FUNCTION queen.log_push_v1(
    p_tenant    uuid,
    p_queue     text,
    p_partition text,
    p_count     integer,
    p_hashes    bytea,
    p_blob      bytea,
    p_verified  bigint DEFAULT -1
) RETURNS jsonb
LANGUAGE plpgsql
AS $$
DECLARE
    v_pid uuid;
BEGIN
    IF p_count IS NULL OR p_count < 1 OR p_hashes IS NULL OR octet_length(p_hashes) <> 16 * p_count THEN
        RAISE EXCEPTION 'QPUSH bad segment: count=% hashes=% bytes', p_count, octet_length(p_hashes);
    END IF;
    IF p_queue IS NULL OR p_blob IS NULL THEN
        RAISE EXCEPTION 'QPUSH bad segment: queue and blob are required';
    END IF;
    v_pid := queen._log_ensure_partition(COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001'),
                                         p_queue, COALESCE(p_partition, 'Default'));
    RETURN queen._log_push_into(v_pid, p_count, p_hashes, p_blob, p_verified);
END;
$$;

-- Push many segments in one transaction (ENGINE §3.5). Returns a JSON array aligned with the inputs, each element what
-- log_push_v1 would have returned. Provisioning sorted by unique key; every target partition locked up front in
-- ascending id order; then the pushes run in array order (the same partition may appear twice: offsets stay dense).
CREATE FUNCTION queen.log_push_multi_v1(
    p_tenants    uuid[],
    p_queues     text[],
    p_partitions text[],
    p_counts     integer[],
    p_hashes     bytea[],
    p_blobs      bytea[],
    p_verified   bigint[] DEFAULT NULL
) RETURNS jsonb
LANGUAGE plpgsql
AS $$
DECLARE
    v_n     integer := COALESCE(cardinality(p_queues), 0);
    v_pids  uuid[];
    v_out   jsonb := '[]'::jsonb;
    v_i     integer;
    v_miss  boolean;
BEGIN
    IF COALESCE(cardinality(p_tenants), 0) <> v_n
       OR COALESCE(cardinality(p_partitions), 0) <> v_n
       OR COALESCE(cardinality(p_counts), 0) <> v_n
       OR COALESCE(cardinality(p_hashes), 0) <> v_n
       OR COALESCE(cardinality(p_blobs), 0) <> v_n
       OR (p_verified IS NOT NULL AND cardinality(p_verified) <> v_n) THEN
        RAISE EXCEPTION 'QMULTI misaligned arrays: tenants=% queues=% partitions=% counts=% hashes=% blobs=%',
            COALESCE(cardinality(p_tenants), 0), v_n, COALESCE(cardinality(p_partitions), 0),
            COALESCE(cardinality(p_counts), 0), COALESCE(cardinality(p_hashes), 0), COALESCE(cardinality(p_blobs), 0);
    END IF;
    IF v_n = 0 THEN
        RETURN v_out;
    END IF;

    FOR v_i IN 1 .. v_n LOOP
        IF p_counts[v_i] IS NULL OR p_counts[v_i] < 1 OR p_hashes[v_i] IS NULL
           OR octet_length(p_hashes[v_i]) <> 16 * p_counts[v_i] THEN
            RAISE EXCEPTION 'QPUSH bad segment: element % count=% hashes=% bytes',
                v_i - 1, p_counts[v_i], octet_length(p_hashes[v_i]);
        END IF;
        IF p_queues[v_i] IS NULL OR p_blobs[v_i] IS NULL THEN
            RAISE EXCEPTION 'QMULTI element % has no queue or no blob', v_i - 1;
        END IF;
    END LOOP;

    -- Steady state: everything exists, one join, no inserts.
    SELECT bool_or(p.id IS NULL) INTO v_miss
    FROM unnest(p_tenants, p_queues, p_partitions) AS u(t, q, pn)
    LEFT JOIN queen.queues q ON q.tenant_id = COALESCE(u.t, '00000000-0000-0000-0000-000000000001') AND q.name = u.q
    LEFT JOIN queen.log_partitions p ON p.queue_id = q.id AND p.name = COALESCE(u.pn, 'Default');

    IF v_miss THEN
        INSERT INTO queen.queues (tenant_id, name, namespace, task)
        SELECT DISTINCT COALESCE(u.t, '00000000-0000-0000-0000-000000000001'::uuid), u.q,
               queen._log_name_ns(u.q), queen._log_name_task(u.q)
        FROM unnest(p_tenants, p_queues) AS u(t, q)
        ORDER BY 1, 2
        ON CONFLICT (tenant_id, name) DO NOTHING;

        INSERT INTO queen.log_partitions (queue_id, name)
        SELECT DISTINCT q.id, COALESCE(u.pn, 'Default')
        FROM unnest(p_tenants, p_queues, p_partitions) AS u(t, qn, pn)
        JOIN queen.queues q ON q.tenant_id = COALESCE(u.t, '00000000-0000-0000-0000-000000000001') AND q.name = u.qn
        ORDER BY 1, 2
        ON CONFLICT (queue_id, name) DO NOTHING;
    END IF;

    SELECT array_agg(p.id ORDER BY u.ord) INTO v_pids
    FROM unnest(p_tenants, p_queues, p_partitions) WITH ORDINALITY AS u(t, qn, pn, ord)
    LEFT JOIN queen.queues q ON q.tenant_id = COALESCE(u.t, '00000000-0000-0000-0000-000000000001') AND q.name = u.qn
    LEFT JOIN queen.log_partitions p ON p.queue_id = q.id AND p.name = COALESCE(u.pn, 'Default');
    IF array_position(v_pids, NULL) IS NOT NULL THEN
        RAISE EXCEPTION 'QMULTI unresolved segment % (queue/partition missing after provisioning)',
            array_position(v_pids, NULL) - 1;
    END IF;

    -- Deadlock-free pre-lock: one statement, LockRows above the Sort, so rows lock in ascending id order.
    PERFORM 1 FROM queen.log_partitions p WHERE p.id = ANY (v_pids) ORDER BY p.id FOR NO KEY UPDATE;

    FOR v_i IN 1 .. v_n LOOP
        v_out := v_out || jsonb_build_array(
            queen._log_push_into(v_pids[v_i], p_counts[v_i], p_hashes[v_i], p_blobs[v_i],
                                 COALESCE(p_verified[v_i], -1)));
    END LOOP;
    RETURN v_out;
END;
$$;

-- The covering segment of an offset (backward PK probe + coverage check), or no row.
CREATE FUNCTION queen.log_segment_at_v1(p_pid uuid, p_off bigint)
RETURNS TABLE (base_offset bigint, end_offset bigint, created_at timestamptz, blob bytea)
LANGUAGE sql STABLE
AS $$
    SELECT s.base_offset, s.end_offset, s.created_at, s.blob
    FROM (
        SELECT s0.base_offset, s0.end_offset, s0.created_at, s0.blob
        FROM queen.log_segments s0
        WHERE s0.partition_id = p_pid AND s0.base_offset <= p_off
        ORDER BY s0.base_offset DESC
        LIMIT 1
    ) s
    WHERE s.end_offset >= p_off
$$;

-- ---------------------------------------------------------------------------------------------------------------------
-- Pop
-- ---------------------------------------------------------------------------------------------------------------------

-- Claim one (partition, group) and compute the slices to deliver (ENGINE §4.2 steps 2-9). Never blocks: the cursor row
-- is claimed FOR UPDATE SKIP LOCKED, a missing row is created under a transaction-scoped TRY advisory lock.
-- Returns the slices as arrays (bases/starts/takes/counts, offset order) so the caller fetches blobs in one pass.
-- p_seed_mode/p_seed_ts: how to seed a missing cursor row ('all' | 'new' | 'timestamp').
CREATE FUNCTION queen._log_pop_claim(
    p_pid       uuid,
    p_group     text,
    p_budget    integer,
    p_lease_s   integer,
    p_worker    text,
    p_auto_ack  boolean,
    p_seed_mode text,
    p_seed_ts   timestamptz,
    p_delayed   integer,
    p_window    integer,
    p_now       timestamptz,
    OUT o_bases   bigint[],
    OUT o_starts  integer[],
    OUT o_takes   integer[],
    OUT o_counts  integer[],
    OUT o_taken   integer,
    OUT o_attempt integer,
    OUT o_expires timestamptz
)
LANGUAGE plpgsql
AS $$
DECLARE
    v_c         record;
    v_last      bigint;
    v_logstart  bigint;
    v_seed      bigint;
    v_newest    timestamptz;
    v_deadline  timestamptz;
    v_wanted    bigint;
    v_budget    integer := GREATEST(COALESCE(p_budget, 1), 1);
    v_take      integer;
    v_start     bigint;
    v_lastdel   bigint;
    v_any_data  boolean := false;
    v_seg       record;
BEGIN
    o_taken := 0;

    -- window_buffer: the whole partition waits until it has been quiet for N seconds.
    IF COALESCE(p_window, 0) > 0 THEN
        SELECT s.created_at INTO v_newest
        FROM queen.log_segments s WHERE s.partition_id = p_pid
        ORDER BY s.base_offset DESC LIMIT 1;
        IF v_newest IS NOT NULL AND v_newest > p_now - make_interval(secs => p_window) THEN
            RETURN;
        END IF;
    END IF;

    SELECT c.committed, c.attempt_offset, c.attempt_count INTO v_c
    FROM queen.log_consumers c
    WHERE c.partition_id = p_pid AND c.consumer_group = p_group
      AND (c.worker_id IS NULL OR c.lease_expires_at IS NULL OR c.lease_expires_at < p_now)
    FOR UPDATE SKIP LOCKED;

    IF NOT FOUND THEN
        PERFORM 1 FROM queen.log_consumers c WHERE c.partition_id = p_pid AND c.consumer_group = p_group;
        IF FOUND THEN
            RETURN;                                   -- leased or locked by a concurrent pop: skip, never wait
        END IF;
        IF NOT pg_try_advisory_xact_lock(hashtextextended(p_pid::text || '/' || p_group, 42)) THEN
            RETURN;                                   -- somebody else is creating this cursor right now
        END IF;
        SELECT p.last_offset, p.log_start INTO v_last, v_logstart FROM queen.log_partitions p WHERE p.id = p_pid;
        IF NOT FOUND THEN
            RETURN;
        END IF;
        IF p_seed_mode = 'new' THEN
            v_seed := v_last;
        ELSIF p_seed_mode = 'timestamp' AND p_seed_ts IS NOT NULL THEN
            SELECT s.base_offset - 1 INTO v_seed
            FROM queen.log_segments s
            WHERE s.partition_id = p_pid AND s.base_offset >= v_logstart AND s.created_at >= p_seed_ts
            ORDER BY s.base_offset LIMIT 1;
            v_seed := COALESCE(v_seed, v_last);
        ELSE
            v_seed := GREATEST(v_logstart - 1, -1);
        END IF;
        INSERT INTO queen.log_consumers (partition_id, consumer_group, committed)
        VALUES (p_pid, p_group, v_seed)
        ON CONFLICT (partition_id, consumer_group) DO NOTHING;

        SELECT c.committed, c.attempt_offset, c.attempt_count INTO v_c
        FROM queen.log_consumers c
        WHERE c.partition_id = p_pid AND c.consumer_group = p_group
          AND (c.worker_id IS NULL OR c.lease_expires_at IS NULL OR c.lease_expires_at < p_now)
        FOR UPDATE SKIP LOCKED;
        IF NOT FOUND THEN
            RETURN;
        END IF;
    END IF;

    SELECT p.last_offset INTO v_last FROM queen.log_partitions p WHERE p.id = p_pid;
    IF v_last IS NULL OR v_last <= v_c.committed THEN
        RETURN;                                       -- nothing past the cursor
    END IF;

    v_wanted := v_c.committed + 1;
    IF COALESCE(p_delayed, 0) > 0 THEN
        v_deadline := p_now - make_interval(secs => p_delayed);
    END IF;
    o_bases := '{}'; o_starts := '{}'; o_takes := '{}'; o_counts := '{}';

    -- Head probe: the segment with the largest base <= wanted; if it covers wanted, start mid-segment.
    SELECT s.base_offset, s.end_offset, s.created_at INTO v_seg
    FROM queen.log_segments s
    WHERE s.partition_id = p_pid AND s.base_offset <= v_wanted
    ORDER BY s.base_offset DESC LIMIT 1;
    IF FOUND AND v_seg.end_offset >= v_wanted THEN
        v_any_data := true;
        IF v_deadline IS NULL OR v_seg.created_at <= v_deadline THEN
            v_take := LEAST(v_seg.end_offset - v_wanted + 1, v_budget)::integer;
            o_bases  := o_bases  || v_seg.base_offset;
            o_starts := o_starts || (v_wanted - v_seg.base_offset)::integer;
            o_takes  := o_takes  || v_take;
            o_counts := o_counts || (v_seg.end_offset - v_seg.base_offset + 1)::integer;
            o_taken  := v_take;
            v_start  := v_wanted;
            v_lastdel := v_wanted + v_take - 1;
        ELSE
            v_budget := 0;                            -- head is delayed: so is everything after it (suffix)
        END IF;
    END IF;

    -- Forward walk: every later segment from frame 0; retention gaps are simply skipped; delayed segments are a suffix.
    IF o_taken < v_budget THEN
        FOR v_seg IN
            SELECT s.base_offset, s.end_offset, s.created_at
            FROM queen.log_segments s
            WHERE s.partition_id = p_pid AND s.base_offset > v_wanted
            ORDER BY s.base_offset
        LOOP
            v_any_data := true;
            EXIT WHEN v_deadline IS NOT NULL AND v_seg.created_at > v_deadline;
            v_take := LEAST(v_seg.end_offset - v_seg.base_offset + 1, v_budget - o_taken)::integer;
            o_bases  := o_bases  || v_seg.base_offset;
            o_starts := o_starts || 0;
            o_takes  := o_takes  || v_take;
            o_counts := o_counts || (v_seg.end_offset - v_seg.base_offset + 1)::integer;
            o_taken  := o_taken + v_take;
            IF v_start IS NULL THEN
                v_start := v_seg.base_offset;
            END IF;
            v_lastdel := v_seg.base_offset + v_take - 1;
            EXIT WHEN o_taken >= v_budget;
        END LOOP;
    ELSIF NOT v_any_data THEN
        v_any_data := EXISTS (SELECT 1 FROM queen.log_segments s
                              WHERE s.partition_id = p_pid AND s.base_offset > v_wanted);
    END IF;

    IF o_taken = 0 THEN
        -- Nothing left at or after the cursor (retention removed it): seal, so the partition stops being a candidate.
        -- Never when segments exist but are merely delayed.
        IF NOT v_any_data THEN
            UPDATE queen.log_consumers c SET committed = v_last
            WHERE c.partition_id = p_pid AND c.consumer_group = p_group AND c.committed < v_last;
        END IF;
        o_bases := NULL; o_starts := NULL; o_takes := NULL; o_counts := NULL;
        RETURN;
    END IF;

    IF p_auto_ack THEN
        UPDATE queen.log_consumers c SET
            committed = v_lastdel,
            worker_id = NULL, lease_expires_at = NULL, lease_acquired_at = NULL, batch_end = NULL,
            total_consumed = c.total_consumed + o_taken
        WHERE c.partition_id = p_pid AND c.consumer_group = p_group;
        o_attempt := 1;
        o_expires := NULL;
    ELSE
        UPDATE queen.log_consumers c SET
            worker_id = p_worker,
            lease_expires_at = p_now + make_interval(secs => p_lease_s),
            lease_acquired_at = p_now,
            batch_end = v_lastdel,
            attempt_count = CASE WHEN c.attempt_offset IS NOT DISTINCT FROM v_start THEN c.attempt_count + 1 ELSE 1 END,
            attempt_offset = v_start
        WHERE c.partition_id = p_pid AND c.consumer_group = p_group
        RETURNING GREATEST(c.attempt_count, 1), c.lease_expires_at INTO o_attempt, o_expires;
    END IF;
END;
$$;

-- Pop (ENGINE §4.2-§4.3). One row per delivered segment slice; partitions in claim order, slices in offset order.
--   p_queue NULL        -> discovery across the tenant's queues by p_namespace / p_task (non-null ones must match).
--   p_partition NULL    -> any partition of the queue (random candidates, shared budget, p_max_partitions cap).
--   p_group NULL or ''  -> '__QUEUE_MODE__'.
CREATE FUNCTION queen.log_pop_v1(
    p_tenant         uuid,
    p_queue          text,
    p_partition      text,
    p_group          text,
    p_budget         integer,
    p_max_partitions integer,
    p_lease_s        integer,
    p_worker         text,
    p_auto_ack       boolean,
    p_sub_mode       text,
    p_sub_from       timestamptz,
    p_namespace      text DEFAULT NULL,
    p_task           text DEFAULT NULL
) RETURNS TABLE (
    partition_id     uuid,
    partition_name   text,
    queue_name       text,
    delivery_attempt integer,
    lease_expires_at timestamptz,
    base_offset      bigint,
    start_idx        integer,
    take             integer,
    msg_count        integer,
    created_at       timestamptz,
    blob             bytea
)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
    v_tenant    uuid := COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001');
    v_group     text := COALESCE(NULLIF(p_group, ''), '__QUEUE_MODE__');
    v_now       timestamptz := clock_timestamp();
    v_remaining integer := GREATEST(COALESCE(p_budget, 1), 1);
    v_maxp      integer;
    v_cap       integer;
    v_claimed   integer := 0;
    v_q_claimed integer;
    v_mode      text;
    v_mode_ts   timestamptz;
    v_seed_mode text;
    v_seed_ts   timestamptz;
    v_inserted  integer;
    v_lease     integer;
    v_floor     timestamptz;
    v_wm_upd    timestamptz;
    v_pending   boolean;
    v_pivot     uuid;
    v_q         record;
    v_pid       uuid;
    v_pname     text;
    v_r         record;
    v_cur       refcursor;
BEGIN
    IF p_partition IS NOT NULL THEN
        v_maxp := 1;
    ELSIF p_max_partitions IS NULL OR p_max_partitions <= 0 THEN
        v_maxp := 2147483647;
    ELSE
        v_maxp := p_max_partitions;
    END IF;
    v_cap := CASE WHEN v_maxp >= 128 THEN 512 ELSE LEAST(GREATEST(v_maxp * 4, 64), 512) END;

    -- The pop's own subscription intent. Queue mode is always 'all'. 'timestamp' without a time degrades to 'new'.
    IF v_group = '__QUEUE_MODE__' THEN
        v_mode := 'all';
    ELSE
        v_mode := lower(COALESCE(p_sub_mode, 'all'));
        IF v_mode IN ('new-only', 'new_only', 'newonly', 'now') THEN
            v_mode := 'new';
        ELSIF v_mode NOT IN ('all', 'new', 'timestamp') THEN
            v_mode := 'all';
        END IF;
        IF v_mode = 'timestamp' AND p_sub_from IS NULL THEN
            v_mode := 'new';
        END IF;
    END IF;
    v_mode_ts := CASE v_mode WHEN 'all' THEN '1970-01-01 00:00:00+00'::timestamptz
                             WHEN 'new' THEN v_now
                             ELSE p_sub_from END;

    IF p_queue IS NOT NULL THEN
        -- A queue-scoped pop on a missing queue provisions the queue row (not a partition), so a group can
        -- subscribe before the first push.
        IF NOT EXISTS (SELECT 1 FROM queen.queues q WHERE q.tenant_id = v_tenant AND q.name = p_queue) THEN
            INSERT INTO queen.queues (tenant_id, name, namespace, task)
            VALUES (v_tenant, p_queue, queen._log_name_ns(p_queue), queen._log_name_task(p_queue))
            ON CONFLICT (tenant_id, name) DO NOTHING;
        END IF;
    ELSIF p_namespace IS NULL AND p_task IS NULL THEN
        RETURN;                                       -- discovery needs a namespace or a task
    END IF;

    FOR v_q IN
        SELECT q.id, q.name::text AS name, q.lease_time, q.delayed_processing, q.window_buffer
        FROM queen.queues q
        WHERE q.tenant_id = v_tenant
          AND (p_queue IS NULL OR q.name = p_queue)
          AND (p_queue IS NOT NULL OR (
                   (p_namespace IS NULL OR COALESCE(NULLIF(q.namespace, ''), queen._log_name_ns(q.name)) = p_namespace)
               AND (p_task IS NULL OR COALESCE(NULLIF(q.task, ''), queen._log_name_task(q.name)) = p_task)))
        ORDER BY random()
    LOOP
        -- ---- group registration (first contact of (queue, group)) + bulk cursor seed -------------------------------
        SELECT m.subscription_mode, m.subscription_timestamp INTO v_seed_mode, v_seed_ts
        FROM queen.consumer_groups_metadata m
        WHERE m.tenant_id = v_tenant AND m.consumer_group = v_group AND m.queue_id = v_q.id
          AND m.partition_name = '' AND m.namespace = '' AND m.task = '';
        IF NOT FOUND THEN
            -- One registrant at a time, without waiting: a concurrent registrant is seeding right now, so this
            -- queue is skipped for this cycle (the next poll sees the committed seed).
            IF NOT pg_try_advisory_xact_lock(hashtextextended('cgm/' || v_q.id::text || '/' || v_group, 42)) THEN
                CONTINUE;
            END IF;
            INSERT INTO queen.consumer_groups_metadata
                (tenant_id, consumer_group, queue_id, partition_name, namespace, task,
                 subscription_mode, subscription_timestamp)
            VALUES (v_tenant, v_group, v_q.id, '', '', '', v_mode, v_mode_ts)
            ON CONFLICT DO NOTHING;
            GET DIAGNOSTICS v_inserted = ROW_COUNT;
            IF v_inserted > 0 THEN
                IF v_mode = 'new' THEN
                    INSERT INTO queen.log_consumers (partition_id, consumer_group, committed)
                    SELECT p.id, v_group, p.last_offset
                    FROM queen.log_partitions p WHERE p.queue_id = v_q.id
                    ORDER BY p.id
                    ON CONFLICT (partition_id, consumer_group) DO NOTHING;
                ELSIF v_mode = 'timestamp' THEN
                    INSERT INTO queen.log_consumers (partition_id, consumer_group, committed)
                    SELECT p.id, v_group,
                           COALESCE((SELECT s.base_offset - 1 FROM queen.log_segments s
                                     WHERE s.partition_id = p.id AND s.base_offset >= p.log_start
                                       AND s.created_at >= v_mode_ts
                                     ORDER BY s.base_offset LIMIT 1), p.last_offset)
                    FROM queen.log_partitions p WHERE p.queue_id = v_q.id
                    ORDER BY p.id
                    ON CONFLICT (partition_id, consumer_group) DO NOTHING;
                ELSE
                    INSERT INTO queen.log_consumers (partition_id, consumer_group, committed)
                    SELECT p.id, v_group, GREATEST(p.log_start - 1, -1)
                    FROM queen.log_partitions p WHERE p.queue_id = v_q.id
                    ORDER BY p.id
                    ON CONFLICT (partition_id, consumer_group) DO NOTHING;
                END IF;
            END IF;
            SELECT m.subscription_mode, m.subscription_timestamp INTO v_seed_mode, v_seed_ts
            FROM queen.consumer_groups_metadata m
            WHERE m.tenant_id = v_tenant AND m.consumer_group = v_group AND m.queue_id = v_q.id
              AND m.partition_name = '' AND m.namespace = '' AND m.task = '';
        END IF;
        -- The durable subscription wins for partitions first contacted later. 'all' seeds at the retained head;
        -- 'new' and 'timestamp' seed from the stored time (everything pushed since the subscription).
        IF v_group = '__QUEUE_MODE__' THEN
            v_seed_mode := 'all';
        ELSIF v_seed_mode IS NULL THEN
            v_seed_mode := v_mode; v_seed_ts := v_mode_ts;
        ELSIF v_seed_mode = 'new' THEN
            v_seed_mode := 'timestamp';
        END IF;

        v_lease := CASE WHEN p_lease_s > 0 THEN p_lease_s
                        WHEN v_q.lease_time > 0 THEN v_q.lease_time
                        ELSE 60 END;
        v_q_claimed := 0;
        v_floor := NULL;

        -- ---- candidates ------------------------------------------------------------------------------------------
        IF p_partition IS NOT NULL THEN
            OPEN v_cur FOR
                SELECT p.id, p.name FROM queen.log_partitions p
                WHERE p.queue_id = v_q.id AND p.name = p_partition;
        ELSE
            SELECT w.last_empty_scan_at, w.updated_at INTO v_floor, v_wm_upd
            FROM queen.consumer_watermarks w
            WHERE w.queue_id = v_q.id AND w.consumer_group = v_group;
            IF v_floor IS NOT NULL AND v_floor > '-infinity'::timestamptz THEN
                -- The group found this queue empty at v_floor: only partitions written since (2 min slack for the
                -- once-per-second last_write_at quantisation and in-flight pushes) can hold anything new.
                OPEN v_cur FOR
                    SELECT p.id, p.name
                    FROM queen.log_partitions p
                    LEFT JOIN LATERAL (
                        SELECT c0.partition_id, c0.committed, c0.worker_id, c0.lease_expires_at
                        FROM queen.log_consumers c0
                        WHERE c0.partition_id = p.id AND c0.consumer_group = v_group
                        LIMIT 1) c ON true
                    WHERE p.queue_id = v_q.id
                      AND p.last_write_at >= v_floor - interval '2 minutes'
                      AND (c.partition_id IS NULL OR p.last_offset > c.committed)
                      AND (c.worker_id IS NULL OR c.lease_expires_at IS NULL OR c.lease_expires_at < v_now)
                    ORDER BY random()
                    LIMIT v_cap;
            ELSE
                -- No floor: walk the queue's partitions by id from a random pivot (wrapping around). Both halves
                -- stop at the LIMIT, so a deep backlog over many partitions costs O(candidates), not O(partitions).
                -- The cursor probe is a LATERAL ... LIMIT 1 (not pulled up) so it stays a per-row PK lookup and the
                -- planner cannot turn it into a merge/hash join over every cursor of the group.
                v_pivot := gen_random_uuid();
                OPEN v_cur FOR
                    SELECT x.id, x.name FROM (
                        (SELECT p.id, p.name, 0 AS half
                         FROM queen.log_partitions p
                         LEFT JOIN LATERAL (
                             SELECT c0.partition_id, c0.committed, c0.worker_id, c0.lease_expires_at
                             FROM queen.log_consumers c0
                             WHERE c0.partition_id = p.id AND c0.consumer_group = v_group
                             LIMIT 1) c ON true
                         WHERE p.queue_id = v_q.id AND p.id >= v_pivot
                           AND (c.partition_id IS NULL OR p.last_offset > c.committed)
                           AND (c.worker_id IS NULL OR c.lease_expires_at IS NULL OR c.lease_expires_at < v_now)
                         ORDER BY p.id
                         LIMIT v_cap)
                        UNION ALL
                        (SELECT p.id, p.name, 1 AS half
                         FROM queen.log_partitions p
                         LEFT JOIN LATERAL (
                             SELECT c0.partition_id, c0.committed, c0.worker_id, c0.lease_expires_at
                             FROM queen.log_consumers c0
                             WHERE c0.partition_id = p.id AND c0.consumer_group = v_group
                             LIMIT 1) c ON true
                         WHERE p.queue_id = v_q.id AND p.id < v_pivot
                           AND (c.partition_id IS NULL OR p.last_offset > c.committed)
                           AND (c.worker_id IS NULL OR c.lease_expires_at IS NULL OR c.lease_expires_at < v_now)
                         ORDER BY p.id
                         LIMIT v_cap)
                    ) x
                    ORDER BY x.half, x.id
                    LIMIT v_cap;
            END IF;
        END IF;

        LOOP
            FETCH v_cur INTO v_pid, v_pname;
            EXIT WHEN NOT FOUND;

            SELECT * INTO v_r FROM queen._log_pop_claim(
                v_pid, v_group, v_remaining, v_lease, p_worker, COALESCE(p_auto_ack, false),
                v_seed_mode, v_seed_ts, v_q.delayed_processing, v_q.window_buffer, v_now);

            IF v_r.o_taken > 0 THEN
                RETURN QUERY
                    SELECT v_pid, v_pname, v_q.name, v_r.o_attempt, v_r.o_expires,
                           s.base_offset, u.st, u.tk, u.cnt, s.created_at, s.blob
                    FROM unnest(v_r.o_bases, v_r.o_starts, v_r.o_takes, v_r.o_counts)
                         WITH ORDINALITY AS u(b, st, tk, cnt, ord)
                    JOIN queen.log_segments s ON s.partition_id = v_pid AND s.base_offset = u.b
                    ORDER BY u.ord;
                v_remaining := v_remaining - v_r.o_taken;
                v_claimed := v_claimed + 1;
                v_q_claimed := v_q_claimed + 1;
                EXIT WHEN v_remaining <= 0 OR v_claimed >= v_maxp;
            END IF;
        END LOOP;
        CLOSE v_cur;

        -- ---- empty-scan floor (at most every 30 s per (queue, group), never waiting) ----------------------------
        IF p_partition IS NULL AND v_q_claimed = 0
           AND (v_wm_upd IS NULL OR v_floor IS NULL OR v_wm_upd < v_now - interval '30 seconds')
           AND pg_try_advisory_xact_lock(hashtextextended('cwm/' || v_q.id::text || '/' || v_group, 42)) THEN
            -- Pending data ignoring leases: a backlog held under a lease must never be stranded behind the floor.
            SELECT EXISTS (
                SELECT 1
                FROM queen.log_partitions p
                LEFT JOIN queen.log_consumers c ON c.partition_id = p.id AND c.consumer_group = v_group
                WHERE p.queue_id = v_q.id
                  AND p.last_write_at >= COALESCE(v_floor, '-infinity'::timestamptz) - interval '2 minutes'
                  AND ((c.partition_id IS NULL AND p.last_offset >= p.log_start) OR p.last_offset > c.committed)
            ) INTO v_pending;
            INSERT INTO queen.consumer_watermarks AS w (queue_id, consumer_group, last_empty_scan_at, updated_at)
            VALUES (v_q.id, v_group, CASE WHEN v_pending THEN '-infinity'::timestamptz ELSE v_now END, v_now)
            ON CONFLICT (queue_id, consumer_group) DO UPDATE SET
                last_empty_scan_at = CASE WHEN v_pending THEN w.last_empty_scan_at ELSE v_now END,
                updated_at = v_now;
        END IF;

        EXIT WHEN v_remaining <= 0 OR v_claimed >= v_maxp;
    END LOOP;
END;
$$;

-- ---------------------------------------------------------------------------------------------------------------------
-- Ack
-- ---------------------------------------------------------------------------------------------------------------------

-- Hash-resolved ack for one (partition, group) (ENGINE §5.2). Index arrays (noop/stale/unresolved, poisonIndex) are
-- 0-based positions in p_hashes. Implicit ack: the new cursor is the highest completed offset strictly below the head
-- signal (lowest failed/dlq/retry; tie dlq > failed > retry). Negative signals act only on a leased batch.
CREATE FUNCTION queen.log_ack_v1(
    p_tenant   uuid,
    p_pid      uuid,
    p_group    text,
    p_worker   text,
    p_hashes   bytea[],
    p_statuses text[]
) RETURNS jsonb
LANGUAGE plpgsql
AS $$
DECLARE
    v_tenant      uuid := COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001');
    v_group       text := COALESCE(NULLIF(p_group, ''), '__QUEUE_MODE__');
    v_worker      text := COALESCE(p_worker, '');
    v_n           integer := COALESCE(cardinality(p_hashes), 0);
    v_retry_limit integer;
    v_dlq_on      boolean;
    v_tstart      bigint;
    v_c           record;
    v_has_lease   boolean;
    v_lo          bigint;
    v_hi          bigint;
    v_span_base   bigint;
    v_st          text[];
    v_eff         bigint[];
    v_below       boolean[];
    v_i           integer;
    v_rank        integer;
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
BEGIN
    IF p_statuses IS NOT NULL AND cardinality(p_statuses) <> v_n THEN
        RAISE EXCEPTION 'QACK misaligned arrays: % hashes, % statuses', v_n, cardinality(p_statuses);
    END IF;

    -- Ownership gate folded in: the partition must exist and belong to one of the tenant's queues.
    SELECT q.retry_limit, (q.dead_letter_queue OR q.dlq_after_max_retries), p.txns_start
    INTO v_retry_limit, v_dlq_on, v_tstart
    FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
    WHERE p.id = p_pid AND q.tenant_id = v_tenant;
    IF NOT FOUND THEN
        RETURN jsonb_build_object('ok', false, 'error', 'partition not owned by tenant');
    END IF;

    -- The only lock the ack path takes.
    SELECT c.committed, c.batch_end, c.worker_id, c.lease_expires_at, c.batch_retry_count INTO v_c
    FROM queen.log_consumers c
    WHERE c.partition_id = p_pid AND c.consumer_group = v_group
    FOR UPDATE;
    IF NOT FOUND THEN
        RETURN jsonb_build_object('ok', false, 'error', 'consumer not found');
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
    v_lo := GREATEST(v_c.committed + 1, v_tstart);
    v_hi := CASE WHEN v_has_lease THEN v_c.batch_end END;    -- NULL = unbounded (lease-less)

    -- Normalise statuses: completed | failed | retry | dlq.
    SELECT COALESCE(array_agg(
               CASE WHEN s.s IS NULL OR s.s IN ('', 'completed', 'success', 'acked', 'ok') THEN 'completed'
                    WHEN s.s IN ('retry', 'dlq', 'failed') THEN s.s
                    ELSE 'failed' END ORDER BY s.ord), '{}')
    INTO v_st
    FROM unnest(COALESCE(p_statuses, array_fill(NULL::text, ARRAY[v_n]))) WITH ORDINALITY AS s(s, ord);

    IF v_n > 0 THEN
        -- Phase 1: resolve inside the ackable span only (the batch's txns rows: cheap on the happy path).
        -- eff = the lowest matching offset inside [lo, hi].
        SELECT t.base_offset INTO v_span_base
        FROM queen.log_txns t
        WHERE t.partition_id = p_pid AND t.base_offset <= v_lo
        ORDER BY t.base_offset DESC LIMIT 1;
        v_span_base := COALESCE(v_span_base, v_lo);

        SELECT array_agg(x.eff ORDER BY x.ord) INTO v_eff
        FROM (
            SELECT u.ord, MIN(o.off) AS eff
            FROM unnest(p_hashes) WITH ORDINALITY AS u(h, ord)
            LEFT JOIN (
                SELECT th.h, t.base_offset + th.idx AS off
                FROM queen.log_txns t
                CROSS JOIN LATERAL queen.log_unnest_hashes(t.hashes) th
                WHERE t.partition_id = p_pid
                  AND t.base_offset >= v_span_base
                  AND (v_hi IS NULL OR t.base_offset <= v_hi)
            ) o ON o.h = u.h AND o.off >= v_lo AND (v_hi IS NULL OR o.off <= v_hi)
            GROUP BY u.ord
        ) x;

        -- Phase 2 (only when something did not resolve in the span): is there a match at or below the cursor?
        IF array_position(v_eff, NULL) IS NOT NULL THEN
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

        -- Head signal: lowest eff among negative signals; tie at one offset: dlq > failed > retry; then lowest index.
        FOR v_i IN 1 .. v_n LOOP
            IF v_eff[v_i] IS NOT NULL AND v_st[v_i] <> 'completed' THEN
                v_rank := CASE v_st[v_i] WHEN 'dlq' THEN 0 WHEN 'failed' THEN 1 ELSE 2 END;
                IF v_sig_off IS NULL OR v_eff[v_i] < v_sig_off
                   OR (v_eff[v_i] = v_sig_off AND v_rank < v_sig_rank) THEN
                    v_sig_off := v_eff[v_i]; v_sig_rank := v_rank; v_sig_idx := v_i - 1; v_sig_kind := v_st[v_i];
                END IF;
            END IF;
        END LOOP;

        FOR v_i IN 1 .. v_n LOOP
            IF v_eff[v_i] IS NOT NULL THEN
                IF v_st[v_i] = 'completed' AND (v_sig_off IS NULL OR v_eff[v_i] < v_sig_off) THEN
                    v_max_ok := GREATEST(v_max_ok, v_eff[v_i]);
                END IF;
            ELSIF v_below[v_i] THEN
                IF v_st[v_i] = 'completed' THEN
                    v_noop := v_noop || to_jsonb(v_i - 1);
                ELSE
                    v_stale := v_stale || to_jsonb(v_i - 1);
                END IF;
            ELSE
                v_unres := v_unres || to_jsonb(v_i - 1);
            END IF;
        END LOOP;
    END IF;

    v_new := COALESCE(v_max_ok, v_c.committed);
    v_delta := GREATEST(v_new - v_c.committed, 0);

    -- dlq hand-off: explicit 'dlq', or 'failed' with the budget spent and the DLQ enabled. Advance to the completed
    -- prefix and KEEP the lease; the broker snapshots the poison frame and calls log_dlq_head_v1.
    IF v_has_lease AND (v_sig_kind = 'dlq'
                        OR (v_sig_kind = 'failed' AND v_c.batch_retry_count >= v_retry_limit AND v_dlq_on)) THEN
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
        IF v_retry_ct < v_retry_limit THEN
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

-- File the poison frame of a dlq hand-off (ENGINE §7.1 step 5). A second call fails the lease check and changes nothing.
CREATE FUNCTION queen.log_dlq_head_v1(
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
    v_c     record;
    v_id    uuid;
BEGIN
    SELECT c.worker_id, c.lease_expires_at, c.batch_retry_count INTO v_c
    FROM queen.log_consumers c
    WHERE c.partition_id = p_pid AND c.consumer_group = v_group
    FOR UPDATE;
    IF NOT FOUND THEN
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

-- Extend every live lease of a worker on the tenant's partitions; never shortens. Rows are locked in
-- (partition_id, group) order first (same total order as multi-row ack paths).
CREATE FUNCTION queen.log_renew_lease_v1(p_tenant uuid, p_worker text, p_seconds integer)
RETURNS jsonb
LANGUAGE plpgsql
AS $$
DECLARE
    v_tenant uuid := COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001');
    v_now    timestamptz := clock_timestamp();
    v_secs   integer := GREATEST(COALESCE(p_seconds, 60), 1);
    v_n      bigint;
    v_exp    timestamptz;
BEGIN
    IF COALESCE(p_worker, '') = '' THEN
        RETURN jsonb_build_object('renewed', 0, 'expiresAt', NULL);
    END IF;
    WITH locked AS (
        SELECT c.partition_id, c.consumer_group
        FROM queen.log_consumers c
        JOIN queen.log_partitions p ON p.id = c.partition_id
        JOIN queen.queues q ON q.id = p.queue_id
        WHERE c.worker_id = p_worker AND c.lease_expires_at > v_now AND q.tenant_id = v_tenant
        ORDER BY c.partition_id, c.consumer_group
        FOR UPDATE OF c
    ), upd AS (
        UPDATE queen.log_consumers c
        SET lease_expires_at = GREATEST(c.lease_expires_at, v_now + make_interval(secs => v_secs))
        FROM locked l
        WHERE c.partition_id = l.partition_id AND c.consumer_group = l.consumer_group
          AND c.worker_id = p_worker AND c.lease_expires_at > v_now
        RETURNING c.lease_expires_at
    )
    SELECT count(*), min(upd.lease_expires_at) INTO v_n, v_exp FROM upd;
    RETURN jsonb_build_object('renewed', v_n, 'expiresAt', CASE WHEN v_exp IS NULL THEN NULL ELSE queen._log_ts(v_exp) END);
END;
$$;

-- ---------------------------------------------------------------------------------------------------------------------
-- Queue administration
-- ---------------------------------------------------------------------------------------------------------------------

-- The 19 option keys in API.md's order (jsonb itself does not keep key order; callers that care render from this list).
CREATE FUNCTION queen._log_queue_options(q queen.queues)
RETURNS jsonb
LANGUAGE sql STABLE
AS $$
    SELECT jsonb_build_object(
        'priority', q.priority,
        'leaseTime', q.lease_time,
        'retryLimit', q.retry_limit,
        'retryDelay', q.retry_delay,
        'maxSize', q.max_queue_size,
        'ttl', q.ttl,
        'deadLetterQueue', q.dead_letter_queue,
        'dlqAfterMaxRetries', q.dlq_after_max_retries,
        'delayedProcessing', q.delayed_processing,
        'windowBuffer', q.window_buffer,
        'retentionSeconds', q.retention_seconds,
        'completedRetentionSeconds', q.completed_retention_seconds,
        'retentionEnabled', q.retention_enabled,
        'encryptionEnabled', q.encryption_enabled,
        'maxWaitTimeSeconds', q.max_wait_time_seconds,
        'minPopWaitTime', q.min_pop_wait_time,
        'dedupWindowSeconds', q.dedup_window_seconds,
        'retentionSinkHold', q.retention_sink_hold,
        'retentionSinkHoldMaxSeconds', q.retention_sink_hold_max_seconds)
$$;

-- POST /api/v1/configure (API.md §5.2). Merge: key absent -> keep; JSON null -> default; value -> value (cast here, so
-- a bad value raises). Create or 'replace': every key re-parsed from the configure defaults.
CREATE FUNCTION queen.configure_queue_v1(p_tenant uuid, p_queue text, p_options jsonb, p_mode text)
RETURNS jsonb
LANGUAGE plpgsql
AS $$
DECLARE
    v_tenant  uuid := COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001');
    v_o       jsonb := COALESCE(p_options, '{}'::jsonb);
    v_mode    text := COALESCE(p_mode, 'merge');
    v_q       queen.queues;
    v_created boolean := false;
    v_fresh   boolean;
    v_n       integer;
BEGIN
    IF p_queue IS NULL THEN
        RAISE EXCEPTION 'QCONF queue is required';
    END IF;
    IF v_mode NOT IN ('merge', 'replace') THEN
        RAISE EXCEPTION 'QCONF mode must be "merge" or "replace", got %', v_mode;
    END IF;
    IF jsonb_typeof(v_o) <> 'object' THEN
        RAISE EXCEPTION 'QCONF options must be an object';
    END IF;

    SELECT * INTO v_q FROM queen.queues q WHERE q.tenant_id = v_tenant AND q.name = p_queue FOR NO KEY UPDATE;
    IF NOT FOUND THEN
        INSERT INTO queen.queues (tenant_id, name, namespace, task) VALUES (v_tenant, p_queue, '', '')
        ON CONFLICT (tenant_id, name) DO NOTHING;
        GET DIAGNOSTICS v_n = ROW_COUNT;
        v_created := v_n > 0;
        SELECT * INTO v_q FROM queen.queues q WHERE q.tenant_id = v_tenant AND q.name = p_queue FOR NO KEY UPDATE;
    END IF;
    v_fresh := v_created OR v_mode = 'replace';

    -- For each key: present -> the value (JSON null -> default); absent -> default when fresh, else the stored value.
    v_q.namespace := CASE WHEN v_o ? 'namespace' THEN COALESCE(v_o->>'namespace', '')
                          WHEN v_fresh THEN '' ELSE v_q.namespace END;
    v_q.task := CASE WHEN v_o ? 'task' THEN COALESCE(v_o->>'task', '')
                     WHEN v_fresh THEN '' ELSE v_q.task END;
    v_q.priority := CASE WHEN v_o ? 'priority' THEN COALESCE((v_o->>'priority')::integer, 0)
                         WHEN v_fresh THEN 0 ELSE v_q.priority END;
    v_q.lease_time := CASE WHEN v_o ? 'leaseTime' THEN COALESCE((v_o->>'leaseTime')::integer, 300)
                           WHEN v_fresh THEN 300 ELSE v_q.lease_time END;
    v_q.retry_limit := CASE WHEN v_o ? 'retryLimit' THEN COALESCE((v_o->>'retryLimit')::integer, 3)
                            WHEN v_fresh THEN 3 ELSE v_q.retry_limit END;
    v_q.retry_delay := CASE WHEN v_o ? 'retryDelay' THEN COALESCE((v_o->>'retryDelay')::integer, 1000)
                            WHEN v_fresh THEN 1000 ELSE v_q.retry_delay END;
    v_q.max_queue_size := CASE WHEN v_o ? 'maxSize' THEN COALESCE((v_o->>'maxSize')::integer, 0)
                               WHEN v_fresh THEN 0 ELSE v_q.max_queue_size END;
    v_q.ttl := CASE WHEN v_o ? 'ttl' THEN COALESCE((v_o->>'ttl')::integer, 3600)
                    WHEN v_fresh THEN 3600 ELSE v_q.ttl END;
    v_q.dead_letter_queue := CASE WHEN v_o ? 'deadLetterQueue' THEN COALESCE((v_o->>'deadLetterQueue')::boolean, true)
                                  WHEN v_fresh THEN true ELSE v_q.dead_letter_queue END;
    v_q.dlq_after_max_retries := CASE WHEN v_o ? 'dlqAfterMaxRetries'
                                      THEN COALESCE((v_o->>'dlqAfterMaxRetries')::boolean, true)
                                      WHEN v_fresh THEN true ELSE v_q.dlq_after_max_retries END;
    v_q.delayed_processing := CASE WHEN v_o ? 'delayedProcessing' THEN COALESCE((v_o->>'delayedProcessing')::integer, 0)
                                   WHEN v_fresh THEN 0 ELSE v_q.delayed_processing END;
    v_q.window_buffer := CASE WHEN v_o ? 'windowBuffer' THEN COALESCE((v_o->>'windowBuffer')::integer, 0)
                              WHEN v_fresh THEN 0 ELSE v_q.window_buffer END;
    v_q.retention_enabled := CASE WHEN v_o ? 'retentionEnabled' THEN COALESCE((v_o->>'retentionEnabled')::boolean, false)
                                  WHEN v_fresh THEN false ELSE v_q.retention_enabled END;
    v_q.retention_seconds := CASE WHEN v_o ? 'retentionSeconds' THEN COALESCE((v_o->>'retentionSeconds')::integer, 0)
                                  WHEN v_fresh THEN 0 ELSE v_q.retention_seconds END;
    v_q.completed_retention_seconds := CASE WHEN v_o ? 'completedRetentionSeconds'
                                            THEN COALESCE((v_o->>'completedRetentionSeconds')::integer, 0)
                                            WHEN v_fresh THEN 0 ELSE v_q.completed_retention_seconds END;
    v_q.encryption_enabled := CASE WHEN v_o ? 'encryptionEnabled' THEN COALESCE((v_o->>'encryptionEnabled')::boolean, false)
                                   WHEN v_fresh THEN false ELSE v_q.encryption_enabled END;
    v_q.max_wait_time_seconds := CASE WHEN v_o ? 'maxWaitTimeSeconds'
                                      THEN COALESCE((v_o->>'maxWaitTimeSeconds')::integer, 0)
                                      WHEN v_fresh THEN 0 ELSE v_q.max_wait_time_seconds END;
    v_q.min_pop_wait_time := LEAST(GREATEST(
                                 CASE WHEN v_o ? 'minPopWaitTime' THEN COALESCE((v_o->>'minPopWaitTime')::integer, 0)
                                      WHEN v_fresh THEN 0 ELSE v_q.min_pop_wait_time END, 0), 60000);
    v_q.dedup_window_seconds := GREATEST(
                                 CASE WHEN v_o ? 'dedupWindowSeconds'
                                      THEN COALESCE((v_o->>'dedupWindowSeconds')::integer, 3600)
                                      WHEN v_fresh THEN 3600 ELSE v_q.dedup_window_seconds END, 0);
    v_q.retention_sink_hold := CASE WHEN v_o ? 'retentionSinkHold' THEN COALESCE(v_o->>'retentionSinkHold', '')
                                    WHEN v_fresh THEN '' ELSE v_q.retention_sink_hold END;
    v_q.retention_sink_hold_max_seconds := CASE WHEN v_o ? 'retentionSinkHoldMaxSeconds'
                                                THEN COALESCE((v_o->>'retentionSinkHoldMaxSeconds')::integer, 604800)
                                                WHEN v_fresh THEN 604800 ELSE v_q.retention_sink_hold_max_seconds END;

    UPDATE queen.queues q SET
        namespace = v_q.namespace, task = v_q.task, priority = v_q.priority, lease_time = v_q.lease_time,
        retry_limit = v_q.retry_limit, retry_delay = v_q.retry_delay, max_queue_size = v_q.max_queue_size,
        ttl = v_q.ttl, dead_letter_queue = v_q.dead_letter_queue, dlq_after_max_retries = v_q.dlq_after_max_retries,
        delayed_processing = v_q.delayed_processing, window_buffer = v_q.window_buffer,
        retention_enabled = v_q.retention_enabled, retention_seconds = v_q.retention_seconds,
        completed_retention_seconds = v_q.completed_retention_seconds, encryption_enabled = v_q.encryption_enabled,
        max_wait_time_seconds = v_q.max_wait_time_seconds, min_pop_wait_time = v_q.min_pop_wait_time,
        dedup_window_seconds = v_q.dedup_window_seconds, retention_sink_hold = v_q.retention_sink_hold,
        retention_sink_hold_max_seconds = v_q.retention_sink_hold_max_seconds,
        updated_at = now()
    WHERE q.id = v_q.id;

    RETURN jsonb_build_object(
        'configured', true,
        'queueId', v_q.id,
        'partitionId', NULL,
        'queue', v_q.name,
        'namespace', COALESCE(v_q.namespace, ''),
        'task', COALESCE(v_q.task, ''),
        'storage', 'segments',
        'options', queen._log_queue_options(v_q));
END;
$$;

-- DELETE /api/v1/resources/queues/:queue. The cascade covers partitions, segments, cursors, metadata and watermarks;
-- log_txns, log_dlq and retention_history have no FK and are deleted explicitly. Locks: queue row, then its partitions
-- in ascending id order (waits for in-flight pushes), then the deletes.
CREATE FUNCTION queen.delete_queue_v1(p_tenant uuid, p_queue text)
RETURNS jsonb
LANGUAGE plpgsql
AS $$
DECLARE
    v_tenant uuid := COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001');
    v_qid    uuid;
    v_pids   uuid[];
BEGIN
    SELECT q.id INTO v_qid FROM queen.queues q WHERE q.tenant_id = v_tenant AND q.name = p_queue FOR UPDATE;
    IF v_qid IS NULL THEN
        RETURN jsonb_build_object('deleted', true, 'queue', p_queue, 'existed', false, 'partitionIds', '[]'::jsonb);
    END IF;

    SELECT COALESCE(array_agg(l.id ORDER BY l.id), '{}') INTO v_pids
    FROM (SELECT p.id FROM queen.log_partitions p WHERE p.queue_id = v_qid ORDER BY p.id FOR UPDATE) l;

    DELETE FROM queen.log_txns t WHERE t.partition_id = ANY (v_pids);
    DELETE FROM queen.log_dlq d WHERE d.partition_id = ANY (v_pids);
    DELETE FROM queen.retention_history r WHERE r.partition_id = ANY (v_pids);
    DELETE FROM queen.consumer_groups_metadata m WHERE m.queue_id = v_qid;
    DELETE FROM queen.queues q WHERE q.id = v_qid;

    RETURN jsonb_build_object('deleted', true, 'queue', p_queue, 'existed', true,
                              'queueId', v_qid, 'partitionIds', to_jsonb(v_pids));
END;
$$;

-- Per-partition stats over the queue-mode cursor (offset arithmetic; total = pending + processing + completed over the
-- retained range [log_start, last_offset]).
CREATE FUNCTION queen._log_partition_stats(p_qid uuid)
RETURNS TABLE (pid uuid, pname text, pcreated timestamptz, total bigint, pending bigint, processing bigint,
               completed bigint, dead_letter bigint, segs bigint, seg_msgs bigint, bytes bigint,
               oldest timestamptz, newest timestamptz)
LANGUAGE sql STABLE
AS $$
    SELECT p.id, p.name, p.created_at,
           GREATEST(p.last_offset - p.log_start + 1, 0),
           GREATEST(p.last_offset - x.cur - x.proc, 0),
           x.proc,
           GREATEST(x.cur - p.log_start + 1, 0),
           (SELECT count(*) FROM queen.log_dlq d WHERE d.partition_id = p.id),
           sg.n, sg.msgs, sg.bytes, sg.oldest, sg.newest
    FROM queen.log_partitions p
    LEFT JOIN queen.log_consumers c ON c.partition_id = p.id AND c.consumer_group = '__QUEUE_MODE__'
    CROSS JOIN LATERAL (
        SELECT LEAST(GREATEST(COALESCE(c.committed, -1), p.log_start - 1), p.last_offset) AS cur,
               CASE WHEN c.worker_id IS NOT NULL AND c.lease_expires_at > now() AND c.batch_end IS NOT NULL
                    THEN GREATEST(LEAST(c.batch_end, p.last_offset)
                                  - LEAST(GREATEST(c.committed, p.log_start - 1), p.last_offset), 0)
                    ELSE 0 END AS proc
    ) x
    CROSS JOIN LATERAL (
        SELECT count(*) AS n, COALESCE(sum(s.end_offset - s.base_offset + 1), 0) AS msgs,
               COALESCE(sum(octet_length(s.blob)), 0) AS bytes,
               min(s.created_at) AS oldest, max(s.created_at) AS newest
        FROM queen.log_segments s WHERE s.partition_id = p.id
    ) sg
    WHERE p.queue_id = p_qid
$$;

-- GET /api/v1/resources/queues
CREATE FUNCTION queen.get_queues_v1(p_tenant uuid)
RETURNS jsonb
LANGUAGE sql STABLE
AS $$
    SELECT jsonb_build_object('queues', COALESCE(jsonb_agg(x.j ORDER BY x.name), '[]'::jsonb))
    FROM (
        SELECT q.name, jsonb_build_object(
            'id', q.id,
            'name', q.name,
            'namespace', COALESCE(NULLIF(q.namespace, ''), queen._log_name_ns(q.name)),
            'task', COALESCE(NULLIF(q.task, ''), queen._log_name_task(q.name)),
            'createdAt', queen._log_ts(q.created_at),
            'partitions', COALESCE(st.parts, 0),
            'retainedBytes', COALESCE(st.bytes, 0),
            'segments', jsonb_build_object('segments', COALESCE(st.segs, 0), 'messages', COALESCE(st.seg_msgs, 0)),
            'messages', jsonb_build_object('total', COALESCE(st.total, 0), 'pending', COALESCE(st.pending, 0),
                                           'processing', COALESCE(st.processing, 0))) AS j
        FROM queen.queues q
        LEFT JOIN LATERAL (
            SELECT count(*) AS parts, sum(s.bytes) AS bytes, sum(s.segs) AS segs, sum(s.seg_msgs) AS seg_msgs,
                   sum(s.total) AS total, sum(s.pending) AS pending, sum(s.processing) AS processing
            FROM queen._log_partition_stats(q.id) s
        ) st ON true
        WHERE q.tenant_id = COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001')
    ) x
$$;

-- GET /api/v1/resources/queues/:queue
CREATE FUNCTION queen.get_queue_v1(p_tenant uuid, p_queue text)
RETURNS jsonb
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_q     queen.queues;
    v_parts jsonb;
    v_tot   record;
BEGIN
    SELECT * INTO v_q FROM queen.queues q
    WHERE q.tenant_id = COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001') AND q.name = p_queue;
    IF NOT FOUND THEN
        RETURN jsonb_build_object('error', 'Queue not found');
    END IF;

    SELECT COALESCE(jsonb_agg(jsonb_build_object(
               'id', s.pid,
               'name', s.pname,
               'createdAt', queen._log_ts(s.pcreated),
               'stats', jsonb_build_object('total', s.total, 'pending', s.pending, 'processing', s.processing,
                                           'completed', s.completed, 'failed', NULL, 'deadLetter', s.dead_letter),
               'oldestMessage', queen._log_ts(s.oldest),
               'newestMessage', queen._log_ts(s.newest)) ORDER BY s.pname), '[]'::jsonb) AS parts,
           COALESCE(sum(s.total), 0) AS total, COALESCE(sum(s.pending), 0) AS pending,
           COALESCE(sum(s.processing), 0) AS processing, COALESCE(sum(s.completed), 0) AS completed,
           COALESCE(sum(s.dead_letter), 0) AS dead_letter, COALESCE(sum(s.bytes), 0) AS bytes,
           COALESCE(sum(s.segs), 0) AS segs, COALESCE(sum(s.seg_msgs), 0) AS seg_msgs
    INTO v_tot
    FROM queen._log_partition_stats(v_q.id) s;
    v_parts := v_tot.parts;

    RETURN jsonb_build_object(
        'id', v_q.id,
        'name', v_q.name,
        'namespace', COALESCE(NULLIF(v_q.namespace, ''), queen._log_name_ns(v_q.name)),
        'task', COALESCE(NULLIF(v_q.task, ''), queen._log_name_task(v_q.name)),
        'createdAt', queen._log_ts(v_q.created_at),
        'options', jsonb_build_object('namespace', COALESCE(v_q.namespace, ''), 'task', COALESCE(v_q.task, ''))
                   || queen._log_queue_options(v_q),
        'partitions', v_parts,
        'totals', jsonb_build_object('total', v_tot.total, 'pending', v_tot.pending, 'processing', v_tot.processing,
                                     'completed', v_tot.completed, 'deadLetter', v_tot.dead_letter),
        'retainedBytes', v_tot.bytes,
        'segments', jsonb_build_object('segments', v_tot.segs, 'messages', v_tot.seg_msgs));
END;
$$;

-- Per-queue settings the broker caches: {"exists","encryptionEnabled","leaseTime","minPopWaitTime"}.
CREATE FUNCTION queen.queue_settings_v1(p_tenant uuid, p_queue text)
RETURNS jsonb
LANGUAGE sql STABLE
AS $$
    SELECT COALESCE(
        (SELECT jsonb_build_object('exists', true, 'encryptionEnabled', q.encryption_enabled,
                                   'leaseTime', q.lease_time, 'minPopWaitTime', q.min_pop_wait_time)
         FROM queen.queues q
         WHERE q.tenant_id = COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001') AND q.name = p_queue),
        jsonb_build_object('exists', false, 'encryptionEnabled', false, 'leaseTime', 60, 'minPopWaitTime', 0))
$$;
