-- =====================================================================================================================
-- V3: message inspection and the dead-letter queue. ENGINE.md §7 (DLQ), §8 (inspection); API.md §5.9-§5.10.
--
-- Its functions are in R__60_inspection.sql (messages) and R__70_dlq.sql (dead letters); this file keeps an index.
--
-- SQL never hashes and never decodes a blob: the broker sends xxh3-128 hashes and decodes segments itself.
-- Timestamps rendered here are ISO-8601 UTC with milliseconds and 'Z' (queen._msg_ts).
-- Runs inside one Flyway transaction (no CONCURRENTLY); placeholders are disabled. PostgreSQL 15+.
-- =====================================================================================================================

-- DLQ status derivation (listing, detail) probes log_dlq by (partition_id, "offset"); the V2 index is keyed by
-- failed_at. A fresh/small table at migration time, so a plain CREATE INDEX inside the transaction is fine.
CREATE INDEX IF NOT EXISTS idx_log_dlq_partition_offset ON queen.log_dlq (partition_id, "offset");
