-- Push over many partitions: fewer writes and probes per segment.
--
-- A bundle that spreads its frames over thousands of partitions writes about one segment per frame, so what a push
-- costs per segment is what it costs per message. V9's path paid, per segment: two name resolutions (a miss check and
-- the resolution, two unique-key probes each), a pre-lock, a second join for the fast-path check, a partition update
-- that was not HOT whenever last_write_at moved (it is indexed, and it moved at most once a second, so nearly every
-- update of a partition written less than a few times a second), a foreign-key check per inserted segment (a trigger
-- that probes and KEY SHARE-locks the partition row the push already holds), and a jsonb element the broker parsed
-- back. log_push_multi_v3 keeps the effects and the lock order of v2 and removes those costs:
--   * p_hints[i]: the partition id the broker learned for element i from an earlier result. A partition id never
--     changes its (tenant, queue, name), so a hint that still exists is that element's partition: it is locked by
--     primary key with no name probe. Elements without a hint resolve (and provision) by name as before. A partition
--     that no longer exists when it is locked (its queue was deleted meanwhile) raises QSTALE: nothing is written,
--     and the broker forgets its hints and sends the bundle again.
--   * the lock statement returns what the fast-path check needs (last_offset, txns_start, the queue's window).
--   * last_write_at moves at most once every 10 seconds (the pop's empty-scan floor allows 2 minutes of slack), so
--     partition updates stay HOT.
--   * log_segments has no foreign key any more: every writer locks the partition row before it inserts (the lock a
--     deletion waits for), and delete_queue_v1 deletes the segments itself.
--   * one result row per element, no jsonb (the dups list of a duplicate stays jsonb).

ALTER TABLE queen.log_segments DROP CONSTRAINT IF EXISTS log_segments_partition_id_fkey;

CREATE FUNCTION queen.log_push_multi_v3(
    p_tenants    uuid[],
    p_queues     text[],
    p_partitions text[],
    p_counts     integer[],
    p_hashes     bytea[],
    p_blobs      bytea[],
    p_verified   bigint[],
    p_expect     uuid[],
    p_hints      uuid[]
) RETURNS TABLE (idx integer, status text, partition_id uuid, base_offset bigint, created_at timestamptz,
                 window_seconds integer, dups jsonb)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE
    v_n       integer := COALESCE(cardinality(p_queues), 0);
    v_pids    uuid[];
    v_windows integer[];
    v_vers    bigint[];
    v_bad     integer;
    v_missing boolean;
    v_locked  integer;
    v_wanted  integer;
    v_lk_id   uuid[];
    v_lk_last bigint[];
    v_lk_ts   bigint[];
    v_lk_win  integer[];
    v_fast    boolean;
    v_now     timestamptz;
    v_i       integer;
    v_r       jsonb;
BEGIN
    IF COALESCE(cardinality(p_tenants), 0) <> v_n
       OR COALESCE(cardinality(p_partitions), 0) <> v_n
       OR COALESCE(cardinality(p_counts), 0) <> v_n
       OR COALESCE(cardinality(p_hashes), 0) <> v_n
       OR COALESCE(cardinality(p_blobs), 0) <> v_n
       OR (p_verified IS NOT NULL AND cardinality(p_verified) <> v_n)
       OR (p_expect IS NOT NULL AND cardinality(p_expect) <> v_n)
       OR (p_hints IS NOT NULL AND cardinality(p_hints) <> v_n) THEN
        RAISE EXCEPTION 'QMULTI misaligned arrays: tenants=% queues=% partitions=% counts=% hashes=% blobs=%',
            COALESCE(cardinality(p_tenants), 0), v_n, COALESCE(cardinality(p_partitions), 0),
            COALESCE(cardinality(p_counts), 0), COALESCE(cardinality(p_hashes), 0), COALESCE(cardinality(p_blobs), 0);
    END IF;
    IF v_n = 0 THEN
        RETURN;
    END IF;

    SELECT min(u.ord) INTO v_bad
    FROM unnest(p_counts, p_hashes, p_queues, p_blobs) WITH ORDINALITY AS u(c, h, q, b, ord)
    WHERE u.c IS NULL OR u.c < 1 OR u.h IS NULL OR octet_length(u.h) <> 16 * u.c OR u.q IS NULL OR u.b IS NULL;
    IF v_bad IS NOT NULL THEN
        IF p_queues[v_bad] IS NULL OR p_blobs[v_bad] IS NULL THEN
            RAISE EXCEPTION 'QMULTI element % has no queue or no blob', v_bad - 1;
        END IF;
        RAISE EXCEPTION 'QPUSH bad segment: element % count=% hashes=% bytes',
            v_bad - 1, p_counts[v_bad], octet_length(p_hashes[v_bad]);
    END IF;

    -- Hinted elements need no name probe; the others resolve by their unique keys (LATERAL ... LIMIT 1, as in v2).
    SELECT array_agg(COALESCE(u.hint, r.pid) ORDER BY u.ord), bool_or(u.hint IS NULL AND r.pid IS NULL)
    INTO v_pids, v_missing
    FROM unnest(p_tenants, p_queues, p_partitions,
                COALESCE(p_hints, array_fill(NULL::uuid, ARRAY[v_n]))) WITH ORDINALITY AS u(t, qn, pn, hint, ord)
    LEFT JOIN LATERAL (
        SELECT p.id AS pid
        FROM queen.queues q
        JOIN queen.log_partitions p ON p.queue_id = q.id AND p.name = COALESCE(u.pn, 'Default')
        WHERE u.hint IS NULL
          AND q.tenant_id = COALESCE(u.t, '00000000-0000-0000-0000-000000000001') AND q.name = u.qn
        LIMIT 1) r ON true;

    IF v_missing THEN
        INSERT INTO queen.queues (tenant_id, name, namespace, task)
        SELECT DISTINCT COALESCE(u.t, '00000000-0000-0000-0000-000000000001'::uuid), u.q,
               queen._log_name_ns(u.q), queen._log_name_task(u.q)
        FROM unnest(p_tenants, p_queues, v_pids) AS u(t, q, pid)
        WHERE u.pid IS NULL
        ORDER BY 1, 2
        ON CONFLICT (tenant_id, name) DO NOTHING;

        INSERT INTO queen.log_partitions (queue_id, name)
        SELECT DISTINCT q.id, COALESCE(u.pn, 'Default')
        FROM unnest(p_tenants, p_queues, p_partitions, v_pids) AS u(t, qn, pn, pid)
        JOIN queen.queues q ON q.tenant_id = COALESCE(u.t, '00000000-0000-0000-0000-000000000001') AND q.name = u.qn
        WHERE u.pid IS NULL
        ORDER BY 1, 2
        ON CONFLICT (queue_id, name) DO NOTHING;

        SELECT array_agg(COALESCE(u.pid, r.pid) ORDER BY u.ord) INTO v_pids
        FROM unnest(p_tenants, p_queues, p_partitions, v_pids) WITH ORDINALITY AS u(t, qn, pn, pid, ord)
        LEFT JOIN LATERAL (
            SELECT p.id AS pid
            FROM queen.queues q
            JOIN queen.log_partitions p ON p.queue_id = q.id AND p.name = COALESCE(u.pn, 'Default')
            WHERE u.pid IS NULL
              AND q.tenant_id = COALESCE(u.t, '00000000-0000-0000-0000-000000000001') AND q.name = u.qn
            LIMIT 1) r ON true;
        IF array_position(v_pids, NULL) IS NOT NULL THEN
            RAISE EXCEPTION 'QMULTI unresolved segment % (queue/partition missing after provisioning)',
                array_position(v_pids, NULL) - 1;
        END IF;
    END IF;

    -- Deadlock-free lock: one statement, LockRows above the Sort, so rows lock in ascending id order. It also reads
    -- what the fast-path check needs.
    SELECT count(*), array_agg(l.id), array_agg(l.last_offset), array_agg(l.txns_start), array_agg(l.win)
    INTO v_locked, v_lk_id, v_lk_last, v_lk_ts, v_lk_win
    FROM (SELECT p.id, p.last_offset, p.txns_start, q.dedup_window_seconds AS win
          FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
          WHERE p.id = ANY (v_pids)
          ORDER BY p.id
          FOR NO KEY UPDATE OF p) l;
    SELECT count(DISTINCT x) INTO v_wanted FROM unnest(v_pids) AS x;
    IF v_locked <> v_wanted THEN
        RAISE EXCEPTION 'QSTALE % of % partitions of this bundle no longer exist', v_wanted - v_locked, v_wanted;
    END IF;

    -- The promises SQL honours: only where the element resolved to the partition the promise was made about.
    -- Fast path (the broker's steady state): distinct partitions, none of which needs a dedup probe.
    SELECT array_agg(CASE WHEN p_expect IS NOT NULL AND u.e IS DISTINCT FROM u.pid THEN -1
                          ELSE COALESCE(u.ver, -1) END ORDER BY u.ord),
           array_agg(k.win ORDER BY u.ord),
           v_wanted = v_n AND bool_and(COALESCE(k.win, 0) <= 0 OR k.lo <= GREATEST(
               CASE WHEN p_expect IS NOT NULL AND u.e IS DISTINCT FROM u.pid THEN -1 ELSE COALESCE(u.ver, -1) END,
               k.ts - 1))
    INTO v_vers, v_windows, v_fast
    FROM unnest(v_pids, COALESCE(p_verified, array_fill(NULL::bigint, ARRAY[v_n])),
                COALESCE(p_expect, array_fill(NULL::uuid, ARRAY[v_n]))) WITH ORDINALITY AS u(pid, ver, e, ord)
    JOIN unnest(v_lk_id, v_lk_last, v_lk_ts, v_lk_win) AS k(id, lo, ts, win) ON k.id = u.pid;

    IF v_fast THEN
        v_now := clock_timestamp();
        RETURN QUERY
        WITH u AS (
            SELECT * FROM unnest(v_pids, p_counts, p_hashes, p_blobs, v_windows) WITH ORDINALITY AS u(pid, cnt, h, b, win, ord)
        ), upd AS (
            UPDATE queen.log_partitions p SET
                last_offset    = p.last_offset + u.cnt,
                last_write_at  = CASE WHEN p.last_write_at < v_now - interval '10 seconds' THEN v_now ELSE p.last_write_at END,
                oldest_live_at = COALESCE(p.oldest_live_at, v_now),
                oldest_txn_at  = COALESCE(p.oldest_txn_at, v_now)
            FROM u
            WHERE p.id = u.pid
            RETURNING p.id, p.last_offset AS end_off
        ), x AS (
            SELECT u.pid, u.cnt, u.h, u.b, u.win, u.ord, upd.end_off - u.cnt + 1 AS base, upd.end_off
            FROM u JOIN upd ON upd.id = u.pid
        ), seg AS (
            INSERT INTO queen.log_segments (partition_id, base_offset, end_offset, created_at, blob)
            SELECT x.pid, x.base, x.end_off, v_now, x.b FROM x
        ), txn AS (
            INSERT INTO queen.log_txns (partition_id, base_offset, end_offset, created_at, hashes)
            SELECT x.pid, x.base, x.end_off, v_now, x.h FROM x
        )
        SELECT (x.ord - 1)::integer, 'queued'::text, x.pid, x.base, v_now, COALESCE(x.win, 0), NULL::jsonb
        FROM x ORDER BY x.ord;
        RETURN;
    END IF;

    FOR v_i IN 1 .. v_n LOOP
        v_r := queen._log_push_into(v_pids[v_i], p_counts[v_i], p_hashes[v_i], p_blobs[v_i], v_vers[v_i]);
        idx := v_i - 1;
        status := v_r->>'status';
        partition_id := v_pids[v_i];
        base_offset := (v_r->>'baseOffset')::bigint;
        created_at := (v_r->>'createdAt')::timestamptz;
        window_seconds := COALESCE(v_windows[v_i], 0);
        dups := v_r->'dups';
        RETURN NEXT;
    END LOOP;
END;
$$;

-- The per-segment allocator of the slow path (and of transactions and DLQ moves): as in V2, with last_write_at moving
-- at most once every 10 seconds.
CREATE OR REPLACE FUNCTION queen._log_push_into(p_pid uuid, p_count integer, p_hashes bytea, p_blob bytea,
                                               p_verified bigint)
RETURNS jsonb
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    v_last    bigint;
    v_tstart  bigint;
    v_window  integer;
    v_now     timestamptz;
    v_from    bigint;
    v_dups    jsonb;
    v_end     bigint;
    v_base    bigint;
BEGIN
    SELECT p.last_offset, p.txns_start, q.dedup_window_seconds
    INTO v_last, v_tstart, v_window
    FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
    WHERE p.id = p_pid
    FOR NO KEY UPDATE OF p;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'QPUSH unknown queue/partition: %', p_pid;
    END IF;
    -- Stamped under the partition lock: created_at only grows in offset order within a partition.
    v_now := clock_timestamp();

    IF COALESCE(v_window, 0) > 0 THEN
        v_from := GREATEST(COALESCE(p_verified, -1), v_tstart - 1);
        IF v_last > v_from THEN
            SELECT jsonb_agg(jsonb_build_object('i', d.i, 'off', d.off) ORDER BY d.i)
            INTO v_dups
            FROM (
                SELECT inc.idx AS i, MIN(o.off) AS off
                FROM queen.log_unnest_hashes(p_hashes) inc
                JOIN (
                    SELECT th.h, t.base_offset + th.idx AS off
                    FROM queen.log_txns t
                    CROSS JOIN LATERAL queen.log_unnest_hashes(t.hashes) th
                    WHERE t.partition_id = p_pid
                      AND t.base_offset >= v_tstart
                      AND t.end_offset > v_from
                      AND t.created_at >= v_now - make_interval(secs => v_window)
                ) o ON o.h = inc.h
                GROUP BY inc.idx
            ) d;
            IF v_dups IS NOT NULL THEN
                RETURN jsonb_build_object('status', 'duplicate', 'partitionId', p_pid, 'dups', v_dups);
            END IF;
        END IF;
    END IF;

    UPDATE queen.log_partitions p SET
        last_offset    = p.last_offset + p_count,
        last_write_at  = CASE WHEN p.last_write_at < v_now - interval '10 seconds' THEN v_now ELSE p.last_write_at END,
        oldest_live_at = COALESCE(p.oldest_live_at, v_now),
        oldest_txn_at  = COALESCE(p.oldest_txn_at, v_now)
    WHERE p.id = p_pid
    RETURNING p.last_offset INTO v_end;
    v_base := v_end - p_count + 1;

    INSERT INTO queen.log_segments (partition_id, base_offset, end_offset, created_at, blob)
    VALUES (p_pid, v_base, v_end, v_now, p_blob);
    INSERT INTO queen.log_txns (partition_id, base_offset, end_offset, created_at, hashes)
    VALUES (p_pid, v_base, v_end, v_now, p_hashes);

    RETURN jsonb_build_object('status', 'queued', 'partitionId', p_pid,
                              'baseOffset', v_base, 'createdAt', queen._log_ts(v_now));
END;
$$;

-- v2 keeps its signature and jsonb results as a thin wrapper (one allocator code path).
CREATE OR REPLACE FUNCTION queen.log_push_multi_v2(
    p_tenants    uuid[],
    p_queues     text[],
    p_partitions text[],
    p_counts     integer[],
    p_hashes     bytea[],
    p_blobs      bytea[],
    p_verified   bigint[] DEFAULT NULL,
    p_expect     uuid[] DEFAULT NULL
) RETURNS jsonb
LANGUAGE sql
AS $$
    SELECT COALESCE(jsonb_agg(
               CASE WHEN r.status = 'queued'
                    THEN jsonb_build_object('status', r.status, 'partitionId', r.partition_id,
                                            'baseOffset', r.base_offset, 'createdAt', queen._log_ts(r.created_at),
                                            'windowSeconds', r.window_seconds)
                    ELSE jsonb_build_object('status', r.status, 'partitionId', r.partition_id, 'dups', r.dups,
                                            'windowSeconds', r.window_seconds) END
               ORDER BY r.idx), '[]'::jsonb)
    FROM queen.log_push_multi_v3(p_tenants, p_queues, p_partitions, p_counts, p_hashes, p_blobs, p_verified, p_expect,
                                 NULL) r
$$;

-- Queue deletion deletes the segments itself (they have no foreign key any more).
CREATE OR REPLACE FUNCTION queen.delete_queue_v1(p_tenant uuid, p_queue text)
RETURNS jsonb
LANGUAGE plpgsql
AS $$
DECLARE
    v_tenant uuid := COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001');
    v_qid    uuid;
    v_pids   uuid[];
BEGIN
    SELECT q.id INTO v_qid FROM queen.queues q WHERE q.tenant_id = v_tenant AND q.name = p_queue FOR UPDATE;
    IF v_qid IS NULL THEN
        RETURN jsonb_build_object('deleted', true, 'queue', p_queue, 'existed', false, 'partitionIds', '[]'::jsonb);
    END IF;

    SELECT COALESCE(array_agg(l.id ORDER BY l.id), '{}') INTO v_pids
    FROM (SELECT p.id FROM queen.log_partitions p WHERE p.queue_id = v_qid ORDER BY p.id FOR UPDATE) l;

    DELETE FROM queen.log_segments s WHERE s.partition_id = ANY (v_pids);
    DELETE FROM queen.log_txns t WHERE t.partition_id = ANY (v_pids);
    DELETE FROM queen.log_dlq d WHERE d.partition_id = ANY (v_pids);
    DELETE FROM queen.retention_history r WHERE r.partition_id = ANY (v_pids);
    DELETE FROM queen.consumer_groups_metadata m WHERE m.queue_id = v_qid;
    DELETE FROM queen.queues q WHERE q.id = v_qid;

    RETURN jsonb_build_object('deleted', true, 'queue', p_queue, 'existed', true,
                              'queueId', v_qid, 'partitionIds', to_jsonb(v_pids));
END;
$$;

-- The overview's ingest rate looks at partitions written in the last 72 s: last_write_at moves at most every 10 s.
CREATE OR REPLACE FUNCTION queen.resources_overview_v1(p_tenant uuid)
RETURNS jsonb
LANGUAGE sql STABLE
AS $$
    WITH qs AS (SELECT * FROM queen._st_queues(p_tenant, NULL, NULL, NULL)),
    ps AS (SELECT q.qid, s.* FROM qs q CROSS JOIN LATERAL queen._st_parts_of(q.qid) s),
    tot AS (
        SELECT count(*) AS parts,
               COALESCE(sum(ps.total), 0) AS total, COALESCE(sum(ps.pending), 0) AS pending,
               COALESCE(sum(ps.processing), 0) AS processing, COALESCE(sum(ps.completed), 0) AS completed,
               COALESCE(sum(ps.failed), 0) AS failed, COALESCE(sum(ps.dead_letter), 0) AS dead_letter,
               COALESCE(max(ps.lag_seconds), 0) AS lag_max,
               COALESCE(round(avg(ps.lag_seconds) FILTER (WHERE ps.lag_seconds > 0), 3), 0) AS lag_avg
        FROM ps),
    ing AS (
        SELECT COALESCE(sum(r.n), 0) AS n
        FROM ps
        CROSS JOIN LATERAL (
            SELECT sum(x.end_offset - x.base_offset + 1) AS n
            FROM (SELECT sg.base_offset, sg.end_offset, sg.created_at FROM queen.log_segments sg
                  WHERE sg.partition_id = ps.pid ORDER BY sg.base_offset DESC LIMIT 5000) x
            WHERE x.created_at >= now() - interval '60 seconds'
        ) r
        WHERE ps.last_write >= now() - interval '72 seconds')
    SELECT jsonb_build_object(
        'queues', (SELECT count(*) FROM qs),
        'partitions', tot.parts,
        'namespaces', (SELECT count(DISTINCT qs.ns) FROM qs WHERE qs.ns <> ''),
        'tasks', (SELECT count(DISTINCT qs.task) FROM qs WHERE qs.task <> ''),
        'messages', jsonb_build_object('total', tot.total, 'pending', tot.pending, 'processing', tot.processing,
                                       'completed', tot.completed, 'failed', tot.failed,
                                       'deadLetter', tot.dead_letter),
        'lag', jsonb_build_object('maxSeconds', tot.lag_max, 'avgSeconds', tot.lag_avg),
        'throughput', jsonb_build_object('ingestedPerSecond', round(ing.n / 60.0, 3), 'processedPerSecond', 0),
        'timestamp', queen._log_ts(now()),
        'statsAge', 0)
    FROM tot, ing
$$;
