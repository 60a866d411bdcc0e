-- One row per segment (V22, R__80_retention.sql): retention takes a segment's payload (a slim row: blob '', hashes
-- kept) while its hashes are still needed, purges the hashes of a row whose payload is still retained, and deletes the
-- row when both have expired. Dedup and ack resolution keep working on a slim row; no payload reader returns one.

-- (a) a duplicate transactionId is still refused after retention took its segment's payload, inside the dedup window;
-- (b) pop, the decoder's segment fetch and the inspection reads never return a slim row.
DO $$
DECLARE r jsonb; pid uuid; st jsonb;
BEGIN
  PERFORM qt.push('or.ret', 'p', 1, 3);                                 -- ids 1..3 at offsets 0..2
  PERFORM qt.push('or.ret', 'p', 4, 1);                                 -- id 4 at offset 3
  pid := qt.pid('or.ret', 'p');
  UPDATE queen.queues SET retention_enabled = true, retention_seconds = 60 WHERE name = 'or.ret';
  -- a consumer that read offset 0 before retention ran: its cursor (committed 0) lies below the coming log_start
  r := qt.pop('or.ret', 'p', '__QUEUE_MODE__', 1, 1, 'w0');
  r := qt.ack('or.ret', 'p', '__QUEUE_MODE__', 'w0', ARRAY[1], ARRAY['completed']);
  PERFORM qt.eq((r->>'committed')::bigint, 0::bigint, 'offset 0 consumed');
  -- 10 minutes old: past retention (60 s), inside the dedup window (3600 s) and the txns purge (900 s at least)
  UPDATE queen.log_segments SET created_at = created_at - interval '10 minutes' WHERE partition_id = pid;
  UPDATE queen.log_partitions SET oldest_live_at = oldest_live_at - interval '10 minutes',
                                  oldest_txn_at = oldest_txn_at - interval '10 minutes' WHERE id = pid;

  st := queen.log_retention_step(pid, 100);
  PERFORM qt.eq(st->'deleted', '4'::jsonb, 'four messages deleted');
  PERFORM qt.eq(st->'segmentsDeleted', '2'::jsonb, 'two payloads taken');
  PERFORM qt.eq(st->'txnsDeleted', '0'::jsonb, 'no hashes purged yet');
  PERFORM qt.eq((SELECT log_start || '/' || txns_start FROM queen.log_partitions WHERE id = pid), '4/0', 'watermarks');
  PERFORM qt.eq((SELECT string_agg(base_offset || ':' || octet_length(blob) || ':' || octet_length(hashes), ','
                                   ORDER BY base_offset)
                 FROM queen.log_segments WHERE partition_id = pid), '0:0:48,3:0:16', 'slim rows: no blob, hashes kept');
  PERFORM qt.eq((SELECT oldest_live_at IS NULL AND oldest_txn_at IS NOT NULL FROM queen.log_partitions WHERE id = pid),
                true, 'nothing live, hashes pending');

  -- (a) dedup: the retained hashes still refuse ids 2 and 4 (one-segment path and the bundle path alike)
  r := queen.log_push(qt.tenant(), 'or.ret', 'p', 1, qt.h(2), '\x01');
  PERFORM qt.eq(r->'dups', '[{"i":0,"off":1}]'::jsonb, 'duplicate of a slim row''s message refused');
  r := qt.multi(ARRAY[qt.tenant()]::uuid[], ARRAY['or.ret'], ARRAY['p'], ARRAY[1], ARRAY[qt.h(4)], ARRAY['\x01'::bytea]);
  PERFORM qt.eq(r->0->>'status', 'duplicate', 'bundle: duplicate of a slim row''s message refused');
  PERFORM qt.eq((SELECT last_offset FROM queen.log_partitions WHERE id = pid), 3::bigint, 'nothing allocated');
  -- the ack of a message whose payload is gone still resolves (below the cursor: a no-op success)
  r := qt.ack('or.ret', 'p', '__QUEUE_MODE__', '', ARRAY[1], ARRAY['completed']);
  PERFORM qt.eq(r->'noop', '[0]'::jsonb, 'ack of a slim row''s message resolves');

  -- (b) payload readers: the cursor (committed 0) lies in the slim range; the pop starts at log_start
  PERFORM qt.push('or.ret', 'p', 10, 1);                                -- id 10 at offset 4
  r := qt.pop('or.ret', 'p', '__QUEUE_MODE__', 10, 1, 'w1');
  PERFORM qt.eq(qt.offs(r), ARRAY[4]::bigint[], 'pop skips the slim rows');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.log_pop(qt.tenant(), 'or.ret', 'p', 'g2', 10, 1, 0, 'w2', false,
                                                          'all', NULL) x WHERE octet_length(x.blob) = 0), 0,
                'a new group gets no empty blob');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.log_segment_at(pid, 1)), 0, 'segment_at: a slim row is no segment');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.log_segment_at(pid, 4)), 1, 'segment_at: the live one');
  PERFORM qt.eq((SELECT array_agg(s.base_offset) FROM queen.log_segments_newest(pid, NULL, 10) s),
                ARRAY[4]::bigint[], 'newest: live segments only');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.log_segments_of(ARRAY[pid, pid], ARRAY[0, 3]::bigint[])), 0,
                'segments_of: no slim row');
  r := queen.message_detail(qt.tenant(), pid, qt.h(2));
  PERFORM qt.eq((r->>'offset') || '/' || (r->'segment')::text, '1/null', 'detail: resolves, no segment');
  PERFORM qt.eq((SELECT string_agg(COALESCE(x.base_offset::text, x.error), ',' ORDER BY x.entry_idx)
                 FROM queen.log_fetch(qt.tenant(), jsonb_build_array(
                        jsonb_build_object('queue', 'or.ret', 'partition', 'p', 'offset', 1, 'maxBytes', 100),
                        jsonb_build_object('queue', 'or.ret', 'partition', 'p', 'offset', 4, 'maxBytes', 100)), NULL) x),
                'OFFSET_OUT_OF_RANGE,4', 'fetch: below log_start refused, the live segment read');

  -- the hashes expire too (2 h: past the dedup window): the slim rows go, the same ids are accepted again
  UPDATE queen.log_segments SET created_at = created_at - interval '2 hours' WHERE partition_id = pid AND base_offset < 4;
  UPDATE queen.log_partitions SET oldest_txn_at = now() - interval '3 hours' WHERE id = pid;
  st := queen.log_retention_step(pid, 100);
  PERFORM qt.eq(st->'txnsDeleted', '2'::jsonb, 'two rows'' hashes purged');
  PERFORM qt.eq((SELECT string_agg(base_offset::text, ',') FROM queen.log_segments WHERE partition_id = pid), '4',
                'slim rows deleted');
  PERFORM qt.eq((SELECT txns_start FROM queen.log_partitions WHERE id = pid), 4::bigint, 'txns_start past them');
  r := queen.log_push(qt.tenant(), 'or.ret', 'p', 1, qt.h(2), '\x02');
  PERFORM qt.eq(r->>'status', 'queued', 'outside the window: accepted again');
END $$;

-- Without retention, the hashes expire alone: the row keeps its payload and loses its hashes (below txns_start);
-- payload retention later deletes such a row outright.
DO $$
DECLARE r jsonb; pid uuid; st jsonb;
BEGIN
  PERFORM qt.push('or.keep', 'p', 1, 2);                                -- ids 1, 2 at offsets 0, 1
  PERFORM qt.push('or.keep', 'p', 3, 1);                                -- id 3 at offset 2
  pid := qt.pid('or.keep', 'p');
  UPDATE queen.log_segments SET created_at = created_at - interval '2 hours' WHERE partition_id = pid;
  UPDATE queen.log_partitions SET oldest_live_at = now() - interval '2 hours',
                                  oldest_txn_at = now() - interval '2 hours' WHERE id = pid;
  st := queen.log_retention_step(pid, 100);
  PERFORM qt.eq((st->>'deleted') || '/' || (st->>'txnsDeleted'), '0/2', 'no payload taken, two rows'' hashes purged');
  PERFORM qt.eq((SELECT string_agg(base_offset || ':' || octet_length(blob) || ':' || COALESCE(octet_length(hashes), -1),
                                   ',' ORDER BY base_offset)
                 FROM queen.log_segments WHERE partition_id = pid), '0:8:-1,2:8:-1', 'payload kept, hashes NULL');
  PERFORM qt.eq((SELECT log_start || '/' || txns_start || '/' || (oldest_live_at IS NOT NULL) || '/'
                        || (oldest_txn_at IS NULL) FROM queen.log_partitions WHERE id = pid), '0/3/true/true',
                'txns_start moved, oldest_txn_at cleared');
  r := qt.pop('or.keep', 'p', '__QUEUE_MODE__', 10, 1, 'w');
  PERFORM qt.eq(qt.offs(r), ARRAY[0, 1, 2]::bigint[], 'payload still delivered');
  r := queen.log_push(qt.tenant(), 'or.keep', 'p', 1, qt.h(1), '\x01');
  PERFORM qt.eq(r->>'status', 'queued', 'purged hashes dedup nothing');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.log_dedup_txns(pid, -1, 9223372036854775807, NULL, 100)), 1,
                'the dedup cache reads only rows with hashes');
  -- retention switched on: the rows without hashes go at once (nothing to slim)
  UPDATE queen.queues SET retention_enabled = true, retention_seconds = 60 WHERE name = 'or.keep';
  st := queen.log_retention_step(pid, 100);
  PERFORM qt.eq((st->>'deleted') || '/' || (st->>'txnsDeleted'), '3/0', 'three messages deleted, no hashes purged');
  PERFORM qt.eq((SELECT string_agg(base_offset::text, ',') FROM queen.log_segments WHERE partition_id = pid), '3',
                'rows without hashes deleted, not slimmed');
END $$;

-- (c) delete_queue leaves nothing behind, slim rows and rows without hashes included.
DO $$
DECLARE pid uuid; qid uuid;
BEGIN
  PERFORM qt.push('or.del', 'p', 1, 2);
  PERFORM qt.push('or.del', 'p', 3, 1);
  PERFORM qt.push('or.del', 'p', 4, 1);
  pid := qt.pid('or.del', 'p');
  qid := (SELECT queue_id FROM queen.log_partitions WHERE id = pid);
  UPDATE queen.log_segments SET blob = ''::bytea WHERE partition_id = pid AND base_offset = 0;
  UPDATE queen.log_segments SET hashes = NULL WHERE partition_id = pid AND base_offset = 2;
  PERFORM queen.delete_queue(qt.tenant(), 'or.del');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.log_segments WHERE partition_id = pid), 0, 'no segment row left');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.log_partitions WHERE queue_id = qid), 0, 'no partition left');
  PERFORM qt.eq(to_regclass('queen.log_txns') IS NULL, true, 'no log_txns table');
END $$;

-- V23: a segment row of up to 4 KiB stays inline. A batch producer's segment of 75 frames carries a 1.2 KiB blob and
-- 1.2 KiB of hashes: past PostgreSQL's default 2 KiB target the blob went to TOAST, and every pop read it through the
-- TOAST index. Counted in the TOAST relation itself (pg_column_size reports an out-of-line value's full size).
DO $$
DECLARE r jsonb; v_toast text; v_before bigint; v_after bigint;
BEGIN
  SELECT reltoastrelid::regclass::text INTO v_toast FROM pg_class WHERE oid = 'queen.log_segments'::regclass;
  EXECUTE format('SELECT count(*) FROM %s', v_toast) INTO v_before;
  r := queen.log_push(qt.tenant(), 'or.inline', 'p', 75, qt.hseq(5000, 75), decode(repeat('ab', 1300), 'hex'));
  PERFORM qt.eq(r->>'status', 'queued', 'pushed');
  EXECUTE format('SELECT count(*) FROM %s', v_toast) INTO v_after;
  PERFORM qt.eq(v_after - v_before, 0::bigint, 'a 2.5 KiB segment row stays inline (no TOAST chunk written)');
  -- a larger one still sends its blob out
  r := queen.log_push(qt.tenant(), 'or.inline', 'p', 75, qt.hseq(6000, 75), decode(repeat('cd', 6000), 'hex'));
  EXECUTE format('SELECT count(*) FROM %s', v_toast) INTO v_before;
  PERFORM qt.ok(v_before > v_after, 'a 7 KiB segment row sends its blob to TOAST');
END $$;
