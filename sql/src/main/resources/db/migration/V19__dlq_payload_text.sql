-- =====================================================================================================================
-- V19: the dead-letter snapshot is the frame payload's stored text (issue 34 item 6).
--
-- log_dlq.payload was jsonb, so a payload the log accepted but jsonb refuses ("\u0000" anywhere, a number such as
-- 1e1000000 beyond numeric's range, a lone surrogate escape) could not be filed and the ack that dead-lettered it
-- failed. The snapshot is now the payload text exactly as the log stores it (ENGINE.md §7.1 "verbatim"); the broker
-- splices it into the DLQ listing and packs it unchanged on a replay or redrive.
-- Existing rows keep jsonb's text rendering of their value, which is the same JSON value they always listed.
-- =====================================================================================================================

ALTER TABLE queen.log_dlq ALTER COLUMN payload TYPE text USING payload::text;
