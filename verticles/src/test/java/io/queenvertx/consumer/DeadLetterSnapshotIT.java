package io.queenvertx.consumer;

import static io.queenvertx.testing.Wire.ack;
import static io.queenvertx.testing.Wire.ackOne;
import static io.queenvertx.testing.Wire.popSome;
import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.TestNode.Reply;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 34 item 6: whatever payload the log stored, the dead-letter path stores too, and a failed ack that cannot
 * dead-letter never lets the cursor pass its message. The reproduction: retryLimit 0, {@code p-0} with a payload
 * PostgreSQL's jsonb refuses and {@code p-1} with {@code "ok"}, both popped, {@code p-0} acked failed, {@code p-1}
 * acked completed. {@code p-0} must be dead-lettered, listed, shown as dead_letter and replayable with the very JSON
 * text it was pushed with; it was lost (neither redelivered nor in the DLQ, listed as completed).
 */
class DeadLetterSnapshotIT {
  @NodeFixture
  static TestNode node;

  /** Payloads the log takes and jsonb refuses: NUL, a number beyond numeric, a lone surrogate, NUL inside a key. */
  @ParameterizedTest
  @ValueSource(strings = {"\"\\u0000\"", "1e1000000", "\"\\ud800\"", "{\"a\\u0000b\":1}"})
  void aPayloadJsonbRefusesIsDeadLetteredVerbatimAndNeverSkipped(String payload) {
    String q = queueWithRetryLimitZero("dlq-snap");
    Lease p = pushAndPopBoth(q, payload);
    assertThat(p.rawData()).as("the log stored the payload as pushed").containsExactly(payload, "\"ok\"");

    failThenComplete(q, p, "handler threw");
    assertDeadLetteredVerbatim(q, p.pid(), payload, "handler threw");
  }

  @Test
  void anErrorTextWithANulIsFiledWithTheNulReplaced() {
    String q = queueWithRetryLimitZero("dlq-snap-err");
    Lease p = pushAndPopBoth(q, "{\"n\":1}");
    failThenComplete(q, p, "bad\u0000thing");
    assertDeadLetteredVerbatim(q, p.pid(), "{\"n\":1}", "bad\uFFFDthing");
  }

  /**
   * The reproduction's two acks: p-0 failed is dead-lettered (success, dlq); the dead letter released the batch (as in
   * Queen), so p-1's completed ack with that lease is refused, not silently applied, and p-1 redelivers and is acked.
   */
  private static void failThenComplete(String q, Lease p, String error) {
    JsonObject failed = ackOne(node, ack("p-0", p.pid(), "failed", p.lease()).put("error", error));
    assertThat(failed.getBoolean("success")).as("the failed ack: %s", failed).isTrue();
    assertThat(failed.getBoolean("dlq")).as("the failed ack: %s", failed).isTrue();
    JsonObject completed = ackOne(node, ack("p-1", p.pid(), "completed", p.lease()));
    assertThat(completed.getBoolean("success")).as("the next ack: %s", completed).isFalse();
    assertThat(completed.getString("error")).isEqualTo("invalid or expired lease");
    JsonObject again = popSome(node, q, "batch=10");
    assertThat(Wire.messages(again)).extracting(m -> m.getString("transactionId")).containsExactly("p-1");
    assertThat(ackOne(node, ack("p-1", p.pid(), "completed", again.getString("leaseId"))).getBoolean("success"))
        .isTrue();
  }

  @Test
  void aTransactionAckDeadLettersAPayloadJsonbRefusesVerbatim() {
    String q = queueWithRetryLimitZero("dlq-snap-tx");
    Lease p = pushAndPopBoth(q, "{\"a\\u0000b\":1e1000000}");
    Reply r = node.post("/api/v1/transaction", new JsonObject()
        .put("operations", new JsonArray()
            .add(new JsonObject().put("type", "ack").put("transactionId", "p-0").put("partitionId", p.pid())
                .put("status", "failed").put("error", "tx\u0000failed"))
            .add(new JsonObject().put("type", "ack").put("transactionId", "p-1").put("partitionId", p.pid())
                .put("status", "completed")))
        .put("requiredLeases", new JsonArray().add(p.lease())));
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    assertThat(r.json().getBoolean("success")).as(r.body()).isTrue();
    assertThat(r.json().getJsonArray("results").getJsonObject(0).getBoolean("dlq")).as(r.body()).isTrue();
    assertDeadLetteredVerbatim(q, p.pid(), "{\"a\\u0000b\":1e1000000}", "tx\uFFFDfailed");
  }

  /**
   * The filing itself fails (PostgreSQL refuses the row, as it refused the jsonb snapshot): the failed ack says so, and
   * the completed ack of the next message, with the same lease, cannot move the cursor past the poison; both
   * redeliver.
   */
  @Test
  void aFailedAckThatCannotDeadLetterNeverLetsTheCursorPassItsMessage() {
    String q = queueWithRetryLimitZero("dlq-snap-fail");
    Lease p = pushAndPopBoth(q, "{\"n\":0}");
    String refusal = refuseDeadLetters(p.pid());

    JsonObject failed = ackOne(node, ack("p-0", p.pid(), "failed", p.lease()).put("error", "boom"));
    assertThat(failed.getBoolean("success")).as("a filing that failed is no success: %s", failed).isFalse();
    assertThat(failed.getBoolean("dlq")).isFalse();
    assertThat(failed.getString("error")).as("it says why").contains("dead-lettering p-0 failed");
    JsonObject completed = ackOne(node, ack("p-1", p.pid(), "completed", p.lease()));
    assertThat(completed.getBoolean("success")).as("the batch was given back: %s", completed).isFalse();
    assertThat(Wire.cursor(p.pid(), Wire.QUEUE_MODE).get("committed")).as("nothing passed p-0").isEqualTo(-1L);
    assertThat(Wire.dlqCount(p.pid())).isZero();

    acceptDeadLetters(refusal);
    assertThat(Wire.messages(popSome(node, q, "batch=10"))).extracting(m -> m.getString("transactionId"))
        .as("p-0 redelivers, then p-1").containsExactly("p-0", "p-1");
  }

  @Test
  void aTransactionWhoseDeadLetterCannotBeFiledRollsBackAndReleasesTheBatch() {
    String q = queueWithRetryLimitZero("dlq-snap-txfail");
    Lease p = pushAndPopBoth(q, "{\"n\":0}");
    String refusal = refuseDeadLetters(p.pid());
    Reply r = node.post("/api/v1/transaction", new JsonObject()
        .put("operations", new JsonArray()
            .add(new JsonObject().put("type", "ack").put("transactionId", "p-0").put("partitionId", p.pid())
                .put("status", "failed"))
            .add(new JsonObject().put("type", "ack").put("transactionId", "p-1").put("partitionId", p.pid())
                .put("status", "completed")))
        .put("requiredLeases", new JsonArray().add(p.lease())));
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    assertThat(r.json().getBoolean("success")).as(r.body()).isFalse();
    assertThat(r.json().getString("reason")).isEqualTo("ack_rejected");
    assertThat(r.json().getString("error")).as(r.body()).contains("dead-lettering p-0 failed");
    JsonObject later = ackOne(node, ack("p-1", p.pid(), "completed", p.lease()));
    assertThat(later.getBoolean("success")).as("the lease was released: %s", later).isFalse();
    assertThat(Wire.cursor(p.pid(), Wire.QUEUE_MODE).get("committed")).isEqualTo(-1L);

    acceptDeadLetters(refusal);
    assertThat(Wire.messages(popSome(node, q, "batch=10"))).extracting(m -> m.getString("transactionId"))
        .containsExactly("p-0", "p-1");
  }

  // ---- helpers -----------------------------------------------------------------------------------------------------

  private record Lease(String pid, String lease, List<String> rawData) {}

  private static String queueWithRetryLimitZero(String prefix) {
    String q = Wire.queue(prefix);
    Wire.retryLimitZero(node, Wire.NONE, q);
    return q;
  }

  /** Pushes p-0 with {@code payload} (raw JSON text) and p-1 with "ok" in one request and pops both in one batch. */
  private static Lease pushAndPopBoth(String q, String payload) {
    Reply pushed = node.post("/api/v1/push", "{\"items\":[{\"queue\":\"" + q + "\",\"transactionId\":\"p-0\","
        + "\"payload\":" + payload + "},{\"queue\":\"" + q + "\",\"transactionId\":\"p-1\",\"payload\":\"ok\"}]}");
    assertThat(pushed.status()).as(pushed.body()).isEqualTo(201);
    Reply popped = Wire.pop(node, q, "batch=2");
    assertThat(popped.status()).as(popped.body()).isEqualTo(200);
    JsonObject j = popped.json();
    assertThat(Wire.messages(j)).extracting(m -> m.getString("transactionId")).containsExactly("p-0", "p-1");
    return new Lease(j.getString("partitionId"), j.getString("leaseId"), Wire.rawValues(popped.body(), "data"));
  }

  /**
   * p-0 is in the DLQ listing with its payload's JSON text verbatim and {@code error}, the message listing and detail
   * show it dead_letter, the cursor is past both messages, and a replay delivers the same JSON text again.
   */
  private static void assertDeadLetteredVerbatim(String q, String pid, String payload, String error) {
    var cursor = Wire.cursor(pid, Wire.QUEUE_MODE);
    assertThat(cursor.get("committed")).as("past p-0 (dead-lettered) and p-1 (completed)").isEqualTo(1L);
    Reply listing = node.get("/api/v1/dlq?queue=" + q);
    assertThat(listing.status()).as(listing.body()).isEqualTo(200);
    JsonArray rows = listing.json().getJsonArray("messages");
    assertThat(rows).as(listing.body()).hasSize(1);
    JsonObject row = rows.getJsonObject(0);
    assertThat(row.getString("transactionId")).isEqualTo("p-0");
    assertThat(row.getString("errorMessage")).isEqualTo(error);
    assertThat(Wire.rawValues(listing.body(), "data")).as("the snapshot, verbatim").containsExactly(payload);

    Reply messages = node.get("/api/v1/messages?queue=" + q);
    assertThat(messages.status()).as(messages.body()).isEqualTo(200);
    Map<String, String> status = new java.util.HashMap<>();
    for (JsonObject m : Wire.list(messages.json().getJsonArray("messages"))) {
      status.put(m.getString("transactionId"), m.getString("status"));
    }
    assertThat(status).as(messages.body()).containsEntry("p-0", "dead_letter").containsEntry("p-1", "completed");
    Reply detail = node.get("/api/v1/messages/" + pid + "/p-0");
    assertThat(detail.status()).as(detail.body()).isEqualTo(200);
    assertThat(detail.json().getString("status")).isEqualTo("dead_letter");
    assertThat(detail.json().getString("errorMessage")).isEqualTo(error);

    Reply replay = node.post("/api/v1/dlq/" + row.getString("id") + "/replay", "{}");
    assertThat(replay.status()).as(replay.body()).isEqualTo(200);
    Reply again = Wire.pop(node, q, "batch=10");
    assertThat(again.status()).as(again.body()).isEqualTo(200);
    assertThat(Wire.messages(again.json())).extracting(m -> m.getString("transactionId"))
        .containsExactly("dlq:" + row.getString("id"));
    assertThat(Wire.rawValues(again.body(), "data")).as("the replayed payload, verbatim").containsExactly(payload);
  }

  /**
   * Makes PostgreSQL refuse every dead-letter row of the partition, with the error the jsonb snapshot used to raise;
   * returns the trigger's name for {@link #acceptDeadLetters}.
   */
  private static String refuseDeadLetters(String pid) {
    String name = "refuse_dlq_" + Wire.shortId();
    Wire.execute("CREATE FUNCTION public." + name + "() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        + "RAISE EXCEPTION 'unsupported Unicode escape sequence' USING ERRCODE = '22P05'; END $$");
    Wire.execute("CREATE TRIGGER " + name + " BEFORE INSERT ON queen.log_dlq FOR EACH ROW WHEN (NEW.partition_id = '"
        + pid + "') EXECUTE FUNCTION public." + name + "()");
    return name;
  }

  private static void acceptDeadLetters(String name) {
    Wire.execute("DROP TRIGGER " + name + " ON queen.log_dlq");
    Wire.execute("DROP FUNCTION public." + name + "()");
  }
}
