-- V16: per-minute operation counters, the history behind /api/v1/status/analytics, /api/v1/analytics/* and the
-- cluster-wide Prometheus series (API.md §5.1, §5.12).
--
-- Each node counts in memory and adds its counts of the minutes that have closed into these tables in the background
-- (one upsert per minute and node, never on the request path). A row is (minute, node) or (minute, node, queue); the
-- cluster figure for a minute is the SUM over nodes. Counters only grow within a row, so a node that flushes the same
-- minute twice (a retry after a failed commit) adds with `+`, it never overwrites. Rows older than
-- QUEEN_METRICS_RETENTION_DAYS (Queen's METRICS_RETENTION_DAYS, 90) are purged by the maintenance cycle.

-- Node-wide figures of one minute: requests and messages by operation, errors, and the process's own gauges sampled
-- at the end of the minute (heap, cpu, pool), which system-metrics and worker-metrics chart.
CREATE TABLE queen.stats_node_minute (
  minute             timestamptz NOT NULL,        -- date_trunc('minute', ...) of the counted events, UTC
  node_id            text        NOT NULL,        -- the node's server id (QUEEN_SERVER_ID or the generated one)
  hostname           text        NOT NULL DEFAULT '',
  push_requests      bigint      NOT NULL DEFAULT 0,
  push_messages      bigint      NOT NULL DEFAULT 0,
  pop_requests       bigint      NOT NULL DEFAULT 0,
  pop_messages       bigint      NOT NULL DEFAULT 0,
  pop_empty          bigint      NOT NULL DEFAULT 0,  -- pops that answered no message (204 / empty)
  ack_requests       bigint      NOT NULL DEFAULT 0,
  ack_success        bigint      NOT NULL DEFAULT 0,  -- acked items with status completed
  ack_failed         bigint      NOT NULL DEFAULT 0,  -- acked items with status failed
  transactions       bigint      NOT NULL DEFAULT 0,
  dlq_messages       bigint      NOT NULL DEFAULT 0,  -- messages that went to the DLQ this minute
  db_errors          bigint      NOT NULL DEFAULT 0,  -- failed PostgreSQL calls of the request path
  push_latency_ms_sum bigint     NOT NULL DEFAULT 0,  -- sum over push requests of request latency
  push_latency_ms_max integer    NOT NULL DEFAULT 0,
  pop_latency_ms_sum  bigint     NOT NULL DEFAULT 0,  -- sum over non-empty pops (long-poll wait excluded where known)
  pop_latency_ms_max  integer    NOT NULL DEFAULT 0,
  ack_latency_ms_sum  bigint     NOT NULL DEFAULT 0,
  ack_latency_ms_max  integer    NOT NULL DEFAULT 0,
  heap_used_bytes    bigint,                          -- gauges sampled when the row is flushed (last writer wins)
  heap_max_bytes     bigint,
  cpu_process_pct    real,
  db_pool_size       integer,
  db_pool_active     integer,
  parked_pops        integer,
  PRIMARY KEY (minute, node_id)
);
CREATE INDEX stats_node_minute_node ON queen.stats_node_minute (node_id, minute);

-- Per-queue figures of one minute and node. pop_lag_ms_* is the age of popped messages when handed out (pop time
-- minus push time), summed and maxed over the messages of the minute.
CREATE TABLE queen.stats_queue_minute (
  minute             timestamptz NOT NULL,
  node_id            text        NOT NULL,
  tenant_id          uuid        NOT NULL,
  queue              text        NOT NULL,
  push_requests      bigint      NOT NULL DEFAULT 0,
  push_messages      bigint      NOT NULL DEFAULT 0,
  pop_requests       bigint      NOT NULL DEFAULT 0,
  pop_messages       bigint      NOT NULL DEFAULT 0,
  pop_empty          bigint      NOT NULL DEFAULT 0,
  ack_success        bigint      NOT NULL DEFAULT 0,
  ack_failed         bigint      NOT NULL DEFAULT 0,
  transactions       bigint      NOT NULL DEFAULT 0,
  conflated          bigint      NOT NULL DEFAULT 0,  -- pushes dropped as duplicates (dedup)
  dlq_messages       bigint      NOT NULL DEFAULT 0,
  pop_lag_ms_sum     bigint      NOT NULL DEFAULT 0,
  pop_lag_ms_max     bigint      NOT NULL DEFAULT 0,
  parked_consumers   integer,                         -- long polls parked on the queue at flush time
  PRIMARY KEY (minute, node_id, tenant_id, queue)
);
CREATE INDEX stats_queue_minute_queue ON queen.stats_queue_minute (tenant_id, queue, minute);
