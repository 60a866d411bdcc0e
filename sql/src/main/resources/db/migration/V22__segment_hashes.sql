-- =====================================================================================================================
-- V22: one row per segment (issue 39). The hashes (16 bytes of xxh3-128 per frame, in frame order) move from the
-- sidecar table log_txns into log_segments.hashes, and log_txns goes: a push writes one row (and one index entry) per
-- segment instead of two.
--
-- A row's two halves expire separately, as the two tables did (R__80_retention.sql):
--   * blob   = '' once retention took the segment's payload (log_start moved past it: a "slim" row), while its hashes
--              are still needed for dedup and ack resolution;
--   * hashes = NULL once the txns purge passed it (txns_start moved past it) while its payload is still retained.
-- The row goes when both have expired. Readers of payloads skip slim rows, readers of hashes rows below txns_start.
--
-- Backfill: every segment takes its log_txns row's hashes (none: the purge already passed it, NULL); a log_txns row
-- whose segment retention already deleted becomes a slim row. About 15 s per million segments on the project's
-- 2-core benchmark machine (one-frame segments of 300 bytes, 10 % of them slim; CHANGELOG.md, upgrade note), in the
-- migration's one transaction, which holds log_segments locked meanwhile; log_segments keeps one dead version per
-- row until autovacuum passes.
-- =====================================================================================================================

ALTER TABLE queen.log_segments ADD COLUMN hashes bytea;
-- random bytes: compression never pays (as for the blob)
ALTER TABLE queen.log_segments ALTER COLUMN hashes SET STORAGE EXTERNAL;

UPDATE queen.log_segments s
   SET hashes = t.hashes
  FROM queen.log_txns t
 WHERE t.partition_id = s.partition_id AND t.base_offset = s.base_offset;

INSERT INTO queen.log_segments (partition_id, base_offset, end_offset, created_at, blob, hashes)
SELECT t.partition_id, t.base_offset, t.end_offset, t.created_at, ''::bytea, t.hashes
  FROM queen.log_txns t
 WHERE EXISTS (SELECT 1 FROM queen.log_partitions p WHERE p.id = t.partition_id)
   AND NOT EXISTS (SELECT 1 FROM queen.log_segments s
                    WHERE s.partition_id = t.partition_id AND s.base_offset = t.base_offset);

DROP TABLE queen.log_txns;
