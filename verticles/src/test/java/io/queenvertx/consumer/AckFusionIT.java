package io.queenvertx.consumer;

import io.queenvertx.db.AckFusion;
import static io.queenvertx.testing.Wire.ack;
import static io.queenvertx.testing.Wire.item;
import static io.queenvertx.testing.Wire.push;
import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
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
 * Ack fusion ({@link AckFusion}): many ack requests in flight at once, on many partitions, each with its own expected
 * verdict (completed, wrong lease, failed with retries left, unresolvable transaction, dead-lettered, consumer not
 * found). Their {@code log_ack} calls go to PostgreSQL fused into shared statements; every request must still get
 * exactly its own verdicts, and the cursors and dead letters must be exactly what separate acks would leave.
 */
class AckFusionIT {
  @NodeFixture
  static TestNode node;

  private static final int PARTITIONS = 24;

  @Test
  void concurrentAcksFusedIntoSharedStatementsEachGetTheirOwnVerdict() throws Exception {
    AckFusion fusion = AckFusion.of(node.node().vertx(), node.node().pool());
    long fusedBefore = fusion.fusedCalls();
    int rounds = 0;
    // Each round is a fresh queue; rounds repeat (at most 10) until at least one statement carried several calls,
    // so the verdicts below were checked on a fused path.
    do {
      runRound(Wire.queue("ack-fusion"));
      rounds++;
    } while (fusion.fusedCalls() == fusedBefore && rounds < 10);
    assertThat(fusion.fusedCalls()).as("acks fused into shared statements after %d rounds", rounds)
        .isGreaterThan(fusedBefore);
  }

  private static void runRound(String q) throws Exception {
    List<JsonObject> items = new ArrayList<>();
    for (int i = 0; i < PARTITIONS; i++) {
      items.add(item(q, "p" + i, i, q + "-" + i + "-a"));
      items.add(item(q, "p" + i, i, q + "-" + i + "-b"));
    }
    assertThat(push(node, items.toArray(JsonObject[]::new)).status()).isEqualTo(201);
    String[] pid = new String[PARTITIONS];
    String[] lease = new String[PARTITIONS];
    for (int i = 0; i < PARTITIONS; i++) {
      var r = node.get("/api/v1/pop/queue/" + q + "/partition/p" + i + "?batch=2");
      assertThat(r.status()).as("pop p%d: %s", i, r.body()).isEqualTo(200);
      pid[i] = r.json().getString("partitionId");
      lease[i] = r.json().getString("leaseId");
      assertThat(Wire.messages(r.json())).hasSize(2);
    }
    List<CompletableFuture<HttpResponse<String>>> sent = new ArrayList<>();
    for (int i = 0; i < PARTITIONS; i++) {
      String a = q + "-" + i + "-a";
      String b = q + "-" + i + "-b";
      JsonObject body = switch (i % 6) {
        case 0 -> new JsonObject().put("acknowledgments", new JsonArray()
            .add(ack(a, pid[i], "completed", lease[i])).add(ack(b, pid[i], "completed", lease[i])));
        case 1 -> ack(a, pid[i], "completed", "not-the-lease-" + i);
        case 2 -> ack(a, pid[i], "failed", lease[i]).put("error", "boom " + i);
        case 3 -> ack(q + "-" + i + "-never-pushed", pid[i], "completed", lease[i]);
        case 4 -> ack(a, pid[i], "dlq", lease[i]).put("error", "poison " + i);
        default -> ack(a, pid[i], "completed", null).put("consumerGroup", "never-popped-" + i);
      };
      String path = i % 6 == 0 ? "/api/v1/ack/batch" : "/api/v1/ack";
      sent.add(TestNode.HTTP.sendAsync(HttpRequest.newBuilder(URI.create(node.baseUrl() + path))
          .timeout(Duration.ofSeconds(30)).header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString(body.encode())).build(), HttpResponse.BodyHandlers.ofString()));
    }
    CompletableFuture.allOf(sent.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
    for (int i = 0; i < PARTITIONS; i++) {
      HttpResponse<String> r = sent.get(i).get();
      assertThat(r.statusCode()).as("ack p%d: %s", i, r.body()).isEqualTo(200);
      JsonArray verdicts = new JsonArray(r.body());
      String a = q + "-" + i + "-a";
      JsonObject v = verdicts.getJsonObject(0);
      String what = "p" + i + " kind " + (i % 6) + ": " + r.body();
      switch (i % 6) {
        case 0 -> {
          assertThat(verdicts).as(what).hasSize(2);
          assertThat(v.getString("transactionId")).as(what).isEqualTo(a);
          assertThat(verdicts.getJsonObject(1).getString("transactionId")).as(what).isEqualTo(q + "-" + i + "-b");
          assertThat(v.getBoolean("success") && verdicts.getJsonObject(1).getBoolean("success")).as(what).isTrue();
          assertThat(verdicts.getJsonObject(1).getBoolean("leaseReleased")).as(what).isTrue();
          assertThat(Wire.cursor(pid[i], Wire.QUEUE_MODE).get("committed")).as(what).isEqualTo(1L);
          assertThat(Wire.cursor(pid[i], Wire.QUEUE_MODE).get("worker_id")).as(what).isNull();
        }
        case 1 -> {
          assertThat(v.getString("transactionId")).as(what).isEqualTo(a);
          assertThat(v.getBoolean("success")).as(what).isFalse();
          assertThat(v.getString("error")).as(what).isEqualTo("invalid or expired lease");
          assertThat(Wire.cursor(pid[i], Wire.QUEUE_MODE).get("worker_id")).as(what).isEqualTo(lease[i]);
        }
        case 2 -> {
          assertThat(v.getString("transactionId")).as(what).isEqualTo(a);
          assertThat(v.getBoolean("success")).as(what).isTrue();
          assertThat(v.getBoolean("leaseReleased")).as(what).isTrue();
          assertThat(v.getBoolean("dlq")).as(what).isFalse();
          var cursor = Wire.cursor(pid[i], Wire.QUEUE_MODE);
          assertThat(cursor.get("worker_id")).as(what).isNull();
          assertThat(cursor.get("batch_retry_count")).as(what).isEqualTo(1);
        }
        case 3 -> {
          assertThat(v.getString("transactionId")).as(what).isEqualTo(q + "-" + i + "-never-pushed");
          assertThat(v.getBoolean("success")).as(what).isFalse();
          assertThat(v.getString("error")).as(what).isEqualTo(Acks.UNRESOLVABLE);
          assertThat(Wire.cursor(pid[i], Wire.QUEUE_MODE).get("worker_id")).as(what).isEqualTo(lease[i]);
        }
        case 4 -> {
          assertThat(v.getString("transactionId")).as(what).isEqualTo(a);
          assertThat(v.getBoolean("success")).as(what).isTrue();
          assertThat(v.getBoolean("dlq")).as(what).isTrue();
          var dlq = Wire.dlqRows(pid[i]);
          assertThat(dlq).as(what).hasSize(1);
          assertThat(dlq.get(0).get("transaction_id")).as(what).isEqualTo(a);
          assertThat(dlq.get(0).get("error")).as(what).isEqualTo("poison " + i);
        }
        default -> {
          assertThat(v.getString("transactionId")).as(what).isEqualTo(a);
          assertThat(v.getBoolean("success")).as(what).isFalse();
          assertThat(v.getString("error")).as(what).isEqualTo("consumer not found");
        }
      }
    }
  }
}
