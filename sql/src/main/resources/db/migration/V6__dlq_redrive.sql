-- Bulk redrive tasks (issue #10): a task moves a queue's dead-letter rows one by one with the engine's atomic move
-- (queen.log_dlq_move), rate-limited, resumable, and taken over by another node when its node dies.
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
