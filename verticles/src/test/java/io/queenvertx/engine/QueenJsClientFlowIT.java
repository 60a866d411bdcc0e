package io.queenvertx.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The exact request sequence of Queen's JS client consumer loop (API.md §8): `queue.push()` always sends a
 * transactionId (and a traceId), `consume()` long-polls with batch=1&wait=true, acks through /ack/batch with
 * `consumerGroup:null` and `error:null`, renews with `{}`, treats 204 as "no message" and reads only
 * transactionId, partitionId, leaseId and data.
 */
class QueenJsClientFlowIT {
  @NodeFixture
  static TestNode node;

  @Test
  void theJsClientsPushConsumeAckLoopWorksUnchanged() {
    String q = "js-flow-" + UUID.randomUUID();
    // queen.queue(q).create(): the 9-key QUEUE_DEFAULTS merged with the user's options; a body with "error" fails
    var created = node.post("/api/v1/configure", new JsonObject().put("queue", q).putNull("namespace").putNull("task")
        .put("options", new JsonObject().put("leaseTime", 300).put("retryLimit", 3).put("priority", 0)
            .put("delayedProcessing", 0).put("windowBuffer", 0).put("maxSize", 0).put("retentionSeconds", 0)
            .put("completedRetentionSeconds", 0).put("encryptionEnabled", false)));
    assertThat(created.status()).isEqualTo(200);
    assertThat(created.json().containsKey("error")).isFalse();

    // queen.queue(q).push([...]): partition 'Default', a uuidv7 transactionId per item, traceId when valid
    JsonArray items = new JsonArray();
    List<String> txns = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      String txn = UUID.randomUUID().toString();
      txns.add(txn);
      items.add(new JsonObject().put("queue", q).put("partition", "Default").put("payload", new JsonObject().put("n", i))
          .put("transactionId", txn).put("traceId", UUID.randomUUID().toString()));
    }
    var pushed = node.post("/api/v1/push", new JsonObject().put("items", items), Map.of("Content-Type",
        "application/json"));
    assertThat(pushed.status()).isEqualTo(201);
    for (Object o : pushed.array()) assertThat(((JsonObject) o).getString("status")).isEqualTo("queued");

    // consume(): each worker loops pop batch=1 wait=true timeout=30000 (shortened), never autoAck
    List<Integer> seen = new ArrayList<>();
    while (true) {
      var r = node.get("/api/v1/pop/queue/" + q + "?batch=1&wait=true&timeout=1000");
      if (r.status() == 204) {
        assertThat(r.body()).isEmpty(); // the client turns a 204 into null, so there must be nothing to parse
        break;
      }
      assertThat(r.status()).isEqualTo(200);
      var msg = r.json().getJsonArray("messages").getJsonObject(0);
      assertThat(msg.getString("traceId")).isNull(); // plain push never stores a traceId
      seen.add(msg.getJsonObject("data").getInteger("n"));
      // renewLease(): POST /lease/<leaseId>/extend with {}
      var renewed = node.post("/api/v1/lease/" + msg.getString("leaseId") + "/extend", "{}").json();
      assertThat(renewed.getString("leaseId") != null ? renewed.getString("newExpiresAt")
          : renewed.getString("lease_expires_at")).isNotNull();
      // auto-ack in batch mode
      var ack = node.post("/api/v1/ack/batch", new JsonObject()
          .put("acknowledgments", new JsonArray().add(new JsonObject().put("transactionId", msg.getString("transactionId"))
              .put("partitionId", msg.getString("partitionId")).put("status", "completed").putNull("error")
              .put("leaseId", msg.getString("leaseId"))))
          .putNull("consumerGroup"));
      assertThat(ack.status()).isEqualTo(200);
      assertThat(ack.array().getJsonObject(0).getValue("error")).isNull();
    }
    assertThat(seen).containsExactly(0, 1, 2, 3, 4);

    // delete-before-create idiom: DELETE answers 200 with a JSON body the client reads `deleted` from
    var del = node.delete("/api/v1/resources/queues/" + q);
    assertThat(del.status()).isEqualTo(200);
    assertThat(del.json().getBoolean("deleted")).isTrue();
    assertThat(node.delete("/api/v1/resources/queues/" + q).json().getBoolean("deleted")).isFalse();
  }

  @Test
  void aFailedHandlerAcksFailedThroughTheSameCallAndTheMessageRedelivers() {
    String q = "js-fail-" + UUID.randomUUID();
    String txn = UUID.randomUUID().toString();
    node.post("/api/v1/push", new JsonObject().put("items", new JsonArray().add(new JsonObject().put("queue", q)
        .put("partition", "Default").put("payload", "x").put("transactionId", txn))));
    var first = node.get("/api/v1/pop/queue/" + q + "?batch=1&wait=true&timeout=1000").json();
    var m = first.getJsonArray("messages").getJsonObject(0);
    var ack = node.post("/api/v1/ack", new JsonObject().put("transactionId", txn).put("partitionId",
        m.getString("partitionId")).put("status", "failed").put("error", "handler threw").put("leaseId",
        m.getString("leaseId")).putNull("consumerGroup")).array().getJsonObject(0);
    assertThat(ack.getBoolean("success")).isTrue();
    var again = node.get("/api/v1/pop/queue/" + q + "?batch=1&wait=true&timeout=1000").json();
    assertThat(again.getJsonArray("messages").getJsonObject(0).getString("transactionId")).isEqualTo(txn);
    assertThat(again.getJsonArray("messages").getJsonObject(0).getInteger("deliveryAttempt")).isEqualTo(2);
  }
}
