package io.queenvertx.consumer;

import io.queenvertx.db.AckFusion;
import static io.queenvertx.testing.Wire.ack;
import static io.queenvertx.testing.Wire.ackOne;
import static io.queenvertx.testing.Wire.item;
import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.TestNode.Reply;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Issue 34 item 7: an ack answer of success:true means the ack took effect. The reproduction: retryLimit 0, x0..x9
 * popped in one batch, one ack/batch with x4 failed and the rest completed. x4 is dead-lettered and must not hold back
 * x5..x9 (they were redelivered, 55,419 duplicates in a 15-minute soak). With retries left, x4 redelivers and so must
 * x5..x9 (a nack is never skipped by a later ack), and their answers must say so instead of success:true. The same
 * through single acks, a transaction, and acks fused into one log_ack_many statement.
 */
class AckBatchVerdictIT {
  @NodeFixture
  static TestNode node;

  @Test
  void aDeadLetteredItemDoesNotHoldBackTheCompletedItemsAfterIt() {
    Batch b = pushAndPop(queue(0), null);
    JsonArray verdicts = ackBatch(b, 4);
    for (int i = 0; i < 10; i++) {
      JsonObject v = verdicts.getJsonObject(i);
      assertThat(v.getBoolean("success")).as("x%d: %s", i, v).isTrue();
      assertThat(v.getBoolean("dlq")).as("x%d: %s", i, v).isEqualTo(i == 4);
    }
    assertDeadLetteredAndNothingRedelivers(b);
  }

  @Test
  void completedAcksBehindANackThatRedeliversAnswerNotCommitted() {
    Batch b = pushAndPop(queue(3), null);
    JsonArray verdicts = ackBatch(b, 4);
    for (int i = 0; i < 10; i++) {
      JsonObject v = verdicts.getJsonObject(i);
      assertThat(v.getBoolean("success")).as("x%d: %s", i, v).isEqualTo(i <= 4);
      if (i > 4) {
        assertThat(v.getString("error")).as("x%d says why", i).startsWith("not committed: x4, earlier in this partition, "
            + "was acked failed and will be delivered again");
      }
    }
    assertThat(Wire.cursor(b.pid(), Wire.QUEUE_MODE).get("committed")).isEqualTo(3L);
    assertThat(popTxns(b.queue())).as("x4 redelivers, and x5..x9 with it").containsExactly("x4", "x5", "x6", "x7",
        "x8", "x9");
  }

  @Test
  void singleAcksAfterADeadLetterOrANackAreAnsweredAsTheyLand() {
    for (int limit : new int[] {0, 3}) {
      Batch b = pushAndPop(queue(limit), null);
      for (int i = 0; i < 4; i++) {
        assertThat(ackOne(node, ack("x" + i, b.pid(), "completed", b.lease())).getBoolean("success")).isTrue();
      }
      JsonObject nack = ackOne(node, ack("x4", b.pid(), "failed", b.lease()));
      assertThat(nack.getBoolean("success")).as("limit %d: %s", limit, nack).isTrue();
      assertThat(nack.getBoolean("dlq")).as("limit %d: %s", limit, nack).isEqualTo(limit == 0);
      JsonObject next = ackOne(node, ack("x5", b.pid(), "completed", b.lease()));
      assertThat(next.getBoolean("success")).as("limit %d, the nack released the batch: %s", limit, next).isFalse();
      assertThat(popTxns(b.queue())).as("limit %d", limit).containsExactlyElementsOf(
          limit == 0 ? List.of("x5", "x6", "x7", "x8", "x9") : List.of("x4", "x5", "x6", "x7", "x8", "x9"));
    }
  }

  @Test
  void aTransactionAcksPastADeadLetterAndRollsBackAnAckThatCannotTakeEffect() {
    Batch dead = pushAndPop(queue(0), null);
    Reply r = transaction(dead, 4);
    assertThat(r.json().getBoolean("success")).as(r.body()).isTrue();
    JsonArray results = r.json().getJsonArray("results");
    for (int i = 0; i < 10; i++) {
      assertThat(results.getJsonObject(i).getBoolean("dlq")).as("x%d: %s", i, r.body()).isEqualTo(i == 4);
    }
    assertDeadLetteredAndNothingRedelivers(dead);

    Batch retried = pushAndPop(queue(3), null);
    Reply rolled = transaction(retried, 4);
    assertThat(rolled.json().getBoolean("success")).as(rolled.body()).isFalse();
    assertThat(rolled.json().getString("reason")).isEqualTo("ack_rejected");
    assertThat(rolled.json().getString("error")).as(rolled.body())
        .contains("ack of x5 cannot take effect: x4, earlier in its partition, is acked failed");
    var cursor = Wire.cursor(retried.pid(), Wire.QUEUE_MODE);
    assertThat(cursor.get("committed")).as("nothing of the bundle was applied").isEqualTo(-1L);
    assertThat(cursor.get("batch_retry_count")).isEqualTo(0);
  }

  @Test
  void fusedAcksPassADeadLetterToo() throws Exception {
    AckFusion fusion = AckFusion.of(node.node().vertx(), node.node().pool());
    long fusedBefore = fusion.fusedCalls();
    int rounds = 0;
    do {
      String q = queue(0);
      List<Batch> batches = new ArrayList<>();
      for (int p = 0; p < 12; p++) batches.add(pushAndPop(q, "p" + p));
      List<CompletableFuture<HttpResponse<String>>> sent = new ArrayList<>();
      for (Batch b : batches) {
        sent.add(TestNode.HTTP.sendAsync(HttpRequest.newBuilder(URI.create(node.baseUrl() + "/api/v1/ack/batch"))
            .timeout(Duration.ofSeconds(30)).header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(batchBody(b, 4).encode())).build(),
            HttpResponse.BodyHandlers.ofString()));
      }
      CompletableFuture.allOf(sent.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
      for (int p = 0; p < batches.size(); p++) {
        JsonArray verdicts = new JsonArray(sent.get(p).get().body());
        for (int i = 0; i < 10; i++) {
          JsonObject v = verdicts.getJsonObject(i);
          assertThat(v.getBoolean("success")).as("p%d x%d: %s", p, i, v).isTrue();
          assertThat(v.getBoolean("dlq")).as("p%d x%d: %s", p, i, v).isEqualTo(i == 4);
        }
        assertThat(Wire.cursor(batches.get(p).pid(), Wire.QUEUE_MODE).get("committed")).isEqualTo(9L);
        assertThat(Wire.dlqCount(batches.get(p).pid())).isEqualTo(1);
      }
      rounds++;
    } while (fusion.fusedCalls() == fusedBefore && rounds < 10);
    assertThat(fusion.fusedCalls()).as("acks fused after %d rounds", rounds).isGreaterThan(fusedBefore);
  }

  // ---- helpers -----------------------------------------------------------------------------------------------------

  private record Batch(String queue, String partition, String pid, String lease) {}

  private static String queue(int retryLimit) {
    String q = Wire.queue("ack-verdict");
    Wire.configure(node, Wire.NONE, q, new JsonObject().put("retryLimit", retryLimit));
    return q;
  }

  /** Pushes x0..x9 (one request, one segment) to {@code partition} (null = Default) and pops them in one batch. */
  private static Batch pushAndPop(String q, String partition) {
    List<JsonObject> items = new ArrayList<>();
    for (int i = 0; i < 10; i++) items.add(item(q, partition, i, "x" + i));
    Wire.pushAll(node, Wire.NONE, items);
    String path = "/api/v1/pop/queue/" + q + (partition == null ? "" : "/partition/" + partition) + "?batch=10";
    Reply r = node.get(path);
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    assertThat(Wire.messages(r.json())).hasSize(10);
    return new Batch(q, partition, r.json().getString("partitionId"), r.json().getString("leaseId"));
  }

  private static JsonObject batchBody(Batch b, int failed) {
    JsonArray acks = new JsonArray();
    for (int i = 0; i < 10; i++) {
      acks.add(ack("x" + i, b.pid(), i == failed ? "failed" : "completed", b.lease()));
    }
    return new JsonObject().put("acknowledgments", acks);
  }

  private static JsonArray ackBatch(Batch b, int failed) {
    Reply r = node.post("/api/v1/ack/batch", batchBody(b, failed));
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    assertThat(r.array()).hasSize(10);
    return r.array();
  }

  private static Reply transaction(Batch b, int failed) {
    JsonArray ops = new JsonArray();
    for (int i = 0; i < 10; i++) {
      ops.add(new JsonObject().put("type", "ack").put("transactionId", "x" + i).put("partitionId", b.pid())
          .put("status", i == failed ? "failed" : "completed"));
    }
    Reply r = node.post("/api/v1/transaction", new JsonObject().put("operations", ops)
        .put("requiredLeases", new JsonArray().add(b.lease())));
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    return r;
  }

  private static List<String> popTxns(String q) {
    Reply r = Wire.pop(node, q, "batch=10");
    if (r.status() == 204) return List.of();
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    return Wire.messages(r.json()).stream().map(m -> m.getString("transactionId")).toList();
  }

  private static void assertDeadLetteredAndNothingRedelivers(Batch b) {
    assertThat(Wire.dlqRows(b.pid())).extracting(row -> row.get("transaction_id")).containsExactly("x4");
    assertThat(Wire.cursor(b.pid(), Wire.QUEUE_MODE).get("committed")).isEqualTo(9L);
    assertThat(popTxns(b.queue())).as("nothing redelivers").isEmpty();
  }
}
