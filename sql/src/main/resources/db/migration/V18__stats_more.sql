-- V18: running totals per node, behind the cluster-wide Prometheus counters (queen_cluster_*_total, API.md §5.1).
--
-- A counter must never go backwards, but the minute rows of V16 are purged after QUEEN_METRICS_RETENTION_DAYS: a sum
-- over them would drop at every purge. So each flush of a node adds the same deltas it adds to its minute row into
-- this one row per node as well (same transaction, same `+`), and the cluster counters are the SUM over these rows.
-- Nothing purges this table: a node that left keeps its row, so the cluster total stays monotonic.
CREATE TABLE queen.stats_node_totals (
  node_id        text        PRIMARY KEY,
  push_requests  bigint      NOT NULL DEFAULT 0,
  push_messages  bigint      NOT NULL DEFAULT 0,
  pop_requests   bigint      NOT NULL DEFAULT 0,
  pop_messages   bigint      NOT NULL DEFAULT 0,
  pop_empty      bigint      NOT NULL DEFAULT 0,
  ack_requests   bigint      NOT NULL DEFAULT 0,
  ack_success    bigint      NOT NULL DEFAULT 0,
  ack_failed     bigint      NOT NULL DEFAULT 0,
  transactions   bigint      NOT NULL DEFAULT 0,
  dlq_messages   bigint      NOT NULL DEFAULT 0,
  db_errors      bigint      NOT NULL DEFAULT 0,
  updated_at     timestamptz NOT NULL DEFAULT now()
);
