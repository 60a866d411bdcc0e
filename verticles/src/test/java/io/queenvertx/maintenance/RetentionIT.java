package io.queenvertx.maintenance;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.kernel.Config;
import io.queenvertx.testing.TestDatabase;
import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.UUID;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Retention, time-accelerated by back-dating rows (ENGINE.md §9.1). */
class RetentionIT {
  @NodeFixture(freshDatabase = true, env = "RETENTION_INTERVAL=200")
  static TestNode node;
  static Config.Database db;

  @BeforeAll
  static void database() {
    db = node.node().config().postgres().connection().orElseThrow();
  }

  static String pid(TestNode.Reply pushed) {
    return pushed.array().getJsonObject(0).getString("partitionId");
  }

  static TestNode.Reply push(String q, String txn) {
    return node.post("/api/v1/push", new JsonObject().put("items", new JsonArray().add(new JsonObject()
        .put("queue", q).put("transactionId", txn).put("payload", new JsonObject().put("t", txn)))));
  }

  static void configure(String q, JsonObject options) {
    assertThat(node.post("/api/v1/configure", new JsonObject().put("queue", q).put("options", options)).status())
        .isEqualTo(200);
  }

  /** Ages the segment at base offset {@code base} (and the partition's watermark) by {@code seconds}. */
  static void age(String pid, long base, int seconds) {
    TestDatabase.execute(db, "UPDATE queen.log_segments SET created_at = created_at - interval '" + seconds
        + " seconds' WHERE partition_id = '" + pid + "' AND base_offset = " + base);
    TestDatabase.execute(db, "UPDATE queen.log_partitions SET oldest_live_at = (SELECT min(created_at) FROM "
        + "queen.log_segments WHERE partition_id = '" + pid + "') WHERE id = '" + pid + "'");
  }

  /** Segments that still hold their payload (a slim row, whose payload retention took, keeps only its hashes). */
  static long segments(String pid) {
    return TestDatabase.queryLong(db, "SELECT count(*) FROM queen.log_segments WHERE partition_id = '" + pid
        + "' AND octet_length(blob) > 0");
  }

  /** Segment rows whose hashes are kept (dedup and ack resolution read them). */
  static long hashed(String pid) {
    return TestDatabase.queryLong(db, "SELECT count(*) FROM queen.log_segments WHERE partition_id = '" + pid
        + "' AND hashes IS NOT NULL");
  }

  @Test
  void segmentsOlderThanRetentionSecondsGoConsumedOrNot() {
    String q = "ret-all-" + UUID.randomUUID();
    configure(q, new JsonObject().put("retentionEnabled", true).put("retentionSeconds", 60));
    String pid = pid(push(q, "a1"));
    push(q, "a2");
    age(pid, 0, 120);
    Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> segments(pid) == 1);
    assertThat(TestDatabase.queryLong(db, "SELECT log_start FROM queen.log_partitions WHERE id = '" + pid + "'"))
        .isEqualTo(1);
    var pop = node.get("/api/v1/pop/queue/" + q + "?batch=10");
    assertThat(pop.json().getJsonArray("messages")).hasSize(1);
    assertThat(pop.json().getJsonArray("messages").getJsonObject(0).getString("transactionId")).isEqualTo("a2");
    assertThat(TestDatabase.queryLong(db, "SELECT count(*) FROM queen.retention_history WHERE partition_id = '"
        + pid + "' AND retention_type = 'retention'")).isEqualTo(1);
    // a1's payload is gone, its hash is not (inside the dedup window): pushing a1 again is still a duplicate
    assertThat(push(q, "a1").array().getJsonObject(0).getString("status")).isEqualTo("duplicate");
    assertThat(hashed(pid)).isEqualTo(2);
  }

  @Test
  void completedRetentionDeletesOnlyWhatEveryGroupConsumed() {
    String q = "ret-done-" + UUID.randomUUID();
    configure(q, new JsonObject().put("retentionEnabled", true).put("completedRetentionSeconds", 60));
    String pid = pid(push(q, "c1"));
    push(q, "c2");
    var pop = node.get("/api/v1/pop/queue/" + q + "?batch=1").json();
    var m = pop.getJsonArray("messages").getJsonObject(0);
    node.post("/api/v1/ack", new JsonObject().put("transactionId", m.getString("transactionId"))
        .put("partitionId", pid).put("leaseId", pop.getString("leaseId")));
    age(pid, 0, 120);
    age(pid, 1, 120);
    Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> segments(pid) == 1);
    assertThat(TestDatabase.queryLong(db, "SELECT min(base_offset) FROM queen.log_segments WHERE partition_id = '"
        + pid + "' AND octet_length(blob) > 0")).isEqualTo(1);
  }

  @Test
  void maxWaitTimeEvictsEvenWithRetentionDisabled() {
    String q = "ret-wait-" + UUID.randomUUID();
    configure(q, new JsonObject().put("maxWaitTimeSeconds", 30));
    String pid = pid(push(q, "w1"));
    age(pid, 0, 60);
    Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> segments(pid) == 0);
    assertThat(node.get("/api/v1/pop/queue/" + q).status()).isEqualTo(204);
  }

  @Test
  void deadLetterRowsAreNeverPurgedByRetention() {
    String q = "ret-dlq-" + UUID.randomUUID();
    configure(q, new JsonObject().put("retentionEnabled", true).put("retentionSeconds", 60).put("retryLimit", 0));
    String pid = pid(push(q, "d1"));
    var pop = node.get("/api/v1/pop/queue/" + q).json();
    var ack = node.post("/api/v1/ack", new JsonObject().put("transactionId", "d1").put("partitionId", pid)
        .put("leaseId", pop.getString("leaseId")).put("status", "failed").put("error", "boom"));
    assertThat(ack.array().getJsonObject(0).getBoolean("dlq")).isTrue();
    TestDatabase.execute(db, "UPDATE queen.log_dlq SET failed_at = failed_at - interval '1 day' WHERE partition_id = '"
        + pid + "'");
    age(pid, 0, 120);
    Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> segments(pid) == 0);
    assertThat(Wire.dlqCount(db, pid))
        .isEqualTo(1);
  }

  @Test
  void expiredTxnRowsArePurgedAndTheIdIsAcceptedAgain() {
    String q = "ret-txn-" + UUID.randomUUID();
    configure(q, new JsonObject().put("dedupWindowSeconds", 60));
    String pid = pid(push(q, "x1"));
    assertThat(push(q, "x1").array().getJsonObject(0).getString("status")).isEqualTo("duplicate");
    TestDatabase.execute(db, "UPDATE queen.log_segments SET created_at = created_at - interval '2 hours' "
        + "WHERE partition_id = '" + pid + "'");
    TestDatabase.execute(db, "UPDATE queen.log_partitions SET oldest_txn_at = oldest_txn_at - interval '2 hours' "
        + "WHERE id = '" + pid + "'");
    Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> hashed(pid) == 0);
    assertThat(TestDatabase.queryLong(db, "SELECT txns_start FROM queen.log_partitions WHERE id = '" + pid + "'"))
        .isEqualTo(1);
    assertThat(push(q, "x1").array().getJsonObject(0).getString("status")).isEqualTo("queued");
    // the segment itself is still there (payload kept): only its hashes, for the listing and dedup, expired
    assertThat(segments(pid)).isEqualTo(2);
  }

  @Test
  void theRetentionClaimIsOneFencedRowTakenAndReleasedEachInterval() {
    assertThat(TestDatabase.queryLong(db, "SELECT count(*) FROM queen.maintenance_leases WHERE task = 'retention'"))
        .isEqualTo(1);
    Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> TestDatabase.queryLong(db,
        "SELECT runs FROM queen.maintenance_leases WHERE task = 'retention'") >= 2);
  }
}
