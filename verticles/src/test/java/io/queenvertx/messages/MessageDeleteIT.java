package io.queenvertx.messages;

import static io.queenvertx.testing.Wire.NONE;
import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.TestNode.Reply;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonObject;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * DELETE /api/v1/messages/:partitionId/:transactionId (seed "DELETE /api/v1/messages/...", API.md §5.9, ENGINE.md
 * §7.2): it deletes dead-letter rows only, every group's, and a no-op is a 404, never a 200 with success:false.
 */
class MessageDeleteIT {
  @NodeFixture
  static TestNode node;

  static Reply delete(String pid, String txn) {
    return node.delete("/api/v1/messages/" + pid + "/" + txn);
  }

  static JsonObject notFound(String pid, String txn) {
    return new JsonObject().put("success", false).put("partitionId", pid).put("transactionId", txn)
        .put("error", "Message not found").put("message", Wire.NO_DLQ_ROW_DELETE).put("code", "not_found");
  }

  @Test
  void deletingADeadLetteredAddressAnswersTheSeedsSuccessBodyAndRemovesEveryGroupsRow() {
    String q = Wire.queue("del-two-groups");
    Wire.retryLimitZero(node, NONE, q);
    String pid = Wire.pushToDefault(node, q, new JsonObject().put("amount", 41), "order-4471");
    Wire.failUnder(node, NONE, q, null, "order-4471", "invoicer", "boom");
    Wire.failUnder(node, NONE, q, null, "order-4471", "auditor", "boom");
    assertThat(Wire.dlqCount(pid)).as("precondition: one row per group").isEqualTo(2);

    Reply r = delete(pid, "order-4471");
    assertThat(r.status()).as("DELETE answered %s", r.body()).isEqualTo(200);
    assertThat(r.header("content-type")).startsWith("application/json");
    assertThat(r.json()).isEqualTo(new JsonObject().put("success", true).put("partitionId", pid)
        .put("transactionId", "order-4471").put("message", "Message deleted successfully"));
    assertThat(Wire.dlqCount(pid)).as("every group's record for the address is gone").isZero();
  }

  @Test
  void deletingOneAddressLeavesOtherAddressesDeadLetterRows() {
    String q = Wire.queue("del-other-address");
    Wire.retryLimitZero(node, NONE, q);
    Wire.deadLetter(node, q, null, 1, "keep-me", null, "boom");
    Wire.deadLetter(node, q, null, 2, "drop-me", null, "boom");
    String pid = Wire.partitionId(q, "Default");
    assertThat(delete(pid, "drop-me").status()).isEqualTo(200);
    assertThat(Wire.dlqRows(pid)).extracting(row -> row.get("transaction_id")).containsExactly("keep-me");
  }

  @Test
  void aLiveMessageCannotBeDeletedAndAnswers404WithTheSeedsBody() {
    String q = Wire.queue("del-live");
    String pid = Wire.pushToDefault(node, q, 1, "live-1");
    long frames = Wire.frames(pid);
    Reply r = delete(pid, "live-1");
    assertThat(r.status()).as("DELETE of a live message answered %s", r.body()).isEqualTo(404);
    assertThat(r.json()).isEqualTo(notFound(pid, "live-1"));
    assertThat(Wire.frames(pid)).as("the live frame is untouched").isEqualTo(frames);
    assertThat(node.get("/api/v1/messages/" + pid + "/live-1").status()).isEqualTo(200);
  }

  @Test
  void aSecondDeleteAndAnUnknownOrMalformedPartitionAre404() {
    String q = Wire.queue("del-twice");
    String pid = Wire.deadLettered(node, q, null, 1, "twice", null, "boom");
    assertThat(delete(pid, "twice").status()).isEqualTo(200);
    Reply again = delete(pid, "twice");
    assertThat(again.status()).isEqualTo(404);
    assertThat(again.json()).isEqualTo(notFound(pid, "twice"));
    String unknown = UUID.randomUUID().toString();
    Reply u = delete(unknown, "twice");
    assertThat(u.status()).isEqualTo(404);
    assertThat(u.json()).isEqualTo(notFound(unknown, "twice"));
    Reply m = delete("not-a-uuid", "twice");
    assertThat(m.status()).as("malformed partition id: %s", m.body()).isEqualTo(404);
    assertThat(m.json()).isEqualTo(notFound("not-a-uuid", "twice"));
  }
}
