-- Bulk redrive tasks (issue #10): a task moves a queue's dead-letter rows one by one with the engine's atomic move
-- (queen.log_dlq_move_v1), rate-limited, resumable, and taken over by another node when its node dies.
CREATE TABLE queen.dlq_redrive_tasks (
  id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id         uuid NOT NULL,
  queue             text NOT NULL,
  consumer_group    text,
  partition         text,
  dest_queue        text,
  dest_partition    text,
  max_per_second    integer NOT NULL,
  max_rows          bigint,
  status            text NOT NULL DEFAULT 'running',
  moved             bigint NOT NULL DEFAULT 0,
  duplicate         bigint NOT NULL DEFAULT 0,
  gone              bigint NOT NULL DEFAULT 0,
  failed            bigint NOT NULL DEFAULT 0,
  last_error        text,
  -- keyset position: rows at or before (after_failed_at, after_id) in failed_at ASC, id ASC order are done
  after_failed_at   timestamptz,
  after_id          uuid,
  owner             text,
  heartbeat_at      timestamptz,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  finished_at       timestamptz,
  CONSTRAINT dlq_redrive_status_ck CHECK (status IN ('running', 'completed', 'cancelled', 'failed'))
);

-- One active task per (tenant, queue).
CREATE UNIQUE INDEX dlq_redrive_one_active ON queen.dlq_redrive_tasks (tenant_id, queue) WHERE status = 'running';
CREATE INDEX dlq_redrive_recent ON queen.dlq_redrive_tasks (tenant_id, created_at DESC);
CREATE INDEX idx_log_dlq_failed_at_id ON queen.log_dlq (failed_at, id);

-- The next dead-letter row of a task after its keyset position, under the task's tenant and filters.
CREATE FUNCTION queen.dlq_redrive_next_v1(p_task uuid)
RETURNS TABLE (id uuid, failed_at timestamptz)
LANGUAGE sql STABLE AS $$
  SELECT d.id, d.failed_at
    FROM queen.dlq_redrive_tasks t
    JOIN queen.queues q ON q.tenant_id = t.tenant_id AND q.name = t.queue
    JOIN queen.log_partitions p ON p.queue_id = q.id AND (t.partition IS NULL OR p.name = t.partition)
    JOIN queen.log_dlq d ON d.partition_id = p.id AND (t.consumer_group IS NULL OR d.consumer_group = t.consumer_group)
   WHERE t.id = p_task
     AND (t.after_failed_at IS NULL OR (d.failed_at, d.id) > (t.after_failed_at, t.after_id))
   ORDER BY d.failed_at, d.id
   LIMIT 1
$$;

-- Claims a running task nobody holds (or whose holder stopped heart-beating): the take-over of a dead node's task.
CREATE FUNCTION queen.dlq_redrive_claim_v1(p_owner text, p_stale_ms bigint)
RETURNS SETOF queen.dlq_redrive_tasks
LANGUAGE sql AS $$
  UPDATE queen.dlq_redrive_tasks t
     SET owner = p_owner, heartbeat_at = now(), updated_at = now()
   WHERE t.id = (SELECT c.id FROM queen.dlq_redrive_tasks c
                  WHERE c.status = 'running'
                    AND (c.owner IS NULL OR c.heartbeat_at IS NULL
                         OR c.heartbeat_at < now() - make_interval(secs => p_stale_ms / 1000.0))
                  ORDER BY c.created_at
                  LIMIT 1
                  FOR UPDATE SKIP LOCKED)
  RETURNING t.*
$$;

-- Records one move's verdict and advances the keyset while this owner still holds the task, so a move that was in
-- flight when the task was cancelled is still counted (the counts always add up). Returns false when the task is no
-- longer running (cancelled) or was taken over: the runner stops.
CREATE FUNCTION queen.dlq_redrive_record_v1(p_task uuid, p_owner text, p_verdict text, p_row uuid,
                                            p_failed_at timestamptz, p_error text)
RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  v_status text;
BEGIN
  UPDATE queen.dlq_redrive_tasks
     SET moved = moved + (p_verdict = 'moved')::int,
         duplicate = duplicate + (p_verdict = 'duplicate')::int,
         gone = gone + (p_verdict = 'gone')::int,
         failed = failed + (p_verdict = 'failed')::int,
         last_error = COALESCE(p_error, last_error),
         after_failed_at = COALESCE(p_failed_at, after_failed_at),
         after_id = COALESCE(p_row, after_id),
         heartbeat_at = now(), updated_at = now()
   WHERE id = p_task AND owner = p_owner
  RETURNING status INTO v_status;
  RETURN FOUND AND v_status = 'running';
END;
$$;
