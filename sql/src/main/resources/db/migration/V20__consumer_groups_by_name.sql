-- V20: the consumer-group listing (GET /api/v1/consumer-groups, queen.consumer_groups in R__90_status.sql) pages by
-- group name.
--
-- The names are walked on the tenant's registrations (consumer_groups_metadata, whose unique index leads with
-- (tenant_id, consumer_group)). A pop registers its group on a queue before it creates a cursor there; a seek
-- (R__72_consumer_groups.sql) registers it too from now on. The cursors seeks made before this version have no
-- registration: each gets one here, with mode 'all' (a partition the group first meets later starts at its oldest
-- retained message, so nothing is skipped).
INSERT INTO queen.consumer_groups_metadata (tenant_id, consumer_group, queue_id, partition_name, namespace, task,
                                            subscription_mode)
SELECT DISTINCT q.tenant_id, c.consumer_group, q.id, '', '', '', 'all'
FROM queen.log_consumers c
JOIN queen.log_partitions p ON p.id = c.partition_id
JOIN queen.queues q ON q.id = p.queue_id
ON CONFLICT DO NOTHING;

-- A listed group's cursors are read by name. The key of log_consumers is (partition_id, consumer_group), which cannot
-- find them without reading every cursor of the tenant; this index can. consumer_group and partition_id never change
-- on a row, so the pops' and acks' updates of a cursor stay heap-only (HOT) as before; only a new cursor adds an entry.
-- Built inside the migration's transaction (Flyway), which holds pops and acks back while it runs (about a second per
-- million cursors).
CREATE INDEX log_consumers_group ON queen.log_consumers (consumer_group, partition_id);
