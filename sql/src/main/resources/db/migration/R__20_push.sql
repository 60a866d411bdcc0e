-- =====================================================================================================================
-- Push (ENGINE §3).
-- A repeatable migration: the rules for editing it are at the top of R__10_common.sql.
--
--   log_push_multi         the broker's bundle push (LogWriterVerticle): many segments, one transaction
--   log_push               one segment (transactions, DLQ moves)
--   _log_push_into         the per-segment allocator of the slow path, of log_push and of DLQ moves
--   _log_check_encryption  plaintext never lands on an encrypted queue (also called by transactions)
--   _log_partition_lookup  log_push_multi's name-to-partition probe (inlined)
--   _log_push_elements     log_push_multi's elements with the promises it honours (inlined)
--   log_segment_at         the covering segment of an offset (also the decoder's segment fetch)
--   log_dedup_head         where a dedup-cache warm-up starts (DedupReader)
--   log_dedup_txns         a page of a partition's segment hashes, for the dedup cache (DedupReader)
--   queue_encryption       the broker's encryption-flag lookup for one queue
--
-- Generic plans. PL/pgSQL caches each statement's plan, but a statement whose parameters are arrays (every statement
-- of log_push_multi unnests its argument arrays) looks cheaper with a custom plan that knows the array sizes, so the
-- plan cache would keep choosing custom plans and re-plan every statement on every call. That planning was most of
-- PostgreSQL's CPU on the push path (about 2 ms per call with one segment). Every statement of the push functions is a
-- unique-key probe, a LATERAL ... LIMIT 1 probe or an index range over (partition_id, base_offset) whatever the
-- values, so the generic plan is the same plan, made once: they carry SET plan_cache_mode = force_generic_plan
-- (PopCostIT checks it).
--
-- Cost per segment. A bundle that spreads its frames over thousands of partitions writes about one segment per frame,
-- so what a push costs per segment is what it costs per message. Hence:
--   * names resolve by unique-key probes, and p_hints[i] (the partition id the broker learned for element i from an
--     earlier result) is locked by primary key with no name probe at all. A partition id never changes its (tenant,
--     queue, name), so a hint that still exists is that element's partition. A partition that no longer exists when
--     it is locked (its queue was deleted meanwhile) raises QSTALE: nothing is written, and the broker forgets its
--     hints and sends the bundle again.
--   * statements, not rows, are most of the fixed cost of a call (executor start-up, snapshot, plan-cache checks), so
--     the steady state (every partition hinted, promises honoured) runs two: the push locks (below), then check and
--     write in one (validation, QCRYPT, QSTALE and the fast-path test, from the elements and what the statement reads:
--     last_offset, txns_start, the queue's window and encryption flag; the write only when every element passes).
--   * Push lock. Every writer of a partition's last_offset (log_push_multi, _log_push_into) first takes the
--     transaction-scoped advisory lock (20821, hashtext(partition id)), and a transaction that takes several takes them
--     in ascending key order, each key once (delete_queue too, before its row locks; a redrive chunk, whose pushes
--     go one destination after another, in dlq_redrive_rows). It is memory only (no WAL, no
--     row version), and it is what lets the steady state write with ONE statement and no separate row lock: while the
--     locks are held nobody else moves these partitions' last_offset, and a statement started after they were taken
--     reads the last holder's committed write (a transaction is visible before it releases its locks). The update then
--     takes the row locks itself, in whatever order its plan visits the rows; that cannot deadlock with another push
--     (it holds the advisory locks of every row it updates) nor with delete_queue (advisory locks first, same order).
--     Key collisions (two partitions, one hash) only serialise two partitions' pushes; the order stays total.
--     Retention locks one partition row at a time and never moves last_offset (a stale txns_start only makes the
--     fast-path test stricter). When the one statement's checks do not all pass, the general path runs: a
--     lock-and-check statement (FOR NO KEY UPDATE in ascending id order), its refusals, then the per-element path.
--   * last_write_at moves at most once every 10 seconds (the pop's empty-scan floor allows 2 minutes of slack), so
--     partition updates stay HOT (last_write_at is indexed).
--   * log_segments has no foreign key (V12): every writer locks the partition row before it inserts (the lock a
--     deletion waits for), and delete_queue deletes the segments itself.
--   * one result row per element, no jsonb (the dups list of a duplicate stays jsonb).
--
-- Encryption (issue 18). A broker node caches each queue's encryption flag. The cache of a node that did not serve the
-- configure learns of the change late (a cluster announcement) or never (nodes that share this database without being
-- clustered), so a push right after `configure {encryptionEnabled:true}` answered could still be packed in plaintext.
-- The push transaction checks, per segment, the broker's claim "all frames of this segment are encrypted" against the
-- queue's encryption_enabled as read by that transaction. A push transaction that starts after the configure
-- committed sees the new flag, so every push request that starts after the configure answered is checked against
-- it; a mismatch raises QCRYPT and writes nothing, and the broker drops its cached flags, re-reads them, encrypts and
-- sends the frames again. Encrypted frames on a queue that is not encrypted pass: every frame carries its own flag,
-- so readers handle them (a push still in flight when encryption is switched off stays encrypted). log_push_multi reads
-- the flag from the queue row its lock statement joins anyway, for the partition each element resolved to (a hinted
-- element's partition belongs to the element's queue), so the check costs no statement of its own; a queue that does
-- not exist yet is not encrypted. Off the steady state, before it provisions a queue or partition and before any
-- other refusal (QMULTI, QPUSH, QSTALE), it runs the check by name (_log_check_encryption, one unique-key probe per
-- distinct (tenant, queue) with plaintext segments), so QCRYPT comes first and nothing is written.
-- =====================================================================================================================

-- Push one segment (ENGINE §3.3). Returns {"status":"queued","partitionId","baseOffset","createdAt"} or
-- {"status":"duplicate","partitionId","dups":[{"i","off"}]} (nothing written).
CREATE OR REPLACE FUNCTION queen.log_push(
    p_tenant    uuid,
    p_queue     text,
    p_partition text,
    p_count     integer,
    p_hashes    bytea,
    p_blob      bytea,
    p_verified  bigint DEFAULT -1
) RETURNS jsonb
LANGUAGE plpgsql
AS $$
DECLARE
    v_pid uuid;
BEGIN
    IF p_count IS NULL OR p_count < 1 OR p_hashes IS NULL OR octet_length(p_hashes) <> 16 * p_count THEN
        RAISE EXCEPTION 'QPUSH bad segment: count=% hashes=% bytes', p_count, octet_length(p_hashes) USING ERRCODE = 'QV102';
    END IF;
    IF p_queue IS NULL OR p_blob IS NULL THEN
        RAISE EXCEPTION 'QPUSH bad segment: queue and blob are required' USING ERRCODE = 'QV102';
    END IF;
    v_pid := queen._log_ensure_partition(COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001'),
                                         p_queue, COALESCE(p_partition, 'Default'));
    RETURN queen._log_push_into(v_pid, p_count, p_hashes, p_blob, p_verified);
END;
$$;

-- The single per-segment allocator: lock the partition, probe the dedup window, allocate, write the segment row (blob
-- and hashes: one row per segment, V22).
-- p_verified: the broker's promise that no incoming hash exists at an offset <= p_verified (-1 = probe everything).
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
    -- The partition's push lock (see the header, "Push lock") before its row: every writer of last_offset holds it.
    PERFORM pg_advisory_xact_lock(20821, hashtext(p_pid::text));
    SELECT p.last_offset, p.txns_start, q.dedup_window_seconds
    INTO v_last, v_tstart, v_window
    FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
    WHERE p.id = p_pid
    FOR NO KEY UPDATE OF p;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'QPUSH unknown queue/partition: %', p_pid USING ERRCODE = 'QV101';
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
                    FROM queen.log_segments t
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

    INSERT INTO queen.log_segments (partition_id, base_offset, end_offset, created_at, blob, hashes)
    VALUES (p_pid, v_base, v_end, v_now, p_blob, p_hashes);

    RETURN jsonb_build_object('status', 'queued', 'partitionId', p_pid,
                              'baseOffset', v_base, 'createdAt', queen._log_ts(v_now));
END;
$$;

-- Raises QCRYPT when an element whose frames are not all encrypted targets a queue with encryption_enabled.
-- p_encrypted NULL (or a NULL element) means plaintext. A queue that does not exist yet is not encrypted.
CREATE OR REPLACE FUNCTION queen._log_check_encryption(p_tenants uuid[], p_queues text[], p_encrypted boolean[])
RETURNS void
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    v_bad text;
BEGIN
    SELECT string_agg(u.q, ', ' ORDER BY u.q) INTO v_bad
    FROM (SELECT DISTINCT COALESCE(x.t, '00000000-0000-0000-0000-000000000001'::uuid) AS t, x.q
          FROM unnest(p_tenants, p_queues,
                      COALESCE(p_encrypted, array_fill(NULL::boolean, ARRAY[COALESCE(cardinality(p_queues), 0)])))
               AS x(t, q, e)
          WHERE x.e IS NOT TRUE) u
    JOIN queen.queues q ON q.tenant_id = u.t AND q.name = u.q
    WHERE q.encryption_enabled;
    IF v_bad IS NOT NULL THEN
        RAISE EXCEPTION 'QCRYPT plaintext frames for encrypted queue(s): %', v_bad USING ERRCODE = 'QV103';
    END IF;
END;
$$;

-- The partition id of (tenant, queue, partition name) by the unique keys of queues and log_partitions, or no row;
-- no probe at all when p_known is not NULL (the caller already knows the id). NULL tenant and NULL partition name mean
-- the default tenant and 'Default'. Plain SQL, STABLE, no SET clause: log_push_multi's LATERAL joins inline it, so it
-- stays the same LIMIT 1 probe per element (skipped per element when p_known is set) as if it were written out.
CREATE OR REPLACE FUNCTION queen._log_partition_lookup(p_tenant uuid, p_queue text, p_partition text, p_known uuid)
RETURNS TABLE (pid uuid)
LANGUAGE sql STABLE
AS $$
    SELECT p.id
    FROM queen.queues q
    JOIN queen.log_partitions p ON p.queue_id = q.id AND p.name = COALESCE(p_partition, 'Default')
    WHERE p_known IS NULL
      AND q.tenant_id = COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001') AND q.name = p_queue
    LIMIT 1
$$;

-- log_push_multi's elements, one row each with its 1-based position (ord), and the dedup promise SQL honours (ver):
-- p_verified[i] only where the element resolved to the partition the promise was made about (p_expect[i]; a NULL
-- p_expect means as given), else -1 (probe everything). NULL p_verified / p_expect / p_encrypted arrays mean all NULL.
-- Plain SQL, IMMUTABLE, no SET clause: both of log_push_multi's check statements inline it.
CREATE OR REPLACE FUNCTION queen._log_push_elements(p_pids uuid[], p_verified bigint[], p_expect uuid[],
                                                   p_encrypted boolean[], p_counts integer[], p_hashes bytea[],
                                                   p_queues text[], p_blobs bytea[])
RETURNS TABLE (ord bigint, pid uuid, ver bigint, e boolean, c integer, h bytea, qn text, b bytea)
LANGUAGE sql IMMUTABLE
AS $$
    SELECT u.ord, u.pid,
           CASE WHEN p_expect IS NOT NULL AND u.x IS DISTINCT FROM u.pid THEN -1 ELSE COALESCE(u.ver, -1) END,
           u.e, u.c, u.h, u.qn, u.b
    FROM unnest(p_pids, COALESCE(p_verified, array_fill(NULL::bigint, ARRAY[cardinality(p_pids)])),
                COALESCE(p_expect, array_fill(NULL::uuid, ARRAY[cardinality(p_pids)])),
                COALESCE(p_encrypted, array_fill(NULL::boolean, ARRAY[cardinality(p_pids)])),
                p_counts, p_hashes, p_queues, p_blobs)
         WITH ORDINALITY AS u(pid, ver, x, e, c, h, qn, b, ord)
$$;

-- Push many segments in one transaction (ENGINE §3.5), with the broker's dedup promise (ENGINE §3.3 "verified", §3.6
-- "broker dedup cache"). One result row per element, in input order. Provisioning sorted by unique key; every target
-- partition locked up front in ascending id order; the same partition may appear twice (offsets stay dense).
--   * p_verified[i]: the broker's promise that no incoming hash exists at an offset <= p_verified[i] (-1 or NULL =
--     probe everything).
--   * p_expect[i]: the partition id the promise p_verified[i] was made about. The promise is honoured only when the
--     element resolves to that partition, checked after the partition rows are locked, so a queue deleted and
--     re-created under the broker's feet (new partition id, offsets from 0 again) is always probed in full. A NULL
--     p_expect means p_verified applies as given.
--   * p_hints[i]: the partition id learned from an earlier result (see the header); NULL resolves by name.
--   * p_encrypted[i]: true when every frame of element i is encrypted; NULL (or a NULL element) means plaintext.
--   * window_seconds is the partition's dedup window at the time of the write, which tells the broker how long its
--     cached hashes stay relevant.
--   * the steady state (every element hinted, distinct partitions, no probe needed) is two set-based statements in
--     all; otherwise each element goes through _log_push_into.
CREATE OR REPLACE FUNCTION queen.log_push_multi(
    p_tenants    uuid[],
    p_queues     text[],
    p_partitions text[],
    p_counts     integer[],
    p_hashes     bytea[],
    p_blobs      bytea[],
    p_verified   bigint[],
    p_expect     uuid[],
    p_hints      uuid[],
    p_encrypted  boolean[]
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
    v_gone    integer;
    v_wanted  integer;
    v_crypt   uuid[];
    v_now     timestamptz;
    v_i       integer;
    v_r       jsonb;
    v_written bigint;
BEGIN
    IF p_encrypted IS NOT NULL AND cardinality(p_encrypted) <> v_n THEN
        RAISE EXCEPTION 'QMULTI misaligned arrays: queues=% encrypted=%', v_n, cardinality(p_encrypted) USING ERRCODE = 'QV104';
    END IF;
    IF COALESCE(cardinality(p_tenants), 0) <> v_n
       OR COALESCE(cardinality(p_partitions), 0) <> v_n
       OR COALESCE(cardinality(p_counts), 0) <> v_n
       OR COALESCE(cardinality(p_hashes), 0) <> v_n
       OR COALESCE(cardinality(p_blobs), 0) <> v_n
       OR (p_verified IS NOT NULL AND cardinality(p_verified) <> v_n)
       OR (p_expect IS NOT NULL AND cardinality(p_expect) <> v_n)
       OR (p_hints IS NOT NULL AND cardinality(p_hints) <> v_n) THEN
        -- This refusal and the later ones yield to QCRYPT (the broker's QCRYPT retry comes first): off the steady
        -- state, the check by name runs before the refusal is raised.
        PERFORM queen._log_check_encryption(p_tenants, p_queues, p_encrypted);
        RAISE EXCEPTION 'QMULTI misaligned arrays: tenants=% queues=% partitions=% counts=% hashes=% blobs=%',
            COALESCE(cardinality(p_tenants), 0), v_n, COALESCE(cardinality(p_partitions), 0),
            COALESCE(cardinality(p_counts), 0), COALESCE(cardinality(p_hashes), 0), COALESCE(cardinality(p_blobs), 0) USING ERRCODE = 'QV104';
    END IF;
    IF v_n = 0 THEN
        RETURN;
    END IF;

    -- Hinted elements need no name probe: a bundle hinted throughout (the broker's steady state) resolves with no
    -- statement at all; the others resolve by their unique keys (LATERAL ... LIMIT 1).
    IF p_hints IS NOT NULL AND array_position(p_hints, NULL) IS NULL THEN
        v_pids := p_hints;
    ELSE
        SELECT array_agg(COALESCE(u.hint, r.pid) ORDER BY u.ord), bool_or(u.hint IS NULL AND r.pid IS NULL)
        INTO v_pids, v_missing
        FROM unnest(p_tenants, p_queues, p_partitions,
                    COALESCE(p_hints, array_fill(NULL::uuid, ARRAY[v_n]))) WITH ORDINALITY AS u(t, qn, pn, hint, ord)
        LEFT JOIN LATERAL queen._log_partition_lookup(u.t, u.qn, u.pn, u.hint) r ON true;
    END IF;

    -- An element without a queue is refused below (QMULTI) and provisions nothing.
    IF v_missing AND array_position(p_queues, NULL) IS NULL THEN
        -- Nothing is written for a bundle QCRYPT refuses: the check by name comes before provisioning.
        PERFORM queen._log_check_encryption(p_tenants, p_queues, p_encrypted);
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
        LEFT JOIN LATERAL queen._log_partition_lookup(u.t, u.qn, u.pn, u.pid) r ON true;
        IF array_position(v_pids, NULL) IS NOT NULL THEN
            RAISE EXCEPTION 'QMULTI unresolved segment % (queue/partition missing after provisioning)',
                array_position(v_pids, NULL) - 1 USING ERRCODE = 'QV106';
        END IF;
    END IF;

    -- The push locks of the bundle's partitions, in the one order every writer takes them (see the header). From here
    -- on, no other transaction changes these partitions' last_offset until this one ends, and each statement below
    -- takes a new snapshot that sees every write committed by an earlier holder.
    PERFORM pg_advisory_xact_lock(20821, l.k)
    FROM (SELECT DISTINCT hashtext(x::text) AS k FROM unnest(v_pids) x WHERE x IS NOT NULL ORDER BY 1) l;

    -- The steady state in one statement: check (the same tests as the lock-and-check statement below, on what this
    -- statement's snapshot reads) and, only when every element passes, write. The row locks are the update's own.
    -- All or nothing: when the checks fail it writes nothing and returns no row, and the general path below decides
    -- (refusals, dedup probes). A partition deleted after the snapshot is skipped by the update (its row is gone when
    -- the update reaches it): fewer rows than elements, and QSTALE rolls back what was written.
    BEGIN
        v_now := clock_timestamp();
        RETURN QUERY
        WITH u AS (
            SELECT * FROM queen._log_push_elements(v_pids, p_verified, p_expect, p_encrypted, p_counts, p_hashes,
                                                   p_queues, p_blobs)
        ), v AS (
            SELECT u.*, k.id, k.lo, k.ts, k.win, k.enc
            FROM u
            LEFT JOIN (SELECT p.id, p.last_offset AS lo, p.txns_start AS ts, q.dedup_window_seconds AS win,
                              q.encryption_enabled AS enc
                       FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
                       WHERE p.id = ANY (v_pids)) k ON k.id = u.pid
        ), chk AS MATERIALIZED (
            -- COALESCE: bool_and skips a NULL, and a NULL here (a missing count, say) must fail the element.
            SELECT count(DISTINCT v.pid) = v_n
                   AND bool_and(COALESCE(v.id IS NOT NULL
                                         AND NOT (v.enc AND v.e IS NOT TRUE)
                                         AND v.c >= 1 AND v.h IS NOT NULL AND octet_length(v.h) = 16 * v.c
                                         AND v.qn IS NOT NULL AND v.b IS NOT NULL
                                         AND (COALESCE(v.win, 0) <= 0 OR v.lo <= GREATEST(v.ver, v.ts - 1)),
                                         false)) AS ok
            FROM v
        ), upd AS (
            UPDATE queen.log_partitions p SET
                last_offset    = p.last_offset + v.c,
                last_write_at  = CASE WHEN p.last_write_at < v_now - interval '10 seconds' THEN v_now ELSE p.last_write_at END,
                oldest_live_at = COALESCE(p.oldest_live_at, v_now),
                oldest_txn_at  = COALESCE(p.oldest_txn_at, v_now)
            FROM v, chk
            WHERE chk.ok AND p.id = v.pid
            RETURNING p.id, p.last_offset AS end_off
        ), x AS (
            SELECT v.pid, v.c, v.h, v.b, v.win, v.ord, upd.end_off - v.c + 1 AS base, upd.end_off
            FROM v JOIN upd ON upd.id = v.pid
        ), seg AS (
            INSERT INTO queen.log_segments (partition_id, base_offset, end_offset, created_at, blob, hashes)
            SELECT x.pid, x.base, x.end_off, v_now, x.b, x.h FROM x
        )
        SELECT (x.ord - 1)::integer, 'queued'::text, x.pid, x.base, v_now, COALESCE(x.win, 0), NULL::jsonb
        FROM x ORDER BY x.ord;
        GET DIAGNOSTICS v_written = ROW_COUNT;
        IF v_written = v_n THEN
            RETURN;
        END IF;
        IF v_written > 0 THEN
            RAISE EXCEPTION 'QSTALE % of % partitions of this bundle no longer exist', v_n - v_written, v_n USING ERRCODE = 'QV107';
        END IF;
    END;

    -- One statement locks every target partition and checks the bundle, the elements as given and against what the
    -- lock read; the refusals follow in the order QCRYPT, QMULTI/QPUSH, QSTALE.
    --   * Deadlock-free lock: the materialized CTE is LockRows above the Sort, so rows lock in ascending id order;
    --     every locked row matches an element, so the join reads them all.
    --   * QCRYPT: the queues of the locked partitions that an element with plaintext frames targets while their
    --     encryption_enabled, read by this statement, is set (see the header).
    --   * QMULTI/QPUSH: the first malformed element (no queue or blob, a count below 1, hashes not 16 bytes a frame).
    --   * QSTALE: the distinct partitions no element found locked.
    --   * the promises SQL honours: only where the element resolved to the partition the promise was made about.
    -- (The steady state never gets here: the one statement above wrote it.)
    WITH k AS MATERIALIZED (
        SELECT p.id, p.last_offset AS lo, p.txns_start AS ts, q.dedup_window_seconds AS win,
               q.id AS qid, q.encryption_enabled AS enc
        FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
        WHERE p.id = ANY (v_pids)
        ORDER BY p.id
        FOR NO KEY UPDATE OF p
    ), v AS (
        SELECT u.ord, u.pid, u.e, u.c, u.h, u.qn, u.b, k.id, k.lo, k.ts, k.win, k.qid, k.enc, u.ver
        FROM queen._log_push_elements(v_pids, p_verified, p_expect, p_encrypted, p_counts, p_hashes, p_queues,
                                      p_blobs) u
        LEFT JOIN k ON k.id = u.pid
    )
    SELECT array_agg(v.qid) FILTER (WHERE v.enc AND v.e IS NOT TRUE),
           min(v.ord) FILTER (WHERE v.c IS NULL OR v.c < 1 OR v.h IS NULL OR octet_length(v.h) <> 16 * v.c
                                    OR v.qn IS NULL OR v.b IS NULL),
           count(DISTINCT v.pid) FILTER (WHERE v.id IS NULL), count(DISTINCT v.pid),
           array_agg(v.ver ORDER BY v.ord), array_agg(v.win ORDER BY v.ord)
    INTO v_crypt, v_bad, v_gone, v_wanted, v_vers, v_windows
    FROM v;
    IF v_crypt IS NOT NULL THEN
        -- Each queue once, by name (a queue never changes its name, and a queue whose partitions this transaction has
        -- locked cannot be deleted before it ends).
        RAISE EXCEPTION 'QCRYPT plaintext frames for encrypted queue(s): %',
            (SELECT string_agg(q.name, ', ' ORDER BY q.name) FROM queen.queues q WHERE q.id = ANY (v_crypt)) USING ERRCODE = 'QV103';
    END IF;
    IF v_bad IS NOT NULL OR v_gone > 0 THEN
        -- A malformed element, or a hint whose partition is gone: the check by name (which also sees elements left
        -- unresolved) decides first, as it did before any other refusal.
        PERFORM queen._log_check_encryption(p_tenants, p_queues, p_encrypted);
    END IF;
    IF v_bad IS NOT NULL THEN
        IF p_queues[v_bad] IS NULL OR p_blobs[v_bad] IS NULL THEN
            RAISE EXCEPTION 'QMULTI element % has no queue or no blob', v_bad - 1 USING ERRCODE = 'QV105';
        END IF;
        RAISE EXCEPTION 'QPUSH bad segment: element % count=% hashes=% bytes',
            v_bad - 1, p_counts[v_bad], octet_length(p_hashes[v_bad]) USING ERRCODE = 'QV102';
    END IF;
    IF v_gone > 0 THEN
        RAISE EXCEPTION 'QSTALE % of % partitions of this bundle no longer exist', v_gone, v_wanted USING ERRCODE = 'QV107';
    END IF;

    -- Nothing refused, and the one statement above found a dedup probe needed (or a partition twice in the bundle):
    -- each element through the per-segment allocator, under the row locks taken above.
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

-- The covering segment of an offset (backward PK probe + coverage check), or no row; none for a slim row either (its
-- payload is gone: octet_length of an EXTERNAL blob reads the TOAST pointer, not the value).
CREATE OR REPLACE FUNCTION queen.log_segment_at(p_pid uuid, p_off bigint)
RETURNS TABLE (base_offset bigint, end_offset bigint, created_at timestamptz, blob bytea)
LANGUAGE sql STABLE
AS $$
    SELECT s.base_offset, s.end_offset, s.created_at, s.blob
    FROM (
        SELECT s0.base_offset, s0.end_offset, s0.created_at, s0.blob
        FROM queen.log_segments s0
        WHERE s0.partition_id = p_pid AND s0.base_offset <= p_off
        ORDER BY s0.base_offset DESC
        LIMIT 1
    ) s
    WHERE s.end_offset >= p_off
      AND octet_length(s.blob) > 0   -- a slim row (retention took its payload, R__80) is no segment to read
$$;

-- The broker's encryption-flag lookup for one queue (false when the queue does not exist yet).
CREATE OR REPLACE FUNCTION queen.queue_encryption(p_tenant uuid, p_queue text)
RETURNS boolean
LANGUAGE sql STABLE
AS $$
    SELECT COALESCE((SELECT q.encryption_enabled FROM queen.queues q
                     WHERE q.tenant_id = COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001') AND q.name = p_queue),
                    false)
$$;

-- The push dedup cache's reads (DedupReader). Plain SQL, STABLE, no SET clause: the planner inlines them into the
-- broker's prepared statement, so each is the same index probe / index range over (partition_id, base_offset) that the
-- statement would be if it were written out.
-- A warm-up starts from the partition's last offset and its queue's dedup window (no row: the partition is gone).
CREATE OR REPLACE FUNCTION queen.log_dedup_head(p_pid uuid)
RETURNS TABLE (last_offset bigint, dedup_window_seconds integer)
LANGUAGE sql STABLE
AS $$
    SELECT p.last_offset, q.dedup_window_seconds
    FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
    WHERE p.id = p_pid
$$;

-- The partition's segment rows with hashes (at or past txns_start: below it the txns purge has passed, R__80) with
-- p_after < base_offset <= p_upto, in offset order, at most p_limit, creation time in microseconds since the epoch. p_window_seconds not NULL keeps only rows created inside that window (plus 120 s of
-- clock slack): a warm-up pages through the window below the head's last offset. Offsets are allocated in the
-- transaction that inserts their row, so every row at or below an offset read as committed is visible to the later
-- pages (or was purged, which only happens outside the window). A gap fill passes p_upto = max bigint and no window.
CREATE OR REPLACE FUNCTION queen.log_dedup_txns(p_pid uuid, p_after bigint, p_upto bigint, p_window_seconds integer,
                                                p_limit integer)
RETURNS TABLE (base_offset bigint, end_offset bigint, hashes bytea, at_us bigint)
LANGUAGE sql STABLE
AS $$
    SELECT t.base_offset, t.end_offset, t.hashes, (extract(epoch FROM t.created_at) * 1000000)::bigint
    FROM queen.log_segments t
    WHERE t.partition_id = p_pid AND t.base_offset <= p_upto
      AND t.base_offset > GREATEST(p_after, (SELECT p.txns_start - 1 FROM queen.log_partitions p WHERE p.id = p_pid))
      AND (p_window_seconds IS NULL
           OR t.created_at >= now() - make_interval(secs => p_window_seconds) - interval '120 seconds')
    ORDER BY t.base_offset
    LIMIT p_limit
$$;
