-- Subscription seeding: all / new / timestamp, retention head, durable registration, bulk seed, queue mode.
DO $$
DECLARE r jsonb; pid uuid; t0 timestamptz := now(); m record;
BEGIN
  PERFORM qt.push('seedq', 'p', 1, 2);   -- 0..1
  PERFORM qt.push('seedq', 'p', 3, 2);   -- 2..3
  PERFORM qt.push('seedq', 'p', 5, 2);   -- 4..5
  pid := qt.pid('seedq', 'p');
  UPDATE queen.log_segments SET created_at = t0 - (interval '1 hour' * (3 - base_offset / 2)) WHERE partition_id = pid;
  -- created_at now: base 0 -> t0-3h, base 2 -> t0-2h, base 4 -> t0-1h

  r := qt.pop('seedq', NULL, 'g_all', 100, 1, 'w', mode => 'all');
  PERFORM qt.eq(qt.offs(r), ARRAY[0,1,2,3,4,5]::bigint[], 'all: everything');

  r := qt.pop('seedq', NULL, 'g_new', 100, 1, 'w', mode => 'new');
  PERFORM qt.eq(r, '[]'::jsonb, 'new: nothing of the backlog');
  PERFORM qt.eq((qt.cursor('seedq', 'p', 'g_new')).committed, 5::bigint, 'new: seeded at last_offset');

  r := qt.pop('seedq', NULL, 'g_ts', 100, 1, 'w', mode => 'timestamp', sub_from => t0 - interval '150 minutes');
  PERFORM qt.eq(qt.offs(r), ARRAY[2,3,4,5]::bigint[], 'timestamp: from the first segment at/after ts');
  r := qt.pop('seedq', NULL, 'g_ts2', 100, 1, 'w', mode => 'timestamp', sub_from => t0 + interval '1 hour');
  PERFORM qt.eq(r, '[]'::jsonb, 'timestamp after everything: nothing');
  PERFORM qt.eq((qt.cursor('seedq', 'p', 'g_ts2')).committed, 5::bigint, 'timestamp after everything: last_offset');
  r := qt.pop('seedq', NULL, 'g_ts3', 100, 1, 'w', mode => 'timestamp', sub_from => NULL);
  PERFORM qt.eq(r, '[]'::jsonb, 'timestamp without a time: new');

  -- queue mode is always 'all'
  r := qt.pop('seedq', NULL, '__QUEUE_MODE__', 100, 1, 'w', mode => 'new');
  PERFORM qt.eq(qt.offs(r), ARRAY[0,1,2,3,4,5]::bigint[], 'queue mode ignores new');

  -- new pushes reach the 'new' group
  PERFORM qt.push('seedq', 'p', 7, 1);
  r := qt.pop('seedq', NULL, 'g_new', 100, 1, 'w2', mode => 'new');
  PERFORM qt.eq(qt.offs(r), ARRAY[6]::bigint[], 'new: sees what came after');

  -- registration rows
  SELECT * INTO m FROM queen.consumer_groups_metadata WHERE consumer_group = 'g_new' AND queue_id = (SELECT id FROM queen.queues WHERE name = 'seedq');
  PERFORM qt.eq(m.subscription_mode, 'new', 'metadata mode new');
  PERFORM qt.ok(m.subscription_timestamp >= t0, 'metadata ts = registration time');
  SELECT * INTO m FROM queen.consumer_groups_metadata WHERE consumer_group = 'g_all' AND queue_id = (SELECT id FROM queen.queues WHERE name = 'seedq');
  PERFORM qt.eq(m.subscription_mode || '@' || m.subscription_timestamp, 'all@' || '1970-01-01 00:00:00+00'::timestamptz, 'metadata all/epoch');
  SELECT * INTO m FROM queen.consumer_groups_metadata WHERE consumer_group = 'g_ts' AND queue_id = (SELECT id FROM queen.queues WHERE name = 'seedq');
  PERFORM qt.eq(m.subscription_mode, 'timestamp', 'metadata timestamp');
  PERFORM qt.eq(m.subscription_timestamp, t0 - interval '150 minutes', 'metadata timestamp value');
  PERFORM qt.eq((SELECT subscription_mode FROM queen.consumer_groups_metadata WHERE consumer_group = '__QUEUE_MODE__'
                 AND queue_id = (SELECT id FROM queen.queues WHERE name = 'seedq')), 'all', 'queue mode registered as all');

  -- 'all' seeds at the retained head (log_start - 1)
  DELETE FROM queen.log_segments WHERE partition_id = pid AND base_offset = 0;
  UPDATE queen.log_partitions SET log_start = 2 WHERE id = pid;
  PERFORM qt.pop('seedq', NULL, 'g_all2', 1, 1, 'w', mode => 'all');
  PERFORM qt.eq((qt.cursor('seedq', 'p', 'g_all2')).committed, 1::bigint, 'all: seeded at log_start - 1');
END $$;

-- Durable subscription wins for partitions first contacted later; bulk seed on first registration.
DO $$
DECLARE r jsonb; t_reg timestamptz; p3 uuid;
BEGIN
  PERFORM qt.push('durq', 'p1', 1, 2);
  PERFORM qt.push('durq', 'p2', 3, 2);
  PERFORM qt.push('durq', 'p3', 5, 2);
  -- first contact with mode new: every partition's cursor is seeded at once (bulk), at its last_offset
  r := qt.pop('durq', NULL, 'gd', 100, 1, 'w', mode => 'new');
  PERFORM qt.eq(r, '[]'::jsonb, 'registration with new: nothing');
  PERFORM qt.eq((SELECT string_agg(p.name || '=' || c.committed, ',' ORDER BY p.name)
                 FROM queen.log_consumers c JOIN queen.log_partitions p ON p.id = c.partition_id
                 JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = 'durq' AND c.consumer_group = 'gd'),
                'p1=1,p2=1,p3=1', 'bulk seed of every partition');
  t_reg := (SELECT subscription_timestamp FROM queen.consumer_groups_metadata WHERE consumer_group = 'gd');

  -- a partition created after the registration: the pop's own 'new' would skip its backlog; the durable
  -- subscription (since t_reg) delivers it
  PERFORM qt.push('durq', 'p4', 7, 2);
  r := qt.pop('durq', 'p4', 'gd', 100, 1, 'w', mode => 'new');
  PERFORM qt.eq(qt.offs(r), ARRAY[0,1]::bigint[], 'durable subscription wins over the pop mode (new partition)');

  -- and a later 'all' pop does not widen it: data older than the subscription stays skipped
  PERFORM qt.push('durq', 'p5', 9, 2);
  UPDATE queen.log_segments SET created_at = t_reg - interval '1 hour' WHERE partition_id = qt.pid('durq', 'p5');
  PERFORM qt.push('durq', 'p5', 11, 1);
  r := qt.pop('durq', 'p5', 'gd', 100, 1, 'w', mode => 'all');
  PERFORM qt.eq(qt.offs(r), ARRAY[2]::bigint[], 'durable new: older segment of a new partition skipped');

  -- the 'all' registration of another group delivers a new partition entirely
  PERFORM qt.pop('durq', NULL, 'gall', 1, 1, 'w', mode => 'all', auto_ack => true);
  PERFORM qt.push('durq', 'p6', 20, 3);
  r := qt.pop('durq', 'p6', 'gall', 100, 1, 'w', mode => 'new');
  PERFORM qt.eq(qt.offs(r), ARRAY[0,1,2]::bigint[], 'durable all wins over pop new');

  -- a pop before the first push subscribes the group (queue row provisioned, registration stored)
  PERFORM qt.eq(qt.pop('early.q', NULL, 'ge', 10, 1, 'w', mode => 'new'), '[]'::jsonb, 'early subscriber');
  PERFORM qt.push('early.q', 'Default', 1, 2);
  r := qt.pop('early.q', NULL, 'ge', 10, 1, 'w', mode => 'new');
  PERFORM qt.eq(qt.offs(r), ARRAY[0,1]::bigint[], 'early new subscriber sees the first push');
END $$;
