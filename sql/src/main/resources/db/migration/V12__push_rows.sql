-- V12: push over many partitions. log_segments loses its foreign key to log_partitions: every writer locks the
-- partition row before it inserts (the lock a deletion waits for), and delete_queue deletes the segments itself.
-- The push functions this version changed, and the reasons, are in R__20_push.sql.

ALTER TABLE queen.log_segments DROP CONSTRAINT IF EXISTS log_segments_partition_id_fkey;
