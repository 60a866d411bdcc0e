-- =====================================================================================================================
-- Queue configuration, deletion and listing (API.md §5.5-§5.7), and the tenancy ownership probe.
-- A repeatable migration: the rules for editing it are at the top of R__10_common.sql.
-- =====================================================================================================================

-- ---------------------------------------------------------------------------------------------------------------------
-- Queue administration
-- ---------------------------------------------------------------------------------------------------------------------

-- The 19 option keys in API.md's order (jsonb itself does not keep key order; callers that care render from this list).
CREATE OR REPLACE FUNCTION queen._log_queue_options(q queen.queues)
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
CREATE OR REPLACE FUNCTION queen.configure_queue(p_tenant uuid, p_queue text, p_options jsonb, p_mode text)
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
    v_e       jsonb;
    v_n       integer;
BEGIN
    IF p_queue IS NULL THEN
        RAISE EXCEPTION 'QCONF queue is required' USING ERRCODE = 'QV401';
    END IF;
    IF v_mode NOT IN ('merge', 'replace') THEN
        RAISE EXCEPTION 'QCONF mode must be "merge" or "replace", got %', v_mode USING ERRCODE = 'QV401';
    END IF;
    IF jsonb_typeof(v_o) <> 'object' THEN
        RAISE EXCEPTION 'QCONF options must be an object' USING ERRCODE = 'QV401';
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
    -- So the effective options are the defaults, overlaid by the stored values (unless fresh) of the keys not given,
    -- overlaid by the given non-null values. Each value is cast as it is written, so a bad one raises.
    v_e := '{"namespace": "", "task": "", "priority": 0, "leaseTime": 300, "retryLimit": 3, "retryDelay": 1000,
             "maxSize": 0, "ttl": 3600, "deadLetterQueue": true, "dlqAfterMaxRetries": true, "delayedProcessing": 0,
             "windowBuffer": 0, "retentionEnabled": false, "retentionSeconds": 0, "completedRetentionSeconds": 0,
             "encryptionEnabled": false, "maxWaitTimeSeconds": 0, "minPopWaitTime": 0, "dedupWindowSeconds": 3600,
             "retentionSinkHold": "", "retentionSinkHoldMaxSeconds": 604800}'::jsonb
           || CASE WHEN v_fresh THEN '{}'::jsonb
                   ELSE (jsonb_build_object('namespace', v_q.namespace, 'task', v_q.task) || queen._log_queue_options(v_q))
                        - ARRAY(SELECT jsonb_object_keys(v_o)) END
           || jsonb_strip_nulls(v_o);

    UPDATE queen.queues q SET
        namespace = v_e->>'namespace', task = v_e->>'task', priority = (v_e->>'priority')::integer,
        lease_time = (v_e->>'leaseTime')::integer, retry_limit = (v_e->>'retryLimit')::integer,
        retry_delay = (v_e->>'retryDelay')::integer, max_queue_size = (v_e->>'maxSize')::integer,
        ttl = (v_e->>'ttl')::integer, dead_letter_queue = (v_e->>'deadLetterQueue')::boolean,
        dlq_after_max_retries = (v_e->>'dlqAfterMaxRetries')::boolean,
        delayed_processing = (v_e->>'delayedProcessing')::integer, window_buffer = (v_e->>'windowBuffer')::integer,
        retention_enabled = (v_e->>'retentionEnabled')::boolean,
        retention_seconds = (v_e->>'retentionSeconds')::integer,
        completed_retention_seconds = (v_e->>'completedRetentionSeconds')::integer,
        encryption_enabled = (v_e->>'encryptionEnabled')::boolean,
        max_wait_time_seconds = (v_e->>'maxWaitTimeSeconds')::integer,
        min_pop_wait_time = LEAST(GREATEST((v_e->>'minPopWaitTime')::integer, 0), 60000),
        dedup_window_seconds = GREATEST((v_e->>'dedupWindowSeconds')::integer, 0),
        retention_sink_hold = v_e->>'retentionSinkHold',
        retention_sink_hold_max_seconds = (v_e->>'retentionSinkHoldMaxSeconds')::integer,
        updated_at = now()
    WHERE q.id = v_q.id
    RETURNING * INTO v_q;

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

-- A partition's identity in the resource and status documents (get_queue, status_queue in R__90):
-- {"id","name","createdAt"}. Plain SQL: inlined.
CREATE OR REPLACE FUNCTION queen._log_partition_ref(p_id uuid, p_name text, p_created timestamptz)
RETURNS jsonb
LANGUAGE sql STABLE
AS $$
    SELECT jsonb_build_object('id', p_id, 'name', p_name, 'createdAt', queen._log_ts(p_created))
$$;

-- Per-partition stats over the queue-mode cursor (offset arithmetic; total = pending + processing + completed over the
-- retained range [log_start, last_offset]).
CREATE OR REPLACE FUNCTION queen._log_partition_stats(p_qid uuid)
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
    CROSS JOIN LATERAL queen._log_queue_position(p.log_start, p.last_offset, c.committed, c.worker_id,
                                                 c.lease_expires_at, c.batch_end) x
    CROSS JOIN LATERAL (
        SELECT count(*) AS n, COALESCE(sum(s.end_offset - s.base_offset + 1), 0) AS msgs,
               COALESCE(sum(octet_length(s.blob)), 0) AS bytes,
               min(s.created_at) AS oldest, max(s.created_at) AS newest
        FROM queen.log_segments s WHERE s.partition_id = p.id AND s.base_offset >= p.log_start   -- no slim rows
    ) sg
    WHERE p.queue_id = p_qid
$$;

-- GET /api/v1/resources/queues
CREATE OR REPLACE FUNCTION queen.get_queues(p_tenant uuid)
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

-- GET /api/v1/resources/queues/:queue?limit=&cursor=: the queue with one page of its partitions, the first p_limit in
-- name order after p_after (exclusive; NULL: from the first); totals, segments and retainedBytes are over every
-- partition. body is the JSON document (or {"error":"Queue not found"}); next_after is the page's last partition name
-- when more partitions follow, else NULL. Every partition's figures are read once (the totals need them all), but only
-- the page's are rendered: a queue of 100,000 partitions answered 35 MB in one document.
DROP FUNCTION IF EXISTS queen.get_queue(uuid, text);
CREATE OR REPLACE FUNCTION queen.get_queue(p_tenant uuid, p_queue text, p_after text, p_limit integer)
RETURNS TABLE (body text, next_after text)
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_q     queen.queues;
    v_limit integer := GREATEST(COALESCE(p_limit, 1000), 1);
    v_tot   record;
BEGIN
    v_q := queen._log_queue(p_tenant, p_queue);
    IF v_q.id IS NULL THEN
        RETURN QUERY SELECT jsonb_build_object('error', 'Queue not found')::text, NULL::text;
        RETURN;
    END IF;

    WITH s AS MATERIALIZED (SELECT * FROM queen._log_partition_stats(v_q.id)),
    page AS (
        SELECT s.* FROM s
        WHERE s.pname >= COALESCE(p_after, '') AND (p_after IS NULL OR s.pname <> p_after)
        ORDER BY s.pname LIMIT v_limit + 1),
    shown AS (SELECT page.* FROM page ORDER BY page.pname LIMIT v_limit)
    SELECT (SELECT COALESCE(jsonb_agg(queen._log_partition_ref(x.pid, x.pname, x.pcreated) || jsonb_build_object(
                'stats', jsonb_build_object('total', x.total, 'pending', x.pending, 'processing', x.processing,
                                            'completed', x.completed, 'failed', NULL, 'deadLetter', x.dead_letter),
                'oldestMessage', queen._log_ts(x.oldest),
                'newestMessage', queen._log_ts(x.newest)) ORDER BY x.pname), '[]'::jsonb) FROM shown x) AS parts,
           CASE WHEN (SELECT count(*) FROM page) > v_limit THEN (SELECT max(x.pname) FROM shown x) END AS next_after,
           COALESCE(sum(s.total), 0) AS total, COALESCE(sum(s.pending), 0) AS pending,
           COALESCE(sum(s.processing), 0) AS processing, COALESCE(sum(s.completed), 0) AS completed,
           COALESCE(sum(s.dead_letter), 0) AS dead_letter, COALESCE(sum(s.bytes), 0) AS bytes,
           COALESCE(sum(s.segs), 0) AS segs, COALESCE(sum(s.seg_msgs), 0) AS seg_msgs
    INTO v_tot
    FROM s;

    RETURN QUERY SELECT jsonb_build_object(
        'id', v_q.id,
        'name', v_q.name,
        'namespace', COALESCE(NULLIF(v_q.namespace, ''), queen._log_name_ns(v_q.name)),
        'task', COALESCE(NULLIF(v_q.task, ''), queen._log_name_task(v_q.name)),
        'createdAt', queen._log_ts(v_q.created_at),
        'options', jsonb_build_object('namespace', COALESCE(v_q.namespace, ''), 'task', COALESCE(v_q.task, ''))
                   || queen._log_queue_options(v_q),
        'partitions', v_tot.parts,
        'totals', jsonb_build_object('total', v_tot.total, 'pending', v_tot.pending, 'processing', v_tot.processing,
                                     'completed', v_tot.completed, 'deadLetter', v_tot.dead_letter),
        'retainedBytes', v_tot.bytes,
        'segments', jsonb_build_object('segments', v_tot.segs, 'messages', v_tot.seg_msgs))::text,
        v_tot.next_after;
END;
$$;

-- Queue deletion deletes the segments itself (they have no foreign key any more).
CREATE OR REPLACE FUNCTION queen.delete_queue(p_tenant uuid, p_queue text)
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

    -- The queue's dead letters before the push locks, in the order a redrive chunk (dlq_redrive_rows) and a DLQ move
    -- lock them: those lock their rows, then their destinations' push locks, so a deletion holding the push locks
    -- while it waited for a row they hold would close a cycle (a deadlock, SQLSTATE 40P01).
    PERFORM 1 FROM queen.log_dlq d
     WHERE d.partition_id IN (SELECT p.id FROM queen.log_partitions p WHERE p.queue_id = v_qid)
     ORDER BY d.failed_at, d.id
       FOR UPDATE OF d;
    -- The partitions' push locks, in the pushes' order (R__20_push.sql, "Push lock"): a push that holds them updates
    -- its rows in any order, so taking the rows first could deadlock with it.
    PERFORM pg_advisory_xact_lock(20821, l.k)
    FROM (SELECT DISTINCT hashtext(p.id::text) AS k FROM queen.log_partitions p WHERE p.queue_id = v_qid ORDER BY 1) l;
    SELECT COALESCE(array_agg(l.id ORDER BY l.id), '{}') INTO v_pids
    FROM (SELECT p.id FROM queen.log_partitions p WHERE p.queue_id = v_qid ORDER BY p.id FOR UPDATE) l;

    DELETE FROM queen.log_segments s WHERE s.partition_id = ANY (v_pids);   -- payloads and hashes (one row, V22)
    DELETE FROM queen.log_dlq d WHERE d.partition_id = ANY (v_pids);
    DELETE FROM queen.retention_history r WHERE r.partition_id = ANY (v_pids);
    DELETE FROM queen.consumer_groups_metadata m WHERE m.queue_id = v_qid;
    DELETE FROM queen.queues q WHERE q.id = v_qid;

    RETURN jsonb_build_object('deleted', true, 'queue', p_queue, 'existed', true,
                              'queueId', v_qid, 'partitionIds', to_jsonb(v_pids));
END;
$$;

-- ---------------------------------------------------------------------------------------------------------------------
-- Tenancy
-- ---------------------------------------------------------------------------------------------------------------------

-- The tenant that owns a partition (no row: no such partition). The ownership gate (CachedOwnershipGate) asks
-- EXISTS (... FROM queen.partition_tenant($1) WHERE tenant_id = $2): plain SQL and STABLE, so it is inlined into that
-- statement as the same two primary-key probes (partition, then its queue).
CREATE OR REPLACE FUNCTION queen.partition_tenant(p_pid uuid)
RETURNS TABLE (tenant_id uuid)
LANGUAGE sql STABLE
AS $$
    SELECT q.tenant_id FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id WHERE p.id = p_pid
$$;

-- GET /api/v1/resources/partitions?queue=&limit= (queen2-contract.md §7): the tenant's partitions (of one queue when
-- p_queue is given), the most pending first, at most p_limit. pending/processing are _log_partition_stats' (the
-- queue-mode cursor, as the queue detail); lagSeconds is the age of the oldest message the slowest cursor of any group
-- has not consumed (the created_at of the segment covering min(committed) + 1), null when every cursor is caught up
-- or the partition has none. A named queue that does not exist is {"error":"Queue not found"}.
CREATE OR REPLACE FUNCTION queen.resources_partitions(p_tenant uuid, p_queue text, p_limit integer)
RETURNS jsonb
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_tenant uuid := COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001');
    v_limit  integer := LEAST(GREATEST(COALESCE(p_limit, 610), 1), 10000);
    v_out    jsonb;
BEGIN
    IF p_queue IS NOT NULL AND (queen._log_queue(v_tenant, p_queue)).id IS NULL THEN
        RETURN jsonb_build_object('error', 'Queue not found');
    END IF;
    SELECT COALESCE(jsonb_agg(jsonb_build_object(
               'queue', x.qname, 'partition', x.pname, 'partitionId', x.pid, 'pending', x.pending,
               'processing', x.processing, 'lagSeconds', x.lag) ORDER BY x.pending DESC, x.qname, x.pname), '[]')
    INTO v_out
    FROM (
        SELECT q.name::text AS qname, s.pid, s.pname, s.pending, s.processing,
               (SELECT round(extract(epoch FROM clock_timestamp() - sg.created_at)::numeric, 3)
                FROM (SELECT min(c.committed) AS low FROM queen.log_consumers c WHERE c.partition_id = s.pid) m
                CROSS JOIN LATERAL (
                    -- the covering row (segments never overlap), unless it is slim (retention took its payload)
                    SELECT s0.created_at, s0.end_offset, s0.blob FROM queen.log_segments s0
                    WHERE s0.partition_id = s.pid AND s0.base_offset <= m.low + 1
                    ORDER BY s0.base_offset DESC LIMIT 1) sg
                WHERE sg.end_offset > m.low AND octet_length(sg.blob) > 0) AS lag
        FROM queen.queues q
        CROSS JOIN LATERAL queen._log_partition_stats(q.id) s
        WHERE q.tenant_id = v_tenant AND (p_queue IS NULL OR q.name = p_queue)
        ORDER BY s.pending DESC, q.name, s.pname
        LIMIT v_limit
    ) x;
    RETURN jsonb_build_object('partitions', v_out);
END;
$$;

-- GET /api/v1/resources/queues/:queue/sizes (queen2-contract.md §7, our shape): what the queue holds, summed over its
-- partitions by _log_partition_stats: retained messages and stored bytes, the oldest and newest segment times.
CREATE OR REPLACE FUNCTION queen.queue_sizes(p_tenant uuid, p_queue text)
RETURNS jsonb
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_q queen.queues;
    v_r record;
BEGIN
    v_q := queen._log_queue(p_tenant, p_queue);
    IF v_q.id IS NULL THEN
        RETURN jsonb_build_object('error', 'Queue not found');
    END IF;
    SELECT count(*) AS parts, COALESCE(sum(s.seg_msgs), 0) AS msgs, COALESCE(sum(s.bytes), 0) AS bytes,
           min(s.oldest) AS oldest, max(s.newest) AS newest
    INTO v_r FROM queen._log_partition_stats(v_q.id) s;
    RETURN jsonb_build_object('queue', v_q.name, 'partitions', v_r.parts, 'messages', v_r.msgs, 'bytes', v_r.bytes,
                              'oldestAt', queen._log_ts(v_r.oldest), 'newestAt', queen._log_ts(v_r.newest));
END;
$$;
