-- =====================================================================================================================
-- V2: the log engine ("segments"): tables and indexes. ENGINE.md §1-§7, API.md §5.2-§5.10.
--
-- The ground rules (offsets, lock order, timestamps) and every function are in R__10_common.sql and the other
-- repeatable migrations R__*.sql; this file keeps the tables and indexes.
--
-- Runs inside one Flyway transaction: no CONCURRENTLY. Works on PostgreSQL 15 and 16 (NULLS NOT DISTINCT needs 15).
-- =====================================================================================================================

-- ---------------------------------------------------------------------------------------------------------------------
-- Tables
-- ---------------------------------------------------------------------------------------------------------------------

-- Queue identity and options. Column defaults are the push/pop auto-creation defaults (lease 60 s, dedup 3600 s, DLQ on);
-- /configure has its own defaults (leaseTime 300) applied in configure_queue_v1.
CREATE TABLE queen.queues (
    id                              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id                       uuid NOT NULL DEFAULT '00000000-0000-0000-0000-000000000001',
    name                            varchar(255) NOT NULL,
    namespace                       text,
    task                            text,
    priority                        integer NOT NULL DEFAULT 0,
    lease_time                      integer NOT NULL DEFAULT 60,
    retry_limit                     integer NOT NULL DEFAULT 3,
    retry_delay                     integer NOT NULL DEFAULT 1000,
    ttl                             integer NOT NULL DEFAULT 3600,
    max_queue_size                  integer NOT NULL DEFAULT 0,
    dead_letter_queue               boolean NOT NULL DEFAULT true,
    dlq_after_max_retries           boolean NOT NULL DEFAULT true,
    delayed_processing              integer NOT NULL DEFAULT 0,
    window_buffer                   integer NOT NULL DEFAULT 0,
    retention_seconds               integer NOT NULL DEFAULT 0,
    completed_retention_seconds     integer NOT NULL DEFAULT 0,
    retention_enabled               boolean NOT NULL DEFAULT false,
    encryption_enabled              boolean NOT NULL DEFAULT false,
    max_wait_time_seconds           integer NOT NULL DEFAULT 0,
    min_pop_wait_time               integer NOT NULL DEFAULT 0,
    dedup_window_seconds            integer NOT NULL DEFAULT 3600,
    retention_sink_hold             text NOT NULL DEFAULT '',
    retention_sink_hold_max_seconds integer NOT NULL DEFAULT 604800,
    created_at                      timestamptz NOT NULL DEFAULT now(),
    updated_at                      timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX queues_tenant_name_uk ON queen.queues (tenant_id, name);
CREATE INDEX idx_queues_name ON queen.queues (name);

-- One row per (queue, partition name). id is the wire partitionId (globally unique).
CREATE TABLE queen.log_partitions (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    queue_id       uuid NOT NULL REFERENCES queen.queues (id) ON DELETE CASCADE,
    name           text NOT NULL DEFAULT 'Default',
    last_offset    bigint NOT NULL DEFAULT -1,       -- allocator: next base = last_offset + 1
    log_start      bigint NOT NULL DEFAULT 0,        -- retention watermark: every offset below is gone
    txns_start     bigint NOT NULL DEFAULT 0,        -- log_txns purge watermark
    last_write_at  timestamptz NOT NULL DEFAULT now(), -- changes at most once per second (HOT-friendly)
    oldest_live_at timestamptz,                      -- retention work-list watermarks (NULL = nothing live)
    oldest_txn_at  timestamptz,
    created_at     timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT log_partitions_queue_name_uk UNIQUE (queue_id, name)
) WITH (fillfactor = 70, autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 500, vacuum_truncate = off);

-- Pop candidates of recently written partitions (empty-scan floor).
CREATE INDEX idx_log_partitions_queue_write ON queen.log_partitions (queue_id, last_write_at);

-- Random-pivot candidate walk (pop without an empty-scan floor): ordered by id inside one queue, stops at LIMIT.
CREATE INDEX idx_log_partitions_queue_id ON queen.log_partitions (queue_id, id);

-- Retention work lists (a fresh table, so no CONCURRENTLY is needed).
CREATE INDEX idx_log_partitions_oldest_live ON queen.log_partitions (queue_id, oldest_live_at) WHERE oldest_live_at IS NOT NULL;
CREATE INDEX idx_log_partitions_oldest_txn ON queen.log_partitions (queue_id, oldest_txn_at) WHERE oldest_txn_at IS NOT NULL;

-- Segments: the only home of payloads. No secondary index: the PK serves pops, covering lookups and retention.
CREATE TABLE queen.log_segments (
    partition_id uuid NOT NULL REFERENCES queen.log_partitions (id) ON DELETE CASCADE,
    base_offset  bigint NOT NULL,
    end_offset   bigint NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    blob         bytea NOT NULL,
    PRIMARY KEY (partition_id, base_offset),
    CONSTRAINT log_segments_range_ck CHECK (end_offset >= base_offset)
);

-- Blobs are already zstd-compressed by the broker: keep TOAST from trying again.
-- (ALTER rather than the column-level STORAGE clause, which CREATE TABLE only accepts from PG 16.)
ALTER TABLE queen.log_segments ALTER COLUMN blob SET STORAGE EXTERNAL;

-- Hash sidecar: one row per pushed segment, 16 bytes per frame in frame order. No FK (ack resolution, dedup probe).
CREATE TABLE queen.log_txns (
    partition_id uuid NOT NULL,
    base_offset  bigint NOT NULL,
    end_offset   bigint NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    hashes       bytea NOT NULL,
    PRIMARY KEY (partition_id, base_offset)
);
ALTER TABLE queen.log_txns ALTER COLUMN hashes SET STORAGE EXTERNAL;
   -- random bytes: compression never pays

-- Consumption state: one row per (partition, consumer group). '__QUEUE_MODE__' is the queue-mode group.
CREATE TABLE queen.log_consumers (
    partition_id      uuid NOT NULL REFERENCES queen.log_partitions (id) ON DELETE CASCADE,
    consumer_group    text NOT NULL DEFAULT '__QUEUE_MODE__',
    committed         bigint NOT NULL DEFAULT -1,   -- last acked offset
    batch_end         bigint,                       -- last offset of the leased batch (NULL = no batch)
    worker_id         text,                         -- the wire leaseId
    lease_expires_at  timestamptz,
    lease_acquired_at timestamptz,
    batch_retry_count integer NOT NULL DEFAULT 0,   -- retry budget spent (explicit 'failed' acks only)
    attempt_offset    bigint,                       -- start offset of the last leased delivery
    attempt_count     integer NOT NULL DEFAULT 0,   -- deliveries of that start offset (redelivery telemetry)
    total_consumed    bigint NOT NULL DEFAULT 0,
    lease_conflated   boolean NOT NULL DEFAULT false,
    created_at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (partition_id, consumer_group)
) WITH (fillfactor = 50, autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 500, vacuum_truncate = off);

-- Dead letters: one row per (message, group); a verbatim payload snapshot taken by the broker. No FK on partition_id.
CREATE TABLE queen.log_dlq (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    partition_id   uuid NOT NULL,
    consumer_group text NOT NULL,
    "offset"       bigint NOT NULL,
    message_id     uuid,
    transaction_id text,
    payload        jsonb,
    error          text,
    retry_count    integer,
    failed_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX idx_log_dlq_partition_failed_at ON queen.log_dlq (partition_id, failed_at DESC);

-- Durable group registrations. Queue-wide rows: queue_id set, partition_name '', namespace '', task ''.
-- The first insert of a row elects the caller that bulk-seeds every partition's cursor and stores the subscription.
CREATE TABLE queen.consumer_groups_metadata (
    id                     uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id              uuid NOT NULL DEFAULT '00000000-0000-0000-0000-000000000001',
    consumer_group         text NOT NULL,
    queue_id               uuid REFERENCES queen.queues (id) ON DELETE CASCADE,  -- NULL only for discovery rows
    partition_name         text NOT NULL DEFAULT '',
    namespace              text,
    task                   text,
    subscription_mode      text NOT NULL DEFAULT 'all',
    subscription_timestamp timestamptz NOT NULL DEFAULT '1970-01-01 00:00:00+00',
    conflation             boolean NOT NULL DEFAULT false,
    created_at             timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT cgm_mode_ck CHECK (subscription_mode IN ('all', 'new', 'timestamp'))
);
CREATE UNIQUE INDEX cgm_identity_uk ON queen.consumer_groups_metadata
    (tenant_id, consumer_group, queue_id, partition_name, namespace, task) NULLS NOT DISTINCT;
CREATE INDEX idx_cgm_queue ON queen.consumer_groups_metadata (queue_id);

-- Empty-scan floor per (queue, group) for wildcard pops: partitions last written before
-- last_empty_scan_at - 2 min are not candidates. '-infinity' = no floor yet.
CREATE TABLE queen.consumer_watermarks (
    queue_id           uuid NOT NULL REFERENCES queen.queues (id) ON DELETE CASCADE,
    consumer_group     text NOT NULL,
    last_empty_scan_at timestamptz NOT NULL DEFAULT '-infinity',
    updated_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (queue_id, consumer_group)
) WITH (fillfactor = 70);

-- Retention audit (written by the retention steps). No FK.
CREATE TABLE queen.retention_history (
    id               bigserial PRIMARY KEY,
    partition_id     uuid NOT NULL,
    messages_deleted bigint NOT NULL DEFAULT 0,
    retention_type   text NOT NULL,
    executed_at      timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT retention_history_type_ck
        CHECK (retention_type IN ('retention', 'completed_retention', 'max_wait_time_eviction'))
);
CREATE INDEX idx_retention_history_partition ON queen.retention_history (partition_id, executed_at DESC);
CREATE INDEX idx_retention_history_executed ON queen.retention_history (executed_at);
