-- =====================================================================================================================
-- Message inspection (ENGINE.md §8; API.md §5.9).
-- A repeatable migration: the rules for editing it are at the top of R__10_common.sql.
--
--   list_messages             GET    /api/v1/messages                       (log_txns exploded to frames, no decode)
--   message_detail            GET    /api/v1/messages/:pid/:txn             (offset resolution + management detail)
--   log_segments_newest              purged-txns fallback: the broker pages newest-first through segment blobs
-- The dead-letter functions, the message retry (log_dlq_move) and delete_message (DELETE /api/v1/messages/:pid/:txn,
-- which removes DLQ rows only) are in R__70_dlq.sql.
--
--
-- SQL never hashes and never decodes a blob: the broker sends xxh3-128 hashes and decodes segments itself.
-- Timestamps rendered here are ISO-8601 UTC with milliseconds and 'Z' (queen._msg_ts).
-- =====================================================================================================================

-- ---------------------------------------------------------------------------------------------------------------------
-- Helpers
-- ---------------------------------------------------------------------------------------------------------------------

-- ISO-8601 UTC with milliseconds and 'Z' (listing / detail / DLQ timestamps). NULL in, NULL out.
CREATE OR REPLACE FUNCTION queen._msg_ts(p_ts timestamptz) RETURNS text LANGUAGE sql STABLE PARALLEL SAFE
AS $$ SELECT to_char(p_ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') $$;

-- Lenient integer filter value: digits (optionally signed) parse, anything else is the default.
CREATE OR REPLACE FUNCTION queen._msg_int(p_val text, p_default integer)
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE WHEN p_val ~ '^\s*[-+]?[0-9]{1,9}\s*$' THEN btrim(p_val)::integer ELSE p_default END
$$;

-- Opaque paging cursor: base64url (no padding) of 33 bytes = kind(1) | epoch micros(8, BE) | uuid(16) | bigint(8, BE).
-- kind 1 = message listing (created_at, partition_id, offset); kind 2 = DLQ listing (failed_at, id, 0).
CREATE OR REPLACE FUNCTION queen._msg_cursor_encode(p_kind integer, p_ts timestamptz, p_id uuid, p_off bigint)
RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT translate(encode(set_byte('\x00'::bytea, 0, p_kind)
                            || int8send((extract(epoch FROM p_ts) * 1000000)::bigint)
                            || uuid_send(p_id)
                            || int8send(COALESCE(p_off, 0)), 'base64'), E'+/\n', '-_')
$$;

-- Inverse of _msg_cursor_encode; all-NULL when the text is not a cursor of that kind (never raises).
CREATE OR REPLACE FUNCTION queen._msg_cursor_decode(p_kind integer, p_cursor text, OUT ts timestamptz, OUT id uuid, OUT off bigint)
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_b  bytea;
    v_us bigint;
BEGIN
    v_b := decode(translate(btrim(p_cursor), '-_', '+/'), 'base64');
    IF octet_length(v_b) <> 33 OR get_byte(v_b, 0) <> p_kind THEN
        RETURN;
    END IF;
    v_us := ('x' || encode(substring(v_b FROM 2 FOR 8), 'hex'))::bit(64)::bigint;
    ts := timestamptz 'epoch' + (v_us / 1000000) * interval '1 second' + (v_us % 1000000) * interval '1 microsecond';
    id := encode(substring(v_b FROM 10 FOR 16), 'hex')::uuid;
    off := ('x' || encode(substring(v_b FROM 26 FOR 8), 'hex'))::bit(64)::bigint;
EXCEPTION WHEN OTHERS THEN
    ts := NULL; id := NULL; off := NULL;
END;
$$;

-- Parse an optional ISO timestamp filter value. Empty / absent -> NULL; a value without a zone designator is UTC
-- (whatever the session TimeZone is); unparsable -> raises (22007 / 22008), the callers turn that into {"error"}.
CREATE OR REPLACE FUNCTION queen._msg_ts_in(p_val text)
RETURNS timestamptz
LANGUAGE sql STABLE
AS $$
    SELECT CASE
        WHEN NULLIF(btrim(p_val), '') IS NULL THEN NULL
        WHEN btrim(p_val) ~* '[0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]+)?)?\s*(z|utc|gmt|[+-][0-9]{2}(:?[0-9]{2})?)$'
            THEN btrim(p_val)::timestamptz
        ELSE btrim(p_val)::timestamp AT TIME ZONE 'UTC'
    END
$$;

-- The common part of a listing request, read once for both listings (messages: cursor kind 1, DLQ: kind 2): the
-- tenant (the default tenant when NULL), the filter object f (p_filter, or {} when that is not a JSON object), the
-- exact queue and partition names (NULL when absent or empty), then the paging: limit (p_limit when absent or < 1, at
-- most 10000), offset (>= 0; 0 when a cursor is given), from / to (p_from / p_to when absent) and the decoded cursor.
-- error is set, and the paging columns are not to be used, when from, to or the cursor is invalid.
DROP FUNCTION IF EXISTS queen._msg_page(jsonb, integer, integer, timestamptz, timestamptz);
CREATE OR REPLACE FUNCTION queen._msg_page(p_tenant uuid, p_filter jsonb, p_kind integer, p_limit integer,
                                           p_from timestamptz, p_to timestamptz, OUT tenant uuid, OUT f jsonb,
                                           OUT queue text, OUT part text, OUT lim integer, OUT off integer,
                                           OUT ts_from timestamptz, OUT ts_to timestamptz, OUT c_ts timestamptz,
                                           OUT c_id uuid, OUT c_off bigint, OUT error text)
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_key text := 'from'; -- the bound being parsed, named by the error
BEGIN
    tenant := COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001');
    f := CASE WHEN jsonb_typeof(p_filter) = 'object' THEN p_filter ELSE '{}'::jsonb END;
    queue := NULLIF(f->>'queue', '');
    part := NULLIF(f->>'partition', '');
    lim := queen._msg_int(f->>'limit', p_limit);
    off := GREATEST(queen._msg_int(f->>'offset', 0), 0);
    IF lim < 1 THEN lim := p_limit; END IF;
    IF lim > 10000 THEN lim := 10000; END IF;
    BEGIN
        ts_from := COALESCE(queen._msg_ts_in(f->>'from'), p_from);
        v_key := 'to';
        ts_to := COALESCE(queen._msg_ts_in(f->>'to'), p_to);
    EXCEPTION WHEN OTHERS THEN -- variables keep their values: v_key names the bound that failed
        error := 'invalid ' || v_key || ': ' || (f->>v_key);
        RETURN;
    END;
    IF NULLIF(btrim(f->>'cursor'), '') IS NOT NULL THEN
        SELECT x.ts, x.id, x.off INTO c_ts, c_id, c_off FROM queen._msg_cursor_decode(p_kind, f->>'cursor') x;
        IF c_ts IS NULL THEN
            error := 'invalid cursor';
            RETURN;
        END IF;
        off := 0;
    END IF;
END;
$$;


-- The newest log_txns row of partition p_pid stamped before p_ts (at or before it when p_incl): its base_offset; -1
-- when no row is. Push stamps created_at under the partition lock, so it never decreases as the offset grows: a
-- search over offsets with primary-key probes finds the boundary of a from / to / cursor bound, and a listing starts
-- its newest-first scan there instead of walking every newer row (issue 23). The probes alternate between
-- interpolating on created_at (a few probes when the rate is steady) and bisecting (at most about 2 log2(offsets)).
CREATE OR REPLACE FUNCTION queen._msg_txn_upto(p_pid uuid, p_ts timestamptz, p_incl boolean)
RETURNS bigint
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_lo    bigint; -- an offset whose covering-or-older row qualifies: the row at v_lo_b, ending at v_lo or later
    v_lo_b  bigint;
    v_hi    bigint; -- a row's base_offset: that row does not qualify
    v_lo_ts double precision;
    v_hi_ts double precision;
    v_at    double precision := extract(epoch FROM p_ts);
    v_mid   bigint;
    v_b     bigint;
    v_end   bigint;
    v_ts    timestamptz;
    v_int   boolean := true;
BEGIN
    SELECT t.base_offset, t.created_at INTO v_hi, v_ts
    FROM queen.log_txns t WHERE t.partition_id = p_pid ORDER BY t.base_offset DESC LIMIT 1;
    IF v_hi IS NULL THEN
        RETURN -1;
    END IF;
    IF v_ts < p_ts OR (p_incl AND v_ts = p_ts) THEN
        RETURN v_hi; -- the newest row qualifies: the common case, one probe
    END IF;
    v_hi_ts := extract(epoch FROM v_ts);
    SELECT t.base_offset, t.end_offset, t.created_at INTO v_lo_b, v_lo, v_ts
    FROM queen.log_txns t WHERE t.partition_id = p_pid ORDER BY t.base_offset LIMIT 1;
    IF NOT (v_ts < p_ts OR (p_incl AND v_ts = p_ts)) THEN
        RETURN -1;
    END IF;
    v_lo_ts := extract(epoch FROM v_ts);
    -- until no offset lies between the qualifying row's end and the first row that does not qualify
    WHILE v_hi - v_lo > 1 LOOP
        IF v_int AND v_hi_ts > v_lo_ts THEN
            v_mid := v_lo + floor((v_at - v_lo_ts) / (v_hi_ts - v_lo_ts) * (v_hi - v_lo))::bigint;
            v_mid := LEAST(GREATEST(v_mid, v_lo + 1), v_hi - 1);
        ELSE
            v_mid := v_lo + (v_hi - v_lo) / 2;
        END IF;
        v_int := NOT v_int;
        SELECT t.base_offset, t.end_offset, t.created_at INTO v_b, v_end, v_ts
        FROM queen.log_txns t WHERE t.partition_id = p_pid AND t.base_offset <= v_mid
        ORDER BY t.base_offset DESC LIMIT 1;
        IF v_ts < p_ts OR (p_incl AND v_ts = p_ts) THEN
            v_lo := GREATEST(v_mid, LEAST(v_end, v_hi - 1)); -- the whole row qualifies
            v_lo_b := v_b;
            v_lo_ts := extract(epoch FROM v_ts);
        ELSE
            v_hi := v_b; -- every offset from v_b to v_mid is covered by that same row
            v_hi_ts := extract(epoch FROM v_ts);
        END IF;
    END LOOP;
    RETURN v_lo_b;
END;
$$;

-- One listing row step: the newest log_txns row of partition p_pid with base_offset below p_below (inclusive when
-- p_incl), stamped before p_to and before the cursor (p_cts, p_cpid, p_coff), with top = its last frame before the
-- cursor and nq = its frames up to top; no row when that row is stamped before p_from (created_at never decreases
-- with the offset, so every older row is too: the walk ends there). Inlined into the walk of list_messages.
CREATE OR REPLACE FUNCTION queen._msg_txn_step(p_pid uuid, p_below bigint, p_incl boolean, p_from timestamptz,
                                               p_to timestamptz, p_cts timestamptz, p_cpid uuid, p_coff bigint)
RETURNS TABLE (base_offset bigint, created_at timestamptz, top bigint, nq bigint)
LANGUAGE sql STABLE
AS $$
    SELECT r.base_offset, r.created_at, r.top, r.top - r.base_offset + 1
    FROM (
        SELECT t.base_offset, t.created_at,
               CASE WHEN t.created_at = p_cts AND p_pid = p_cpid THEN LEAST(t.end_offset, p_coff - 1)
                    ELSE t.end_offset END AS top
        FROM queen.log_txns t
        WHERE t.partition_id = p_pid
          AND t.base_offset <= p_below AND (p_incl OR t.base_offset < p_below)
          AND t.created_at < p_to
          AND (p_cts IS NULL OR t.created_at < p_cts
               OR (t.created_at = p_cts AND (p_pid > p_cpid OR (p_pid = p_cpid AND t.base_offset < p_coff))))
        ORDER BY t.base_offset DESC
        LIMIT 1
    ) r
    WHERE r.created_at >= p_from
$$;

-- ---------------------------------------------------------------------------------------------------------------------
-- GET /api/v1/messages
-- ---------------------------------------------------------------------------------------------------------------------

-- Filter (all optional strings): queue, partition, namespace (alias ns), task, status, from, to, limit (200),
-- offset (0), cursor. Window on log_txns.created_at: [from (default now-1h), to (default minute(now)+1min)).
-- Order: created_at DESC, partition_id ASC, offset DESC (= created_at DESC, offset DESC inside a partition; a txns
-- row's frames stay contiguous; partition_id only breaks exact-microsecond ties across partitions).
-- With "cursor" the offset is ignored and rows strictly after the cursor position are returned. nextCursor encodes
-- the page's last row when the page is full, else null. Bad from/to/cursor -> {"error": ...}.
-- Work is bounded per candidate partition: at most (offset+limit) newest qualifying frames each, read newest-first
-- off the log_txns PK (the status filter is applied per frame inside that scan, so the bound holds with it too), and
-- at most v_rows txns rows (see there). An explicit "to" and a cursor become the offset where that scan starts
-- (queen._msg_txn_upto), and the first row before "from" ends it, so rows outside the window are not walked; pages
-- without a status filter walk rows and expand only those overlapping the page; status=dead_letter pages walk the
-- partition's dead letters (newest offset first) instead of its rows.
-- Hash blobs are read only for the page's rows. The body is built as json with the keys in jsonb's order and cast
-- once: the same jsonb as building it as jsonb, without re-encoding every message object twice.
CREATE OR REPLACE FUNCTION queen.list_messages(p_tenant uuid, p_filter jsonb)
RETURNS jsonb
LANGUAGE plpgsql STABLE
-- The per-partition bounds are plpgsql variables (limit/offset, status, cursor): plan them with their values, never
-- with a generic plan that cannot see them.
SET plan_cache_mode = force_custom_plan
AS $$
DECLARE
    v_page    record  := queen._msg_page(p_tenant, p_filter, 1, 200, now() - interval '1 hour',
                                         date_trunc('minute', now()) + interval '1 minute');
    v_ns      text    := NULLIF(COALESCE(NULLIF(v_page.f->>'namespace', ''), v_page.f->>'ns'), '');
    v_task    text    := NULLIF(v_page.f->>'task', '');
    v_status  text    := NULLIF(lower(btrim(v_page.f->>'status')), '');
    v_limit   integer;
    v_offset  integer;
    v_from    timestamptz;
    v_to      timestamptz;
    v_inner   bigint;
    v_rows    bigint;
    c_ts      timestamptz;
    c_pid     uuid;
    c_off     bigint;
    v_pids    uuid[];
    v_hasq    boolean;
    v_bus     integer;
    v_mode    jsonb;
    v_msgs    json;
    v_to_set  boolean := NULLIF(btrim(v_page.f->>'to'), '') IS NOT NULL;
    v_n       integer;
    l_ts      timestamptz;
    l_pid     uuid;
    l_off     bigint;
BEGIN
    IF v_page.error IS NOT NULL THEN
        RETURN jsonb_build_object('error', v_page.error);
    END IF;
    v_limit := v_page.lim;
    v_offset := v_page.off;
    v_from := v_page.ts_from;
    v_to := v_page.ts_to;
    c_ts := v_page.c_ts;
    c_pid := v_page.c_id;
    c_off := v_page.c_off;
    v_inner := v_limit + v_offset;
    -- Status per frame (ENGINE §8.1, first match wins): dead_letter (a DLQ row at the offset) > completed (named
    -- groups exist and all committed >= offset; or none and the queue-mode cursor passed it) > processing (any live
    -- lease on the partition) > pending. The filter below applies it per frame inside each partition's scan.

    -- Candidate partitions (also the scope of "mode").
    SELECT COALESCE(array_agg(p.id), '{}') INTO v_pids
    FROM queen.queues q
    JOIN queen.log_partitions p ON p.queue_id = q.id
    WHERE q.tenant_id = v_page.tenant
      AND (v_page.queue IS NULL OR q.name = v_page.queue)
      AND (v_page.part IS NULL OR p.name = v_page.part)
      AND (v_ns IS NULL OR COALESCE(NULLIF(q.namespace, ''), queen._log_name_ns(q.name)) = v_ns)
      AND (v_task IS NULL OR COALESCE(NULLIF(q.task, ''), queen._log_name_task(q.name)) = v_task);

    SELECT COALESCE(bool_or(c.consumer_group = '__QUEUE_MODE__'), false),
           count(DISTINCT c.consumer_group) FILTER (WHERE c.consumer_group <> '__QUEUE_MODE__')
    INTO v_hasq, v_bus
    FROM queen.log_consumers c
    WHERE c.partition_id = ANY (v_pids);
    v_mode := jsonb_build_object('hasQueueMode', v_hasq, 'busGroupsCount', v_bus,
                                 'type', CASE WHEN v_hasq AND v_bus > 0 THEN 'hybrid'
                                              WHEN v_hasq THEN 'queue'
                                              WHEN v_bus > 0 THEN 'bus'
                                              ELSE 'none' END);

    -- v_rows bounds the txns rows read per partition (a plpgsql value, so the plan sees the LIMIT). Every row the
    -- row filters below let through yields at least one qualifying frame (rows before "from" aside: they are the
    -- tail of the scan and are dropped after it), except (a) a frame that is a dead letter
    -- (at most one per DLQ row of the candidate partitions) and (b) the one row that holds the cursor offset; so
    -- offset + limit + DLQ rows + 1 rows hold the offset + limit newest qualifying frames. 0 for an unknown status
    -- (nothing matches it) and for dead_letter (read from log_dlq instead).
    v_rows := CASE WHEN v_status IS NULL THEN v_inner
                   WHEN v_status IN ('completed', 'processing', 'pending')
                       THEN v_inner + 1 + (SELECT count(*) FROM queen.log_dlq d WHERE d.partition_id = ANY (v_pids))
                   ELSE 0 END; -- dead_letter: the row scan does not run (the dead-letter walk below does)

    WITH cand AS MATERIALIZED (
        -- Per candidate partition: cursor aggregates. thr = the offset every relevant group has passed (named groups
        -- first, else the queue-mode cursor; NULL = nothing completed), so completed <=> offset <= thr.
        SELECT c.pid, a.named, a.min_named, a.qm_committed, COALESCE(a.any_live, false) AS any_live, a.qm_lease,
               CASE WHEN a.named > 0 THEN a.min_named ELSE a.qm_committed END AS thr,
               -- whether the partition has any dead letter: without one, no per-frame DLQ probe below
               EXISTS (SELECT 1 FROM queen.log_dlq d0 WHERE d0.partition_id = c.pid) AS has_dlq,
               -- the newest base_offset inside the window and at or before the cursor, from an explicit "to" and the
               -- cursor (no bound otherwise: nothing is stamped after the default "to"). "from" needs no search: rows
               -- are read newest first and created_at never grows backwards, so the first row before it ends a scan.
               COALESCE(LEAST(CASE WHEN v_to_set THEN queen._msg_txn_upto(c.pid, v_to, false) END,
                              CASE WHEN c_ts IS NOT NULL THEN queen._msg_txn_upto(c.pid, c_ts, true) END),
                        9223372036854775807) AS hi
        FROM unnest(v_pids) AS c(pid)
        CROSS JOIN LATERAL (
            SELECT count(*) FILTER (WHERE c2.consumer_group <> '__QUEUE_MODE__') AS named,
                   min(c2.committed) FILTER (WHERE c2.consumer_group <> '__QUEUE_MODE__') AS min_named,
                   max(c2.committed) FILTER (WHERE c2.consumer_group = '__QUEUE_MODE__') AS qm_committed,
                   bool_or(c2.worker_id IS NOT NULL AND c2.lease_expires_at > now()) AS any_live,
                   max(c2.lease_expires_at) FILTER (WHERE c2.consumer_group = '__QUEUE_MODE__'
                                                      AND c2.worker_id IS NOT NULL AND c2.lease_expires_at > now()) AS qm_lease
            FROM queen.log_consumers c2
            WHERE c2.partition_id = c.pid
        ) a
    ),
    fr AS MATERIALIZED (
        -- Newest frames per partition inside the window, after the cursor and of the wanted status: at most
        -- v_inner = offset + limit each (the status predicate is applied here, per frame, so the bound holds).
        -- Slim rows: no names and no hash (the hash blob is not read here); the frame count comes from the offsets.
        SELECT c.pid, c.named, c.thr, c.any_live, c.qm_lease, x.base_offset, x.created_at, x.off
        FROM cand c
        CROSS JOIN LATERAL (
            SELECT t.base_offset, t.created_at, t.base_offset + g.i AS off
            FROM (
                SELECT t0.base_offset, t0.end_offset, t0.created_at
                FROM queen.log_txns t0
                WHERE t0.partition_id = c.pid
                  AND t0.base_offset <= c.hi AND t0.created_at < v_to
                  AND (c_ts IS NULL OR t0.created_at < c_ts
                       OR (t0.created_at = c_ts AND (c.pid > c_pid OR (c.pid = c_pid AND t0.base_offset < c_off))))
                  AND (v_status IS DISTINCT FROM 'completed' OR t0.base_offset <= c.thr)
                  AND (v_status IS NULL OR v_status NOT IN ('processing', 'pending') OR c.thr IS NULL
                       OR t0.end_offset > c.thr)
                ORDER BY t0.base_offset DESC
                LIMIT v_rows
            ) t
            CROSS JOIN LATERAL generate_series(0, (t.end_offset - t.base_offset)::integer) AS g(i)
            -- "from" after the LIMIT: the rows before it are the tail of that newest-first scan (created_at never
            -- grows backwards), so the rows inside the window are the same, and the scan stops at v_rows rows
            WHERE t.created_at >= v_from
              AND (c_ts IS NULL OR t.created_at < c_ts
                   OR (t.created_at = c_ts AND (c.pid > c_pid OR (c.pid = c_pid AND t.base_offset + g.i < c_off))))
              AND (v_status IS NULL OR CASE v_status
                    WHEN 'dead_letter' THEN
                        EXISTS (SELECT 1 FROM queen.log_dlq d WHERE d.partition_id = c.pid AND d."offset" = t.base_offset + g.i)
                    WHEN 'completed' THEN t.base_offset + g.i <= c.thr
                        AND (NOT c.has_dlq OR NOT EXISTS (SELECT 1 FROM queen.log_dlq d
                                                          WHERE d.partition_id = c.pid AND d."offset" = t.base_offset + g.i))
                    WHEN 'processing' THEN c.any_live AND (c.thr IS NULL OR t.base_offset + g.i > c.thr)
                        AND (NOT c.has_dlq OR NOT EXISTS (SELECT 1 FROM queen.log_dlq d
                                                          WHERE d.partition_id = c.pid AND d."offset" = t.base_offset + g.i))
                    WHEN 'pending' THEN NOT c.any_live AND (c.thr IS NULL OR t.base_offset + g.i > c.thr)
                        AND (NOT c.has_dlq OR NOT EXISTS (SELECT 1 FROM queen.log_dlq d
                                                          WHERE d.partition_id = c.pid AND d."offset" = t.base_offset + g.i))
                    ELSE false END)
            ORDER BY t.base_offset DESC, g.i DESC
            LIMIT v_inner
        ) x
        WHERE v_status = 'completed'
           OR (v_status = 'processing' AND c.any_live) OR (v_status = 'pending' AND NOT c.any_live)
        UNION ALL
        -- status=dead_letter: the newest distinct dead-letter offsets of each partition (log_dlq's (partition_id,
        -- offset) index, newest first), each resolved to its covering txns row, filtered as above: at most
        -- v_inner = offset + limit each; the rows read are the dead letters' own (at most the partition's DLQ rows).
        SELECT c.pid, c.named, c.thr, c.any_live, c.qm_lease, x.base_offset, x.created_at, x.off
        FROM cand c
        CROSS JOIN LATERAL (
            SELECT t.base_offset, t.created_at, d.off
            FROM (
                SELECT DISTINCT d0."offset" AS off
                FROM queen.log_dlq d0
                WHERE d0.partition_id = c.pid
                ORDER BY d0."offset" DESC
            ) d
            CROSS JOIN LATERAL (
                SELECT t1.base_offset, t1.end_offset, t1.created_at
                FROM queen.log_txns t1
                WHERE t1.partition_id = c.pid AND t1.base_offset <= d.off
                ORDER BY t1.base_offset DESC
                LIMIT 1
            ) t
            WHERE t.end_offset >= d.off AND t.base_offset <= c.hi
              AND t.created_at >= v_from AND t.created_at < v_to
              AND (c_ts IS NULL OR t.created_at < c_ts
                   OR (t.created_at = c_ts AND (c.pid > c_pid OR (c.pid = c_pid AND d.off < c_off))))
            ORDER BY d.off DESC
            LIMIT v_inner
        ) x
        WHERE v_status = 'dead_letter' AND c.has_dlq
    ),
    rw AS MATERIALIZED (
        -- No status filter: rows, not frames. Each partition's rows newest first, one primary-key probe each, until
        -- they hold offset + limit frames (cum); a row's frames after the cursor are the nq offsets ending at top.
        WITH RECURSIVE w AS (
            SELECT c.pid, r.base_offset, r.created_at, r.top, r.nq, r.nq AS cum
            FROM cand c
            CROSS JOIN LATERAL queen._msg_txn_step(c.pid, c.hi, true, v_from, v_to, c_ts, c_pid, c_off) r
            WHERE v_status IS NULL
            UNION ALL
            SELECT w.pid, r.base_offset, r.created_at, r.top, r.nq, w.cum + r.nq
            FROM w
            CROSS JOIN LATERAL queen._msg_txn_step(w.pid, w.base_offset, false, v_from, v_to, c_ts, c_pid, c_off) r
            WHERE w.cum < v_inner
        )
        -- k = the frames a row keeps (its partition's offset + limit newest), start = the position of its top frame
        -- in the listing order (created_at DESC, partition_id, offset DESC: a row's frames are contiguous in it)
        SELECT w.pid, w.base_offset, w.created_at, w.top, x.k,
               (sum(x.k) OVER (ORDER BY w.created_at DESC, w.pid, w.base_offset DESC) - x.k)::bigint AS start
        FROM w
        CROSS JOIN LATERAL (SELECT LEAST(w.nq, v_inner - (w.cum - w.nq)) AS k) x
    ),
    page AS (
        (SELECT fr.*
         FROM fr
         ORDER BY fr.created_at DESC, fr.pid, fr.off DESC
         LIMIT v_limit OFFSET v_offset)
        UNION ALL
        -- no status filter: only the rows overlapping [offset, offset + limit) are expanded to frames
        SELECT c.pid, c.named, c.thr, c.any_live, c.qm_lease, r.base_offset, r.created_at, r.top - g.i
        FROM rw r
        JOIN cand c ON c.pid = r.pid
        CROSS JOIN LATERAL generate_series(GREATEST(v_offset - r.start, 0),
                                           LEAST(r.k, v_offset + v_limit - r.start) - 1) AS g(i)
        WHERE r.start < v_offset + v_limit AND r.start + r.k > v_offset
    ),
    items AS (
        SELECT pg.created_at, pg.pid, pg.off, st.s, seg.seq, pg.qm_lease, pg.named,
               substring(t.hashes FROM ((pg.off - pg.base_offset) * 16 + 1)::integer FOR 16) AS h,
               q.name::text AS qname, p.name AS pname, q.priority,
               COALESCE(NULLIF(q.namespace, ''), queen._log_name_ns(q.name)) AS ns,
               COALESCE(NULLIF(q.task, ''), queen._log_name_task(q.name)) AS task,
               (SELECT count(*) FROM queen.log_consumers c
                WHERE c.partition_id = pg.pid AND c.consumer_group <> '__QUEUE_MODE__' AND c.committed >= pg.off)
                   AS consumed_by
        FROM page pg
        JOIN queen.log_partitions p ON p.id = pg.pid
        JOIN queen.queues q ON q.id = p.queue_id
        JOIN queen.log_txns t ON t.partition_id = pg.pid AND t.base_offset = pg.base_offset
        CROSS JOIN LATERAL (
            SELECT CASE
                WHEN EXISTS (SELECT 1 FROM queen.log_dlq d WHERE d.partition_id = pg.pid AND d."offset" = pg.off)
                    THEN 'dead_letter'
                WHEN pg.off <= pg.thr THEN 'completed'
                WHEN pg.any_live THEN 'processing'
                ELSE 'pending' END AS s
        ) st
        CROSS JOIN LATERAL (
            SELECT COALESCE((SELECT s.base_offset FROM queen.log_segment_at(pg.pid, pg.off) s), pg.base_offset) AS seq
            OFFSET 0 -- one segment probe per row (seq is read twice below)
        ) seg
    )
    -- json keys in jsonb's order (by length, then bytes): the cast below yields the same jsonb either way. One sort
    -- order for every aggregate (one sort), and the page's last row is the last element.
    SELECT COALESCE(json_agg(json_build_object(
               'id', NULL,
               'task', i.task,
               'queue', i.qname,
               'status', i.s,
               'segment', json_build_object('seq', i.seq, 'frameIdx', i.off - i.seq),
               'traceId', NULL,
               'txnHash', encode(i.h, 'hex'),
               'busStatus', json_build_object('consumedBy', i.consumed_by, 'totalGroups', i.named),
               'createdAt', queen._msg_ts(i.created_at),
               'namespace', i.ns,
               'partition', i.pname,
               'queuePath', i.qname || '/' || i.pname,
               'partitionId', i.pid,
               'producerSub', NULL,
               'queueStatus', i.s,
               'queuePriority', i.priority,
               'transactionId', NULL,
               'leaseExpiresAt', queen._msg_ts(i.qm_lease),
               'payloadAvailable', false)
             ORDER BY i.created_at DESC, i.pid, i.off DESC), '[]'::json),
           count(*),
           (array_agg(i.created_at ORDER BY i.created_at DESC, i.pid, i.off DESC))[count(*)],
           (array_agg(i.pid ORDER BY i.created_at DESC, i.pid, i.off DESC))[count(*)],
           (array_agg(i.off ORDER BY i.created_at DESC, i.pid, i.off DESC))[count(*)]
    INTO v_msgs, v_n, l_ts, l_pid, l_off
    FROM items i;

    RETURN json_build_object(
        'mode', v_mode,
        'messages', v_msgs,
        'nextCursor', CASE WHEN v_n = v_limit THEN queen._msg_cursor_encode(1, l_ts, l_pid, l_off) END)::jsonb;
END;
$$;

-- ---------------------------------------------------------------------------------------------------------------------
-- GET /api/v1/messages/:partitionId/:transactionId
-- ---------------------------------------------------------------------------------------------------------------------

-- p_hash: xxh3-128 of the transaction id (16 bytes, computed by the broker). p_offset: an offset the broker resolved
-- itself (purged-txns fallback scan); NULL -> the newest occurrence of p_hash in the partition's log_txns.
--   partition missing / not the tenant's -> {"found":false,"partitionExists":false}
--   nothing resolved                      -> {"found":false,"partitionExists":true}
--   else the detail (ENGINE §8.2); "segment" is the covering segment or null when retention deleted it.
CREATE OR REPLACE FUNCTION queen.message_detail(p_tenant uuid, p_pid uuid, p_hash bytea, p_offset bigint DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_tenant uuid := COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001');
    v_p      record;
    v_off    bigint;
    v_seg    jsonb;
    v_dlq    record;
    v_named  bigint;
    v_min    bigint;
    v_qm     record;
    v_live   boolean;
    v_groups jsonb;
    v_status text;
BEGIN
    SELECT p.id, p.name AS pname, p.last_offset, q.*
    INTO v_p
    FROM queen.log_partitions p
    JOIN queen.queues q ON q.id = p.queue_id
    WHERE p.id = p_pid AND q.tenant_id = v_tenant;
    IF NOT FOUND THEN
        RETURN jsonb_build_object('found', false, 'partitionExists', false);
    END IF;

    IF p_offset IS NOT NULL THEN
        IF p_offset >= 0 AND p_offset <= v_p.last_offset THEN
            v_off := p_offset;
        END IF;
    ELSIF p_hash IS NOT NULL AND octet_length(p_hash) = 16 THEN
        SELECT t.base_offset + h.idx INTO v_off
        FROM queen.log_txns t
        CROSS JOIN LATERAL queen.log_unnest_hashes(t.hashes) h
        WHERE t.partition_id = p_pid AND h.h = p_hash
        ORDER BY t.base_offset DESC, h.idx DESC
        LIMIT 1;
    END IF;
    IF v_off IS NULL THEN
        RETURN jsonb_build_object('found', false, 'partitionExists', true);
    END IF;

    SELECT jsonb_build_object('base', s.base_offset, 'end', s.end_offset, 'createdAt', queen._msg_ts(s.created_at))
    INTO v_seg
    FROM queen.log_segment_at(p_pid, v_off) s;

    SELECT d.error, d.retry_count INTO v_dlq
    FROM queen.log_dlq d
    WHERE d.partition_id = p_pid AND d."offset" = v_off
    ORDER BY d.failed_at DESC, d.id DESC
    LIMIT 1;

    SELECT count(*), min(c.committed) INTO v_named, v_min
    FROM queen.log_consumers c
    WHERE c.partition_id = p_pid AND c.consumer_group <> '__QUEUE_MODE__';

    SELECT c.committed,
           CASE WHEN c.worker_id IS NOT NULL AND c.lease_expires_at > now() THEN c.lease_expires_at END AS lease
    INTO v_qm
    FROM queen.log_consumers c
    WHERE c.partition_id = p_pid AND c.consumer_group = '__QUEUE_MODE__';

    SELECT COALESCE(bool_or(c.worker_id IS NOT NULL AND c.lease_expires_at > now()), false) INTO v_live
    FROM queen.log_consumers c
    WHERE c.partition_id = p_pid;

    SELECT COALESCE(jsonb_agg(jsonb_build_object(
               'name', c.consumer_group,
               'group', c.consumer_group,
               'consumed', c.committed >= v_off,
               'leaseExpiresAt', CASE WHEN c.worker_id IS NOT NULL AND c.lease_expires_at > now()
                                      THEN queen._msg_ts(c.lease_expires_at) END)
             ORDER BY c.consumer_group), '[]'::jsonb)
    INTO v_groups
    FROM queen.log_consumers c
    WHERE c.partition_id = p_pid AND c.consumer_group <> '__QUEUE_MODE__';

    v_status := CASE
        WHEN EXISTS (SELECT 1 FROM queen.log_dlq d WHERE d.partition_id = p_pid AND d."offset" = v_off) THEN 'dead_letter'
        WHEN (v_named > 0 AND v_min >= v_off) OR (v_named = 0 AND v_qm.committed >= v_off) THEN 'completed'
        WHEN v_live THEN 'processing'
        ELSE 'pending'
    END;

    RETURN jsonb_build_object(
        'found', true,
        'offset', v_off,
        'segment', v_seg,
        'partitionId', p_pid,
        'partition', v_p.pname,
        'queue', v_p.name,
        'queuePath', v_p.name || '/' || v_p.pname,
        'namespace', COALESCE(NULLIF(v_p.namespace, ''), queen._log_name_ns(v_p.name)),
        'task', COALESCE(NULLIF(v_p.task, ''), queen._log_name_task(v_p.name)),
        'status', v_status,
        'errorMessage', v_dlq.error,
        'retryCount', COALESCE(v_dlq.retry_count, 0),
        'leaseExpiresAt', queen._msg_ts(v_qm.lease),
        'queueConfig', jsonb_build_object(
            'leaseTime', v_p.lease_time,
            'retryLimit', v_p.retry_limit,
            'retryDelay', v_p.retry_delay,
            'ttl', v_p.ttl,
            'priority', v_p.priority,
            'dedupWindowSeconds', v_p.dedup_window_seconds,
            'encryptionEnabled', v_p.encryption_enabled),
        'mode', jsonb_build_object(
            'hasQueueMode', v_qm.committed IS NOT NULL,
            'busGroupsCount', v_named,
            'type', CASE WHEN v_named > 0 THEN 'bus' ELSE 'queue' END),
        'consumerGroups', v_groups);
END;
$$;

-- Segments of a partition with base_offset < p_before (NULL = no bound), newest first, at most p_limit rows.
-- The broker pages through up to 5000 of them for the purged-txns fallback scan (it decodes; SQL does not).
CREATE OR REPLACE FUNCTION queen.log_segments_newest(p_pid uuid, p_before bigint, p_limit integer)
RETURNS TABLE (base_offset bigint, end_offset bigint, created_at timestamptz, blob bytea)
LANGUAGE sql STABLE
AS $$
    SELECT s.base_offset, s.end_offset, s.created_at, s.blob
    FROM queen.log_segments s
    WHERE s.partition_id = p_pid
      AND (p_before IS NULL OR s.base_offset < p_before)
    ORDER BY s.base_offset DESC
    LIMIT GREATEST(COALESCE(p_limit, 100), 0)
$$;

-- The stored segments at the given (partition, base_offset) pairs (p_pids[i], p_bases[i]); pairs with no segment
-- (retention deleted it) yield no row. One round trip for all the covering segments of a listing page.
CREATE OR REPLACE FUNCTION queen.log_segments_of(p_pids uuid[], p_bases bigint[])
RETURNS TABLE (partition_id uuid, base_offset bigint, blob bytea)
LANGUAGE sql STABLE
AS $$
    SELECT s.partition_id, s.base_offset, s.blob
    FROM unnest(p_pids, p_bases) AS k(pid, base)
    JOIN queen.log_segments s ON s.partition_id = k.pid AND s.base_offset = k.base
$$;
