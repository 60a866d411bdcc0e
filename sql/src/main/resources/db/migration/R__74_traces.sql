-- =====================================================================================================================
-- Message traces (API.md §5.13): the only functions that read or write queen.message_traces / message_trace_names.
-- A repeatable migration: the rules for editing it are at the top of R__10_common.sql.
--
--   trace_record        POST /api/v1/traces
--   traces_of_message   GET  /api/v1/traces/:partitionId/:transactionId
--   traces_by_name      GET  /api/v1/traces/by-name/:traceName
--   trace_names         GET  /api/v1/traces/names
--   traces_purge        the retention cycle (QUEEN_TRACES_RETENTION_DAYS)
--
-- Keys are Queen's (snake_case inside the listings). Every read is scoped by the tenant stored on the trace, so a
-- trace stays readable by its tenant after its queue is deleted, and never by another tenant.
-- =====================================================================================================================

-- Records one trace event for the message at (p_pid, p_txn). The partition must exist and belong to p_tenant (a
-- foreign or unknown partition answers {"success":false,"error":"Message not found"}, which the route turns into a
-- 404); the transaction id itself is not resolved, as in Queen. Returns {"success":true,"traceId"}.
CREATE OR REPLACE FUNCTION queen.trace_record(
    p_tenant     uuid,
    p_pid        uuid,
    p_txn        text,
    p_group      text,
    p_event_type text,
    p_data       jsonb,
    p_worker     text,
    p_names      text[]
) RETURNS jsonb
LANGUAGE plpgsql
AS $$
DECLARE
    v_tenant uuid := COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001');
    v_queue  text;
    v_pname  text;
    v_id     uuid;
    v_at     timestamptz := clock_timestamp();
BEGIN
    SELECT q.name, p.name INTO v_queue, v_pname
    FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
    WHERE p.id = p_pid AND q.tenant_id = v_tenant;
    IF NOT FOUND THEN
        RETURN jsonb_build_object('success', false, 'error', 'Message not found');
    END IF;

    INSERT INTO queen.message_traces
        (tenant_id, partition_id, transaction_id, consumer_group, event_type, data, worker_id,
         queue_name, partition_name, created_at)
    VALUES (v_tenant, p_pid, p_txn, COALESCE(NULLIF(p_group, ''), '__QUEUE_MODE__'),
            COALESCE(NULLIF(p_event_type, ''), 'info'), COALESCE(p_data, 'null'::jsonb), p_worker,
            v_queue, v_pname, v_at)
    RETURNING id INTO v_id;

    INSERT INTO queen.message_trace_names (trace_id, trace_name, tenant_id, created_at)
    SELECT DISTINCT v_id, n, v_tenant, v_at
    FROM unnest(COALESCE(p_names, '{}'::text[])) AS n
    WHERE n IS NOT NULL AND n <> ''
    ORDER BY 2;

    RETURN jsonb_build_object('success', true, 'traceId', v_id);
END;
$$;

-- One trace as the listings render it.
CREATE OR REPLACE FUNCTION queen._trace_json(t queen.message_traces)
RETURNS jsonb
LANGUAGE sql STABLE
AS $$
    SELECT jsonb_build_object(
        'id', t.id,
        'transaction_id', t.transaction_id,
        'partition_id', t.partition_id,
        'event_type', t.event_type,
        'data', t.data,
        'consumer_group', t.consumer_group,
        'worker_id', t.worker_id,
        'created_at', queen._log_ts(t.created_at),
        'queue_name', t.queue_name,
        'partition_name', t.partition_name,
        'trace_names', COALESCE((SELECT jsonb_agg(n.trace_name ORDER BY n.trace_name)
                                 FROM queen.message_trace_names n WHERE n.trace_id = t.id), '[]'::jsonb))
$$;

-- The traces of one message, oldest first, one page: {"traces":[...]} with the first p_limit traces after p_after
-- (exclusive; NULL: from the first). A key is '<created_at in microseconds since the epoch>,<id>', the order of the
-- timeline; next_after is the page's last key when more traces follow, else NULL. A foreign or unknown address gives
-- {"traces":[]}. Read on message_traces_address in timeline order, stopping one past the page: a timeline of 46,000
-- traces answered 40 MB in one document.
DROP FUNCTION IF EXISTS queen.traces_of_message(uuid, uuid, text);
CREATE OR REPLACE FUNCTION queen.traces_of_message(p_tenant uuid, p_pid uuid, p_txn text, p_after text,
                                                   p_limit integer)
RETURNS TABLE (body text, next_after text)
LANGUAGE sql STABLE
AS $$
    WITH page AS (
        SELECT t AS tr, t.created_at, t.id
        FROM queen.message_traces t
        WHERE t.partition_id = p_pid AND t.transaction_id = p_txn
          AND t.tenant_id = COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001')
          AND (p_after IS NULL
               OR (t.created_at, t.id) > ('epoch'::timestamptz
                                          + split_part(p_after, ',', 1)::bigint * interval '1 microsecond',
                                          split_part(p_after, ',', 2)::uuid))
        ORDER BY t.created_at, t.id
        LIMIT GREATEST(p_limit, 1) + 1
    ), shown AS (
        SELECT page.tr, page.created_at, page.id FROM page ORDER BY page.created_at, page.id LIMIT GREATEST(p_limit, 1)
    )
    SELECT jsonb_build_object('traces', COALESCE((SELECT jsonb_agg(queen._trace_json(x.tr) ORDER BY x.created_at, x.id)
                                                  FROM shown x), '[]'::jsonb))::text,
           CASE WHEN (SELECT count(*) FROM page) > GREATEST(p_limit, 1) THEN
               (SELECT (extract(epoch FROM x.created_at) * 1000000)::bigint || ',' || x.id
                FROM shown x ORDER BY x.created_at DESC, x.id DESC LIMIT 1) END
$$;

-- The traces filed under one name, oldest first, one page: {"traces":[...],"total","pagination":{"limit","offset"}}.
CREATE OR REPLACE FUNCTION queen.traces_by_name(p_tenant uuid, p_name text, p_limit integer, p_offset integer)
RETURNS jsonb
LANGUAGE sql STABLE
AS $$
    WITH named AS (
        SELECT n.trace_id, n.created_at
        FROM queen.message_trace_names n
        WHERE n.tenant_id = COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001') AND n.trace_name = p_name
    ), page AS (
        SELECT queen._trace_json(t) AS j, t.created_at, t.id
        FROM (SELECT nm.trace_id FROM named nm ORDER BY nm.created_at, nm.trace_id
              LIMIT p_limit OFFSET p_offset) pg
        JOIN queen.message_traces t ON t.id = pg.trace_id
    )
    SELECT jsonb_build_object(
        'traces', COALESCE((SELECT jsonb_agg(page.j ORDER BY page.created_at, page.id) FROM page), '[]'::jsonb),
        'total', (SELECT count(*) FROM named),
        'pagination', jsonb_build_object('limit', p_limit, 'offset', p_offset))
$$;

-- The tenant's trace names, most recently used first, one page:
-- {"trace_names":[{"trace_name","trace_count","message_count","last_seen"}],"total","pagination":{"limit","offset"}}.
CREATE OR REPLACE FUNCTION queen.trace_names(p_tenant uuid, p_limit integer, p_offset integer)
RETURNS jsonb
LANGUAGE sql STABLE
AS $$
    WITH names AS (
        SELECT n.trace_name,
               count(*) AS trace_count,
               count(DISTINCT (t.partition_id, t.transaction_id)) AS message_count,
               max(n.created_at) AS last_seen
        FROM queen.message_trace_names n
        JOIN queen.message_traces t ON t.id = n.trace_id
        WHERE n.tenant_id = COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001')
        GROUP BY n.trace_name
    ), page AS (
        SELECT * FROM names ORDER BY last_seen DESC, trace_name LIMIT p_limit OFFSET p_offset
    )
    SELECT jsonb_build_object(
        'trace_names', COALESCE((SELECT jsonb_agg(jsonb_build_object(
                                     'trace_name', page.trace_name,
                                     'trace_count', page.trace_count,
                                     'message_count', page.message_count,
                                     'last_seen', queen._log_ts(page.last_seen))
                                   ORDER BY page.last_seen DESC, page.trace_name) FROM page), '[]'::jsonb),
        'total', (SELECT count(*) FROM names),
        'pagination', jsonb_build_object('limit', p_limit, 'offset', p_offset))
$$;

-- Retention: deletes at most p_batch traces (their names go with them) recorded more than p_days days ago, oldest
-- first; returns how many. The caller repeats while a full batch came back.
CREATE OR REPLACE FUNCTION queen.traces_purge(p_days integer, p_batch integer)
RETURNS integer
LANGUAGE sql
AS $$
    WITH gone AS (
        DELETE FROM queen.message_traces t
        WHERE t.id IN (SELECT o.id FROM queen.message_traces o
                       WHERE o.created_at < now() - make_interval(days => GREATEST(p_days, 0))
                       ORDER BY o.created_at
                       LIMIT GREATEST(p_batch, 1))
        RETURNING 1)
    SELECT count(*)::integer FROM gone
$$;
