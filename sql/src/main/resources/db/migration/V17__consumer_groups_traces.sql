-- V17: message traces (API.md §5.13, ENGINE.md §1.2). Tables and indexes only; the functions that own these tables
-- live in R__74_traces.sql (consumer-group control, API.md §5.11, needs no new table: R__72_consumer_groups.sql works
-- on log_consumers, consumer_groups_metadata and consumer_watermarks).
--
-- A trace is keyed by (partition_id, transaction_id) and has NO foreign key to log_partitions: Queen keeps traces when
-- their queue is deleted, and so do we. The tenant is stored on the row (written from the partition's queue when the
-- trace is recorded), so reads stay tenant-scoped after the partition is gone. queue_name / partition_name are the
-- names at record time, for the by-name listing. message_id is always NULL (ENGINE.md §1.2; kept for Queen's shape).
-- Rows older than QUEEN_TRACES_RETENTION_DAYS are deleted by the retention cycle in bounded batches (created_at index).
CREATE TABLE queen.message_traces (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id      uuid NOT NULL,
    partition_id   uuid NOT NULL,
    transaction_id text NOT NULL,
    message_id     uuid,
    consumer_group text NOT NULL DEFAULT '__QUEUE_MODE__',
    event_type     text NOT NULL DEFAULT 'info',
    data           jsonb NOT NULL,
    worker_id      text,
    queue_name     text,
    partition_name text,
    created_at     timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX message_traces_address ON queen.message_traces (partition_id, transaction_id, created_at);
CREATE INDEX message_traces_created ON queen.message_traces (created_at);

-- The names a trace was filed under (zero or more per trace). tenant_id and created_at repeat the trace's own so the
-- name listings of one tenant read this table's index alone; the rows go with their trace.
CREATE TABLE queen.message_trace_names (
    trace_id   uuid NOT NULL REFERENCES queen.message_traces (id) ON DELETE CASCADE,
    trace_name text NOT NULL,
    tenant_id  uuid NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (trace_id, trace_name)
);
CREATE INDEX message_trace_names_name ON queen.message_trace_names (tenant_id, trace_name, created_at);
