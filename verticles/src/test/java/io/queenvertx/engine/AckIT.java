package io.queenvertx.engine;

import static io.queenvertx.testing.Wire.ack;
import static io.queenvertx.testing.Wire.ackOne;
import static io.queenvertx.testing.Wire.item;
import static io.queenvertx.testing.Wire.pop;
import static io.queenvertx.testing.Wire.popSome;
import static io.queenvertx.testing.Wire.push;
import static io.queenvertx.testing.Wire.pushQueued;
import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.TestNode.Reply;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** POST /api/v1/ack and /ack/batch (API.md §5.5, ENGINE.md §5, §7.1): verdicts, implicit ack, retries and the DLQ. */
class AckIT {
  static final String ALREADY_COMMITTED = "already committed: the cursor moved past this message before this ack";

  @NodeFixture
  static TestNode node;

  @Test
  void aCompletedAckSucceedsAndTheNextPopGetsTheFollowingMessage() {
    String q = Wire.queue("ack-next");
    push(node, item(q, null, 0, "a0"), item(q, null, 1, "a1"));
    JsonObject p = popSome(node, q, "batch=1");
    JsonObject m = Wire.messages(p).get(0);
    assertThat(m.getString("transactionId")).isEqualTo("a0");
    JsonObject r = ackOne(node, ack("a0", m.getString("partitionId"), "completed", p.getString("leaseId")));
    assertThat(r).isEqualTo(new JsonObject().put("index", 0).put("transactionId", "a0").put("success", true)
        .putNull("error").put("leaseReleased", true).put("dlq", false).put("noop", false));
    assertThat(Wire.messages(popSome(node, q, "batch=1"))).extracting(x -> x.getString("transactionId"))
        .containsExactly("a1");
  }

  @Test
  void ackingTheLastMessageOfABatchCompletesTheEarlierOnes() {
    String q = Wire.queue("ack-implicit");
    push(node, item(q, null, 0, "i0"), item(q, null, 1, "i1"), item(q, null, 2, "i2"));
    JsonObject p = popSome(node, q, "batch=3");
    assertThat(Wire.messages(p)).hasSize(3);
    String pid = p.getString("partitionId");
    assertThat(ackOne(node, ack("i2", pid, "completed", p.getString("leaseId"))).getBoolean("success")).isTrue();
    var cursor = Wire.cursor(pid, Wire.QUEUE_MODE);
    assertThat(cursor.get("committed")).isEqualTo(2L);
    assertThat(cursor.get("worker_id")).as("the batch end was reached: the lease is released").isNull();
    assertThat(pop(node, q, "batch=10").status()).as("i0 and i1 are not redelivered").isEqualTo(204);
  }

  @Test
  void aPartialAckKeepsTheLeaseForTheRestOfTheBatch() {
    String q = Wire.queue("ack-partial");
    push(node, item(q, null, 0, "k0"), item(q, null, 1, "k1"));
    JsonObject p = popSome(node, q, "batch=2");
    String pid = p.getString("partitionId");
    JsonObject r = ackOne(node, ack("k0", pid, "completed", p.getString("leaseId")));
    assertThat(r.getBoolean("success")).isTrue();
    assertThat(pop(node, q, "batch=10").status()).as("k1 is still leased").isEqualTo(204);
    assertThat(ackOne(node, ack("k1", pid, "completed", p.getString("leaseId"))).getBoolean("success")).isTrue();
    assertThat(Wire.cursor(pid, Wire.QUEUE_MODE).get("committed")).isEqualTo(1L);
  }

  @Test
  void aRepeatedCompletedAckWithoutALeaseIsANoop() {
    String q = Wire.queue("ack-noop");
    pushQueued(node, q, null, 0, "n0");
    JsonObject p = popSome(node, q, "batch=1");
    String pid = p.getString("partitionId");
    assertThat(ackOne(node, ack("n0", pid, "completed", p.getString("leaseId"))).getBoolean("noop")).isFalse();
    JsonObject again = ackOne(node, ack("n0", pid, "completed", null));
    assertThat(again.getBoolean("success")).isTrue();
    assertThat(again.getBoolean("noop")).isTrue();
    assertThat(again.getValue("error")).isNull();
  }

  @Test
  void reackingACompletedBatchWithItsLeaseStillSucceeds() {
    // ENGINE.md §5.3, the rowless_messages pin: "the same batch acked again with its lease → all success"
    String q = Wire.queue("ack-reack");
    push(node, item(q, null, 0, "re0"), item(q, null, 1, "re1"));
    JsonObject p = popSome(node, q, "batch=2");
    String pid = p.getString("partitionId");
    String lease = p.getString("leaseId");
    JsonObject batch = new JsonObject().put("acknowledgments", new JsonArray()
        .add(ack("re0", pid, "completed", lease)).add(ack("re1", pid, "completed", lease)));
    Reply first = node.post("/api/v1/ack/batch", batch);
    assertThat(first.array().stream().map(o -> ((JsonObject) o).getBoolean("success"))).containsOnly(true);
    Reply again = node.post("/api/v1/ack/batch", batch);
    assertThat(again.status()).isEqualTo(200);
    assertThat(again.array().stream().map(o -> ((JsonObject) o).getBoolean("success")))
        .as("re-ack of a committed batch with its lease: %s", again.body()).containsOnly(true);
    assertThat(Wire.cursor(pid, Wire.QUEUE_MODE).get("committed")).isEqualTo(1L);
  }

  @Test
  void anAckForAGroupThatNeverPoppedIsConsumerNotFound() {
    String q = Wire.queue("ack-nocursor");
    Wire.pushQueued(node, q, null, 1, "nc0");
    JsonObject r = ackOne(node, ack("nc0", Wire.partitionId(q, "Default"), "completed", null)
        .put("consumerGroup", "never-popped"));
    assertThat(r.getBoolean("success")).isFalse();
    assertThat(r.getString("error")).isEqualTo("consumer not found");
  }

  @Test
  void statusAliasesSuccessAckedAndOkMeanCompleted() {
    String q = Wire.queue("ack-alias");
    push(node, item(q, null, 0, "s0"), item(q, null, 1, "s1"), item(q, null, 2, "s2"), item(q, null, 3, "s3"));
    String pid = Wire.partitionId(q, "Default");
    String[] aliases = {"success", "acked", "ok", null};
    for (int i = 0; i < 4; i++) {
      JsonObject p = popSome(node, q, "batch=1");
      assertThat(Wire.messages(p).get(0).getString("transactionId")).isEqualTo("s" + i);
      JsonObject r = ackOne(node, ack("s" + i, pid, aliases[i], p.getString("leaseId")));
      assertThat(r.getBoolean("success")).as("status %s", aliases[i]).isTrue();
      assertThat(Wire.cursor(pid, Wire.QUEUE_MODE).get("committed")).isEqualTo((long) i);
    }
  }

  @Test
  void failedAcksSpendTheRetryBudgetAndTheLastFailureDeadLettersTheMessage() {
    String q = Wire.queue("ack-dlq");
    Wire.configure(node, new JsonObject().put("queue", q).put("options", new JsonObject().put("retryLimit", 2)));
    push(node, item(q, null, new JsonObject().put("poison", true), "bad"), item(q, null, 1, "good"));
    String pid = Wire.partitionId(q, "Default");
    // retryLimit 2: delivered 3 times, dead-lettered on the 3rd failure (ENGINE.md §5.2 "Retry accounting")
    for (int attempt = 1; attempt <= 3; attempt++) {
      JsonObject p = popSome(node, q, "batch=1");
      JsonObject m = Wire.messages(p).get(0);
      assertThat(m.getString("transactionId")).as("delivery %d", attempt).isEqualTo("bad");
      assertThat(m.getInteger("deliveryAttempt")).as("a redelivery of the same start offset counts up")
          .isEqualTo(attempt);
      JsonObject r = ackOne(node, ack("bad", pid, "failed", p.getString("leaseId")).put("error", "boom-" + attempt));
      assertThat(r.getBoolean("success")).as("a handled nack is a success, attempt %d: %s", attempt, r).isTrue();
      assertThat(r.getBoolean("dlq")).as("dlq on attempt %d: %s", attempt, r).isEqualTo(attempt == 3);
      if (attempt < 3) {
        assertThat(Wire.cursor(pid, Wire.QUEUE_MODE).get("batch_retry_count")).isEqualTo(attempt);
        assertThat(Wire.dlqCount(pid)).isZero();
      }
    }
    var dlq = Wire.rows("SELECT consumer_group, \"offset\", transaction_id, message_id::text AS mid, payload::text "
        + "AS payload, error, retry_count FROM queen.log_dlq WHERE partition_id = '" + pid + "'");
    assertThat(dlq).hasSize(1);
    var row = dlq.get(0);
    assertThat(row.get("consumer_group")).isEqualTo(Wire.QUEUE_MODE);
    assertThat(row.get("offset")).isEqualTo(0L);
    assertThat(row.get("transaction_id")).isEqualTo("bad");
    assertThat(row.get("retry_count")).isEqualTo(2);
    assertThat(row.get("error")).isEqualTo("boom-3");
    assertThat(new JsonObject((String) row.get("payload"))).isEqualTo(new JsonObject().put("poison", true));
    var cursor = Wire.cursor(pid, Wire.QUEUE_MODE);
    assertThat(cursor.get("committed")).as("the cursor moves past the poison message").isEqualTo(0L);
    assertThat(cursor.get("batch_retry_count")).as("the budget resets after the DLQ move").isEqualTo(0);
    assertThat(Wire.messages(popSome(node, q, "batch=10"))).extracting(m -> m.getString("transactionId"))
        .containsExactly("good");
  }

  @Test
  void aFailedAckInsideABatchRedeliversFromThePoisonMessageOn() {
    String q = Wire.queue("ack-mid-fail");
    push(node, item(q, null, 0, "m0"), item(q, null, 1, "m1"), item(q, null, 2, "m2"));
    JsonObject p = popSome(node, q, "batch=3");
    String pid = p.getString("partitionId");
    String lease = p.getString("leaseId");
    Reply r = node.post("/api/v1/ack/batch", new JsonObject().put("acknowledgments", new JsonArray()
        .add(ack("m0", pid, "completed", lease)).add(ack("m1", pid, "failed", lease).put("error", "bad m1"))
        .add(ack("m2", pid, "completed", lease))));
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.array().stream().map(o -> ((JsonObject) o).getBoolean("success")))
        .as("m2's completed ack cannot pass the nack of m1, and says so: %s", r.body()).containsExactly(true, true, false);
    assertThat(r.array().getJsonObject(2).getString("error")).startsWith("not committed: m1, earlier in this partition");
    var cursor = Wire.cursor(pid, Wire.QUEUE_MODE);
    assertThat(cursor.get("committed")).as("only the completed prefix below the nack commits").isEqualTo(0L);
    assertThat(cursor.get("batch_retry_count")).isEqualTo(1);
    assertThat(Wire.messages(popSome(node, q, "batch=10"))).as("a completed ack above a nack just redelivers")
        .extracting(m -> m.getString("transactionId")).containsExactly("m1", "m2");
  }

  @Test
  void aDeadLetteredMessageWithoutAnErrorTextIsFiledAsRetriesExhausted() {
    String q = Wire.queue("ack-dlq-default");
    Wire.configure(node, new JsonObject().put("queue", q).put("options", new JsonObject().put("retryLimit", 0)));
    pushQueued(node, q, null, 1, "x");
    JsonObject p = popSome(node, q, "batch=1");
    String pid = p.getString("partitionId");
    JsonObject r = ackOne(node, ack("x", pid, "failed", p.getString("leaseId")).put("error", ""));
    assertThat(r.getBoolean("dlq")).isTrue();
    assertThat(Wire.rows("SELECT error FROM queen.log_dlq WHERE partition_id = '" + pid + "'"))
        .extracting(m -> m.get("error")).containsExactly("Retries exhausted");
  }

  @Test
  void aDlqAckDeadLettersAtOnceWithoutSpendingTheBudget() {
    String q = Wire.queue("ack-dlq-now");
    push(node, item(q, null, 1, "d0"), item(q, null, 2, "d1"));
    JsonObject p = popSome(node, q, "batch=2");
    String pid = p.getString("partitionId");
    JsonObject r = ackOne(node, ack("d0", pid, "dlq", p.getString("leaseId")).put("error", "unparseable"));
    assertThat(r.getBoolean("success")).isTrue();
    assertThat(r.getBoolean("dlq")).isTrue();
    assertThat(Wire.rows("SELECT error, retry_count FROM queen.log_dlq WHERE partition_id = '" + pid + "'"))
        .singleElement().satisfies(row -> {
          assertThat(row.get("error")).isEqualTo("unparseable");
          assertThat(row.get("retry_count")).isEqualTo(0);
        });
    assertThat(Wire.messages(popSome(node, q, "batch=10"))).extracting(m -> m.getString("transactionId"))
        .containsExactly("d1");
  }

  @Test
  void aRetryAckRedeliversWithoutSpendingTheBudget() {
    String q = Wire.queue("ack-retry");
    Wire.configure(node, new JsonObject().put("queue", q).put("options", new JsonObject().put("retryLimit", 1)));
    pushQueued(node, q, null, 1, "r0");
    String pid = Wire.partitionId(q, "Default");
    for (int i = 0; i < 3; i++) {
      JsonObject p = popSome(node, q, "batch=1");
      JsonObject r = ackOne(node, ack("r0", pid, "retry", p.getString("leaseId")));
      assertThat(r.getBoolean("success")).isTrue();
      assertThat(r.getBoolean("dlq")).isFalse();
      assertThat(Wire.cursor(pid, Wire.QUEUE_MODE).get("batch_retry_count")).as("retry %d", i).isEqualTo(0);
    }
    // with the budget intact, the first failure (limit 1) redelivers and only the second dead-letters
    JsonObject p1 = popSome(node, q, "batch=1");
    assertThat(ackOne(node, ack("r0", pid, "failed", p1.getString("leaseId"))).getBoolean("dlq")).isFalse();
    JsonObject p2 = popSome(node, q, "batch=1");
    assertThat(ackOne(node, ack("r0", pid, "failed", p2.getString("leaseId"))).getBoolean("dlq")).isTrue();
    assertThat(Wire.dlqCount(pid)).isEqualTo(1);
  }

  @Test
  void anAckWithAnUnknownTransactionIdIsUnresolvable() {
    String q = Wire.queue("ack-unknown");
    pushQueued(node, q, null, 1, "known");
    JsonObject p = popSome(node, q, "batch=1");
    String pid = p.getString("partitionId");
    JsonObject r = ackOne(node, ack("never-pushed", pid, "completed", p.getString("leaseId")));
    assertThat(r.getBoolean("success")).isFalse();
    assertThat(r.getString("error")).startsWith("unresolvable");
    assertThat(r.getBoolean("leaseReleased")).isFalse();
    assertThat(Wire.cursor(pid, Wire.QUEUE_MODE).get("committed")).isEqualTo(-1L);
  }

  @Test
  void anAckWithAnotherLeaseIdIsRejectedAsInvalidOrExpired() {
    String q = Wire.queue("ack-badlease");
    pushQueued(node, q, null, 1, "L0");
    JsonObject p = popSome(node, q, "batch=1");
    String pid = p.getString("partitionId");
    JsonObject r = ackOne(node, ack("L0", pid, "completed", UUID.randomUUID().toString()));
    assertThat(r.getBoolean("success")).isFalse();
    assertThat(r.getString("error")).isEqualTo("invalid or expired lease");
    assertThat(Wire.cursor(pid, Wire.QUEUE_MODE).get("committed")).as("the cursor did not move").isEqualTo(-1L);
    assertThat(ackOne(node, ack("L0", pid, "completed", p.getString("leaseId"))).getBoolean("success")).isTrue();
  }

  @Test
  void aFailedAckBelowTheCursorIsAlreadyCommitted() {
    String q = Wire.queue("ack-stale");
    pushQueued(node, q, null, 1, "st0");
    JsonObject p = popSome(node, q, "batch=1");
    String pid = p.getString("partitionId");
    assertThat(ackOne(node, ack("st0", pid, "completed", p.getString("leaseId"))).getBoolean("success")).isTrue();
    JsonObject r = ackOne(node, ack("st0", pid, "failed", null));
    assertThat(r.getBoolean("success")).isFalse();
    assertThat(r.getString("error")).isEqualTo(ALREADY_COMMITTED);
    assertThat(Wire.dlqCount(pid)).isZero();
  }

  @Test
  void aLeaseLessAckAheadOfTheCursorAdvancesIt() {
    String q = Wire.queue("ack-leaseless");
    push(node, item(q, null, 0, "ll0"), item(q, null, 1, "ll1"));
    String pid = Wire.partitionId(q, "Default");
    JsonObject p = popSome(node, q, "batch=1"); // creates the cursor row
    assertThat(ackOne(node, ack("ll0", pid, "completed", p.getString("leaseId"))).getBoolean("success")).isTrue();
    // ll1 was never delivered and no lease is live: a lease-less ack still advances the cursor (ENGINE.md §5.2 step 2)
    JsonObject r = ackOne(node, ack("ll1", pid, "completed", null));
    assertThat(r.getBoolean("success")).isTrue();
    assertThat(r.getBoolean("noop")).isFalse();
    assertThat(Wire.cursor(pid, Wire.QUEUE_MODE).get("committed")).isEqualTo(1L);
  }

  @Test
  void aNullConsumerGroupAndNullErrorAreAccepted() {
    String q = Wire.queue("ack-null");
    push(node, item(q, null, 0, "nu0"), item(q, null, 1, "nu1"));
    JsonObject p = popSome(node, q, "batch=1");
    String pid = p.getString("partitionId");
    JsonObject single = ack("nu0", pid, "completed", p.getString("leaseId")).putNull("consumerGroup").putNull("error");
    assertThat(ackOne(node, single).getBoolean("success")).isTrue();
    JsonObject p2 = popSome(node, q, "batch=1");
    Reply batch = node.post("/api/v1/ack/batch", new JsonObject().putNull("consumerGroup")
        .put("acknowledgments", new JsonArray().add(ack("nu1", pid, "completed", p2.getString("leaseId"))
            .putNull("error"))));
    assertThat(batch.status()).isEqualTo(200);
    assertThat(batch.array().getJsonObject(0).getBoolean("success")).isTrue();
    assertThat(Wire.cursor(pid, Wire.QUEUE_MODE).get("committed")).isEqualTo(1L);
  }

  @Test
  void anAckIsAlways200EvenWhenEveryItemFails() {
    Reply r = node.post("/api/v1/ack", ack("t", UUID.randomUUID().toString(), "completed", null));
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.array().getJsonObject(0).getBoolean("success")).isFalse();
    Reply notUuid = node.post("/api/v1/ack", ack("t", "not-a-uuid", "completed", null));
    assertThat(notUuid.status()).isEqualTo(200);
    assertThat(notUuid.array().getJsonObject(0).getBoolean("success")).isFalse();
  }

  @Test
  void aBatchWithoutAcknowledgmentsAnswersAnEmptyArray() {
    for (String body : new String[] {"{}", "{\"consumerGroup\":null}", "{\"acknowledgments\":[]}"}) {
      Reply r = node.post("/api/v1/ack/batch", body);
      assertThat(r.status()).as(body).isEqualTo(200);
      assertThat(r.array()).as(body).isEmpty();
    }
  }

  @Test
  void aBatchAckAnswersEveryItemInRequestOrder() {
    String q = Wire.queue("ack-batch");
    push(node, item(q, null, 0, "b0"), item(q, null, 1, "b1"));
    JsonObject p = popSome(node, q, "batch=2");
    String pid = p.getString("partitionId");
    String lease = p.getString("leaseId");
    Reply r = node.post("/api/v1/ack/batch", new JsonObject().put("acknowledgments", new JsonArray()
        .add(ack("b1", pid, "completed", lease)).add(ack("ghost", pid, "completed", lease))
        .add(ack("b0", pid, "completed", lease))));
    assertThat(r.status()).isEqualTo(200);
    JsonArray arr = r.array();
    assertThat(arr).hasSize(3);
    assertThat(arr.stream().map(o -> ((JsonObject) o).getInteger("index"))).containsExactly(0, 1, 2);
    assertThat(arr.stream().map(o -> ((JsonObject) o).getString("transactionId"))).containsExactly("b1", "ghost", "b0");
    assertThat(arr.getJsonObject(0).getBoolean("success")).isTrue();
    assertThat(arr.getJsonObject(1).getBoolean("success")).isFalse();
    assertThat(arr.getJsonObject(1).getString("error")).startsWith("unresolvable");
    assertThat(arr.getJsonObject(2).getBoolean("success")).isTrue();
    assertThat(Wire.cursor(pid, Wire.QUEUE_MODE).get("committed")).isEqualTo(1L);
  }

  @Test
  void aNamedGroupAckMovesOnlyThatGroupsCursor() {
    String q = Wire.queue("ack-group");
    pushQueued(node, q, null, 1, "gx");
    JsonObject p = popSome(node, q, "batch=1&consumerGroup=workers&subscriptionMode=all");
    String pid = p.getString("partitionId");
    Reply r = node.post("/api/v1/ack/batch", new JsonObject().put("consumerGroup", "workers")
        .put("acknowledgments", new JsonArray().add(ack("gx", pid, "completed", p.getString("leaseId")))));
    assertThat(r.array().getJsonObject(0).getBoolean("success")).isTrue();
    assertThat(pop(node, q, "consumerGroup=workers&subscriptionMode=all").status()).isEqualTo(204);
    assertThat(Wire.messages(popSome(node, q, "batch=1"))).as("queue mode still sees it")
        .extracting(m -> m.getString("transactionId")).containsExactly("gx");
  }

  @Test
  void aBodyThatIsNotJsonIs400BadBody() {
    Reply r = node.post("/api/v1/ack", "{nope");
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.json().getString("error")).startsWith("bad body: ");
  }
}
