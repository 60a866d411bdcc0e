package io.queenvertx.messages;

import static io.queenvertx.testing.Wire.NONE;
import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.TestNode.Reply;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonObject;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * POST /api/v1/messages/:partitionId/:transactionId/retry (seed "POST .../retry", API.md §5.10, ENGINE.md §7.3): the
 * address-keyed move of the newest dead-letter row, its verdict body, and its 404s.
 */
class MessageRetryIT {
  static final Set<String> VERDICT_KEYS = Set.of("success", "result", "queue", "partition", "consumerGroup", "dlqId",
      "originalTransactionId", "replayedAs", "dlqRowRemoved");
  static final Set<String> REPLAYED_AS_KEYS = Set.of("index", "message_id", "transaction_id", "queueName", "status",
      "offset");

  @NodeFixture
  static TestNode node;

  static Reply retry(String pid, String txn) {
    return node.post("/api/v1/messages/" + pid + "/" + txn + "/retry", "{}");
  }

  static JsonObject gone(String pid, String txn) {
    return new JsonObject().put("success", false).put("partitionId", pid).put("transactionId", txn)
        .put("error", "Message not found").put("message", Wire.NO_DLQ_ROW_RETRY).put("code", "not_found");
  }

  static long lastOffset(String pid) {
    return Wire.count("SELECT last_offset FROM queen.log_partitions WHERE id = '" + pid + "'");
  }

  @Test
  void aRetryOfADeadLetteredAddressMovesItAndAnswersTheSeedsVerdictFieldForField() {
    String q = Wire.queue("retry-moved");
    JsonObject payload = new JsonObject().put("amount", 41);
    String pid = Wire.deadLettered(node, q, "eu-1", payload, "order-4471", "invoicer", "boom");
    String dlqId = Wire.onlyDlqId(pid);
    long expectedOffset = lastOffset(pid) + 1;

    Reply r = retry(pid, "order-4471");
    assertThat(r.status()).as("retry answered %s", r.body()).isEqualTo(200);
    JsonObject v = r.json();
    assertThat(v.fieldNames()).as("%s", v.encode()).containsExactlyInAnyOrderElementsOf(VERDICT_KEYS);
    assertThat(v.getBoolean("success")).isTrue();
    assertThat(v.getString("result")).isEqualTo("moved");
    assertThat(v.getString("queue")).isEqualTo(q);
    assertThat(v.getString("partition")).isEqualTo("eu-1");
    assertThat(v.getString("consumerGroup")).isEqualTo("invoicer");
    assertThat(v.getString("dlqId")).isEqualTo(dlqId);
    assertThat(v.getString("originalTransactionId")).isEqualTo("order-4471");
    assertThat(v.getBoolean("dlqRowRemoved")).isTrue();
    JsonObject as = v.getJsonObject("replayedAs");
    assertThat(as.fieldNames()).as("%s", as.encode()).containsExactlyInAnyOrderElementsOf(REPLAYED_AS_KEYS);
    assertThat(as.getInteger("index")).isZero();
    assertThat(Wire.mustBeUuid(as.getString("message_id"))).isNotEqualTo(Wire.ZERO_UUID);
    assertThat(as.getString("transaction_id")).isEqualTo("dlq:" + dlqId);
    assertThat(as.getString("queueName")).isEqualTo(q);
    assertThat(as.getString("status")).isEqualTo("queued");
    assertThat(as.getLong("offset")).as("the new frame lands at the tail").isEqualTo(expectedOffset);
    assertThat(Wire.dlqRowExists(dlqId)).isFalse();

    JsonObject p = Wire.popSome(node, NONE, q, "eu-1", "invoicer");
    assertThat(p.getJsonArray("messages")).hasSize(1);
    JsonObject m = p.getJsonArray("messages").getJsonObject(0);
    assertThat(m.getString("transactionId")).isEqualTo("dlq:" + dlqId);
    assertThat(m.getValue("data")).as("the original payload survives").isEqualTo(payload);
    assertThat(m.getString("id")).isEqualTo(as.getString("message_id"));
  }

  @Test
  void aRetryMovesOnlyTheNewestRowOfTheAddressAndTheOtherGroupsRowSurvives() throws Exception {
    String q = Wire.queue("retry-newest");
    Wire.retryLimitZero(node, NONE, q);
    String pid = Wire.pushToDefault(node, q, new JsonObject().put("k", 1), "shared");
    Wire.failUnder(node, NONE, q, null, "shared", "older", "boom-older");
    Wire.awaitClockPastNewestDlq(pid);
    Wire.failUnder(node, NONE, q, null, "shared", "newer", "boom-newer");
    var rows = Wire.dlqRows(pid);
    assertThat(rows).extracting(x -> x.get("consumer_group")).as("failed_at DESC").containsExactly("newer", "older");
    String newerId = (String) rows.get(0).get("id");
    String olderId = (String) rows.get(1).get("id");

    Reply r = retry(pid, "shared");
    assertThat(r.status()).as("retry answered %s", r.body()).isEqualTo(200);
    assertThat(r.json().getString("consumerGroup")).isEqualTo("newer");
    assertThat(r.json().getString("dlqId")).isEqualTo(newerId);
    assertThat(Wire.dlqRowExists(newerId)).isFalse();
    assertThat(Wire.dlqRowExists(olderId)).as("the other group's record survives").isTrue();

    Reply second = retry(pid, "shared");
    assertThat(second.status()).as("the surviving row is now the newest: %s", second.body()).isEqualTo(200);
    assertThat(second.json().getString("consumerGroup")).isEqualTo("older");
    assertThat(Wire.dlqCount(pid)).isZero();
  }

  @Test
  void theRetryRouteIgnoresItsBodyAndAlwaysReplaysInPlace() {
    String q = Wire.queue("retry-body");
    String elsewhere = Wire.queue("retry-elsewhere");
    String pid = Wire.deadLettered(node, q, "eu-1", 1, "rb-1", null, "boom");
    Reply r = node.post("/api/v1/messages/" + pid + "/rb-1/retry",
        new JsonObject().put("queue", elsewhere).put("partition", "eu-9").encode());
    assertThat(r.status()).as("retry answered %s", r.body()).isEqualTo(200);
    assertThat(r.json().getString("queue")).isEqualTo(q);
    assertThat(r.json().getString("partition")).isEqualTo("eu-1");
    assertThat(Wire.count("SELECT count(*) FROM queen.queues WHERE name = '" + elsewhere + "'")).isZero();
  }

  @Test
  void aRetryOfALiveMessageIs404WithTheAddressBodyAndWritesNothing() {
    String q = Wire.queue("retry-live");
    String pid = Wire.pushToDefault(node, q, 1, "live-1");
    long frames = Wire.frames(pid);
    Reply r = retry(pid, "live-1");
    assertThat(r.status()).as("retry of a live message answered %s", r.body()).isEqualTo(404);
    JsonObject body = r.json();
    assertThat(body.fieldNames()).as("the same 404 shape as DELETE")
        .containsExactlyInAnyOrder("success", "partitionId", "transactionId", "error", "message", "code");
    assertThat(body).isEqualTo(gone(pid, "live-1"));
    assertThat(Wire.frames(pid)).isEqualTo(frames);
  }

  @Test
  void aSecondRetryAfterTheMoveIs404AndLandsNoSecondFrame() {
    String q = Wire.queue("retry-twice");
    String pid = Wire.deadLettered(node, q, null, 1, "twice", null, "boom");
    assertThat(retry(pid, "twice").status()).isEqualTo(200);
    long frames = Wire.frames(pid);
    Reply again = retry(pid, "twice");
    assertThat(again.status()).as("second retry answered %s", again.body()).isEqualTo(404);
    assertThat(again.json()).isEqualTo(gone(pid, "twice"));
    assertThat(Wire.frames(pid)).isEqualTo(frames);
  }

  @Test
  void aRetryOnAnUnknownOrMalformedPartitionIs404WithTheAddressBody() {
    String unknown = UUID.randomUUID().toString();
    Reply u = retry(unknown, "x");
    assertThat(u.status()).isEqualTo(404);
    assertThat(u.json()).isEqualTo(gone(unknown, "x"));
    Reply m = retry("not-a-uuid", "x");
    assertThat(m.status()).as("malformed partition id: %s", m.body()).isEqualTo(404);
    assertThat(m.json()).isEqualTo(gone("not-a-uuid", "x"));
  }
}
