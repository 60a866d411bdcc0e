package io.queenvertx.log;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.TestDatabase;
import io.queenvertx.testing.TestNode;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * A push item the schema would refuse is a 400 naming its field before anything is acknowledged, for the whole
 * request: nothing of it is stored, and under push maintenance nothing of it is spooled as {@code buffered}.
 */
class PushValidationIT {
  static JsonObject item(String queue) {
    return new JsonObject().put("queue", queue).put("payload", new JsonObject().put("k", 1));
  }

  static String body(JsonObject... items) {
    JsonArray a = new JsonArray();
    for (JsonObject i : items) a.add(i);
    return new JsonObject().put("items", a).encode();
  }

  static long queues(io.queenvertx.kernel.Config.Database db, String prefix) {
    return TestDatabase.queryLong(db, "SELECT count(*) FROM queen.queues WHERE name LIKE '" + prefix + "%'");
  }

  static void refused(TestNode node, String body, String field) {
    var r = node.post("/api/v1/push", body);
    assertThat(r.status()).as(body.length() > 300 ? body.substring(0, 300) : body).isEqualTo(400);
    assertThat(r.json().getString("error")).startsWith("bad body: ").contains(field);
  }

  @Test
  void everyFieldIsCheckedAgainstTheSchemaAndOneBadItemRejectsItsWholeRequest() throws Exception {
    var db = TestDatabase.get().fresh();
    var spool = Files.createTempDirectory("queen-validation-spool");
    String p = "val-" + UUID.randomUUID().toString().substring(0, 8) + "-";
    try (var node = TestNode.start(Map.of("FILE_BUFFER_DIR", spool.toString()), db)) {
      String longQueue = p + "q".repeat(256 - p.length());
      String longPartition = "p".repeat(256);
      String longTxn = "t".repeat(65536);
      for (boolean maintenance : new boolean[] {false, true}) {
        if (maintenance) {
          assertThat(node.post("/api/v1/system/maintenance", new JsonObject().put("enabled", true)).status())
              .isEqualTo(200);
        }
        // a good item first, then the bad one: the request is refused as a whole
        refused(node, body(item(p + "good"), item(longQueue)), "queue of item 1 exceeds the 255-character limit");
        refused(node, body(item(p + "good"), item(p + "good").put("partition", longPartition)),
            "partition of item 1 exceeds the 255-character limit");
        refused(node, body(item(p + "good"), item(p + "good").put("transactionId", longTxn)),
            "transactionId of item 1 exceeds the 65535-byte limit");
        refused(node, body(item(p + "good"), new JsonObject().put("queue", 7).put("payload", 1)), "`queue`");
        refused(node, body(item(p + "good"), item(p + "good").put("partition", new JsonObject())), "`partition`");
        refused(node, body(item(p + "good"), item(p + "good").put("transactionId", 12)), "`transactionId`");
        refused(node, body(item(p + "good"), new JsonObject().put("queue", p + "good")), "`payload`");
        refused(node, "{\"items\":[{\"queue\":\"" + p + "good\",\"payload\":1},{\"queue\":\"" + p
            + "bad\\ud800\",\"payload\":1}]}", "queue of item 1 is not valid Unicode");
        refused(node, body(item(p + "good"), item(p + "good").put("partition", "x\u0000")), "partition");
        // the transaction route's push part keeps the same rules
        var tx = node.post("/api/v1/transaction", new JsonObject().put("operations", new JsonArray()
            .add(new JsonObject().put("type", "push").put("items", new JsonArray().add(item(p + "good"))
                .add(item(longQueue))))));
        assertThat(tx.status()).isEqualTo(400);
        assertThat(tx.json().getString("error")).contains("queue of item 1 exceeds the 255-character limit");
      }
      assertThat(node.get("/api/v1/system/maintenance").json().getLong("bufferedMessages")).isZero();
      node.post("/api/v1/system/maintenance", new JsonObject().put("enabled", false));
      assertThat(queues(db, p)).isZero();

      // the limits themselves are accepted and stored
      String queue255 = p + "q".repeat(255 - p.length());
      var ok = node.post("/api/v1/push", body(item(queue255).put("partition", "p".repeat(255))
          .put("transactionId", "t".repeat(65535))));
      assertThat(ok.status()).isEqualTo(201);
      assertThat(ok.array().getJsonObject(0).getString("status")).isEqualTo("queued");
      assertThat(queues(db, p)).isEqualTo(1);
    }
  }
}
