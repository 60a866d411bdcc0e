package io.queenvertx.maintenance;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.boot.Config;
import io.queenvertx.testing.TestNode;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.nio.file.Files;
import java.time.Duration;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/** A push whose database write fails outright spools, answers buffered, and lands once the database is back. */
class DatabaseOutageIT {
  @Test
  void aPushDuringADatabaseOutageIsBufferedAndReplayedWhenTheDatabaseReturns() throws Exception {
    var pgDir = Files.createTempDirectory("queen-outage-pg");
    int port = TestNode.freePort();
    var pg = EmbeddedPostgres.builder().setDataDirectory(pgDir).setCleanDataDirectory(false).setPort(port).start();
    var db = new Config.Database("127.0.0.1", port, "postgres", "postgres", "postgres", false);
    var spool = Files.createTempDirectory("queen-outage-spool");
    try (var node = TestNode.start(Map.of("FILE_BUFFER_DIR", spool.toString(), "FILE_BUFFER_FLUSH_MS", "100"), db)) {
      var ok = node.post("/api/v1/push", body("outage-q", "before"));
      assertThat(ok.array().getJsonObject(0).getString("status")).isEqualTo("queued");

      pg.close();
      var during = node.post("/api/v1/push", body("outage-q", "during"));
      assertThat(during.status()).isEqualTo(201);
      assertThat(during.array().getJsonObject(0).getString("status")).isEqualTo("buffered");
      assertThat(during.array().getJsonObject(0).getString("transaction_id")).isEqualTo("during");

      pg = EmbeddedPostgres.builder().setDataDirectory(pgDir).setCleanDataDirectory(false).setPort(port).start();
      Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(300)).until(() -> {
        var r = node.get("/api/v1/pop/queue/outage-q?batch=10&autoAck=true");
        return r.status() == 200 && r.json().getJsonArray("messages").stream()
            .anyMatch(m -> "during".equals(((JsonObject) m).getString("transactionId")));
      });
    } finally {
      pg.close();
    }
  }

  static JsonObject body(String queue, String txn) {
    return new JsonObject().put("items", new JsonArray().add(new JsonObject().put("queue", queue)
        .put("transactionId", txn).put("payload", new JsonObject().put("t", txn))));
  }
}
