-- Push with the broker's dedup promise (ENGINE §3.3 "verified", §3.6 "broker dedup cache").
--
-- log_push_multi_v2 is log_push_multi_v1 plus two things the broker's dedup cache needs:
--   * p_expect[i]: the partition id the broker's promise p_verified[i] was made about. The promise is honoured only
--     when the element resolves to that partition, checked after the partition rows are locked, so a queue deleted
--     and re-created under the broker's feet (new partition id, offsets from 0 again) is always probed in full.
--     A NULL p_expect keeps v1's meaning: p_verified applies as given.
--   * every result element carries windowSeconds, the partition's dedup window at the time of the write, which tells
--     the broker how long its cached hashes stay relevant.
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
    v_ver     bigint;
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

    -- Steady state: everything exists, one join, no inserts.
    SELECT bool_or(p.id IS NULL) INTO v_miss
    FROM unnest(p_tenants, p_queues, p_partitions) AS u(t, q, pn)
    LEFT JOIN queen.queues q ON q.tenant_id = COALESCE(u.t, '00000000-0000-0000-0000-000000000001') AND q.name = u.q
    LEFT JOIN queen.log_partitions p ON p.queue_id = q.id AND p.name = COALESCE(u.pn, 'Default');

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

    SELECT array_agg(p.id ORDER BY u.ord), array_agg(q.dedup_window_seconds ORDER BY u.ord) INTO v_pids, v_windows
    FROM unnest(p_tenants, p_queues, p_partitions) WITH ORDINALITY AS u(t, qn, pn, ord)
    LEFT JOIN queen.queues q ON q.tenant_id = COALESCE(u.t, '00000000-0000-0000-0000-000000000001') AND q.name = u.qn
    LEFT JOIN queen.log_partitions p ON p.queue_id = q.id AND p.name = COALESCE(u.pn, 'Default');
    IF array_position(v_pids, NULL) IS NOT NULL THEN
        RAISE EXCEPTION 'QMULTI unresolved segment % (queue/partition missing after provisioning)',
            array_position(v_pids, NULL) - 1;
    END IF;

    -- Deadlock-free pre-lock: one statement, LockRows above the Sort, so rows lock in ascending id order.
    PERFORM 1 FROM queen.log_partitions p WHERE p.id = ANY (v_pids) ORDER BY p.id FOR NO KEY UPDATE;

    FOR v_i IN 1 .. v_n LOOP
        v_ver := COALESCE(p_verified[v_i], -1);
        IF p_expect IS NOT NULL AND p_expect[v_i] IS DISTINCT FROM v_pids[v_i] THEN
            v_ver := -1;
        END IF;
        v_out := v_out || jsonb_build_array(
            queen._log_push_into(v_pids[v_i], p_counts[v_i], p_hashes[v_i], p_blobs[v_i], v_ver)
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
