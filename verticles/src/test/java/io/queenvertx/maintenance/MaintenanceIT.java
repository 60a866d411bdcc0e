package io.queenvertx.maintenance;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.TestDatabase;
import io.queenvertx.testing.TestNode;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * Push and pop maintenance (API.md §5.14, ENGINE.md §9.4-9.5). Each test uses its own database: the switches are
 * cluster-wide rows, and other test classes share the default database.
 */
class MaintenanceIT {
  static JsonObject push(String queue, String txn) {
    return new JsonObject().put("items", new JsonArray().add(new JsonObject().put("queue", queue)
        .put("transactionId", txn).put("payload", new JsonObject().put("txn", txn))));
  }

  static long frames(io.queenvertx.kernel.Config.Database db, String queue) {
    return TestDatabase.queryLong(db, "SELECT COALESCE(sum(s.end_offset - s.base_offset + 1), 0) FROM "
        + "queen.log_segments s JOIN queen.log_partitions p ON p.id = s.partition_id JOIN queen.queues q "
        + "ON q.id = p.queue_id WHERE q.name = '" + queue + "'");
  }

  @Test
  void pushMaintenanceBuffersToTheSpoolAndReplaysExactlyOnceAcrossARestart() throws Exception {
    var db = TestDatabase.get().fresh();
    var spool = Files.createTempDirectory("queen-spool-it").toString();
    var env = Map.of("FILE_BUFFER_DIR", spool, "FILE_BUFFER_FLUSH_MS", "50");
    String q = "mnt-" + UUID.randomUUID();
    try (var node = TestNode.start(env, db)) {
      var on = node.post("/api/v1/system/maintenance", new JsonObject().put("enabled", true));
      assertThat(on.status()).isEqualTo(200);
      assertThat(on.json().getBoolean("maintenanceMode")).isTrue();
      assertThat(on.json().getString("message")).isEqualTo("Maintenance mode ENABLED. All PUSHes routing to file buffer.");
      var r = node.post("/api/v1/push", push(q, "m-1"));
      assertThat(r.status()).isEqualTo(201);
      assertThat(r.array().getJsonObject(0).getString("status")).isEqualTo("buffered");
      assertThat(r.array().getJsonObject(0).getString("transaction_id")).isEqualTo("m-1");
      assertThat(node.post("/api/v1/push", push(q, "m-2")).array().getJsonObject(0).getString("status"))
          .isEqualTo("buffered");
      // nothing reaches the log while maintenance is on: no frame for a further 300 ms
      Awaitility.await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2)).until(() -> frames(db, q) == 0);
      var state = node.get("/api/v1/system/maintenance").json();
      assertThat(state.getBoolean("maintenanceMode")).isTrue();
      assertThat(state.getLong("bufferedMessages")).isEqualTo(2);
      // a DLQ move cannot be spooled: refused while push maintenance is on
      var replay = node.post("/api/v1/dlq/" + UUID.randomUUID() + "/replay", "{}");
      assertThat(replay.status()).isEqualTo(503);
      assertThat(replay.json().getString("result")).isEqualTo("maintenance");
      assertThat(replay.json().getBoolean("dlqRowRemoved")).isFalse();
    }
    // the node stops with the spool still full; a new node on the same folder keeps it
    try (var node = TestNode.start(env, db)) {
      // the restarted node keeps the spool while maintenance is still on: no frame for 300 ms
      Awaitility.await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2)).until(() -> frames(db, q) == 0);
      var off = node.post("/api/v1/system/maintenance", new JsonObject().put("enabled", false));
      assertThat(off.json().getString("message"))
          .isEqualTo("Maintenance mode DISABLED. Background processor will drain buffer to DB.");
      Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> frames(db, q) == 2);
      // drained once, never twice: still 2 frames half a second later
      Awaitility.await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(2)).until(() -> frames(db, q) == 2);
      var pop = node.get("/api/v1/pop/queue/" + q + "?batch=10");
      assertThat(pop.status()).isEqualTo(200);
      var msgs = pop.json().getJsonArray("messages");
      assertThat(msgs).hasSize(2);
      assertThat(msgs.getJsonObject(0).getString("transactionId")).isEqualTo("m-1");
      assertThat(msgs.getJsonObject(1).getString("transactionId")).isEqualTo("m-2");
      assertThat(node.get("/api/v1/system/maintenance").json().getLong("bufferedMessages")).isZero();
    }
  }

  @Test
  void aReplayOfAlreadyStoredEventsIsIdempotent() throws Exception {
    var db = TestDatabase.get().fresh();
    var spool = Files.createTempDirectory("queen-spool-it");
    String q = "mnt-dup-" + UUID.randomUUID();
    try (var node = TestNode.start(Map.of("FILE_BUFFER_DIR", spool.toString(), "FILE_BUFFER_FLUSH_MS", "50"), db)) {
      assertThat(node.post("/api/v1/push", push(q, "d-1")).array().getJsonObject(0).getString("status"))
          .isEqualTo("queued");
      node.post("/api/v1/system/maintenance", new JsonObject().put("enabled", true));
      assertThat(node.post("/api/v1/push", push(q, "d-1")).array().getJsonObject(0).getString("status"))
          .isEqualTo("buffered");
      node.post("/api/v1/system/maintenance", new JsonObject().put("enabled", false));
      Awaitility.await().atMost(Duration.ofSeconds(10))
          .until(() -> node.get("/api/v1/system/maintenance").json().getLong("bufferedMessages") == 0);
      assertThat(frames(db, q)).isEqualTo(1);
    }
  }

  @Test
  void popMaintenanceAnswers204WithNoBodyAndTheSwitchValidatesItsBody() {
    var db = TestDatabase.get().fresh();
    String q = "mnt-pop-" + UUID.randomUUID();
    try (var node = TestNode.start(Map.of(), db)) {
      node.post("/api/v1/push", push(q, "p-1"));
      var on = node.post("/api/v1/system/maintenance/pop", new JsonObject().put("enabled", true));
      assertThat(on.json().getBoolean("popMaintenanceMode")).isTrue();
      var pop = node.get("/api/v1/pop/queue/" + q);
      assertThat(pop.status()).isEqualTo(204);
      assertThat(pop.body()).isEmpty();
      assertThat(pop.header("content-length")).isNull();
      assertThat(node.get("/api/v1/system/maintenance/pop").json().getString("message"))
          .isEqualTo("Pop maintenance mode is ON. All POP operations return empty arrays.");
      node.post("/api/v1/system/maintenance/pop", new JsonObject().put("enabled", false));
      assertThat(node.get("/api/v1/pop/queue/" + q).status()).isEqualTo(200);

      var missing = node.post("/api/v1/system/maintenance", new JsonObject());
      assertThat(missing.status()).isEqualTo(400);
      assertThat(missing.json().getString("error")).isEqualTo("enabled (boolean) is required");
      var bad = node.post("/api/v1/system/maintenance", "{nope");
      assertThat(bad.status()).isEqualTo(400);
      assertThat(bad.json().getString("error")).startsWith("bad body: ");
    }
  }
}
