package io.queenvertx.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.SQLException;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What the SQL helpers that replaced repeated blocks answer: {@code _log_cursor_start} (the start of a new or moved
 * cursor per subscription mode, shared by log_pop's seeding, _log_pop_claim and consumer_group_seek) and
 * {@code traces_purge} (rewritten as one SQL statement).
 */
class SharedSqlHelpersIT {
  @AutoClose private static SqlSession c;
  private static String pid;

  @BeforeAll
  static void schema() throws Exception {
    c = SqlSession.fresh();
    pid = c.text("SELECT queen._log_ensure_partition('00000000-0000-0000-0000-000000000001', 'helpers', 'p')");
    // offsets 0..5 in three segments: 0-1 two hours old, 2-3 one minute old, 4-5 now; 0-1 removed by retention
    c.exec("INSERT INTO queen.log_segments (partition_id, base_offset, end_offset, created_at, blob) VALUES "
        + "('" + pid + "', 0, 1, now() - interval '2 hours', '\\x00'), "
        + "('" + pid + "', 2, 3, now() - interval '1 minute', '\\x00'), "
        + "('" + pid + "', 4, 5, now(), '\\x00')");
    c.exec("UPDATE queen.log_partitions SET last_offset = 5, log_start = 2 WHERE id = '" + pid + "'");
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
    c.exec("INSERT INTO queen.message_traces (tenant_id, partition_id, transaction_id, data, created_at) "
        + "SELECT '00000000-0000-0000-0000-000000000001', '" + pid + "', 't' || g, '{}', now() - interval '10 days' "
        + "FROM generate_series(1, 3) g");
    c.exec("INSERT INTO queen.message_traces (tenant_id, partition_id, transaction_id, data) "
        + "VALUES ('00000000-0000-0000-0000-000000000001', '" + pid + "', 'fresh', '{}')");
    assertThat(c.rows("SELECT queen.traces_purge(7, 2)")).containsExactly("2");
    assertThat(c.rows("SELECT queen.traces_purge(7, 2)")).containsExactly("1");
    assertThat(c.rows("SELECT queen.traces_purge(7, 2)")).containsExactly("0");
    assertThat(c.rows("SELECT transaction_id FROM queen.message_traces")).containsExactly("fresh");
  }

  private static long start(String mode, String ts) throws SQLException {
    return Long.parseLong(c.text("SELECT queen._log_cursor_start('" + pid + "', 2, 5, " + mode + ", " + ts + ")"));
  }
}
