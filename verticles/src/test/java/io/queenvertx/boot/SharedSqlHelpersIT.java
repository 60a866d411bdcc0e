package io.queenvertx.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.TestDatabase;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What the SQL helpers that replaced repeated blocks answer: {@code _log_cursor_start} (the start of a new or moved
 * cursor per subscription mode, shared by log_pop's seeding, _log_pop_claim and consumer_group_seek) and
 * {@code traces_purge} (rewritten as one SQL statement).
 */
class SharedSqlHelpersIT {
  private static Connection c;
  private static String pid;

  @BeforeAll
  static void schema() throws Exception {
    Config.Database db = TestDatabase.get().fresh();
    Migrations.apply(db);
    var props = new java.util.Properties();
    props.setProperty("user", db.user());
    props.setProperty("password", db.password());
    c = DriverManager.getConnection(Migrations.jdbcUrl(db), props);
    pid = rows("SELECT queen._log_ensure_partition('00000000-0000-0000-0000-000000000001', 'helpers', 'p')").get(0);
    // offsets 0..5 in three segments: 0-1 two hours old, 2-3 one minute old, 4-5 now; 0-1 removed by retention
    exec("INSERT INTO queen.log_segments (partition_id, base_offset, end_offset, created_at, blob) VALUES "
        + "('" + pid + "', 0, 1, now() - interval '2 hours', '\\x00'), "
        + "('" + pid + "', 2, 3, now() - interval '1 minute', '\\x00'), "
        + "('" + pid + "', 4, 5, now(), '\\x00')");
    exec("UPDATE queen.log_partitions SET last_offset = 5, log_start = 2 WHERE id = '" + pid + "'");
  }

  @AfterAll
  static void close() throws SQLException {
    c.close();
  }

  @Test
  void cursorStartPerSubscriptionMode() throws SQLException {
    assertThat(start("'new'", "NULL")).as("new: only what comes next").isEqualTo(5);
    assertThat(start("'all'", "NULL")).as("all: the retained start").isEqualTo(1);
    assertThat(start("'timestamp'", "now() - interval '1 hour'"))
        .as("timestamp: before the first retained segment created since").isEqualTo(1);
    assertThat(start("'timestamp'", "now() - interval '30 seconds'")).isEqualTo(3);
    assertThat(start("'timestamp'", "now() + interval '1 hour'")).as("nothing since: the last offset").isEqualTo(5);
    assertThat(start("'timestamp'", "now() - interval '3 hours'"))
        .as("a time before the retained start starts at the retained start").isEqualTo(1);
  }

  @Test
  void tracesPurgeDeletesOldTracesABatchAtATime() throws SQLException {
    exec("INSERT INTO queen.message_traces (tenant_id, partition_id, transaction_id, data, created_at) "
        + "SELECT '00000000-0000-0000-0000-000000000001', '" + pid + "', 't' || g, '{}', now() - interval '10 days' "
        + "FROM generate_series(1, 3) g");
    exec("INSERT INTO queen.message_traces (tenant_id, partition_id, transaction_id, data) "
        + "VALUES ('00000000-0000-0000-0000-000000000001', '" + pid + "', 'fresh', '{}')");
    assertThat(rows("SELECT queen.traces_purge(7, 2)")).containsExactly("2");
    assertThat(rows("SELECT queen.traces_purge(7, 2)")).containsExactly("1");
    assertThat(rows("SELECT queen.traces_purge(7, 2)")).containsExactly("0");
    assertThat(rows("SELECT transaction_id FROM queen.message_traces")).containsExactly("fresh");
  }

  private static long start(String mode, String ts) throws SQLException {
    return Long.parseLong(rows("SELECT queen._log_cursor_start('" + pid + "', 2, 5, " + mode + ", " + ts + ")")
        .get(0));
  }

  private static void exec(String sql) throws SQLException {
    try (var st = c.createStatement()) {
      st.execute(sql);
    }
  }

  private static List<String> rows(String sql) throws SQLException {
    List<String> out = new ArrayList<>();
    try (var st = c.createStatement(); var rs = st.executeQuery(sql)) {
      while (rs.next()) out.add(rs.getString(1));
    }
    return out;
  }
}
