package io.queenvertx.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.BrokerProcess;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node killed with SIGKILL loses nothing it answered for: a separate broker JVM on its own embedded PostgreSQL is
 * killed after a {@code queued} push and an ack, and a new JVM on the same data folder serves both facts.
 */
class CrashRecoveryIT {
  static final Duration BOOT = Duration.ofSeconds(90);

  @TempDir
  Path dataDir;

  @Test
  void whatANodeAnsweredBeforeAKill9SurvivesARestart() throws Exception {
    String q = Wire.queue("crash");
    try {
      recoverAfterKill9(q);
    } finally {
      // a failed step must not leave a PostgreSQL running on a deleted folder
      BrokerProcess.stopPostgresLeftIn(dataDir.resolve("data"));
    }
  }

  private void recoverAfterKill9(String q) throws Exception {
    String messageId;
    try (BrokerProcess first = start("first")) {
      var r = first.post("/api/v1/push", new JsonObject().put("items", new JsonArray()
          .add(Wire.item(q, null, new JsonObject().put("n", 0), "acked-before-crash"))
          .add(Wire.item(q, null, new JsonObject().put("n", 1), "queued-before-crash"))));
      assertThat(r.status()).isEqualTo(201);
      JsonArray res = r.array();
      assertThat(res.getJsonObject(0).getString("status")).isEqualTo("queued");
      assertThat(res.getJsonObject(1).getString("status")).isEqualTo("queued");
      messageId = res.getJsonObject(1).getString("message_id");

      var p = first.get("/api/v1/pop/queue/" + q + "?batch=1");
      assertThat(p.status()).isEqualTo(200);
      JsonObject pop = p.json();
      var a = first.post("/api/v1/ack", Wire.ack("acked-before-crash", pop.getString("partitionId"), "completed",
          pop.getString("leaseId")));
      assertThat(a.array().getJsonObject(0).getBoolean("success")).isTrue();
      first.kill9();
    }

    try (BrokerProcess second = start("second")) {
      var p = second.get("/api/v1/pop/queue/" + q + "?batch=10");
      assertThat(p.status()).as("pop after restart: %s", p.body()).isEqualTo(200);
      var msgs = p.json().getJsonArray("messages");
      assertThat(msgs).hasSize(1);
      JsonObject m = msgs.getJsonObject(0);
      assertThat(m.getString("transactionId")).as("the acked message stays acked").isEqualTo("queued-before-crash");
      assertThat(m.getString("id")).isEqualTo(messageId);
      assertThat(m.getJsonObject("data")).isEqualTo(new JsonObject().put("n", 1));
    }
  }

  /**
   * One broker JVM embedding its own PostgreSQL under {@code dataDir/data}, its log in {@code dataDir/<name>.log}.
   * On SIGKILL the embedded PostgreSQL's watchdog stops the server (the next node stops any survivor).
   */
  private BrokerProcess start(String name) throws Exception {
    var env = Map.of("QUEEN_DATA_DIR", dataDir.resolve("data").toString(),
        "FILE_BUFFER_DIR", dataDir.resolve("spool").toString(), "DB_POOL_SIZE", "8", "QUEEN_HTTP_INSTANCES", "1");
    var broker = BrokerProcess.launch(BrokerProcess.Launch.of(env).log(dataDir.resolve(name + ".log")));
    try {
      broker.awaitHealthy(BOOT);
    } catch (IllegalStateException e) {
      broker.close();
      throw new AssertionError(name + " broker did not come up", e);
    }
    return broker;
  }
}
