package io.queenvertx.log;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.kernel.Config;
import io.queenvertx.testing.Census;
import io.queenvertx.testing.TestDatabase;
import io.queenvertx.testing.TestNode;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Pushes large enough that the log writer packs and encrypts them on the worker pool instead of its event loop
 * ({@link Offload}: more than 64 KiB of payload): what they store reads back exactly, plain and encrypted, through
 * push, a transaction and the spool under push maintenance.
 */
class LargePushIT {
  static final String KEY = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
  static Config.Database db;
  static TestNode node;

  @BeforeAll
  static void start() throws Exception {
    db = TestDatabase.get().fresh();
    String spool = java.nio.file.Files.createTempDirectory("queen-large-spool").toString();
    node = TestNode.start(Map.of("QUEEN_ENCRYPTION_KEY", KEY, "FILE_BUFFER_DIR", spool, "FILE_BUFFER_FLUSH_MS", "50"),
        db);
  }

  @AfterAll
  static void stop() {
    node.close();
  }

  /** A payload of about {@code kib} KiB whose content differs per {@code tag}. */
  static JsonObject payload(String tag, int kib) {
    StringBuilder text = new StringBuilder(kib * 1024);
    while (text.length() < kib * 1024) text.append(tag).append(':').append(text.length()).append(' ');
    return new JsonObject().put("tag", tag).put("text", text.toString());
  }

  static String queue(String kind, boolean encrypted) {
    String q = kind + "-" + UUID.randomUUID();
    var r = node.post("/api/v1/configure", new JsonObject().put("queue", q)
        .put("options", new JsonObject().put("encryptionEnabled", encrypted)));
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    return q;
  }

  /** Every message of the queue, in delivery order, asserting there are {@code expected}. */
  static List<JsonObject> popAll(String q, int expected) {
    List<JsonObject> messages = Census.popAll(node.baseUrl(), q, null, Duration.ofSeconds(30)).messages();
    assertThat(messages).hasSize(expected);
    return messages;
  }

  /** The queue's one message pops back with this transaction id and payload, stored encrypted or not. */
  static void assertOnlyMessage(String q, String txn, JsonObject payload, boolean encrypted) {
    var m = popAll(q, 1).get(0);
    assertThat(m.getString("transactionId")).isEqualTo(txn);
    assertThat(m.getJsonObject("data")).isEqualTo(payload);
    assertEncryptedFlag(q, encrypted);
  }

  static void assertEncryptedFlag(String q, boolean encrypted) {
    var listed = node.get("/api/v1/messages?queue=" + q).json().getJsonArray("messages");
    assertThat(listed).isNotEmpty();
    for (int i = 0; i < listed.size(); i++) {
      assertThat(listed.getJsonObject(i).getBoolean("isEncrypted")).isEqualTo(encrypted);
    }
  }

  @Test
  void aLargeSinglePayloadReadsBackExactlyPlainAndEncrypted() {
    for (boolean encrypted : new boolean[] {false, true}) {
      String q = queue("large-one", encrypted);
      JsonObject big = payload(q, 300);
      var r = node.post("/api/v1/push", new JsonObject().put("items", new JsonArray()
          .add(new JsonObject().put("queue", q).put("transactionId", "big").put("payload", big))));
      assertThat(r.status()).as(r.body()).isEqualTo(201);
      assertThat(r.array().getJsonObject(0).getString("status")).isEqualTo("queued");
      assertOnlyMessage(q, "big", big, encrypted);
    }
  }

  @Test
  void aBatchOfManyItemsOver64KiBLandsInOrderWithItsOwnResults() {
    for (boolean encrypted : new boolean[] {false, true}) {
      String q = queue("large-batch", encrypted);
      JsonArray items = new JsonArray();
      for (int i = 0; i < 150; i++) {
        items.add(new JsonObject().put("queue", q).put("transactionId", "t" + i).put("payload", payload("i" + i, 1)));
      }
      var r = node.post("/api/v1/push", new JsonObject().put("items", items));
      assertThat(r.status()).as(r.body()).isEqualTo(201);
      JsonArray results = r.array();
      for (int i = 0; i < 150; i++) {
        assertThat(results.getJsonObject(i).getString("status")).isEqualTo("queued");
        assertThat(results.getJsonObject(i).getString("transaction_id")).isEqualTo("t" + i);
      }
      List<JsonObject> popped = popAll(q, 150);
      for (int i = 0; i < 150; i++) {
        assertThat(popped.get(i).getString("transactionId")).isEqualTo("t" + i);
        assertThat(popped.get(i).getJsonObject("data")).isEqualTo(payload("i" + i, 1));
      }
      assertEncryptedFlag(q, encrypted);
    }
  }

  @Test
  void aLargeTransactionPushReadsBackExactly() {
    String q = queue("large-tx", true);
    JsonObject big = payload(q, 200);
    var r = node.post("/api/v1/transaction", new JsonObject().put("operations", new JsonArray()
        .add(new JsonObject().put("type", "push").put("items", new JsonArray()
            .add(new JsonObject().put("queue", q).put("transactionId", "tx-big").put("payload", big))))));
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    assertThat(r.json().getBoolean("success")).as(r.body()).isTrue();
    assertOnlyMessage(q, "tx-big", big, true);
  }

  @Test
  void aLargePushBufferedUnderMaintenanceIsReplayedExactly() {
    String q = queue("large-spool", true);
    JsonObject big = payload(q, 200);
    assertThat(node.post("/api/v1/system/maintenance", new JsonObject().put("enabled", true)).status())
        .isEqualTo(200);
    try {
      var r = node.post("/api/v1/push", new JsonObject().put("items", new JsonArray()
          .add(new JsonObject().put("queue", q).put("transactionId", "spooled").put("payload", big))));
      assertThat(r.status()).as(r.body()).isEqualTo(201);
      assertThat(r.array().getJsonObject(0).getString("status")).isEqualTo("buffered");
    } finally {
      assertThat(node.post("/api/v1/system/maintenance", new JsonObject().put("enabled", false)).status())
          .isEqualTo(200);
    }
    Awaitility.await().atMost(Duration.ofSeconds(30))
        .until(() -> node.get("/api/v1/system/maintenance").json().getLong("bufferedMessages") == 0);
    assertOnlyMessage(q, "spooled", big, true);
  }
}
