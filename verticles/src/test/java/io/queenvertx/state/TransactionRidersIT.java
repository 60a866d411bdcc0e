package io.queenvertx.state;

import static io.queenvertx.testing.Wire.pop;
import static io.queenvertx.testing.Wire.popSome;
import static io.queenvertx.testing.Wire.pushQueued;
import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.TestNode.Reply;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.junit.jupiter.api.Test;

/**
 * A transaction's riders (docs/design/queen2-contract.md §5): top-level {@code kv} and {@code timers} in the SAME
 * PostgreSQL transaction as the bundle's pushes and acks, results in one flat index space, {@code kv_precondition}.
 */
class TransactionRidersIT {
  @NodeFixture
  static TestNode node;

  /** A popped message of a fresh queue, to ack in a bundle. */
  record Leased(String queue, String partitionId, String leaseId) {}

  static Leased leased(String prefix) {
    String in = Wire.queue(prefix);
    pushQueued(node, in, null, 1, "in-1");
    JsonObject p = popSome(node, in, "batch=1");
    return new Leased(in, p.getString("partitionId"), p.getString("leaseId"));
  }

  static JsonObject bundle(Leased in, String out, String ns, String timerQueue, JsonObject... extraKv) {
    JsonArray kv = new JsonArray().add(new JsonObject().put("op", "incr").put("ns", ns).put("key", "count")
        .put("delta", 1).put("forever", true));
    for (JsonObject o : extraKv) kv.add(o);
    String payload = Base64.getEncoder().encodeToString("{\"remind\":1}".getBytes(StandardCharsets.UTF_8));
    return new JsonObject()
        .put("operations", new JsonArray()
            .add(new JsonObject().put("type", "push").put("items", new JsonArray()
                .add(new JsonObject().put("queue", out).put("payload", 2).put("transactionId", "out-1"))))
            .add(new JsonObject().put("type", "ack").put("transactionId", "in-1").put("partitionId", in.partitionId())
                .put("status", "completed")))
        .put("requiredLeases", new JsonArray().add(in.leaseId()))
        .put("kv", kv)
        .put("timers", new JsonArray().add(new JsonObject().put("op", "schedule").put("queue", timerQueue)
            .put("timerKey", "remind").put("delayMs", 3_600_000).put("txn", "timer-1").put("payload", payload)));
  }

  static JsonObject kvGet(String ns, String key) {
    return node.post("/api/v1/kv", new JsonObject().put("operations", new JsonArray()
        .add(new JsonObject().put("op", "get").put("ns", ns).put("key", key)))).json()
        .getJsonArray("results").getJsonObject(0);
  }

  static boolean timerPending(String queue) {
    Reply r = node.get("/api/v1/timers/" + queue + "/remind");
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    return r.json().getBoolean("found");
  }

  @Test
  void pushAckCounterAndTimerCommitTogether() {
    Leased in = leased("rd-in");
    String out = Wire.queue("rd-out");
    String ns = KvIT.ns();
    String timers = Wire.queue("rd-timer");
    Reply r = node.post("/api/v1/transaction", bundle(in, out, ns, timers));
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    JsonObject j = r.json();
    assertThat(j.getBoolean("success")).as(r.body()).isTrue();
    JsonArray results = j.getJsonArray("results");
    assertThat(results).hasSize(4);
    for (int i = 0; i < 4; i++) assertThat(results.getJsonObject(i).getInteger("index")).isEqualTo(i);
    assertThat(results.getJsonObject(0).getString("type")).isEqualTo("push");
    assertThat(results.getJsonObject(1).getString("type")).isEqualTo("ack");
    JsonObject kv = results.getJsonObject(2);
    assertThat(kv.getString("type")).isEqualTo("kv");
    assertThat(kv.getString("op")).isEqualTo("incr");
    assertThat(kv.getBoolean("applied")).isTrue();
    assertThat(kv.getValue("value")).isEqualTo(1);
    JsonObject timer = results.getJsonObject(3);
    assertThat(timer.getString("type")).isEqualTo("timer");
    assertThat(timer.getString("status")).isEqualTo("scheduled");
    assertThat(timer.getString("messageId")).matches(Wire.UUID_TEXT);

    assertThat(Wire.messages(popSome(node, out, "batch=5"))).extracting(m -> m.getString("transactionId"))
        .containsExactly("out-1");
    assertThat(Wire.cursor(in.partitionId(), Wire.QUEUE_MODE).get("committed")).isEqualTo(0L);
    assertThat(kvGet(ns, "count").getValue("value")).isEqualTo(1);
    assertThat(timerPending(timers)).isTrue();
  }

  @Test
  void aLostRequiredPreconditionRollsBackThePushTheAckTheCounterAndTheTimer() {
    String ns = KvIT.ns();
    Reply seed = node.post("/api/v1/kv", new JsonObject().put("operations", new JsonArray()
        .add(new JsonObject().put("op", "put").put("ns", ns).put("key", "done:42").put("value", "w0")
            .put("forever", true))));
    assertThat(seed.status()).isEqualTo(200);
    long seeded = seed.json().getJsonArray("results").getJsonObject(0).getLong("version");
    Leased in = leased("rb-in");
    String out = Wire.queue("rb-out");
    String timers = Wire.queue("rb-timer");
    // once(ns, "done:42"): putIfAbsent required, lost because the key exists
    JsonObject once = new JsonObject().put("op", "putIfAbsent").put("ns", ns).put("key", "done:42").put("value", true)
        .put("forever", true).put("required", true);
    Reply r = node.post("/api/v1/transaction", bundle(in, out, ns, timers, once));
    assertThat(r.status()).as("returned, not thrown: %s", r.body()).isEqualTo(200);
    JsonObject j = r.json();
    assertThat(j.getBoolean("success")).isFalse();
    assertThat(j.getString("reason")).isEqualTo("kv_precondition");
    assertThat(j.getInteger("failedIndex")).as("flat: 2 operations, then kv index 1").isEqualTo(3);
    assertThat(j.getString("kvReason")).isEqualTo("exists");
    assertThat(j.getLong("version")).isEqualTo(seeded);
    assertThat(j.getValue("value")).isEqualTo("w0");
    assertThat(j.getJsonArray("results")).isEmpty();

    assertThat(pop(node, out, "batch=5").status()).as("the push was rolled back").isEqualTo(204);
    assertThat(Wire.cursor(in.partitionId(), Wire.QUEUE_MODE).get("committed")).as("the ack was rolled back")
        .isEqualTo(-1L);
    assertThat(kvGet(ns, "count").getBoolean("found")).as("the counter was rolled back").isFalse();
    assertThat(timerPending(timers)).as("the timer was rolled back").isFalse();
  }

  @Test
  void aRejectedAckRollsBackTheRidersThatRanBeforeIt() {
    Leased in = leased("ra-in");
    String out = Wire.queue("ra-out");
    String ns = KvIT.ns();
    String timers = Wire.queue("ra-timer");
    JsonObject b = bundle(in, out, ns, timers);
    b.getJsonArray("operations").getJsonObject(1).put("transactionId", "ghost");
    Reply r = node.post("/api/v1/transaction", b);
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.json().getBoolean("success")).isFalse();
    assertThat(r.json().getString("reason")).as(r.body()).isEqualTo("ack_rejected");
    assertThat(kvGet(ns, "count").getBoolean("found")).as("the counter, applied first, was rolled back").isFalse();
    assertThat(timerPending(timers)).as("the timer, applied first, was rolled back").isFalse();
    assertThat(pop(node, out, "batch=5").status()).isEqualTo(204);
  }

  @Test
  void aGuardWithAStaleFencingTokenFailsTheTransaction() {
    String name = "guard-" + Wire.shortId();
    JsonObject got = node.post("/api/v1/locks", new JsonObject().put("operations", new JsonArray()
        .add(new JsonObject().put("op", "acquire").put("name", name).put("owner", "w1").put("ttlSeconds", 60))))
        .json().getJsonArray("results").getJsonObject(0);
    JsonObject staleGuard = got.getJsonObject("guard");
    JsonObject renewed = node.post("/api/v1/locks", new JsonObject().put("operations", new JsonArray()
        .add(new JsonObject().put("op", "renew").put("name", name).put("token", got.getLong("token"))
            .put("ttlSeconds", 60)))).json().getJsonArray("results").getJsonObject(0);
    assertThat(renewed.getBoolean("renewed")).isTrue();
    String out = Wire.queue("guard-out");
    JsonObject push = new JsonObject().put("type", "push").put("queue", out).put("payload", 1);
    Reply stale = node.post("/api/v1/transaction", new JsonObject().put("operations", new JsonArray().add(push))
        .put("kv", new JsonArray().add(staleGuard)));
    assertThat(stale.status()).isEqualTo(200);
    assertThat(stale.json().getBoolean("success")).isFalse();
    assertThat(stale.json().getString("reason")).isEqualTo("kv_precondition");
    assertThat(stale.json().getString("kvReason")).isEqualTo("version");
    assertThat(stale.json().getInteger("failedIndex")).isEqualTo(1);
    assertThat(pop(node, out, "batch=5").status()).isEqualTo(204);

    Reply fresh = node.post("/api/v1/transaction", new JsonObject().put("operations", new JsonArray().add(push))
        .put("kv", new JsonArray().add(renewed.getJsonObject("guard"))));
    assertThat(fresh.json().getBoolean("success")).as(fresh.body()).isTrue();
    assertThat(fresh.json().getJsonArray("results").getJsonObject(1).getString("type")).isEqualTo("kv");
    assertThat(Wire.messages(popSome(node, out, "batch=5"))).hasSize(1);
  }

  @Test
  void ridersAloneAndGetPrefixRefused() {
    String ns = KvIT.ns();
    Reply alone = node.post("/api/v1/transaction", new JsonObject().put("kv", new JsonArray()
        .add(new JsonObject().put("op", "put").put("ns", ns).put("key", "k").put("value", 1).put("forever", true))));
    assertThat(alone.status()).as(alone.body()).isEqualTo(200);
    assertThat(alone.json().getBoolean("success")).isTrue();
    assertThat(alone.json().getJsonArray("results").getJsonObject(0).getInteger("index")).isZero();
    assertThat(kvGet(ns, "k").getBoolean("found")).isTrue();
    Reply prefix = node.post("/api/v1/transaction", new JsonObject().put("kv", new JsonArray()
        .add(new JsonObject().put("op", "getPrefix").put("ns", ns).put("prefix", "k"))));
    assertThat(prefix.status()).isEqualTo(400);
    assertThat(prefix.json().getString("code")).isEqualTo("kv_get_prefix_not_allowed_in_transaction");
  }

  @Test
  void aRiderIncrCountsItsDeltaAsSpelled() {
    String ns = KvIT.ns();
    Reply r = node.post("/api/v1/transaction", "{\"kv\":[" + KvIT.incr(ns, "n", "\"delta\":9007199254740993.0") + "]}");
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    assertThat(KvIT.number(r.json().getJsonArray("results").getJsonObject(0))).isEqualByComparingTo("9007199254740993");
  }
}
