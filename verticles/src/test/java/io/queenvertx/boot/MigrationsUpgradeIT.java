package io.queenvertx.boot;

import io.queenvertx.kernel.Config;
import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.codec.Frame;
import io.queenvertx.codec.Segment;
import io.queenvertx.codec.TxnHash;
import io.queenvertx.testing.TestDatabase;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.exception.FlywayValidateException;
import org.junit.jupiter.api.Test;

/**
 * A database built by the migrations as they were before the functions moved to repeatable migrations (issue 19)
 * upgrades in place: {@link Migrations#apply} repairs the rewritten V1-V14 checksums, V15 drops the old function
 * names, the repeatables create the current ones, and every message, cursor, lease and dead letter written through
 * the old functions is still there and served by a broker on the new schema.
 *
 * <p>The old migration set is a historical fixture under {@code src/test/resources/legacy-migrations} (V1-V14 as they
 * stood before issue 19); the data goes in through the old SQL functions, as a broker of that build wrote it.
 */
class MigrationsUpgradeIT {
  private static final String TENANT = "00000000-0000-0000-0000-000000000001";
  private static final String QUEUE = "upgrade-q";
  /** A second queue: r0's payload taken by retention before the upgrade, r1 live. */
  private static final String RETAINED = "upgrade-r";
  private static final List<String> TABLES = List.of("queues", "log_partitions", "log_consumers", "log_dlq",
      "consumer_groups_metadata", "consumer_watermarks");
  /** The segments' payloads: log_segments without the hashes V22 added, and without the rows that have no payload. */
  private static final String PAYLOADS = "(SELECT partition_id, base_offset, end_offset, created_at, blob "
      + "FROM queen.log_segments WHERE octet_length(blob) > 0)";
  /** The hashes: log_txns before V22, the segment rows' hashes after it. */
  private static final String HASHES_BEFORE = "(SELECT partition_id, base_offset, end_offset, created_at, hashes "
      + "FROM queen.log_txns)";
  private static final String HASHES_AFTER = "(SELECT partition_id, base_offset, end_offset, created_at, hashes "
      + "FROM queen.log_segments WHERE hashes IS NOT NULL)";

  @Test
  void aDatabaseOfTheOldMigrationsUpgradesWithEveryMessageCursorLeaseAndDeadLetterIntact() throws Exception {
    Config.Database db = TestDatabase.get().empty();
    Flyway.configure()
        .dataSource(Migrations.jdbcUrl(db), db.user(), db.password())
        .schemas("queen").defaultSchema("queen").table("schema_history")
        .locations("classpath:legacy-migrations")
        .placeholderReplacement(false)
        .load()
        .migrate();
    String pid;
    try (Connection c = connect(db)) {
      for (int i = 0; i < 4; i++) {
        byte[] blob = Segment.pack(List.of(Frame.of(UUID.randomUUID(), "m" + i,
            ("{\"n\":" + i + "}").getBytes(StandardCharsets.UTF_8))));
        assertThat(query(c, "SELECT queen.log_push_v1(NULL, '" + QUEUE + "', 'p1', 1, " + hex(TxnHash.of("m" + i))
            + ", " + hex(blob) + ")->>'status'")).isEqualTo("queued");
      }
      pid = query(c, "SELECT p.id FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id "
          + "WHERE q.name = '" + QUEUE + "'");
      // queue mode: m0 consumed (auto-ack), m1 leased to w-lease for five minutes
      assertThat(pop(c, null, 1, "w-auto", true)).isEqualTo(1);
      assertThat(pop(c, null, 1, "w-lease", false)).isEqualTo(1);
      // group g-ack: m0 and m1 acked
      assertThat(pop(c, "g-ack", 2, "w-ack", false)).isEqualTo(2);
      assertThat(query(c, "SELECT queen.log_ack_v1(NULL, '" + pid + "', 'g-ack', 'w-ack', ARRAY[" + hex(TxnHash.of("m0"))
          + ", " + hex(TxnHash.of("m1")) + "], ARRAY['completed', 'completed'])->>'ok'")).isEqualTo("true");
      // group g-dlq: m0 dead-lettered (the ack hands it off, the broker files the head)
      assertThat(pop(c, "g-dlq", 1, "w-dlq", false)).isEqualTo(1);
      assertThat(query(c, "SELECT queen.log_ack_v1(NULL, '" + pid + "', 'g-dlq', 'w-dlq', ARRAY["
          + hex(TxnHash.of("m0")) + "], ARRAY['dlq'])->>'dlq'")).isEqualTo("true");
      assertThat(query(c, "SELECT queen.log_dlq_head_v1('" + pid + "', 'g-dlq', 'w-dlq', 0, gen_random_uuid(), 'm0', "
          + "'{\"n\":0}', 'poison')->>'ok'")).isEqualTo("true");
      // queue RETAINED: r0's payload taken by retention while its hashes stay (the old schema kept the log_txns row)
      for (String txn : List.of("r0", "r1")) {
        byte[] blob = Segment.pack(List.of(Frame.of(UUID.randomUUID(), txn, "{}".getBytes(StandardCharsets.UTF_8))));
        assertThat(query(c, "SELECT queen.log_push_v1(NULL, '" + RETAINED + "', 'p2', 1, " + hex(TxnHash.of(txn))
            + ", " + hex(blob) + ")->>'status'")).isEqualTo("queued");
      }
      query(c, "WITH d AS (DELETE FROM queen.log_segments s USING queen.log_partitions p, queen.queues q "
          + "WHERE p.id = s.partition_id AND q.id = p.queue_id AND q.name = '" + RETAINED + "' AND p.name = 'p2' "
          + "AND s.base_offset = 0 RETURNING s.partition_id) "
          + "UPDATE queen.log_partitions p SET log_start = 1 FROM d WHERE p.id = d.partition_id RETURNING p.id");
    }
    Map<String, String> before = snapshot(db);
    before.put("payloads", digest(db, PAYLOADS));
    before.put("hashes", digest(db, HASHES_BEFORE));
    assertThat(before.get("log_dlq")).as("a dead letter exists").isNotEqualTo(snapshotOfNothing(db));

    Migrations.apply(db);

    Map<String, String> after = snapshot(db);
    after.put("payloads", digest(db, PAYLOADS));
    after.put("hashes", digest(db, HASHES_AFTER));
    assertThat(after).as("every row of every table; the hashes moved from log_txns to the segment rows")
        .isEqualTo(before);
    assertThat(TestDatabase.queryLong(db, "SELECT count(*) FROM queen.log_segments WHERE octet_length(blob) = 0"))
        .as("r0, whose payload retention took, is a slim row").isEqualTo(1);
    assertThat(TestDatabase.queryString(db, "SELECT to_regclass('queen.log_txns')::text")).isNull();
    assertThat(TestDatabase.queryLong(db, "SELECT count(*) FROM queen.schema_history WHERE NOT success")).isZero();
    assertThat(TestDatabase.queryString(db, "SELECT max(version::int)::text FROM queen.schema_history "
        + "WHERE version IS NOT NULL")).isEqualTo(latestVersion());
    assertThat(TestDatabase.queryLong(db, "SELECT count(*) FROM pg_proc WHERE pronamespace = 'queen'::regnamespace "
        + "AND proname ~ '_v[0-9]+$'")).as("no versioned function name is left").isZero();
    assertThat(TestDatabase.queryLong(db, "SELECT count(*) FROM pg_proc WHERE pronamespace = 'queen'::regnamespace "
        + "AND proname IN ('log_push_multi', 'log_pop', 'log_ack', 'get_dlq_messages')")).isEqualTo(4);

    try (TestNode node = TestNode.start(Map.of(), db)) {
      // queue mode: the partition is leased to w-lease (m1), so nothing is delivered to anyone else
      assertThat(node.get("/api/v1/pop/queue/" + QUEUE + "?batch=10").status()).isEqualTo(204);
      assertThat(txns(node, "&consumerGroup=g-ack")).containsExactly("m2", "m3");
      assertThat(txns(node, "&consumerGroup=g-dlq")).containsExactly("m1", "m2", "m3");
      JsonArray fresh = popMessages(node, "&consumerGroup=g-new&subscriptionMode=all");
      assertThat(fresh).hasSize(4);
      for (int i = 0; i < 4; i++) {
        assertThat(fresh.getJsonObject(i).getString("transactionId")).isEqualTo("m" + i);
        assertThat(fresh.getJsonObject(i).getJsonObject("data")).isEqualTo(new JsonObject().put("n", i));
      }
      // the old lease still acks
      var ack = node.post("/api/v1/ack", new JsonObject().put("transactionId", "m1").put("partitionId", pid)
          .put("leaseId", "w-lease").put("status", "completed"));
      assertThat(ack.status()).as(ack.body()).isEqualTo(200);
      assertThat(TestDatabase.queryLong(db, "SELECT committed FROM queen.log_consumers WHERE partition_id = '" + pid
          + "' AND consumer_group = '__QUEUE_MODE__'")).isEqualTo(1);
      // ... and the queue-mode cursor continues after it (m0 was consumed before the upgrade)
      assertThat(txns(node, "")).containsExactly("m2", "m3");
      // the dead letter is listed
      JsonObject dlq = node.get("/api/v1/dlq?queue=" + QUEUE).json();
      assertThat(dlq.getInteger("total")).as(dlq.encode()).isEqualTo(1);
      assertThat(dlq.getJsonArray("messages").getJsonObject(0).getString("transactionId")).isEqualTo("m0");
      // dedup survives the upgrade: messages pushed before it, the one without a payload too, are still refused
      for (String[] dup : new String[][] {{QUEUE, "p1", "m3"}, {RETAINED, "p2", "r0"}, {RETAINED, "p2", "r1"}}) {
        var again = Wire.push(node, Wire.item(dup[0], dup[1], new JsonObject(), dup[2]));
        assertThat(again.status()).as(again.body()).isEqualTo(201);
        assertThat(again.array().getJsonObject(0).getString("status")).as(dup[2]).isEqualTo("duplicate");
      }
      // p2 serves r1 only (r0 has no payload), and r1 acks by transactionId
      var p2 = node.get("/api/v1/pop/queue/" + RETAINED
          + "/partition/p2?batch=10&consumerGroup=g-p2&subscriptionMode=all");
      assertThat(p2.status()).as(p2.body()).isEqualTo(200);
      JsonArray p2msgs = p2.json().getJsonArray("messages");
      assertThat(p2msgs).hasSize(1);
      JsonObject r1 = p2msgs.getJsonObject(0);
      assertThat(r1.getString("transactionId")).isEqualTo("r1");
      var ackR1 = node.post("/api/v1/ack", new JsonObject().put("transactionId", "r1")
          .put("partitionId", r1.getString("partitionId")).put("leaseId", r1.getString("leaseId"))
          .put("consumerGroup", "g-p2").put("status", "completed"));
      assertThat(ackR1.status()).as(ackR1.body()).isEqualTo(200);
      assertThat(TestDatabase.queryLong(db, "SELECT committed FROM queen.log_consumers WHERE partition_id = '"
          + r1.getString("partitionId") + "' AND consumer_group = 'g-p2'")).isEqualTo(1);
    }
  }

  @Test
  void aChecksumThatIsNeitherTheOldNorTheNewOneStillFailsTheBoot() throws Exception {
    Config.Database db = TestDatabase.get().fresh();
    Migrations.apply(db);
    // V2 as some other, unknown file wrote it: the repair is not for that
    TestDatabase.execute(db, "UPDATE queen.schema_history SET checksum = 12345 WHERE version = '2'");
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> Migrations.apply(db))
        .isInstanceOf(FlywayValidateException.class).hasMessageContaining("version 2");
    assertThat(TestDatabase.queryLong(db, "SELECT checksum FROM queen.schema_history WHERE version = '2'"))
        .as("the history is left alone").isEqualTo(12345);
  }

  private static List<String> txns(TestNode node, String query) {
    List<String> out = new ArrayList<>();
    for (Object o : popMessages(node, query)) out.add(((JsonObject) o).getString("transactionId"));
    return out;
  }

  private static JsonArray popMessages(TestNode node, String query) {
    var r = node.get("/api/v1/pop/queue/" + QUEUE + "?batch=10" + query);
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    return r.json().getJsonArray("messages");
  }

  /** One pop through the old function; returns the number of slices delivered. */
  private static long pop(Connection c, String group, int budget, String worker, boolean autoAck) throws SQLException {
    return Long.parseLong(query(c, "SELECT count(*) FROM queen.log_pop_v2(NULL, '" + QUEUE + "', 'p1', "
        + (group == null ? "NULL" : "'" + group + "'") + ", " + budget + ", 1, 300, '" + worker + "', " + autoAck
        + ", 'all', NULL)"));
  }

  /** A digest of every row of every table that holds messages, cursors, leases or dead letters. */
  private static Map<String, String> snapshot(Config.Database db) {
    Map<String, String> out = new LinkedHashMap<>();
    for (String t : TABLES) out.put(t, digest(db, "queen." + t));
    return out;
  }

  /** Row count and digest of a table or a parenthesised query. */
  private static String digest(Config.Database db, String relation) {
    return TestDatabase.queryString(db, "SELECT count(*) || ':' || COALESCE(md5(string_agg(t::text, '|' "
        + "ORDER BY t::text)), '') FROM " + relation + " t");
  }

  /** The highest versioned migration of the build (the sql module's folder), e.g. "16". */
  private static String latestVersion() throws java.io.IOException {
    try (var files = java.nio.file.Files.list(java.nio.file.Path.of("../sql/src/main/resources/db/migration"))) {
      return String.valueOf(files.map(f -> f.getFileName().toString()).filter(n -> n.matches("V\\d+__.*"))
          .mapToInt(n -> Integer.parseInt(n.substring(1, n.indexOf("__")))).max().orElseThrow());
    }
  }

  private static String snapshotOfNothing(Config.Database db) {
    return TestDatabase.queryString(db, "SELECT 0 || ':' || ''");
  }

  private static String hex(byte[] b) {
    return "'\\x" + java.util.HexFormat.of().formatHex(b) + "'::bytea";
  }

  private static Connection connect(Config.Database db) throws SQLException {
    return DriverManager.getConnection(Migrations.jdbcUrl(db), db.user(), db.password());
  }

  private static String query(Connection c, String sql) throws SQLException {
    try (var st = c.createStatement(); var rs = st.executeQuery(sql)) {
      assertThat(rs.next()).as(sql).isTrue();
      return rs.getString(1);
    }
  }
}
