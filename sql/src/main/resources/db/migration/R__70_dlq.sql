-- =====================================================================================================================
-- The dead-letter queue (ENGINE.md §7; API.md §5.10) and bulk redrive tasks (issue #10).
-- A repeatable migration: the rules for editing it are at the top of R__10_common.sql.
-- =====================================================================================================================

--   get_dlq_messages          GET    /api/v1/dlq
--   purge_dlq                 DELETE /api/v1/dlq?queue=&consumerGroup=
--   delete_message            DELETE /api/v1/messages/:pid/:txn             (every group's DLQ row of the address)
--   dlq_row / dlq_newest_for_address   row lookups in front of a move (tenant predicate through _dlq_rows)
--   log_dlq_move                     POST /api/v1/dlq/:id/replay and POST /api/v1/messages/:pid/:txn/retry
--   dlq_redrive_*                    the bulk redrive tasks (RedriveVerticle)

-- ---------------------------------------------------------------------------------------------------------------------
-- GET /api/v1/dlq
-- ---------------------------------------------------------------------------------------------------------------------

-- Filter (optional strings): queue, consumerGroup, partition (exact names), from (inclusive) / to (exclusive) on
-- failed_at, error (case-insensitive substring of the error text; beyond Queen), limit (100), offset (0), cursor (over
-- failed_at DESC, id DESC; offset ignored when present). A malformed from/to, or from after to, is {"error": ...}
-- naming the field (the route checks both first, accepting ISO-8601 only). The error text is a plain substring (strpos, no LIKE pattern), checked on rows the queue-scoped
-- index scan (log_dlq (partition_id, failed_at DESC)) already reads.
-- Tenant rows only (log_dlq has no FK: joined through log_partitions and queues, so rows of deleted partitions vanish).
-- A row carries its snapshot as "payloadText", the stored JSON text as a string (jsonb could not hold every payload the
-- log takes, e.g. "\u0000" or 1e1000000): the broker splices it into the wire row as "data", decrypting an envelope.
CREATE OR REPLACE FUNCTION queen.get_dlq_messages(p_tenant uuid, p_filter jsonb)
RETURNS jsonb
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_page   record  := queen._msg_page(p_tenant, p_filter, 2, 100, NULL, NULL);
    v_group  text    := NULLIF(v_page.f->>'consumerGroup', '');
    v_err    text    := lower(NULLIF(v_page.f->>'error', ''));
BEGIN
    IF v_page.error IS NOT NULL THEN
        RETURN jsonb_build_object('error', v_page.error);
    END IF;
    IF v_page.ts_from > v_page.ts_to THEN
        RETURN jsonb_build_object('error', 'invalid from: ' || (v_page.f->>'from') || ' is after to: '
                                           || (v_page.f->>'to'));
    END IF;

    -- One statement builds the reply: the page's rows, their count, and the cursor of its last row when it is full.
    RETURN (WITH page AS (
        SELECT d.id, d.transaction_id, d.partition_id, q.name AS qname, p.name AS pname, d.consumer_group, d.error,
               COALESCE(d.retry_count, q.retry_limit) AS retry_count, d.payload, d.failed_at
        FROM queen.log_dlq d
        JOIN queen.log_partitions p ON p.id = d.partition_id
        JOIN queen.queues q ON q.id = p.queue_id
        WHERE q.tenant_id = v_page.tenant
          AND (v_page.queue IS NULL OR q.name = v_page.queue)
          AND (v_group IS NULL OR d.consumer_group = v_group)
          AND (v_page.part IS NULL OR p.name = v_page.part)
          AND (v_err IS NULL OR strpos(lower(COALESCE(d.error, '')), v_err) > 0)
          AND (v_page.ts_from IS NULL OR d.failed_at >= v_page.ts_from)
          AND (v_page.ts_to IS NULL OR d.failed_at < v_page.ts_to)
          AND (v_page.c_ts IS NULL OR d.failed_at < v_page.c_ts OR (d.failed_at = v_page.c_ts AND d.id < v_page.c_id))
        ORDER BY d.failed_at DESC, d.id DESC
        LIMIT v_page.lim OFFSET v_page.off
    )
    SELECT jsonb_build_object(
        'messages', COALESCE(jsonb_agg(jsonb_build_object(
               'id', pg.id,
               'transactionId', pg.transaction_id,
               'partitionId', pg.partition_id,
               'queue', pg.qname,
               'partition', pg.pname,
               'consumerGroup', pg.consumer_group,
               'errorMessage', pg.error,
               'retryCount', pg.retry_count,
               'payloadText', COALESCE(pg.payload, 'null'),
               'producerSub', NULL,
               'createdAt', queen._msg_ts(pg.failed_at),
               'failedAt', queen._msg_ts(pg.failed_at))
             ORDER BY pg.failed_at DESC, pg.id DESC), '[]'::jsonb),
        'pagination', jsonb_build_object('limit', v_page.lim, 'offset', v_page.off),
        'total', count(*),
        'nextCursor', CASE WHEN count(*) = v_page.lim THEN queen._msg_cursor_encode(2,
                          (array_agg(pg.failed_at ORDER BY pg.failed_at, pg.id))[1],
                          (array_agg(pg.id ORDER BY pg.failed_at, pg.id))[1], 0) END)
    FROM page pg);
END;
$$;

-- ---------------------------------------------------------------------------------------------------------------------
-- The tenant's rows: deletes, and the row lookups in front of a move
-- ---------------------------------------------------------------------------------------------------------------------
DROP FUNCTION IF EXISTS queen._dlq_row_by_id(uuid, uuid);

-- The tenant's dead-letter rows with their queue and partition names (log_dlq has no FK: joined through log_partitions
-- and queues). Plain SQL and STABLE: the planner inlines it into the deletes and the two lookups below, which add
-- their predicates (a queue name; an index range on the address; a primary-key probe).
CREATE OR REPLACE FUNCTION queen._dlq_rows(p_tenant uuid)
RETURNS TABLE (id uuid, partition_id uuid, queue text, partition text, consumer_group text, transaction_id text,
               message_id uuid, payload text, "offset" bigint, retry_count integer, failed_at timestamptz)
LANGUAGE sql STABLE
AS $$
    SELECT d.id, d.partition_id, q.name::text, p.name, d.consumer_group, d.transaction_id, d.message_id,
           d.payload, d."offset", d.retry_count, d.failed_at
    FROM queen.log_dlq d
    JOIN queen.log_partitions p ON p.id = d.partition_id
    JOIN queen.queues q ON q.id = p.queue_id
    WHERE q.tenant_id = COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001')
$$;

-- Delete the dead-letter rows of p_ids (ids the caller took from _dlq_rows, so only the tenant's): {"deleted": n}.
CREATE OR REPLACE FUNCTION queen._dlq_delete(p_ids uuid[])
RETURNS jsonb
LANGUAGE sql
AS $$
    WITH del AS (
        DELETE FROM queen.log_dlq d WHERE d.id = ANY (p_ids)
        RETURNING d.id
    )
    SELECT jsonb_build_object('deleted', (SELECT count(*) FROM del))
$$;

-- DELETE /api/v1/dlq?queue=<exact>&consumerGroup=<optional>: exact queue name under the tenant; p_group NULL or '' =
-- every group. An empty queue deletes nothing (never a tenant-wide purge).
CREATE OR REPLACE FUNCTION queen.purge_dlq(p_tenant uuid, p_queue text, p_group text)
RETURNS jsonb
LANGUAGE sql
AS $$
    SELECT queen._dlq_delete(ARRAY(
        SELECT r.id FROM queen._dlq_rows(p_tenant) r
        WHERE r.queue = NULLIF(p_queue, '') AND (NULLIF(p_group, '') IS NULL OR r.consumer_group = p_group)))
$$;

-- DELETE /api/v1/messages/:pid/:txn: every consumer group's dead-letter row of one message address (partition id,
-- transaction id) under the tenant.
CREATE OR REPLACE FUNCTION queen.delete_message(p_tenant uuid, p_pid uuid, p_txn text)
RETURNS jsonb
LANGUAGE sql
AS $$
    SELECT queen._dlq_delete(ARRAY(
        SELECT r.id FROM queen._dlq_rows(p_tenant) r WHERE r.partition_id = p_pid AND r.transaction_id = p_txn))
$$;

-- Row by id (text, as the route received it). PostgreSQL's uuid input decides what parses (braces, no hyphens,
-- upper case ...); anything it rejects is simply no row, never an error.
CREATE OR REPLACE FUNCTION queen.dlq_row(p_tenant uuid, p_id text)
RETURNS TABLE (id uuid, partition_id uuid, queue text, partition text, consumer_group text, transaction_id text,
               message_id uuid, payload text, "offset" bigint, retry_count integer, failed_at timestamptz)
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_id uuid;
BEGIN
    IF p_id IS NULL THEN
        RETURN;
    END IF;
    BEGIN
        v_id := btrim(p_id)::uuid;
    EXCEPTION WHEN invalid_text_representation OR string_data_right_truncation THEN
        RETURN;
    END;
    RETURN QUERY SELECT * FROM queen._dlq_rows(p_tenant) r WHERE r.id = v_id;
END;
$$;

-- The newest (failed_at DESC) row of an address under the tenant, at most one: the retry route moves only that one.
CREATE OR REPLACE FUNCTION queen.dlq_newest_for_address(p_tenant uuid, p_pid uuid, p_txn text)
RETURNS TABLE (id uuid, partition_id uuid, queue text, partition text, consumer_group text, transaction_id text,
               message_id uuid, payload text, "offset" bigint, retry_count integer, failed_at timestamptz)
LANGUAGE sql STABLE
AS $$
    SELECT * FROM queen._dlq_rows(p_tenant) r
    WHERE r.partition_id = p_pid AND r.transaction_id = p_txn
    ORDER BY r.failed_at DESC, r.id DESC
    LIMIT 1
$$;

-- ---------------------------------------------------------------------------------------------------------------------
-- The move primitive (ENGINE §7.3)
-- ---------------------------------------------------------------------------------------------------------------------

-- One transaction, one row, one lock: claim the DLQ row (FOR UPDATE OF d, tenant predicate under the lock), push one
-- packed frame through the ordinary allocator (log_push: destination dedup window, provisioning under p_tenant,
-- verified = -1), and delete the row only when the push wrote something.
--   guards raise (nothing changes): hash not 16 bytes / no blob -> 'QMOVE bad segment'; blank queue or partition ->
--   'QMOVE unnamed destination'.
--   {"result":"gone","dlqId"}                                    no such row for this tenant; nothing provisioned
--   {"result":"duplicate","offset":<existing frame>, ...}        nothing written, the row is KEPT
--   {"result":"moved","offset":<new base>, ...}                  frame written, row deleted
-- Both non-gone verdicts also carry queue, partition, destPartitionId (destination), dlqId, messageId,
-- transactionId, consumerGroup, sourcePartitionId (source row). Locks: DLQ row (PK) -> queues -> log_partitions.
CREATE OR REPLACE FUNCTION queen.log_dlq_move(p_tenant uuid, p_dlq_id uuid, p_queue text, p_partition text,
                                      p_hashes bytea, p_blob bytea)
RETURNS jsonb
LANGUAGE plpgsql
AS $$
DECLARE
    v_tenant uuid := COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001');
    v_row    record;
    v_push   jsonb;
    v_off    bigint;
    v_result text;
BEGIN
    IF p_hashes IS NULL OR octet_length(p_hashes) <> 16 THEN
        RAISE EXCEPTION 'QMOVE bad segment: % hash bytes (want 16)', COALESCE(octet_length(p_hashes), 0) USING ERRCODE = 'QV602';
    END IF;
    IF p_blob IS NULL THEN
        RAISE EXCEPTION 'QMOVE bad segment: no blob' USING ERRCODE = 'QV602';
    END IF;
    IF p_queue IS NULL OR p_queue ~ '^\s*$' OR p_partition IS NULL OR p_partition ~ '^\s*$' THEN
        RAISE EXCEPTION 'QMOVE unnamed destination' USING ERRCODE = 'QV603';
    END IF;

    SELECT d.id, d.partition_id, d.consumer_group, d.message_id, d.transaction_id
    INTO v_row
    FROM queen.log_dlq d
    JOIN queen.log_partitions p ON p.id = d.partition_id
    JOIN queen.queues q ON q.id = p.queue_id
    WHERE d.id = p_dlq_id AND q.tenant_id = v_tenant
    FOR UPDATE OF d;
    IF NOT FOUND THEN
        RETURN jsonb_build_object('result', 'gone', 'dlqId', p_dlq_id);
    END IF;

    v_push := queen.log_push(v_tenant, p_queue, p_partition, 1, p_hashes, p_blob, -1);

    IF v_push->>'status' = 'duplicate' THEN
        v_result := 'duplicate';
        v_off := (v_push->'dups'->0->>'off')::bigint;
    ELSE
        v_result := 'moved';
        v_off := (v_push->>'baseOffset')::bigint;
        DELETE FROM queen.log_dlq d WHERE d.id = v_row.id;
    END IF;

    RETURN jsonb_build_object(
        'result', v_result,
        'queue', p_queue,
        'partition', p_partition,
        'offset', v_off,
        'destPartitionId', v_push->'partitionId',
        'dlqId', v_row.id,
        'messageId', v_row.message_id,
        'transactionId', v_row.transaction_id,
        'consumerGroup', v_row.consumer_group,
        'sourcePartitionId', v_row.partition_id);
END;
$$;

-- The next dead-letter row of a task after its keyset position, under the task's tenant and filters.
CREATE OR REPLACE FUNCTION queen.dlq_redrive_next(p_task uuid)
RETURNS TABLE (id uuid, failed_at timestamptz)
LANGUAGE sql STABLE AS $$
  SELECT d.id, d.failed_at
    FROM queen.dlq_redrive_tasks t
    JOIN queen.queues q ON q.tenant_id = t.tenant_id AND q.name = t.queue
    JOIN queen.log_partitions p ON p.queue_id = q.id AND (t.partition IS NULL OR p.name = t.partition)
    JOIN queen.log_dlq d ON d.partition_id = p.id AND (t.consumer_group IS NULL OR d.consumer_group = t.consumer_group)
   WHERE t.id = p_task
     AND (t.after_failed_at IS NULL OR (d.failed_at, d.id) > (t.after_failed_at, t.after_id))
   ORDER BY d.failed_at, d.id
   LIMIT 1
$$;

-- Claims a running task nobody holds (or whose holder stopped heart-beating): the take-over of a dead node's task.
CREATE OR REPLACE FUNCTION queen.dlq_redrive_claim(p_owner text, p_stale_ms bigint)
RETURNS SETOF queen.dlq_redrive_tasks
LANGUAGE sql AS $$
  UPDATE queen.dlq_redrive_tasks t
     SET owner = p_owner, heartbeat_at = now(), updated_at = now()
   WHERE t.id = (SELECT c.id FROM queen.dlq_redrive_tasks c
                  WHERE c.status = 'running'
                    AND (c.owner IS NULL OR c.heartbeat_at IS NULL
                         OR c.heartbeat_at < now() - make_interval(secs => p_stale_ms / 1000.0))
                  ORDER BY c.created_at
                  LIMIT 1
                  FOR UPDATE SKIP LOCKED)
  RETURNING t.*
$$;

-- Records one move's verdict and advances the keyset while this owner still holds the task, so a move that was in
-- flight when the task was cancelled is still counted (the counts always add up). Returns false when the task is no
-- longer running (cancelled) or was taken over: the runner stops.
CREATE OR REPLACE FUNCTION queen.dlq_redrive_record(p_task uuid, p_owner text, p_verdict text, p_row uuid,
                                            p_failed_at timestamptz, p_error text)
RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  v_status text;
BEGIN
  UPDATE queen.dlq_redrive_tasks
     SET moved = moved + (p_verdict = 'moved')::int,
         duplicate = duplicate + (p_verdict = 'duplicate')::int,
         gone = gone + (p_verdict = 'gone')::int,
         failed = failed + (p_verdict = 'failed')::int,
         last_error = COALESCE(p_error, last_error),
         after_failed_at = COALESCE(p_failed_at, after_failed_at),
         after_id = COALESCE(p_row, after_id),
         heartbeat_at = now(), updated_at = now()
   WHERE id = p_task AND owner = p_owner
  RETURNING status INTO v_status;
  RETURN FOUND AND v_status = 'running';
END;
$$;

-- ---------------------------------------------------------------------------------------------------------------------
-- Bulk redrive in chunks (issue 23): one transaction moves up to a chunk of rows with one segment per destination
-- ---------------------------------------------------------------------------------------------------------------------

-- The task's next p_limit dead-letter rows after its keyset position (failed_at, id ascending), locked FOR UPDATE OF
-- the DLQ row for the caller's transaction, with what packing their frames needs: the source queue and partition
-- names and the payload snapshot (its stored text). Only while p_owner holds the running task (otherwise no rows).
-- The keyset is a bound of the (failed_at, id) index scan (idx_log_dlq_failed_at_id), so a chunk reads about its own
-- rows, not every remaining row of the queue (a join filter on the task's position made each chunk read and sort the
-- whole rest of the queue's DLQ: quadratic in the rows of a bulk redrive). The task's partitions are resolved first.
-- Then the push locks of the chunk's destinations, in ascending key order (R__20_push.sql, "Push lock").
CREATE OR REPLACE FUNCTION queen.dlq_redrive_rows(p_task uuid, p_owner text, p_limit integer)
RETURNS TABLE (id uuid, failed_at timestamptz, queue text, partition text, payload text)
LANGUAGE plpgsql AS $$
DECLARE
  v_task     queen.dlq_redrive_tasks;
  v_pids     uuid[];
  v_names    text[];
  v_ids      uuid[];
  v_at       timestamptz[];
  v_rnames   text[];
  v_payloads text[];
BEGIN
  SELECT * INTO v_task FROM queen.dlq_redrive_tasks t
   WHERE t.id = p_task AND t.owner = p_owner AND t.status = 'running';
  IF NOT FOUND THEN
    RETURN;
  END IF;
  SELECT array_agg(p.id), array_agg(p.name) INTO v_pids, v_names
    FROM queen.queues q
    JOIN queen.log_partitions p ON p.queue_id = q.id AND (v_task.partition IS NULL OR p.name = v_task.partition)
   WHERE q.tenant_id = v_task.tenant_id AND q.name = v_task.queue;
  IF v_pids IS NULL THEN
    RETURN;
  END IF;
  SELECT array_agg(r.id ORDER BY r.failed_at, r.id), array_agg(r.failed_at ORDER BY r.failed_at, r.id),
         array_agg(r.name ORDER BY r.failed_at, r.id), array_agg(r.payload ORDER BY r.failed_at, r.id)
    INTO v_ids, v_at, v_rnames, v_payloads
    FROM (SELECT d.id, d.failed_at, n.name, d.payload
            FROM queen.log_dlq d
            JOIN unnest(v_pids, v_names) AS n(pid, name) ON n.pid = d.partition_id
           WHERE (d.failed_at, d.id) > (COALESCE(v_task.after_failed_at, '-infinity'::timestamptz),
                                        COALESCE(v_task.after_id, '00000000-0000-0000-0000-000000000000'::uuid))
             AND (v_task.consumer_group IS NULL OR d.consumer_group = v_task.consumer_group)
           ORDER BY d.failed_at, d.id
           LIMIT p_limit
           FOR UPDATE OF d) r;
  IF v_ids IS NULL THEN
    RETURN;
  END IF;
  -- The chunk moves its rows with one push per destination, in row order (RedriveChunk): the push locks of all its
  -- destinations that exist are taken here, in the pushes' order (R__20_push.sql, "Push lock"), so it never holds one
  -- while waiting for another that a push bundle or delete_queue holds (a deadlock). After the row locks, as
  -- log_dlq_move takes them.
  PERFORM pg_advisory_xact_lock(20821, l.k)
     FROM (SELECT DISTINCT hashtext(p.id::text) AS k
             FROM (SELECT DISTINCT x.pn FROM unnest(v_rnames) AS x(pn)) r
             JOIN queen.queues q ON q.tenant_id = v_task.tenant_id AND q.name = COALESCE(v_task.dest_queue, v_task.queue)
             JOIN queen.log_partitions p ON p.queue_id = q.id AND p.name = COALESCE(v_task.dest_partition, r.pn)
            ORDER BY 1) l;
  RETURN QUERY
  SELECT u.id, u.failed_at, v_task.queue, u.name, u.payload
    FROM unnest(v_ids, v_at, v_rnames, v_payloads) WITH ORDINALITY AS u(id, failed_at, name, payload, ord)
   ORDER BY u.ord;
END;
$$;

-- Moves the rows p_ids (already locked by this transaction through dlq_redrive_rows) as ONE packed segment of
-- p_count frames (frame i carries transaction id dlq:<p_ids[i]>) into (p_queue, p_partition) of p_tenant, and deletes
-- them: {"result":"moved","partitionId","baseOffset","moved":<rows deleted>}.
-- No dedup-window probe (log_push's p_verified is "everything verified"): the probe reads every hash of the
-- destination's window, so a bulk redrive that probed each chunk would cost quadratic time in the rows it moves (each
-- chunk re-reads the frames of all earlier chunks). It is sound because the broker alone mints dlq:<row id>: a move
-- deletes its row in the transaction that writes the frame, so a row that still exists (locked here) has no frame.
-- The one way to a duplicate is a client pushing the transaction id dlq:<row id> itself; the single move
-- (log_dlq_move) keeps probing and answers such a row "duplicate".
CREATE OR REPLACE FUNCTION queen.log_dlq_move_many(p_tenant uuid, p_ids uuid[], p_queue text, p_partition text,
                                                   p_hashes bytea, p_blob bytea)
RETURNS jsonb
LANGUAGE plpgsql
AS $$
DECLARE
    v_push  jsonb;
    v_n     integer;
BEGIN
    IF p_ids IS NULL OR cardinality(p_ids) = 0 THEN
        RAISE EXCEPTION 'QMOVE bad segment: no rows' USING ERRCODE = 'QV602';
    END IF;
    IF p_queue IS NULL OR p_queue ~ '^\s*$' OR p_partition IS NULL OR p_partition ~ '^\s*$' THEN
        RAISE EXCEPTION 'QMOVE unnamed destination' USING ERRCODE = 'QV603';
    END IF;
    v_push := queen.log_push(COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001'), p_queue, p_partition,
                             cardinality(p_ids), p_hashes, p_blob, 9223372036854775807);
    DELETE FROM queen.log_dlq d WHERE d.id = ANY (p_ids);
    GET DIAGNOSTICS v_n = ROW_COUNT;
    IF v_n <> cardinality(p_ids) THEN
        RAISE EXCEPTION 'QMOVE % of % rows were gone under the lock', cardinality(p_ids) - v_n, cardinality(p_ids) USING ERRCODE = 'QV604';
    END IF;
    RETURN jsonb_build_object('result', 'moved', 'partitionId', v_push->'partitionId',
                              'baseOffset', (v_push->>'baseOffset')::bigint, 'moved', v_n);
END;
$$;

-- Counts p_moved moves and advances the keyset to (p_failed_at, p_row) while p_owner holds the running task; false
-- otherwise (cancelled or taken over: the caller rolls its chunk back, so counts and moves always agree).
CREATE OR REPLACE FUNCTION queen.dlq_redrive_advance(p_task uuid, p_owner text, p_moved bigint,
                                                     p_failed_at timestamptz, p_row uuid)
RETURNS boolean
LANGUAGE sql AS $$
  WITH u AS (
    UPDATE queen.dlq_redrive_tasks
       SET moved = moved + p_moved, after_failed_at = p_failed_at, after_id = p_row,
           heartbeat_at = now(), updated_at = now()
     WHERE id = p_task AND owner = p_owner AND status = 'running'
    RETURNING 1)
  SELECT EXISTS (SELECT 1 FROM u)
$$;
