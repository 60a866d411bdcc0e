-- =====================================================================================================================
-- Queue depth (API.md §5.8), status analytics (§5.12) and the /api/v1/analytics/* views. Every function returns the
-- JSON its route passes through (§1.4). Tenant-scoped functions take the tenant first; the node-wide ones
-- (system-metrics, worker-metrics without a queue, postgres-stats) describe the broker processes and the database, not
-- any tenant's data.
--
-- History comes from the per-minute counter tables of V16 (stats_node_minute, stats_queue_minute): a row per minute
-- and node (and tenant and queue); the cluster figure of a bucket is the SUM over nodes and minutes. Buckets are
-- either calendar units (status/analytics: hour | day | week | month, UTC) or a fixed width in seconds starting at
-- `from` (the analytics views: the route picks the width so a window has a bounded number of points).
-- Windows are half-open: from <= minute < to.
-- Current figures (depth, queue-lag, partition-liveness) reuse the cursor arithmetic of R__10_common.sql
-- (_log_queue_position) and R__90_status.sql (_st_group_rows, _st_parts_of).
-- A repeatable migration: the rules for editing it are at the top of R__10_common.sql.
-- =====================================================================================================================

-- ---------------------------------------------------------------------------------------------------------------------
-- GET /api/v1/resources/queues/:queue/depth?group=
-- Per partition, for the group's cursor (queue mode when p_group is NULL or ''):
--   pending    = frames after the cursor not under a live lease (last_offset - cur - processing)
--   processing = frames under the group's live lease on the partition
--   ready      = pending on a partition the group could be handed now (no live lease of the group holds it: one
--                lease per (partition, group))
-- A partition the group has no cursor on yet counts from the retained start (log_start), as queue mode does.
-- conflation = the group's stored last-value policy (consumer_groups_metadata); a conflating group owes one delivery
-- per partition, so effectivePending = partitionsPending and effectiveReady = partitionsReady; otherwise they equal
-- pending and ready.
-- ---------------------------------------------------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.queue_depth(p_tenant uuid, p_queue text, p_group text)
RETURNS jsonb LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_q     queen.queues := queen._log_queue(p_tenant, p_queue);
    v_group text := COALESCE(NULLIF(p_group, ''), '__QUEUE_MODE__');
    v_conf  boolean;
    v_out   jsonb;
BEGIN
    IF v_q.id IS NULL THEN
        RETURN jsonb_build_object('error', 'Queue not found');
    END IF;
    SELECT COALESCE(bool_or(m.conflation), false) INTO v_conf
    FROM queen.consumer_groups_metadata m
    WHERE m.tenant_id = v_q.tenant_id AND m.queue_id = v_q.id AND m.consumer_group = v_group;

    WITH parts AS (
        SELECT p.name AS pname, k.proc AS processing,
               GREATEST(p.last_offset - k.cur - k.proc, 0) AS pending,
               (c.worker_id IS NOT NULL AND c.batch_end IS NOT NULL AND c.lease_expires_at > now()) AS leased
        FROM queen.log_partitions p
        LEFT JOIN queen.log_consumers c ON c.partition_id = p.id AND c.consumer_group = v_group
        CROSS JOIN LATERAL queen._log_queue_position(p.log_start, p.last_offset, c.committed, c.worker_id,
                                                     c.lease_expires_at, c.batch_end) k
        WHERE p.queue_id = v_q.id),
    r AS (SELECT parts.*, CASE WHEN parts.leased THEN 0 ELSE parts.pending END AS ready FROM parts)
    SELECT jsonb_build_object(
        'queue', v_q.name,
        'group', v_group,
        'pending', COALESCE(sum(r.pending), 0),
        'processing', COALESCE(sum(r.processing), 0),
        'ready', COALESCE(sum(r.ready), 0),
        'partitionsPending', count(*) FILTER (WHERE r.pending > 0),
        'partitionsReady', count(*) FILTER (WHERE r.ready > 0),
        'conflation', v_conf,
        'effectivePending', CASE WHEN v_conf THEN count(*) FILTER (WHERE r.pending > 0)
                                 ELSE COALESCE(sum(r.pending), 0) END,
        'effectiveReady', CASE WHEN v_conf THEN count(*) FILTER (WHERE r.ready > 0)
                               ELSE COALESCE(sum(r.ready), 0) END,
        'partitions', COALESCE(jsonb_agg(jsonb_build_object('partition', r.pname, 'pending', r.pending,
                                                            'processing', r.processing, 'ready', r.ready)
                                         ORDER BY r.pname), '[]'::jsonb))
    INTO v_out
    FROM r;
    RETURN v_out;
END;
$$;

-- ---------------------------------------------------------------------------------------------------------------------
-- Buckets
-- ---------------------------------------------------------------------------------------------------------------------
-- The bucket of a minute: the calendar unit p_unit (hour/day/week/month, UTC) when given, else a p_secs-wide bin
-- starting at p_from.
CREATE OR REPLACE FUNCTION queen._an_bucket(p_ts timestamptz, p_from timestamptz, p_unit text, p_secs integer)
RETURNS timestamptz LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN p_unit IS NOT NULL THEN date_trunc(p_unit, p_ts, 'UTC')
                ELSE date_bin(make_interval(secs => p_secs), p_ts, p_from) END
$$;

-- Every bucket start of [p_from, p_to), so a chart gets zeros rather than gaps; fixed-width buckets always include
-- p_from's, so an empty window still has one (all-zero) bucket to total.
CREATE OR REPLACE FUNCTION queen._an_grid(p_from timestamptz, p_to timestamptz, p_unit text, p_secs integer)
RETURNS SETOF timestamptz LANGUAGE sql STABLE AS $$
    SELECT g.x AT TIME ZONE 'UTC'
    FROM generate_series(date_trunc(p_unit, p_from, 'UTC') AT TIME ZONE 'UTC', p_to AT TIME ZONE 'UTC',
                         ('1 ' || p_unit)::interval) AS g(x)
    WHERE p_unit IS NOT NULL AND g.x AT TIME ZONE 'UTC' < p_to
    UNION ALL
    SELECT g.x FROM generate_series(p_from, p_to, make_interval(secs => p_secs)) AS g(x)
    WHERE p_unit IS NULL AND (g.x < p_to OR g.x = p_from)
$$;

-- The window part of an answer: {"from","to"} and, for fixed-width buckets, "bucketSeconds".
CREATE OR REPLACE FUNCTION queen._an_window(p_from timestamptz, p_to timestamptz, p_secs integer)
RETURNS jsonb LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object('from', queen._log_ts(p_from), 'to', queen._log_ts(p_to))
           || CASE WHEN p_secs IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('bucketSeconds', p_secs) END
$$;

-- The signature of an error text: the text with its variable parts masked (UUIDs become <uuid>, words of 8+ hex
-- digits mixing letters and digits <hex>, numbers <n>, whitespace runs one space), at most 500 characters; no error at
-- all is "(no error)".
CREATE OR REPLACE FUNCTION queen._an_error_signature(p_error text)
RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN p_error IS NULL OR btrim(p_error) = '' THEN '(no error)' ELSE left(btrim(
        regexp_replace(regexp_replace(regexp_replace(regexp_replace(p_error,
            '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}', '<uuid>', 'g'),
            '\m(?=[0-9a-fA-F]{8,}\M)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]*[0-9][0-9a-fA-F]*\M', '<hex>', 'g'),
            '[0-9]+(\.[0-9]+)?', '<n>', 'g'),
            '\s+', ' ', 'g')), 500) END
$$;

-- The tenant's partitions with their queue name, of one queue (p_queue) or all (NULL or '').
CREATE OR REPLACE FUNCTION queen._an_partitions(p_tenant uuid, p_queue text)
RETURNS TABLE (pid uuid, pname text, qname text) LANGUAGE sql STABLE AS $$
    SELECT p.id, p.name, q.name::text
    FROM queen.log_partitions p
    JOIN queen.queues q ON q.id = p.queue_id
    WHERE q.tenant_id = COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001')
      AND (NULLIF(p_queue, '') IS NULL OR q.name = p_queue)
$$;

-- The tenant's per-queue counter rows of [p_from, p_to), filtered by exact queue, effective namespace / task (the
-- queue's columns, else the dot-split of its name, so rows of a deleted queue still count) and node (NULL or '' = no
-- filter).
CREATE OR REPLACE FUNCTION queen._an_queue_rows(p_tenant uuid, p_from timestamptz, p_to timestamptz, p_queue text,
                                                p_ns text, p_task text, p_node text)
RETURNS SETOF queen.stats_queue_minute LANGUAGE sql STABLE AS $$
    SELECT s.*
    FROM queen.stats_queue_minute s
    LEFT JOIN queen.queues q ON q.tenant_id = s.tenant_id AND q.name = s.queue
    WHERE s.tenant_id = COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001')
      AND s.minute >= p_from AND s.minute < p_to
      AND (NULLIF(p_queue, '') IS NULL OR s.queue = p_queue)
      AND (NULLIF(p_node, '') IS NULL OR s.node_id = p_node)
      AND (NULLIF(p_ns, '') IS NULL OR COALESCE(NULLIF(q.namespace, ''), queen._log_name_ns(s.queue)) = p_ns)
      AND (NULLIF(p_task, '') IS NULL OR COALESCE(NULLIF(q.task, ''), queen._log_name_task(s.queue)) = p_task)
$$;

-- Queue operation counts per bucket, summed over nodes and minutes. p_split: 'none' (one row per bucket, every bucket
-- of the window, zeros included), 'queue' or 'node' (one row per bucket and queue / node that has counts; k = the
-- queue / node). j holds the figures:
--   pushRequests, pushMessages, popRequests, popMessages, popEmpty, ackSuccess, ackFailed, acked (= success + failed),
--   transactions, conflated, dlq, popLagAvgMs (message age when popped, averaged over popped messages, rounded),
--   popLagMaxMs.
CREATE OR REPLACE FUNCTION queen._an_queue_buckets(p_tenant uuid, p_from timestamptz, p_to timestamptz, p_unit text,
                                                   p_secs integer, p_queue text, p_ns text, p_task text,
                                                   p_node text, p_split text)
RETURNS TABLE (t timestamptz, k text, queues bigint, j jsonb) LANGUAGE sql STABLE AS $$
    WITH r AS (
        SELECT queen._an_bucket(s.minute, p_from, p_unit, p_secs) AS t, s.*
        FROM queen._an_queue_rows(p_tenant, p_from, p_to, p_queue, p_ns, p_task, p_node) s),
    grid AS (
        SELECT g AS t FROM queen._an_grid(p_from, p_to, p_unit, p_secs) g WHERE p_split = 'none'
        UNION
        SELECT DISTINCT r.t FROM r)
    SELECT grid.t,
           CASE p_split WHEN 'queue' THEN r.queue WHEN 'node' THEN r.node_id END,
           count(DISTINCT r.queue),
           jsonb_build_object(
               'pushRequests', COALESCE(sum(r.push_requests), 0), 'pushMessages', COALESCE(sum(r.push_messages), 0),
               'popRequests', COALESCE(sum(r.pop_requests), 0), 'popMessages', COALESCE(sum(r.pop_messages), 0),
               'popEmpty', COALESCE(sum(r.pop_empty), 0),
               'ackSuccess', COALESCE(sum(r.ack_success), 0), 'ackFailed', COALESCE(sum(r.ack_failed), 0),
               'acked', COALESCE(sum(r.ack_success + r.ack_failed), 0),
               'transactions', COALESCE(sum(r.transactions), 0), 'conflated', COALESCE(sum(r.conflated), 0),
               'dlq', COALESCE(sum(r.dlq_messages), 0),
               'popLagAvgMs', COALESCE(round(sum(r.pop_lag_ms_sum)::numeric / NULLIF(sum(r.pop_messages), 0)), 0),
               'popLagMaxMs', COALESCE(max(r.pop_lag_ms_max), 0))
    FROM grid
    LEFT JOIN r ON r.t = grid.t
    GROUP BY grid.t, 2
    HAVING p_split = 'none' OR count(r.minute) > 0
$$;

-- ---------------------------------------------------------------------------------------------------------------------
-- GET /api/v1/status/analytics?from&to&interval&queue&namespace&task (tenant-scoped): one point per calendar bucket
-- of the window (zeros included) with the figures of _an_queue_buckets, and their totals over the window.
-- ---------------------------------------------------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.status_analytics(p_tenant uuid, p_from timestamptz, p_to timestamptz,
                                                  p_interval text, p_queue text, p_ns text, p_task text)
RETURNS jsonb LANGUAGE sql STABLE AS $$
    SELECT queen._an_window(p_from, p_to, NULL) || jsonb_build_object(
        'interval', p_interval,
        'filters', jsonb_build_object('queue', NULLIF(p_queue, ''), 'namespace', NULLIF(p_ns, ''),
                                      'task', NULLIF(p_task, '')),
        'series', COALESCE((
            SELECT jsonb_agg(jsonb_build_object('t', queen._log_ts(b.t)) || b.j ORDER BY b.t)
            FROM queen._an_queue_buckets(p_tenant, p_from, p_to, p_interval, NULL, p_queue, p_ns, p_task, NULL,
                                         'none') b), '[]'::jsonb),
        'totals', (
            SELECT b.j || jsonb_build_object('queues', b.queues)
            FROM queen._an_queue_buckets(
                p_tenant, p_from, p_to, NULL,
                LEAST(GREATEST(ceil(extract(epoch FROM p_to - p_from)), 1), 2000000000)::integer,
                p_queue, p_ns, p_task, NULL, 'none') b
            ORDER BY b.t LIMIT 1))
$$;

-- ---------------------------------------------------------------------------------------------------------------------
-- GET /api/v1/analytics/queue-ops (per queue) and /workload (all queues together), tenant-scoped, p_secs buckets.
-- queue-ops lists the p_limit busiest queues of the window (by pushed + popped messages).
-- ---------------------------------------------------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.analytics_queue_ops(p_tenant uuid, p_from timestamptz, p_to timestamptz,
                                                     p_secs integer, p_queue text, p_ns text, p_task text,
                                                     p_limit integer)
RETURNS jsonb LANGUAGE sql STABLE AS $$
    WITH b AS (SELECT * FROM queen._an_queue_buckets(p_tenant, p_from, p_to, NULL, p_secs, p_queue, p_ns, p_task,
                                                     NULL, 'queue')),
    top AS (
        SELECT b.k FROM b GROUP BY b.k
        ORDER BY sum((b.j->>'pushMessages')::bigint + (b.j->>'popMessages')::bigint) DESC, b.k
        LIMIT p_limit)
    SELECT queen._an_window(p_from, p_to, p_secs) || jsonb_build_object(
        'queues', COALESCE((SELECT jsonb_agg(top.k ORDER BY top.k) FROM top), '[]'::jsonb),
        'series', COALESCE((
            SELECT jsonb_agg(jsonb_build_object('t', queen._log_ts(b.t), 'queue', b.k) || b.j ORDER BY b.t, b.k)
            FROM b WHERE b.k IN (SELECT top.k FROM top)), '[]'::jsonb))
$$;

CREATE OR REPLACE FUNCTION queen.analytics_workload(p_tenant uuid, p_from timestamptz, p_to timestamptz,
                                                    p_secs integer, p_queue text, p_ns text, p_task text)
RETURNS jsonb LANGUAGE sql STABLE AS $$
    SELECT queen._an_window(p_from, p_to, p_secs) || jsonb_build_object(
        'series', COALESCE(jsonb_agg(jsonb_build_object(
            't', queen._log_ts(b.t), 'activeQueues', b.queues,
            'pushMessages', b.j->'pushMessages', 'popMessages', b.j->'popMessages', 'acked', b.j->'acked',
            'dlq', b.j->'dlq',
            'backlogDelta', (b.j->>'pushMessages')::bigint - (b.j->>'acked')::bigint) ORDER BY b.t), '[]'::jsonb))
    FROM queen._an_queue_buckets(p_tenant, p_from, p_to, NULL, p_secs, p_queue, p_ns, p_task, NULL, 'none') b
$$;

-- ---------------------------------------------------------------------------------------------------------------------
-- GET /api/v1/analytics/system-metrics and /worker-metrics: per node and bucket, from stats_node_minute (node-wide).
-- system: the sampled gauges (heap and pool at their bucket maximum, cpu averaged). worker: request counts and
-- request latency (avg = sum / requests, max). With a queue, worker-metrics counts that queue's operations per node
-- instead (tenant-scoped, the figures of _an_queue_buckets).
-- ---------------------------------------------------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen._an_node_rows(p_from timestamptz, p_to timestamptz, p_secs integer, p_host text,
                                               p_node text)
RETURNS TABLE (t timestamptz, r queen.stats_node_minute) LANGUAGE sql STABLE AS $$
    SELECT queen._an_bucket(s.minute, p_from, NULL, p_secs), s
    FROM queen.stats_node_minute s
    WHERE s.minute >= p_from AND s.minute < p_to
      AND (NULLIF(p_host, '') IS NULL OR s.hostname = p_host)
      AND (NULLIF(p_node, '') IS NULL OR s.node_id = p_node)
$$;

CREATE OR REPLACE FUNCTION queen.analytics_system_metrics(p_from timestamptz, p_to timestamptz, p_secs integer,
                                                          p_host text, p_node text)
RETURNS jsonb LANGUAGE sql STABLE AS $$
    SELECT queen._an_window(p_from, p_to, p_secs) || jsonb_build_object(
        'series', COALESCE(jsonb_agg(x.j ORDER BY x.t, x.node), '[]'::jsonb))
    FROM (
        SELECT n.t, (n.r).node_id AS node, jsonb_build_object(
            't', queen._log_ts(n.t), 'nodeId', (n.r).node_id, 'hostname', max((n.r).hostname),
            'heapUsedBytes', max((n.r).heap_used_bytes), 'heapMaxBytes', max((n.r).heap_max_bytes),
            'cpuProcessPct', round(avg((n.r).cpu_process_pct)::numeric, 2),
            'dbPoolSize', max((n.r).db_pool_size), 'dbPoolActive', max((n.r).db_pool_active),
            'parkedPops', max((n.r).parked_pops), 'dbErrors', sum((n.r).db_errors)) AS j
        FROM queen._an_node_rows(p_from, p_to, p_secs, p_host, p_node) n
        GROUP BY n.t, (n.r).node_id) x
$$;

CREATE OR REPLACE FUNCTION queen.analytics_worker_metrics(p_tenant uuid, p_from timestamptz, p_to timestamptz,
                                                          p_secs integer, p_host text, p_node text, p_queue text)
RETURNS jsonb LANGUAGE sql STABLE AS $$
    SELECT queen._an_window(p_from, p_to, p_secs) || jsonb_build_object(
        'queue', NULLIF(p_queue, ''),
        'series', COALESCE(CASE WHEN NULLIF(p_queue, '') IS NULL THEN (
            SELECT jsonb_agg(x.j ORDER BY x.t, x.node) FROM (
                SELECT n.t, (n.r).node_id AS node, jsonb_build_object(
                    't', queen._log_ts(n.t), 'nodeId', (n.r).node_id, 'hostname', max((n.r).hostname),
                    'pushRequests', sum((n.r).push_requests), 'pushMessages', sum((n.r).push_messages),
                    'popRequests', sum((n.r).pop_requests), 'popMessages', sum((n.r).pop_messages),
                    'popEmpty', sum((n.r).pop_empty), 'ackRequests', sum((n.r).ack_requests),
                    'ackSuccess', sum((n.r).ack_success), 'ackFailed', sum((n.r).ack_failed),
                    'transactions', sum((n.r).transactions), 'dlq', sum((n.r).dlq_messages),
                    'dbErrors', sum((n.r).db_errors),
                    'pushLatencyAvgMs', COALESCE(round(sum((n.r).push_latency_ms_sum)::numeric
                                                       / NULLIF(sum((n.r).push_requests), 0), 1), 0),
                    'pushLatencyMaxMs', max((n.r).push_latency_ms_max),
                    'popLatencyAvgMs', COALESCE(round(sum((n.r).pop_latency_ms_sum)::numeric
                                                      / NULLIF(sum((n.r).pop_requests - (n.r).pop_empty), 0), 1), 0),
                    'popLatencyMaxMs', max((n.r).pop_latency_ms_max),
                    'ackLatencyAvgMs', COALESCE(round(sum((n.r).ack_latency_ms_sum)::numeric
                                                      / NULLIF(sum((n.r).ack_requests), 0), 1), 0),
                    'ackLatencyMaxMs', max((n.r).ack_latency_ms_max)) AS j
                FROM queen._an_node_rows(p_from, p_to, p_secs, p_host, p_node) n
                GROUP BY n.t, (n.r).node_id) x)
        ELSE (
            SELECT jsonb_agg(jsonb_build_object('t', queen._log_ts(b.t), 'nodeId', b.k) || b.j ORDER BY b.t, b.k)
            FROM queen._an_queue_buckets(p_tenant, p_from, p_to, NULL, p_secs, p_queue, NULL, NULL, p_node,
                                         'node') b)
        END, '[]'::jsonb))
$$;

-- ---------------------------------------------------------------------------------------------------------------------
-- GET /api/v1/analytics/queue-parked-replicas (tenant-scoped): long polls parked per queue. Per minute the nodes'
-- figures are summed (parkedConsumers) and the nodes with any counted (replicas); a bucket shows the maxima of its
-- minutes.
-- ---------------------------------------------------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.analytics_parked_replicas(p_tenant uuid, p_from timestamptz, p_to timestamptz,
                                                           p_secs integer, p_queue text)
RETURNS jsonb LANGUAGE sql STABLE AS $$
    WITH m AS (
        SELECT s.minute, s.queue, sum(COALESCE(s.parked_consumers, 0)) AS parked,
               count(*) FILTER (WHERE s.parked_consumers > 0) AS replicas
        FROM queen._an_queue_rows(p_tenant, p_from, p_to, p_queue, NULL, NULL, NULL) s
        GROUP BY s.minute, s.queue)
    SELECT queen._an_window(p_from, p_to, p_secs) || jsonb_build_object(
        'series', COALESCE(jsonb_agg(x.j ORDER BY x.t, x.queue), '[]'::jsonb))
    FROM (
        SELECT queen._an_bucket(m.minute, p_from, NULL, p_secs) AS t, m.queue,
               jsonb_build_object('t', queen._log_ts(queen._an_bucket(m.minute, p_from, NULL, p_secs)),
                                  'queue', m.queue, 'parkedConsumers', max(m.parked),
                                  'replicas', max(m.replicas)) AS j
        FROM m GROUP BY 1, 2) x
$$;

-- ---------------------------------------------------------------------------------------------------------------------
-- GET /api/v1/analytics/retention (tenant-scoped): messages removed by retention (queen.retention_history), per
-- bucket and kind, plus the p_limit queues that lost the most. History of partitions that no longer exist cannot be
-- tied to a tenant and is left out.
-- ---------------------------------------------------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.analytics_retention(p_tenant uuid, p_from timestamptz, p_to timestamptz,
                                                     p_secs integer, p_queue text, p_limit integer)
RETURNS jsonb LANGUAGE sql STABLE AS $$
    WITH h AS (
        SELECT queen._an_bucket(rh.executed_at, p_from, NULL, p_secs) AS t, x.qname AS queue,
               rh.retention_type, rh.messages_deleted
        FROM queen.retention_history rh
        JOIN queen._an_partitions(p_tenant, p_queue) x ON x.pid = rh.partition_id
        WHERE rh.executed_at >= p_from AND rh.executed_at < p_to)
    SELECT queen._an_window(p_from, p_to, p_secs) || jsonb_build_object(
        'series', COALESCE((
            SELECT jsonb_agg(x.j ORDER BY x.t) FROM (
                SELECT h.t, jsonb_build_object('t', queen._log_ts(h.t),
                    'retention', COALESCE(sum(h.messages_deleted) FILTER (WHERE h.retention_type = 'retention'), 0),
                    'completedRetention', COALESCE(sum(h.messages_deleted)
                                                   FILTER (WHERE h.retention_type = 'completed_retention'), 0),
                    'maxWaitTimeEviction', COALESCE(sum(h.messages_deleted)
                                                    FILTER (WHERE h.retention_type = 'max_wait_time_eviction'), 0),
                    'messagesDeleted', sum(h.messages_deleted), 'runs', count(*)) AS j
                FROM h GROUP BY h.t) x), '[]'::jsonb),
        'totals', (SELECT jsonb_build_object('messagesDeleted', COALESCE(sum(h.messages_deleted), 0), 'runs', count(*))
                   FROM h),
        'byQueue', COALESCE((
            SELECT jsonb_agg(jsonb_build_object('queue', y.queue, 'messagesDeleted', y.n) ORDER BY y.n DESC, y.queue)
            FROM (SELECT h.queue, sum(h.messages_deleted) AS n FROM h GROUP BY h.queue
                  ORDER BY 2 DESC, 1 LIMIT p_limit) y), '[]'::jsonb))
$$;

-- ---------------------------------------------------------------------------------------------------------------------
-- GET /api/v1/analytics/dlq-signatures (tenant-scoped): dead letters of [p_from, p_to) grouped by the signature of
-- their error text (_an_error_signature). The p_limit most frequent signatures, each with its count, first and last
-- failure, the queues it hit and its newest example.
-- ---------------------------------------------------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.analytics_dlq_signatures(p_tenant uuid, p_from timestamptz, p_to timestamptz,
                                                          p_queue text, p_group text, p_limit integer)
RETURNS jsonb LANGUAGE sql STABLE AS $$
    WITH d AS (
        SELECT queen._an_error_signature(dl.error) AS sig, dl.*, x.qname AS queue, x.pname AS partition
        FROM queen.log_dlq dl
        JOIN queen._an_partitions(p_tenant, p_queue) x ON x.pid = dl.partition_id
        WHERE dl.failed_at >= p_from AND dl.failed_at < p_to
          AND (NULLIF(p_group, '') IS NULL OR dl.consumer_group = p_group)),
    s AS (
        SELECT d.sig, count(*) AS n, min(d.failed_at) AS first_seen, max(d.failed_at) AS last_seen,
               jsonb_agg(DISTINCT d.queue) AS queues
        FROM d GROUP BY d.sig
        ORDER BY n DESC, d.sig LIMIT p_limit)
    SELECT queen._an_window(p_from, p_to, NULL) || jsonb_build_object(
        'deadLetters', (SELECT count(*) FROM d),
        'signatures', COALESCE((
            SELECT jsonb_agg(jsonb_build_object(
                'signature', s.sig, 'count', s.n, 'firstSeen', queen._log_ts(s.first_seen),
                'lastSeen', queen._log_ts(s.last_seen), 'queues', s.queues,
                'example', (SELECT jsonb_build_object('dlqId', e.id, 'error', e.error, 'queue', e.queue,
                                                      'partition', e.partition, 'partitionId', e.partition_id,
                                                      'consumerGroup', e.consumer_group,
                                                      'transactionId', e.transaction_id,
                                                      'failedAt', queen._log_ts(e.failed_at))
                            FROM d e WHERE e.sig = s.sig ORDER BY e.failed_at DESC, e.id LIMIT 1))
                ORDER BY s.n DESC, s.sig)
            FROM s), '[]'::jsonb))
$$;

-- ---------------------------------------------------------------------------------------------------------------------
-- GET /api/v1/analytics/queue-lag (tenant-scoped, current): per (queue, group) with a cursor, the frames not yet
-- acknowledged (lagMessages) and the age of the oldest of them (lagSeconds), from _st_group_rows.
-- ---------------------------------------------------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.analytics_queue_lag(p_tenant uuid, p_queue text, p_group text, p_limit integer)
RETURNS jsonb LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object(
        'timestamp', queen._log_ts(now()),
        'lags', COALESCE(jsonb_agg(jsonb_build_object(
            'queue', x.qname, 'group', x.grp, 'lagMessages', x.lag, 'lagSeconds', x.lag_s,
            'partitions', x.parts, 'partitionsLagging', x.lagging, 'members', x.members)
            ORDER BY x.lag_s DESC, x.lag DESC, x.qname, x.grp), '[]'::jsonb))
    FROM (
        SELECT r.qname, r.grp, sum(r.lag) AS lag, max(r.lag_seconds) AS lag_s, count(*) AS parts,
               count(*) FILTER (WHERE r.lag > 0) AS lagging, count(*) FILTER (WHERE r.live) AS members
        FROM queen._st_group_rows(p_tenant, NULLIF(p_group, '')) r
        WHERE NULLIF(p_queue, '') IS NULL OR r.qname = p_queue
        GROUP BY r.qname, r.grp
        ORDER BY 4 DESC, 3 DESC, 1, 2
        LIMIT p_limit) x
$$;

-- ---------------------------------------------------------------------------------------------------------------------
-- GET /api/v1/analytics/partition-liveness (tenant-scoped, current): each partition's last push (last_write_at, moved
-- at most every few seconds) and last pop (the newest lease any group acquired on it), its queue-mode pending count,
-- and idle = neither pushed nor popped for p_idle_s seconds. Least recently active first, p_limit of them.
-- ---------------------------------------------------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.analytics_partition_liveness(p_tenant uuid, p_queue text, p_idle_s integer,
                                                              p_limit integer)
RETURNS jsonb LANGUAGE sql STABLE AS $$
    WITH ps AS (
        SELECT q.qname, s.pid, s.pname, s.pending, s.processing,
               CASE WHEN s.last_offset >= 0 THEN s.last_write END AS last_push,
               (SELECT max(c.lease_acquired_at) FROM queen.log_consumers c WHERE c.partition_id = s.pid) AS last_pop
        FROM queen._st_queues(p_tenant, p_queue, NULL, NULL) q
        CROSS JOIN LATERAL queen._st_parts_of(q.qid) s),
    l AS (
        SELECT ps.*, GREATEST(ps.last_push, ps.last_pop) AS last_active,
               COALESCE(GREATEST(ps.last_push, ps.last_pop), '-infinity') < now() - make_interval(secs => p_idle_s)
                   AS idle
        FROM ps)
    SELECT jsonb_build_object(
        'timestamp', queen._log_ts(now()), 'idleSeconds', p_idle_s,
        'total', (SELECT count(*) FROM l), 'idle', (SELECT count(*) FROM l WHERE l.idle),
        'partitions', COALESCE((
            SELECT jsonb_agg(jsonb_build_object(
                'queue', x.qname, 'partition', x.pname, 'partitionId', x.pid,
                'lastPushAt', queen._log_ts(x.last_push), 'lastPopAt', queen._log_ts(x.last_pop),
                'pending', x.pending, 'processing', x.processing, 'idle', x.idle,
                'idleForSeconds', queen._st_age_s(x.last_active)) ORDER BY x.last_active NULLS FIRST, x.qname, x.pname)
            FROM (SELECT * FROM l ORDER BY l.last_active NULLS FIRST, l.qname, l.pname LIMIT p_limit) x), '[]'::jsonb))
$$;

-- ---------------------------------------------------------------------------------------------------------------------
-- GET /api/v1/analytics/postgres-stats: the database as PostgreSQL's statistics views see it: size, connections by
-- state, cache hit ratio, transactions, and the queen.* tables (total size with indexes and TOAST, live and dead
-- tuples, last autovacuum), largest first.
-- ---------------------------------------------------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.analytics_postgres_stats()
RETURNS jsonb LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object(
        'timestamp', queen._log_ts(now()),
        'version', current_setting('server_version'),
        'database', jsonb_build_object(
            'name', current_database(),
            'sizeBytes', pg_database_size(current_database()),
            'cacheHitRatio', (SELECT round(d.blks_hit::numeric / NULLIF(d.blks_hit + d.blks_read, 0), 4)
                              FROM pg_stat_database d WHERE d.datname = current_database()),
            'blocksHit', (SELECT d.blks_hit FROM pg_stat_database d WHERE d.datname = current_database()),
            'blocksRead', (SELECT d.blks_read FROM pg_stat_database d WHERE d.datname = current_database()),
            'commits', (SELECT d.xact_commit FROM pg_stat_database d WHERE d.datname = current_database()),
            'rollbacks', (SELECT d.xact_rollback FROM pg_stat_database d WHERE d.datname = current_database()),
            'deadlocks', (SELECT d.deadlocks FROM pg_stat_database d WHERE d.datname = current_database())),
        'connections', (
            SELECT jsonb_build_object(
                'total', count(*),
                'active', count(*) FILTER (WHERE a.state = 'active'),
                'idle', count(*) FILTER (WHERE a.state = 'idle'),
                'idleInTransaction', count(*) FILTER (WHERE a.state LIKE 'idle in transaction%'),
                'waiting', count(*) FILTER (WHERE a.wait_event_type = 'Lock'),
                'max', current_setting('max_connections')::integer)
            FROM pg_stat_activity a WHERE a.datname = current_database()),
        'tables', COALESCE((
            SELECT jsonb_agg(jsonb_build_object(
                'table', t.relname, 'totalBytes', pg_total_relation_size(t.relid),
                'tableBytes', pg_relation_size(t.relid), 'liveTuples', t.n_live_tup, 'deadTuples', t.n_dead_tup,
                'seqScans', t.seq_scan, 'idxScans', t.idx_scan,
                'lastAutovacuum', queen._log_ts(t.last_autovacuum),
                'lastAutoanalyze', queen._log_ts(t.last_autoanalyze))
                ORDER BY pg_total_relation_size(t.relid) DESC, t.relname)
            FROM pg_stat_user_tables t WHERE t.schemaname = 'queen'), '[]'::jsonb),
        'totals', (SELECT jsonb_build_object('tables', count(*),
                                             'totalBytes', COALESCE(sum(pg_total_relation_size(t.relid)), 0),
                                             'deadTuples', COALESCE(sum(t.n_dead_tup), 0))
                   FROM pg_stat_user_tables t WHERE t.schemaname = 'queen'))
$$;
