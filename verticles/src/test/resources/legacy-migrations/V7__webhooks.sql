-- Webhook delivery (issue #9): push subscriptions that deliver a queue's messages to HTTP endpoints. Each endpoint is
-- a consumer group 'webhook:<endpoint id>' on its queue, so ordering, leases and cursors are the engine's; delivery
-- telemetry lives in webhook_deliveries, and a message that exhausted its attempts is dead-lettered in log_dlq under
-- that group (status failed_permanent here).
CREATE TABLE queen.webhook_endpoints (
  id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id          uuid NOT NULL,
  queue              text NOT NULL,
  partition          text,                                -- NULL = every partition of the queue
  url                text NOT NULL,
  secret             text NOT NULL,                       -- HMAC-SHA256 signing secret
  timeout_ms         integer NOT NULL DEFAULT 10000,
  max_attempts       integer NOT NULL DEFAULT 5,
  backoff_initial_ms integer NOT NULL DEFAULT 1000,
  backoff_max_ms     integer NOT NULL DEFAULT 60000,
  max_concurrency    integer NOT NULL DEFAULT 4,          -- partitions delivered at once per node
  enabled            boolean NOT NULL DEFAULT true,
  created_at         timestamptz NOT NULL DEFAULT now(),
  updated_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_endpoints_tenant ON queen.webhook_endpoints (tenant_id, created_at);

-- One row per (endpoint, message): the latest state of its delivery.
CREATE TABLE queen.webhook_deliveries (
  id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  endpoint_id         uuid NOT NULL REFERENCES queen.webhook_endpoints (id) ON DELETE CASCADE,
  tenant_id           uuid NOT NULL,
  partition_id        uuid NOT NULL,
  transaction_id      text NOT NULL,
  message_id          uuid NOT NULL,
  status              text NOT NULL DEFAULT 'queued',
  attempt_count       integer NOT NULL DEFAULT 0,
  created_at          timestamptz NOT NULL,               -- when the message was stored (its segment's time)
  first_attempt_at    timestamptz,
  delivered_at        timestamptz,
  next_attempt_at     timestamptz,
  response_status     integer,
  response_latency_ms integer,
  processing_ms       integer,
  total_delivery_ms   integer,
  queue_wait_ms       integer,
  last_error          text,
  dlq_id              uuid,                               -- the log_dlq row of a failed_permanent delivery
  failed_at           timestamptz,
  deleted_at          timestamptz,                        -- soft delete of a dead letter
  updated_at          timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT webhook_delivery_status_ck
    CHECK (status IN ('queued', 'delivering', 'succeeded', 'pending_retry', 'failed_permanent')),
  CONSTRAINT webhook_delivery_uk UNIQUE (endpoint_id, partition_id, transaction_id)
);
-- The DLQ listing: failed_permanent rows of a tenant in (failed_at, id) keyset order.
CREATE INDEX webhook_deliveries_dlq ON queen.webhook_deliveries (tenant_id, failed_at, id)
  WHERE status = 'failed_permanent';
