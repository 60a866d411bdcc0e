-- =====================================================================================================================
-- Locks and semaphores (issue 36, Queen 2.1): a lock is a lease of one permit, a semaphore of up to 1024. A permit is a
-- kv_entries row of the namespace 'queen-locks' (key '<name>#<slot>', value {"owner","since"}, expiry = the lease,
-- version = the fencing token), so the KV routes read, list and delete permits like any entry. The fencing counter of
-- a lock is its kv_lock_fences row (V21). The wire contract, result shapes and SQLSTATE registry are in
-- docs/design/queen2-contract.md; the rules for editing a repeatable migration are at the top of R__10_common.sql.
--
--   locks_apply   acquire | renew | release | get, one call per POST /api/v1/locks
--   locks_sweep   the retention cycle's batch delete of fence rows idle for an hour
--   _lock_owner   the owner a permit's value names
--
-- Tokens only grow: acquire and renew lock the lock's fence row before anything else, draw the token from
-- kv_version_seq while holding it, and write it as the permit's version. Every earlier token of that lock was drawn by
-- a transaction that held the same row and has committed, so it is lower. A guard is the KV operation
-- {"op":"check","ns":"queen-locks","key":"<name>#<slot>","expect":<token>,"required":true}: in a transaction's kv
-- rider it holds the permit row FOR SHARE until the commit, so the transaction commits only while the lease is the
-- caller's.
--
-- Lock order: fence rows (ascending name) -> kv_entries rows; a call handles its locks in ascending name order.
-- A lease is not revoked when it expires: the holder is not told. What keeps a late holder from doing the work is the
-- token (the guard, or a resource that remembers the highest token it saw).
-- =====================================================================================================================

-- The owner a permit's value names: {"owner": "..."} as acquire writes it. A value written by hand through the KV
-- routes may hold anything: NULL then (no owner), and the slot is held all the same. Values with \u escapes are not
-- parsed (acquire never writes one: its owners hold no control characters), so no stored text can make this raise.
CREATE OR REPLACE FUNCTION queen._lock_owner(p_value text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE WHEN p_value ~ '^\{' AND p_value !~ '\\u' THEN p_value::json ->> 'owner' END
$$;

-- Every operation of one call, each on a different lock, independently (not all-or-nothing). Parallel arrays, one
-- element per operation in request order; p_limits, p_tokens, p_slots and p_owners may hold NULL where an operation
-- takes none (limit defaults to 1, slot to 0). Validation happens before anything is written (QV93x/QV94x). The
-- operations run in ascending name order. Result: one row per operation in request order, its answer as JSON (Queen's
-- shapes: acquired / renewed / released / held with their fields, see the contract document).
--   acquire  the lowest free slot below limit, for ttlSeconds; a caller whose owner already holds a live permit of
--            the lock (below limit) is answered that permit (already: true); no free slot: acquired false, reason
--            held, with the holders.
--   renew    a permit the caller holds (its token is the permit's version, or its owner is the permit's owner) gets
--            a new lifetime and a new token; otherwise renewed false, reason lost.
--   release  deletes the permit if its version is the token; otherwise released false, reason lost.
--   get      the live permits: held, holders [{slot, owner, token, since, expiresAt, renewedAt}].
CREATE OR REPLACE FUNCTION queen.locks_apply(
    p_tenant uuid,
    p_ops    text[],
    p_names  text[],
    p_ttls   bigint[],
    p_owners text[],
    p_limits integer[],
    p_tokens bigint[],
    p_slots  integer[],
    p_now    timestamptz DEFAULT NULL
) RETURNS TABLE (idx integer, result jsonb)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    v_tenant  uuid := COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001');
    v_now     timestamptz := COALESCE(p_now, clock_timestamp());
    v_n       integer := COALESCE(cardinality(p_ops), 0);
    v_i       integer;
    v_j       bigint;
    v_op      text;
    v_name    text;
    v_owner   text;
    v_limit   integer;
    v_slot    integer;
    v_token   bigint;
    v_exp     timestamptz;
    v_key     text;
    v_val     text;
    v_ver     bigint;
    v_vexp    timestamptz;
    v_held    jsonb;
    v_res     jsonb;
    r_res     jsonb[];
BEGIN
    IF COALESCE(cardinality(p_names), 0) <> v_n OR (p_ttls IS NOT NULL AND cardinality(p_ttls) <> v_n)
       OR (p_owners IS NOT NULL AND cardinality(p_owners) <> v_n)
       OR (p_limits IS NOT NULL AND cardinality(p_limits) <> v_n)
       OR (p_tokens IS NOT NULL AND cardinality(p_tokens) <> v_n)
       OR (p_slots IS NOT NULL AND cardinality(p_slots) <> v_n) THEN
        RAISE EXCEPTION 'locks_apply: misaligned arrays (% operations)', v_n USING ERRCODE = 'QV949';
    END IF;
    IF v_n = 0 THEN
        RETURN;
    END IF;
    IF v_n > 64 THEN
        RAISE EXCEPTION '% lock operations in one call, the most is 64', v_n USING ERRCODE = 'QV941';
    END IF;

    FOR v_i IN 1 .. v_n LOOP
        v_op := p_ops[v_i];
        v_name := p_names[v_i];
        IF v_op IS NULL OR v_op NOT IN ('acquire', 'renew', 'release', 'get') THEN
            RAISE EXCEPTION 'lock operation %: unknown op %, expected acquire, renew, release or get', v_i - 1,
                COALESCE(quote_literal(v_op), 'null') USING ERRCODE = 'QV931';
        END IF;
        IF v_name IS NULL OR v_name = '' OR octet_length(v_name) > 256 OR v_name ~ '[#[:cntrl:]]' THEN
            RAISE EXCEPTION 'lock operation %: name must be a non-empty string of at most 256 bytes, without control '
                'characters and without ''#''', v_i - 1 USING ERRCODE = 'QV932';
        END IF;
        IF p_owners[v_i] IS NOT NULL
           AND (p_owners[v_i] = '' OR octet_length(p_owners[v_i]) > 256 OR p_owners[v_i] ~ '[[:cntrl:]]') THEN
            RAISE EXCEPTION 'lock operation %: owner must be a non-empty string of at most 256 bytes, without control '
                'characters', v_i - 1 USING ERRCODE = 'QV935';
        END IF;
        IF v_op IN ('acquire', 'renew') THEN
            IF p_ttls[v_i] IS NULL THEN
                RAISE EXCEPTION 'lock operation %: % needs ttlSeconds (an integer from 1 to 86400; a holder that needs '
                    'longer renews)', v_i - 1, v_op USING ERRCODE = 'QV933';
            END IF;
            IF p_ttls[v_i] < 1 OR p_ttls[v_i] > 86400 THEN
                RAISE EXCEPTION 'lock operation %: ttlSeconds must be an integer from 1 to 86400, got %', v_i - 1,
                    p_ttls[v_i] USING ERRCODE = 'QV934';
            END IF;
        END IF;
        IF v_op = 'acquire' AND p_limits[v_i] IS NOT NULL AND (p_limits[v_i] < 1 OR p_limits[v_i] > 1024) THEN
            RAISE EXCEPTION 'lock operation %: limit must be an integer from 1 (a lock) to 1024, got %', v_i - 1,
                p_limits[v_i] USING ERRCODE = 'QV936';
        END IF;
        IF v_op IN ('renew', 'release') THEN
            IF p_tokens[v_i] IS NULL THEN
                RAISE EXCEPTION 'lock operation %: % needs the token of the permit (the one the last acquire or renew '
                    'answered)', v_i - 1, v_op USING ERRCODE = 'QV937';
            END IF;
            IF p_tokens[v_i] < 1 THEN
                RAISE EXCEPTION 'lock operation %: token must be an integer above 0, got %', v_i - 1, p_tokens[v_i]
                    USING ERRCODE = 'QV938';
            END IF;
            IF p_slots[v_i] IS NOT NULL AND (p_slots[v_i] < 0 OR p_slots[v_i] > 1023) THEN
                RAISE EXCEPTION 'lock operation %: slot must be an integer from 0 to 1023, got %', v_i - 1,
                    p_slots[v_i] USING ERRCODE = 'QV939';
            END IF;
        END IF;
    END LOOP;

    SELECT min(d.first) INTO v_j FROM (
        SELECT min(s.i) AS first FROM generate_subscripts(p_ops, 1) s(i)
        GROUP BY p_names[s.i] COLLATE "C" HAVING count(*) > 1) d;
    IF v_j IS NOT NULL THEN
        RAISE EXCEPTION 'lock operation %: its lock is named by another operation of the same call; a lock may be '
            'named once per call', v_j - 1 USING ERRCODE = 'QV940';
    END IF;
    SELECT COALESCE(sum(CASE p_ops[s.i] WHEN 'acquire' THEN COALESCE(p_limits[s.i], 1) WHEN 'get' THEN 1024 ELSE 1 END),
                    0)
    INTO v_j FROM generate_subscripts(p_ops, 1) s(i);
    IF v_j > 4096 THEN
        RAISE EXCEPTION 'the call names % permits, the most is 4096', v_j USING ERRCODE = 'QV942';
    END IF;

    r_res := array_fill(NULL::jsonb, ARRAY[v_n]);
    FOR v_i IN SELECT s.i FROM generate_subscripts(p_ops, 1) s(i) ORDER BY p_names[s.i] COLLATE "C" LOOP
        v_op := p_ops[v_i];
        v_name := p_names[v_i];
        v_owner := p_owners[v_i];
        v_exp := v_now + make_interval(secs => COALESCE(p_ttls[v_i], 0));

        IF v_op IN ('acquire', 'renew') THEN
            -- The fence row first: it orders this lock's acquires and renews, and its lock is held to the commit.
            LOOP
                PERFORM 1 FROM queen.kv_lock_fences f WHERE f.tenant_id = v_tenant AND f.name = v_name FOR UPDATE;
                EXIT WHEN FOUND;
                INSERT INTO queen.kv_lock_fences (tenant_id, name, last_token, expires_at, updated_at)
                VALUES (v_tenant, v_name, 0, v_now, v_now) ON CONFLICT DO NOTHING;
            END LOOP;
        END IF;

        IF v_op IN ('acquire', 'get') THEN
            -- The live permits of the lock, by slot: the keys '<name>#<slot>' (slot in canonical decimal, < 1024).
            v_limit := COALESCE(p_limits[v_i], 1);
            SELECT COALESCE(jsonb_agg(jsonb_build_object(
                       'slot', p.slot, 'owner', queen._lock_owner(p.value), 'token', p.version,
                       'since', COALESCE(CASE WHEN queen._lock_owner(p.value) IS NOT NULL
                                              THEN p.value::json ->> 'since' END, queen._log_ts(p.updated_at)),
                       'expiresAt', queen._log_ts(p.expires_at), 'renewedAt', queen._log_ts(p.updated_at))
                   ORDER BY p.slot), '[]'::jsonb)
            INTO v_held
            FROM (SELECT substr(e.key, char_length(v_name) + 2)::integer AS slot, e.value, e.version, e.expires_at,
                         e.updated_at
                  FROM queen.kv_entries e
                  WHERE e.tenant_id = v_tenant AND e.namespace = 'queen-locks'
                    AND e.key >= v_name || '#' AND e.key < v_name || '$'
                    AND substr(e.key, char_length(v_name) + 2) ~ '^(0|[1-9][0-9]{0,3})$'
                    AND queen._kv_live(e.expires_at, v_now)) p
            WHERE p.slot < 1024;

            IF v_op = 'get' THEN
                r_res[v_i] := jsonb_build_object('index', v_i - 1, 'op', 'get', 'name', v_name,
                                                 'held', jsonb_array_length(v_held) > 0, 'holders', v_held);
                CONTINUE;
            END IF;

            SELECT (h ->> 'slot')::integer, (h ->> 'token')::bigint INTO v_slot, v_token
            FROM jsonb_array_elements(v_held) h
            WHERE v_owner IS NOT NULL AND h ->> 'owner' = v_owner AND (h ->> 'slot')::integer < v_limit
            ORDER BY (h ->> 'slot')::integer LIMIT 1;
            IF FOUND THEN
                r_res[v_i] := jsonb_build_object('index', v_i - 1, 'op', 'acquire', 'name', v_name, 'acquired', true,
                    'slot', v_slot, 'token', v_token, 'owner', v_owner, 'already', true,
                    'guard', jsonb_build_object('op', 'check', 'ns', 'queen-locks', 'key', v_name || '#' || v_slot,
                                                'expect', v_token, 'required', true));
                CONTINUE;
            END IF;
            SELECT min(s) INTO v_slot FROM generate_series(0, v_limit - 1) s
            WHERE NOT EXISTS (SELECT 1 FROM jsonb_array_elements(v_held) h WHERE (h ->> 'slot')::integer = s);
            IF v_slot IS NOT NULL THEN
                v_token := nextval('queen.kv_version_seq');
                v_key := v_name || '#' || v_slot;
                -- The slot was free when read; a row written since by hand (not through a lock) wins, and the slot
                -- then reads as held.
                INSERT INTO queen.kv_entries AS k (tenant_id, namespace, key, value, version, expires_at, created_at,
                                                   updated_at)
                VALUES (v_tenant, 'queen-locks', v_key,
                        jsonb_build_object('owner', v_owner, 'since', queen._log_ts(v_now))::text, v_token, v_exp,
                        v_now, v_now)
                ON CONFLICT (tenant_id, namespace, key) DO UPDATE
                   SET value = EXCLUDED.value, version = EXCLUDED.version, expires_at = EXCLUDED.expires_at,
                       created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at
                 WHERE NOT queen._kv_live(k.expires_at, v_now);
                IF FOUND THEN
                    UPDATE queen.kv_lock_fences f
                       SET last_token = v_token, expires_at = GREATEST(f.expires_at, v_exp), updated_at = v_now
                     WHERE f.tenant_id = v_tenant AND f.name = v_name;
                    r_res[v_i] := jsonb_build_object('index', v_i - 1, 'op', 'acquire', 'name', v_name,
                        'acquired', true, 'slot', v_slot, 'token', v_token, 'owner', v_owner,
                        'guard', jsonb_build_object('op', 'check', 'ns', 'queen-locks', 'key', v_key,
                                                    'expect', v_token, 'required', true));
                    CONTINUE;
                END IF;
                SELECT e.value INTO v_val FROM queen.kv_entries e
                WHERE e.tenant_id = v_tenant AND e.namespace = 'queen-locks' AND e.key = v_key;
                v_held := v_held || jsonb_build_array(jsonb_build_object('slot', v_slot, 'owner',
                                                                         queen._lock_owner(v_val)));
            END IF;
            r_res[v_i] := jsonb_build_object('index', v_i - 1, 'op', 'acquire', 'name', v_name, 'acquired', false,
                'reason', 'held',
                'holders', (SELECT COALESCE(jsonb_agg(jsonb_build_object('slot', (h ->> 'slot')::integer,
                                                                         'owner', h -> 'owner')
                                                      ORDER BY (h ->> 'slot')::integer), '[]'::jsonb)
                            FROM jsonb_array_elements(v_held) h WHERE (h ->> 'slot')::integer < v_limit));
            CONTINUE;
        END IF;

        -- renew and release address one permit
        v_slot := COALESCE(p_slots[v_i], 0);
        v_key := v_name || '#' || v_slot;
        IF v_op = 'renew' THEN
            SELECT e.value, e.version, e.expires_at INTO v_val, v_ver, v_vexp
            FROM queen.kv_entries e
            WHERE e.tenant_id = v_tenant AND e.namespace = 'queen-locks' AND e.key = v_key
            FOR UPDATE;
            IF FOUND AND queen._kv_live(v_vexp, v_now)
               AND (v_ver = p_tokens[v_i] OR (v_owner IS NOT NULL AND queen._lock_owner(v_val) = v_owner)) THEN
                v_token := nextval('queen.kv_version_seq');
                UPDATE queen.kv_entries e
                   SET version = v_token, expires_at = v_exp, updated_at = v_now
                 WHERE e.tenant_id = v_tenant AND e.namespace = 'queen-locks' AND e.key = v_key;
                UPDATE queen.kv_lock_fences f
                   SET last_token = v_token, expires_at = GREATEST(f.expires_at, v_exp), updated_at = v_now
                 WHERE f.tenant_id = v_tenant AND f.name = v_name;
                r_res[v_i] := jsonb_build_object('index', v_i - 1, 'op', 'renew', 'name', v_name, 'renewed', true,
                    'slot', v_slot, 'token', v_token,
                    'guard', jsonb_build_object('op', 'check', 'ns', 'queen-locks', 'key', v_key,
                                                'expect', v_token, 'required', true));
                CONTINUE;
            END IF;
        ELSE
            DELETE FROM queen.kv_entries e
             WHERE e.tenant_id = v_tenant AND e.namespace = 'queen-locks' AND e.key = v_key
               AND e.version = p_tokens[v_i] AND queen._kv_live(e.expires_at, v_now);
            IF FOUND THEN
                r_res[v_i] := jsonb_build_object('index', v_i - 1, 'op', 'release', 'name', v_name, 'released', true,
                                                 'slot', v_slot);
                CONTINUE;
            END IF;
            SELECT e.value, e.version, e.expires_at INTO v_val, v_ver, v_vexp
            FROM queen.kv_entries e
            WHERE e.tenant_id = v_tenant AND e.namespace = 'queen-locks' AND e.key = v_key;
        END IF;
        -- lost: the permit expired, was released, or is somebody else's now (holders says whose)
        r_res[v_i] := jsonb_build_object('index', v_i - 1, 'op', v_op, 'name', v_name,
            CASE WHEN v_op = 'renew' THEN 'renewed' ELSE 'released' END, false, 'reason', 'lost', 'slot', v_slot,
            'holders', CASE WHEN v_ver IS NOT NULL AND queen._kv_live(v_vexp, v_now)
                            THEN jsonb_build_array(jsonb_build_object('slot', v_slot, 'owner', queen._lock_owner(v_val)))
                            ELSE '[]'::jsonb END);
    END LOOP;

    RETURN QUERY SELECT (s.i - 1)::integer, r_res[s.i] FROM generate_subscripts(p_ops, 1) s(i) ORDER BY s.i;
END;
$$;

-- Deletes at most p_batch fence rows whose every permit expired more than an hour before p_now (skipping rows another
-- transaction holds); returns how many. Tokens keep growing after a sweep: a fence row created again draws from the
-- same sequence.
CREATE OR REPLACE FUNCTION queen.locks_sweep(p_batch integer, p_now timestamptz DEFAULT NULL)
RETURNS integer
LANGUAGE plpgsql
AS $$
DECLARE
    v_now timestamptz := COALESCE(p_now, clock_timestamp());
    v_n   integer;
BEGIN
    WITH due AS (
        SELECT f.tenant_id, f.name FROM queen.kv_lock_fences f
        WHERE f.expires_at < v_now - interval '1 hour'
        ORDER BY f.expires_at
        LIMIT GREATEST(p_batch, 1)
        FOR UPDATE SKIP LOCKED
    ), gone AS (
        DELETE FROM queen.kv_lock_fences f USING due
        WHERE f.tenant_id = due.tenant_id AND f.name = due.name AND f.expires_at < v_now - interval '1 hour'
        RETURNING 1
    )
    SELECT count(*)::integer INTO v_n FROM gone;
    RETURN v_n;
END;
$$;

-- The Prometheus gauge of locks, cluster-wide: the fence rows (every lock acquired within the last hour of its leases,
-- live or not), counted up to p_cap so a scrape costs at most p_cap index entries.
CREATE OR REPLACE FUNCTION queen.locks_stats(p_cap integer DEFAULT 100000)
RETURNS TABLE (fences bigint, fences_capped boolean)
LANGUAGE sql STABLE
AS $$
    SELECT LEAST(x.n, GREATEST(p_cap, 1)), x.n > GREATEST(p_cap, 1)
    FROM (SELECT count(*) AS n FROM (SELECT 1 FROM queen.kv_lock_fences f LIMIT GREATEST(p_cap, 1) + 1) y) x
$$;
