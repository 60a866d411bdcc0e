package io.queenvertx.messages;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.TestNode.Reply;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonObject;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Ownership gating of the message and DLQ routes with QUEEN_TENANCY_HEADER on (seed "Ownership gating", guarantee 4
 * of the retry route, API.md §3, ENGINE.md §12.3): another tenant's partition or row looks exactly like a missing one.
 */
class MessageTenancyIT {
  static final String HEADER = "x-queen-tenant";

  @NodeFixture(env = {"QUEEN_TENANCY_HEADER=true", "QUEEN_KV_TRUSTED_PROXY=true"})
  static TestNode node;

  static Map<String, String> tenant(String id) {
    return Map.of(HEADER, id);
  }

  /** A fresh tenant A with a retryLimit-0 queue holding one dead-lettered and one live message. */
  record Owned(Map<String, String> a, String queue, String pid, String deadTxn, String liveTxn, String rowId) {}

  static Owned owned() {
    var a = tenant(UUID.randomUUID().toString());
    String q = Wire.queue("ten");
    Wire.retryLimitZero(node, a, q);
    Wire.deadLetter(node, a, q, null, new JsonObject().put("secret", "a"), "dead-1", null, "boom");
    Wire.pushOne(node, a, q, null, new JsonObject().put("secret", "live"), "live-1");
    String pid = Wire.partitionId(q, "Default");
    return new Owned(a, q, pid, "dead-1", "live-1", Wire.onlyDlqId(pid));
  }

  /** The body with the path-echoed partition id replaced, so a foreign and a missing partition compare. */
  static String normalised(Reply r, String pid) {
    return r.body().replace(pid, "<pid>");
  }

  static void assertSame404(Reply foreign, String foreignPid, Reply missing, String missingPid) {
    assertThat(foreign.status()).as("foreign partition answered %s", foreign.body()).isEqualTo(404);
    assertThat(missing.status()).as("missing partition answered %s", missing.body()).isEqualTo(404);
    assertThat(normalised(foreign, foreignPid)).as("a foreign partition looks exactly like a missing one")
        .isEqualTo(normalised(missing, missingPid));
    assertThat(foreign.header("content-type")).isEqualTo(missing.header("content-type"));
  }

  @Test
  void aForeignPartitionOnGetMessageIsTheSame404AsAMissingOne() {
    Owned o = owned();
    var b = tenant(UUID.randomUUID().toString());
    String missing = UUID.randomUUID().toString();
    assertThat(node.get("/api/v1/messages/" + o.pid() + "/" + o.liveTxn(), o.a()).status())
        .as("the owner reads it").isEqualTo(200);
    for (String txn : new String[] {o.liveTxn(), o.deadTxn()}) {
      Reply foreign = node.get("/api/v1/messages/" + o.pid() + "/" + txn, b);
      Reply absent = node.get("/api/v1/messages/" + missing + "/" + txn, b);
      assertSame404(foreign, o.pid(), absent, missing);
      assertThat(foreign.json()).isEqualTo(io.queenvertx.testing.Wire.error(404, "Message not found"));
      assertThat(foreign.body()).doesNotContain("secret");
    }
  }

  @Test
  void aForeignPartitionOnDeleteMessageIsTheSame404AndTheRowSurvives() {
    Owned o = owned();
    var b = tenant(UUID.randomUUID().toString());
    String missing = UUID.randomUUID().toString();
    Reply foreign = node.delete("/api/v1/messages/" + o.pid() + "/" + o.deadTxn(), b);
    Reply absent = node.delete("/api/v1/messages/" + missing + "/" + o.deadTxn(), b);
    assertSame404(foreign, o.pid(), absent, missing);
    assertThat(foreign.json().getString("error")).isEqualTo("Message not found");
    assertThat(Wire.dlqRowExists(o.rowId())).as("B deleted nothing").isTrue();
    assertThat(node.delete("/api/v1/messages/" + o.pid() + "/" + o.deadTxn(), o.a()).status())
        .as("the owner can delete it").isEqualTo(200);
  }

  @Test
  void aForeignPartitionOnRetryIsTheSame404AndNothingIsMoved() {
    Owned o = owned();
    var b = tenant(UUID.randomUUID().toString());
    String missing = UUID.randomUUID().toString();
    long frames = Wire.frames(o.pid());
    Reply foreign = node.post("/api/v1/messages/" + o.pid() + "/" + o.deadTxn() + "/retry", "{}", b);
    Reply absent = node.post("/api/v1/messages/" + missing + "/" + o.deadTxn() + "/retry", "{}", b);
    assertSame404(foreign, o.pid(), absent, missing);
    assertThat(foreign.json().getString("error")).isEqualTo("Message not found");
    assertThat(Wire.dlqRowExists(o.rowId())).isTrue();
    assertThat(Wire.frames(o.pid())).as("no payload was pushed for B").isEqualTo(frames);
    Reply mine = node.post("/api/v1/messages/" + o.pid() + "/" + o.deadTxn() + "/retry", "{}", o.a());
    assertThat(mine.status()).as("the owner's retry answered %s", mine.body()).isEqualTo(200);
    assertThat(mine.json().getString("result")).isEqualTo("moved");
  }

  @Test
  void aReplayOfAnotherTenantsRowIdIs404GoneAndTheRowSurvives() {
    Owned o = owned();
    var b = tenant(UUID.randomUUID().toString());
    long frames = Wire.frames(o.pid());
    long queuesBefore = Wire.count("SELECT count(*) FROM queen.queues WHERE name = '" + o.queue() + "'");
    Reply foreign = node.post("/api/v1/dlq/" + o.rowId() + "/replay", "", b);
    assertThat(foreign.status()).as("B's replay answered %s", foreign.body()).isEqualTo(404);
    assertThat(foreign.json()).isEqualTo(new JsonObject().put("success", false).put("result", "gone")
        .put("dlqId", o.rowId()).put("error", "Message not found").put("message", Wire.GONE_ID_MESSAGE)
        .put("code", "not_found"));
    String unknown = UUID.randomUUID().toString();
    Reply absent = node.post("/api/v1/dlq/" + unknown + "/replay", "", b);
    assertThat(foreign.body().replace(o.rowId(), "<id>")).isEqualTo(absent.body().replace(unknown, "<id>"));
    assertThat(Wire.dlqRowExists(o.rowId())).as("the row survives").isTrue();
    assertThat(Wire.frames(o.pid())).isEqualTo(frames);
    assertThat(Wire.count("SELECT count(*) FROM queen.queues WHERE name = '" + o.queue() + "'"))
        .as("the destination is not provisioned under B").isEqualTo(queuesBefore);
    Reply mine = node.post("/api/v1/dlq/" + o.rowId() + "/replay", "", o.a());
    assertThat(mine.status()).as("the owner's replay answered %s", mine.body()).isEqualTo(200);
    assertThat(mine.json().getString("result")).isEqualTo("moved");
  }

  @Test
  void nameAddressedListingsAreScopedToTheRequestTenant() {
    Owned o = owned();
    var b = tenant(UUID.randomUUID().toString());
    Reply aDlq = node.get("/api/v1/dlq?queue=" + o.queue(), o.a());
    assertThat(aDlq.json().getJsonArray("messages")).hasSize(1);
    Reply bDlq = node.get("/api/v1/dlq?queue=" + o.queue(), b);
    assertThat(bDlq.status()).isEqualTo(200);
    assertThat(bDlq.json().getJsonArray("messages")).isEmpty();
    Reply bList = node.get("/api/v1/messages?queue=" + o.queue(), b);
    assertThat(bList.status()).isEqualTo(200);
    assertThat(bList.json().getJsonArray("messages")).isEmpty();
    Reply bPurge = node.delete("/api/v1/dlq?queue=" + o.queue(), b);
    assertThat(bPurge.json().getInteger("deleted")).isZero();
    assertThat(Wire.dlqRowExists(o.rowId())).isTrue();
  }

  @Test
  void aMalformedTenantHeaderIs400() {
    JsonObject expected = Wire.error(400, "invalid x-queen-tenant header (must be a UUID)");
    var bad = tenant("not-a-uuid");
    String pid = UUID.randomUUID().toString();
    Reply[] replies = {
        node.get("/api/v1/messages", bad),
        node.get("/api/v1/messages/" + pid + "/t", bad),
        node.delete("/api/v1/messages/" + pid + "/t", bad),
        node.post("/api/v1/messages/" + pid + "/t/retry", "{}", bad),
        node.get("/api/v1/dlq", bad),
        node.delete("/api/v1/dlq?queue=x", bad),
        node.post("/api/v1/dlq/" + pid + "/replay", "", bad)};
    for (Reply r : replies) {
      assertThat(r.status()).as("%s", r.body()).isEqualTo(400);
      assertThat(r.json()).isEqualTo(expected);
    }
  }
}
