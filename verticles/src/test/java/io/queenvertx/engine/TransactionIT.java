package io.queenvertx.engine;

import static io.queenvertx.testing.Wire.ack;
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
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** POST /api/v1/transaction (API.md §5.6, ENGINE.md §6): push and ack commit or roll back together. */
class TransactionIT {
  @NodeFixture
  static TestNode node;

  @Test
  void aPushAndAnAckInOneTransactionCommitTogether() {
    String in = Wire.queue("tx-in");
    String out = Wire.queue("tx-out");
    pushQueued(node, in, null, new JsonObject().put("step", 1), "t0");
    JsonObject p = popSome(node, in, "batch=1");
    String pid = p.getString("partitionId");
    String lease = p.getString("leaseId");

    Reply r = node.post("/api/v1/transaction", new JsonObject()
        .put("operations", new JsonArray()
            .add(new JsonObject().put("type", "push").put("items", new JsonArray()
                .add(new JsonObject().put("queue", out).put("payload", new JsonObject().put("step", 2))
                    .put("transactionId", "t1"))))
            .add(new JsonObject().put("type", "ack").put("transactionId", "t0").put("partitionId", pid)
                .put("status", "completed")))
        .put("requiredLeases", new JsonArray().add(lease)));
    assertThat(r.status()).isEqualTo(200);
    JsonObject j = r.json();
    assertThat(j.getBoolean("success")).as(r.body()).isTrue();
    assertThat(j.getString("transactionId")).matches(PushIT.UUID_RE);
    JsonArray results = j.getJsonArray("results");
    assertThat(results).hasSize(2);
    JsonObject pushRes = results.getJsonObject(0);
    assertThat(pushRes.getInteger("index")).isEqualTo(0);
    assertThat(pushRes.getString("type")).isEqualTo("push");
    assertThat(pushRes.getBoolean("success")).isTrue();
    assertThat(pushRes.getString("transactionId")).isEqualTo("t1");
    assertThat(pushRes.getString("messageId")).matches(PushIT.UUID_RE);
    assertThat(pushRes.getString("queueName")).isEqualTo(out);
    JsonObject ackRes = results.getJsonObject(1);
    assertThat(ackRes.getInteger("index")).isEqualTo(1);
    assertThat(ackRes.getString("type")).isEqualTo("ack");
    assertThat(ackRes.getBoolean("success")).isTrue();
    assertThat(ackRes.getString("transactionId")).isEqualTo("t0");
    assertThat(ackRes.getValue("error")).isNull();
    assertThat(ackRes.getBoolean("dlq")).isFalse();

    var pushed = Wire.messages(popSome(node, out, "batch=5"));
    assertThat(pushed).extracting(m -> m.getString("transactionId")).containsExactly("t1");
    assertThat(pushed.get(0).getString("id")).isEqualTo(pushRes.getString("messageId"));
    var cursor = Wire.cursor(pid, Wire.QUEUE_MODE);
    assertThat(cursor.get("committed")).as("the ack committed with the push").isEqualTo(0L);
    assertThat(cursor.get("worker_id")).isNull();
  }

  @Test
  void anAckWithAnUnknownTransactionIdFailsTheWholeTransactionAndStoresNoPush() {
    String in = Wire.queue("tx-rb-in");
    String out = Wire.queue("tx-rb-out");
    pushQueued(node, in, null, 1, "real");
    JsonObject p = popSome(node, in, "batch=1");
    String pid = p.getString("partitionId");

    Reply r = node.post("/api/v1/transaction", new JsonObject()
        .put("operations", new JsonArray()
            .add(new JsonObject().put("type", "push").put("queue", out).put("payload", 1).put("transactionId", "x"))
            .add(new JsonObject().put("type", "ack").put("transactionId", "ghost").put("partitionId", pid)))
        .put("requiredLeases", new JsonArray().add(p.getString("leaseId"))));
    assertThat(r.status()).as("a transaction that reached the database is 200 even when it failed").isEqualTo(200);
    JsonObject j = r.json();
    assertThat(j.getBoolean("success")).isFalse();
    assertThat(j.getString("transactionId")).matches(PushIT.UUID_RE);
    assertThat(j.getString("error")).contains("unknown transactionId");
    assertThat(j.getJsonArray("results")).isEmpty();

    String outPid = Wire.partitionId(out, "Default");
    if (outPid != null) assertThat(Wire.segments(outPid)).isZero();
    assertThat(pop(node, out, "batch=5").status()).as("the push was rolled back").isEqualTo(204);
    assertThat(Wire.cursor(pid, Wire.QUEUE_MODE).get("committed")).isEqualTo(-1L);
  }

  @Test
  void anAckWithAForeignLeaseRollsTheTransactionBack() {
    String in = Wire.queue("tx-lease-in");
    String out = Wire.queue("tx-lease-out");
    pushQueued(node, in, null, 1, "leased");
    JsonObject p = popSome(node, in, "batch=1");
    String pid = p.getString("partitionId");
    Reply r = node.post("/api/v1/transaction", new JsonObject().put("operations", new JsonArray()
        .add(new JsonObject().put("type", "push").put("queue", out).put("payload", 1))
        .add(new JsonObject().put("type", "ack").put("transactionId", "leased").put("partitionId", pid)
            .put("leaseId", UUID.randomUUID().toString()))));
    assertThat(r.status()).isEqualTo(200);
    JsonObject j = r.json();
    assertThat(j.getBoolean("success")).isFalse();
    assertThat(j.getString("error")).contains("invalid or expired lease");
    assertThat(j.getJsonArray("results")).isEmpty();
    assertThat(pop(node, out, "batch=5").status()).isEqualTo(204);
    assertThat(Wire.cursor(pid, Wire.QUEUE_MODE).get("committed")).isEqualTo(-1L);
  }

  @Test
  void anAckWithoutLeaseInformationUsesTheLiveLeaseOfItsPartition() {
    String q = Wire.queue("tx-nolease");
    pushQueued(node, q, null, 1, "held");
    JsonObject p = popSome(node, q, "batch=1");
    String pid = p.getString("partitionId");
    Reply r = node.post("/api/v1/transaction", new JsonObject().put("operations", new JsonArray()
        .add(new JsonObject().put("type", "ack").put("transactionId", "held").put("partitionId", pid))));
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.json().getBoolean("success")).as(r.body()).isTrue();
    var cursor = Wire.cursor(pid, Wire.QUEUE_MODE);
    assertThat(cursor.get("committed")).isEqualTo(0L);
    assertThat(cursor.get("worker_id")).as("the batch end was reached: the lease is released").isNull();
  }

  @Test
  void aTransactionAckThatExhaustsTheBudgetIsDeadLetteredWhenTheAnswerSaysDlq() {
    String q = Wire.queue("tx-failed");
    Wire.configure(node, new JsonObject().put("queue", q).put("options", new JsonObject().put("retryLimit", 0)));
    pushQueued(node, q, null, new JsonObject().put("p", 1), "tf");
    JsonObject p = popSome(node, q, "batch=1");
    String pid = p.getString("partitionId");
    Reply r = node.post("/api/v1/transaction", new JsonObject().put("operations", new JsonArray()
        .add(new JsonObject().put("type", "ack").put("transactionId", "tf").put("partitionId", pid)
            .put("status", "failed").put("error", "tx boom")))
        .put("requiredLeases", new JsonArray().add(p.getString("leaseId"))));
    assertThat(r.status()).isEqualTo(200);
    JsonObject j = r.json();
    assertThat(j.getBoolean("success")).as(r.body()).isTrue();
    assertThat(j.getJsonArray("results").getJsonObject(0).getBoolean("dlq")).isTrue();
    assertThat(Wire.rows("SELECT error, transaction_id FROM queen.log_dlq WHERE partition_id = '" + pid + "'"))
        .singleElement().satisfies(row -> {
          assertThat(row.get("error")).isEqualTo("tx boom");
          assertThat(row.get("transaction_id")).isEqualTo("tf");
        });
    assertThat(pop(node, q, "batch=5").status()).isEqualTo(204);
  }

  @Test
  void aPushThatDuplicatesTheWindowRollsTheTransactionBack() {
    String q = Wire.queue("tx-dup");
    String other = Wire.queue("tx-dup-other");
    pushQueued(node, q, null, 1, "once");
    Reply r = node.post("/api/v1/transaction", new JsonObject().put("operations", new JsonArray()
        .add(new JsonObject().put("type", "push").put("items", new JsonArray()
            .add(new JsonObject().put("queue", other).put("payload", 2).put("transactionId", "fresh"))
            .add(new JsonObject().put("queue", q).put("payload", 3).put("transactionId", "once"))))));
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.json().getBoolean("success")).isFalse();
    assertThat(pop(node, other, "batch=5").status()).isEqualTo(204);
    assertThat(Wire.frames(Wire.partitionId(q, "Default"))).isEqualTo(1);
  }

  @Test
  void aTransactionIdRepeatedInsideOneTransactionIsEchoedAsADuplicate() {
    String q = Wire.queue("tx-intra");
    Reply r = node.post("/api/v1/transaction", new JsonObject().put("operations", new JsonArray()
        .add(new JsonObject().put("type", "push").put("items", new JsonArray()
            .add(new JsonObject().put("queue", q).put("payload", 1).put("transactionId", "twice"))
            .add(new JsonObject().put("queue", q).put("payload", 2).put("transactionId", "twice"))))));
    assertThat(r.status()).isEqualTo(200);
    JsonObject j = r.json();
    assertThat(j.getBoolean("success")).as(r.body()).isTrue();
    assertThat(j.getJsonArray("results").getJsonObject(1).getBoolean("duplicate")).isTrue();
    assertThat(Wire.frames(Wire.partitionId(q, "Default"))).isEqualTo(1);
  }

  @Test
  void aTransactionPushIsTheWayToAttachATraceId() {
    String q = Wire.queue("tx-trace");
    String trace = UUID.randomUUID().toString();
    Reply r = node.post("/api/v1/transaction", new JsonObject().put("operations", new JsonArray()
        .add(new JsonObject().put("type", "push").put("queue", q).put("data", new JsonObject().put("d", 1))
            .put("traceId", trace))));
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.json().getBoolean("success")).as(r.body()).isTrue();
    JsonObject m = Wire.messages(popSome(node, q, "batch=5")).get(0);
    assertThat(m.getString("traceId")).isEqualTo(trace);
    assertThat(m.getJsonObject("data")).as("a push item takes data when payload is absent")
        .isEqualTo(new JsonObject().put("d", 1));
  }

  @Test
  void aTransactionWithoutAnOperationsArrayIs400() {
    for (String body : new String[] {"{}", "{\"operations\":{}}"}) {
      Reply r = node.post("/api/v1/transaction", body);
      assertThat(r.status()).as(body).isEqualTo(400);
      JsonObject j = r.json();
      assertThat(j.getBoolean("success")).isFalse();
      assertThat(j.getString("error"))
          .isEqualTo("transaction requires an operations array (or a top-level kv/timers array)");
      assertThat(j.getJsonArray("results")).isEmpty();
    }
  }

  @Test
  void anOperationOtherThanPushOrAckIs400AndNothingIsWritten() {
    String q = Wire.queue("tx-badop");
    Reply r = node.post("/api/v1/transaction", new JsonObject().put("operations", new JsonArray()
        .add(new JsonObject().put("type", "push").put("queue", q).put("payload", 1))
        .add(new JsonObject().put("type", "delete").put("queue", q))));
    assertThat(r.status()).isEqualTo(400);
    JsonObject j = r.json();
    assertThat(j.getBoolean("success")).isFalse();
    assertThat(j.getString("error")).isEqualTo("segments transaction supports only push and ack operations, got `delete`");
    assertThat(Wire.queueRows(q)).isZero();
  }

  /**
   * Issue 34 item 3, then issue 36: Queen 2.x sends its kv and timer riders ({@code .once(...)}, {@code
   * .kv.putIfAbsent(..., {required: true})}, {@code .timer(...)}) as top-level {@code kv} / {@code timers} beside the
   * operations. A malformed rider (here a kv write without its expiry, which the database refuses, and a timer without
   * its {@code timerKey}, which the route refuses) is a 400 naming it, and the bundle's push and ack are not applied.
   */
  @Test
  void aBundleWithAMalformedRiderIs400NamingItAndNothingOfItIsApplied() {
    JsonObject gate = new JsonObject().put("op", "putIfAbsent").put("ns", "test-idem").put("key", "order-1")
        .put("value", true).put("required", true);
    JsonObject timer = new JsonObject().put("op", "schedule").put("queue", "reminders").put("key", "k")
        .put("delayMs", 1000).put("payload", "e30=").put("txn", "t");
    for (var rider : List.of(Map.entry("kv", gate), Map.entry("timers", timer))) {
      String in = Wire.queue("tx-rider-in");
      String out = Wire.queue("tx-rider-out");
      pushQueued(node, in, null, 1, "r0");
      JsonObject p = popSome(node, in, "batch=1");
      Reply r = node.post("/api/v1/transaction", new JsonObject()
          .put("operations", new JsonArray()
              .add(new JsonObject().put("type", "push").put("items", new JsonArray()
                  .add(new JsonObject().put("queue", out).put("payload", 2).put("transactionId", "r1"))))
              .add(new JsonObject().put("type", "ack").put("transactionId", "r0")
                  .put("partitionId", p.getString("partitionId")).put("status", "completed")))
          .put("requiredLeases", new JsonArray().add(p.getString("leaseId")))
          .put(rider.getKey(), new JsonArray().add(rider.getValue())));
      assertThat(r.status()).as("%s: %s", rider.getKey(), r.body()).isEqualTo(400);
      assertThat(r.json().getBoolean("success")).isFalse();
      assertThat(r.json().getString("reason")).isEqualTo("bad_request");
      assertThat(r.json().getString("code")).as(r.body())
          .isEqualTo(rider.getKey().equals("kv") ? "kv_expiry_not_specified" : "timers_key_required");
      assertThat(r.json().getString("error")).as(r.body())
          .contains(rider.getKey().equals("kv") ? "ttlSeconds" : "timerKey");
      assertThat(r.json().containsKey("_status")).isFalse();
      assertThat(Wire.queueRows(out)).as("%s: the push was not applied", rider.getKey()).isZero();
      assertThat(Wire.cursor(p.getString("partitionId"), Wire.QUEUE_MODE).get("committed"))
          .as("%s: the ack was not applied", rider.getKey()).isEqualTo(-1L);
    }
  }

  @Test
  void invalidJsonIs400BadBody() {
    Reply r = node.post("/api/v1/transaction", "{\"operations\":[");
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.json().getString("error")).startsWith("bad body: ");
  }
}
