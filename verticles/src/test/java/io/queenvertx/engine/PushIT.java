package io.queenvertx.engine;

import static io.queenvertx.testing.Wire.item;
import static io.queenvertx.testing.Wire.push;
import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.TestNode.Reply;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/** POST /api/v1/push (API.md §5.3, ENGINE.md §3): result shape, validation, dedup and fusion, over real HTTP. */
class PushIT {
  static final String UUID_RE = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";
  static final String CONTROL_CHARS =
      "bad body: control characters are not allowed in queue, partition or transactionId";

  @NodeFixture
  static TestNode node;

  // ---- result shape ----------------------------------------------------------------------------------------------

  @Test
  void pushAnswers201WithOneResultPerItemInRequestOrder() {
    String q = Wire.queue("push-order");
    Reply r = push(node, item(q, null, new JsonObject().put("n", 0), "t-a"),
        item(q, "p-2", new JsonObject().put("n", 1), "t-b"),
        item(q, null, "text", "t-c"));
    assertThat(r.status()).isEqualTo(201);
    assertThat(r.header("content-type")).startsWith("application/json");
    JsonArray arr = r.array();
    assertThat(arr).hasSize(3);
    String[] txns = {"t-a", "t-b", "t-c"};
    var ids = new HashSet<String>();
    for (int i = 0; i < 3; i++) {
      JsonObject o = arr.getJsonObject(i);
      assertThat(o.getInteger("index")).isEqualTo(i);
      assertThat(o.getString("transaction_id")).isEqualTo(txns[i]);
      assertThat(o.getString("queueName")).isEqualTo(q);
      assertThat(o.getString("status")).isEqualTo("queued");
      assertThat(o.getString("message_id")).matches(UUID_RE);
      ids.add(o.getString("message_id"));
    }
    assertThat(ids).as("every queued item gets its own message id").hasSize(3);
    assertThat(arr.getJsonObject(0).getString("partitionId")).isEqualTo(Wire.partitionId(q, "Default"));
    assertThat(arr.getJsonObject(1).getString("partitionId")).isEqualTo(Wire.partitionId(q, "p-2"));
  }

  @Test
  void aMissingTransactionIdBecomesTheMintedMessageId() {
    String q = Wire.queue("push-mint");
    JsonObject res = Wire.pushQueued(node, q, null, new JsonObject(), null);
    assertThat(res.getString("transaction_id")).isEqualTo(res.getString("message_id"));
    // a uuidv7: version nibble 7
    assertThat(res.getString("message_id")).matches(UUID_RE).satisfies(id -> assertThat(id.charAt(14)).isEqualTo('7'));
  }

  @Test
  void anEmptyItemsArrayIs201WithAnEmptyArray() {
    Reply r = node.post("/api/v1/push", "{\"items\":[]}");
    assertThat(r.status()).isEqualTo(201);
    assertThat(r.array()).isEmpty();
  }

  // ---- validation ------------------------------------------------------------------------------------------------

  @Test
  void aBodyWithoutItemsIs400BadBody() {
    assertBadBody(node.post("/api/v1/push", "{}"));
    assertBadBody(node.post("/api/v1/push", "{\"item\":[]}"));
  }

  @Test
  void anItemWithoutQueueIs400BadBody() {
    assertBadBody(node.post("/api/v1/push", "{\"items\":[{\"payload\":{}}]}"));
  }

  @Test
  void anItemWithoutPayloadIs400BadBodyAndWritesNothing() {
    String q = Wire.queue("push-nopayload");
    assertBadBody(node.post("/api/v1/push", new JsonObject().put("items", new JsonArray()
        .add(item(q, null, new JsonObject(), "ok-1"))
        .add(new JsonObject().put("queue", q).put("data", new JsonObject())))));
    assertThat(Wire.queueRows(q)).as("the whole batch is rejected: no queue was created").isZero();
  }

  @Test
  void invalidJsonIs400BadBody() {
    assertBadBody(node.post("/api/v1/push", "{\"items\":[{\"queue\":"));
    assertBadBody(node.post("/api/v1/push", "not json at all"));
  }

  @Test
  void aControlCharacterInQueuePartitionOrTransactionIdIs400AndRejectsTheBatch() {
    String q = Wire.queue("push-ctl");
    var cases = List.of(
        item(q + "\n", null, 1, "t"),
        item(q, "p\u0001", 1, "t"),
        item(q, null, 1, "t\u001f"));
    for (JsonObject bad : cases) {
      Reply r = push(node, item(q, null, 1, "fine"), bad);
      assertThat(r.status()).as("%s", bad.encode()).isEqualTo(400);
      assertThat(r.json().getMap())
          .containsExactlyInAnyOrderEntriesOf(Map.of("error", CONTROL_CHARS, "code", "bad_request"));
    }
    assertThat(Wire.queueRows(q)).as("the valid first item was not written either").isZero();
  }

  @Test
  void aTransactionIdOver65535BytesIs400NamingTheItem() {
    String q = Wire.queue("push-long");
    // 32768 two-byte characters: 65536 bytes although only 32768 chars, so the limit is in bytes
    String longTxn = "\u00e9".repeat(32768);
    Reply r = push(node, item(q, null, 1, "fine"), item(q, null, 1, longTxn));
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.json().getMap()).containsExactlyInAnyOrderEntriesOf(
        Map.of("error", "bad body: transactionId of item 1 exceeds the 65535-byte limit", "code", "bad_request"));
    assertThat(Wire.queueRows(q)).isZero();
  }

  @Test
  void aTransactionIdOfExactly65535BytesIsAccepted() {
    String q = Wire.queue("push-max");
    String txn = "x".repeat(65535);
    JsonObject res = Wire.pushQueued(node, q, null, 1, txn);
    assertThat(res.getString("transaction_id")).isEqualTo(txn);
  }

  @Test
  void aBodyOverQueenMaxBodyBytesIs413WithoutTheJsonEnvelope() {
    try (TestNode small = TestNode.start(Map.of("QUEEN_MAX_BODY_BYTES", "1024"))) {
      String q = Wire.queue("push-413");
      String under = new JsonObject().put("items", new JsonArray()
          .add(item(q, null, "x".repeat(800), "under"))).encode();
      assertThat(under.length()).isLessThan(1024);
      assertThat(small.post("/api/v1/push", under).status()).as("a body under the limit is served").isEqualTo(201);

      String over = new JsonObject().put("items", new JsonArray()
          .add(item(q, null, "x".repeat(2000), "over"))).encode();
      Reply r = small.post("/api/v1/push", over);
      assertThat(r.status()).isEqualTo(413);
      assertThat(r.body().strip()).as("413 is not the {\"error\":…} envelope").doesNotStartWith("{\"error\"");
      assertThat(Wire.frames(Wire.partitionId(q, "Default"))).as("only the small push was stored").isEqualTo(1);
    }
  }

  // ---- dedup -----------------------------------------------------------------------------------------------------

  @Test
  void duplicatePushInsideTheWindowAnswersTheOriginalIdAndWritesNothing() {
    String q = Wire.queue("dup-window");
    JsonObject first = Wire.pushQueued(node, q, "p", new JsonObject().put("v", 1), "order-1");
    String pid = Wire.partitionId(q, "p");
    long segs = Wire.segments(pid);
    long txns = Wire.txnRows(pid);
    long lastOffset = Wire.count("SELECT last_offset FROM queen.log_partitions WHERE id = '" + pid + "'");

    Reply r = push(node, item(q, "p", new JsonObject().put("v", 2), "order-1"));
    assertThat(r.status()).isEqualTo(201);
    JsonObject dup = r.array().getJsonObject(0);
    assertThat(dup.getString("status")).isEqualTo("duplicate");
    assertThat(dup.getString("message_id")).isEqualTo(first.getString("message_id"));
    assertThat(dup.getString("transaction_id")).isEqualTo("order-1");
    assertThat(Wire.segments(pid)).isEqualTo(segs);
    assertThat(Wire.txnRows(pid)).isEqualTo(txns);
    assertThat(Wire.count("SELECT last_offset FROM queen.log_partitions WHERE id = '" + pid + "'"))
        .isEqualTo(lastOffset);
  }

  @Test
  void aRepeatedTransactionIdInsideOneRequestIsADuplicateOfTheFirst() {
    String q = Wire.queue("dup-intra");
    Reply r = push(node, item(q, null, "a", "X"), item(q, null, "b", "Y"), item(q, null, "c", "X"));
    assertThat(r.status()).isEqualTo(201);
    JsonArray arr = r.array();
    assertThat(arr.getJsonObject(0).getString("status")).isEqualTo("queued");
    assertThat(arr.getJsonObject(1).getString("status")).isEqualTo("queued");
    assertThat(arr.getJsonObject(2).getString("status")).isEqualTo("duplicate");
    assertThat(arr.getJsonObject(2).getInteger("index")).isEqualTo(2);
    assertThat(arr.getJsonObject(2).getString("message_id")).isEqualTo(arr.getJsonObject(0).getString("message_id"));
    assertThat(Wire.frames(Wire.partitionId(q, "Default"))).isEqualTo(2);
    var popped = Wire.messages(Wire.popSome(node, q, "batch=10"));
    assertThat(popped).extracting(m -> m.getValue("data")).containsExactly("a", "b");
  }

  @Test
  void theSameTransactionIdInAnotherPartitionIsNotADuplicate() {
    String q = Wire.queue("dup-partition");
    JsonObject a = Wire.pushQueued(node, q, "p1", 1, "same");
    JsonObject b = Wire.pushQueued(node, q, "p2", 2, "same");
    assertThat(b.getString("message_id")).isNotEqualTo(a.getString("message_id"));
    assertThat(Wire.frames(Wire.partitionId(q, "p2"))).isEqualTo(1);
  }

  @Test
  void aDedupWindowOfZeroDisablesDedup() {
    String q = Wire.queue("dup-off");
    JsonObject cfg = Wire.configure(node, new JsonObject().put("queue", q)
        .put("options", new JsonObject().put("dedupWindowSeconds", 0)));
    assertThat(cfg.getJsonObject("options").getInteger("dedupWindowSeconds")).isZero();
    JsonObject a = Wire.pushQueued(node, q, null, 1, "again");
    JsonObject b = Wire.pushQueued(node, q, null, 2, "again");
    assertThat(b.getString("message_id")).isNotEqualTo(a.getString("message_id"));
    String pid = Wire.partitionId(q, "Default");
    assertThat(Wire.frames(pid)).isEqualTo(2);
    assertThat(Wire.txnRows(pid)).as("the hashes are written for every push, dedup on or off").isEqualTo(2);
  }

  // ---- fusion ----------------------------------------------------------------------------------------------------

  @Test
  void concurrentSinglePushesToOnePartitionFuseIntoFewSegmentsWithDenseOffsets() throws Exception {
    String q = Wire.queue("fusion");
    Wire.configure(node, new JsonObject().put("queue", q)); // the queue exists before the burst
    int n = 50;
    for (Reply r : concurrently(n, k -> push(node, item(q, null, new JsonObject().put("k", k), "burst-" + k)))) {
      assertThat(r.status()).isEqualTo(201);
      assertThat(r.array().getJsonObject(0).getString("status")).isEqualTo("queued");
    }
    String pid = Wire.partitionId(q, "Default");
    var segs = Wire.rows("SELECT base_offset, end_offset FROM queen.log_segments WHERE partition_id = '" + pid
        + "' ORDER BY base_offset");
    System.out.println("[PushIT] " + n + " concurrent single-message pushes produced " + segs.size() + " segments");
    assertThat(segs.size()).as("fusion packs concurrent pushes into shared segments").isLessThan(n);
    long expect = 0;
    for (var s : segs) {
      long base = (Long) s.get("base_offset");
      long end = (Long) s.get("end_offset");
      assertThat(base).as("segments are contiguous and non-overlapping").isEqualTo(expect);
      assertThat(end).isGreaterThanOrEqualTo(base);
      expect = end + 1;
    }
    assertThat(expect).as("offsets are dense 0..49").isEqualTo(n);
    assertThat(Wire.count("SELECT last_offset FROM queen.log_partitions WHERE id = '" + pid + "'")).isEqualTo(n - 1);
    var popped = Wire.messages(Wire.popSome(node, q, "batch=100"));
    assertThat(popped).hasSize(n);
    assertThat(popped).extracting(m -> m.getString("transactionId")).doesNotHaveDuplicates();
  }

  @Test
  void concurrentPushesOfOneTransactionIdStoreItOnce() throws Exception {
    String q = Wire.queue("dup-race");
    Wire.configure(node, new JsonObject().put("queue", q));
    List<Reply> replies = concurrently(20, k -> push(node, item(q, null, k, "the-one")));
    List<String> statuses = new ArrayList<>();
    var ids = new HashSet<String>();
    for (Reply r : replies) {
      assertThat(r.status()).isEqualTo(201);
      JsonObject o = r.array().getJsonObject(0);
      statuses.add(o.getString("status"));
      ids.add(o.getString("message_id"));
    }
    assertThat(statuses).filteredOn("queued"::equals).hasSize(1);
    assertThat(statuses).filteredOn("duplicate"::equals).hasSize(19);
    assertThat(ids).as("every duplicate names the one stored message").hasSize(1);
    assertThat(Wire.frames(Wire.partitionId(q, "Default"))).isEqualTo(1);
  }

  @Test
  void concurrentFirstPushesToANewQueueCreateItAndEachPartitionOnce() throws Exception {
    String q = Wire.queue("create-race");
    List<Reply> replies = concurrently(30, k -> push(node, item(q, "p" + (k % 5), k, "c-" + k)));
    for (Reply r : replies) {
      assertThat(r.status()).isEqualTo(201);
      assertThat(r.array().getJsonObject(0).getString("status")).isEqualTo("queued");
    }
    assertThat(Wire.queueRows(q)).isEqualTo(1);
    var parts = Wire.rows("SELECT p.name, p.last_offset FROM queen.log_partitions p JOIN queen.queues q "
        + "ON q.id = p.queue_id WHERE q.name = '" + q + "' ORDER BY p.name");
    assertThat(parts).extracting(m -> m.get("name")).containsExactly("p0", "p1", "p2", "p3", "p4");
    assertThat(parts).extracting(m -> m.get("last_offset")).containsOnly(5L);
  }

  /** Runs {@code n} calls at once (released together by a latch) and returns their answers in call order. */
  private static List<Reply> concurrently(int n, java.util.function.IntFunction<Reply> call) throws Exception {
    var pool = Executors.newFixedThreadPool(n);
    try {
      var go = new CountDownLatch(1);
      List<Future<Reply>> futures = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        int k = i;
        futures.add(pool.submit(() -> {
          go.await();
          return call.apply(k);
        }));
      }
      go.countDown();
      List<Reply> out = new ArrayList<>();
      for (Future<Reply> f : futures) out.add(f.get());
      return out;
    } finally {
      pool.shutdownNow();
    }
  }

  private static void assertBadBody(Reply r) {
    assertThat(r.status()).as(r.body()).isEqualTo(400);
    JsonObject j = r.json();
    assertThat(j.fieldNames()).containsExactlyInAnyOrder("error", "code");
    assertThat(j.getString("error")).startsWith("bad body: ");
  }
}
