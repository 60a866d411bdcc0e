-- Retention (ENGINE.md §9.1-9.3): whole segments older than retentionSeconds (rule 1, consumed or not), consumed
-- segments older than completedRetentionSeconds (rule 2), maxWaitTimeSeconds eviction (rule 1 with its own cutoff,
-- applied even when retention is disabled), and the log_txns purge. log_dlq is never touched here.
-- Each step is its own short transaction that locks one partition row; the broker loops steps until done.

-- Partitions with work due, from the watermark columns the push path maintains (oldest_live_at / oldest_txn_at).
CREATE FUNCTION queen.retention_candidates_v1(p_limit integer)
RETURNS TABLE (partition_id uuid)
LANGUAGE sql STABLE AS $$
  SELECT p.id
    FROM queen.log_partitions p
    JOIN queen.queues q ON q.id = p.queue_id
   WHERE (p.oldest_live_at IS NOT NULL AND (
            (q.retention_enabled AND q.retention_seconds > 0
               AND p.oldest_live_at < now() - make_interval(secs => q.retention_seconds))
         OR (q.retention_enabled AND q.completed_retention_seconds > 0
               AND p.oldest_live_at < now() - make_interval(secs => q.completed_retention_seconds))
         OR (q.max_wait_time_seconds > 0
               AND p.oldest_live_at < now() - make_interval(secs => q.max_wait_time_seconds))))
      OR (p.oldest_txn_at IS NOT NULL
          AND p.oldest_txn_at < now() - make_interval(secs =>
                GREATEST(q.dedup_window_seconds, q.completed_retention_seconds, 900)))
   ORDER BY LEAST(p.oldest_live_at, p.oldest_txn_at) NULLS LAST
   LIMIT p_limit
$$;

-- One step on one partition: delete at most p_max_rows segments due under rules 1/2/max-wait, then at most
-- p_max_rows expired log_txns rows. Returns {"deleted","txnsDeleted","done"}.
CREATE FUNCTION queen.log_retention_step_v1(p_pid uuid, p_max_rows integer)
RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  q              queen.queues%ROWTYPE;
  v_now          timestamptz := now();
  v_all_cutoff   timestamptz;
  v_done_cutoff  timestamptz;
  v_min_commit   bigint;
  v_deleted      bigint := 0;
  v_frames       bigint := 0;
  v_type         text;
  v_new_start    bigint;
  v_txns         bigint := 0;
  v_txn_cutoff   timestamptz;
  v_new_tstart   bigint;
BEGIN
  SELECT qq.* INTO q
    FROM queen.log_partitions p JOIN queen.queues qq ON qq.id = p.queue_id
   WHERE p.id = p_pid;
  IF NOT FOUND THEN
    RETURN jsonb_build_object('deleted', 0, 'txnsDeleted', 0, 'done', true);
  END IF;
  -- the partition row lock serialises this step with pushes to the partition (ENGINE.md §1.4)
  PERFORM 1 FROM queen.log_partitions WHERE id = p_pid FOR NO KEY UPDATE;

  IF q.retention_enabled AND q.retention_seconds > 0 THEN
    v_all_cutoff := v_now - make_interval(secs => q.retention_seconds);
    v_type := 'retention';
  END IF;
  IF q.max_wait_time_seconds > 0 AND (v_all_cutoff IS NULL
      OR v_now - make_interval(secs => q.max_wait_time_seconds) > v_all_cutoff) THEN
    v_all_cutoff := v_now - make_interval(secs => q.max_wait_time_seconds);
    v_type := 'max_wait_time_eviction';
  END IF;
  IF q.retention_enabled AND q.completed_retention_seconds > 0 THEN
    v_done_cutoff := v_now - make_interval(secs => q.completed_retention_seconds);
    -- consumed by every group: a partition with no cursors loses nothing under rule 2
    SELECT min(committed) INTO v_min_commit FROM queen.log_consumers WHERE partition_id = p_pid;
  END IF;

  WITH doomed AS (
    SELECT s.base_offset, s.end_offset
      FROM queen.log_segments s
     WHERE s.partition_id = p_pid
       AND ((v_all_cutoff IS NOT NULL AND s.created_at < v_all_cutoff)
         OR (v_done_cutoff IS NOT NULL AND v_min_commit IS NOT NULL
             AND s.created_at < v_done_cutoff AND s.end_offset <= v_min_commit))
     ORDER BY s.base_offset
     LIMIT p_max_rows
  ), gone AS (
    DELETE FROM queen.log_segments s USING doomed d
     WHERE s.partition_id = p_pid AND s.base_offset = d.base_offset
    RETURNING s.base_offset, s.end_offset, s.created_at
  )
  SELECT count(*), COALESCE(sum(end_offset - base_offset + 1), 0), max(end_offset) + 1
    INTO v_deleted, v_frames, v_new_start FROM gone;

  IF v_deleted > 0 THEN
    v_type := COALESCE(v_type, 'completed_retention');
    INSERT INTO queen.retention_history(partition_id, messages_deleted, retention_type)
    VALUES (p_pid, v_frames, v_type);
  END IF;

  v_txn_cutoff := v_now - make_interval(secs => GREATEST(q.dedup_window_seconds, q.completed_retention_seconds, 900));
  WITH doomed AS (
    SELECT t.base_offset FROM queen.log_txns t
     WHERE t.partition_id = p_pid AND t.created_at < v_txn_cutoff
     ORDER BY t.base_offset LIMIT p_max_rows
  ), gone AS (
    DELETE FROM queen.log_txns t USING doomed d
     WHERE t.partition_id = p_pid AND t.base_offset = d.base_offset
    RETURNING t.end_offset
  )
  SELECT count(*), max(end_offset) + 1 INTO v_txns, v_new_tstart FROM gone;

  UPDATE queen.log_partitions p
     SET log_start      = GREATEST(p.log_start, COALESCE(v_new_start, p.log_start)),
         txns_start     = GREATEST(p.txns_start, COALESCE(v_new_tstart, p.txns_start)),
         oldest_live_at = (SELECT min(created_at) FROM queen.log_segments s WHERE s.partition_id = p_pid),
         oldest_txn_at  = (SELECT min(created_at) FROM queen.log_txns t WHERE t.partition_id = p_pid)
   WHERE p.id = p_pid;

  RETURN jsonb_build_object('deleted', v_frames, 'segmentsDeleted', v_deleted, 'txnsDeleted', v_txns,
                            'done', v_deleted < p_max_rows AND v_txns < p_max_rows);
END;
$$;

-- Cluster singleton claim (ENGINE.md §9.3): succeeds for one node while the task is enabled, due and unleased.
CREATE FUNCTION queen.maintenance_claim_v1(p_task text, p_holder text, p_period_ms bigint)
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  v_fence bigint;
  v_lease interval := make_interval(secs => LEAST(GREATEST(2 * p_period_ms / 1000.0, 60), 1800));
BEGIN
  INSERT INTO queen.maintenance_leases(task, period_ms) VALUES (p_task, p_period_ms) ON CONFLICT (task) DO NOTHING;
  UPDATE queen.maintenance_leases
     SET lease_until = now() + v_lease, holder = p_holder, fence = fence + 1, last_start_at = now(),
         period_ms = p_period_ms
   WHERE task = p_task AND enabled AND next_due_at <= now() AND (lease_until IS NULL OR lease_until < now())
  RETURNING fence INTO v_fence;
  RETURN v_fence;
END;
$$;

CREATE FUNCTION queen.maintenance_release_v1(p_task text, p_fence bigint, p_ok boolean)
RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
  IF p_ok THEN
    UPDATE queen.maintenance_leases
       SET next_due_at = GREATEST(next_due_at + make_interval(secs => period_ms / 1000.0), now()),
           lease_until = NULL, runs = runs + 1, last_end_at = now(),
           last_duration_ms = (extract(epoch FROM now() - last_start_at) * 1000)::bigint
     WHERE task = p_task AND fence = p_fence;
  ELSE
    UPDATE queen.maintenance_leases SET lease_until = NULL WHERE task = p_task AND fence = p_fence;
  END IF;
  RETURN FOUND;
END;
$$;
