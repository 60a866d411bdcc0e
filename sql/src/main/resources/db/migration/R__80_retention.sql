-- =====================================================================================================================
-- Retention and maintenance claims.
-- A repeatable migration: the rules for editing it are at the top of R__10_common.sql.
-- =====================================================================================================================

-- Retention (ENGINE.md §9.1-9.3): whole segments older than retentionSeconds (rule 1, consumed or not), consumed
-- segments older than completedRetentionSeconds (rule 2), maxWaitTimeSeconds eviction (rule 1 with its own cutoff,
-- applied even when retention is disabled), and the txns purge (the hashes of segments older than
-- max(dedup window, completedRetentionSeconds, 900 s)). log_dlq is never touched here.
-- Each step is its own short transaction that locks one partition row; the broker loops steps until done.
--
-- One row per segment (V22) holds the payload (blob) and the hashes, and the two expire separately, each a prefix of
-- the partition's rows (created_at never decreases with the offset) behind its own watermark:
--   * log_start: every row below it has lost its payload. Retention empties the blob of a row whose hashes are still
--     needed (a "slim" row: blob = '', hashes kept) and deletes the others;
--   * txns_start: every row below it has lost its hashes. The purge deletes a slim row and sets the hashes of a row
--     whose payload is still retained to NULL.
-- So a row is deleted when both halves have expired, by whichever step expires the second. Readers of payloads start
-- at log_start or skip a slim row (octet_length(blob) = 0, which reads no TOAST); readers of hashes start at
-- txns_start. oldest_live_at / oldest_txn_at are the created_at of the oldest row past log_start / txns_start.

-- Partitions with work due, from the watermark columns the push path maintains (oldest_live_at / oldest_txn_at).
CREATE OR REPLACE FUNCTION queen.retention_candidates(p_limit integer)
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

-- One step on one partition: take the payload of at most p_max_rows segments due under rules 1/2/max-wait, then purge
-- the hashes of at most p_max_rows expired ones. Returns {"deleted","segmentsDeleted","txnsDeleted","done"}
-- (segmentsDeleted: payloads taken; txnsDeleted: hashes purged, as when they were rows of their own).
CREATE OR REPLACE FUNCTION queen.log_retention_step(p_pid uuid, p_max_rows integer)
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
  v_lstart       bigint;
  v_tstart       bigint;
  v_new_start    bigint;
  v_txns         bigint := 0;
  v_txns2        bigint := 0;
  v_txn_cutoff   timestamptz;
  v_new_tstart   bigint;
  v_new_tstart2  bigint;
BEGIN
  SELECT qq.* INTO q
    FROM queen.log_partitions p JOIN queen.queues qq ON qq.id = p.queue_id
   WHERE p.id = p_pid;
  IF NOT FOUND THEN
    RETURN jsonb_build_object('deleted', 0, 'txnsDeleted', 0, 'done', true);
  END IF;
  -- the partition row lock serialises this step with pushes to the partition (ENGINE.md §1.4)
  SELECT p.log_start, p.txns_start INTO v_lstart, v_tstart
    FROM queen.log_partitions p WHERE p.id = p_pid FOR NO KEY UPDATE;

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
  v_txn_cutoff := v_now - make_interval(secs => GREATEST(q.dedup_window_seconds, q.completed_retention_seconds, 900));

  -- Payloads: the due rows from log_start on. keep = its hashes are still needed (at or past txns_start and inside
  -- the txns window): slimmed; the others are deleted (a row past txns_start deleted here has its hashes purged too).
  WITH doomed AS MATERIALIZED (
    SELECT s.base_offset, s.end_offset,
           (s.base_offset >= v_tstart AND s.created_at >= v_txn_cutoff) AS keep
      FROM queen.log_segments s
     WHERE s.partition_id = p_pid AND s.base_offset >= v_lstart
       AND ((v_all_cutoff IS NOT NULL AND s.created_at < v_all_cutoff)
         OR (v_done_cutoff IS NOT NULL AND v_min_commit IS NOT NULL
             AND s.created_at < v_done_cutoff AND s.end_offset <= v_min_commit))
     ORDER BY s.base_offset
     LIMIT p_max_rows
  ), slim AS (
    UPDATE queen.log_segments s SET blob = ''::bytea
      FROM doomed d
     WHERE s.partition_id = p_pid AND s.base_offset = d.base_offset AND d.keep
  ), gone AS (
    DELETE FROM queen.log_segments s USING doomed d
     WHERE s.partition_id = p_pid AND s.base_offset = d.base_offset AND NOT d.keep
  )
  SELECT count(*), COALESCE(sum(d.end_offset - d.base_offset + 1), 0), max(d.end_offset) + 1,
         count(*) FILTER (WHERE NOT d.keep AND d.base_offset >= v_tstart),
         max(d.end_offset) FILTER (WHERE NOT d.keep AND d.base_offset >= v_tstart) + 1
    INTO v_deleted, v_frames, v_new_start, v_txns, v_new_tstart FROM doomed d;

  IF v_deleted > 0 THEN
    v_type := COALESCE(v_type, 'completed_retention');
    INSERT INTO queen.retention_history(partition_id, messages_deleted, retention_type)
    VALUES (p_pid, v_frames, v_type);
  END IF;
  v_lstart := GREATEST(v_lstart, COALESCE(v_new_start, v_lstart));
  v_tstart := GREATEST(v_tstart, COALESCE(v_new_tstart, v_tstart));

  -- Hashes: the expired rows from txns_start on. A slim row (below log_start) goes; a retained one keeps its payload
  -- and loses its hashes.
  WITH doomed AS MATERIALIZED (
    SELECT s.base_offset, s.end_offset, s.base_offset < v_lstart AS slim
      FROM queen.log_segments s
     WHERE s.partition_id = p_pid AND s.base_offset >= v_tstart AND s.created_at < v_txn_cutoff
     ORDER BY s.base_offset
     LIMIT p_max_rows
  ), gone AS (
    DELETE FROM queen.log_segments s USING doomed d
     WHERE s.partition_id = p_pid AND s.base_offset = d.base_offset AND d.slim
  ), purged AS (
    UPDATE queen.log_segments s SET hashes = NULL
      FROM doomed d
     WHERE s.partition_id = p_pid AND s.base_offset = d.base_offset AND NOT d.slim
  )
  SELECT count(*), max(d.end_offset) + 1 INTO v_txns2, v_new_tstart2 FROM doomed d;
  v_tstart := GREATEST(v_tstart, COALESCE(v_new_tstart2, v_tstart));

  UPDATE queen.log_partitions p
     SET log_start      = v_lstart,
         txns_start     = v_tstart,
         oldest_live_at = (SELECT min(s.created_at) FROM queen.log_segments s
                            WHERE s.partition_id = p_pid AND s.base_offset >= v_lstart),
         oldest_txn_at  = (SELECT min(s.created_at) FROM queen.log_segments s
                            WHERE s.partition_id = p_pid AND s.base_offset >= v_tstart)
   WHERE p.id = p_pid;

  RETURN jsonb_build_object('deleted', v_frames, 'segmentsDeleted', v_deleted, 'txnsDeleted', v_txns + v_txns2,
                            'done', v_deleted < p_max_rows AND v_txns2 < p_max_rows);
END;
$$;

-- Cluster singleton claim (ENGINE.md §9.3): succeeds for one node while the task is enabled, due and unleased.
CREATE OR REPLACE FUNCTION queen.maintenance_claim(p_task text, p_holder text, p_period_ms bigint)
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

CREATE OR REPLACE FUNCTION queen.maintenance_release(p_task text, p_fence bigint, p_ok boolean)
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
