package io.queenvertx.timers;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.kernel.Config;
import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestDatabase;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * Timers over HTTP (docs/design/queen2-contract.md §3): the routes' answers, and the fire: a timer's message reaches
 * its queue once, as a normal message a pop delivers, across two nodes sharing the database, after a cancel never,
 * after a re-arm only the new one, and after an outage of every node at once, late timers in due order.
 */
class TimerIT {
  @NodeFixture(env = {"QUEEN_TIMER_POLL_MS=200"})
  static TestNode node;

  static String b64(Object json) {
    return Base64.getEncoder().encodeToString(io.vertx.core.json.Json.encode(json).getBytes(StandardCharsets.UTF_8));
  }

  static JsonObject schedule(String queue, String key, long delayMs, Object payload) {
    return new JsonObject().put("op", "schedule").put("queue", queue).put("timerKey", key).put("delayMs", delayMs)
        .put("txn", "txn-" + queue + "-" + key).put("payload", b64(payload));
  }

  static JsonArray arm(TestNode n, JsonObject... ops) {
    var r = n.post("/api/v1/timers", new JsonObject().put("operations", new JsonArray(List.of((Object[]) ops))));
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    return r.json().getJsonArray("results");
  }

  /** Pops (auto-ack) everything the queue delivers now: the messages in delivery order. */
  static List<JsonObject> drain(TestNode n, String queue) {
    List<JsonObject> out = new ArrayList<>();
    while (true) {
      var r = Wire.pop(n, queue, "batch=1000&autoAck=true");
      if (r.status() == 204) return out;
      assertThat(r.status()).as(r.body()).isEqualTo(200);
      out.addAll(Wire.messages(r.json()));
    }
  }

  @Test
  void scheduleAnswersThenFiresOnceAsANormalMessage() {
    String q = Wire.queue("tm-fire");
    JsonArray res = arm(node, schedule(q, "k1", 300, new JsonObject().put("n", 1)));
    JsonObject r0 = res.getJsonObject(0);
    assertThat(r0.getBoolean("ok")).isTrue();
    assertThat(r0.getString("status")).isEqualTo("scheduled");
    assertThat(r0.getString("txn")).isEqualTo("txn-" + q + "-k1");
    assertThat(r0.getString("messageId")).matches(Wire.UUID_TEXT);
    assertThat(r0.getString("deliverAt")).matches("\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{6}Z");
    var peek = node.get("/api/v1/timers/" + q + "/k1").json();
    assertThat(peek.getBoolean("found")).isTrue();
    assertThat(new String(Base64.getDecoder().decode(peek.getString("payload")), StandardCharsets.UTF_8))
        .isEqualTo("{\"n\":1}");
    List<JsonObject> got = new ArrayList<>();
    Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> {
      got.addAll(drain(node, q));
      return !got.isEmpty();
    });
    assertThat(got).hasSize(1);
    assertThat(got.get(0).getString("transactionId")).isEqualTo("txn-" + q + "-k1");
    assertThat(got.get(0).getString("id")).isEqualTo(r0.getString("messageId"));
    assertThat(got.get(0).getJsonObject("data").getInteger("n")).isEqualTo(1);
    assertThat(node.get("/api/v1/timers/" + q + "/k1").json().getBoolean("found")).isFalse();
    // a cancel after the fire finds nothing: absent, echoing the caller's txn
    var late = node.delete("/api/v1/timers/" + q + "/k1?txn=mine");
    assertThat(late.status()).isEqualTo(200);
    assertThat(late.json().getString("status")).isEqualTo("absent");
    assertThat(late.json().getBoolean("ok")).isFalse();
    assertThat(late.json().getString("txn")).isEqualTo("mine");
  }

  @Test
  void aKeyWithSlashesIsReadAndCancelledByItsPathEitherSpelled() {
    String q = Wire.queue("tm-slash");
    arm(node, schedule(q, "daily/report/eu", 3_600_000, "x"), schedule(q, "a+b c", 3_600_000, "y"),
        schedule(q, "weekly/x", 3_600_000, "z"));
    var peek = node.get("/api/v1/timers/" + q + "/daily/report/eu");
    assertThat(peek.status()).as(peek.body()).isEqualTo(200);
    assertThat(peek.json().getBoolean("found")).isTrue();
    assertThat(peek.json().getString("timerKey")).isEqualTo("daily/report/eu");
    assertThat(node.get("/api/v1/timers/" + q + "/daily%2Freport%2Feu").json().getBoolean("found"))
        .as("%2F names the same key").isTrue();
    assertThat(node.get("/api/v1/timers/" + q + "/daily").json().getBoolean("found")).as("no prefix match").isFalse();
    assertThat(node.get("/api/v1/timers/" + q + "/a+b%20c").json().getString("timerKey")).as("'+' is a plus")
        .isEqualTo("a+b c");
    var gone = node.delete("/api/v1/timers/" + q + "/daily/report/eu");
    assertThat(gone.status()).as(gone.body()).isEqualTo(200);
    assertThat(gone.json().getString("status")).isEqualTo("cancelled");
    assertThat(gone.json().getString("timerKey")).isEqualTo("daily/report/eu");
    assertThat(node.delete("/api/v1/timers/" + q + "/weekly%2Fx").json().getString("status")).isEqualTo("cancelled");
    assertThat(node.get("/api/v1/timers/" + q).json().getJsonArray("rows"))
        .extracting(o -> ((JsonObject) o).getString("timerKey")).containsExactly("a+b c");
    // the path guard still refuses what the router would normalise, before any access check or route runs
    assertThat(node.delete("/api/v1/timers/" + q + "/a/../a+b%20c").status()).isEqualTo(400);
    assertThat(node.get("/api/v1/timers/" + q + "/a+b%20c").json().getBoolean("found")).isTrue();
  }

  @Test
  void aCancelledTimerNeverFires() {
    String q = Wire.queue("tm-cancel");
    arm(node, schedule(q, "gone", 800, "x"), schedule(q, "kept", 800, "y"));
    var c = node.delete("/api/v1/timers/" + q + "/gone");
    assertThat(c.status()).isEqualTo(200);
    assertThat(c.json().getString("status")).isEqualTo("cancelled");
    assertThat(c.json().getString("txn")).isEqualTo("txn-" + q + "-gone");
    List<JsonObject> got = new ArrayList<>();
    // both were due at the same instant: once "kept" fired, "gone" would have too
    Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> {
      got.addAll(drain(node, q));
      return !got.isEmpty();
    });
    assertThat(got).extracting(m -> m.getString("transactionId")).containsExactly("txn-" + q + "-kept");
    assertThat(node.get("/api/v1/timers/" + q).json().getJsonArray("rows")).isEmpty();
  }

  @Test
  void reArmingAKeyReplacesItsTimer() {
    String q = Wire.queue("tm-rearm");
    arm(node, schedule(q, "k", 3_600_000, "old"));
    JsonObject again = schedule(q, "k", 100, "new").put("txn", "txn-new");
    JsonObject r = arm(node, again).getJsonObject(0);
    assertThat(r.getString("status")).isEqualTo("rescheduled");
    var list = node.get("/api/v1/timers/" + q).json().getJsonArray("rows");
    assertThat(list.size()).isLessThanOrEqualTo(1);
    List<JsonObject> got = new ArrayList<>();
    Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> {
      got.addAll(drain(node, q));
      return !got.isEmpty();
    });
    assertThat(got).hasSize(1);
    assertThat(got.get(0).getString("transactionId")).isEqualTo("txn-new");
    assertThat(got.get(0).getString("data")).isEqualTo("new");
    assertThat(node.get("/api/v1/timers/" + q).json().getJsonArray("rows")).as("the old timer is gone").isEmpty();
  }

  @Test
  void manyTimersFireExactlyOnceAcrossTwoNodes() throws Exception {
    String q = Wire.queue("tm-two");
    // many timers due together: both nodes' sweeps wake at about the same instant and claim batch after batch
    int n = 1200;
    try (TestNode other = TestNode.start(Map.of("QUEEN_TIMER_POLL_MS", "50"))) {
      // no dedup window: the claim (SKIP LOCKED) and the delete in the push's transaction alone keep it to one copy
      Wire.configure(node, new JsonObject().put("queue", q).put("options", new JsonObject().put("dedupWindowSeconds", 0)));
      List<CompletableFuture<Void>> arms = new ArrayList<>();
      for (int c = 0; c < 8; c++) {
        // 8 calls of n/8 schedules, half through each node
        int chunk = c;
        TestNode via = c % 2 == 0 ? node : other;
        arms.add(CompletableFuture.runAsync(() -> {
          JsonObject[] ops = new JsonObject[n / 8];
          for (int i = 0; i < ops.length; i++) {
            int k = chunk * ops.length + i;
            ops[i] = schedule(q, "k" + k, 1500 + (k % 7) * 5, new JsonObject().put("k", k)).put("partition",
                "p" + (k % 3));
          }
          arm(via, ops);
        }));
      }
      CompletableFuture.allOf(arms.toArray(CompletableFuture[]::new)).get();
      Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> TestDatabase.queryLong(Wire.db(),
          "SELECT count(*) FROM queen.timers WHERE queue = '" + q + "'") == 0);
      List<JsonObject> got = drain(node, q);
      Map<String, Integer> perTxn = new HashMap<>();
      for (JsonObject m : got) perTxn.merge(m.getString("transactionId"), 1, Integer::sum);
      assertThat(got).as("one delivered message per timer").hasSize(n);
      assertThat(perTxn).hasSize(n);
      assertThat(perTxn.values()).containsOnly(1);
      long frames = 0;
      for (int p = 0; p < 3; p++) frames += Wire.frames(Wire.partitionId(q, "p" + p));
      assertThat(frames).as("frames stored").isEqualTo(n);
    }
  }

  @Test
  void badInputIsRefusedNamingTheField() {
    String q = Wire.queue("tm-bad");
    assertRefused(node.post("/api/v1/timers", new JsonObject()), 400, "timers_bad_request", "operations");
    assertRefused(node.post("/api/v1/timers", new JsonArray().add(schedule(q, "k", 10, 1).put("op", "later"))),
        400, "timers_unknown_op", "op");
    assertRefused(node.post("/api/v1/timers", new JsonArray().add(schedule(q, "", 10, 1))), 400,
        "timers_key_required", "timerKey");
    assertRefused(node.post("/api/v1/timers", new JsonArray().add(schedule(q, "k", 10, 1).put("queue", ""))), 400,
        "timers_queue_required", "queue");
    assertRefused(node.post("/api/v1/timers", new JsonArray().add(schedule(q, "k", 10, 1).putNull("delayMs"))), 400,
        "timers_delay_required", "delayMs");
    assertRefused(node.post("/api/v1/timers", new JsonArray().add(schedule(q, "k", 10, 1).putNull("txn"))),
        400, "timers_txn_required", "txn");
    assertRefused(node.post("/api/v1/timers", new JsonArray().add(schedule(q, "k", 10, 1).put("payload", "%%%"))),
        400, "timers_payload_not_base64", "payload");
    assertRefused(node.post("/api/v1/timers", new JsonArray().add(schedule(q, "k", 10, 1)
        .put("payload", Base64.getEncoder().encodeToString("not json".getBytes(StandardCharsets.UTF_8))))), 400,
        "timers_payload_not_json", "payload");
    assertRefused(node.post("/api/v1/timers", new JsonArray().add(schedule(q, "k", 10, 1).put("producerSub", "me"))),
        400, "timers_server_owned_field", "producerSub");
    assertRefused(node.post("/api/v1/timers", new JsonArray().add(schedule(q, "k", 7_776_000_001L, 1))), 403,
        "timers_horizon", "delayMs");
    assertRefused(node.post("/api/v1/timers", new JsonArray().add(schedule(q, "k".repeat(513), 10, 1))), 413,
        "timers_key_too_long", "timerKey");
    assertRefused(node.post("/api/v1/timers", new JsonArray().add(schedule(q, "k", 10, 1))
        .add(schedule(q, "k", 20, 2))), 400, "timers_duplicate_key_in_call", "appears again");
    assertRefused(node.get("/api/v1/timers/" + q + "?limit=0"), 400, null, "limit");
    assertThat(node.get("/api/v1/timers/" + q).json().getJsonArray("rows")).as("nothing was armed").isEmpty();
    var miss = node.get("/api/v1/timers/" + q + "/none");
    assertThat(miss.status()).isEqualTo(200);
    assertThat(miss.json()).isEqualTo(new JsonObject().put("found", false).put("queue", q).put("timerKey", "none"));
  }

  /** The status, the timer envelope's {@code reason} (its {@code error} is the class, §1.2) and the field's name. */
  static void assertRefused(TestNode.Reply r, int status, String reason, String field) {
    assertThat(r.status()).as(r.body()).isEqualTo(status);
    if (reason != null) {
      assertThat(r.json().getString("reason")).as(r.body()).isEqualTo(reason);
      assertThat(r.json().getString("code")).as(r.body()).isEqualTo(r.json().getString("error"));
    }
    assertThat(r.body()).as("names the field").contains(field);
  }

  @Test
  void timersDueWhileEveryNodeIsDownFireOnceInDueOrderWhenOneReturns() {
    // a database of its own: no other node of this JVM sweeps it while "every node" is down
    Config.Database db = TestDatabase.get().fresh();
    String q = Wire.queue("tm-outage");
    List<String> expected = new ArrayList<>();
    try (TestNode first = TestNode.start(Map.of("QUEEN_TIMER_POLL_MS", "100"), db)) {
      // keys in one order, due times in another: the log must follow the due times
      JsonObject[] ops = new JsonObject[6];
      for (int i = 0; i < ops.length; i++) {
        long delay = 1500 + (ops.length - i) * 100L;
        ops[i] = schedule(q, "k" + i, delay, new JsonObject().put("i", i));
      }
      for (int i = ops.length - 1; i >= 0; i--) expected.add("txn-" + q + "-k" + i);
      arm(first, ops);
    }
    Awaitility.await("every timer is due while no node runs").atMost(Duration.ofSeconds(20))
        .until(() -> TestDatabase.queryLong(db, "SELECT count(*) FROM queen.timers WHERE due_at > now()") == 0);
    assertThat(TestDatabase.queryLong(db, "SELECT count(*) FROM queen.timers")).as("none fired while down")
        .isEqualTo(6);
    try (TestNode back = TestNode.start(Map.of("QUEEN_TIMER_POLL_MS", "100"), db)) {
      List<JsonObject> got = new ArrayList<>();
      Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> {
        got.addAll(drain(back, q));
        return got.size() >= 6;
      });
      assertThat(got).extracting(m -> m.getString("transactionId")).containsExactlyElementsOf(expected);
      assertThat(TestDatabase.queryLong(db, "SELECT count(*) FROM queen.timers")).isZero();
      assertThat(drain(back, q)).as("nothing more").isEmpty();
      assertThat(back.metric("queen_timers_fired_total{result=\"fired\"}")).isEqualTo(6.0);
    }
  }
}
