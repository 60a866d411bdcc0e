-- =====================================================================================================================
-- Operation statistics (issue 20): the background flush of a node's per-minute counters into stats_node_minute /
-- stats_queue_minute (V16) and stats_node_totals (V18), their purge, and the reads behind /metrics/prometheus
-- (API.md §5.1). The flush is never on a request path: each node calls it from its stats flusher.
-- A repeatable migration: the rules for editing it are at the top of R__10_common.sql.
-- =====================================================================================================================

-- The node counters that have running totals (V18's stats_node_totals.counts keys).
CREATE OR REPLACE FUNCTION queen._stats_counters()
RETURNS text[]
LANGUAGE sql IMMUTABLE
AS $$
  SELECT ARRAY['push_requests', 'push_messages', 'pop_requests', 'pop_messages', 'pop_empty', 'ack_requests',
               'ack_success', 'ack_failed', 'transactions', 'dlq_messages', 'db_errors']
$$;

-- Key-wise sum of two objects of counts.
CREATE OR REPLACE FUNCTION queen._stats_add(p_a jsonb, p_b jsonb)
RETURNS jsonb
LANGUAGE sql IMMUTABLE
AS $$
  SELECT COALESCE(jsonb_object_agg(k, COALESCE((p_a->>k)::bigint, 0) + COALESCE((p_b->>k)::bigint, 0)), '{}'::jsonb)
    FROM (SELECT jsonb_object_keys(COALESCE(p_a, '{}'::jsonb) || COALESCE(p_b, '{}'::jsonb)) AS k) keys
$$;

-- Upserts p_rows (objects with every column of p_table) into p_table: on a key conflict the p_sum columns add with
-- `+`, the p_max columns keep the GREATEST, the p_last columns take the new value unless it is null. Rows are written in
-- key order. Returns the number of rows written.
CREATE OR REPLACE FUNCTION queen._stats_add_rows(p_table regclass, p_key text[], p_rows jsonb, p_sum text[],
                                                 p_max text[], p_last text[])
RETURNS integer
LANGUAGE plpgsql
AS $$
DECLARE
  v_n integer;
BEGIN
  EXECUTE format('INSERT INTO %s AS t SELECT * FROM jsonb_populate_recordset(NULL::%s, $1) ORDER BY %s'
                 ' ON CONFLICT (%s) DO UPDATE SET %s',
    p_table, p_table,
    (SELECT string_agg(quote_ident(k), ', ') FROM unnest(p_key) k),
    (SELECT string_agg(quote_ident(k), ', ') FROM unnest(p_key) k),
    (SELECT string_agg(x, ', ') FROM (
       SELECT format('%1$I = t.%1$I + EXCLUDED.%1$I', c) FROM unnest(p_sum) c
       UNION ALL SELECT format('%1$I = GREATEST(t.%1$I, EXCLUDED.%1$I)', c) FROM unnest(p_max) c
       UNION ALL SELECT format('%1$I = COALESCE(EXCLUDED.%1$I, t.%1$I)', c) FROM unnest(p_last) c) sets(x)))
  USING p_rows;
  GET DIAGNOSTICS v_n = ROW_COUNT;
  RETURN v_n;
END
$$;

-- One flush of one node. p_nodes: [{m, <node counters>, <gauges>}], p_queues: [{m, tenant, queue | pid, <counters>}],
-- m being the minute as whole minutes since the epoch (UTC). A queue row names its queue either by (tenant, queue) or
-- by a partition id (acks and dead letters only know the partition): those are resolved here, and dropped when the
-- partition no longer exists. Rows of one key are summed first, so a flush may carry a retried snapshot beside a
-- new one. Counters are added with `+` (a retry after a failed commit adds again, it never overwrites), maxima with
-- GREATEST, gauges replaced by the newest non-null value. The same node deltas are added to the node's running totals
-- (V18) in the same transaction. Returns {"nodeRows":n,"queueRows":m}.
CREATE OR REPLACE FUNCTION queen.stats_flush(p_node text, p_host text, p_nodes jsonb, p_queues jsonb)
RETURNS jsonb
LANGUAGE plpgsql
AS $$
DECLARE
  v_nodes integer := 0;
  v_queues integer := 0;
BEGIN
  WITH x AS (
    SELECT * FROM jsonb_to_recordset(COALESCE(p_nodes, '[]'::jsonb)) AS r(
      m bigint, push_requests bigint, push_messages bigint, pop_requests bigint, pop_messages bigint,
      pop_empty bigint, ack_requests bigint, ack_success bigint, ack_failed bigint, transactions bigint,
      dlq_messages bigint, db_errors bigint, push_latency_ms_sum bigint, push_latency_ms_max integer,
      pop_latency_ms_sum bigint, pop_latency_ms_max integer, ack_latency_ms_sum bigint, ack_latency_ms_max integer,
      heap_used_bytes bigint, heap_max_bytes bigint, cpu_process_pct real, db_pool_size integer,
      db_pool_active integer, parked_pops integer)
  ), g AS (
    SELECT to_timestamp(m * 60) AS minute,
           COALESCE(sum(push_requests), 0) AS push_requests, COALESCE(sum(push_messages), 0) AS push_messages,
           COALESCE(sum(pop_requests), 0) AS pop_requests, COALESCE(sum(pop_messages), 0) AS pop_messages,
           COALESCE(sum(pop_empty), 0) AS pop_empty, COALESCE(sum(ack_requests), 0) AS ack_requests,
           COALESCE(sum(ack_success), 0) AS ack_success, COALESCE(sum(ack_failed), 0) AS ack_failed,
           COALESCE(sum(transactions), 0) AS transactions, COALESCE(sum(dlq_messages), 0) AS dlq_messages,
           COALESCE(sum(db_errors), 0) AS db_errors,
           COALESCE(sum(push_latency_ms_sum), 0) AS push_latency_ms_sum, COALESCE(max(push_latency_ms_max), 0) AS push_latency_ms_max,
           COALESCE(sum(pop_latency_ms_sum), 0) AS pop_latency_ms_sum, COALESCE(max(pop_latency_ms_max), 0) AS pop_latency_ms_max,
           COALESCE(sum(ack_latency_ms_sum), 0) AS ack_latency_ms_sum, COALESCE(max(ack_latency_ms_max), 0) AS ack_latency_ms_max,
           max(heap_used_bytes) AS heap_used_bytes, max(heap_max_bytes) AS heap_max_bytes,
           max(cpu_process_pct) AS cpu_process_pct, max(db_pool_size) AS db_pool_size,
           max(db_pool_active) AS db_pool_active, max(parked_pops) AS parked_pops
      FROM x GROUP BY m
  ), up AS (
    SELECT queen._stats_add_rows('queen.stats_node_minute', ARRAY['minute', 'node_id'],
             jsonb_agg(to_jsonb(g) || jsonb_build_object('node_id', p_node, 'hostname', COALESCE(p_host, ''))),
             queen._stats_counters() || ARRAY['push_latency_ms_sum', 'pop_latency_ms_sum', 'ack_latency_ms_sum'],
             ARRAY['push_latency_ms_max', 'pop_latency_ms_max', 'ack_latency_ms_max'],
             ARRAY['hostname', 'heap_used_bytes', 'heap_max_bytes', 'cpu_process_pct', 'db_pool_size',
                   'db_pool_active', 'parked_pops']) AS n
      FROM g HAVING count(*) > 0
  ), tot AS (
    -- the running totals: the same deltas, counter by counter, added into the node's one row
    INSERT INTO queen.stats_node_totals AS t (node_id, counts)
    SELECT p_node, jsonb_object_agg(d.key, d.total)
      FROM (SELECT kv.key, sum(kv.value::bigint) AS total
              FROM g CROSS JOIN LATERAL jsonb_each_text(to_jsonb(g)) kv
             WHERE kv.key = ANY (queen._stats_counters())
             GROUP BY kv.key) d
    HAVING count(*) > 0
    ON CONFLICT (node_id) DO UPDATE SET counts = queen._stats_add(t.counts, EXCLUDED.counts), updated_at = now()
    RETURNING 1
  )
  SELECT COALESCE((SELECT n FROM up), 0) INTO v_nodes;

  WITH x AS (
    SELECT * FROM jsonb_to_recordset(COALESCE(p_queues, '[]'::jsonb)) AS r(
      m bigint, tenant uuid, queue text, pid uuid, push_requests bigint, push_messages bigint, pop_requests bigint,
      pop_messages bigint, pop_empty bigint, ack_success bigint, ack_failed bigint, transactions bigint,
      conflated bigint, dlq_messages bigint, pop_lag_ms_sum bigint, pop_lag_ms_max bigint, parked_consumers integer)
  ), resolved AS (
    SELECT x.*, COALESCE(x.tenant, q.tenant_id) AS r_tenant, COALESCE(x.queue, q.name::text) AS r_queue
      FROM x
      LEFT JOIN queen.log_partitions p ON x.pid IS NOT NULL AND p.id = x.pid
      LEFT JOIN queen.queues q ON q.id = p.queue_id
  ), g AS (
    SELECT to_timestamp(m * 60) AS minute, r_tenant, r_queue,
           COALESCE(sum(push_requests), 0) AS push_requests, COALESCE(sum(push_messages), 0) AS push_messages,
           COALESCE(sum(pop_requests), 0) AS pop_requests, COALESCE(sum(pop_messages), 0) AS pop_messages,
           COALESCE(sum(pop_empty), 0) AS pop_empty, COALESCE(sum(ack_success), 0) AS ack_success,
           COALESCE(sum(ack_failed), 0) AS ack_failed, COALESCE(sum(transactions), 0) AS transactions,
           COALESCE(sum(conflated), 0) AS conflated, COALESCE(sum(dlq_messages), 0) AS dlq_messages,
           COALESCE(sum(pop_lag_ms_sum), 0) AS pop_lag_ms_sum, COALESCE(max(pop_lag_ms_max), 0) AS pop_lag_ms_max,
           max(parked_consumers) AS parked_consumers
      FROM resolved WHERE r_tenant IS NOT NULL AND r_queue IS NOT NULL
     GROUP BY m, r_tenant, r_queue
  )
  SELECT queen._stats_add_rows('queen.stats_queue_minute', ARRAY['minute', 'node_id', 'tenant_id', 'queue'],
           jsonb_agg(to_jsonb(g) || jsonb_build_object('node_id', p_node, 'tenant_id', g.r_tenant, 'queue', g.r_queue)),
           ARRAY['push_requests', 'push_messages', 'pop_requests', 'pop_messages', 'pop_empty', 'ack_success',
                 'ack_failed', 'transactions', 'conflated', 'dlq_messages', 'pop_lag_ms_sum'],
           ARRAY['pop_lag_ms_max'], ARRAY['parked_consumers'])
    FROM g HAVING count(*) > 0
    INTO v_queues;

  RETURN jsonb_build_object('nodeRows', v_nodes, 'queueRows', COALESCE(v_queues, 0));
END
$$;

-- Purge of minute rows older than p_days, at most p_batch rows of each table per call (the flusher calls it again
-- while it returns p_batch or more). The running totals (V18) are not touched, so no counter goes backwards.
CREATE OR REPLACE FUNCTION queen.stats_purge(p_days integer, p_batch integer)
RETURNS integer
LANGUAGE plpgsql
AS $$
DECLARE
  v_cut timestamptz := now() - make_interval(days => p_days);
  v_q integer;
  v_n integer;
BEGIN
  DELETE FROM queen.stats_queue_minute WHERE ctid = ANY (ARRAY(
    SELECT ctid FROM queen.stats_queue_minute WHERE minute < v_cut LIMIT p_batch));
  GET DIAGNOSTICS v_q = ROW_COUNT;
  DELETE FROM queen.stats_node_minute WHERE ctid = ANY (ARRAY(
    SELECT ctid FROM queen.stats_node_minute WHERE minute < v_cut LIMIT p_batch));
  GET DIAGNOSTICS v_n = ROW_COUNT;
  RETURN GREATEST(v_q, v_n);
END
$$;

-- The cluster counters: sums over every node's running totals (queen_cluster_*_total), one row per counter.
CREATE OR REPLACE FUNCTION queen.stats_cluster_totals()
RETURNS TABLE (counter text, total bigint)
LANGUAGE sql STABLE
AS $$
  SELECT c.name, COALESCE(sum((t.counts->>c.name)::bigint), 0)::int8
    FROM unnest(queen._stats_counters()) AS c(name)
    LEFT JOIN queen.stats_node_totals t ON true
   GROUP BY c.name
$$;

-- Per queue name (all tenants together; at most p_limit queues, by name): the figures of its latest closed minute
-- that has rows, summed over nodes, and that minute's age in seconds (now minus the minute's end). A queue with no
-- closed minute yet (created or first used within the current minute, or before the first flush) still has its row,
-- every figure 0 and age_s NULL, so its series are on the page from the first scrape, not only once a minute of it
-- has been flushed (issue 38).
CREATE OR REPLACE FUNCTION queen.stats_queue_last_minute(p_limit integer)
RETURNS TABLE (queue text, age_s double precision, push_requests bigint, push_messages bigint, pop_messages bigint,
               pop_empty bigint, transactions bigint, conflated bigint, ack_success bigint, ack_failed bigint,
               pop_lag_ms_sum bigint, pop_lag_ms_max bigint, parked_consumers bigint)
LANGUAGE sql STABLE
AS $$
  WITH qs AS (
    SELECT q.tenant_id, q.name::text AS name FROM queen.queues q ORDER BY q.name LIMIT p_limit
  ), latest AS (
    SELECT qs.tenant_id, qs.name, l.minute
      FROM qs
      LEFT JOIN LATERAL (SELECT s.minute FROM queen.stats_queue_minute s
                          WHERE s.tenant_id = qs.tenant_id AND s.queue = qs.name
                            AND s.minute < date_trunc('minute', now())
                          ORDER BY s.minute DESC LIMIT 1) l ON true
  ), per AS (
    SELECT l.name, l.minute, COALESCE(sum(s.push_requests), 0) AS push_requests,
           COALESCE(sum(s.push_messages), 0) AS push_messages, COALESCE(sum(s.pop_messages), 0) AS pop_messages,
           COALESCE(sum(s.pop_empty), 0) AS pop_empty, COALESCE(sum(s.transactions), 0) AS transactions,
           COALESCE(sum(s.conflated), 0) AS conflated, COALESCE(sum(s.ack_success), 0) AS ack_success,
           COALESCE(sum(s.ack_failed), 0) AS ack_failed, COALESCE(sum(s.pop_lag_ms_sum), 0) AS pop_lag_ms_sum,
           COALESCE(max(s.pop_lag_ms_max), 0) AS pop_lag_ms_max,
           COALESCE(sum(s.parked_consumers), 0) AS parked_consumers
      FROM latest l
      LEFT JOIN queen.stats_queue_minute s ON s.tenant_id = l.tenant_id AND s.queue = l.name AND s.minute = l.minute
     GROUP BY l.tenant_id, l.name, l.minute
  )
  SELECT name, CASE WHEN max(minute) IS NOT NULL
                    THEN GREATEST(extract(epoch FROM now() - max(minute) - interval '1 minute'), 0) END::float8,
         sum(push_requests)::int8, sum(push_messages)::int8, sum(pop_messages)::int8, sum(pop_empty)::int8,
         sum(transactions)::int8, sum(conflated)::int8, sum(ack_success)::int8, sum(ack_failed)::int8,
         sum(pop_lag_ms_sum)::int8, max(pop_lag_ms_max)::int8, sum(parked_consumers)::int8
    FROM per GROUP BY name ORDER BY name
$$;

-- Per queue name (all tenants together; at most p_limit, by name): depth after the queue-mode cursor, age in seconds
-- of the oldest unconsumed segment, and dead-letter rows of every group.
CREATE OR REPLACE FUNCTION queen.stats_queue_depths(p_limit integer)
RETURNS TABLE (queue text, depth bigint, lag_seconds double precision, dlq bigint)
LANGUAGE sql STABLE
AS $$
  SELECT pq.name, sum(pq.depth)::int8, max(pq.lag_seconds)::float8, sum(pq.dlq)::int8
    FROM (SELECT q.name::text AS name,
                 COALESCE(sum(GREATEST(p.last_offset - GREATEST(c.committed, p.log_start - 1), 0)), 0) AS depth,
                 COALESCE(EXTRACT(EPOCH FROM now() - min(s.created_at)), 0) AS lag_seconds,
                 (SELECT count(*) FROM queen.log_dlq d JOIN queen.log_partitions dp ON dp.id = d.partition_id
                   WHERE dp.queue_id = q.id) AS dlq
            FROM queen.queues q
            LEFT JOIN queen.log_partitions p ON p.queue_id = q.id
            LEFT JOIN queen.log_consumers c ON c.partition_id = p.id AND c.consumer_group = '__QUEUE_MODE__'
            LEFT JOIN LATERAL (SELECT sg.created_at FROM queen.log_segments sg WHERE sg.partition_id = p.id
                                 AND sg.base_offset >= p.log_start   -- not a slim row (R__80)
                                 AND sg.end_offset > COALESCE(c.committed, -1) ORDER BY sg.base_offset LIMIT 1) s ON true
           GROUP BY q.id, q.name) pq
   GROUP BY pq.name ORDER BY pq.name LIMIT p_limit
$$;

-- Per (queue name, consumer group), all tenants together: messages after the group's cursors (leased but unacked
-- ones included) summed over the partitions the group has a cursor on, and the age in seconds of the oldest such
-- message. One row per cursor row, each costing at most two primary-key probes of log_segments when it lags; the
-- p_limit most lagging pairs are returned.
CREATE OR REPLACE FUNCTION queen.stats_group_lag(p_limit integer)
RETURNS TABLE (queue text, consumer_group text, lag_messages bigint, lag_seconds double precision)
LANGUAGE sql STABLE
AS $$
  SELECT q.name::text, c.consumer_group, sum(x.lag)::int8,
         COALESCE(max(CASE WHEN x.lag > 0 THEN
           GREATEST(extract(epoch FROM now() - queen._st_unconsumed_at(p.id, x.cur + 1)), 0) END), 0)::float8
    FROM queen.log_consumers c
    JOIN queen.log_partitions p ON p.id = c.partition_id
    JOIN queen.queues q ON q.id = p.queue_id
    CROSS JOIN LATERAL (SELECT LEAST(GREATEST(c.committed, p.log_start - 1), p.last_offset) AS cur,
                               p.last_offset - LEAST(GREATEST(c.committed, p.log_start - 1), p.last_offset) AS lag) x
   GROUP BY q.name, c.consumer_group
   ORDER BY 3 DESC, 1, 2
   LIMIT p_limit
$$;
