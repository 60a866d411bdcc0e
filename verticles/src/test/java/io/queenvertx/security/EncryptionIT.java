package io.queenvertx.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queenvertx.kernel.Config;
import io.queenvertx.testing.TestDatabase;
import io.queenvertx.testing.TestNode;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** AES-256-GCM at rest (ENGINE.md §10): encrypted in segments and DLQ snapshots, plaintext on every read route. */
class EncryptionIT {
  static final String KEY = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
  static final String OTHER_KEY = "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100";
  static Config.Database db;
  static TestNode node;

  @BeforeAll
  static void start() {
    db = TestDatabase.get().fresh();
    node = TestNode.start(Map.of("QUEEN_ENCRYPTION_KEY", KEY), db);
  }

  @AfterAll
  static void stop() {
    node.close();
  }

  static JsonObject secret() {
    return new JsonObject().put("card", "4111-1111-1111-1111").put("amount", 41);
  }

  static void configure(TestNode n, String q, boolean enc, int retryLimit) {
    var r = n.post("/api/v1/configure", new JsonObject().put("queue", q)
        .put("options", new JsonObject().put("encryptionEnabled", enc).put("retryLimit", retryLimit)));
    assertThat(r.status()).isEqualTo(200);
  }

  static TestNode.Reply push(TestNode n, String q, String txn) {
    return n.post("/api/v1/push", new JsonObject().put("items", new JsonArray().add(new JsonObject()
        .put("queue", q).put("transactionId", txn).put("payload", secret()))));
  }

  static long segments(String pid) {
    return TestDatabase.queryLong(db, "SELECT count(*) FROM queen.log_segments WHERE partition_id = '" + pid + "'");
  }

  /** Dead-letters the only message of {@code q}; returns the DLQ row id. */
  static String deadLetter(String q, String txn) {
    var pop = node.get("/api/v1/pop/queue/" + q).json();
    var m = pop.getJsonArray("messages").getJsonObject(0);
    var ack = node.post("/api/v1/ack", new JsonObject().put("transactionId", txn)
        .put("partitionId", m.getString("partitionId")).put("leaseId", pop.getString("leaseId"))
        .put("status", "failed").put("error", "boom")).array().getJsonObject(0);
    assertThat(ack.getBoolean("dlq")).isTrue();
    return node.get("/api/v1/dlq?queue=" + q).json().getJsonArray("messages").getJsonObject(0).getString("id");
  }

  @Test
  void anEncryptedQueueStoresEnvelopesAndEveryReadRouteReturnsPlaintext() {
    String q = "enc-" + UUID.randomUUID();
    configure(node, q, true, 0);
    var pushed = push(node, q, "e-1").array().getJsonObject(0);
    String pid = pushed.getString("partitionId");
    // listing and detail decrypt and report the frame flag
    var listed = node.get("/api/v1/messages?queue=" + q).json().getJsonArray("messages").getJsonObject(0);
    assertThat(listed.getJsonObject("data")).isEqualTo(secret());
    assertThat(listed.getBoolean("isEncrypted")).isTrue();
    var detail = node.get("/api/v1/messages/" + pid + "/e-1").json();
    assertThat(detail.getJsonObject("data")).isEqualTo(secret());
    assertThat(detail.getBoolean("isEncrypted")).isTrue();

    String dlqId = deadLetter(q, "e-1");
    // the DLQ snapshot is the envelope, verbatim
    assertThat(TestDatabase.queryLong(db, "SELECT count(*) FROM queen.log_dlq WHERE id = '" + dlqId
        + "' AND payload::jsonb ? 'encrypted' AND payload::jsonb ? 'iv' AND payload::jsonb ? 'authTag' "
        + "AND NOT payload::jsonb ? 'card'"))
        .isEqualTo(1);
    var row = node.get("/api/v1/dlq?queue=" + q).json().getJsonArray("messages").getJsonObject(0);
    assertThat(row.getJsonObject("data")).isEqualTo(secret());
    assertThat(row.getBoolean("isEncrypted")).isTrue();

    // replay in place: decrypted, re-encrypted for the (same) destination, pops back as plaintext
    var moved = node.post("/api/v1/dlq/" + dlqId + "/replay", "{}").json();
    assertThat(moved.getString("result")).isEqualTo("moved");
    var pop = node.get("/api/v1/pop/queue/" + q).json().getJsonArray("messages").getJsonObject(0);
    assertThat(pop.getString("transactionId")).isEqualTo("dlq:" + dlqId);
    assertThat(pop.getJsonObject("data")).isEqualTo(secret());
    assertThat(segments(pid)).as("the original and the replayed frame").isEqualTo(2);
  }

  @Test
  void aReplayFromAnEncryptedQueueIntoAPlaintextOneStoresPlaintext() {
    String src = "enc-src-" + UUID.randomUUID();
    String dst = "plain-dst-" + UUID.randomUUID();
    configure(node, src, true, 0);
    configure(node, dst, false, 0);
    push(node, src, "p-1");
    String dlqId = deadLetter(src, "p-1");
    var moved = node.post("/api/v1/dlq/" + dlqId + "/replay", new JsonObject().put("queue", dst)).json();
    assertThat(moved.getString("result")).isEqualTo("moved");
    var listed = node.get("/api/v1/messages?queue=" + dst).json().getJsonArray("messages").getJsonObject(0);
    assertThat(listed.getJsonObject("data")).isEqualTo(secret());
    assertThat(listed.getBoolean("isEncrypted")).isFalse();
    // and it is plaintext at rest: dead-letter it again and look at the snapshot
    String again = deadLetter(dst, "dlq:" + dlqId);
    assertThat(TestDatabase.queryLong(db, "SELECT count(*) FROM queen.log_dlq WHERE id = '" + again
        + "' AND payload::jsonb->>'card' = '4111-1111-1111-1111'")).isEqualTo(1);
  }

  @Test
  void aNodeWithAnotherKeyReturnsTheEnvelopeAsStored() {
    String q = "enc-wrong-" + UUID.randomUUID();
    configure(node, q, true, 3);
    String pid = push(node, q, "w-1").array().getJsonObject(0).getString("partitionId");
    try (var other = TestNode.start(Map.of("QUEEN_ENCRYPTION_KEY", OTHER_KEY), db)) {
      var detail = other.get("/api/v1/messages/" + pid + "/w-1").json();
      var data = detail.getJsonObject("data");
      assertThat(data.fieldNames()).contains("encrypted", "iv", "authTag");
      assertThat(data.containsKey("card")).isFalse();
      assertThat(detail.getBoolean("isEncrypted")).isTrue();
      var pop = other.get("/api/v1/pop/queue/" + q).json().getJsonArray("messages").getJsonObject(0);
      assertThat(pop.getJsonObject("data").fieldNames()).contains("encrypted", "iv", "authTag");
    }
  }

  @Test
  void encryptionWithoutAKeyIsRefusedAndAMalformedKeyIsABootError() {
    try (var noKey = TestNode.start(Map.of(), db)) {
      var r = noKey.post("/api/v1/configure", new JsonObject().put("queue", "enc-nokey-" + UUID.randomUUID())
          .put("options", new JsonObject().put("encryptionEnabled", true)));
      assertThat(r.status()).isEqualTo(400);
      assertThat(r.json().getString("error")).contains("QUEEN_ENCRYPTION_KEY");
    }
    assertThatThrownBy(() -> TestNode.start(Map.of("QUEEN_ENCRYPTION_KEY", "not-hex"), db))
        .hasRootCauseInstanceOf(IllegalArgumentException.class)
        .hasStackTraceContaining("QUEEN_ENCRYPTION_KEY");
  }

  @Test
  void aPlaintextPayloadThatIsAValidEnvelopeIsDeliveredAsPushedNotDecrypted() {
    // a producer's own payload on a queue that is not encrypted happens to be an envelope under the node's key:
    // the frame is flagged plaintext, so the reader must hand it back verbatim, never decrypt it
    String q = "envelope-shaped-" + UUID.randomUUID();
    var envelope = new JsonObject(io.queenvertx.codec.EnvelopeCipher.fromHex(KEY)
        .encrypt(secret().toBuffer().getBytes()));
    var r = node.post("/api/v1/push", new JsonObject().put("items", new JsonArray().add(new JsonObject()
        .put("queue", q).put("transactionId", "env-1").put("payload", envelope))));
    assertThat(r.status()).isEqualTo(201);
    var pop = node.get("/api/v1/pop/queue/" + q + "?wait=false").json();
    assertThat(pop.getJsonArray("messages").getJsonObject(0).getJsonObject("data")).isEqualTo(envelope);
  }

  @Test
  void aNodeWithoutAKeyReplaysAnEncryptedSnapshotSealedAndAKeyedNodeReadsIt() {
    String q = "enc-keyless-" + UUID.randomUUID();
    configure(node, q, true, 0);
    push(node, q, "k-1");
    String dlqId = deadLetter(q, "k-1");
    try (var keyless = TestNode.start(Map.of(), db)) {
      var moved = keyless.post("/api/v1/dlq/" + dlqId + "/replay", "{}").json();
      assertThat(moved.getString("result")).isEqualTo("moved");
    }
    var listed = node.get("/api/v1/messages?queue=" + q + "&status=pending").json().getJsonArray("messages");
    var replayed = listed.stream().map(JsonObject.class::cast)
        .filter(m -> ("dlq:" + dlqId).equals(m.getString("transactionId"))).findFirst().orElseThrow();
    assertThat(replayed.getBoolean("isEncrypted")).isTrue();
    assertThat(replayed.getJsonObject("data")).isEqualTo(secret());
  }

  @Test
  void aNodeWithoutAKeyRefusesToReplayPlaintextIntoAnEncryptedQueue() {
    String src = "plain-src-" + UUID.randomUUID();
    String dst = "enc-dst-" + UUID.randomUUID();
    configure(node, src, false, 0);
    configure(node, dst, true, 0);
    push(node, src, "r-1");
    String dlqId = deadLetter(src, "r-1");
    try (var keyless = TestNode.start(Map.of(), db)) {
      var r = keyless.post("/api/v1/dlq/" + dlqId + "/replay", new JsonObject().put("queue", dst));
      assertThat(r.status()).isEqualTo(500);
      assertThat(r.json().getString("error")).contains(dst, "QUEEN_ENCRYPTION_KEY");
      assertThat(r.json().getBoolean("dlqRowRemoved")).isFalse();
    }
    assertThat(TestDatabase.queryLong(db, "SELECT count(*) FROM queen.log_dlq WHERE id = '" + dlqId + "'"))
        .isEqualTo(1);
    assertThat(node.get("/api/v1/messages?queue=" + dst).json().getJsonArray("messages")).isEmpty();
  }
}
