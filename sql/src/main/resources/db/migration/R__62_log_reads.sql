-- =====================================================================================================================
-- Reads of the log by offset for 2.x clients and dashboards (queen2-contract.md §7): what changed, and where a time
-- falls. A repeatable migration: the rules for editing it are at the top of R__10_common.sql.
--
--   partitions_changed   POST /api/v1/partitions/changed: the partitions written since a time, paged by an opaque
--                        cursor, with the time below which no transaction still in flight can write (safeTime)
--   fetch_offsets        POST /api/v1/fetch/offsets: the first offset appended at or after a time, per partition
--
-- Every entry is answered in request order; an entry the tenant has no queue or partition for is answered with
-- error UNKNOWN_TOPIC_OR_PARTITION, never a failure of the call. The broker validated the entries' shape (fields and
-- types, 400 naming the field); these functions only read.
-- =====================================================================================================================

-- safeTime: the earliest xact_start of any session in a transaction, minus 5 s, never above now() - 5 s. A session
-- whose row this role cannot read (another role's, without pg_read_all_stats) makes it now() - 30 s, degraded.
CREATE OR REPLACE FUNCTION queen._log_safe_time(OUT o_safe timestamptz, OUT o_degraded boolean)
LANGUAGE sql STABLE
AS $$
    SELECT CASE WHEN bool_or(a.masked) THEN now() - interval '30 seconds'
                ELSE LEAST(COALESCE(min(a.xact_start), now()), now()) - interval '5 seconds' END,
           COALESCE(bool_or(a.masked), false)
    FROM (SELECT s.xact_start, (s.state IS NULL AND s.backend_type = 'client backend') AS masked
          FROM pg_stat_activity s
          WHERE s.backend_type = 'client backend' AND s.pid <> pg_backend_pid()
            AND (s.state IS NULL OR s.xact_start IS NOT NULL)) a
$$;

-- p_entries: [{queue, since (ISO time or null), after (a cursor of a previous answer, or null), limit (1..1000)}].
-- Partitions in (last_write_at, id) order after the cursor; next is the last one's cursor when the page filled.
-- The cursor is base64 of '<last_write_at in epoch microseconds>|<partition id>'; one that does not decode so is
-- BAD_CURSOR.
CREATE OR REPLACE FUNCTION queen.partitions_changed(p_tenant uuid, p_entries jsonb)
RETURNS jsonb
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_tenant  uuid := COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001');
    v_safe    record;
    v_e       jsonb;
    v_q       queen.queues;
    v_since   timestamptz;
    v_at      timestamptz;
    v_id      uuid;
    v_raw     text;
    v_limit   integer;
    v_parts   jsonb;
    v_n       integer;
    v_last_lw timestamptz;
    v_last_id uuid;
    v_out     jsonb := '[]'::jsonb;
BEGIN
    v_safe := queen._log_safe_time();
    FOR v_e IN SELECT e FROM jsonb_array_elements(COALESCE(p_entries, '[]'::jsonb)) e LOOP
        v_q := queen._log_queue(v_tenant, v_e ->> 'queue');
        IF v_q.id IS NULL THEN
            v_out := v_out || jsonb_build_object('queue', v_e ->> 'queue', 'partitions', '[]'::jsonb, 'next', NULL,
                                                 'error', 'UNKNOWN_TOPIC_OR_PARTITION');
            CONTINUE;
        END IF;
        v_since := (v_e ->> 'since')::timestamptz;
        v_limit := LEAST(GREATEST(COALESCE((v_e ->> 'limit')::integer, 1000), 1), 1000);
        v_at := NULL; v_id := NULL;
        IF v_e ->> 'after' IS NOT NULL THEN
            BEGIN
                v_raw := convert_from(decode(v_e ->> 'after', 'base64'), 'UTF8');
                v_at := to_timestamp(split_part(v_raw, '|', 1)::bigint / 1e6);
                v_id := split_part(v_raw, '|', 2)::uuid;
            EXCEPTION WHEN OTHERS THEN
                v_at := NULL;
            END;
            IF v_at IS NULL OR v_id IS NULL THEN
                v_out := v_out || jsonb_build_object('queue', v_q.name, 'partitions', '[]'::jsonb, 'next', NULL,
                                                     'error', 'BAD_CURSOR');
                CONTINUE;
            END IF;
        END IF;
        SELECT COALESCE(jsonb_agg(jsonb_build_object('name', x.name, 'id', x.id, 'lastOffset', x.last_offset,
                                                     'logStart', x.log_start, 'lastWriteAt', queen._log_ts(x.lw))
                                  ORDER BY x.lw, x.id), '[]'::jsonb), count(*)
        INTO v_parts, v_n
        FROM (SELECT p.name, p.id, p.last_offset, p.log_start, p.last_write_at AS lw
              FROM queen.log_partitions p
              WHERE p.queue_id = v_q.id AND (v_since IS NULL OR p.last_write_at >= v_since)
                AND (v_at IS NULL OR (p.last_write_at, p.id) > (v_at, v_id))
              ORDER BY p.last_write_at, p.id
              LIMIT v_limit) x;
        v_last_id := NULL;
        IF v_n = v_limit THEN
            SELECT p.last_write_at, p.id INTO v_last_lw, v_last_id
            FROM queen.log_partitions p
            WHERE p.id = (v_parts -> (v_n - 1) ->> 'id')::uuid;
        END IF;
        v_out := v_out || jsonb_build_object('queue', v_q.name, 'partitions', v_parts,
            'next', CASE WHEN v_last_id IS NOT NULL THEN
                             encode(convert_to((extract(epoch FROM v_last_lw) * 1e6)::bigint || '|' || v_last_id,
                                               'UTF8'), 'base64') END);
    END LOOP;
    RETURN jsonb_build_object('safeTime', queen._log_ts(v_safe.o_safe), 'safeTimeDegraded', v_safe.o_degraded,
                              'entries', v_out);
END;
$$;

-- p_entries: [{queue, partition, timestamp (an ISO time)}]. offset: the first retained offset appended at or after
-- the time (the first frame of the first retained segment created then or later), null when none; ts its segment's
-- time. highWatermark = last_offset + 1, logStartOffset = log_start.
CREATE OR REPLACE FUNCTION queen.fetch_offsets(p_tenant uuid, p_entries jsonb)
RETURNS jsonb
LANGUAGE sql STABLE
AS $$
    SELECT jsonb_build_object('entries', COALESCE(jsonb_agg(
        CASE WHEN p.id IS NULL THEN
                 jsonb_build_object('queue', e.v ->> 'queue', 'partition', e.v ->> 'partition', 'offset', NULL,
                                    'ts', NULL, 'highWatermark', NULL, 'logStartOffset', NULL,
                                    'error', 'UNKNOWN_TOPIC_OR_PARTITION')
             ELSE jsonb_build_object('queue', e.v ->> 'queue', 'partition', e.v ->> 'partition',
                                     'offset', CASE WHEN s.base_offset IS NOT NULL
                                                    THEN GREATEST(s.base_offset, p.log_start) END,
                                     'ts', queen._log_ts(s.created_at),
                                     'highWatermark', p.last_offset + 1, 'logStartOffset', p.log_start) END
        ORDER BY e.ord), '[]'::jsonb))
    FROM jsonb_array_elements(p_entries) WITH ORDINALITY AS e(v, ord)
    LEFT JOIN queen.queues q ON q.tenant_id = COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001')
                            AND q.name = e.v ->> 'queue'
    LEFT JOIN queen.log_partitions p ON p.queue_id = q.id AND p.name = e.v ->> 'partition'
    LEFT JOIN LATERAL (
        SELECT s0.base_offset, s0.created_at FROM queen.log_segments s0
        WHERE s0.partition_id = p.id AND s0.end_offset >= p.log_start
          AND s0.base_offset >= p.log_start   -- an index bound past the slim rows (R__80); log_start is a segment base
          AND s0.created_at >= (e.v ->> 'timestamp')::timestamptz
        ORDER BY s0.base_offset LIMIT 1) s ON true
$$;

-- POST /api/v1/fetch: records by offset (queen2-contract.md §7). p_entries: [{queue, partition, offset (>= 0),
-- maxBytes (>= 1)}]. One row per slice of a segment to deliver, in entry order then offset order: the segments from
-- the one covering offset, while their stored bytes stay within the entry's maxBytes and the call's p_max_total (the
-- first segment of an entry is always delivered). An entry with nothing to deliver has one row without a segment
-- (base_offset NULL): its error (UNKNOWN_TOPIC_OR_PARTITION; OFFSET_OUT_OF_RANGE for an offset below log_start or
-- above last_offset + 1), or none when offset = last_offset + 1. No lease, no cursor: a read.
CREATE OR REPLACE FUNCTION queen.log_fetch(p_tenant uuid, p_entries jsonb, p_max_total bigint)
RETURNS TABLE (entry_idx integer, partition_id uuid, high bigint, log_start bigint, error text,
               base_offset bigint, start_idx integer, take integer, created_at timestamptz, blob bytea)
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_tenant uuid := COALESCE(p_tenant, '00000000-0000-0000-0000-000000000001');
    v_e      record;
    v_p      record;
    v_off    bigint;
    v_max    bigint;
    v_left   bigint := GREATEST(COALESCE(p_max_total, 67108864), 1);
    v_used   bigint;
    v_any    boolean;
    v_s      record;
BEGIN
    FOR v_e IN SELECT e.v, e.ord::integer AS ord FROM jsonb_array_elements(p_entries) WITH ORDINALITY AS e(v, ord) LOOP
        SELECT p.id, p.last_offset, p.log_start INTO v_p
        FROM queen.queues q JOIN queen.log_partitions p ON p.queue_id = q.id
        WHERE q.tenant_id = v_tenant AND q.name = v_e.v ->> 'queue' AND p.name = v_e.v ->> 'partition';
        entry_idx := v_e.ord; partition_id := v_p.id; high := v_p.last_offset + 1; log_start := v_p.log_start;
        base_offset := NULL; start_idx := NULL; take := NULL; created_at := NULL; blob := NULL; error := NULL;
        IF v_p.id IS NULL THEN
            error := 'UNKNOWN_TOPIC_OR_PARTITION'; high := NULL; log_start := NULL;
            RETURN NEXT; CONTINUE;
        END IF;
        v_off := (v_e.v ->> 'offset')::bigint;
        IF v_off < v_p.log_start OR v_off > v_p.last_offset + 1 THEN
            error := 'OFFSET_OUT_OF_RANGE';
            RETURN NEXT; CONTINUE;
        END IF;
        v_max := GREATEST(COALESCE((v_e.v ->> 'maxBytes')::bigint, 1048576), 1);
        v_used := 0; v_any := false;
        FOR v_s IN
            SELECT s.base_offset AS b, s.end_offset AS en, s.created_at AS c, s.blob AS bl
            FROM queen.log_segments s
            WHERE s.partition_id = v_p.id AND s.end_offset >= v_off
              AND s.base_offset >= COALESCE((SELECT s0.base_offset FROM queen.log_segments s0
                                             WHERE s0.partition_id = v_p.id AND s0.base_offset <= v_off
                                             ORDER BY s0.base_offset DESC LIMIT 1), v_off)
              AND octet_length(s.blob) > 0   -- not a row retention slimmed since log_start was read (R__80)
            ORDER BY s.base_offset
        LOOP
            EXIT WHEN v_any AND (v_used + octet_length(v_s.bl) > v_max OR octet_length(v_s.bl) > v_left);
            base_offset := v_s.b; start_idx := GREATEST(v_off - v_s.b, 0)::integer;
            take := (v_s.en - GREATEST(v_s.b, v_off) + 1)::integer; created_at := v_s.c; blob := v_s.bl;
            RETURN NEXT;
            v_any := true;
            v_used := v_used + octet_length(v_s.bl);
            v_left := v_left - octet_length(v_s.bl);
        END LOOP;
        IF NOT v_any THEN
            RETURN NEXT;                              -- offset = high (or a retention gap): empty, no error
        END IF;
    END LOOP;
END;
$$;
