-- =====================================================================================================================
-- Pop (ENGINE §4) and lease renewal.
-- A repeatable migration: the rules for editing it are at the top of R__10_common.sql.
--
--   log_pop_many      the broker's pop (ConsumerVerticle, PopFusion): claims partitions for one or more fused
--                     pops, returns the slices to deliver
--   log_pop           one pop (log_pop_many with one worker)
--   _log_pop_candidates  the partitions a group could be handed now (inlined into log_pop_many's queries)
--   _log_pop_claim    claims one (partition, group) and computes its slices
--   _log_pop_bytes    what a segment's frames weigh in a pop's answer (the byte budget's measure)
--   _log_cursor_start    where a new cursor starts under a subscription mode (also consumer_group_seek's)
--   log_renew_lease   extends a worker's live leases
--
-- Conflation (last-value delivery, a policy of the group on the queue, queen2-contract.md §6.2): a group registered
-- with consumer_groups_metadata.conflation (set at its first contact from the pop's p_conflate; the stored value wins
-- afterwards) is served ONE message per claimed partition, the newest visible one (the partition is the conflation
-- key). Its lease (lease_conflated) ends at that offset, so the ack of that one message moves the cursor past every
-- message behind it: the superseded messages are acknowledged with it, and nothing past what the pop saw is committed.
--
-- What one pop reads does not grow with the partition's backlog (PopCostIT counts the rows one pop fetches):
--   * _log_pop_claim's forward walk (every segment after the cursor, in offset order) asks for at most
--     (budget - taken) segments, since every segment gives at least one frame, and is an ordered index range scan
--     that stops there. Without that LIMIT the planner plans the whole query: with statistics that know a deep
--     partition it chose a bitmap scan of every segment past the cursor plus a sort, so a pop of 100 messages from a
--     backlog of 10,000 segments read 10,000 rows.
--   * log_pop_many fetches the claimed slices' blobs with a LATERAL ... LIMIT 1 probe per slice. A join of the slice
--     arrays to log_segments, with statistics that expect about one segment for the partition (one created or grown
--     since the last ANALYZE, or one of many small ones), read every segment of the partition once, materialised
--     them and filtered base_offset in the join.
--
-- Generic plans. log_pop_many carries SET plan_cache_mode = force_generic_plan, which holds for every statement it
-- runs, _log_pop_claim's included. Left to choose, the plan cache kept custom plans for most statements (their
-- parameters are arrays, uuids and timestamps whose custom estimates look cheaper) and re-planned them on every pop:
-- about a fifth of PostgreSQL's CPU in a batch-1 pop+ack loop (perf: GetCachedPlan -> standard_planner). Every
-- statement here is a key probe, a LATERAL ... LIMIT 1 probe or an ordered (partition_id, base_offset) range with a
-- LIMIT, so the generic plan is the same plan (PopCostIT measures the backlog walk with it and checks the setting). The
-- SET clause restores only plan_cache_mode at exit; the synchronous_commit set below is not a SET clause and still
-- lasts until the transaction ends.
--
-- Byte budget. A pop may also be given p_max_bytes (QUEEN_POP_MAX_BYTES): it then stops taking messages once what it
-- took would render to about that many bytes of JSON, always delivering at least one message per partition it claims,
-- so a pop of 10,000 large messages cannot build a response of gigabytes. The measure is each segment's
-- uncompressedLength (bytes 8..11 of the segment header, Segment.java) spread evenly over its frames, plus 256 bytes
-- per message for the JSON fields around its payload: the only place SQL reads inside a blob, four bytes at a fixed
-- offset (a slice read: a TOASTed blob is not fetched whole), and only when a budget is given. The budget is applied
-- where the slices are chosen, before the lease is written: a pop that delivered fewer messages than it claimed would
-- leave them under its lease (or, with autoAck, past the cursor, lost).
--
-- Pops commit without waiting for the WAL flush: log_pop_many sets synchronous_commit off for the calling transaction
-- (set_config(..., true) outside any function SET clause lasts until the transaction ends). A pop writes only a lease
-- (or, with autoAck, a cursor advance). If the database crashes before that commit reaches disk, the lease or the
-- advance is lost and the messages are delivered again: the at-least-once delivery every pop already has when a
-- consumer dies holding a lease. Pushes, acks, transactions and DLQ moves still commit synchronously. Waiting for the
-- flush was a large part of an idle pop's latency (a parked long poll woken by a push answers a fsync later) and kept
-- a busy pop path waiting on the disk.
-- =====================================================================================================================

-- Where a new cursor of a group starts (the committed offset: the group receives everything after it) under the
-- subscription mode p_mode: 'new' -> the partition's last offset (only what is pushed from now on); 'timestamp' -> just
-- before the first retained segment created at or after p_ts, else the last offset (a NULL p_ts finds no segment);
-- anything else ('all') -> just before the retained start. Used when a pop seeds cursors (log_pop_many's first contact
-- of a (queue, group), _log_pop_claim's missing row) and by consumer_group_seek (R__72). Never on the steady pop path.
CREATE OR REPLACE FUNCTION queen._log_cursor_start(p_pid uuid, p_log_start bigint, p_last bigint, p_mode text,
                                                   p_ts timestamptz)
RETURNS bigint
LANGUAGE sql STABLE
AS $$
    SELECT CASE p_mode
               WHEN 'new' THEN p_last
               WHEN 'timestamp' THEN COALESCE((SELECT s.base_offset - 1 FROM queen.log_segments s
                                               WHERE s.partition_id = p_pid AND s.base_offset >= p_log_start
                                                 AND s.created_at >= p_ts
                                               ORDER BY s.base_offset LIMIT 1), p_last)
               ELSE GREATEST(p_log_start - 1, -1) END
$$;

-- The bytes one message of a segment adds to a pop's answer, by the byte budget's measure (see the header): its share
-- of the segment's uncompressedLength plus 256. p_hdr is the blob's first 12 bytes, sliced once by the caller (each
-- substring of a TOASTed blob is a read of its first chunk), p_stored the blob's size (free: octet_length does not
-- fetch a TOASTed value), counted instead for a blob without the segment header (magic 'QS', version 1). One
-- expression without FROM, so the planner inlines it (a SQL function it cannot inline is parsed and planned on every
-- call).
CREATE OR REPLACE FUNCTION queen._log_pop_bytes(p_hdr bytea, p_stored bigint, p_frames integer)
RETURNS bigint
LANGUAGE sql IMMUTABLE
AS $$
    SELECT CASE WHEN octet_length(p_hdr) = 12 AND get_byte(p_hdr, 0) = 81 AND get_byte(p_hdr, 1) = 83
                     AND get_byte(p_hdr, 2) = 1
                THEN get_byte(p_hdr, 8) + 256 * get_byte(p_hdr, 9) + 65536 * get_byte(p_hdr, 10)
                     + 16777216::bigint * get_byte(p_hdr, 11)
                ELSE p_stored END / GREATEST(p_frames, 1) + 256
$$;

-- The partitions of a queue a group could be handed now: something past the group's cursor (or no cursor yet) and no
-- live lease of the group. The cursor probe is a LATERAL ... LIMIT 1 (not pulled up) so it stays a per-row PK lookup
-- and the planner cannot turn it into a merge/hash join over every cursor of the group. Plain SQL, STABLE, no SET
-- clause, no ORDER BY or LIMIT: log_pop_many's candidate queries inline it and pull it up, so their own filters (id
-- range from the pivot, last_write_at floor), order and LIMIT apply to the partition scan itself, as if the query were
-- written out.
CREATE OR REPLACE FUNCTION queen._log_pop_candidates(p_queue uuid, p_group text, p_now timestamptz)
RETURNS TABLE (id uuid, name text, last_write_at timestamptz)
LANGUAGE sql STABLE
AS $$
    SELECT p.id, p.name, p.last_write_at
    FROM queen.log_partitions p
    LEFT JOIN LATERAL (
        SELECT c0.partition_id, c0.committed, c0.worker_id, c0.lease_expires_at
        FROM queen.log_consumers c0
        WHERE c0.partition_id = p.id AND c0.consumer_group = p_group
        LIMIT 1) c ON true
    WHERE p.queue_id = p_queue
      AND (c.partition_id IS NULL OR p.last_offset > c.committed)
      AND (c.worker_id IS NULL OR c.lease_expires_at IS NULL OR c.lease_expires_at < p_now)
$$;

-- Pop (ENGINE §4.2-§4.3) for one or more pops with the same arguments but their own worker (lease id):
-- p_workers[i] is pop i's. The pops run one after the other, as if each were its own transaction in that order (the
-- broker fuses concurrent pops of one (queue, group, options) into one call: consumer/PopFusion): pop i takes the
-- candidates pop i-1 left, with its own budget and p_max_partitions cap, and the queue, the group's registration and
-- the candidate scan are looked up once for all of them. One row per delivered segment slice, with pop_idx = i; pops
-- in order, partitions in claim order, slices in offset order. A pop that gets nothing has no row.
--   p_queue NULL        -> discovery across the tenant's queues by p_namespace / p_task (non-null ones must match).
--   p_partition NULL    -> any partition of the queue (random candidates, shared budget, p_max_partitions cap).
--   p_group NULL or ''  -> '__QUEUE_MODE__'.
--   p_workers NULL      -> one pop with no worker.
--   p_max_bytes NULL or <= 0 -> no byte budget; else each pop's byte budget (see the header).
--   p_conflate          -> the pop declares last-value delivery (see the header); conflated says what it got.
-- Commits asynchronously (see the header).
DROP FUNCTION IF EXISTS queen.log_pop_many(uuid, text, text, text, integer, integer, integer, text[], boolean, text,
                                            timestamptz, text, text);
DROP FUNCTION IF EXISTS queen.log_pop_many(uuid, text, text, text, integer, integer, integer, text[], boolean, text,
                                            timestamptz, text, text, bigint);
CREATE OR REPLACE FUNCTION queen.log_pop_many(
    p_tenant         uuid,
    p_queue          text,
    p_partition      text,
    p_group          text,
    p_budget         integer,
    p_max_partitions integer,
    p_lease_s        integer,
    p_workers        text[],
    p_auto_ack       boolean,
    p_sub_mode       text,
    p_sub_from       timestamptz,
    p_namespace      text DEFAULT NULL,
    p_task           text DEFAULT NULL,
    p_max_bytes      bigint DEFAULT NULL,
    p_conflate       boolean DEFAULT false
) RETURNS TABLE (
    pop_idx          integer,
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
    blob             bytea,
    conflated        boolean
)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE
    v_tenant    uuid := COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001');
    v_group     text := COALESCE(NULLIF(p_group, ''), '__QUEUE_MODE__');
    v_now       timestamptz := clock_timestamp();
    v_budget    integer := GREATEST(COALESCE(p_budget, 1), 1);
    v_remaining integer := GREATEST(COALESCE(p_budget, 1), 1);
    v_bytes     bigint := CASE WHEN p_max_bytes > 0 THEN p_max_bytes END;   -- NULL: no byte budget
    v_bytes_left bigint := CASE WHEN p_max_bytes > 0 THEN p_max_bytes END;
    v_pops      integer := GREATEST(COALESCE(cardinality(p_workers), 1), 1);
    v_i         integer := 1;                     -- the pop being served; past v_pops once all are served
    v_maxp      integer;
    v_cap       integer;
    v_claimed   integer := 0;
    v_q_claimed integer;
    v_mode      text;
    v_mode_ts   timestamptz;
    v_seed_mode text;
    v_seed_ts   timestamptz;
    v_gw_mode   text;
    v_gw_ts     timestamptz;
    v_inserted  integer;
    v_lease     integer;
    v_floor     timestamptz;
    v_wm_floor  timestamptz;
    v_wm_upd    timestamptz;
    v_registered boolean;
    v_conf      boolean;                          -- the group's stored conflation policy on the queue
    v_seen      boolean;
    v_pending   boolean;
    v_pivot     uuid;
    v_wrap      boolean;                          -- the candidate walk has the ids before the pivot still to read
    v_fetched   integer;                          -- candidates fetched so far from this queue (at most v_cap)
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
    -- The broker sends 'all', 'new' or 'timestamp': the wire's spellings (new-only, subscriptionFrom=now, ...) are
    -- read by its HTTP edge alone (PopRoutes.normaliseMode), and anything else is 'all' here.
    IF v_group = '__QUEUE_MODE__' THEN
        v_mode := 'all';
    ELSE
        v_mode := COALESCE(p_sub_mode, 'all');
        IF v_mode NOT IN ('all', 'new', 'timestamp') THEN
            v_mode := 'all';
        END IF;
        IF v_mode = 'timestamp' AND p_sub_from IS NULL THEN
            v_mode := 'new';
        END IF;
    END IF;
    v_mode_ts := CASE v_mode WHEN 'all' THEN '1970-01-01 00:00:00+00'::timestamptz
                             WHEN 'new' THEN v_now
                             ELSE p_sub_from END;

    IF p_queue IS NULL AND p_namespace IS NULL AND p_task IS NULL THEN
        RETURN;                                       -- discovery needs a namespace or a task
    END IF;

    -- Pass 2 only when a queue-scoped pop found no queue: it provisions the queue row (not a partition), so a group
    -- can subscribe before the first push, and runs the loop once more to register the group on it.
    FOR v_pass IN 1 .. 2 LOOP
        v_seen := false;
        -- Two branches, one of them cut at run time: in the generic plan a "p_queue IS NULL OR q.name = p_queue"
        -- filter could not use the (tenant_id, name) key and would read every queue of the tenant on every pop.
        -- Each queue comes with the group's registration and empty-scan watermark on it (LATERAL probes, evaluated
        -- only for the queues the loop fetches), and turns synchronous_commit off (see the header): one statement
        -- where three ran before.
        FOR v_q IN
            SELECT q.id, q.name, q.lease_time, q.delayed_processing, q.window_buffer,
                   r.seed_mode, r.seed_ts, r.registered, r.conf, r.wm_floor, r.wm_upd,
                   set_config('synchronous_commit', 'off', true) AS async_commit
            FROM (SELECT q0.id, q0.name::text AS name, q0.lease_time, q0.delayed_processing, q0.window_buffer
                  FROM queen.queues q0
                  WHERE p_queue IS NOT NULL AND q0.tenant_id = v_tenant AND q0.name = p_queue
                  UNION ALL
                  (SELECT q0.id, q0.name::text, q0.lease_time, q0.delayed_processing, q0.window_buffer
                   FROM queen.queues q0
                   WHERE p_queue IS NULL AND q0.tenant_id = v_tenant
                     AND (p_namespace IS NULL
                          OR COALESCE(NULLIF(q0.namespace, ''), queen._log_name_ns(q0.name)) = p_namespace)
                     AND (p_task IS NULL OR COALESCE(NULLIF(q0.task, ''), queen._log_name_task(q0.name)) = p_task)
                   ORDER BY random())) q
            CROSS JOIN LATERAL (
                SELECT m.subscription_mode AS seed_mode, m.subscription_timestamp AS seed_ts,
                       m.consumer_group IS NOT NULL AS registered, m.conflation AS conf,
                       w.last_empty_scan_at AS wm_floor, w.updated_at AS wm_upd
                FROM (SELECT 1) one
                LEFT JOIN queen.consumer_groups_metadata m
                       ON m.tenant_id = v_tenant AND m.consumer_group = v_group AND m.queue_id = q.id
                      AND m.partition_name = '' AND m.namespace = '' AND m.task = ''
                LEFT JOIN queen.consumer_watermarks w ON w.queue_id = q.id AND w.consumer_group = v_group) r
        LOOP
            v_seen := true;
            -- ---- group registration (first contact of (queue, group)) + bulk cursor seed ---------------------------
            v_seed_mode := v_q.seed_mode; v_seed_ts := v_q.seed_ts; v_registered := v_q.registered;
            v_conf := v_q.conf;
            v_wm_floor := v_q.wm_floor; v_wm_upd := v_q.wm_upd;
            IF NOT v_registered THEN
                -- One registrant at a time, without waiting: a concurrent registrant is seeding right now, so this
                -- queue is skipped for this cycle (the next poll sees the committed seed).
                IF NOT pg_try_advisory_xact_lock(hashtextextended('cgm/' || v_q.id::text || '/' || v_group, 42)) THEN
                    CONTINUE;
                END IF;
                -- A durable group-wide subscription (POST /consumer-groups/:group/subscription, R__72) overrides the
                -- pop's own subscriptionMode / subscriptionFrom for every queue the group meets from now on.
                IF v_group <> '__QUEUE_MODE__' THEN
                    SELECT m.subscription_mode, m.subscription_timestamp INTO v_gw_mode, v_gw_ts
                    FROM queen.consumer_groups_metadata m
                    WHERE m.tenant_id = v_tenant AND m.consumer_group = v_group AND m.queue_id IS NULL
                      AND m.partition_name = '' AND m.namespace = '' AND m.task = '';
                    IF FOUND THEN
                        v_mode := v_gw_mode; v_mode_ts := v_gw_ts;
                    END IF;
                END IF;
                INSERT INTO queen.consumer_groups_metadata
                    (tenant_id, consumer_group, queue_id, partition_name, namespace, task,
                     subscription_mode, subscription_timestamp, conflation)
                VALUES (v_tenant, v_group, v_q.id, '', '', '', v_mode, v_mode_ts,
                        v_group <> '__QUEUE_MODE__' AND COALESCE(p_conflate, false))
                ON CONFLICT DO NOTHING;
                GET DIAGNOSTICS v_inserted = ROW_COUNT;
                IF v_inserted > 0 THEN
                    INSERT INTO queen.log_consumers (partition_id, consumer_group, committed)
                    SELECT p.id, v_group, queen._log_cursor_start(p.id, p.log_start, p.last_offset, v_mode, v_mode_ts)
                    FROM queen.log_partitions p WHERE p.queue_id = v_q.id
                    ORDER BY p.id
                    ON CONFLICT (partition_id, consumer_group) DO NOTHING;
                END IF;
                SELECT m.subscription_mode, m.subscription_timestamp, m.conflation INTO v_seed_mode, v_seed_ts, v_conf
                FROM queen.consumer_groups_metadata m
                WHERE m.tenant_id = v_tenant AND m.consumer_group = v_group AND m.queue_id = v_q.id
                  AND m.partition_name = '' AND m.namespace = '' AND m.task = '';
            END IF;
            v_conf := v_group <> '__QUEUE_MODE__' AND COALESCE(v_conf, p_conflate, false);
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

            -- ---- candidates --------------------------------------------------------------------------------------
            v_wrap := false;
            IF p_partition IS NOT NULL THEN
                OPEN v_cur FOR
                    SELECT p.id, p.name FROM queen.log_partitions p
                    WHERE p.queue_id = v_q.id AND p.name = p_partition;
            ELSE
                v_floor := v_wm_floor;
                IF v_floor IS NOT NULL AND v_floor > '-infinity'::timestamptz THEN
                    -- The group found this queue empty at v_floor: only partitions written since (2 min slack for the
                    -- once-per-second last_write_at quantisation and in-flight pushes) can hold anything new.
                    OPEN v_cur FOR
                        SELECT k.id, k.name
                        FROM queen._log_pop_candidates(v_q.id, v_group, v_now) k
                        WHERE k.last_write_at >= v_floor - interval '2 minutes'
                        ORDER BY random()
                        LIMIT v_cap;
                ELSE
                    -- No floor: walk the queue's partitions by id from a random pivot, then wrap around: the ids at
                    -- or after the pivot first, the ids before it only once those are spent (the FETCH below opens
                    -- that half then, within what is left of v_cap, on a snapshot of its own: a candidate is a hint
                    -- that the claim checks again under the row lock). No sort over both halves: a pop that claims a
                    -- candidate of the first half never reads the second, and with an ordered index scan reads the
                    -- first only up to that candidate. Each half stops at its LIMIT, so a deep backlog over many
                    -- partitions costs O(candidates), not O(partitions).
                    v_pivot := gen_random_uuid();
                    v_wrap := true;
                    OPEN v_cur FOR
                        SELECT k.id, k.name
                        FROM queen._log_pop_candidates(v_q.id, v_group, v_now) k
                        WHERE k.id >= v_pivot
                        ORDER BY k.id
                        LIMIT v_cap;
                END IF;
            END IF;
            v_fetched := 0;

            LOOP
                FETCH v_cur INTO v_pid, v_pname;
                IF NOT FOUND THEN
                    EXIT WHEN NOT v_wrap;
                    v_wrap := false;                      -- the pivot's half is spent: the ids before the pivot
                    CLOSE v_cur;
                    OPEN v_cur FOR
                        SELECT k.id, k.name
                        FROM queen._log_pop_candidates(v_q.id, v_group, v_now) k
                        WHERE k.id < v_pivot
                        ORDER BY k.id
                        LIMIT v_cap - v_fetched;
                    CONTINUE;
                END IF;
                v_fetched := v_fetched + 1;

                v_r := queen._log_pop_claim(                 -- an expression, not a statement: no executor start
                    v_pid, v_group, v_remaining, v_lease, p_workers[v_i], COALESCE(p_auto_ack, false),
                    v_seed_mode, v_seed_ts, v_q.delayed_processing, v_q.window_buffer, v_now, v_bytes_left, v_conf);

                IF v_r.o_taken > 0 AND cardinality(v_r.o_bases) = 1 AND v_r.o_head_blob IS NOT NULL THEN
                    -- One slice, of the head segment the claim read with its blob (a batch-1 pop, say): emitted
                    -- from variables, without a second statement.
                    pop_idx := v_i; partition_id := v_pid; partition_name := v_pname; queue_name := v_q.name;
                    delivery_attempt := v_r.o_attempt; lease_expires_at := v_r.o_expires;
                    base_offset := v_r.o_bases[1]; start_idx := v_r.o_starts[1]; take := v_r.o_takes[1];
                    msg_count := v_r.o_counts[1]; created_at := v_r.o_head_created; blob := v_r.o_head_blob;
                    conflated := v_conf;
                    RETURN NEXT;
                ELSIF v_r.o_taken > 0 THEN
                    -- The head slice (when the claim read its blob) from variables, the others fetched once each; a
                    -- slice whose segment is gone by now (retention) is left out.
                    RETURN QUERY
                        SELECT v_i, v_pid, v_pname, v_q.name, v_r.o_attempt, v_r.o_expires,
                               u.b, u.st, u.tk, u.cnt, COALESCE(s.created_at, v_r.o_head_created),
                               COALESCE(s.blob, v_r.o_head_blob), v_conf
                        FROM unnest(v_r.o_bases, v_r.o_starts, v_r.o_takes, v_r.o_counts)
                             WITH ORDINALITY AS u(b, st, tk, cnt, ord)
                        LEFT JOIN LATERAL (
                            SELECT s0.created_at, s0.blob
                            FROM queen.log_segments s0
                            WHERE s0.partition_id = v_pid AND s0.base_offset = u.b
                              AND (u.ord > 1 OR v_r.o_head_blob IS NULL)
                              AND octet_length(s0.blob) > 0    -- slimmed by retention meanwhile: left out too
                            LIMIT 1) s ON true
                        WHERE s.blob IS NOT NULL OR (u.ord = 1 AND v_r.o_head_blob IS NOT NULL)
                        ORDER BY u.ord;
                END IF;
                IF v_r.o_taken > 0 THEN
                    v_remaining := v_remaining - v_r.o_taken;
                    v_bytes_left := v_bytes_left - v_r.o_bytes;
                    v_claimed := v_claimed + 1;
                    v_q_claimed := v_q_claimed + 1;
                    IF v_remaining <= 0 OR v_claimed >= v_maxp OR v_bytes_left <= 0 THEN
                        v_i := v_i + 1;                   -- this pop is served: the next one takes what is left
                        v_remaining := v_budget;
                        v_bytes_left := v_bytes;
                        v_claimed := 0;
                        EXIT WHEN v_i > v_pops;
                    END IF;
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

            EXIT WHEN v_i > v_pops;
        END LOOP;
        EXIT WHEN v_seen OR p_queue IS NULL OR v_pass = 2;
        INSERT INTO queen.queues (tenant_id, name, namespace, task)
        VALUES (v_tenant, p_queue, queen._log_name_ns(p_queue), queen._log_name_task(p_queue))
        ON CONFLICT (tenant_id, name) DO NOTHING;
    END LOOP;
END;
$$;

-- One pop: log_pop_many with a single worker (the SQL tests and tools call it; the broker calls log_pop_many).
CREATE OR REPLACE FUNCTION queen.log_pop(
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
LANGUAGE sql
AS $$
    SELECT m.partition_id, m.partition_name, m.queue_name, m.delivery_attempt, m.lease_expires_at, m.base_offset,
           m.start_idx, m.take, m.msg_count, m.created_at, m.blob
    FROM queen.log_pop_many(p_tenant, p_queue, p_partition, p_group, p_budget, p_max_partitions, p_lease_s,
                            ARRAY[p_worker], p_auto_ack, p_sub_mode, p_sub_from, p_namespace, p_task) m
$$;

-- Claim one (partition, group) and compute the slices to deliver (ENGINE §4.2 steps 2-9). Never blocks: the cursor row
-- is claimed FOR UPDATE SKIP LOCKED, a missing row is created under a transaction-scoped TRY advisory lock.
-- Returns the slices as arrays (bases/starts/takes/counts, offset order) so the caller fetches blobs in one pass.
-- p_seed_mode/p_seed_ts: how to seed a missing cursor row ('all' | 'new' | 'timestamp').
-- p_max_bytes: the pop's byte budget left (NULL: none); o_bytes: what the slices taken weigh by its measure (0 without
-- a budget). The head slice always takes at least one frame; the others stop where the budget runs out.
DROP FUNCTION IF EXISTS queen._log_pop_claim(uuid, text, integer, integer, text, boolean, text, timestamptz, integer,
                                              integer, timestamptz);
DROP FUNCTION IF EXISTS queen._log_pop_claim(uuid, text, integer, integer, text, boolean, text, timestamptz, integer,
                                              integer, timestamptz, bigint);
CREATE OR REPLACE FUNCTION queen._log_pop_claim(
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
    p_max_bytes bigint,
    p_conflate  boolean,
    OUT o_bases   bigint[],
    OUT o_starts  integer[],
    OUT o_takes   integer[],
    OUT o_counts  integer[],
    OUT o_taken   integer,
    OUT o_attempt integer,
    OUT o_expires timestamptz,
    OUT o_head_created timestamptz,
    OUT o_head_blob    bytea,
    OUT o_bytes        bigint
)
LANGUAGE plpgsql
AS $$
DECLARE
    v_c         record;
    v_last      bigint;
    v_created   boolean := false;
    v_newest    timestamptz;
    v_deadline  timestamptz;
    v_wanted    bigint;
    v_budget    integer := GREATEST(COALESCE(p_budget, 1), 1);
    v_take      integer;
    v_start     bigint;
    v_lastdel   bigint;
    v_any_data  boolean := false;
    v_hb        bigint;                           -- the head segment: base, end, created_at
    v_he        bigint;
    v_hc        timestamptz;
    v_hblob     bytea;                            -- its blob, when the claim read it
    v_w_any     boolean;
    v_w_bases   bigint[];
    v_w_takes   integer[];
    v_w_counts  integer[];
    v_w_taken   integer;
    v_w_first   bigint;
    v_w_last    bigint;
    v_w_bytes   bigint;
    v_hw        bigint;                           -- the head segment's bytes per message (byte budget, batch > 1)
    v_hhdr      bytea;                            -- its first 12 bytes, and its stored size
    v_hstored   bigint;
BEGIN
    o_taken := 0;
    o_bytes := 0;

    -- window_buffer: the whole partition waits until it has been quiet for N seconds.
    IF COALESCE(p_window, 0) > 0 THEN
        SELECT s.created_at INTO v_newest
        FROM queen.log_segments s WHERE s.partition_id = p_pid
        ORDER BY s.base_offset DESC LIMIT 1;
        IF v_newest IS NOT NULL AND v_newest > p_now - make_interval(secs => p_window) THEN
            RETURN;
        END IF;
    END IF;

    -- Claim the cursor row, with the head probe: the segment with the largest base <= wanted (committed + 1, or
    -- log_start when retention has passed the cursor: the rows below log_start are slim, their payload gone, R__80). A
    -- missing row is created once (seeded by p_seed_mode) and claimed again.
    LOOP
        SELECT c.committed, c.attempt_offset, c.attempt_count, p.last_offset, p.log_start,
               h.base_offset AS h_base, h.end_offset AS h_end, h.created_at AS h_created,
               CASE WHEN h.end_offset > c.committed THEN h.blob END AS h_blob,
               CASE WHEN p_max_bytes IS NOT NULL AND p_budget > 1 AND h.end_offset > c.committed
                    THEN substring(h.blob FROM 1 FOR 12) END AS h_hdr,
               octet_length(h.blob) AS h_stored
        INTO v_c
        FROM queen.log_consumers c
        JOIN queen.log_partitions p ON p.id = c.partition_id
        LEFT JOIN LATERAL (
            SELECT s.base_offset, s.end_offset, s.created_at, s.blob
            FROM queen.log_segments s
            WHERE s.partition_id = c.partition_id AND s.base_offset <= GREATEST(c.committed + 1, p.log_start)
            ORDER BY s.base_offset DESC LIMIT 1) h ON true
        WHERE c.partition_id = p_pid AND c.consumer_group = p_group
          AND (c.worker_id IS NULL OR c.lease_expires_at IS NULL OR c.lease_expires_at < p_now)
        FOR UPDATE OF c SKIP LOCKED;
        EXIT WHEN FOUND;
        IF v_created THEN
            RETURN;                                   -- taken by a concurrent pop right after we created it, or
                                                      -- the partition is gone (nothing was created)
        END IF;
        PERFORM 1 FROM queen.log_consumers c WHERE c.partition_id = p_pid AND c.consumer_group = p_group;
        IF FOUND THEN
            RETURN;                                   -- leased or locked by a concurrent pop: skip, never wait
        END IF;
        IF NOT pg_try_advisory_xact_lock(hashtextextended(p_pid::text || '/' || p_group, 42)) THEN
            RETURN;                                   -- somebody else is creating this cursor right now
        END IF;
        INSERT INTO queen.log_consumers (partition_id, consumer_group, committed)
        SELECT p.id, p_group, queen._log_cursor_start(p.id, p.log_start, p.last_offset, p_seed_mode, p_seed_ts)
        FROM queen.log_partitions p WHERE p.id = p_pid
        ON CONFLICT (partition_id, consumer_group) DO NOTHING;
        v_created := true;
    END LOOP;

    v_last := v_c.last_offset;                        -- read with the claim (one statement)
    IF v_last IS NULL OR v_last <= v_c.committed THEN
        RETURN;                                       -- nothing past the cursor
    END IF;

    v_wanted := GREATEST(v_c.committed + 1, v_c.log_start);
    IF COALESCE(p_delayed, 0) > 0 THEN
        v_deadline := p_now - make_interval(secs => p_delayed);
    END IF;
    o_bases := '{}'; o_starts := '{}'; o_takes := '{}'; o_counts := '{}';

    IF p_conflate THEN
    -- Last-value delivery (see the header): only the newest visible message, from the last segment that is not
    -- delayed (without a delay, the partition's last segment: one backward probe of the primary key).
    SELECT s.base_offset, s.end_offset, s.created_at, s.blob INTO v_hb, v_he, v_hc, v_hblob
    FROM queen.log_segments s
    WHERE s.partition_id = p_pid AND s.end_offset >= v_wanted
      AND (v_deadline IS NULL OR s.created_at <= v_deadline)
      AND octet_length(s.blob) > 0                    -- not a row slimmed since the claim read log_start
    ORDER BY s.base_offset DESC LIMIT 1;
    IF FOUND THEN
        o_bases := ARRAY[v_hb]; o_starts := ARRAY[(v_he - v_hb)::integer]; o_takes := ARRAY[1];
        o_counts := ARRAY[(v_he - v_hb + 1)::integer];
        o_taken := 1; o_head_created := v_hc; o_head_blob := v_hblob;
        v_start := v_he; v_lastdel := v_he;
    ELSE
        -- nothing visible: delayed segments keep the partition open, no segment at all past the cursor seals it
        v_any_data := v_deadline IS NOT NULL AND EXISTS (SELECT 1 FROM queen.log_segments s
                                                         WHERE s.partition_id = p_pid AND s.end_offset >= v_wanted);
    END IF;
    ELSE
    -- Head probe (read with the claim): if the segment covers wanted, start mid-segment. A probe that does not cover
    -- it (a retention gap; or the row changed under the lock, when the probe may be of the old cursor) is made again.
    IF v_c.h_base IS NOT NULL AND v_c.h_base <= v_wanted AND v_c.h_end >= v_wanted THEN
        v_hb := v_c.h_base; v_he := v_c.h_end; v_hc := v_c.h_created;
        v_hblob := v_c.h_blob; v_hhdr := v_c.h_hdr; v_hstored := v_c.h_stored;
    ELSE
        SELECT s.base_offset, s.end_offset, s.created_at,
               CASE WHEN p_max_bytes IS NOT NULL AND p_budget > 1 THEN substring(s.blob FROM 1 FOR 12) END,
               octet_length(s.blob)
        INTO v_hb, v_he, v_hc, v_hhdr, v_hstored
        FROM queen.log_segments s
        WHERE s.partition_id = p_pid AND s.base_offset <= v_wanted
        ORDER BY s.base_offset DESC LIMIT 1;
    END IF;
    IF p_max_bytes IS NOT NULL AND p_budget > 1 THEN
        v_hw := queen._log_pop_bytes(v_hhdr, v_hstored, (v_he - v_hb + 1)::integer);
    END IF;
    IF v_hb IS NOT NULL AND v_he >= v_wanted THEN
        v_any_data := true;
        IF v_deadline IS NULL OR v_hc <= v_deadline THEN
            -- (a one-message pop takes its one frame whatever it weighs: the head is not weighed then)
            v_take := LEAST(v_he - v_wanted + 1, v_budget,
                            CASE WHEN v_hw IS NOT NULL THEN GREATEST(p_max_bytes / v_hw, 1) END)::integer;
            o_bytes  := COALESCE(v_take * v_hw, 0);
            o_bases  := o_bases  || v_hb;
            o_starts := o_starts || (v_wanted - v_hb)::integer;
            o_takes  := o_takes  || v_take;
            o_counts := o_counts || (v_he - v_hb + 1)::integer;
            o_taken  := v_take;
            o_head_created := v_hc;
            o_head_blob := v_hblob;                   -- NULL when the head was probed again
            v_start  := v_wanted;
            v_lastdel := v_wanted + v_take - 1;
        ELSE
            v_budget := 0;                            -- head is delayed: so is everything after it (suffix)
        END IF;
    END IF;

    -- Forward walk: every later segment from frame 0; retention gaps are simply skipped; delayed segments are a suffix.
    -- One set-based statement (no per-segment plpgsql): segment i is taken while the frames before it leave budget
    -- and neither it nor any segment before it is delayed; the last one taken may be cut.
    IF o_taken < v_budget AND (p_max_bytes IS NULL OR o_bytes < p_max_bytes) THEN
        -- With a byte budget, segment i is also taken only while the bytes before it leave budget, and is cut to the
        -- frames that fit (at least one): w (bytes per message) is read from the segment header only then.
        SELECT count(*) > 0,
               array_agg(w.base_offset ORDER BY w.base_offset) FILTER (WHERE w.ok),
               array_agg(w.tk ORDER BY w.base_offset) FILTER (WHERE w.ok),
               array_agg(w.cnt ORDER BY w.base_offset) FILTER (WHERE w.ok),
               COALESCE(sum(w.tk) FILTER (WHERE w.ok), 0),
               min(w.base_offset) FILTER (WHERE w.ok),
               max(w.base_offset + w.tk - 1) FILTER (WHERE w.ok),
               COALESCE(sum(w.tk * w.w) FILTER (WHERE w.ok), 0)
        INTO v_w_any, v_w_bases, v_w_takes, v_w_counts, v_w_taken, v_w_first, v_w_last, v_w_bytes
        FROM (
            SELECT s.base_offset, s.cnt, s.w,
                   LEAST(s.cnt, v_budget - o_taken - s.before,
                         CASE WHEN p_max_bytes IS NOT NULL
                              THEN GREATEST((p_max_bytes - o_bytes - s.bytes_before) / s.w, 1) END)::integer AS tk,
                   (s.before < v_budget - o_taken AND NOT s.delayed
                    AND (p_max_bytes IS NULL OR s.bytes_before < p_max_bytes - o_bytes)) AS ok
            FROM (
                SELECT s0.base_offset, s0.cnt, s0.w,
                       COALESCE(sum(s0.cnt) OVER (ORDER BY s0.base_offset
                                                  ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before,
                       COALESCE(sum(s0.cnt * s0.w) OVER (ORDER BY s0.base_offset
                                                         ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0)
                           AS bytes_before,
                       bool_or(v_deadline IS NOT NULL AND s0.created_at > v_deadline)
                           OVER (ORDER BY s0.base_offset ROWS UNBOUNDED PRECEDING) AS delayed
                FROM (SELECT s1.base_offset, (s1.end_offset - s1.base_offset + 1)::integer AS cnt, s1.created_at,
                             CASE WHEN p_max_bytes IS NOT NULL
                                  THEN queen._log_pop_bytes(hx.hdr, octet_length(s1.blob),
                                                            (s1.end_offset - s1.base_offset + 1)::integer)
                                  ELSE 0 END AS w
                      FROM queen.log_segments s1
                      -- the header sliced once per segment (OFFSET 0 keeps the subquery from being pulled up and
                      -- its substring copied into every use), and only with a byte budget
                      CROSS JOIN LATERAL (SELECT CASE WHEN p_max_bytes IS NOT NULL
                                                      THEN substring(s1.blob FROM 1 FOR 12) END AS hdr
                                          OFFSET 0) hx
                      WHERE s1.partition_id = p_pid AND s1.base_offset > v_wanted
                        AND octet_length(s1.blob) > 0   -- a row slimmed since the claim read log_start: a gap
                      ORDER BY s1.base_offset
                      LIMIT v_budget - o_taken) s0      -- every segment gives at least one frame
            ) s
        ) w;
        v_any_data := v_any_data OR v_w_any;
        IF v_w_taken > 0 THEN
            o_bases  := o_bases  || v_w_bases;
            o_starts := o_starts || array_fill(0, ARRAY[cardinality(v_w_bases)]);
            o_takes  := o_takes  || v_w_takes;
            o_counts := o_counts || v_w_counts;
            o_taken  := o_taken + v_w_taken;
            o_bytes  := o_bytes + v_w_bytes;
            v_start  := COALESCE(v_start, v_w_first);
            v_lastdel := v_w_last;
        END IF;
    ELSIF NOT v_any_data THEN
        v_any_data := EXISTS (SELECT 1 FROM queen.log_segments s
                              WHERE s.partition_id = p_pid AND s.base_offset > v_wanted);
    END IF;
    END IF;                                           -- p_conflate

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
            lease_conflated = COALESCE(p_conflate, false),
            attempt_count = CASE WHEN c.attempt_offset IS NOT DISTINCT FROM v_start THEN c.attempt_count + 1 ELSE 1 END,
            attempt_offset = v_start
        WHERE c.partition_id = p_pid AND c.consumer_group = p_group
        RETURNING GREATEST(c.attempt_count, 1), c.lease_expires_at INTO o_attempt, o_expires;
    END IF;
END;
$$;

-- Extend every live lease of a worker on the tenant's partitions; never shortens. Rows are locked in
-- (partition_id, group) order first (same total order as multi-row ack paths).
CREATE OR REPLACE FUNCTION queen.log_renew_lease(p_tenant uuid, p_worker text, p_seconds integer)
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
