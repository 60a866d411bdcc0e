-- =====================================================================================================================
-- Key-value state (issue 36): the table kv_entries (V21). The wire contract, the result shapes and the SQLSTATE
-- registry are in docs/design/queen2-contract.md; the rules for editing a repeatable migration are at the top of
-- R__10_common.sql.
--
--   kv_apply          one call per POST /api/v1/kv (and per path route), and the `kv` rider of a transaction
--   kv_list           the console's page of one namespace (POST /api/v1/resources/kv/list)
--   kv_namespaces     the tenant's namespaces with their key counts (GET /api/v1/resources/kv/namespaces)
--   kv_sweep_expired  the retention cycle's batch delete of expired entries
--   kv_stats          the Prometheus gauges
--   _kv_live, _kv_number, _kv_counter, _kv_prefix_end, _kv_scan   helpers
--
-- Expiry is a read rule before it is a delete: an entry whose expires_at is at or before the call's instant is never
-- returned and never counts as existing, whether or not the sweep has deleted it yet (the sweep deletes with the same
-- boundary). Each call reads the clock once (p_now, or clock_timestamp() at its start), so one call never sees a key
-- alive and dead, and a call made after a deadline never sees the entry.
--
-- Versions come from kv_version_seq. A write that finds its row takes the row lock before its SET draws the version,
-- so on one key a later write has a higher version than every earlier one. A write that creates its row draws the
-- version before the insert; only a create that races a delete of the same key between those two points can come out
-- lower than the deleted row's version. Locks (R__98_locks.sql) do not rely on this: they draw under their fence row.
--
-- Errors are SQLSTATEs of class QV, QV8xx (the registry is in the contract document): the message is the human text
-- naming the operation's index and field; a lost `required` precondition (QV820) carries its verdict as JSON in the
-- DETAIL and names nothing in the message.
-- =====================================================================================================================

-- Alive at p_now: no expiry, or an expiry after it. Inlined by the planner.
CREATE OR REPLACE FUNCTION queen._kv_live(p_expires timestamptz, p_now timestamptz)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT p_expires IS NULL OR p_expires > p_now $$;

-- The number a stored value holds, or NULL when it holds none (not a JSON number, or one outside the range numeric
-- reads without overflowing: at most 2000 characters and a 4-digit exponent). Inlined.
CREATE OR REPLACE FUNCTION queen._kv_number(p_value text)
RETURNS numeric
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE WHEN char_length(p_value) <= 2000 AND p_value ~ '^-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]{1,4})?$'
                THEN p_value::numeric END
$$;

-- What incr counts from: 0 for an absent or expired entry, the number of a live one, NULL for a live entry that holds
-- no number (incr then answers reason 'type'). Inlined.
CREATE OR REPLACE FUNCTION queen._kv_counter(p_value text, p_expires timestamptz, p_now timestamptz)
RETURNS numeric
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE WHEN p_value IS NULL OR NOT queen._kv_live(p_expires, p_now) THEN 0::numeric
                ELSE queen._kv_number(p_value) END
$$;

-- The smallest string (byte order) above every string that starts with p_prefix, or NULL when there is none (a prefix
-- of U+10FFFF characters only). The last character that can grow grows by one code point; the surrogate block, which
-- no text can hold, is jumped.
CREATE OR REPLACE FUNCTION queen._kv_prefix_end(p_prefix text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
DECLARE
    v_head text := p_prefix;
    v_cp   integer;
BEGIN
    WHILE v_head IS NOT NULL AND v_head <> '' LOOP
        v_cp := ascii(right(v_head, 1));
        v_head := left(v_head, -1);
        IF v_cp < 1114111 THEN
            v_cp := CASE WHEN v_cp = 55295 THEN 57344 ELSE v_cp + 1 END;
            RETURN v_head || chr(v_cp);
        END IF;
    END LOOP;
    RETURN NULL;
END;
$$;

-- One page of a namespace in key order: the keys that start with p_prefix ('' = all), after p_after (exclusive; NULL
-- or '' = from the start), at most p_limit of them, and no more value bytes than p_budget, except that the first row
-- is always returned and the row that crosses the budget is included. p_include_expired also returns the entries
-- whose expiry has passed (expired = true). The rows come first; the last row is a marker with key NULL whose `more`
-- says whether the namespace has rows past the page (the page stopped at the limit or the budget). value is NULL when
-- p_keys_only; bytes is the value's length that the page counted against the budget.
-- One range scan of the primary key that stops at the page's end: the cursor loop stops reading when the page is full.
CREATE OR REPLACE FUNCTION queen._kv_scan(p_tenant uuid, p_ns text, p_prefix text, p_after text, p_limit integer,
                                          p_keys_only boolean, p_include_expired boolean, p_budget bigint,
                                          p_now timestamptz)
RETURNS TABLE (key text, value text, version bigint, expires_at timestamptz, updated_at timestamptz,
               expired boolean, bytes integer, more boolean)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    v_prefix text := COALESCE(p_prefix, '');
    v_after  text := COALESCE(p_after, '');
    v_end    text := queen._kv_prefix_end(COALESCE(p_prefix, ''));
    v_left   bigint := COALESCE(p_budget, 4194304);
    v_n      integer := 0;
    v_cur    refcursor;
    v_key    text;
    v_val    text;
    v_ver    bigint;
    v_exp    timestamptz;
    v_upd    timestamptz;
BEGIN
    -- Two statements rather than an optional bound: in a generic plan `x IS NULL OR key < x` bounds no index scan.
    IF v_end IS NULL THEN
        OPEN v_cur FOR
            SELECT k.key, k.value, k.version, k.expires_at, k.updated_at
            FROM queen.kv_entries k
            WHERE k.tenant_id = p_tenant AND k.namespace = p_ns AND k.key >= v_prefix AND k.key > v_after
              AND starts_with(k.key, v_prefix)
              AND (p_include_expired OR queen._kv_live(k.expires_at, p_now))
            ORDER BY k.key;
    ELSE
        OPEN v_cur FOR
            SELECT k.key, k.value, k.version, k.expires_at, k.updated_at
            FROM queen.kv_entries k
            WHERE k.tenant_id = p_tenant AND k.namespace = p_ns AND k.key >= v_prefix AND k.key < v_end
              AND k.key > v_after
              AND (p_include_expired OR queen._kv_live(k.expires_at, p_now))
            ORDER BY k.key;
    END IF;
    LOOP
        FETCH v_cur INTO v_key, v_val, v_ver, v_exp, v_upd;
        EXIT WHEN NOT FOUND;
        IF v_n >= p_limit OR (v_n > 0 AND v_left <= 0) THEN
            CLOSE v_cur;
            key := NULL; value := NULL; version := NULL; expires_at := NULL; updated_at := NULL;
            expired := NULL; bytes := NULL; more := true;
            RETURN NEXT;
            RETURN;
        END IF;
        v_n := v_n + 1;
        key := v_key;
        version := v_ver;
        expires_at := v_exp;
        updated_at := v_upd;
        expired := NOT queen._kv_live(v_exp, p_now);
        IF p_keys_only THEN
            value := NULL;
            bytes := 0;
        ELSE
            value := v_val;
            bytes := octet_length(v_val);
        END IF;
        v_left := v_left - bytes;
        more := NULL;
        RETURN NEXT;
    END LOOP;
    CLOSE v_cur;
    key := NULL; value := NULL; version := NULL; expires_at := NULL; updated_at := NULL;
    expired := NULL; bytes := NULL; more := false;
    RETURN NEXT;
END;
$$;

-- ---------------------------------------------------------------------------------------------------------------------
-- kv_apply: every operation of one call, in one statement (and so in one transaction, or in the caller's).
--
-- Operations are parallel arrays, one element per operation in request order (p_ops[i] is operation i - 1); an array
-- the call does not use may be NULL. getMany's keys are the pairs (p_many_of[j], p_many_keys[j]): the 0-based index of
-- the getMany operation, and one key, in the order the request lists them. p_keys[i] is the key (the prefix for
-- getPrefix, NULL for getMany). p_in_txn marks the transaction rider: getPrefix is refused, and the budgets are 64
-- operations and 256 keys instead of 256 and 4096.
--
-- Validation happens before any write: a refused call writes nothing and raises QV8xx. Then the single-key operations
-- (get, check, put, putIfAbsent, delete, incr) run in ascending (namespace, key) byte order (the lock order), each key
-- written at most once per call; then getMany and getPrefix, in request order, so they see the call's own writes.
-- A lost precondition is a verdict (applied false, reason exists | absent | version | limit | type); with required it
-- raises QV820 instead and the whole transaction rolls back.
--
-- Result: the rows of operation 0, then of operation 1, ...; each operation's rows end with its one row of kind
-- 'result'. getMany first lists a row of kind 'row' per key found (in request order) and of kind 'missing' per key
-- absent; getPrefix lists a row of kind 'row' per key of the page. A getMany key cut by the read budget has no row, and
-- its result says truncated. See the contract document for what each column holds for each operation.
-- ---------------------------------------------------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION queen.kv_apply(
    p_tenant    uuid,
    p_ops       text[],
    p_ns        text[],
    p_keys      text[],
    p_values    text[],
    p_ttls      bigint[],
    p_forever   boolean[],
    p_expects   bigint[],
    p_deltas    numeric[],
    p_mins      numeric[],
    p_maxs      numeric[],
    p_required  boolean[],
    p_limits    integer[],
    p_afters    text[],
    p_keys_only boolean[],
    p_many_of   integer[],
    p_many_keys text[],
    p_in_txn    boolean DEFAULT false,
    p_now       timestamptz DEFAULT NULL
) RETURNS TABLE (idx integer, kind text, key text, applied boolean, present boolean, reason text, version bigint,
                 value text, expires_at timestamptz, updated_at timestamptz, truncated boolean, next_after text)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE
    v_tenant   uuid := COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001');
    v_now      timestamptz := COALESCE(p_now, clock_timestamp());
    v_txn      boolean := COALESCE(p_in_txn, false);
    v_n        integer := COALESCE(cardinality(p_ops), 0);
    v_m        integer := COALESCE(cardinality(p_many_keys), 0);
    v_left     bigint := 4194304;           -- read budget of the call: value bytes returned
    v_max_ops  integer := CASE WHEN COALESCE(p_in_txn, false) THEN 64 ELSE 256 END;
    v_max_keys integer := CASE WHEN COALESCE(p_in_txn, false) THEN 256 ELSE 4096 END;
    v_i        integer;
    v_j        integer;
    v_op       text;
    v_ns       text;
    v_key      text;
    v_val      text;
    v_exp      timestamptz;
    v_expect   bigint;
    v_delta    numeric;
    v_min      numeric;
    v_max      numeric;
    v_limit    integer;
    v_decl     integer;
    v_total    bigint;
    v_ok       boolean;
    v_ver      bigint;
    v_cur      text;
    v_curver   bigint;
    v_curexp   timestamptz;
    v_curupd   timestamptz;
    v_count    integer;
    v_trunc    boolean;
    v_last     text;
    v_rec      record;
    r_applied  boolean[];
    r_found    boolean[];
    r_reason   text[];
    r_version  bigint[];
    r_value    text[];
    r_expires  timestamptz[];
    r_updated  timestamptz[];
BEGIN
    IF (p_ns IS NOT NULL AND cardinality(p_ns) <> v_n) OR (p_keys IS NOT NULL AND cardinality(p_keys) <> v_n)
       OR (p_values IS NOT NULL AND cardinality(p_values) <> v_n)
       OR (p_ttls IS NOT NULL AND cardinality(p_ttls) <> v_n)
       OR (p_forever IS NOT NULL AND cardinality(p_forever) <> v_n)
       OR (p_expects IS NOT NULL AND cardinality(p_expects) <> v_n)
       OR (p_deltas IS NOT NULL AND cardinality(p_deltas) <> v_n)
       OR (p_mins IS NOT NULL AND cardinality(p_mins) <> v_n) OR (p_maxs IS NOT NULL AND cardinality(p_maxs) <> v_n)
       OR (p_required IS NOT NULL AND cardinality(p_required) <> v_n)
       OR (p_limits IS NOT NULL AND cardinality(p_limits) <> v_n)
       OR (p_afters IS NOT NULL AND cardinality(p_afters) <> v_n)
       OR (p_keys_only IS NOT NULL AND cardinality(p_keys_only) <> v_n)
       OR COALESCE(cardinality(p_many_of), 0) <> v_m THEN
        RAISE EXCEPTION 'kv_apply: misaligned arrays (% operations)', v_n USING ERRCODE = 'QV898';
    END IF;
    IF v_n = 0 THEN
        RETURN;
    END IF;
    IF v_n > v_max_ops THEN
        RAISE EXCEPTION '% kv operations in one call, the most is %', v_n, v_max_ops USING ERRCODE = 'QV811';
    END IF;

    -- ---------------------------------------------------------------------------------------------- validation
    FOR v_i IN 1 .. v_n LOOP
        v_op := p_ops[v_i];
        v_ns := p_ns[v_i];
        v_key := p_keys[v_i];
        IF v_op IS NULL OR v_op NOT IN ('get', 'getMany', 'getPrefix', 'put', 'putIfAbsent', 'delete', 'incr',
                                        'check') THEN
            RAISE EXCEPTION 'kv operation %: unknown op %, expected get, getMany, getPrefix, put, putIfAbsent, '
                'delete, incr or check', v_i - 1, COALESCE(quote_literal(v_op), 'null') USING ERRCODE = 'QV802';
        END IF;
        IF v_ns IS NULL OR v_ns !~ '^[a-z0-9][a-z0-9._-]{0,63}$' THEN
            RAISE EXCEPTION 'kv operation %: ns % must match ^[a-z0-9][a-z0-9._-]{0,63}$', v_i - 1,
                COALESCE(quote_literal(v_ns), 'null') USING ERRCODE = 'QV803';
        END IF;
        -- The broker's own state: the lock permits of 'queen-locks' are written only by locks_apply, which takes the
        -- lock's fence row and draws the token under it; a put there would mint a permit (and a token the guard
        -- accepts) outside that order. Reads, check (the guard) and delete (an operator freeing a stuck permit) stay.
        -- 'queen-supervisor' is the 2.x consumers' own namespace, written through these routes: not reserved.
        IF v_op IN ('put', 'putIfAbsent', 'incr') AND v_ns = 'queen-locks' THEN
            RAISE EXCEPTION 'kv operation %: ns ''queen-locks'' is reserved for the broker''s lock permits, written '
                'only by POST /api/v1/locks (get, getMany, getPrefix, check and delete are allowed), got %', v_i - 1,
                v_op USING ERRCODE = 'QV815';
        END IF;
        IF v_op = 'getPrefix' AND v_txn THEN
            RAISE EXCEPTION 'kv operation %: getPrefix is not allowed inside a transaction (only on POST /api/v1/kv)',
                v_i - 1 USING ERRCODE = 'QV814';
        END IF;
        -- the key, or getPrefix's prefix (getMany's keys are checked below)
        IF v_op = 'getPrefix' AND (v_key IS NULL OR v_key = '') THEN
            RAISE EXCEPTION 'kv operation %: prefix must be a non-empty string', v_i - 1 USING ERRCODE = 'QV813';
        END IF;
        IF v_op <> 'getMany' AND (v_key IS NULL OR v_key = '') THEN
            RAISE EXCEPTION 'kv operation %: key must be a non-empty string', v_i - 1 USING ERRCODE = 'QV804';
        END IF;
        IF v_op <> 'getMany' AND octet_length(v_key) > 512 THEN
            RAISE EXCEPTION 'kv operation %: % is % bytes, the most is 512', v_i - 1,
                CASE WHEN v_op = 'getPrefix' THEN 'prefix' ELSE 'key' END, octet_length(v_key) USING ERRCODE = 'QV805';
        END IF;
        IF v_op IN ('put', 'putIfAbsent', 'incr') THEN
            v_decl := (CASE WHEN p_ttls[v_i] IS NOT NULL THEN 1 ELSE 0 END)
                    + (CASE WHEN p_forever[v_i] THEN 1 ELSE 0 END);
            IF v_decl <> 1 THEN
                RAISE EXCEPTION 'kv operation %: exactly one of ttlSeconds (an integer above 0) and forever:true is '
                    'required, got %', v_i - 1, v_decl USING ERRCODE = 'QV807';
            END IF;
            IF p_ttls[v_i] IS NOT NULL AND (p_ttls[v_i] < 1 OR p_ttls[v_i] > 315360000) THEN
                RAISE EXCEPTION 'kv operation %: ttlSeconds must be an integer from 1 to 315360000 (10 years), got %',
                    v_i - 1, p_ttls[v_i] USING ERRCODE = 'QV808';
            END IF;
        END IF;
        IF v_op IN ('put', 'putIfAbsent') THEN
            IF p_values[v_i] IS NULL THEN
                RAISE EXCEPTION 'kv operation %: % needs a value ("value": null is legal, an absent value is not)',
                    v_i - 1, v_op USING ERRCODE = 'QV801';
            END IF;
            IF octet_length(p_values[v_i]) > 65536 THEN
                RAISE EXCEPTION 'kv operation %: value is % bytes, the most is 65536', v_i - 1,
                    octet_length(p_values[v_i]) USING ERRCODE = 'QV806';
            END IF;
        END IF;
        v_expect := p_expects[v_i];
        IF v_expect IS NOT NULL THEN
            IF v_op IN ('incr', 'get', 'getMany', 'getPrefix') THEN
                RAISE EXCEPTION 'kv operation %: % takes no expect', v_i - 1, v_op USING ERRCODE = 'QV801';
            END IF;
            IF v_expect < 0 THEN
                RAISE EXCEPTION 'kv operation %: expect must be a version (an integer, 0 = must not exist), got %',
                    v_i - 1, v_expect USING ERRCODE = 'QV809';
            END IF;
            IF v_op = 'putIfAbsent' AND v_expect <> 0 THEN
                RAISE EXCEPTION 'kv operation %: putIfAbsent is put with expect 0; expect % contradicts it', v_i - 1,
                    v_expect USING ERRCODE = 'QV809';
            END IF;
        ELSIF v_op = 'check' THEN
            RAISE EXCEPTION 'kv operation %: check needs expect (a version, 0 = must not exist)', v_i - 1
                USING ERRCODE = 'QV809';
        END IF;
        IF v_op = 'incr' THEN
            IF p_deltas[v_i] IS NULL THEN
                RAISE EXCEPTION 'kv operation %: incr needs a numeric delta', v_i - 1 USING ERRCODE = 'QV801';
            END IF;
            IF abs(p_deltas[v_i]) >= 1e300 OR scale(p_deltas[v_i]) > 100
               OR abs(COALESCE(p_mins[v_i], 0)) >= 1e300 OR scale(COALESCE(p_mins[v_i], 0)) > 100
               OR abs(COALESCE(p_maxs[v_i], 0)) >= 1e300 OR scale(COALESCE(p_maxs[v_i], 0)) > 100 THEN
                RAISE EXCEPTION 'kv operation %: delta, min and max must be below 1e300 in magnitude with at most 100 '
                    'decimals', v_i - 1 USING ERRCODE = 'QV801';
            END IF;
        END IF;
    END LOOP;

    -- getMany keys: every pair names a getMany operation, every key is a key.
    IF v_m > 0 THEN
        SELECT min(u.o) INTO v_j
        FROM unnest(p_many_of) WITH ORDINALITY u(g, o)
        WHERE u.g IS NULL OR u.g < 0 OR u.g >= v_n OR p_ops[u.g + 1] <> 'getMany';
        IF v_j IS NOT NULL THEN
            RAISE EXCEPTION 'kv_apply: getMany key % names operation %, which is not a getMany', v_j - 1,
                p_many_of[v_j] USING ERRCODE = 'QV898';
        END IF;
        SELECT min(u.o) INTO v_j FROM unnest(p_many_keys) WITH ORDINALITY u(k, o) WHERE u.k IS NULL OR u.k = '';
        IF v_j IS NOT NULL THEN
            RAISE EXCEPTION 'kv operation %: getMany keys must be non-empty strings', p_many_of[v_j]
                USING ERRCODE = 'QV804';
        END IF;
        SELECT min(u.o) INTO v_j FROM unnest(p_many_keys) WITH ORDINALITY u(k, o) WHERE octet_length(u.k) > 512;
        IF v_j IS NOT NULL THEN
            RAISE EXCEPTION 'kv operation %: a getMany key is % bytes, the most is 512', p_many_of[v_j],
                octet_length(p_many_keys[v_j]) USING ERRCODE = 'QV805';
        END IF;
    END IF;

    -- A key is written at most once per call: the write order is then a total order of rows (the lock order).
    SELECT min(d.first) INTO v_j FROM (
        SELECT min(s.i) AS first
        FROM generate_subscripts(p_ops, 1) s(i)
        WHERE p_ops[s.i] IN ('put', 'putIfAbsent', 'delete', 'incr')
        GROUP BY p_ns[s.i] COLLATE "C", p_keys[s.i] COLLATE "C"
        HAVING count(*) > 1) d;
    IF v_j IS NOT NULL THEN
        RAISE EXCEPTION 'kv operation %: its key is written by another operation of the same call; a key may be '
            'written once per call', v_j - 1 USING ERRCODE = 'QV810';
    END IF;

    -- The keys a call may name: getMany counts its keys, getPrefix its (clamped) limit.
    SELECT v_m + COALESCE(sum(CASE p_ops[s.i]
                                  WHEN 'getMany' THEN 0
                                  WHEN 'getPrefix' THEN LEAST(GREATEST(COALESCE(p_limits[s.i], 100), 1), 1000)
                                  ELSE 1 END), 0)
    INTO v_total FROM generate_subscripts(p_ops, 1) s(i);
    IF v_total > v_max_keys THEN
        RAISE EXCEPTION 'the call names % keys, the most is %', v_total, v_max_keys USING ERRCODE = 'QV812';
    END IF;

    -- ------------------------------------------------------------------- single-key operations, in lock order
    r_applied := array_fill(NULL::boolean, ARRAY[v_n]);
    r_found := array_fill(NULL::boolean, ARRAY[v_n]);
    r_reason := array_fill(NULL::text, ARRAY[v_n]);
    r_version := array_fill(NULL::bigint, ARRAY[v_n]);
    r_value := array_fill(NULL::text, ARRAY[v_n]);
    r_expires := array_fill(NULL::timestamptz, ARRAY[v_n]);
    r_updated := array_fill(NULL::timestamptz, ARRAY[v_n]);

    FOR v_i IN
        SELECT s.i FROM generate_subscripts(p_ops, 1) s(i)
        WHERE p_ops[s.i] NOT IN ('getMany', 'getPrefix')
        ORDER BY p_ns[s.i] COLLATE "C", p_keys[s.i] COLLATE "C", s.i
    LOOP
        v_op := p_ops[v_i];
        v_ns := p_ns[v_i];
        v_key := p_keys[v_i];
        v_val := p_values[v_i];
        v_expect := CASE WHEN v_op = 'putIfAbsent' THEN 0 ELSE p_expects[v_i] END;
        v_exp := CASE WHEN p_ttls[v_i] IS NOT NULL THEN v_now + make_interval(secs => p_ttls[v_i]) END;
        v_ok := false;
        v_ver := NULL;
        v_cur := NULL; v_curver := NULL; v_curexp := NULL; v_curupd := NULL;

        IF v_op = 'get' THEN
            SELECT k.value, k.version, k.expires_at, k.updated_at INTO v_cur, v_curver, v_curexp, v_curupd
            FROM queen.kv_entries k
            WHERE k.tenant_id = v_tenant AND k.namespace = v_ns AND k.key = v_key
              AND queen._kv_live(k.expires_at, v_now);
            r_found[v_i] := FOUND;
            IF FOUND THEN
                r_value[v_i] := v_cur; r_version[v_i] := v_curver;
                r_expires[v_i] := v_curexp; r_updated[v_i] := v_curupd;
                v_left := v_left - octet_length(v_cur);
            END IF;
            CONTINUE;
        END IF;

        IF v_op = 'check' THEN
            -- FOR SHARE: a live entry the check passes cannot be written by anyone else until this transaction ends,
            -- which is what makes a check in a transaction (a lock's guard) hold until its commit.
            SELECT k.value, k.version, k.expires_at INTO v_cur, v_curver, v_curexp
            FROM queen.kv_entries k
            WHERE k.tenant_id = v_tenant AND k.namespace = v_ns AND k.key = v_key
            FOR SHARE;
            v_curver := CASE WHEN FOUND AND queen._kv_live(v_curexp, v_now) THEN v_curver ELSE 0 END;
            v_ok := v_curver = v_expect;
            r_version[v_i] := v_curver;
            IF NOT v_ok THEN
                r_reason[v_i] := CASE WHEN v_expect = 0 THEN 'exists' WHEN v_curver = 0 THEN 'absent'
                                      ELSE 'version' END;
                r_value[v_i] := CASE WHEN v_curver <> 0 THEN v_cur END;
            END IF;

        ELSIF v_op IN ('put', 'putIfAbsent') AND v_expect IS NULL THEN
            INSERT INTO queen.kv_entries AS k (tenant_id, namespace, key, value, version, expires_at, created_at,
                                               updated_at)
            VALUES (v_tenant, v_ns, v_key, v_val, nextval('queen.kv_version_seq'), v_exp, v_now, v_now)
            ON CONFLICT (tenant_id, namespace, key) DO UPDATE
               SET value = EXCLUDED.value, version = nextval('queen.kv_version_seq'), expires_at = EXCLUDED.expires_at,
                   created_at = CASE WHEN queen._kv_live(k.expires_at, v_now) THEN k.created_at
                                     ELSE EXCLUDED.created_at END,
                   updated_at = EXCLUDED.updated_at
            RETURNING k.version INTO v_ver;
            v_ok := true;
            r_value[v_i] := v_val; r_version[v_i] := v_ver;

        ELSIF v_op IN ('put', 'putIfAbsent') AND v_expect = 0 THEN
            -- Must not exist. ON CONFLICT locks the existing row before its WHERE is evaluated, so of N concurrent
            -- callers exactly one applies; an expired entry does not exist and is replaced (a new lineage).
            INSERT INTO queen.kv_entries AS k (tenant_id, namespace, key, value, version, expires_at, created_at,
                                               updated_at)
            VALUES (v_tenant, v_ns, v_key, v_val, nextval('queen.kv_version_seq'), v_exp, v_now, v_now)
            ON CONFLICT (tenant_id, namespace, key) DO UPDATE
               SET value = EXCLUDED.value, version = nextval('queen.kv_version_seq'), expires_at = EXCLUDED.expires_at,
                   created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at
             WHERE NOT queen._kv_live(k.expires_at, v_now)
            RETURNING k.version INTO v_ver;
            v_ok := FOUND;
            IF v_ok THEN
                r_value[v_i] := v_val; r_version[v_i] := v_ver;
            ELSE
                -- The row is locked by this transaction now; a new statement sees the winner's commit.
                SELECT k.value, k.version INTO v_cur, v_curver
                FROM queen.kv_entries k WHERE k.tenant_id = v_tenant AND k.namespace = v_ns AND k.key = v_key;
                r_reason[v_i] := 'exists'; r_value[v_i] := v_cur; r_version[v_i] := v_curver;
            END IF;

        ELSIF v_op = 'put' THEN
            -- expect N > 0: an update of that version only; it never creates the entry.
            UPDATE queen.kv_entries k
               SET value = v_val, version = nextval('queen.kv_version_seq'), expires_at = v_exp, updated_at = v_now
             WHERE k.tenant_id = v_tenant AND k.namespace = v_ns AND k.key = v_key
               AND k.version = v_expect AND queen._kv_live(k.expires_at, v_now)
            RETURNING k.version INTO v_ver;
            v_ok := FOUND;
            IF v_ok THEN
                r_value[v_i] := v_val; r_version[v_i] := v_ver;
            END IF;

        ELSIF v_op = 'delete' AND v_expect IS NULL THEN
            DELETE FROM queen.kv_entries k
             WHERE k.tenant_id = v_tenant AND k.namespace = v_ns AND k.key = v_key
            RETURNING k.value, k.version, k.expires_at INTO v_cur, v_curver, v_curexp;
            -- An expired entry goes away too, but it was not there: that is no deletion.
            v_ok := FOUND AND queen._kv_live(v_curexp, v_now);
            IF v_ok THEN
                r_value[v_i] := v_cur; r_version[v_i] := v_curver;
            ELSE
                r_reason[v_i] := 'absent'; r_version[v_i] := 0;
            END IF;

        ELSIF v_op = 'delete' AND v_expect = 0 THEN
            SELECT k.value, k.version, k.expires_at INTO v_cur, v_curver, v_curexp
            FROM queen.kv_entries k WHERE k.tenant_id = v_tenant AND k.namespace = v_ns AND k.key = v_key;
            v_ok := NOT FOUND OR NOT queen._kv_live(v_curexp, v_now);
            r_version[v_i] := 0;
            IF NOT v_ok THEN
                r_reason[v_i] := 'exists'; r_value[v_i] := v_cur; r_version[v_i] := v_curver;
            END IF;

        ELSIF v_op = 'delete' THEN
            DELETE FROM queen.kv_entries k
             WHERE k.tenant_id = v_tenant AND k.namespace = v_ns AND k.key = v_key
               AND k.version = v_expect AND queen._kv_live(k.expires_at, v_now)
            RETURNING k.value, k.version INTO v_cur, v_curver;
            v_ok := FOUND;
            IF v_ok THEN
                r_value[v_i] := v_cur; r_version[v_i] := v_curver;
            END IF;

        ELSE
            -- incr: no CAS. The result must stay within [min, max]; an increment that would leave it does not apply
            -- and answers the current value (reason 'limit'). The expiry is the entry's creation's: a live entry keeps
            -- its own, an absent or expired one starts from 0 with the operation's.
            v_delta := p_deltas[v_i]; v_min := p_mins[v_i]; v_max := p_maxs[v_i];
            UPDATE queen.kv_entries k
               SET value = trim_scale(queen._kv_counter(k.value, k.expires_at, v_now) + v_delta)::text,
                   version = nextval('queen.kv_version_seq'),
                   created_at = CASE WHEN queen._kv_live(k.expires_at, v_now) THEN k.created_at ELSE v_now END,
                   expires_at = CASE WHEN queen._kv_live(k.expires_at, v_now) THEN k.expires_at ELSE v_exp END,
                   updated_at = v_now
             WHERE k.tenant_id = v_tenant AND k.namespace = v_ns AND k.key = v_key
               AND queen._kv_counter(k.value, k.expires_at, v_now) IS NOT NULL
               AND (v_min IS NULL OR queen._kv_counter(k.value, k.expires_at, v_now) + v_delta >= v_min)
               AND (v_max IS NULL OR queen._kv_counter(k.value, k.expires_at, v_now) + v_delta <= v_max)
            RETURNING k.value, k.version INTO v_cur, v_ver;
            v_ok := FOUND;
            IF NOT v_ok AND (v_min IS NULL OR v_delta >= v_min) AND (v_max IS NULL OR v_delta <= v_max) THEN
                -- No entry (or one created since the update looked): create it from 0 under the same guards.
                INSERT INTO queen.kv_entries AS k (tenant_id, namespace, key, value, version, expires_at, created_at,
                                                   updated_at)
                VALUES (v_tenant, v_ns, v_key, trim_scale(v_delta)::text, nextval('queen.kv_version_seq'), v_exp,
                        v_now, v_now)
                ON CONFLICT (tenant_id, namespace, key) DO UPDATE
                   SET value = trim_scale(queen._kv_counter(k.value, k.expires_at, v_now) + v_delta)::text,
                       version = nextval('queen.kv_version_seq'),
                       created_at = CASE WHEN queen._kv_live(k.expires_at, v_now) THEN k.created_at ELSE v_now END,
                       expires_at = CASE WHEN queen._kv_live(k.expires_at, v_now) THEN k.expires_at ELSE v_exp END,
                       updated_at = v_now
                 WHERE queen._kv_counter(k.value, k.expires_at, v_now) IS NOT NULL
                   AND (v_min IS NULL OR queen._kv_counter(k.value, k.expires_at, v_now) + v_delta >= v_min)
                   AND (v_max IS NULL OR queen._kv_counter(k.value, k.expires_at, v_now) + v_delta <= v_max)
                RETURNING k.value, k.version INTO v_cur, v_ver;
                v_ok := FOUND;
            END IF;
            IF v_ok THEN
                r_value[v_i] := v_cur; r_version[v_i] := v_ver;
            ELSE
                SELECT k.value, k.version, k.expires_at INTO v_cur, v_curver, v_curexp
                FROM queen.kv_entries k WHERE k.tenant_id = v_tenant AND k.namespace = v_ns AND k.key = v_key;
                IF FOUND AND queen._kv_live(v_curexp, v_now) AND queen._kv_number(v_cur) IS NULL THEN
                    r_reason[v_i] := 'type'; r_value[v_i] := v_cur; r_version[v_i] := v_curver;
                ELSE
                    r_reason[v_i] := 'limit';
                    r_value[v_i] := trim_scale(queen._kv_counter(v_cur, v_curexp, v_now))::text;
                    r_version[v_i] := CASE WHEN FOUND AND queen._kv_live(v_curexp, v_now) THEN v_curver ELSE 0 END;
                END IF;
            END IF;
        END IF;

        -- A precondition the caller did not require is a verdict; the other writes stand.
        IF NOT v_ok AND v_op IN ('put', 'putIfAbsent', 'delete') AND v_expect IS NOT NULL THEN
            IF r_version[v_i] IS NULL THEN
                SELECT k.value, k.version, k.expires_at INTO v_cur, v_curver, v_curexp
                FROM queen.kv_entries k WHERE k.tenant_id = v_tenant AND k.namespace = v_ns AND k.key = v_key;
                v_curver := CASE WHEN FOUND AND queen._kv_live(v_curexp, v_now) THEN v_curver ELSE 0 END;
                r_version[v_i] := v_curver;
                r_value[v_i] := CASE WHEN v_curver <> 0 THEN v_cur END;
                r_reason[v_i] := CASE WHEN v_curver = 0 THEN 'absent' ELSE 'version' END;
            END IF;
        END IF;
        r_applied[v_i] := v_ok;

        IF NOT v_ok AND COALESCE(p_required[v_i], false) THEN
            RAISE EXCEPTION 'kv precondition failed' USING ERRCODE = 'QV820',
                DETAIL = '{"index":' || (v_i - 1) || ',"op":' || to_json(v_op)::text
                    || ',"ns":' || to_json(v_ns)::text || ',"key":' || to_json(v_key)::text
                    || ',"reason":' || to_json(r_reason[v_i])::text || ',"version":' || COALESCE(r_version[v_i], 0)
                    || ',"value":' || CASE WHEN r_value[v_i] IS NULL THEN 'null'
                                           WHEN octet_length(r_value[v_i]) > 4096 THEN 'null,"valueOmitted":true'
                                           ELSE r_value[v_i] END || '}';
        END IF;
    END LOOP;

    -- --------------------------------------------------------------- the answer, with the multi-key reads
    FOR v_i IN 1 .. v_n LOOP
        v_op := p_ops[v_i];
        idx := v_i - 1;
        IF v_op = 'getMany' THEN
            v_count := 0;
            v_trunc := false;
            FOR v_rec IN
                SELECT u.k, e.value AS val, e.version AS ver, e.expires_at AS exp, e.updated_at AS upd,
                       e.tenant_id IS NOT NULL AS hit
                FROM unnest(p_many_of, p_many_keys) WITH ORDINALITY u(g, k, o)
                LEFT JOIN queen.kv_entries e
                       ON e.tenant_id = v_tenant AND e.namespace = p_ns[v_i] AND e.key = u.k
                      AND queen._kv_live(e.expires_at, v_now)
                WHERE u.g = v_i - 1
                ORDER BY u.o
            LOOP
                IF v_rec.hit AND v_count > 0 AND v_left <= 0 THEN
                    v_trunc := true;
                    CONTINUE;
                END IF;
                kind := CASE WHEN v_rec.hit THEN 'row' ELSE 'missing' END;
                key := v_rec.k; applied := NULL; present := v_rec.hit; reason := NULL;
                version := v_rec.ver; value := v_rec.val; expires_at := v_rec.exp; updated_at := v_rec.upd;
                truncated := NULL; next_after := NULL;
                IF v_rec.hit THEN
                    v_count := v_count + 1;
                    v_left := v_left - octet_length(v_rec.val);
                END IF;
                RETURN NEXT;
            END LOOP;
            kind := 'result'; key := NULL; applied := NULL; present := NULL; reason := NULL; version := NULL;
            value := NULL; expires_at := NULL; updated_at := NULL; truncated := v_trunc; next_after := NULL;
            RETURN NEXT;
        ELSIF v_op = 'getPrefix' THEN
            v_limit := LEAST(GREATEST(COALESCE(p_limits[v_i], 100), 1), 1000);
            v_trunc := false;
            v_last := NULL;
            FOR v_rec IN
                SELECT * FROM queen._kv_scan(v_tenant, p_ns[v_i], p_keys[v_i], NULLIF(p_afters[v_i], ''), v_limit,
                                             COALESCE(p_keys_only[v_i], false), false, v_left, v_now)
            LOOP
                IF v_rec.key IS NULL THEN
                    v_trunc := v_rec.more;
                    EXIT;
                END IF;
                kind := 'row'; key := v_rec.key; applied := NULL; present := true; reason := NULL;
                version := v_rec.version; value := v_rec.value; expires_at := v_rec.expires_at;
                updated_at := v_rec.updated_at; truncated := NULL; next_after := NULL;
                v_left := v_left - v_rec.bytes;
                v_last := v_rec.key;
                RETURN NEXT;
            END LOOP;
            kind := 'result'; key := NULL; applied := NULL; present := NULL; reason := NULL; version := NULL;
            value := NULL; expires_at := NULL; updated_at := NULL; truncated := v_trunc;
            next_after := CASE WHEN v_trunc THEN v_last END;
            RETURN NEXT;
        ELSE
            kind := 'result'; key := p_keys[v_i]; applied := r_applied[v_i]; present := r_found[v_i];
            reason := r_reason[v_i]; version := r_version[v_i]; value := r_value[v_i];
            expires_at := r_expires[v_i]; updated_at := r_updated[v_i]; truncated := NULL; next_after := NULL;
            RETURN NEXT;
        END IF;
    END LOOP;
END;
$$;

-- The console's page of one namespace (POST /api/v1/resources/kv/list): like getPrefix, but the prefix may be empty,
-- expired entries that the sweep has not deleted yet can be listed (p_include_expired, flagged expired), the limit is
-- clamped to 1..1000 (default 100) and the page has the whole 4 MiB budget. Rows as _kv_scan returns them, the last
-- being the marker (key NULL, more).
CREATE OR REPLACE FUNCTION queen.kv_list(p_tenant uuid, p_ns text, p_prefix text, p_after text, p_limit integer,
                                         p_keys_only boolean, p_include_expired boolean,
                                         p_now timestamptz DEFAULT NULL)
RETURNS TABLE (key text, value text, version bigint, expires_at timestamptz, updated_at timestamptz,
               expired boolean, bytes integer, more boolean)
LANGUAGE plpgsql
AS $$
BEGIN
    IF p_ns IS NULL OR p_ns !~ '^[a-z0-9][a-z0-9._-]{0,63}$' THEN
        RAISE EXCEPTION 'namespace % must match ^[a-z0-9][a-z0-9._-]{0,63}$', COALESCE(quote_literal(p_ns), 'null')
            USING ERRCODE = 'QV803';
    END IF;
    RETURN QUERY
    SELECT * FROM queen._kv_scan(COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001'), p_ns, p_prefix,
                                 NULLIF(p_after, ''), LEAST(GREATEST(COALESCE(p_limit, 100), 1), 1000),
                                 COALESCE(p_keys_only, false), COALESCE(p_include_expired, false), 4194304,
                                 COALESCE(p_now, clock_timestamp()));
END;
$$;

-- The tenant's namespaces in byte order, each with its number of entries (expired ones not yet swept included), counted
-- up to p_cap (keys_capped: there are more). The namespaces are found by skipping through the primary key, one probe
-- per namespace, so the cost is the namespaces' and the counts', not the table's.
CREATE OR REPLACE FUNCTION queen.kv_namespaces(p_tenant uuid, p_cap integer DEFAULT 100000)
RETURNS TABLE (namespace text, keys bigint, keys_capped boolean)
LANGUAGE sql STABLE
AS $$
    WITH RECURSIVE ns(n) AS (
        SELECT (SELECT min(k.namespace) FROM queen.kv_entries k
                WHERE k.tenant_id = COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001'))
        UNION ALL
        SELECT (SELECT min(k.namespace) FROM queen.kv_entries k
                WHERE k.tenant_id = COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001') AND k.namespace > ns.n)
        FROM ns WHERE ns.n IS NOT NULL
    )
    SELECT ns.n, LEAST(c.cnt, GREATEST(p_cap, 1)), c.cnt > GREATEST(p_cap, 1)
    FROM ns
    CROSS JOIN LATERAL (
        SELECT count(*) AS cnt FROM (
            SELECT 1 FROM queen.kv_entries k
            WHERE k.tenant_id = COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001') AND k.namespace = ns.n
            LIMIT GREATEST(p_cap, 1) + 1) x
    ) c
    WHERE ns.n IS NOT NULL
    ORDER BY ns.n
$$;

-- Deletes at most p_batch entries whose expiry is at or before p_now (oldest expiry first), skipping rows another
-- transaction holds; returns how many. The retention cycle calls it until it returns less than p_batch.
CREATE OR REPLACE FUNCTION queen.kv_sweep_expired(p_batch integer, p_now timestamptz DEFAULT NULL)
RETURNS integer
LANGUAGE plpgsql
AS $$
DECLARE
    v_now timestamptz := COALESCE(p_now, clock_timestamp());
    v_n   integer;
BEGIN
    WITH due AS (
        SELECT k.tenant_id, k.namespace, k.key
        FROM queen.kv_entries k
        WHERE k.expires_at <= v_now
        ORDER BY k.expires_at
        LIMIT GREATEST(p_batch, 1)
        FOR UPDATE SKIP LOCKED
    ), gone AS (
        DELETE FROM queen.kv_entries k USING due
        WHERE k.tenant_id = due.tenant_id AND k.namespace = due.namespace AND k.key = due.key
          AND k.expires_at <= v_now
        RETURNING 1
    )
    SELECT count(*)::integer INTO v_n FROM gone;
    RETURN v_n;
END;
$$;

-- The Prometheus gauges of key-value state, cluster-wide: the planner's estimate of the entries, and the entries that
-- expired and wait for the sweep, counted up to p_cap (so a scrape costs at most p_cap index entries).
CREATE OR REPLACE FUNCTION queen.kv_stats(p_cap integer DEFAULT 100000)
RETURNS TABLE (entries_estimate bigint, expired_unswept bigint, expired_capped boolean)
LANGUAGE sql STABLE
AS $$
    SELECT GREATEST((SELECT c.reltuples FROM pg_class c WHERE c.oid = 'queen.kv_entries'::regclass), 0)::bigint,
           LEAST(x.n, GREATEST(p_cap, 1)), x.n > GREATEST(p_cap, 1)
    FROM (SELECT count(*) AS n FROM (SELECT 1 FROM queen.kv_entries k WHERE k.expires_at <= clock_timestamp()
                                     LIMIT GREATEST(p_cap, 1) + 1) y) x
$$;
