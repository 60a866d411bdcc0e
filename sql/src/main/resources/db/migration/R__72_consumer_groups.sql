-- =====================================================================================================================
-- Consumer-group control (API.md §5.11): delete a group's cursors, store a durable subscription, seek.
-- A repeatable migration: the rules for editing it are at the top of R__10_common.sql.
--
--   consumer_group_delete        DELETE /api/v1/consumer-groups/:group[/queues/:queue]
--   consumer_group_subscription  POST   /api/v1/consumer-groups/:group/subscription
--   consumer_group_seek          POST   /api/v1/consumer-groups/:group/queues/:queue[/partitions/:partition]/seek
--
-- Every function is tenant-scoped by name: another tenant's queue or group is simply not there.
-- Cursor rows are locked in (partition_id) order, the lock order of ENGINE §1.4, before they are changed; a pop that
-- holds one (FOR UPDATE SKIP LOCKED, a short transaction) is waited for, a pop that comes later skips nothing because
-- the seek has committed. A seek or delete releases the group's live lease on the partitions it touches, so the next
-- pop claims at once, and it drops the group's empty-scan watermark (consumer_watermarks) so partitions that were
-- quiet for a long time are candidates again.
--
-- The group-wide subscription row: consumer_groups_metadata with queue_id NULL, partition_name '', namespace '' and
-- task '' holds a subscription set before (or independently of) any queue. log_pop (R__30_pop.sql) registers the group
-- on a queue with that row's mode and timestamp instead of the pop's own subscriptionMode / subscriptionFrom.
-- =====================================================================================================================

-- Deletes the group's cursors on every queue of the tenant (p_queue NULL) or on one queue, and with
-- p_delete_metadata its durable registrations too (the per-queue rows, and for a whole-group delete the group-wide
-- subscription row). The group then starts over: from its stored subscription when the metadata is kept, else from
-- the subscription mode its next pop carries (API.md §6). A queue or group the tenant does not have deletes nothing.
-- Returns the wire body plus "queues" (the names of the queues whose cursors went, for the broker's long-poll wake):
-- {"success":true,"consumerGroup","queueName"?,"deletedPartitions","metadataDeleted","queues":[...]}.
CREATE OR REPLACE FUNCTION queen.consumer_group_delete(
    p_tenant          uuid,
    p_group           text,
    p_queue           text,
    p_delete_metadata boolean
) RETURNS jsonb
LANGUAGE plpgsql
AS $$
DECLARE
    v_tenant  uuid := COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001');
    v_deleted integer;
    v_queues  text[];
    v_body    jsonb;
BEGIN
    WITH locked AS (
        SELECT c.partition_id, q.name AS queue_name
        FROM queen.log_consumers c
        JOIN queen.log_partitions p ON p.id = c.partition_id
        JOIN queen.queues q ON q.id = p.queue_id
        WHERE c.consumer_group = p_group AND q.tenant_id = v_tenant AND (p_queue IS NULL OR q.name = p_queue)
        ORDER BY c.partition_id
        FOR UPDATE OF c
    ), del AS (
        DELETE FROM queen.log_consumers c USING locked l
        WHERE c.partition_id = l.partition_id AND c.consumer_group = p_group
        RETURNING l.queue_name
    )
    SELECT count(*), COALESCE(array_agg(DISTINCT del.queue_name), '{}') INTO v_deleted, v_queues FROM del;

    DELETE FROM queen.consumer_watermarks w
    USING queen.queues q
    WHERE w.queue_id = q.id AND w.consumer_group = p_group AND q.tenant_id = v_tenant
      AND (p_queue IS NULL OR q.name = p_queue);

    IF COALESCE(p_delete_metadata, true) THEN
        DELETE FROM queen.consumer_groups_metadata m
        WHERE m.tenant_id = v_tenant AND m.consumer_group = p_group
          AND (p_queue IS NULL
               OR m.queue_id = (SELECT q.id FROM queen.queues q WHERE q.tenant_id = v_tenant AND q.name = p_queue));
    END IF;

    v_body := jsonb_build_object('success', true, 'consumerGroup', p_group);
    IF p_queue IS NOT NULL THEN
        v_body := v_body || jsonb_build_object('queueName', p_queue);
    END IF;
    RETURN v_body || jsonb_build_object('deletedPartitions', v_deleted,
                                        'metadataDeleted', COALESCE(p_delete_metadata, true),
                                        'queues', to_jsonb(v_queues));
END;
$$;

-- Stores a durable subscription timestamp for the group: the group-wide row (used when the group first meets a
-- queue) and every per-queue registration the group already has in the tenant. Cursors that exist are not moved
-- (that is what seek is for); partitions the group first contacts later, and the whole group after a delete that
-- keeps the metadata, start at the first message at or after the timestamp, whatever the pop asks for.
-- Returns {"success":true,"consumerGroup","subscriptionTimestamp","queuesUpdated"}.
CREATE OR REPLACE FUNCTION queen.consumer_group_subscription(p_tenant uuid, p_group text, p_ts timestamptz)
RETURNS jsonb
LANGUAGE plpgsql
AS $$
DECLARE
    v_updated integer;
BEGIN
    p_tenant := COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001');
    INSERT INTO queen.consumer_groups_metadata AS m
        (tenant_id, consumer_group, queue_id, partition_name, namespace, task, subscription_mode,
         subscription_timestamp)
    VALUES (p_tenant, p_group, NULL, '', '', '', 'timestamp', p_ts)
    ON CONFLICT (tenant_id, consumer_group, queue_id, partition_name, namespace, task) DO UPDATE SET
        subscription_mode = 'timestamp', subscription_timestamp = EXCLUDED.subscription_timestamp;

    UPDATE queen.consumer_groups_metadata m
    SET subscription_mode = 'timestamp', subscription_timestamp = p_ts
    WHERE m.tenant_id = p_tenant AND m.consumer_group = p_group AND m.queue_id IS NOT NULL
      AND m.partition_name = '';
    GET DIAGNOSTICS v_updated = ROW_COUNT;

    RETURN jsonb_build_object('success', true, 'consumerGroup', p_group,
                              'subscriptionTimestamp', queen._log_ts(p_ts), 'queuesUpdated', v_updated);
END;
$$;

-- Moves the group's cursor on every partition of a queue (p_partition NULL) or on one named partition:
--   p_to_end      -> committed = last_offset: everything already stored is skipped;
--   p_ts          -> committed = (first retained segment with created_at >= p_ts).base_offset - 1, else last_offset:
--                    the group receives again exactly the messages whose createdAt is at or after p_ts, in order
--                    (createdAt is the segment's stamp, which only grows with the offset inside a partition).
-- A cursor row the group does not have yet is created, and a group not registered on the queue yet is registered.
-- The lease, the retry budget and the redelivery counter of
-- the (partition, group) are reset. A queue or partition the tenant does not have answers
-- {"success":false,"error":"Queue not found or has no partitions"} / {"success":false,"error":"Partition not found"}
-- (404 at the route).
CREATE OR REPLACE FUNCTION queen.consumer_group_seek(
    p_tenant    uuid,
    p_group     text,
    p_queue     text,
    p_partition text,
    p_to_end    boolean,
    p_ts        timestamptz
) RETURNS jsonb
LANGUAGE plpgsql
AS $$
DECLARE
    v_tenant    uuid := COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001');
    v_to_end    boolean := COALESCE(p_to_end, false) OR p_ts IS NULL;
    v_updated   integer := 0;
    v_committed bigint;
    v_qid       uuid;
    v_p         record;
BEGIN
    SELECT q.id INTO v_qid FROM queen.queues q WHERE q.tenant_id = v_tenant AND q.name = p_queue;

    FOR v_p IN
        SELECT p.id, p.last_offset, p.log_start
        FROM queen.log_partitions p
        WHERE p.queue_id = v_qid AND (p_partition IS NULL OR p.name = p_partition)
        ORDER BY p.id
    LOOP
        v_committed := queen._log_cursor_start(v_p.id, v_p.log_start, v_p.last_offset,
                                               CASE WHEN v_to_end THEN 'new' ELSE 'timestamp' END, p_ts);
        INSERT INTO queen.log_consumers AS c (partition_id, consumer_group, committed)
        VALUES (v_p.id, p_group, v_committed)
        ON CONFLICT (partition_id, consumer_group) DO UPDATE SET
            committed = EXCLUDED.committed,
            batch_end = NULL, worker_id = NULL, lease_expires_at = NULL, lease_acquired_at = NULL,
            lease_conflated = false, batch_retry_count = 0, attempt_offset = NULL, attempt_count = 0;
        v_updated := v_updated + 1;
    END LOOP;

    IF v_updated = 0 THEN
        IF p_partition IS NOT NULL THEN
            RETURN jsonb_build_object('success', false, 'error', 'Partition not found', 'consumerGroup', p_group,
                                      'queueName', p_queue, 'partitionName', p_partition);
        END IF;
        RETURN jsonb_build_object('success', false, 'error', 'Queue not found or has no partitions',
                                  'consumerGroup', p_group, 'queueName', p_queue, 'partitionsUpdated', 0);
    END IF;

    DELETE FROM queen.consumer_watermarks w WHERE w.queue_id = v_qid AND w.consumer_group = p_group;

    -- A group meeting the queue here is registered on it, as a pop would have registered it: the listing
    -- (queen.consumer_groups) finds groups by their registrations, and a partition the group first meets later starts
    -- at the seek's time (everything after it). A registration the group has already is left as it is.
    INSERT INTO queen.consumer_groups_metadata
        (tenant_id, consumer_group, queue_id, partition_name, namespace, task, subscription_mode,
         subscription_timestamp)
    VALUES (v_tenant, p_group, v_qid, '', '', '', 'timestamp', CASE WHEN v_to_end THEN now() ELSE p_ts END)
    ON CONFLICT DO NOTHING;

    IF p_partition IS NOT NULL THEN
        RETURN jsonb_build_object('success', true, 'consumerGroup', p_group, 'queueName', p_queue,
                                  'partitionName', p_partition, 'seekToEnd', v_to_end,
                                  'targetTimestamp', CASE WHEN v_to_end THEN NULL ELSE queen._log_ts(p_ts) END,
                                  'updated', true);
    END IF;
    RETURN jsonb_build_object('success', true, 'consumerGroup', p_group, 'queueName', p_queue,
                              'seekToEnd', v_to_end,
                              'targetTimestamp', CASE WHEN v_to_end THEN NULL ELSE queen._log_ts(p_ts) END,
                              'partitionsUpdated', v_updated);
END;
$$;

-- The group's stored conflation policy on a queue (queen2-contract.md §6.2): what a conflating pop that found nothing
-- echoes. NULL when the group has not met the queue (or the queue is not the tenant's).
CREATE OR REPLACE FUNCTION queen.consumer_group_conflation(p_tenant uuid, p_queue text, p_group text)
RETURNS boolean
LANGUAGE sql STABLE
AS $$
    SELECT m.conflation
    FROM queen.queues q
    JOIN queen.consumer_groups_metadata m
      ON m.queue_id = q.id AND m.tenant_id = q.tenant_id AND m.consumer_group = p_group
     AND m.partition_name = '' AND m.namespace = '' AND m.task = ''
    WHERE q.tenant_id = COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001') AND q.name = p_queue
$$;

-- POST /api/v1/consumer-groups/positions (queen2-contract.md §7): where the group reads next on each partition
-- (committed + 1), null without a cursor. p_entries: a JSON array of {queue, partition} (the broker validated it), or
-- NULL for every position the group has on the tenant's partitions.
CREATE OR REPLACE FUNCTION queen.consumer_group_positions(p_tenant uuid, p_group text, p_entries jsonb)
RETURNS jsonb
LANGUAGE sql STABLE
AS $$
    SELECT jsonb_build_object('consumerGroup', p_group, 'entries', COALESCE((
        SELECT jsonb_agg(jsonb_build_object('queue', x.queue, 'partition', x.partition, 'offset', x.pos,
                                            'metadata', '') ORDER BY x.ord)
        FROM (
            SELECT e.ord, e.v ->> 'queue' AS queue, e.v ->> 'partition' AS partition, c.committed + 1 AS pos
            FROM jsonb_array_elements(p_entries) WITH ORDINALITY AS e(v, ord)
            LEFT JOIN queen.queues q ON q.tenant_id = COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001')
                                    AND q.name = e.v ->> 'queue'
            LEFT JOIN queen.log_partitions p ON p.queue_id = q.id AND p.name = e.v ->> 'partition'
            LEFT JOIN queen.log_consumers c ON c.partition_id = p.id AND c.consumer_group = p_group
            WHERE p_entries IS NOT NULL
            UNION ALL
            SELECT row_number() OVER (ORDER BY q.name, p.name), q.name, p.name, c.committed + 1
            FROM queen.log_consumers c
            JOIN queen.log_partitions p ON p.id = c.partition_id
            JOIN queen.queues q ON q.id = p.queue_id
            WHERE p_entries IS NULL AND c.consumer_group = p_group
              AND q.tenant_id = COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001')
        ) x), '[]'::jsonb))
$$;
