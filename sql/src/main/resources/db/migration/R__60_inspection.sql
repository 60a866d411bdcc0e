-- =====================================================================================================================
-- Message inspection (ENGINE.md §8; API.md §5.9).
-- A repeatable migration: the rules for editing it are at the top of R__10_common.sql.
--
--   list_messages             GET    /api/v1/messages                       (segment hashes exploded to frames, no decode;
--                                                                          one _msg_page_* statement per page kind)
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


-- The newest txns row (a segment row at or past txns_start: one with hashes) of partition p_pid stamped before p_ts
-- (at or before it when p_incl): its base_offset; -1 when no row is. Push stamps created_at under the partition lock, so it never decreases as the offset grows: a
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
    v_first bigint  := (SELECT p.txns_start FROM queen.log_partitions p WHERE p.id = p_pid);
BEGIN
    SELECT t.base_offset, t.created_at INTO v_hi, v_ts
    FROM queen.log_segments t WHERE t.partition_id = p_pid AND t.base_offset >= v_first
    ORDER BY t.base_offset DESC LIMIT 1;
    IF v_hi IS NULL THEN
        RETURN -1;
    END IF;
    IF v_ts < p_ts OR (p_incl AND v_ts = p_ts) THEN
        RETURN v_hi; -- the newest row qualifies: the common case, one probe
    END IF;
    v_hi_ts := extract(epoch FROM v_ts);
    SELECT t.base_offset, t.end_offset, t.created_at INTO v_lo_b, v_lo, v_ts
    FROM queen.log_segments t WHERE t.partition_id = p_pid AND t.base_offset >= v_first
    ORDER BY t.base_offset LIMIT 1;
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
        FROM queen.log_segments t WHERE t.partition_id = p_pid AND t.base_offset <= v_mid
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

-- One listing row step: the newest txns row of partition p_pid with base_offset below p_below (inclusive when
-- p_incl), stamped before p_to and before the cursor (p_cts, p_cpid, p_coff), with top = its last frame before the
-- cursor and nq = its frames up to top; no row when that row is stamped before p_from (created_at never decreases
-- with the offset, so every older row is too: the walk ends there). Inlined into the walk of _msg_page_rows.
CREATE OR REPLACE FUNCTION queen._msg_txn_step(p_pid uuid, p_below bigint, p_incl boolean, p_from timestamptz,
                                               p_to timestamptz, p_cts timestamptz, p_cpid uuid, p_coff bigint)
RETURNS TABLE (base_offset bigint, created_at timestamptz, top bigint, nq bigint)
LANGUAGE sql STABLE
AS $$
    SELECT r.base_offset, r.created_at, r.top, r.top - r.base_offset + 1
    FROM (
        SELECT t.base_offset, t.created_at, t.hashes IS NOT NULL AS txn,
               CASE WHEN t.created_at = p_cts AND p_pid = p_cpid THEN LEAST(t.end_offset, p_coff - 1)
                    ELSE t.end_offset END AS top
        FROM queen.log_segments t
        WHERE t.partition_id = p_pid
          AND t.base_offset <= p_below AND (p_incl OR t.base_offset < p_below)
          AND t.created_at < p_to
          AND (p_cts IS NULL OR t.created_at < p_cts
               OR (t.created_at = p_cts AND (p_pid > p_cpid OR (p_pid = p_cpid AND t.base_offset < p_coff))))
        ORDER BY t.base_offset DESC
        LIMIT 1
    ) r
    WHERE r.created_at >= p_from
      AND r.txn   -- below txns_start the hashes are purged (NULL) in every older row too: the walk ends there as well
$$;

-- ---------------------------------------------------------------------------------------------------------------------
-- GET /api/v1/messages
-- ---------------------------------------------------------------------------------------------------------------------

-- Filter (all optional strings): queue, partition, namespace (alias ns), task, status, from, to, limit (200),
-- offset (0), cursor. Window on the txns rows' created_at: [from (default now-1h), to (default minute(now)+1min)).
-- Order: created_at DESC, partition_id ASC, offset DESC (= created_at DESC, offset DESC inside a partition; a txns
-- row's frames stay contiguous; partition_id only breaks exact-microsecond ties across partitions).
-- With "cursor" the offset is ignored and rows strictly after the cursor position are returned. nextCursor encodes
-- the page's last row when the page is full, else null. Bad from/to/cursor -> {"error": ...}.
-- Work is bounded per candidate partition: at most (offset+limit) newest qualifying frames each, read newest-first
-- off the log_segments PK (the status filter is applied per frame inside that scan, so the bound holds with it too). An
-- explicit "to" and a cursor become the offset where that scan starts (queen._msg_txn_upto), and the first row
-- before "from" ends it, so rows outside the window are not walked.
-- One small statement per page kind (issue 23: planning one statement that covered every kind, on every call, cost
-- more than running it): the candidates' cursor aggregates are read into arrays first (_msg_page_cand), then
--   no status filter            _msg_page_rows    walks rows and expands only those overlapping the page
--   completed/processing/pending _msg_page_frames scans frames, the status applied per frame
--   dead_letter                 _msg_page_dead    walks the partitions' dead letters, newest offset first
-- each yielding the page's frames as arrays, which _msg_page_render turns into the body. The statements with no
-- LIMIT taken from a parameter keep one generic plan per session; the others are planned with their values.
-- Hash blobs are read only for the page's rows.
DROP FUNCTION IF EXISTS queen.list_messages(uuid, jsonb); -- it returned jsonb (cast from the json it built)
CREATE OR REPLACE FUNCTION queen.list_messages(p_tenant uuid, p_filter jsonb)
RETURNS json
LANGUAGE plpgsql STABLE
-- the candidate query's filters are "x IS NULL OR col = x": plan them with their values
SET plan_cache_mode = force_custom_plan
AS $$
DECLARE
    v_page    record  := queen._msg_page(p_tenant, p_filter, 1, 200, now() - interval '1 hour',
                                         date_trunc('minute', now()) + interval '1 minute');
    v_ns      text    := NULLIF(COALESCE(NULLIF(v_page.f->>'namespace', ''), v_page.f->>'ns'), '');
    v_task    text    := NULLIF(v_page.f->>'task', '');
    v_status  text    := NULLIF(lower(btrim(v_page.f->>'status')), '');
    v_to_set  boolean := NULLIF(btrim(v_page.f->>'to'), '') IS NOT NULL;
    v_pids    uuid[];
    v_hasq    boolean;
    v_bus     integer;
    c         record; -- the candidates' aggregates, arrays in v_pids order
    g_pid     uuid[]; -- the page's frames
    g_base    bigint[];
    g_cat     timestamptz[];
    g_off     bigint[];
BEGIN
    IF v_page.error IS NOT NULL THEN
        RETURN json_build_object('error', v_page.error);
    END IF;

    -- Candidate partitions (also the scope of "mode").
    SELECT COALESCE(array_agg(p.id), '{}') INTO v_pids
    FROM queen.queues q
    JOIN queen.log_partitions p ON p.queue_id = q.id
    WHERE q.tenant_id = v_page.tenant
      AND (v_page.queue IS NULL OR q.name = v_page.queue)
      AND (v_page.part IS NULL OR p.name = v_page.part)
      AND (v_ns IS NULL OR COALESCE(NULLIF(q.namespace, ''), queen._log_name_ns(q.name)) = v_ns)
      AND (v_task IS NULL OR COALESCE(NULLIF(q.task, ''), queen._log_name_task(q.name)) = v_task);

    SELECT COALESCE(bool_or(lc.consumer_group = '__QUEUE_MODE__'), false),
           count(DISTINCT lc.consumer_group) FILTER (WHERE lc.consumer_group <> '__QUEUE_MODE__')
    INTO v_hasq, v_bus
    FROM queen.log_consumers lc
    WHERE lc.partition_id = ANY (v_pids);

    c := queen._msg_page_cand(v_pids, CASE WHEN v_to_set THEN v_page.ts_to END, v_page.c_ts);
    -- Status per frame (ENGINE §8.1, first match wins): dead_letter (a DLQ row at the offset) > completed (named
    -- groups exist and all committed >= offset; or none and the queue-mode cursor passed it) > processing (any live
    -- lease on the partition) > pending. The status pages apply it per frame inside each partition's scan.
    IF v_status IS NULL THEN
        SELECT r.pids, r.bases, r.stamps, r.offs INTO g_pid, g_base, g_cat, g_off
        FROM queen._msg_page_rows(v_pids, c.his, v_page.lim, v_page.off, v_page.ts_from, v_page.ts_to,
                                  v_page.c_ts, v_page.c_id, v_page.c_off) r;
    ELSIF v_status IN ('completed', 'processing', 'pending') THEN
        SELECT r.pids, r.bases, r.stamps, r.offs INTO g_pid, g_base, g_cat, g_off
        FROM queen._msg_page_frames(v_pids, c.his, c.thrs, c.lives, c.dlqs, v_status, v_page.lim, v_page.off,
                                    v_page.ts_from, v_page.ts_to, v_page.c_ts, v_page.c_id, v_page.c_off) r;
    ELSIF v_status = 'dead_letter' THEN
        SELECT r.pids, r.bases, r.stamps, r.offs INTO g_pid, g_base, g_cat, g_off
        FROM queen._msg_page_dead(v_pids, c.his, c.dlqs, v_page.ts_from, v_page.ts_to,
                                  v_page.c_ts, v_page.c_id, v_page.c_off, v_page.lim, v_page.off) r;
    END IF; -- any other status: nothing matches it, an empty page

    RETURN queen._msg_page_render(
        jsonb_build_object('hasQueueMode', v_hasq, 'busGroupsCount', v_bus,
                           'type', CASE WHEN v_hasq AND v_bus > 0 THEN 'hybrid'
                                        WHEN v_hasq THEN 'queue'
                                        WHEN v_bus > 0 THEN 'bus'
                                        ELSE 'none' END),
        v_pids, c.nameds, c.thrs, c.lives, c.qmls, c.dlqs, g_pid, g_base, g_cat, g_off, v_page.lim);
END;
$$;

-- The listing's per-candidate aggregates, one element per partition of p_pids (same order): his = the newest
-- base_offset inside the window and at or before the cursor, from an explicit "to" (p_to, NULL when not given) and the
-- cursor stamp p_cts (no bound otherwise: nothing is stamped after the default "to"; "from" needs no search: rows are
-- read newest first and created_at never grows backwards, so the first row before it ends a scan); nameds = named
-- groups; thrs = the offset every relevant group has passed (named groups first, else the queue-mode cursor; NULL =
-- nothing completed), so completed <=> offset <= thr; lives = any live lease; qmls = the live queue-mode lease's
-- expiry; dlqs = whether the partition has any dead letter (without one, no per-frame DLQ probe).
-- Index probes per partition whatever the values: one generic plan.
CREATE OR REPLACE FUNCTION queen._msg_page_cand(p_pids uuid[], p_to timestamptz, p_cts timestamptz,
                                                OUT his bigint[], OUT nameds bigint[], OUT thrs bigint[],
                                                OUT lives boolean[], OUT qmls timestamptz[], OUT dlqs boolean[])
LANGUAGE plpgsql STABLE
SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
    SELECT array_agg(COALESCE(LEAST(CASE WHEN p_to IS NOT NULL THEN queen._msg_txn_upto(c.pid, p_to, false) END,
                                    CASE WHEN p_cts IS NOT NULL THEN queen._msg_txn_upto(c.pid, p_cts, true) END),
                              9223372036854775807) ORDER BY c.n),
           array_agg(a.named ORDER BY c.n),
           array_agg(CASE WHEN a.named > 0 THEN a.min_named ELSE a.qm_committed END ORDER BY c.n),
           array_agg(COALESCE(a.any_live, false) ORDER BY c.n),
           array_agg(a.qm_lease ORDER BY c.n),
           array_agg(EXISTS (SELECT 1 FROM queen.log_dlq d0 WHERE d0.partition_id = c.pid) ORDER BY c.n)
    INTO his, nameds, thrs, lives, qmls, dlqs
    FROM unnest(p_pids) WITH ORDINALITY AS c(pid, n)
    CROSS JOIN LATERAL (
        SELECT count(*) FILTER (WHERE c2.consumer_group <> '__QUEUE_MODE__') AS named,
               min(c2.committed) FILTER (WHERE c2.consumer_group <> '__QUEUE_MODE__') AS min_named,
               max(c2.committed) FILTER (WHERE c2.consumer_group = '__QUEUE_MODE__') AS qm_committed,
               bool_or(c2.worker_id IS NOT NULL AND c2.lease_expires_at > now()) AS any_live,
               max(c2.lease_expires_at) FILTER (WHERE c2.consumer_group = '__QUEUE_MODE__'
                                                  AND c2.worker_id IS NOT NULL AND c2.lease_expires_at > now()) AS qm_lease
        FROM queen.log_consumers c2
        WHERE c2.partition_id = c.pid
    ) a;
END;
$$;

-- A page without a status filter, as arrays of its frames (partition, covering txns row, its created_at, offset):
-- rows, not frames. Each partition's rows newest first from p_his, one primary-key probe each (_msg_txn_step), until
-- they hold offset + limit frames; then only the rows overlapping [offset, offset + limit) of the listing order are
-- expanded. No LIMIT here depends on a parameter (the walk stops on a running count), so one generic plan serves.
CREATE OR REPLACE FUNCTION queen._msg_page_rows(p_pids uuid[], p_his bigint[], p_limit integer, p_offset integer,
                                                p_from timestamptz, p_to timestamptz, p_cts timestamptz,
                                                p_cpid uuid, p_coff bigint, OUT pids uuid[], OUT bases bigint[],
                                                OUT stamps timestamptz[], OUT offs bigint[])
LANGUAGE plpgsql STABLE
SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
    WITH RECURSIVE w AS (
        -- cum = the partition's frames up to and including this row; a row's frames after the cursor are the nq
        -- offsets ending at top
        SELECT c.pid, r.base_offset, r.created_at, r.top, r.nq, r.nq AS cum
        FROM unnest(p_pids, p_his) AS c(pid, hi)
        CROSS JOIN LATERAL queen._msg_txn_step(c.pid, c.hi, true, p_from, p_to, p_cts, p_cpid, p_coff) r
        UNION ALL
        SELECT w.pid, r.base_offset, r.created_at, r.top, r.nq, w.cum + r.nq
        FROM w
        CROSS JOIN LATERAL queen._msg_txn_step(w.pid, w.base_offset, false, p_from, p_to, p_cts, p_cpid, p_coff) r
        WHERE w.cum < p_limit + p_offset
    ),
    rw AS MATERIALIZED (
        -- k = the frames a row keeps (its partition's offset + limit newest), start = the position of its top frame
        -- in the listing order (created_at DESC, partition_id, offset DESC: a row's frames are contiguous in it)
        SELECT w.pid, w.base_offset, w.created_at, w.top, x.k,
               (sum(x.k) OVER (ORDER BY w.created_at DESC, w.pid, w.base_offset DESC) - x.k)::bigint AS start
        FROM w
        CROSS JOIN LATERAL (SELECT LEAST(w.nq, p_limit + p_offset - (w.cum - w.nq)) AS k) x
    )
    SELECT array_agg(r.pid), array_agg(r.base_offset), array_agg(r.created_at), array_agg(r.top - g.i)
    INTO pids, bases, stamps, offs
    FROM rw r
    CROSS JOIN LATERAL generate_series(GREATEST(p_offset - r.start, 0),
                                       LEAST(r.k, p_offset + p_limit - r.start) - 1) AS g(i)
    WHERE r.start < p_offset + p_limit AND r.start + r.k > p_offset;
END;
$$;

-- A status=completed/processing/pending page (p_status), as arrays of its frames (see _msg_page_rows): the newest
-- frames of each partition inside the window, after the cursor and of that status, at most offset + limit each (the
-- status is applied per frame inside the scan, so the bound holds), then the page of them in the listing order.
-- Partitions whose cursors or lease state rule the status out are not scanned. The LIMITs are parameters: planned
-- with their values.
CREATE OR REPLACE FUNCTION queen._msg_page_frames(p_pids uuid[], p_his bigint[], p_thrs bigint[], p_lives boolean[],
                                                  p_dlqs boolean[], p_status text, p_limit integer,
                                                  p_offset integer, p_from timestamptz, p_to timestamptz,
                                                  p_cts timestamptz, p_cpid uuid, p_coff bigint, OUT pids uuid[],
                                                  OUT bases bigint[], OUT stamps timestamptz[], OUT offs bigint[])
LANGUAGE plpgsql STABLE
SET plan_cache_mode = force_custom_plan
AS $$
DECLARE
    v_inner bigint := p_limit + p_offset;
    -- txns rows read per partition. Every row the row filters let through yields at least one qualifying frame
    -- (rows before "from" aside: they are the tail of the scan and are dropped after it), except (a) a frame that is
    -- a dead letter (at most one per DLQ row of the candidates) and (b) the one row that holds the cursor offset; so
    -- offset + limit + DLQ rows + 1 rows hold the offset + limit newest qualifying frames.
    v_rows  bigint := v_inner + 1 + (SELECT count(*) FROM queen.log_dlq d WHERE d.partition_id = ANY (p_pids));
BEGIN
    SELECT array_agg(x.pid), array_agg(x.base_offset), array_agg(x.created_at), array_agg(x.off)
    INTO pids, bases, stamps, offs
    FROM (
        SELECT c.pid, f.base_offset, f.created_at, f.off
        FROM unnest(p_pids, p_his, p_thrs, p_lives, p_dlqs) AS c(pid, hi, thr, any_live, has_dlq)
        CROSS JOIN LATERAL (
            SELECT t.base_offset, t.created_at, t.base_offset + g.i AS off
            FROM (
                SELECT t0.base_offset, t0.end_offset, t0.created_at
                FROM queen.log_segments t0
                WHERE t0.partition_id = c.pid
                  -- txns rows only (hashes kept): an index bound
                  AND t0.base_offset >= (SELECT p.txns_start FROM queen.log_partitions p WHERE p.id = c.pid)
                  -- completed: the scan starts at thr (an index bound: p_status is a constant in the plan)
                  AND t0.base_offset <= CASE WHEN p_status = 'completed' THEN LEAST(c.hi, c.thr) ELSE c.hi END
                  AND t0.created_at < p_to
                  AND (p_cts IS NULL OR t0.created_at < p_cts
                       OR (t0.created_at = p_cts AND (c.pid > p_cpid OR (c.pid = p_cpid AND t0.base_offset < p_coff))))
                  AND (p_status = 'completed' OR c.thr IS NULL OR t0.end_offset > c.thr)
                ORDER BY t0.base_offset DESC
                LIMIT v_rows
            ) t
            CROSS JOIN LATERAL generate_series(0, (t.end_offset - t.base_offset)::integer) AS g(i)
            -- "from" after the LIMIT: the rows before it are the tail of that newest-first scan (created_at never
            -- grows backwards), so the rows inside the window are the same, and the scan stops at v_rows rows
            WHERE t.created_at >= p_from
              AND (p_cts IS NULL OR t.created_at < p_cts
                   OR (t.created_at = p_cts AND (c.pid > p_cpid OR (c.pid = p_cpid AND t.base_offset + g.i < p_coff))))
              AND CASE WHEN p_status = 'completed' THEN t.base_offset + g.i <= c.thr
                       ELSE c.thr IS NULL OR t.base_offset + g.i > c.thr END
              AND (NOT c.has_dlq OR NOT EXISTS (SELECT 1 FROM queen.log_dlq d
                                                WHERE d.partition_id = c.pid AND d."offset" = t.base_offset + g.i))
            ORDER BY t.base_offset DESC, g.i DESC
            LIMIT v_inner
        ) f
        WHERE CASE WHEN p_status = 'completed' THEN c.thr IS NOT NULL ELSE c.any_live = (p_status = 'processing') END
        ORDER BY f.created_at DESC, c.pid, f.off DESC
        LIMIT p_limit OFFSET p_offset
    ) x;
END;
$$;

-- A status=dead_letter page, as arrays of its frames (see _msg_page_rows): the newest distinct dead-letter offsets of
-- each partition (log_dlq's (partition_id, offset) index, newest first), each resolved to its covering txns row,
-- inside the window and after the cursor: at most offset + limit each; the rows read are the dead letters' own.
-- The LIMITs are parameters: planned with their values.
CREATE OR REPLACE FUNCTION queen._msg_page_dead(p_pids uuid[], p_his bigint[], p_dlqs boolean[],
                                                p_from timestamptz, p_to timestamptz, -- the window
                                                p_cts timestamptz, p_cpid uuid, p_coff bigint, -- the cursor
                                                p_limit integer, p_offset integer,
                                                OUT pids uuid[], OUT bases bigint[], OUT stamps timestamptz[],
                                                OUT offs bigint[])
LANGUAGE plpgsql STABLE SET plan_cache_mode = force_custom_plan AS $$
BEGIN
    SELECT array_agg(x.pid), array_agg(x.base_offset), array_agg(x.created_at), array_agg(x.off)
    INTO pids, bases, stamps, offs
    FROM (
        SELECT c.pid, f.base_offset, f.created_at, f.off
        FROM unnest(p_pids, p_his, p_dlqs) AS c(pid, hi, has_dlq)
        CROSS JOIN LATERAL (
            SELECT t.base_offset, t.created_at, d.off
            FROM (
                SELECT DISTINCT d0."offset" AS off
                FROM queen.log_dlq d0
                WHERE d0.partition_id = c.pid
                ORDER BY d0."offset" DESC
            ) d
            CROSS JOIN LATERAL (
                SELECT t1.base_offset, t1.end_offset, t1.created_at, t1.hashes IS NOT NULL AS txn
                FROM queen.log_segments t1
                WHERE t1.partition_id = c.pid AND t1.base_offset <= d.off
                ORDER BY t1.base_offset DESC
                LIMIT 1
            ) t
            WHERE t.end_offset >= d.off AND t.txn AND t.base_offset <= c.hi
              AND t.created_at >= p_from AND t.created_at < p_to
              AND (p_cts IS NULL OR t.created_at < p_cts
                   OR (t.created_at = p_cts AND (c.pid > p_cpid OR (c.pid = p_cpid AND d.off < p_coff))))
            ORDER BY d.off DESC
            LIMIT p_limit + p_offset
        ) f
        WHERE c.has_dlq
        ORDER BY f.created_at DESC, c.pid, f.off DESC
        LIMIT p_limit OFFSET p_offset
    ) x;
END;
$$;

-- The body of a listing page: p_mode, then the frames (p_pids[i], p_bases[i] = the covering txns row, p_stamps[i] =
-- its created_at, p_offs[i]) in the listing order, each with its status from its partition's aggregates (p_cands
-- with p_nameds, p_thrs, p_lives, p_qmls, p_dlqs as in _msg_page_cand: no DLQ probe in a partition without dead
-- letters, no count of named groups in one without them), and nextCursor = the last frame when the page holds
-- p_limit. json, not jsonb: the keys are written in jsonb's order (by length, then bytes), so a client parsing it gets
-- the objects a jsonb would give, without a jsonb conversion of the whole page (about 1.5 ms for 100 messages).
-- The txns row (hashes, stamp, covering segment) and the partition (names, queue) are read once per row / partition
-- of the page, not per frame; per frame only its DLQ probe (partitions with dead letters), its named groups' count
-- (partitions with named groups) and its own segment probe when its row's segment does not cover it.
-- Index probes whatever the values: one generic plan.
CREATE OR REPLACE FUNCTION queen._msg_page_render(p_mode jsonb, p_cands uuid[], p_nameds bigint[], p_thrs bigint[],
                                                  p_lives boolean[], p_qmls timestamptz[], p_dlqs boolean[], p_pids uuid[],
                                                  p_bases bigint[], p_stamps timestamptz[], p_offs bigint[],
                                                  p_limit integer)
RETURNS json
LANGUAGE plpgsql STABLE
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    v_msgs json;
    v_n    integer;
    l_ts   timestamptz;
    l_pid  uuid;
    l_off  bigint;
BEGIN
    WITH pg AS (
        SELECT u.pid, u.base_offset, u.created_at, u.off
        FROM unnest(p_pids, p_bases, p_stamps, p_offs) AS u(pid, base_offset, created_at, off)
    ),
    -- each txns row of the page once: its hashes, its stamp as text and the segment covering its newest frame on the
    -- page (its other frames are in that segment too when they lie in its range)
    rw AS MATERIALIZED (
        SELECT r.pid, r.base_offset, t.hashes, queen._msg_ts(r.created_at) AS ts, sg.base_offset AS sb,
               sg.end_offset AS se
        FROM (SELECT pg.pid, pg.base_offset, min(pg.created_at) AS created_at, max(pg.off) AS top
              FROM pg GROUP BY pg.pid, pg.base_offset) r
        CROSS JOIN LATERAL (
            -- probed by both key columns from the page's row: joined as a relation, the planner may reach it through
            -- the partition (same partition_id) and read the partition's every row per message when its statistics
            -- say the table is small
            SELECT t0.hashes FROM queen.log_segments t0
            WHERE t0.partition_id = r.pid AND t0.base_offset = r.base_offset
            OFFSET 0
        ) t
        LEFT JOIN LATERAL (SELECT s.base_offset, s.end_offset FROM queen.log_segment_at(r.pid, r.top) s) sg ON true
    ),
    -- each partition of the page once
    pt AS MATERIALIZED (
        SELECT c.pid, c.named, c.thr, c.any_live, c.qm_lease, c.has_dlq, p.name AS pname, q.name::text AS qname,
               q.priority, COALESCE(NULLIF(q.namespace, ''), queen._log_name_ns(q.name)) AS ns,
               COALESCE(NULLIF(q.task, ''), queen._log_name_task(q.name)) AS task
        FROM unnest(p_cands, p_nameds, p_thrs, p_lives, p_qmls, p_dlqs)
             AS c(pid, named, thr, any_live, qm_lease, has_dlq)
        JOIN queen.log_partitions p ON p.id = c.pid
        JOIN queen.queues q ON q.id = p.queue_id
        WHERE c.pid = ANY (p_pids)
    ),
    items AS (
        SELECT pg.created_at, pg.pid, pg.off, st.s, seg.seq, c.qm_lease, c.named, rw.ts,
               substring(rw.hashes FROM ((pg.off - pg.base_offset) * 16 + 1)::integer FOR 16) AS h,
               c.qname, c.pname, c.priority, c.ns, c.task,
               CASE WHEN c.named > 0 THEN
                   (SELECT count(*) FROM queen.log_consumers lc
                    WHERE lc.partition_id = pg.pid AND lc.consumer_group <> '__QUEUE_MODE__' AND lc.committed >= pg.off)
                   ELSE 0 END AS consumed_by
        FROM pg
        JOIN rw ON rw.pid = pg.pid AND rw.base_offset = pg.base_offset
        JOIN pt c ON c.pid = pg.pid
        CROSS JOIN LATERAL (
            SELECT CASE
                WHEN c.has_dlq AND EXISTS (SELECT 1 FROM queen.log_dlq d
                                           WHERE d.partition_id = pg.pid AND d."offset" = pg.off)
                    THEN 'dead_letter'
                WHEN pg.off <= c.thr THEN 'completed'
                WHEN c.any_live THEN 'processing'
                ELSE 'pending' END AS s
            OFFSET 0 -- one status per row (s is read twice below)
        ) st
        CROSS JOIN LATERAL (
            -- the row's segment when it covers the frame (segments never overlap), else the frame's own probe
            SELECT COALESCE(CASE WHEN pg.off BETWEEN rw.sb AND rw.se THEN rw.sb
                                 ELSE (SELECT s.base_offset FROM queen.log_segment_at(pg.pid, pg.off) s) END,
                            pg.base_offset) AS seq
            OFFSET 0 -- seq is read twice below
        ) seg
    )
    -- One sort order for every aggregate (one sort), and the page's last row is the last element.
    SELECT COALESCE(json_agg(json_build_object(
               'id', NULL,
               'task', i.task,
               'queue', i.qname,
               'status', i.s,
               'segment', json_build_object('seq', i.seq, 'frameIdx', i.off - i.seq),
               'traceId', NULL,
               'txnHash', encode(i.h, 'hex'),
               'busStatus', json_build_object('consumedBy', i.consumed_by, 'totalGroups', i.named),
               'createdAt', i.ts,
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
        'mode', p_mode,
        'messages', v_msgs,
        'nextCursor', CASE WHEN v_n = p_limit THEN queen._msg_cursor_encode(1, l_ts, l_pid, l_off) END);
END;
$$;

-- ---------------------------------------------------------------------------------------------------------------------
-- GET /api/v1/messages/:partitionId/:transactionId
-- ---------------------------------------------------------------------------------------------------------------------

-- p_hash: xxh3-128 of the transaction id (16 bytes, computed by the broker). p_offset: an offset the broker resolved
-- itself (purged-txns fallback scan); NULL -> the newest occurrence of p_hash in the partition's txns rows (the
-- segment rows at or past txns_start).
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
    SELECT p.id, p.name AS pname, p.last_offset, p.txns_start, q.*
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
        FROM queen.log_segments t
        CROSS JOIN LATERAL queen.log_unnest_hashes(t.hashes) h
        WHERE t.partition_id = p_pid AND t.base_offset >= v_p.txns_start AND h.h = p_hash
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

-- Segments of a partition with base_offset < p_before (NULL = no bound), newest first, at most p_limit rows; only
-- those with their payload (from log_start on: the rows below are slim, R__80).
-- The broker pages through up to 5000 of them for the purged-txns fallback scan (it decodes; SQL does not).
CREATE OR REPLACE FUNCTION queen.log_segments_newest(p_pid uuid, p_before bigint, p_limit integer)
RETURNS TABLE (base_offset bigint, end_offset bigint, created_at timestamptz, blob bytea)
LANGUAGE sql STABLE
AS $$
    SELECT s.base_offset, s.end_offset, s.created_at, s.blob
    FROM queen.log_segments s
    WHERE s.partition_id = p_pid
      AND s.base_offset >= (SELECT p.log_start FROM queen.log_partitions p WHERE p.id = p_pid)
      AND (p_before IS NULL OR s.base_offset < p_before)
      AND octet_length(s.blob) > 0
    ORDER BY s.base_offset DESC
    LIMIT GREATEST(COALESCE(p_limit, 100), 0)
$$;

-- The stored segments at the given (partition, base_offset) pairs (p_pids[i], p_bases[i]); pairs with no segment
-- (retention deleted it) or a slim one (retention took its payload) yield no row. One round trip for all the covering segments of a listing page.
CREATE OR REPLACE FUNCTION queen.log_segments_of(p_pids uuid[], p_bases bigint[])
RETURNS TABLE (partition_id uuid, base_offset bigint, blob bytea)
LANGUAGE sql STABLE
AS $$
    SELECT s.partition_id, s.base_offset, s.blob
    FROM unnest(p_pids, p_bases) AS k(pid, base)
    JOIN queen.log_segments s ON s.partition_id = k.pid AND s.base_offset = k.base
    WHERE octet_length(s.blob) > 0
$$;
