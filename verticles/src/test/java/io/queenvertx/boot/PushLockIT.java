package io.queenvertx.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queenvertx.kernel.Config;
import io.queenvertx.testing.TestDatabase;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.postgresql.util.PSQLException;

/**
 * The push lock (R__20_push.sql, "Push lock"): the steady state writes with one statement whose update takes the
 * partition rows in whatever order its plan visits them, under advisory locks every writer takes in one order. Several
 * sessions (as several broker nodes would) push bundles over the same partitions in shuffled orders, mixing the
 * one-statement path (hinted, promise honoured), the per-element path (no promise on a queue with a dedup window: row
 * locks in id order, then a probe per element) and single-segment pushes ({@code log_push}, the transactions' and DLQ
 * moves' allocator), while queues are deleted under them. No call deadlocks, and every partition's offsets are dense:
 * each queued element got its own range, none lost, none shared, created_at never goes back.
 */
class PushLockIT {
  private static final String T1 = "00000000-0000-0000-0000-000000000001";
  private static final long VERIFIED = 9_000_000_000_000L;
  private static final int PARTITIONS = 6;
  private static final int SESSIONS = 4;
  private static final int CALLS = 120;

  private static Connection connect(Config.Database db) throws SQLException {
    return DriverManager.getConnection(Migrations.jdbcUrl(db), db.user(), db.password());
  }

  /** What one session does with its own connection. */
  @FunctionalInterface
  interface Session {
    void run(Statement st) throws SQLException;
  }

  /** Runs each session on its own connection and thread, all at once; what they threw. */
  private static List<Throwable> concurrently(Config.Database db, List<Session> sessions) throws Exception {
    List<Throwable> errors = new CopyOnWriteArrayList<>();
    ExecutorService pool = Executors.newFixedThreadPool(sessions.size());
    try {
      List<Future<?>> runs = new ArrayList<>();
      for (Session s : sessions) {
        runs.add(pool.submit(() -> {
          try (Connection c = connect(db); Statement st = c.createStatement()) {
            s.run(st);
          } catch (SQLException e) {
            errors.add(e);
          }
        }));
      }
      for (Future<?> f : runs) f.get();
    } finally {
      pool.shutdownNow();
    }
    return errors;
  }

  /** A random order of the partitions' indexes. */
  private static List<Integer> shuffled(Random rnd) {
    List<Integer> order = new ArrayList<>();
    for (int p = 0; p < PARTITIONS; p++) order.add(p);
    Collections.shuffle(order, rnd);
    return order;
  }

  /** log_push_multi of one frame per partition in {@code pids} (in that order), hinted; the queued count. */
  private static int pushBundle(Statement st, String queue, List<String> pids, List<String> names, boolean promise,
                                String tag) throws SQLException {
    List<String> tenants = new ArrayList<>();
    List<String> queues = new ArrayList<>();
    List<String> parts = new ArrayList<>();
    List<String> counts = new ArrayList<>();
    List<String> hashes = new ArrayList<>();
    List<String> blobs = new ArrayList<>();
    List<String> verified = new ArrayList<>();
    List<String> hints = new ArrayList<>();
    for (int i = 0; i < pids.size(); i++) {
      tenants.add("'" + T1 + "'");
      queues.add("'" + queue + "'");
      parts.add("'" + names.get(i) + "'");
      counts.add("1");
      hashes.add("decode(md5('" + tag + "-" + i + "'), 'hex')");
      blobs.add("'\\x00'");
      verified.add(promise ? String.valueOf(VERIFIED) : "-1");
      hints.add("'" + pids.get(i) + "'");
    }
    String sql = "SELECT count(*) FILTER (WHERE status = 'queued') FROM queen.log_push_multi("
        + "ARRAY[" + String.join(",", tenants) + "]::uuid[], ARRAY[" + String.join(",", queues) + "]::text[], "
        + "ARRAY[" + String.join(",", parts) + "]::text[], ARRAY[" + String.join(",", counts) + "]::integer[], "
        + "ARRAY[" + String.join(",", hashes) + "]::bytea[], ARRAY[" + String.join(",", blobs) + "]::bytea[], "
        + "ARRAY[" + String.join(",", verified) + "]::bigint[], NULL, "
        + "ARRAY[" + String.join(",", hints) + "]::uuid[], NULL)";
    try (ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getInt(1);
    }
  }

  private static List<String> column(Statement st, String sql) throws SQLException {
    List<String> out = new ArrayList<>();
    try (ResultSet rs = st.executeQuery(sql)) {
      while (rs.next()) out.add(rs.getString(1));
    }
    return out;
  }

  private static List<String> pids(Statement st, String queue) throws SQLException {
    return column(st, "SELECT p.id FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id "
        + "WHERE q.name = '" + queue + "' ORDER BY p.name");
  }

  private static List<String> names() {
    List<String> n = new ArrayList<>();
    for (int p = 0; p < PARTITIONS; p++) n.add("p" + p);
    return n;
  }

  private static void provision(Statement st, String queue) throws SQLException {
    st.execute("SELECT count(*) FROM generate_series(0, " + (PARTITIONS - 1) + ") g, "
        + "LATERAL queen.log_push(NULL, '" + queue + "', 'p' || g, 1, decode(md5('seed-" + queue + "' || g), 'hex'), "
        + "'\\x00'::bytea)");
  }

  @Test
  void concurrentWritersInShuffledOrderNeverDeadlockAndLeaveDenseOffsets() throws Exception {
    Config.Database db = TestDatabase.get().fresh();
    Migrations.apply(db);
    String queue = "lock-q";
    List<String> names = names();
    List<String> pids;
    try (Connection c = connect(db); Statement st = c.createStatement()) {
      provision(st, queue);
      // a dedup window: an element without a promise takes the per-element path (row locks, then a probe)
      st.execute("UPDATE queen.queues SET dedup_window_seconds = 3600 WHERE name = '" + queue + "'");
      pids = pids(st, queue);
    }
    AtomicLong queued = new AtomicLong(PARTITIONS);
    List<Session> sessions = new ArrayList<>();
    for (int s = 0; s < SESSIONS; s++) {
      int session = s;
      sessions.add(st -> {
        Random rnd = new Random(session);
        for (int call = 0; call < CALLS; call++) {
          List<Integer> pick = shuffled(rnd).subList(0, 2 + rnd.nextInt(PARTITIONS - 1));
          List<String> ids = new ArrayList<>();
          List<String> ns = new ArrayList<>();
          for (int p : pick) {
            ids.add(pids.get(p));
            ns.add(names.get(p));
          }
          // every fifth call without a promise: the per-element path, row locks in id order, then a probe each
          queued.addAndGet(pushBundle(st, queue, ids, ns, call % 5 != 0, "s" + session + "-" + call));
        }
      });
    }
    // single-segment pushes (the transactions' and DLQ moves' allocator) to the same partitions
    sessions.add(st -> {
      for (int i = 0; i < CALLS; i++) {
        try (ResultSet rs = st.executeQuery("SELECT queen.log_push(NULL, '" + queue + "', 'p" + (i % PARTITIONS)
            + "', 1, decode(md5('single-" + i + "'), 'hex'), '\\x00'::bytea)->>'status'")) {
          rs.next();
          if ("queued".equals(rs.getString(1))) queued.incrementAndGet();
        }
      }
    });
    List<Throwable> errors = concurrently(db, sessions);
    assertThat(errors).as("no call failed (a deadlock would be SQLSTATE 40P01)").isEmpty();

    try (Connection c = connect(db); Statement st = c.createStatement()) {
      // every segment starts one after the previous one's end, from 0 to the partition's last_offset; each has hashes
      assertThat(column(st, "SELECT count(*) FROM queen.log_segments t WHERE t.hashes IS NULL "
          + "AND t.partition_id = ANY (ARRAY['" + String.join("','", pids) + "']::uuid[])")).containsExactly("0");
      for (String table : List.of("log_segments")) {
        assertThat(column(st, "SELECT s.partition_id || ' at ' || s.base_offset FROM (SELECT t.partition_id, "
            + "t.base_offset, lag(t.end_offset) OVER w AS prev, row_number() OVER w AS rn FROM queen." + table + " t "
            + "WHERE t.partition_id = ANY (ARRAY['" + String.join("','", pids) + "']::uuid[]) "
            + "WINDOW w AS (PARTITION BY t.partition_id ORDER BY t.base_offset)) s "
            + "WHERE (s.rn = 1 AND s.base_offset <> 0) OR (s.rn > 1 AND s.base_offset <> s.prev + 1)"))
            .as(table + ": offset ranges that do not follow the previous one").isEmpty();
      }
      assertThat(column(st, "SELECT sum(p.last_offset + 1) FROM queen.log_partitions p WHERE p.id = ANY (ARRAY['"
          + String.join("','", pids) + "']::uuid[])")).containsExactly(String.valueOf(queued.get()));
      assertThat(column(st, "SELECT count(*) FROM queen.log_partitions p WHERE p.id = ANY (ARRAY['"
          + String.join("','", pids) + "']::uuid[]) AND p.last_offset <> "
          + "(SELECT max(s.end_offset) FROM queen.log_segments s WHERE s.partition_id = p.id)")).containsExactly("0");
      assertThat(column(st, "SELECT count(*) FROM (SELECT s.created_at < lag(s.created_at) OVER "
          + "(PARTITION BY s.partition_id ORDER BY s.base_offset) AS back FROM queen.log_segments s) x WHERE back"))
          .as("created_at never goes back in offset order").containsExactly("0");
    }
  }

  @Test
  void pushesRacingQueueDeletionNeverDeadlock() throws Exception {
    Config.Database db = TestDatabase.get().fresh();
    Migrations.apply(db);
    String queue = "lock-del";
    List<String> names = names();
    Map<String, List<String>> current = new ConcurrentHashMap<>();
    try (Connection c = connect(db); Statement st = c.createStatement()) {
      provision(st, queue);
      current.put(queue, pids(st, queue));
    }
    AtomicLong written = new AtomicLong();
    List<Session> sessions = new ArrayList<>();
    for (int s = 0; s < SESSIONS; s++) {
      int session = s;
      sessions.add(st -> {
        Random rnd = new Random(100 + session);
        for (int call = 0; call < CALLS; call++) {
          List<String> all = current.get(queue);
          List<String> ids = new ArrayList<>();
          List<String> ns = new ArrayList<>();
          for (int p : shuffled(rnd)) {
            ids.add(all.get(p));
            ns.add(names.get(p));
          }
          try {
            written.addAndGet(pushBundle(st, queue, ids, ns, true, "d" + session + "-" + call));
          } catch (PSQLException e) {
            // a hint of a deleted queue's partition: QSTALE, which the broker answers by resolving names again
            if (!"QV107".equals(e.getSQLState())) throw e;
          }
        }
      });
    }
    sessions.add(st -> {
      for (int round = 0; round < 15; round++) {
        st.execute("SELECT queen.delete_queue(NULL, '" + queue + "')");
        provision(st, queue);
        current.put(queue, pids(st, queue));
      }
    });
    List<Throwable> errors = concurrently(db, sessions);
    assertThat(errors).as("no call failed but with QSTALE (a deadlock would be SQLSTATE 40P01)").isEmpty();
    assertThat(written.get()).as("pushes landed between the deletions").isPositive();
  }
  /** A dead-letter row of partition {@code pid} that failed {@code ago}; its id. */
  private static String deadLetter(Statement st, String pid, String ago) throws SQLException {
    return column(st, "INSERT INTO queen.log_dlq (partition_id, consumer_group, \"offset\", payload, failed_at) "
        + "VALUES ('" + pid + "', 'g', 0, '{}', now() - interval '" + ago + "') RETURNING id").get(0);
  }

  /**
   * A redrive chunk moves its rows to several partitions, one {@code log_dlq_move_many} (one push) after another, in
   * the order of its rows. Its destinations' push locks are taken up front, in ascending key order, by
   * {@code dlq_redrive_rows}: otherwise the chunk holds one destination's lock while a push bundle holds the other's
   * and waits for the first, and the chunk's next move closes the cycle (a deadlock, SQLSTATE 40P01).
   */
  @Test
  void aRedriveChunkOverTwoPartitionsNeverDeadlocksWithABundle() throws Exception {
    Config.Database db = TestDatabase.get().fresh();
    Migrations.apply(db);
    String queue = "lock-redrive";
    String first;
    String second;
    String firstName;
    String secondName;
    String task;
    String row1;
    String row2;
    try (Connection c = connect(db); Statement st = c.createStatement()) {
      provision(st, queue);
      // the chunk moves to `first` then to `second` (its rows' order), and a bundle locks `second` (the lower key)
      // before `first`
      List<String> byKey = column(st, "SELECT p.id || ' ' || p.name FROM queen.log_partitions p JOIN queen.queues q "
          + "ON q.id = p.queue_id WHERE q.name = '" + queue + "' AND p.name IN ('p0', 'p1') "
          + "ORDER BY hashtext(p.id::text) DESC");
      first = byKey.get(0).split(" ")[0];
      firstName = byKey.get(0).split(" ")[1];
      second = byKey.get(1).split(" ")[0];
      secondName = byKey.get(1).split(" ")[1];
      row1 = deadLetter(st, first, "2 minutes");
      row2 = deadLetter(st, second, "1 minute");
      task = column(st, "INSERT INTO queen.dlq_redrive_tasks (tenant_id, queue, max_per_second, owner) VALUES ('"
          + T1 + "', '" + queue + "', 100, 'me') RETURNING id").get(0);
    }
    try (Connection chunk = connect(db); Statement rs = chunk.createStatement()) {
      chunk.setAutoCommit(false);
      assertThat(column(rs, "SELECT r.partition FROM queen.dlq_redrive_rows('" + task + "', 'me', 10) r"))
          .containsExactly(firstName, secondName);
      rs.execute("SELECT queen.log_dlq_move_many('" + T1 + "', ARRAY['" + row1 + "']::uuid[], '" + queue + "', '"
          + firstName + "', decode(md5('redrive-1'), 'hex'), '\\x00'::bytea)");
      ExecutorService pool = Executors.newSingleThreadExecutor();
      try {
        Future<Integer> bundle = pool.submit(() -> {
          try (Connection c = connect(db); Statement st = c.createStatement()) {
            return pushBundle(st, queue, List.of(second, first), List.of(secondName, firstName), true, "racer");
          }
        });
        // the bundle waits on a push lock the chunk holds
        try (Connection c = connect(db); Statement st = c.createStatement()) {
          await().atMost(Duration.ofSeconds(10)).until(() -> !column(st,
              "SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted").isEmpty());
        }
        rs.execute("SELECT queen.log_dlq_move_many('" + T1 + "', ARRAY['" + row2 + "']::uuid[], '" + queue + "', '"
            + secondName + "', decode(md5('redrive-2'), 'hex'), '\\x00'::bytea)");
        chunk.commit();
        assertThat(bundle.get()).as("the bundle queued both elements once the chunk committed").isEqualTo(2);
      } finally {
        pool.shutdownNow();
      }
    }
  }

  /**
   * A redrive chunk (and a DLQ move) locks its dead-letter rows, then its destinations' push locks. A deletion of the
   * queue takes the same rows before the push locks, in the same order: had it taken the push locks first, it would
   * hold them while waiting for a row the chunk holds, and the chunk's push locks would close the cycle (SQLSTATE
   * 40P01). Here the chunk holds its rows (the window between its two steps) while the deletion starts.
   */
  @Test
  void aQueueDeletionNeverDeadlocksWithARedriveChunkOfItsDeadLetters() throws Exception {
    Config.Database db = TestDatabase.get().fresh();
    Migrations.apply(db);
    String queue = "lock-delete-redrive";
    String task;
    List<String> rows = new ArrayList<>();
    try (Connection c = connect(db); Statement st = c.createStatement()) {
      provision(st, queue);
      List<String> pids = pids(st, queue);
      rows.add(deadLetter(st, pids.get(0), "2 minutes"));
      rows.add(deadLetter(st, pids.get(1), "1 minute"));
      task = column(st, "INSERT INTO queen.dlq_redrive_tasks (tenant_id, queue, max_per_second, owner) VALUES ('"
          + T1 + "', '" + queue + "', 100, 'me') RETURNING id").get(0);
    }
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try (Connection chunk = connect(db); Statement rs = chunk.createStatement()) {
      chunk.setAutoCommit(false);
      rs.execute("SELECT 1 FROM queen.log_dlq d WHERE d.id IN ('" + String.join("', '", rows)
          + "') ORDER BY d.failed_at, d.id FOR UPDATE");
      Future<String> deletion = pool.submit(() -> {
        try (Connection c = connect(db); Statement st = c.createStatement()) {
          return column(st, "SELECT queen.delete_queue(NULL, '" + queue + "')->>'existed'").get(0);
        }
      });
      // the deletion waits for a dead-letter row the chunk holds
      try (Connection c = connect(db); Statement st = c.createStatement()) {
        await().atMost(Duration.ofSeconds(10)).until(() -> !column(st,
            "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%delete_queue%'").isEmpty());
      }
      // the chunk's second step: its rows again, then the push locks of its destinations (the queue's partitions)
      assertThat(column(rs, "SELECT r.id::text FROM queen.dlq_redrive_rows('" + task + "', 'me', 10) r"))
          .containsExactlyElementsOf(rows);
      chunk.commit();
      assertThat(deletion.get(30, TimeUnit.SECONDS)).as("the deletion ran once the chunk committed").isEqualTo("true");
    } finally {
      pool.shutdownNow();
    }
  }
}
