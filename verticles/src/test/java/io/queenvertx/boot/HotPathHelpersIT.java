package io.queenvertx.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.codec.Frame;
import io.queenvertx.codec.Segment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The SQL helpers the push and pop procedures share instead of repeating a query (issue 19: no repeated block in
 * sql/src/main) cost the hot path nothing: each statement that calls a helper gets, as a generic plan, exactly the plan
 * of the same statement with the helper's query written out in place (the planner inlines the helper). A helper that
 * stops being inlinable (a SET clause, STRICT, written in plpgsql) shows up as a Function Scan and fails here. The
 * pop's byte-budget measure ({@code _log_pop_bytes}) is inlined too, and reads the segment header's length.
 */
class HotPathHelpersIT {
  /** log_pop's candidates of a queue written since the group's empty-scan floor, as the call and written out. */
  static final String FLOOR_CALL = """
      SELECT k.id, k.name FROM queen._log_pop_candidates($1::uuid, $2::text, $3::timestamptz) k
      WHERE k.last_write_at >= $4::timestamptz - interval '2 minutes'
      ORDER BY random() LIMIT $5::integer""";
  static final String FLOOR_INLINE = """
      SELECT p.id, p.name FROM queen.log_partitions p
      LEFT JOIN LATERAL (SELECT c0.partition_id, c0.committed, c0.worker_id, c0.lease_expires_at
                         FROM queen.log_consumers c0
                         WHERE c0.partition_id = p.id AND c0.consumer_group = $2::text LIMIT 1) c ON true
      WHERE p.queue_id = $1::uuid AND p.last_write_at >= $4::timestamptz - interval '2 minutes'
        AND (c.partition_id IS NULL OR p.last_offset > c.committed)
        AND (c.worker_id IS NULL OR c.lease_expires_at IS NULL OR c.lease_expires_at < $3::timestamptz)
      ORDER BY random() LIMIT $5::integer""";
  /** One half of log_pop's walk from a random pivot (an index range over the queue's partitions by id). */
  static final String PIVOT_CALL = """
      SELECT k.id, k.name FROM queen._log_pop_candidates($1::uuid, $2::text, $3::timestamptz) k
      WHERE k.id >= $4::uuid ORDER BY k.id LIMIT $5::integer""";
  static final String PIVOT_INLINE = """
      SELECT p.id, p.name FROM queen.log_partitions p
      LEFT JOIN LATERAL (SELECT c0.partition_id, c0.committed, c0.worker_id, c0.lease_expires_at
                         FROM queen.log_consumers c0
                         WHERE c0.partition_id = p.id AND c0.consumer_group = $2::text LIMIT 1) c ON true
      WHERE p.queue_id = $1::uuid AND p.id >= $4::uuid
        AND (c.partition_id IS NULL OR p.last_offset > c.committed)
        AND (c.worker_id IS NULL OR c.lease_expires_at IS NULL OR c.lease_expires_at < $3::timestamptz)
      ORDER BY p.id LIMIT $5::integer""";
  /** log_push_multi's name resolution: one LIMIT 1 probe per element without a hint. */
  static final String LOOKUP_CALL = """
      SELECT array_agg(COALESCE(u.hint, r.pid) ORDER BY u.ord), bool_or(u.hint IS NULL AND r.pid IS NULL)
      FROM unnest($1::uuid[], $2::text[], $3::text[], $4::uuid[]) WITH ORDINALITY AS u(t, qn, pn, hint, ord)
      LEFT JOIN LATERAL queen._log_partition_lookup(u.t, u.qn, u.pn, u.hint) r ON true""";
  static final String LOOKUP_INLINE = """
      SELECT array_agg(COALESCE(u.hint, r.pid) ORDER BY u.ord), bool_or(u.hint IS NULL AND r.pid IS NULL)
      FROM unnest($1::uuid[], $2::text[], $3::text[], $4::uuid[]) WITH ORDINALITY AS u(t, qn, pn, hint, ord)
      LEFT JOIN LATERAL (
          SELECT p.id AS pid FROM queen.queues q
          JOIN queen.log_partitions p ON p.queue_id = q.id AND p.name = COALESCE(u.pn, 'Default')
          WHERE u.hint IS NULL
            AND q.tenant_id = COALESCE(u.t, '00000000-0000-0000-0000-000000000001') AND q.name = u.qn
          LIMIT 1) r ON true""";

  private static final String DEFAULT_TENANT = "00000000-0000-0000-0000-000000000001";
  @AutoClose private static SqlSession c;

  @BeforeAll
  static void schema() throws Exception {
    c = SqlSession.fresh();
  }

  @Test
  void popCandidatesPlanAsIfWrittenOut() throws SQLException {
    assertSamePlan(FLOOR_CALL, FLOOR_INLINE);
    assertSamePlan(PIVOT_CALL, PIVOT_INLINE);
    assertThat(c.plan(PIVOT_CALL)).as("the pivot walk is an index range of the queue's partitions by id")
        .contains("Index Cond: ((queue_id = $1) AND (id >= $4))");
  }

  @Test
  void pushNameLookupPlansAsIfWrittenOut() throws SQLException {
    assertSamePlan(LOOKUP_CALL, LOOKUP_INLINE);
  }

  @Test
  void lookupAnswersTheTenantsPartitionAndSkipsKnownIds() throws SQLException {
    String pid = c.text("SELECT queen._log_ensure_partition('" + DEFAULT_TENANT + "', 'helpers-q', 'Default')");
    assertThat(c.rows("SELECT pid FROM queen._log_partition_lookup(NULL, 'helpers-q', NULL, NULL)"))
        .containsExactly(pid);
    assertThat(c.rows("SELECT pid FROM queen._log_partition_lookup('00000000-0000-0000-0000-0000000000aa', "
        + "'helpers-q', NULL, NULL)")).as("another tenant's queue of the same name").isEmpty();
    assertThat(c.rows("SELECT pid FROM queen._log_partition_lookup(NULL, 'helpers-q', NULL, '" + pid + "')"))
        .as("a known id needs no probe").isEmpty();
  }

  @Test
  void popBytesIsInlinedAndWeighsAMessageByTheSegmentHeader() throws SQLException {
    String plan = String.join("\n", c.rows("EXPLAIN (GENERIC_PLAN, VERBOSE, COSTS OFF) "
        + "SELECT queen._log_pop_bytes($1::bytea, $2::bigint, $3::integer)"));
    assertThat(plan).as("inlined: no call left in the plan").doesNotContain("_log_pop_bytes");
    List<Frame> frames = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      frames.add(Frame.of(UUID.randomUUID(), "t" + i,
          ("{\"text\":\"" + "x".repeat(3000) + "\"}").getBytes(StandardCharsets.UTF_8)));
    }
    byte[] blob = Segment.pack(frames);
    long raw = ByteBuffer.wrap(blob, 8, 4).order(ByteOrder.LITTLE_ENDIAN).getInt();
    assertThat(raw).as("uncompressed frames").isGreaterThan(12_000).isGreaterThan(blob.length * 10L);
    String hex = "'\\x" + HexFormat.of().formatHex(blob) + "'::bytea";
    assertThat(c.text("SELECT queen._log_pop_bytes(substring(" + hex + " FROM 1 FOR 12), octet_length(" + hex
        + "), 4)")).as("a quarter of the uncompressed frames, plus 256").isEqualTo(String.valueOf(raw / 4 + 256));
    assertThat(c.text("SELECT queen._log_pop_bytes(substring('\\x0102'::bytea FROM 1 FOR 12), 1000, 4)"))
        .as("no segment header: the stored size").isEqualTo("506");
  }

  private static void assertSamePlan(String call, String inline) throws SQLException {
    String viaHelper = c.plan(call);
    assertThat(viaHelper).as(viaHelper).doesNotContain("Function Scan on _log_");
    assertThat(viaHelper).isEqualTo(c.plan(inline));
  }
}
