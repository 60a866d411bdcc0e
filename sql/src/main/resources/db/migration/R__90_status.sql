-- =====================================================================================================================
-- Read-only status procedures: resources overview / namespaces / tasks (API.md §5.8), consumer groups (§5.11 GET
-- routes) and status (§5.12 without analytics). Every function is tenant-scoped (first argument), STABLE, and returns
-- the JSON the route passes through verbatim (§1.4: an "error" containing "not found" becomes a 404).
--
-- Cost model: only offset arithmetic over log_partitions / log_consumers, PK probes of log_segments (one row per
-- partition and cursor, for the age of the oldest unconsumed segment), index counts of log_dlq and, for
-- /status/queues, one index probe per partition for the oldest dead letter. No segment is
-- aggregated in full, no blob is read, no history table exists to consult.
--
-- Figures (queue mode, per partition; cur = LEAST(GREATEST(committed, log_start - 1), last_offset)):
--   total      = last_offset - log_start + 1          (the retained range)
--   processing = frames under a LIVE lease (worker_id set, batch_end set, lease_expires_at > now()): batch_end - cur
--   pending    = last_offset - cur - processing
--   failed     = queue-mode log_dlq rows whose offset is still in the retained, consumed range [log_start, cur]
--   completed  = (cur - log_start + 1) - failed       so total = pending + processing + completed + failed
--   deadLetter = every log_dlq row of the partition, all groups (DLQ rows outlive retention, so this is not part of
--                the total arithmetic)
--   lag        = whole seconds since the created_at of the segment holding the oldest unconsumed offset (cur + 1);
--                0 when nothing is unconsumed. Delayed processing / window buffers are not subtracted.
-- Timestamps are ISO-8601 UTC with microseconds and 'Z' (queen._log_ts).
-- A repeatable migration: the rules for editing it are at the top of R__10_common.sql.
-- =====================================================================================================================

-- created_at of the segment holding offset p_next, or of the first segment after it (retention may have removed the
-- covering one). Two PK probes; the covering probe filters end_offset OUTSIDE the LIMIT so it never walks older rows.
CREATE OR REPLACE FUNCTION queen._st_unconsumed_at(p_pid uuid, p_next bigint)
RETURNS timestamptz
LANGUAGE sql STABLE
AS $$
    SELECT COALESCE(
        (SELECT s.created_at
         FROM (SELECT sg.created_at, sg.end_offset FROM queen.log_segments sg
               WHERE sg.partition_id = p_pid AND sg.base_offset <= p_next
               ORDER BY sg.base_offset DESC LIMIT 1) s
         WHERE s.end_offset >= p_next),
        (SELECT sg.created_at FROM queen.log_segments sg
         WHERE sg.partition_id = p_pid AND sg.base_offset > p_next
         ORDER BY sg.base_offset LIMIT 1))
$$;

-- Whole seconds since p_ts (0 for NULL or the future).
CREATE OR REPLACE FUNCTION queen._st_age_s(p_ts timestamptz)
RETURNS bigint
LANGUAGE sql STABLE
AS $$ SELECT COALESCE(GREATEST(floor(extract(epoch FROM now() - p_ts)), 0), 0)::bigint $$;

-- The tenant's queues with their effective namespace / task (the columns, else the dot-split of the name), filtered by
-- exact queue name, namespace and task (NULL or '' = no filter).
CREATE OR REPLACE FUNCTION queen._st_queues(p_tenant uuid, p_queue text, p_ns text, p_task text)
RETURNS TABLE (qid uuid, qname text, ns text, task text, qcreated timestamptz)
LANGUAGE sql STABLE
AS $$
    SELECT q.id, q.name::text, x.ns, x.task, q.created_at
    FROM queen.queues q
    CROSS JOIN LATERAL (
        SELECT COALESCE(NULLIF(q.namespace, ''), queen._log_name_ns(q.name)) AS ns,
               COALESCE(NULLIF(q.task, ''), queen._log_name_task(q.name)) AS task
    ) x
    WHERE q.tenant_id = COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001')
      AND (NULLIF(p_queue, '') IS NULL OR q.name = p_queue)
      AND (NULLIF(p_ns, '') IS NULL OR x.ns = p_ns)
      AND (NULLIF(p_task, '') IS NULL OR x.task = p_task)
$$;

-- Per-partition figures of one queue (see the header). leases = live leases of every group on the partition.
CREATE OR REPLACE FUNCTION queen._st_parts_of(p_qid uuid)
RETURNS TABLE (pid uuid, pname text, pcreated timestamptz, last_write timestamptz, last_offset bigint,
               log_start bigint, committed bigint, total bigint, pending bigint, processing bigint, completed bigint,
               failed bigint, dead_letter bigint, leases bigint, lag_seconds bigint)
LANGUAGE sql STABLE
AS $$
    SELECT p.id, p.name, p.created_at, p.last_write_at, p.last_offset, p.log_start, COALESCE(c.committed, -1),
           GREATEST(p.last_offset - p.log_start + 1, 0),
           GREATEST(p.last_offset - k.cur - k.proc, 0),
           k.proc,
           GREATEST(k.cur - p.log_start + 1 - d.failed, 0),
           d.failed,
           d.all_rows,
           l.n,
           CASE WHEN k.cur < p.last_offset THEN queen._st_age_s(queen._st_unconsumed_at(p.id, k.cur + 1)) ELSE 0 END
    FROM queen.log_partitions p
    LEFT JOIN queen.log_consumers c ON c.partition_id = p.id AND c.consumer_group = '__QUEUE_MODE__'
    CROSS JOIN LATERAL queen._log_queue_position(p.log_start, p.last_offset, c.committed, c.worker_id,
                                                 c.lease_expires_at, c.batch_end) k
    CROSS JOIN LATERAL (
        SELECT count(*) AS all_rows,
               count(*) FILTER (WHERE dl.consumer_group = '__QUEUE_MODE__'
                                  AND dl."offset" BETWEEN p.log_start AND k.cur) AS failed
        FROM queen.log_dlq dl WHERE dl.partition_id = p.id
    ) d
    CROSS JOIN LATERAL (
        SELECT count(*) AS n FROM queen.log_consumers lc
        WHERE lc.partition_id = p.id AND lc.worker_id IS NOT NULL AND lc.batch_end IS NOT NULL
          AND lc.lease_expires_at > now()
    ) l
    WHERE p.queue_id = p_qid
$$;

-- One row of totals for a queue (aggregates without GROUP BY: always exactly one row, zeros for no partitions).
-- lag_avg averages only the partitions that have unconsumed messages.
CREATE OR REPLACE FUNCTION queen._st_queue_agg(p_qid uuid)
RETURNS TABLE (parts bigint, total bigint, pending bigint, processing bigint, completed bigint, failed bigint,
               dead_letter bigint, leases bigint, lag_max bigint, lag_avg numeric, lag_parts bigint)
LANGUAGE sql STABLE
AS $$
    SELECT count(*),
           COALESCE(sum(s.total), 0)::bigint, COALESCE(sum(s.pending), 0)::bigint,
           COALESCE(sum(s.processing), 0)::bigint, COALESCE(sum(s.completed), 0)::bigint,
           COALESCE(sum(s.failed), 0)::bigint, COALESCE(sum(s.dead_letter), 0)::bigint,
           COALESCE(sum(s.leases), 0)::bigint,
           COALESCE(max(s.lag_seconds), 0)::bigint,
           COALESCE(avg(s.lag_seconds) FILTER (WHERE s.lag_seconds > 0), 0),
           count(*) FILTER (WHERE s.lag_seconds > 0)
    FROM queen._st_parts_of(p_qid) s
$$;

-- failed_at of the oldest dead letter of a queue (any group), NULL when it has none: one backward probe of
-- idx_log_dlq_partition_failed_at (partition_id, failed_at DESC) per partition, never a scan of the queue's DLQ rows.
CREATE OR REPLACE FUNCTION queen._st_dlq_oldest(p_qid uuid)
RETURNS timestamptz
LANGUAGE sql STABLE
AS $$
    SELECT min(o.failed_at)
    FROM queen.log_partitions p
    CROSS JOIN LATERAL (
        SELECT dl.failed_at FROM queen.log_dlq dl
        WHERE dl.partition_id = p.id
        ORDER BY dl.failed_at LIMIT 1
    ) o
    WHERE p.queue_id = p_qid
$$;

-- ---------------------------------------------------------------------------------------------------------------------
-- GET /api/v1/resources/namespaces and /tasks: one entry per effective namespace (task), ordered by name. Queues
-- whose effective task is '' (undotted name, no task column) belong to no task and are left out of /tasks.
-- ---------------------------------------------------------------------------------------------------------------------
-- The entries of /namespaces (p_key 'namespace') or /tasks (p_key 'task'), ordered by name.
CREATE OR REPLACE FUNCTION queen._st_grouped(p_tenant uuid, p_key text)
RETURNS jsonb
LANGUAGE sql STABLE
AS $$
    SELECT COALESCE(jsonb_agg(jsonb_build_object(
               p_key, g.k, 'queues', g.queues, 'partitions', g.parts,
               'messages', jsonb_build_object('total', g.total, 'pending', g.pending)) ORDER BY g.k), '[]'::jsonb)
    FROM (
        SELECT CASE WHEN p_key = 'task' THEN q.task ELSE q.ns END AS k, count(*) AS queues, sum(a.parts) AS parts,
               sum(a.total) AS total, sum(a.pending) AS pending
        FROM queen._st_queues(p_tenant, NULL, NULL, NULL) q
        CROSS JOIN LATERAL queen._st_queue_agg(q.qid) a
        WHERE p_key <> 'task' OR q.task <> ''
        GROUP BY 1
    ) g
$$;

CREATE OR REPLACE FUNCTION queen.resources_namespaces(p_tenant uuid)
RETURNS jsonb
LANGUAGE sql STABLE
AS $$ SELECT jsonb_build_object('namespaces', queen._st_grouped(p_tenant, 'namespace')) $$;

CREATE OR REPLACE FUNCTION queen.resources_tasks(p_tenant uuid)
RETURNS jsonb
LANGUAGE sql STABLE
AS $$ SELECT jsonb_build_object('tasks', queen._st_grouped(p_tenant, 'task')) $$;

-- ---------------------------------------------------------------------------------------------------------------------
-- Consumer groups (GET routes of API.md §5.11)
-- ---------------------------------------------------------------------------------------------------------------------
-- A group is known on a partition when it has a log_consumers row there (queue mode '__QUEUE_MODE__' included).
-- Partitions a group has never touched (no cursor row yet) are not counted: where such a group would start depends on
-- its subscription mode, so no lag is invented for them.
-- Per (partition, group): cur = LEAST(GREATEST(committed, log_start - 1), last_offset); lag = last_offset - cur
-- (frames not yet acked, leased ones included); timeLag = seconds since the oldest unconsumed segment.
-- Per group: members = live leases; totalLag = sum(lag); maxTimeLag = max(timeLag).
-- State (chosen here; the reference SP was not read):
--   'Dead'    maxTimeLag > 3600 s, no live lease, and no lease acquired in the last hour (or never): nobody has
--             consumed for an hour while messages older than an hour wait;
--   'Lagging' otherwise, maxTimeLag > 60 s;
--   'Stable'  otherwise (caught up, or the oldest unconsumed message is at most a minute old).
-- One row per cursor of the group p_group (NULL: of every group) in the tenant. The cursors come from one of two
-- UNION ALL branches, the other cut at run time: every cursor of the tenant's queues for p_group NULL, else the
-- group's own through log_consumers_group (V20), also when p_group is a column of an outer query (the listing's
-- LATERAL), where "p_group IS NULL OR c.consumer_group = p_group" would be no index bound.
CREATE OR REPLACE FUNCTION queen._st_group_rows(p_tenant uuid, p_group text)
RETURNS TABLE (grp text, qname text, pname text, pid uuid, committed bigint, last_offset bigint, lag bigint,
               live boolean, lease_expires timestamptz, lease_acquired timestamptz, lag_seconds bigint)
LANGUAGE sql STABLE
AS $$
    SELECT c.consumer_group, q.name::text, p.name, p.id, c.committed, p.last_offset, p.last_offset - k.cur,
           k.live, CASE WHEN k.live THEN c.lease_expires_at END, c.lease_acquired_at,
           CASE WHEN k.cur < p.last_offset THEN queen._st_age_s(queen._st_unconsumed_at(p.id, k.cur + 1)) ELSE 0 END
    FROM queen.queues q
    JOIN queen.log_partitions p ON p.queue_id = q.id
    JOIN (SELECT c0.* FROM queen.log_consumers c0 WHERE p_group IS NULL
          UNION ALL
          SELECT c1.* FROM queen.log_consumers c1 WHERE c1.consumer_group = p_group) c ON c.partition_id = p.id
    CROSS JOIN LATERAL (
        SELECT LEAST(GREATEST(c.committed, p.log_start - 1), p.last_offset) AS cur,
               (c.worker_id IS NOT NULL AND c.batch_end IS NOT NULL AND c.lease_expires_at > now()) AS live
    ) k
    WHERE q.tenant_id = COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001')
$$;

CREATE OR REPLACE FUNCTION queen._st_groups(p_tenant uuid, p_group text)
RETURNS TABLE (name text, max_time_lag bigint, entry jsonb)
LANGUAGE sql STABLE
AS $$
    WITH r AS (SELECT * FROM queen._st_group_rows(p_tenant, p_group)),
    perq AS (
        SELECT r.grp, r.qname, jsonb_build_object('partitions', jsonb_agg(jsonb_build_object(
                   'partition', r.pname, 'partitionId', r.pid, 'committed', r.committed,
                   'lastOffset', r.last_offset, 'lag', r.lag, 'timeLag', r.lag_seconds,
                   'leaseExpiresAt', queen._log_ts(r.lease_expires)) ORDER BY r.pname)) AS j
        FROM r GROUP BY r.grp, r.qname),
    g AS (
        SELECT r.grp, count(*) FILTER (WHERE r.live) AS members, sum(r.lag) AS total_lag,
               max(r.lag_seconds) AS max_lag, max(r.lease_acquired) AS last_lease
        FROM r GROUP BY r.grp)
    SELECT g.grp, g.max_lag, jsonb_build_object(
        'name', g.grp,
        'topics', (SELECT jsonb_agg(perq.qname ORDER BY perq.qname) FROM perq WHERE perq.grp = g.grp),
        'members', g.members,
        'totalLag', g.total_lag,
        'maxTimeLag', g.max_lag,
        'state', CASE WHEN g.max_lag > 3600 AND g.members = 0
                           AND (g.last_lease IS NULL OR g.last_lease < now() - interval '1 hour') THEN 'Dead'
                      WHEN g.max_lag > 60 THEN 'Lagging'
                      ELSE 'Stable' END,
        'queues', (SELECT jsonb_object_agg(perq.qname, perq.j) FROM perq WHERE perq.grp = g.grp))
    FROM g
$$;

-- GET /api/v1/consumer-groups?limit=&cursor=: one page of the tenant's groups in name order, the first p_limit after
-- p_after (exclusive; NULL: from the first). body is the page as a JSON array; next_after is the page's last name when
-- more groups follow, else NULL. The names come from the tenant's group registrations (consumer_groups_metadata: every
-- group with a cursor has one on the cursor's queue, written by its first pop or seek), walked on cgm_identity_uk one
-- probe per name (the next name above the last: a loose index scan), keeping those with a cursor on a registered
-- queue, and stopping one past the page: the cost is the page's groups, not the number of groups or of tenants.
DROP FUNCTION IF EXISTS queen.consumer_groups(uuid);
CREATE OR REPLACE FUNCTION queen.consumer_groups(p_tenant uuid, p_after text, p_limit integer)
RETURNS TABLE (body text, next_after text)
LANGUAGE sql STABLE
AS $$
    WITH RECURSIVE walk(name) AS (
        SELECT (SELECT m.consumer_group FROM queen.consumer_groups_metadata m
                WHERE m.tenant_id = COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001')
                  AND m.consumer_group > COALESCE(p_after, '')
                ORDER BY m.consumer_group LIMIT 1)
        UNION ALL
        SELECT (SELECT m.consumer_group FROM queen.consumer_groups_metadata m
                WHERE m.tenant_id = COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001')
                  AND m.consumer_group > w.name
                ORDER BY m.consumer_group LIMIT 1)
        FROM walk w
        WHERE w.name IS NOT NULL
    ), found AS (
        SELECT w.name
        FROM walk w
        WHERE w.name IS NOT NULL AND EXISTS (
            SELECT 1
            FROM queen.consumer_groups_metadata m
            JOIN queen.log_partitions p ON p.queue_id = m.queue_id
            JOIN queen.log_consumers c ON c.partition_id = p.id AND c.consumer_group = m.consumer_group
            WHERE m.tenant_id = COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001')
              AND m.consumer_group = w.name)
        LIMIT GREATEST(p_limit, 1) + 1
    ), page AS (
        SELECT f.name FROM found f ORDER BY f.name LIMIT GREATEST(p_limit, 1)
    )
    SELECT (SELECT COALESCE(jsonb_agg(g.entry ORDER BY g.name), '[]'::jsonb)
            FROM page CROSS JOIN LATERAL queen._st_groups(p_tenant, page.name) g)::text,
           CASE WHEN (SELECT count(*) FROM found) > GREATEST(p_limit, 1) THEN (SELECT max(page.name) FROM page) END
$$;

-- GET /api/v1/consumer-groups/lagging?minLagSeconds= (default 3600): the groups with maxTimeLag >= the threshold. The
-- lag of every cursor is read once, without JSON; only the lagging groups' entries are built.
CREATE OR REPLACE FUNCTION queen.consumer_groups_lagging(p_tenant uuid, p_min_lag_seconds bigint)
RETURNS jsonb
LANGUAGE sql STABLE
AS $$
    SELECT COALESCE(jsonb_agg(g.entry ORDER BY g.name), '[]'::jsonb)
    FROM (SELECT r.grp FROM queen._st_group_rows(p_tenant, NULL) r
          GROUP BY r.grp
          HAVING max(r.lag_seconds) >= COALESCE(p_min_lag_seconds, 3600)) l
    CROSS JOIN LATERAL queen._st_groups(p_tenant, l.grp) g
$$;

-- GET /api/v1/consumer-groups/:group: the entry, or {"error":"Consumer group not found"} (404 by §1.4).
CREATE OR REPLACE FUNCTION queen.consumer_group(p_tenant uuid, p_group text)
RETURNS jsonb
LANGUAGE sql STABLE
AS $$
    SELECT COALESCE((SELECT g.entry FROM queen._st_groups(p_tenant, p_group) g),
                    jsonb_build_object('error', 'Consumer group not found'))
$$;

-- ---------------------------------------------------------------------------------------------------------------------
-- Status (API.md §5.12). from / to are accepted by the route and ignored: there is no history to window.
-- ---------------------------------------------------------------------------------------------------------------------

-- GET /api/v1/status
CREATE OR REPLACE FUNCTION queen.status(p_tenant uuid, p_queue text, p_ns text, p_task text)
RETURNS jsonb
LANGUAGE sql STABLE
AS $$
    SELECT jsonb_build_object(
        'queues', count(*),
        'partitions', COALESCE(sum(a.parts), 0),
        'messages', jsonb_build_object(
            'total', COALESCE(sum(a.total), 0), 'pending', COALESCE(sum(a.pending), 0),
            'processing', COALESCE(sum(a.processing), 0), 'completed', COALESCE(sum(a.completed), 0),
            'failed', COALESCE(sum(a.failed), 0), 'deadLetter', COALESCE(sum(a.dead_letter), 0)),
        'leases', jsonb_build_object('active', COALESCE(sum(a.leases), 0)),
        'dlq', jsonb_build_object('total', COALESCE(sum(a.dead_letter), 0)),
        'lag', jsonb_build_object(
            'maxSeconds', COALESCE(max(a.lag_max), 0),
            'avgSeconds', COALESCE(round(sum(a.lag_avg * a.lag_parts) / NULLIF(sum(a.lag_parts), 0), 3), 0)),
        'timestamp', queen._log_ts(now()))
    FROM queen._st_queues(p_tenant, p_queue, p_ns, p_task) q
    CROSS JOIN LATERAL queen._st_queue_agg(q.qid) a
$$;

-- GET /api/v1/status/queues?limit=100&offset=0: ordered by queue name; limit clamped to [0, 10000], offset >= 0.
-- dlqOldestAt: the failed_at of the queue's oldest dead letter (null when none), for the queues of the page only.
CREATE OR REPLACE FUNCTION queen.status_queues(p_tenant uuid, p_queue text, p_ns text, p_task text,
                                       p_limit integer, p_offset integer)
RETURNS jsonb
LANGUAGE sql STABLE
AS $$
    WITH lim AS (SELECT LEAST(GREATEST(COALESCE(p_limit, 100), 0), 10000) AS l, GREATEST(COALESCE(p_offset, 0), 0) AS o),
    page AS (
        SELECT q.* FROM queen._st_queues(p_tenant, p_queue, p_ns, p_task) q, lim
        ORDER BY q.qname LIMIT (SELECT l FROM lim) OFFSET (SELECT o FROM lim))
    SELECT jsonb_build_object(
        'queues', COALESCE((
            SELECT jsonb_agg(jsonb_build_object(
                       'name', page.qname, 'namespace', page.ns, 'task', page.task, 'partitions', a.parts,
                       'messages', jsonb_build_object('total', a.total, 'pending', a.pending,
                                                      'processing', a.processing, 'completed', a.completed,
                                                      'failed', a.failed, 'deadLetter', a.dead_letter),
                       'leases', jsonb_build_object('active', a.leases),
                       'lag', jsonb_build_object('maxSeconds', a.lag_max, 'avgSeconds', round(a.lag_avg, 3)),
                       'dlqOldestAt', queen._log_ts(queen._st_dlq_oldest(page.qid)))
                   ORDER BY page.qname)
            FROM page CROSS JOIN LATERAL queen._st_queue_agg(page.qid) a), '[]'::jsonb),
        'pagination', jsonb_build_object('limit', lim.l, 'offset', lim.o))
    FROM lim
$$;

-- GET /api/v1/status/queues/:queue, or {"error":"Queue not found"} (404 by §1.4).
CREATE OR REPLACE FUNCTION queen.status_queue(p_tenant uuid, p_queue text)
RETURNS jsonb
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_parts jsonb;
    v_a     record;
    v_q     queen.queues := queen._log_queue(p_tenant, p_queue);
    v_ns    text := COALESCE(NULLIF(v_q.namespace, ''), queen._log_name_ns(v_q.name));
    v_task  text := COALESCE(NULLIF(v_q.task, ''), queen._log_name_task(v_q.name));
BEGIN
    IF v_q.id IS NULL THEN
        RETURN jsonb_build_object('error', 'Queue not found');
    END IF;

    SELECT COALESCE(jsonb_agg(queen._log_partition_ref(s.pid, s.pname, s.pcreated) || jsonb_build_object(
               'lastWriteAt', queen._log_ts(s.last_write),
               'lastOffset', s.last_offset,
               'logStart', s.log_start,
               'committed', s.committed,
               'messages', jsonb_build_object('total', s.total, 'pending', s.pending, 'processing', s.processing,
                                              'completed', s.completed, 'failed', s.failed,
                                              'deadLetter', s.dead_letter),
               'leases', jsonb_build_object('active', s.leases),
               'lag', jsonb_build_object('seconds', s.lag_seconds)) ORDER BY s.pname), '[]'::jsonb)
    INTO v_parts
    FROM queen._st_parts_of(v_q.id) s;

    SELECT * INTO v_a FROM queen._st_queue_agg(v_q.id);

    RETURN jsonb_build_object(
        'queue', jsonb_build_object('id', v_q.id, 'name', v_q.name, 'namespace', v_ns, 'task', v_task,
                                    'createdAt', queen._log_ts(v_q.created_at)),
        'config', jsonb_build_object('leaseTime', v_q.lease_time, 'retryLimit', v_q.retry_limit, 'ttl', v_q.ttl,
                                     'priority', v_q.priority, 'delayedProcessing', v_q.delayed_processing,
                                     'windowBuffer', v_q.window_buffer),
        'partitions', v_parts,
        'totals', jsonb_build_object('partitions', v_a.parts, 'total', v_a.total, 'pending', v_a.pending,
                                     'processing', v_a.processing, 'completed', v_a.completed,
                                     'failed', v_a.failed, 'deadLetter', v_a.dead_letter,
                                     'leases', jsonb_build_object('active', v_a.leases),
                                     'lag', jsonb_build_object('maxSeconds', v_a.lag_max,
                                                               'avgSeconds', round(v_a.lag_avg, 3))));
END;
$$;

-- The overview's ingest rate looks at partitions written in the last 72 s: last_write_at moves at most every 10 s.
CREATE OR REPLACE FUNCTION queen.resources_overview(p_tenant uuid)
RETURNS jsonb
LANGUAGE sql STABLE
AS $$
    WITH qs AS (SELECT * FROM queen._st_queues(p_tenant, NULL, NULL, NULL)),
    ps AS (SELECT q.qid, s.* FROM qs q CROSS JOIN LATERAL queen._st_parts_of(q.qid) s),
    tot AS (
        SELECT count(*) AS parts,
               COALESCE(sum(ps.total), 0) AS total, COALESCE(sum(ps.pending), 0) AS pending,
               COALESCE(sum(ps.processing), 0) AS processing, COALESCE(sum(ps.completed), 0) AS completed,
               COALESCE(sum(ps.failed), 0) AS failed, COALESCE(sum(ps.dead_letter), 0) AS dead_letter,
               COALESCE(max(ps.lag_seconds), 0) AS lag_max,
               COALESCE(round(avg(ps.lag_seconds) FILTER (WHERE ps.lag_seconds > 0), 3), 0) AS lag_avg
        FROM ps),
    ing AS (
        SELECT COALESCE(sum(r.n), 0) AS n
        FROM ps
        CROSS JOIN LATERAL (
            SELECT sum(x.end_offset - x.base_offset + 1) AS n
            FROM (SELECT sg.base_offset, sg.end_offset, sg.created_at FROM queen.log_segments sg
                  WHERE sg.partition_id = ps.pid ORDER BY sg.base_offset DESC LIMIT 5000) x
            WHERE x.created_at >= now() - interval '60 seconds'
        ) r
        WHERE ps.last_write >= now() - interval '72 seconds')
    SELECT jsonb_build_object(
        'queues', (SELECT count(*) FROM qs),
        'partitions', tot.parts,
        'namespaces', (SELECT count(DISTINCT qs.ns) FROM qs WHERE qs.ns <> ''),
        'tasks', (SELECT count(DISTINCT qs.task) FROM qs WHERE qs.task <> ''),
        'messages', jsonb_build_object('total', tot.total, 'pending', tot.pending, 'processing', tot.processing,
                                       'completed', tot.completed, 'failed', tot.failed,
                                       'deadLetter', tot.dead_letter),
        'lag', jsonb_build_object('maxSeconds', tot.lag_max, 'avgSeconds', tot.lag_avg),
        'throughput', jsonb_build_object('ingestedPerSecond', round(ing.n / 60.0, 3), 'processedPerSecond', 0),
        'timestamp', queen._log_ts(now()),
        'statsAge', 0)
    FROM tot, ing
$$;
