package io.queenvertx.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.kernel.Config;
import io.queenvertx.testing.TestDatabase;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.Wire;
import java.sql.Connection;
import java.sql.DriverManager;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * What one pop or one ack reads does not grow with the backlog (R__30_pop.sql, R__40_ack.sql): a pop of ten messages
 * from a partition with thousands of segments fetches a handful of segment rows, an ack of a leased message fetches
 * the txns rows of its lease only, and a pop of one queue reads one queue row however many the tenant has. Counted
 * with PostgreSQL's own per-transaction tuple counters, so the assertions are about work done, not time; a batch-1 pop
 * scans the segment index once (its claim reads the head segment with the blob it returns). The hot-path
 * functions run with forced generic plans, where a predicate such as "x IS NULL OR col = x" is no index bound.
 */
class PopCostIT {
  private static final int SEGMENTS = 4000;

  @Test
  void theHotPathFunctionsPlanOnceWithGenericPlans() {
    try (TestNode node = TestNode.start()) {
      for (String fn : new String[] {"log_push_multi", "_log_push_into", "_log_check_encryption", "log_pop_many",
          "log_ack", "log_ack_many"}) {
        String cfg = TestDatabase.queryString(Wire.db(), "SELECT array_to_string(p.proconfig, ',') FROM pg_proc p "
            + "JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'queen' AND p.proname = '" + fn + "'");
        assertThat(cfg).as(fn).isEqualTo("plan_cache_mode=force_generic_plan");
      }
    }
  }

  @Test
  void aPopFetchesOnlyTheSegmentsItDeliversHoweverDeepTheBacklog() throws Exception {
    Config.Database db = TestDatabase.get().fresh();
    try (TestNode node = TestNode.start(Map.of(), db)) {
      String q = Wire.queue("pop-cost");
      assertThat(Wire.push(node, Wire.item(q, "p", 1, "seed-0")).status()).isEqualTo(201);
      try (Connection c = DriverManager.getConnection(
          "jdbc:postgresql://" + db.host() + ":" + db.port() + "/" + db.database(), db.user(), db.password());
           var st = c.createStatement()) {
        // Statistics taken before this partition's backlog existed, while other partitions held the rows (a
        // partition created or grown since the last ANALYZE, or one of many): the planner then expects about one
        // segment for it, whatever it holds by the time of the pop.
        // 100 partitions of 40 segments (the most common values) and 150 of one segment: the planner then expects
        // about one segment for any partition it has no statistics for.
        st.execute("INSERT INTO queen.log_partitions (queue_id, name) SELECT q.id, 'other-' || g FROM queen.queues q, "
            + "generate_series(1, 250) g WHERE q.name = '" + q + "'");
        st.execute("INSERT INTO queen.log_segments (partition_id, base_offset, end_offset, blob) "
            + "SELECT p.id, g, g, '\\x00'::bytea FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id, "
            + "generate_series(0, 39) g WHERE q.name = '" + q + "' AND p.name LIKE 'other-%' "
            + "AND (substr(p.name, 7)::int <= 100 OR g = 0)");
        st.execute("ANALYZE queen.log_segments");
        // A deep backlog written behind the broker's back: one-frame segments at offsets 0..SEGMENTS (never decoded
        // here: the pops below are SQL calls that return the blobs as they are).
        st.execute("INSERT INTO queen.log_partitions (queue_id, name, last_offset) SELECT q.id, 'deep', " + SEGMENTS
            + " FROM queen.queues q WHERE q.name = '" + q + "'");
        st.execute("INSERT INTO queen.log_segments (partition_id, base_offset, end_offset, blob) "
            + "SELECT p.id, g, g, '\\x00'::bytea FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id, "
            + "generate_series(0, " + SEGMENTS + ") g WHERE q.name = '" + q + "' AND p.name = 'deep'");
        // ... and statistics that know the deep partition, as autovacuum soon has them.
        st.execute("ANALYZE queen.log_segments");
        c.setAutoCommit(false);
        long fetched = 0;
        // More pops than PostgreSQL's custom-plan trials, so the cached generic plan is the one measured.
        for (int i = 0; i < 12; i++) {
          long scansBefore = scans(st, "log_segments_pkey");
          try (var rs = st.executeQuery("SELECT count(*) FROM queen.log_pop('00000000-0000-0000-0000-000000000001',"
              + " '" + q + "', 'deep', NULL, 10, 1, 60, 'w-" + i + "', true, 'all', NULL, NULL, NULL)")) {
            rs.next();
            assertThat(rs.getLong(1)).as("pop %d delivers ten one-frame slices", i).isEqualTo(10);
          }
          // The claim's head probe (which brings the first slice's blob), the forward walk, then one fetch per
          // later slice: the first slice's segment is not fetched twice.
          assertThat(scans(st, "log_segments_pkey") - scansBefore).as("segment index scans of pop %d", i)
              .isEqualTo(11);
          long now = blocks(st, "log_segments");
          if (i == 11) assertThat(now - fetched).as("segment blocks read by the last pop").isLessThan(50);
          fetched = now;
        }
        c.rollback();
      }
    }
  }

  @Test
  void anAckFetchesOnlyTheTxnsRowsOfItsLeaseAndAPopReadsOneQueueRow() throws Exception {
    Config.Database db = TestDatabase.get().fresh();
    try (TestNode node = TestNode.start(Map.of(), db)) {
      String q = Wire.queue("ack-cost");
      try (Connection c = DriverManager.getConnection(
          "jdbc:postgresql://" + db.host() + ":" + db.port() + "/" + db.database(), db.user(), db.password());
           var st = c.createStatement()) {
        // A deep backlog of one-frame pushes (one segment row each); the frame at offset o carries hash o.
        st.execute("SELECT queen.log_push(NULL, '" + q + "', 'deep', 1, decode(lpad(to_hex(g), 32, '0'), 'hex'), "
            + "'\\x00'::bytea) FROM generate_series(0, 2000) g");
        // Many queues of the same tenant: a pop naming one must not read them all.
        st.execute("INSERT INTO queen.queues (tenant_id, name) SELECT '00000000-0000-0000-0000-000000000001', "
            + "'" + q + "-other-' || g FROM generate_series(1, 2000) g");
        st.execute("ANALYZE queen.log_segments");
        st.execute("ANALYZE queen.queues");
        c.setAutoCommit(false);
        for (int i = 0; i < 12; i++) {
          long off;
          long queuesBefore = blocks(st, "queues");
          long segmentScansBefore = scans(st, "log_segments_pkey");
          try (var rs = st.executeQuery("SELECT base_offset + start_idx FROM queen.log_pop(NULL, '" + q + "', "
              + "NULL, 'g', 1, 1, 60, 'w', false, 'all', NULL, NULL, NULL)")) {
            assertThat(rs.next()).as("pop %d delivers", i).isTrue();
            off = rs.getLong(1);
          }
          assertThat(blocks(st, "queues") - queuesBefore).as("queue blocks read by pop %d", i).isLessThan(15);
          // The claim reads the head segment with its blob: a one-slice pop does not fetch the segment again.
          assertThat(scans(st, "log_segments_pkey") - segmentScansBefore).as("segment index scans of pop %d", i)
              .isEqualTo(1);
          long txnsBefore = blocks(st, "log_segments");
          try (var rs = st.executeQuery("SELECT queen.log_ack(NULL, (SELECT p.id FROM queen.log_partitions p "
              + "JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = '" + q + "' AND p.name = 'deep'), 'g', 'w', "
              + "ARRAY[decode(lpad(to_hex(" + off + "), 32, '0'), 'hex')], ARRAY['completed'])->>'committed'")) {
            rs.next();
            assertThat(rs.getLong(1)).as("ack %d advances the cursor to the acked offset", i).isEqualTo(off);
          }
          assertThat(blocks(st, "log_segments") - txnsBefore).as("log_segments blocks read by ack %d", i).isLessThan(15);
        }
        c.rollback();
      }
    }
  }

  /** Scans of an index this transaction has started so far. */
  private static long scans(java.sql.Statement st, String index) throws java.sql.SQLException {
    try (var rs = st.executeQuery("SELECT pg_stat_get_xact_numscans('queen." + index + "'::regclass)")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /** Heap and index blocks of a table (and its indexes) this transaction has touched so far. */
  private static long blocks(java.sql.Statement st, String table) throws java.sql.SQLException {
    try (var rs = st.executeQuery("SELECT sum(pg_stat_get_xact_blocks_fetched(c.oid)) FROM pg_class c "
        + "WHERE c.oid = 'queen." + table + "'::regclass OR c.oid IN (SELECT i.indexrelid FROM pg_index i "
        + "WHERE i.indrelid = 'queen." + table + "'::regclass)")) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
