-- Plaintext never lands on an encrypted queue (issue 18, item 6).
--
-- A broker node caches each queue's encryption flag. The cache of a node that did not serve the configure learns of
-- the change late (a cluster announcement) or never (nodes that share this database without being clustered), so a
-- push right after `configure {encryptionEnabled:true}` answered could still be packed in plaintext. The push
-- transaction now checks, per segment, the broker's claim "all frames of this segment are encrypted" against the
-- queue's encryption_enabled as read by that transaction. A push transaction that starts after the configure
-- committed sees the new flag, so every push request that starts after the configure answered is checked against
-- it; a mismatch raises QCRYPT and writes nothing, and the broker drops its cached flags, re-reads them, encrypts and
-- sends the frames again. Encrypted frames on a queue that is not encrypted pass: every frame carries its own flag,
-- so readers handle them (a push still in flight when encryption is switched off stays encrypted).
--
-- Nothing of log_push_multi_v3 changes: v4 is the check followed by v3 in the same transaction. The check costs one
-- unique-key probe per distinct (tenant, queue) that has plaintext segments in the bundle, none for encrypted ones.

-- Raises QCRYPT when an element whose frames are not all encrypted targets a queue with encryption_enabled.
-- p_encrypted NULL (or a NULL element) means plaintext. A queue that does not exist yet is not encrypted.
CREATE FUNCTION queen._log_check_encryption(p_tenants uuid[], p_queues text[], p_encrypted boolean[])
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
        RAISE EXCEPTION 'QCRYPT plaintext frames for encrypted queue(s): %', v_bad;
    END IF;
END;
$$;

-- log_push_multi_v3 plus p_encrypted[i]: true when every frame of element i is encrypted.
CREATE FUNCTION queen.log_push_multi_v4(
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
BEGIN
    IF p_encrypted IS NOT NULL AND cardinality(p_encrypted) <> COALESCE(cardinality(p_queues), 0) THEN
        RAISE EXCEPTION 'QMULTI misaligned arrays: queues=% encrypted=%',
            COALESCE(cardinality(p_queues), 0), cardinality(p_encrypted);
    END IF;
    PERFORM queen._log_check_encryption(p_tenants, p_queues, p_encrypted);
    RETURN QUERY SELECT * FROM queen.log_push_multi_v3(p_tenants, p_queues, p_partitions, p_counts, p_hashes,
                                                        p_blobs, p_verified, p_expect, p_hints);
END;
$$;

-- The broker's encryption-flag lookup for one queue (false when the queue does not exist yet).
CREATE FUNCTION queen.queue_encryption_v1(p_tenant uuid, p_queue text)
RETURNS boolean
LANGUAGE sql STABLE
AS $$
    SELECT COALESCE((SELECT q.encryption_enabled FROM queen.queues q
                     WHERE q.tenant_id = COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001') AND q.name = p_queue),
                    false)
$$;
