package io.queenvertx.consumer;

import io.queenvertx.db.PopFusion;
import static io.queenvertx.testing.Wire.ack;
import static io.queenvertx.testing.Wire.item;
import static io.queenvertx.testing.Wire.push;
import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestDatabase;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Pop fusion ({@link PopFusion}, {@code queen.log_pop_many}): concurrent pops of one kind share a statement, and each
 * must still get exactly what a pop of its own would: its own slices, under its own lease, never another pop's.
 */
class PopFusionIT {
  @NodeFixture
  static TestNode node;

  private static final int PARTITIONS = 32;

  @Test
  void oneCallServesItsPopsInOrderEachUnderItsOwnLease() {
    String q = Wire.queue("pop-many");
    assertThat(push(node, item(q, "a", 1, q + "-a1"), item(q, "a", 2, q + "-a2"),
        item(q, "b", 1, q + "-b1"), item(q, "b", 2, q + "-b2")).status()).isEqualTo(201);
    String a = Wire.partitionId(q, "a");
    String b = Wire.partitionId(q, "b");
    // three pops of one message each, one partition each: two partitions, so the third gets nothing
    String served = TestDatabase.queryString(Wire.db(), "SELECT string_agg(m.pop_idx || '=' || m.partition_id || '@'"
        + " || (m.base_offset + m.start_idx) || '+' || m.take, ',' ORDER BY m.pop_idx) FROM queen.log_pop_many(NULL, '"
        + q + "', NULL, NULL, 1, 1, 0, ARRAY['w1', 'w2', 'w3'], false, 'all', NULL) m");
    Map<String, String> byPop = new HashMap<>();
    for (String s : served.split(",")) byPop.put(s.substring(0, s.indexOf('=')), s.substring(s.indexOf('=') + 1));
    assertThat(byPop.keySet()).as(served).containsExactlyInAnyOrder("1", "2");
    Set<String> parts = new HashSet<>();
    for (var e : byPop.entrySet()) {
      String pid = e.getValue().substring(0, e.getValue().indexOf('@'));
      assertThat(e.getValue()).as(served).endsWith("@0+1");
      assertThat(parts.add(pid)).as("partitions handed out once: %s", served).isTrue();
      // each partition is leased to the worker of the pop it was handed to
      assertThat(Wire.cursor(pid, Wire.QUEUE_MODE).get("worker_id")).as(served).isEqualTo("w" + e.getKey());
    }
    assertThat(parts).containsExactlyInAnyOrder(a, b);
    // both leased now: another call gets nothing, and leaves the leases alone
    assertThat(TestDatabase.queryLong(Wire.db(), "SELECT count(*) FROM queen.log_pop_many(NULL, '" + q
        + "', NULL, NULL, 1, 1, 0, ARRAY['w4', 'w5'], false, 'all', NULL)")).isZero();
    assertThat(Wire.cursor(a, Wire.QUEUE_MODE).get("worker_id")).isIn("w1", "w2");
    // with a budget of 2 and two partitions a pop, the first pop takes both (after the leases are gone)
    TestDatabase.execute(Wire.db(), "UPDATE queen.log_consumers SET worker_id = NULL, lease_expires_at = NULL "
        + "WHERE partition_id IN ('" + a + "', '" + b + "')");
    String wide = TestDatabase.queryString(Wire.db(), "SELECT string_agg(m.pop_idx || '+' || m.take, ',' ORDER BY "
        + "m.pop_idx) FROM queen.log_pop_many(NULL, '" + q + "', NULL, NULL, 4, 2, 0, ARRAY['w6', 'w7'], false, "
        + "'all', NULL) m");
    assertThat(wide).as("pop 1 takes both partitions' messages, pop 2 finds nothing left").isEqualTo("1+2,1+2");
  }

  @Test
  void concurrentPopsFusedIntoSharedStatementsEachGetTheirOwnMessageAndLease() throws Exception {
    PopFusion fusion = PopFusion.of(node.node().vertx(), node.node().pool(), node.node().config().pop().maxBytes());
    long fusedBefore = fusion.fusedPops();
    int rounds = 0;
    // Each round is a fresh queue; rounds repeat (at most 10) until at least one statement carried several pops, so
    // the checks below ran on a fused path.
    do {
      runRound(Wire.queue("pop-fusion"));
      rounds++;
    } while (fusion.fusedPops() == fusedBefore && rounds < 10);
    assertThat(fusion.fusedPops()).as("pops fused into shared statements after %d rounds", rounds)
        .isGreaterThan(fusedBefore);
  }

  private static void runRound(String q) throws Exception {
    List<JsonObject> items = new ArrayList<>();
    for (int i = 0; i < PARTITIONS; i++) items.add(item(q, "p" + i, i, q + "-" + i));
    items.add(item(q, "warm", -1, q + "-warm"));
    assertThat(push(node, items.toArray(JsonObject[]::new)).status()).isEqualTo(201);
    // the first pop registers the queue-mode cursors of every partition; the concurrent ones below find them seeded
    var warm = node.get("/api/v1/pop/queue/" + q + "/partition/warm?batch=1&wait=false&autoAck=true");
    assertThat(warm.status()).as(warm.body()).isEqualTo(200);

    List<CompletableFuture<HttpResponse<String>>> pops = new ArrayList<>();
    for (int i = 0; i < PARTITIONS; i++) {
      pops.add(TestNode.HTTP.sendAsync(HttpRequest.newBuilder(
              URI.create(node.baseUrl() + "/api/v1/pop/queue/" + q + "?batch=1&wait=false"))
          .timeout(Duration.ofSeconds(30)).GET().build(), HttpResponse.BodyHandlers.ofString()));
    }
    CompletableFuture.allOf(pops.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
    // one partition each (a pop leases the partition it takes), so every pop gets exactly one message
    Set<String> txns = new HashSet<>();
    Set<String> leases = new HashSet<>();
    List<JsonObject> acks = new ArrayList<>();
    for (var f : pops) {
      HttpResponse<String> r = f.get();
      assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
      JsonObject body = new JsonObject(r.body());
      List<JsonObject> msgs = Wire.messages(body);
      assertThat(msgs).as(r.body()).hasSize(1);
      String txn = msgs.get(0).getString("transactionId");
      assertThat(txns.add(txn)).as("delivered once: %s", txn).isTrue();
      assertThat(leases.add(body.getString("leaseId"))).as("a lease per pop").isTrue();
      acks.add(ack(txn, body.getString("partitionId"), "completed", body.getString("leaseId")));
    }
    assertThat(txns).hasSize(PARTITIONS);
    // each pop's lease is the one its partition is held under: acking with it succeeds
    var r = node.post("/api/v1/ack/batch", new JsonObject().put("acknowledgments", new JsonArray(acks)));
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    JsonArray verdicts = new JsonArray(r.body());
    assertThat(verdicts).hasSize(PARTITIONS);
    for (int i = 0; i < PARTITIONS; i++) {
      assertThat(verdicts.getJsonObject(i).getBoolean("success")).as(verdicts.getJsonObject(i).encode()).isTrue();
    }
  }
}
