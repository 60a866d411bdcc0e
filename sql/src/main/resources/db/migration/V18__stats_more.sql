-- V18: running totals per node, behind the cluster-wide Prometheus counters (queen_cluster_*_total, API.md §5.1).
--
-- A counter must never go backwards, but the minute rows of V16 are purged after QUEEN_METRICS_RETENTION_DAYS: a sum
-- over them would drop at every purge. So each flush of a node adds the same deltas it adds to its minute row into
-- this one row per node as well (same transaction, added key by key), and the cluster counters are the SUM over
-- these rows.
-- Nothing purges this table: a node that left keeps its row, so the cluster total stays monotonic.
-- counts holds one bigint per counter, keyed by the V16 column name (push_requests, push_messages, pop_requests,
-- pop_messages, pop_empty, ack_requests, ack_success, ack_failed, transactions, dlq_messages, db_errors).
CREATE TABLE queen.stats_node_totals (
  node_id    text        PRIMARY KEY,
  counts     jsonb       NOT NULL DEFAULT '{}'::jsonb,
  updated_at timestamptz NOT NULL DEFAULT now()
);
