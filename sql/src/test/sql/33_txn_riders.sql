-- Transaction riders: the `kv` and `timers` arrays of POST /api/v1/transaction run in the SAME PostgreSQL
-- transaction as its pushes and acks, first (kv, then timers, then pushes, then acks: the lock order). Each DO block
-- below is one such transaction, as the broker's Transactions runs it: kv_apply(p_in_txn => true), timers_apply,
-- log_push, log_ack. A lost `required` precondition (QV820) rolls all of it back; so does any later failure.

-- The riders of one bundle: an exactly-once marker (putIfAbsent, required), a counter, a reminder timer; then the
-- bundle's push of a result and ack of the input message.
CREATE OR REPLACE FUNCTION qt.bundle(marker text, input_id bigint, out_id bigint, worker text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM * FROM queen.kv_apply(NULL, ARRAY['putIfAbsent', 'incr'], ARRAY['orders', 'orders'],
                                ARRAY['done:' || marker, 'charged'], ARRAY['true', NULL], ARRAY[86400, NULL]::bigint[],
                                ARRAY[NULL, true]::boolean[], NULL, ARRAY[NULL, 1]::numeric[], NULL, NULL,
                                ARRAY[true, false], NULL, NULL, NULL, NULL, NULL, true);
  PERFORM * FROM queen.timers_apply(NULL, 'sub', ARRAY['schedule'], ARRAY['rider.reminders'], ARRAY['remind:' || marker],
                                    NULL, ARRAY[3600000]::bigint[], ARRAY['rem-' || marker], ARRAY[gen_random_uuid()],
                                    ARRAY['\x7b7d'::bytea], NULL);
  PERFORM qt.push('rider.out', 'Default', out_id, 1);
  PERFORM qt.eq(qt.ack('rider.in', 'Default', '__QUEUE_MODE__', worker, ARRAY[input_id], ARRAY['completed'])->>'ok',
                'true', 'the bundle''s ack');
END $$;

CREATE OR REPLACE FUNCTION qt.rider_state() RETURNS jsonb LANGUAGE sql AS $$
  SELECT jsonb_build_object(
    'charged', (SELECT value FROM queen.kv_entries WHERE namespace = 'orders' AND key = 'charged'),
    'markers', (SELECT count(*) FROM queen.kv_entries WHERE namespace = 'orders' AND key LIKE 'done:%'),
    'timers', (SELECT count(*) FROM queen.timers WHERE queue = 'rider.reminders'),
    'out', (SELECT COALESCE(last_offset + 1, 0) FROM queen.log_partitions WHERE id = qt.pid('rider.out', 'Default')),
    'committed', (SELECT committed FROM queen.log_consumers
                  WHERE partition_id = qt.pid('rider.in', 'Default') AND consumer_group = '__QUEUE_MODE__')) $$;

DO $$
BEGIN
  PERFORM qt.push('rider.in', 'Default', 9001, 2);                    -- order A at offset 0, its redelivery at 1
  PERFORM qt.pop('rider.in', 'Default', '__QUEUE_MODE__', 1, 1, 'w1');
END $$;

-- The first delivery of order A: marker, counter, timer, push and ack commit together.
DO $$
BEGIN
  PERFORM qt.bundle('A', 9001, 9101, 'w1');
END $$;

DO $$
BEGIN
  PERFORM qt.eq(qt.rider_state(), '{"charged":"1","markers":1,"timers":1,"out":1,"committed":0}'::jsonb,
                'the whole bundle committed');
  PERFORM qt.pop('rider.in', 'Default', '__QUEUE_MODE__', 1, 1, 'w2');
END $$;

-- A redelivery of order A (the second message carries the same business id): the marker exists, the required
-- precondition is lost, and nothing of the bundle happens: no second charge, timer, push or ack.
DO $$
DECLARE st text; detail text;
BEGIN
  BEGIN
    PERFORM qt.bundle('A', 9002, 9102, 'w2');
    RAISE EXCEPTION 'ASSERT FAILED: the redelivered bundle committed';
  EXCEPTION WHEN SQLSTATE 'QV820' THEN
    GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
  END;
  PERFORM qt.eq(detail::jsonb->>'index', '0', 'the verdict names the kv operation that lost (failedIndex = its '
                'position after the operations)');
  PERFORM qt.eq(detail::jsonb->>'reason', 'exists', 'kvReason exists');
  PERFORM qt.eq(detail::jsonb->'value', 'true'::jsonb, 'with the winner''s value');
  PERFORM qt.eq(qt.rider_state(), '{"charged":"1","markers":1,"timers":1,"out":1,"committed":0}'::jsonb,
                'nothing of the redelivered bundle was applied');
END $$;

-- A bundle whose ack fails after its riders ran: the riders roll back with it (the transaction is the fence: a zombie
-- worker's kv write is undone by its own expired lease).
DO $$
BEGIN
  BEGIN
    PERFORM * FROM queen.kv_apply(NULL, ARRAY['putIfAbsent', 'incr'], ARRAY['orders', 'orders'], ARRAY['done:B', 'charged'],
                                  ARRAY['true', NULL], ARRAY[86400, NULL]::bigint[], ARRAY[NULL, true]::boolean[], NULL,
                                  ARRAY[NULL, 1]::numeric[], NULL, NULL, ARRAY[true, false], NULL, NULL, NULL, NULL,
                                  NULL, true);
    PERFORM * FROM queen.timers_apply(NULL, NULL, ARRAY['schedule'], ARRAY['rider.reminders'], ARRAY['remind:B'],
                                      NULL, ARRAY[1000]::bigint[], ARRAY['rem-B'], ARRAY[gen_random_uuid()],
                                      ARRAY['\x7b7d'::bytea], NULL);
    IF (qt.ack('rider.in', 'Default', '__QUEUE_MODE__', 'a-zombie', ARRAY[9002], ARRAY['completed'])->>'ok')::boolean
    THEN
      RAISE EXCEPTION 'ASSERT FAILED: a zombie''s ack was taken';
    END IF;
    -- the broker turns the refused ack into an abort of the bundle (Transactions: ack_rejected)
    RAISE EXCEPTION 'ack_rejected' USING ERRCODE = 'QX999';
  EXCEPTION WHEN SQLSTATE 'QX999' THEN
    NULL;
  END;
  PERFORM qt.eq(qt.rider_state(), '{"charged":"1","markers":1,"timers":1,"out":1,"committed":0}'::jsonb,
                'a failed ack rolls the riders back');
END $$;

-- A bundle of riders only, still atomic: one invalid operation refuses everything before anything is written.
DO $$
BEGIN
  PERFORM qt.raises($q$SELECT * FROM queen.kv_apply(NULL, ARRAY['put', 'getPrefix'], ARRAY['orders', 'orders'],
        ARRAY['x', 'p'], ARRAY['1', NULL], ARRAY[60, NULL]::bigint[], NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
        NULL, NULL, NULL, true)$q$, 'QV814');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.kv_entries WHERE namespace = 'orders' AND key = 'x'), 0,
                'getPrefix in a transaction refuses the whole rider');
END $$;
