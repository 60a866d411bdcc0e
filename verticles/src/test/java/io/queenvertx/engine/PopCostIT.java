package io.queenvertx.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.boot.Config;
import io.queenvertx.testing.TestDatabase;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.Wire;
import java.sql.Connection;
import java.sql.DriverManager;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * What one pop reads does not grow with the partition's backlog (R__30_pop.sql): a pop of ten messages from a
 * partition with thousands of segments fetches a handful of segment rows. Counted with PostgreSQL's own
 * per-transaction tuple counters, so the assertion is about work done, not time.
 */
class PopCostIT {
  private static final int SEGMENTS = 4000;

  @Test
  void theHotPathFunctionsPlanOnceWithGenericPlans() {
    try (TestNode node = TestNode.start()) {
      for (String fn : new String[] {"log_push_multi", "_log_push_into", "_log_check_encryption", "log_pop",
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
          try (var rs = st.executeQuery("SELECT count(*) FROM queen.log_pop('00000000-0000-0000-0000-000000000001',"
              + " '" + q + "', 'deep', NULL, 10, 1, 60, 'w-" + i + "', true, 'all', NULL, NULL, NULL)")) {
            rs.next();
            assertThat(rs.getLong(1)).as("pop %d delivers ten one-frame slices", i).isEqualTo(10);
          }
          try (var rs = st.executeQuery(
              "SELECT pg_stat_get_xact_tuples_fetched('queen.log_segments'::regclass)")) {
            rs.next();
            long now = rs.getLong(1);
            if (i == 11) assertThat(now - fetched).as("segment rows fetched by the last pop").isLessThan(50);
            fetched = now;
          }
        }
        c.rollback();
      }
    }
  }
}
