-- Push with the broker's dedup promise (ENGINE §3.3 "verified", §3.6 "broker dedup cache").
--
-- log_push_multi_v2 is log_push_multi_v1 plus what the broker dedup cache and bundles over many partitions need:
--   * p_expect[i]: the partition id the broker's promise p_verified[i] was made about. The promise is honoured only
--     when the element resolves to that partition, checked after the partition rows are locked, so a queue deleted
--     and re-created under the broker's feet (new partition id, offsets from 0 again) is always probed in full.
--     A NULL p_expect keeps v1's meaning: p_verified applies as given.
--   * every result element carries windowSeconds, the partition's dedup window at the time of the write, which tells
--     the broker how long its cached hashes stay relevant.
--   * the steady state (distinct partitions, no probe needed) allocates every segment of the bundle in three
--     set-based statements, and names resolve by unique-key probes, so a bundle over many partitions costs
--     O(segments) index probes instead of one plpgsql call per segment and a scan of the queue's partitions.
-- log_push_multi_v1 becomes a thin wrapper with its old results.

CREATE FUNCTION queen.log_push_multi_v2(
    p_tenants    uuid[],
    p_queues     text[],
    p_partitions text[],
    p_counts     integer[],
    p_hashes     bytea[],
    p_blobs      bytea[],
    p_verified   bigint[] DEFAULT NULL,
    p_expect     uuid[] DEFAULT NULL
) RETURNS jsonb
LANGUAGE plpgsql
AS $$
DECLARE
    v_n       integer := COALESCE(cardinality(p_queues), 0);
    v_pids    uuid[];
    v_windows integer[];
    v_out     jsonb := '[]'::jsonb;
    v_i       integer;
    v_miss    boolean;
    v_vers    bigint[];
    v_fast    boolean;
    v_now     timestamptz;
BEGIN
    IF COALESCE(cardinality(p_tenants), 0) <> v_n
       OR COALESCE(cardinality(p_partitions), 0) <> v_n
       OR COALESCE(cardinality(p_counts), 0) <> v_n
       OR COALESCE(cardinality(p_hashes), 0) <> v_n
       OR COALESCE(cardinality(p_blobs), 0) <> v_n
       OR (p_verified IS NOT NULL AND cardinality(p_verified) <> v_n)
       OR (p_expect IS NOT NULL AND cardinality(p_expect) <> v_n) THEN
        RAISE EXCEPTION 'QMULTI misaligned arrays: tenants=% queues=% partitions=% counts=% hashes=% blobs=%',
            COALESCE(cardinality(p_tenants), 0), v_n, COALESCE(cardinality(p_partitions), 0),
            COALESCE(cardinality(p_counts), 0), COALESCE(cardinality(p_hashes), 0), COALESCE(cardinality(p_blobs), 0);
    END IF;
    IF v_n = 0 THEN
        RETURN v_out;
    END IF;

    FOR v_i IN 1 .. v_n LOOP
        IF p_counts[v_i] IS NULL OR p_counts[v_i] < 1 OR p_hashes[v_i] IS NULL
           OR octet_length(p_hashes[v_i]) <> 16 * p_counts[v_i] THEN
            RAISE EXCEPTION 'QPUSH bad segment: element % count=% hashes=% bytes',
                v_i - 1, p_counts[v_i], octet_length(p_hashes[v_i]);
        END IF;
        IF p_queues[v_i] IS NULL OR p_blobs[v_i] IS NULL THEN
            RAISE EXCEPTION 'QMULTI element % has no queue or no blob', v_i - 1;
        END IF;
    END LOOP;

    -- Steady state: everything exists, one lookup per element, no inserts. Each lookup is a LATERAL ... LIMIT 1 so
    -- it stays a probe of the unique (tenant, name) and (queue, name) keys: a join the planner is free to reorder
    -- turns into a scan of every partition of the queue when its statistics are stale (a queue growing from 0 to
    -- 10,000 partitions under load is exactly that).
    SELECT bool_or(r.pid IS NULL) INTO v_miss
    FROM unnest(p_tenants, p_queues, p_partitions) AS u(t, qn, pn)
    LEFT JOIN LATERAL (
        SELECT p.id AS pid, q.dedup_window_seconds AS window_s
        FROM queen.queues q
        JOIN queen.log_partitions p ON p.queue_id = q.id AND p.name = COALESCE(u.pn, 'Default')
        WHERE q.tenant_id = COALESCE(u.t, '00000000-0000-0000-0000-000000000001') AND q.name = u.qn
        LIMIT 1) r ON true;

    IF v_miss THEN
        INSERT INTO queen.queues (tenant_id, name, namespace, task)
        SELECT DISTINCT COALESCE(u.t, '00000000-0000-0000-0000-000000000001'::uuid), u.q,
               queen._log_name_ns(u.q), queen._log_name_task(u.q)
        FROM unnest(p_tenants, p_queues) AS u(t, q)
        ORDER BY 1, 2
        ON CONFLICT (tenant_id, name) DO NOTHING;

        INSERT INTO queen.log_partitions (queue_id, name)
        SELECT DISTINCT q.id, COALESCE(u.pn, 'Default')
        FROM unnest(p_tenants, p_queues, p_partitions) AS u(t, qn, pn)
        JOIN queen.queues q ON q.tenant_id = COALESCE(u.t, '00000000-0000-0000-0000-000000000001') AND q.name = u.qn
        ORDER BY 1, 2
        ON CONFLICT (queue_id, name) DO NOTHING;
    END IF;

    SELECT array_agg(r.pid ORDER BY u.ord), array_agg(r.window_s ORDER BY u.ord) INTO v_pids, v_windows
    FROM unnest(p_tenants, p_queues, p_partitions) WITH ORDINALITY AS u(t, qn, pn, ord)
    LEFT JOIN LATERAL (
        SELECT p.id AS pid, q.dedup_window_seconds AS window_s
        FROM queen.queues q
        JOIN queen.log_partitions p ON p.queue_id = q.id AND p.name = COALESCE(u.pn, 'Default')
        WHERE q.tenant_id = COALESCE(u.t, '00000000-0000-0000-0000-000000000001') AND q.name = u.qn
        LIMIT 1) r ON true;
    IF array_position(v_pids, NULL) IS NOT NULL THEN
        RAISE EXCEPTION 'QMULTI unresolved segment % (queue/partition missing after provisioning)',
            array_position(v_pids, NULL) - 1;
    END IF;

    -- Deadlock-free pre-lock: one statement, LockRows above the Sort, so rows lock in ascending id order.
    PERFORM 1 FROM queen.log_partitions p WHERE p.id = ANY (v_pids) ORDER BY p.id FOR NO KEY UPDATE;

    -- The promises SQL honours: only where the element resolved to the partition the promise was made about.
    SELECT array_agg(CASE WHEN p_expect IS NOT NULL AND u.e IS DISTINCT FROM u.pid THEN -1
                          ELSE COALESCE(u.ver, -1) END ORDER BY u.ord)
    INTO v_vers
    FROM unnest(v_pids, p_verified, p_expect) WITH ORDINALITY AS u(pid, ver, e, ord);

    -- Fast path (the broker's steady state): distinct partitions, none of which needs a dedup probe (window off, or
    -- nothing written past the promise), so all of them allocate in three set-based statements instead of one
    -- function call of five statements per segment. Same effects as _log_push_into, one timestamp for the bundle.
    SELECT count(DISTINCT u.pid) = v_n
           AND bool_and(COALESCE(u.win, 0) <= 0 OR p.last_offset <= GREATEST(u.ver, p.txns_start - 1))
    INTO v_fast
    FROM unnest(v_pids, v_vers, v_windows) AS u(pid, ver, win)
    JOIN queen.log_partitions p ON p.id = u.pid;

    IF v_fast THEN
        v_now := clock_timestamp();
        WITH u AS (
            SELECT * FROM unnest(v_pids, p_counts, p_hashes, p_blobs, v_windows) WITH ORDINALITY AS u(pid, cnt, h, b, win, ord)
        ), upd AS (
            UPDATE queen.log_partitions p SET
                last_offset    = p.last_offset + u.cnt,
                last_write_at  = CASE WHEN p.last_write_at < v_now - interval '1 second' THEN v_now ELSE p.last_write_at END,
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
        SELECT jsonb_agg(jsonb_build_object('status', 'queued', 'partitionId', x.pid, 'baseOffset', x.base,
                                            'createdAt', queen._log_ts(v_now), 'windowSeconds', COALESCE(x.win, 0))
                         ORDER BY x.ord)
        INTO v_out
        FROM x;
        RETURN v_out;
    END IF;

    FOR v_i IN 1 .. v_n LOOP
        v_out := v_out || jsonb_build_array(
            queen._log_push_into(v_pids[v_i], p_counts[v_i], p_hashes[v_i], p_blobs[v_i], v_vers[v_i])
            || jsonb_build_object('windowSeconds', COALESCE(v_windows[v_i], 0)));
    END LOOP;
    RETURN v_out;
END;
$$;

CREATE OR REPLACE FUNCTION queen.log_push_multi_v1(
    p_tenants    uuid[],
    p_queues     text[],
    p_partitions text[],
    p_counts     integer[],
    p_hashes     bytea[],
    p_blobs      bytea[],
    p_verified   bigint[] DEFAULT NULL
) RETURNS jsonb
LANGUAGE sql
AS $$
    SELECT COALESCE(jsonb_agg(e.r - 'windowSeconds' ORDER BY e.ord), '[]'::jsonb)
    FROM jsonb_array_elements(queen.log_push_multi_v2(p_tenants, p_queues, p_partitions, p_counts, p_hashes, p_blobs,
                                                      p_verified, NULL)) WITH ORDINALITY AS e(r, ord)
$$;
