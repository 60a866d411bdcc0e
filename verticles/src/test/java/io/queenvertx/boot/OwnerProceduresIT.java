package io.queenvertx.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The procedures that took over table SQL from Java classes (issue 19, one owner per table): what they answer, and
 * that the planner inlines each into the broker's statement, so the statement keeps the index plan it had when the
 * SQL was written out in Java (a function scan would hide a per-call plan behind the call).
 */
class OwnerProceduresIT {
  private static final UUID TENANT = UUID.fromString("00000000-0000-0000-0000-000000000001");
  private static final UUID OTHER = UUID.fromString("00000000-0000-0000-0000-0000000000aa");
  /** The statements as DedupReader, CachedOwnershipGate and SegmentDecoderVerticle send them. */
  static final String WARM_HEAD = "SELECT last_offset, dedup_window_seconds FROM queen.log_dedup_head($1)";
  static final String TXNS =
      "SELECT base_offset, end_offset, hashes, at_us FROM queen.log_dedup_txns($1, $2, $3, $4, $5)";
  static final String OWNS = "SELECT EXISTS (SELECT 1 FROM queen.partition_tenant($1) WHERE tenant_id = $2)";
  static final String SEGMENT = "SELECT base_offset, blob FROM queen.log_segment_at($1, $2) WHERE base_offset = $2";

  @AutoClose private static SqlSession c;
  private static UUID pid;

  @BeforeAll
  static void schema() throws Exception {
    c = SqlSession.fresh();
    pid = UUID.fromString(c.text("SELECT queen._log_ensure_partition('" + TENANT + "', 'owner-procs', 'p0')"));
    c.exec("UPDATE queen.queues SET dedup_window_seconds = 600 WHERE name = 'owner-procs'");
    // offsets 0..9 in five segments of two; the rows (and hashes) of 0 and 2 are older than the window
    for (int base = 0; base < 10; base += 2) {
      String at = base < 4 ? "now() - interval '2 hours'" : "now()";
      c.exec("INSERT INTO queen.log_segments(partition_id, base_offset, end_offset, created_at, blob, hashes) VALUES ('"
          + pid + "', " + base + ", " + (base + 1) + ", " + at + ", '\\x0" + base + "', '\\x00')");
    }
    c.exec("UPDATE queen.log_partitions SET last_offset = 9 WHERE id = '" + pid + "'");
  }

  @Test
  void dedupHeadIsThePartitionsLastOffsetAndItsQueuesWindow() throws SQLException {
    assertThat(c.rows(WARM_HEAD.replace("$1", q(pid)))).containsExactly("9|600");
    assertThat(c.rows(WARM_HEAD.replace("$1", q(UUID.randomUUID())))).isEmpty();
  }

  @Test
  void dedupTxnsPageWithinBoundsWindowAndLimit() throws SQLException {
    // a warm-up page: after -1, up to 7, inside the window: the old rows 0 and 2 are left out, 8 is past the bound
    assertThat(offsets(-1, "7", "600", 10)).containsExactly(4L, 6L);
    // a gap fill: no upper bound, no window, limited
    assertThat(offsets(0, String.valueOf(Long.MAX_VALUE), "NULL", 3)).containsExactly(2L, 4L, 6L);
    long atUs = Long.parseLong(c.text("SELECT at_us - (extract(epoch FROM now()) * 1000000)::bigint "
        + "FROM queen.log_dedup_txns(" + q(pid) + ", 7, 9, NULL, 1)"));
    assertThat(Math.abs(atUs)).as("at_us is microseconds since the epoch").isLessThan(600_000_000L);
  }

  @Test
  void partitionTenantAnswersTheOwnerOnly() throws SQLException {
    assertThat(c.text(OWNS.replace("$1", q(pid)).replace("$2", q(TENANT)))).isEqualTo("t");
    assertThat(c.text(OWNS.replace("$1", q(pid)).replace("$2", q(OTHER)))).isEqualTo("f");
    assertThat(c.text(OWNS.replace("$1", q(UUID.randomUUID())).replace("$2", q(TENANT)))).isEqualTo("f");
  }

  @Test
  void theDecoderFetchFindsASegmentByItsBaseOnly() throws SQLException {
    assertThat(c.rows(SEGMENT.replace("$1", q(pid)).replace("$2", "4"))).containsExactly("4|\\x04");
    assertThat(c.rows(SEGMENT.replace("$1", q(pid)).replace("$2", "5"))).as("5 is inside segment 4, not a base")
        .isEmpty();
    assertThat(c.rows(SEGMENT.replace("$1", q(pid)).replace("$2", "12"))).isEmpty();
  }

  @Test
  void eachStatementIsInlinedToAnIndexPlan() throws SQLException {
    for (String sql : List.of(WARM_HEAD, TXNS, OWNS, SEGMENT)) {
      String plan = c.plan(sql); // sequential scans off: ask whether an index plan exists at all
      assertThat(plan).as(sql + "\n" + plan).doesNotContain("Function Scan").containsPattern("Index (Only )?Scan");
    }
  }

  private static List<Long> offsets(long after, String upto, String window, int limit) throws SQLException {
    List<Long> out = new ArrayList<>();
    for (String r : c.rows(TXNS.replace("$1", q(pid)).replace("$2", String.valueOf(after)).replace("$3", upto)
        .replace("$4", window).replace("$5", String.valueOf(limit)))) {
      out.add(Long.parseLong(r.substring(0, r.indexOf('|'))));
    }
    return out;
  }

  private static String q(UUID id) {
    return "'" + id + "'::uuid";
  }
}
