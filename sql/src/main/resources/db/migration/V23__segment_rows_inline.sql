-- =====================================================================================================================
-- V23: a segment row of up to 4 KiB stays inline (issue 39).
--
-- Since V22 a segment row carries its blob and its hashes (16 bytes a frame). PostgreSQL moves the largest value of a
-- row out to TOAST once the row passes toast_tuple_target, 2 KiB by default, so a segment of 75 small frames
-- (a 1.2 KiB blob and 1.2 KiB of hashes: a batch-100 producer's segment) lost its blob to TOAST where, with the hashes
-- in a table of their own, it had stayed inline. Every pop then read the blob through the TOAST index (the slice
-- walk's header read, the blob fetch): the drain100 row (pop + ack batch 100) cost PostgreSQL 12.4-13.3 us per message
-- against 9.6 before V22 (BENCHMARKS.md, "Issue 39, one row per segment: the TOAST threshold").
-- With a 4 KiB target such rows stay whole; a larger one still sends its largest value (the blob) out, as before.
-- Applies to rows written from now on; no rewrite.
-- =====================================================================================================================

ALTER TABLE queen.log_segments SET (toast_tuple_target = 4096);
