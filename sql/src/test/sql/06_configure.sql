-- /configure: create defaults, merge vs replace, JSON null -> default, clamps, casts, the 19-key echo, settings.
DO $$
DECLARE r jsonb; o jsonb; qid uuid; s jsonb;
BEGIN
  r := queen.configure_queue(qt.tenant(), 'orders', '{"leaseTime":120,"retryLimit":5,"dedupWindowSeconds":600,"namespace":"billing","task":"invoice"}', NULL);
  PERFORM qt.eq(r->>'configured', 'true', 'configured');
  PERFORM qt.eq(r->'partitionId', 'null'::jsonb, 'partitionId null');
  PERFORM qt.eq(r->>'storage', 'segments', 'storage');
  PERFORM qt.eq(r->>'queue', 'orders', 'queue');
  PERFORM qt.eq(r->>'namespace' || '/' || (r->>'task'), 'billing/invoice', 'namespace/task');
  qid := (r->>'queueId')::uuid;
  PERFORM qt.eq(qid, (SELECT id FROM queen.queues WHERE name = 'orders'), 'queueId');
  PERFORM qt.eq(r->'options',
    '{"priority":0,"leaseTime":120,"retryLimit":5,"retryDelay":1000,"maxSize":0,"ttl":3600,
      "deadLetterQueue":true,"dlqAfterMaxRetries":true,"delayedProcessing":0,"windowBuffer":0,"retentionSeconds":0,
      "completedRetentionSeconds":0,"retentionEnabled":false,"encryptionEnabled":false,"maxWaitTimeSeconds":0,
      "minPopWaitTime":0,"dedupWindowSeconds":600,"retentionSinkHold":"","retentionSinkHoldMaxSeconds":604800}'::jsonb,
    'the 19-key echo (API.md example)');
  PERFORM qt.eq((SELECT count(*)::int FROM jsonb_object_keys(r->'options')), 19, '19 keys');
  PERFORM qt.eq((SELECT count(*)::int FROM jsonb_object_keys(r)), 8, 'top-level keys');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.log_partitions WHERE queue_id = qid), 0, 'configure creates no partition');

  -- create without leaseTime: 300 (the configure default), not the column default 60
  r := queen.configure_queue(qt.tenant(), 'fresh', '{}', 'merge');
  PERFORM qt.eq((r->'options'->>'leaseTime')::int, 300, 'configure default leaseTime 300');
  PERFORM qt.eq(r->>'namespace', '', 'configure default namespace empty');

  -- merge: absent keys keep, present keys set, null -> default
  r := queen.configure_queue(qt.tenant(), 'orders', '{"priority":7,"retryLimit":null}', 'merge');
  o := r->'options';
  PERFORM qt.eq((o->>'priority')::int, 7, 'merge sets priority');
  PERFORM qt.eq((o->>'leaseTime')::int, 120, 'merge keeps leaseTime');
  PERFORM qt.eq((o->>'dedupWindowSeconds')::int, 600, 'merge keeps dedup');
  PERFORM qt.eq((o->>'retryLimit')::int, 3, 'merge null -> default');
  PERFORM qt.eq(r->>'namespace', 'billing', 'merge keeps namespace');
  PERFORM qt.eq(r->>'queueId', qid::text, 'same queue id');

  -- replace: every key from defaults except the given ones
  r := queen.configure_queue(qt.tenant(), 'orders', '{"ttl":99}', 'replace');
  o := r->'options';
  PERFORM qt.eq((o->>'ttl')::int, 99, 'replace sets ttl');
  PERFORM qt.eq((o->>'priority')::int, 0, 'replace resets priority');
  PERFORM qt.eq((o->>'leaseTime')::int, 300, 'replace resets leaseTime to 300');
  PERFORM qt.eq((o->>'dedupWindowSeconds')::int, 3600, 'replace resets dedup');
  PERFORM qt.eq(r->>'namespace', '', 'replace resets namespace');

  -- clamps and floors
  r := queen.configure_queue(qt.tenant(), 'orders', '{"minPopWaitTime":999999,"dedupWindowSeconds":-5}', 'merge');
  PERFORM qt.eq((r->'options'->>'minPopWaitTime')::int, 60000, 'minPopWaitTime clamped to 60000');
  PERFORM qt.eq((r->'options'->>'dedupWindowSeconds')::int, 0, 'dedup floored at 0');
  r := queen.configure_queue(qt.tenant(), 'orders', '{"minPopWaitTime":-3}', 'merge');
  PERFORM qt.eq((r->'options'->>'minPopWaitTime')::int, 0, 'minPopWaitTime clamped to 0');

  -- every key settable; strings and booleans
  r := queen.configure_queue(qt.tenant(), 'allkeys',
    '{"priority":1,"leaseTime":2,"retryLimit":3,"retryDelay":4,"maxSize":5,"ttl":6,"deadLetterQueue":false,
      "dlqAfterMaxRetries":false,"delayedProcessing":7,"windowBuffer":8,"retentionSeconds":9,"completedRetentionSeconds":10,
      "retentionEnabled":true,"encryptionEnabled":true,"maxWaitTimeSeconds":11,"minPopWaitTime":12,"dedupWindowSeconds":13,
      "retentionSinkHold":"s3-main","retentionSinkHoldMaxSeconds":3600,"namespace":"ns","task":"tk"}', 'merge');
  PERFORM qt.eq(r->'options',
    '{"priority":1,"leaseTime":2,"retryLimit":3,"retryDelay":4,"maxSize":5,"ttl":6,"deadLetterQueue":false,
      "dlqAfterMaxRetries":false,"delayedProcessing":7,"windowBuffer":8,"retentionSeconds":9,"completedRetentionSeconds":10,
      "retentionEnabled":true,"encryptionEnabled":true,"maxWaitTimeSeconds":11,"minPopWaitTime":12,"dedupWindowSeconds":13,
      "retentionSinkHold":"s3-main","retentionSinkHoldMaxSeconds":3600}'::jsonb, 'all keys stored');
  PERFORM qt.eq((SELECT max_queue_size || '/' || retention_sink_hold FROM queen.queues WHERE name = 'allkeys'), '5/s3-main', 'columns');
  -- string-typed numbers cast fine; bad values raise
  r := queen.configure_queue(qt.tenant(), 'allkeys', '{"leaseTime":"45"}', 'merge');
  PERFORM qt.eq((r->'options'->>'leaseTime')::int, 45, '"45" casts');
  BEGIN
    PERFORM queen.configure_queue(qt.tenant(), 'allkeys', '{"leaseTime":"abc"}', 'merge');
    RAISE EXCEPTION 'no raise';
  EXCEPTION WHEN invalid_text_representation THEN NULL;
  END;
  BEGIN
    PERFORM queen.configure_queue(qt.tenant(), 'allkeys', '{"retryLimit":1.5}', 'merge');
    RAISE EXCEPTION 'no raise';
  EXCEPTION WHEN invalid_text_representation THEN NULL;
  END;
  BEGIN
    PERFORM queen.configure_queue(qt.tenant(), 'allkeys', '{}', 'upsert');
    RAISE EXCEPTION 'no raise';
  EXCEPTION WHEN OTHERS THEN
    PERFORM qt.ok(SQLERRM LIKE 'QCONF mode%', 'bad mode raises: ' || SQLERRM);
  END;
  PERFORM qt.eq((SELECT lease_time FROM queen.queues WHERE name = 'allkeys'), 45, 'failed configure wrote nothing');

  -- configure keeps a push-created queue's id and its partitions; tenant-scoped
  PERFORM qt.push('pushed.first', 'p', 1, 1);
  r := queen.configure_queue(qt.tenant(), 'pushed.first', '{"leaseTime":10}', 'merge');
  PERFORM qt.eq(r->>'namespace', 'pushed', 'merge keeps the push-derived namespace');
  PERFORM qt.eq((SELECT count(*)::int FROM queen.log_partitions WHERE queue_id = (r->>'queueId')::uuid), 1, 'partition kept');
  r := queen.configure_queue('00000000-0000-0000-0000-0000000000dd', 'pushed.first', '{}', 'merge');
  PERFORM qt.ok((r->>'queueId')::uuid <> (SELECT id FROM queen.queues WHERE tenant_id = qt.tenant() AND name = 'pushed.first'), 'other tenant, other queue');

  -- the encryption flag the broker caches
  PERFORM qt.eq(queen.queue_encryption(qt.tenant(), 'allkeys'), true, 'encryption flag');
  PERFORM qt.eq(queen.queue_encryption(qt.tenant(), 'no-such-queue'), false, 'encryption flag of a missing queue');
  -- a configured lease time drives pops without leaseSeconds
  PERFORM qt.push('pushed.first', 'p', 2, 1);
  PERFORM qt.pop('pushed.first', 'p', 'g', 1, 1, 'w');
  PERFORM qt.ok((qt.cursor('pushed.first', 'p', 'g')).lease_expires_at < now() + interval '12 seconds', 'queue leaseTime 10 used');
END $$;
