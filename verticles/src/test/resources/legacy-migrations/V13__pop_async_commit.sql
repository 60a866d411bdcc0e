-- Pops commit without waiting for the WAL flush.
--
-- A pop writes only a lease (or, with autoAck, a cursor advance). If the database crashes before that commit reaches
-- disk, the lease or the advance is lost and the messages are delivered again: the at-least-once delivery every pop
-- already has when a consumer dies holding a lease. Pushes, acks, transactions and DLQ moves still commit
-- synchronously. Waiting for the flush was a large part of an idle pop's latency (a parked long poll woken by a push
-- answers a fsync later) and kept a busy pop path waiting on the disk.
--
-- log_pop_v2 sets synchronous_commit for the calling transaction (set_config(..., true) outside any function SET
-- clause lasts until the transaction ends) and returns log_pop_v1's rows.
CREATE FUNCTION queen.log_pop_v2(
    p_tenant         uuid,
    p_queue          text,
    p_partition      text,
    p_group          text,
    p_budget         integer,
    p_max_partitions integer,
    p_lease_s        integer,
    p_worker         text,
    p_auto_ack       boolean,
    p_sub_mode       text,
    p_sub_from       timestamptz,
    p_namespace      text DEFAULT NULL,
    p_task           text DEFAULT NULL
) RETURNS TABLE (
    partition_id     uuid,
    partition_name   text,
    queue_name       text,
    delivery_attempt integer,
    lease_expires_at timestamptz,
    base_offset      bigint,
    start_idx        integer,
    take             integer,
    msg_count        integer,
    created_at       timestamptz,
    blob             bytea
)
LANGUAGE sql
AS $$
    SELECT set_config('synchronous_commit', 'off', true);
    SELECT * FROM queen.log_pop_v1(p_tenant, p_queue, p_partition, p_group, p_budget, p_max_partitions, p_lease_s,
                                   p_worker, p_auto_ack, p_sub_mode, p_sub_from, p_namespace, p_task);
$$;
