package io.queenvertx.auth;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * {@code GET /api/v1/status/buffers} and {@code POST /api/v1/stats/refresh} (API.md §5.12) over real HTTP, with JWT
 * on so the access levels of §2.4 are checked: buffers is ReadOnly, refresh is Admin. Its own database, because the
 * buffers test switches push maintenance, which every node on a database shares.
 */
class StatsRoutesIT {
  static final String SECRET = "stats-secret-of-enough-length-0123456789";

  @NodeFixture(freshDatabase = true, env = {"JWT_ENABLED=true", "JWT_SECRET=" + SECRET, "FILE_BUFFER_FLUSH_MS=50"})
  static TestNode node;

  static Map<String, String> as(String role) {
    long now = System.currentTimeMillis() / 1000;
    String token = Tokens.hs("HS256", SECRET, new JsonObject().put("sub", "stats-" + role).put("role", role)
        .put("iat", now).put("exp", now + 600));
    return Map.of("Authorization", "Bearer " + token);
  }

  @Test
  void buffersShowTheSpoolFillingUnderMaintenanceAndDraining() {
    var ro = as("read-only");
    JsonObject idle = node.get("/api/v1/status/buffers", ro).json();
    JsonObject self = idle.getJsonArray("nodes").getJsonObject(0);
    assertThat(self.getString("nodeId")).isEqualTo(node.node().config().serverId());
    assertThat(self.getLong("pendingEvents")).isZero();
    assertThat(self.getInteger("files")).isZero();
    assertThat(self.getLong("failedEvents")).isZero();
    assertThat(self.getBoolean("healthy")).isTrue();
    assertThat(self.getBoolean("maintenanceMode")).isFalse();
    assertThat(idle.getBoolean("healthy")).isTrue();

    var admin = as("admin");
    assertThat(node.post("/api/v1/system/maintenance", new JsonObject().put("enabled", true), admin).status())
        .isEqualTo(200);
    String q = "buf-" + UUID.randomUUID();
    for (String txn : new String[] {"b-1", "b-2"}) {
      var r = node.post("/api/v1/push", new JsonObject().put("items", new JsonArray().add(new JsonObject()
          .put("queue", q).put("payload", 1).put("transactionId", txn))), admin);
      assertThat(r.array().getJsonObject(0).getString("status")).as(r.body()).isEqualTo("buffered");
    }
    JsonObject full = node.get("/api/v1/status/buffers", ro).json();
    JsonObject fs = full.getJsonArray("nodes").getJsonObject(0);
    assertThat(fs.getLong("pendingEvents")).isEqualTo(2);
    assertThat(fs.getInteger("files")).as("the active spool file").isEqualTo(1);
    assertThat(fs.getBoolean("maintenanceMode")).isTrue();
    assertThat(full.getJsonObject("totals").getLong("pendingEvents")).isEqualTo(2);

    node.post("/api/v1/system/maintenance", new JsonObject().put("enabled", false), admin);
    Awaitility.await().atMost(Duration.ofSeconds(15)).until(() -> {
      JsonObject n = node.get("/api/v1/status/buffers", ro).json().getJsonArray("nodes").getJsonObject(0);
      return n.getLong("pendingEvents") == 0 && n.getInteger("files") == 0 && !n.getBoolean("maintenanceMode");
    });
  }

  @Test
  void refreshIsAdminOnlyAndAnswersWhetherTheFlusherRan() {
    var body = new JsonObject();
    assertThat(node.post("/api/v1/stats/refresh", body).status()).as("no token").isEqualTo(401);
    for (String role : new String[] {"read-only", "read-write", "write-only"}) {
      var r = node.post("/api/v1/stats/refresh", body, as(role));
      assertThat(r.status()).as(role).isEqualTo(403);
      assertThat(r.json()).isEqualTo(io.queenvertx.testing.Wire.error(403, "Insufficient permissions"));
    }
    // something to count: one pushed message, which the flusher must write when asked
    assertThat(node.post("/api/v1/push", new JsonObject().put("items", new JsonArray()
        .add(new JsonObject().put("queue", "refresh-q").put("payload", new JsonObject().put("n", 1)))),
        as("admin")).status()).isEqualTo(201);
    var r = node.post("/api/v1/stats/refresh", body, as("admin"));
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    JsonObject j = r.json();
    assertThat(j.getBoolean("success")).isTrue();
    assertThat(j.getBoolean("flushed")).as("the node's flusher answered: " + j).isTrue();
    assertThat(j.getLong("flushedNodeRows")).as("the push's minute was written").isPositive();
    assertThat(j.getLong("flushedQueueRows")).as("refresh-q's minute was written").isPositive();
    assertThat(node.get("/api/v1/status/buffers", as("write-only")).status()).as("buffers is ReadOnly")
        .isEqualTo(403);
    assertThat(node.get("/api/v1/analytics/postgres-stats", as("read-only")).status()).isEqualTo(200);
  }
}
