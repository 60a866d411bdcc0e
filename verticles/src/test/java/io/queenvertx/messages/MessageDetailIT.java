package io.queenvertx.messages;

import static io.queenvertx.testing.Wire.NONE;
import static io.queenvertx.testing.Wire.item;
import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.TestNode.Reply;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * GET /api/v1/messages/:partitionId/:transactionId (seed "GET /api/v1/messages/:partitionId/:transactionId", API.md
 * §5.9, ENGINE.md §8.2): the detail body, the resolution order (hash probe, covering segment, segment scan) and its
 * 404/500 answers.
 */
class MessageDetailIT {
  /** Every key of the seed's example body, plus queueConfig, which the seed names in its notes. */
  static final Set<String> DETAIL_KEYS = Set.of("id", "transactionId", "data", "payload", "traceId", "producerSub",
      "createdAt", "partitionId", "partition", "isEncrypted", "queue", "queuePath", "namespace", "task", "status",
      "errorMessage", "retryCount", "leaseExpiresAt", "consumerGroups", "mode", "queueConfig");
  static final JsonObject NOT_FOUND = Wire.error(404, "Message not found");

  @NodeFixture
  static TestNode node;

  static Reply detail(String pid, String txn) {
    return node.get("/api/v1/messages/" + pid + "/" + txn);
  }

  static JsonObject detailOk(String pid, String txn) {
    Reply r = detail(pid, txn);
    assertThat(r.status()).as("GET /api/v1/messages/%s/%s answered %s", pid, txn, r.body()).isEqualTo(200);
    assertThat(r.header("content-type")).startsWith("application/json");
    return r.json();
  }

  static void assertNotFound(Reply r, String what) {
    assertThat(r.status()).as("%s answered %s", what, r.body()).isEqualTo(404);
    assertThat(r.json()).as(what).isEqualTo(NOT_FOUND);
  }

  static Reply popBatch(String path) {
    Reply r = node.get(path);
    assertThat(r.status()).as("pop %s answered %s", path, r.body()).isEqualTo(200);
    return r;
  }

  // ---- the body --------------------------------------------------------------------------------------------------

  @Test
  void theDetailCarriesEveryFieldOfTheSeedsExampleWithPerGroupStateAndTheQueueModeLease() {
    String ns = "ns" + Wire.shortId();
    String q = ns + ".invoice.detail";
    Wire.configure(node, NONE, q, new JsonObject().put("leaseTime", 300).put("retryLimit", 5));
    JsonArray pushed = Wire.pushAll(node, NONE, List.of(
        item(q, "eu-1", new JsonObject().put("amount", 40), "order-4470"),
        item(q, "eu-1", new JsonObject().put("amount", 41), "order-4471")));
    String pid = Wire.partitionId(q, "eu-1");
    // invoicer consumes the first message and commits it: it holds no lease and has not passed the second
    String base = "/api/v1/pop/queue/" + q + "/partition/eu-1?batch=1";
    JsonObject g = popBatch(base + "&consumerGroup=invoicer&subscriptionMode=all").json();
    assertThat(g.getJsonArray("messages").getJsonObject(0).getString("transactionId")).isEqualTo("order-4470");
    assertThat(Wire.ack(node, NONE, new JsonObject().put("transactionId", "order-4470").put("partitionId", pid)
        .put("leaseId", g.getString("leaseId")).put("status", "completed").put("consumerGroup", "invoicer"))
        .getBoolean("success")).isTrue();
    // queue mode pops the first message and keeps its lease
    popBatch(base);

    JsonObject d = detailOk(pid, "order-4471");
    assertThat(d.fieldNames()).as("keys of %s", d.encode()).containsExactlyInAnyOrderElementsOf(DETAIL_KEYS);
    assertThat(d.getString("id")).isEqualTo(pushed.getJsonObject(1).getString("message_id"));
    assertThat(d.getString("transactionId")).isEqualTo("order-4471");
    assertThat(d.getValue("data")).isEqualTo(new JsonObject().put("amount", 41));
    assertThat(d.getValue("payload")).isEqualTo(new JsonObject().put("amount", 41));
    assertThat(d.getValue("traceId")).isNull();
    assertThat(d.getValue("producerSub")).as("no JWT, no producer sub").isNull();
    assertThat(d.getString("createdAt")).matches(Wire.ISO_MS);
    assertThat(d.getString("partitionId")).isEqualTo(pid);
    assertThat(d.getString("partition")).isEqualTo("eu-1");
    assertThat(d.getBoolean("isEncrypted")).isFalse();
    assertThat(d.getString("queue")).isEqualTo(q);
    assertThat(d.getString("queuePath")).isEqualTo(q + "/eu-1");
    assertThat(d.getString("namespace")).isEqualTo(ns);
    assertThat(d.getString("task")).isEqualTo("invoice");
    assertThat(d.getString("status")).as("a lease is live on the partition").isEqualTo("processing");
    assertThat(d.getValue("errorMessage")).isNull();
    assertThat(d.getValue("retryCount")).isEqualTo(0);
    assertThat(d.getString("leaseExpiresAt")).as("the queue-mode group's lease").matches(Wire.ISO_MS);
    assertThat(d.getJsonArray("consumerGroups")).isEqualTo(new JsonArray().add(new JsonObject()
        .put("name", "invoicer").put("group", "invoicer").put("consumed", false).putNull("leaseExpiresAt")));
    assertThat(d.getJsonObject("mode")).isEqualTo(new JsonObject()
        .put("hasQueueMode", true).put("busGroupsCount", 1).put("type", "bus"));
    JsonObject cfg = d.getJsonObject("queueConfig");
    assertThat(cfg.fieldNames()).containsAll(Set.of("leaseTime", "retryLimit", "retryDelay", "ttl", "priority"));
    assertThat(cfg.getInteger("leaseTime")).isEqualTo(300);
    assertThat(cfg.getInteger("retryLimit")).isEqualTo(5);

    JsonObject first = detailOk(pid, "order-4470");
    assertThat(first.getJsonArray("consumerGroups").getJsonObject(0).getBoolean("consumed"))
        .as("consumed is committed >= offset for that group").isTrue();
    assertThat(first.getString("status")).as("every bus group passed it (ENGINE.md §8.2 step 6)")
        .isEqualTo("completed");
  }

  @Test
  void aLiveMessageHasDataEqualToPayloadRetryCountZeroAndNoErrorMessage() {
    String q = Wire.queue("detail-live");
    JsonObject payload = new JsonObject().put("amount", 41).put("nested", new JsonObject().put("k", new JsonArray()
        .add(1).add("two")));
    JsonObject res = Wire.pushOne(node, q, null, payload, "live-1");
    String pid = Wire.partitionId(q, "Default");
    JsonObject d = detailOk(pid, "live-1");
    assertThat(d.getValue("data")).isEqualTo(payload);
    assertThat(d.getValue("payload")).isEqualTo(payload);
    assertThat(d.getString("id")).isEqualTo(res.getString("message_id"));
    assertThat(d.getString("status")).isEqualTo("pending");
    assertThat(d.getValue("retryCount")).isEqualTo(0);
    assertThat(d.getValue("errorMessage")).isNull();
    assertThat(d.getValue("leaseExpiresAt")).isNull();
    assertThat(d.getJsonArray("consumerGroups")).isEmpty();
    assertThat(d.getJsonObject("mode").getString("type")).as("the detail view knows only bus and queue")
        .isEqualTo("queue");
    assertThat(d.getJsonObject("mode").getInteger("busGroupsCount")).isZero();
  }

  @Test
  void aDeadLetteredMessageReportsTheDlqRetrySnapshotAndErrorMessage() {
    String q = Wire.queue("detail-dlq");
    Wire.configure(node, NONE, q, new JsonObject().put("retryLimit", 2));
    String pid = Wire.pushToDefault(node, q, new JsonObject().put("poison", true), "bad-1");
    for (int attempt = 1; attempt <= 3; attempt++) {
      JsonObject p = Wire.popSome(node, NONE, q, null, null);
      JsonObject r = Wire.ack(node, NONE, new JsonObject().put("transactionId", "bad-1").put("partitionId", pid)
          .put("leaseId", p.getString("leaseId")).put("status", "failed").put("error", "boom-" + attempt));
      assertThat(r.getBoolean("dlq")).as("attempt %d: %s", attempt, r).isEqualTo(attempt == 3);
    }
    var row = Wire.dlqRows(pid).get(0);
    JsonObject d = detailOk(pid, "bad-1");
    assertThat(d.getString("status")).isEqualTo("dead_letter");
    assertThat(d.getValue("retryCount")).as("the counter snapshotted onto the DLQ row")
        .isEqualTo(((Number) row.get("retry_count")).intValue()).isEqualTo(2);
    assertThat(d.getString("errorMessage")).isEqualTo(row.get("error")).isEqualTo("boom-3");
    assertThat(d.getValue("data")).isEqualTo(new JsonObject().put("poison", true));
  }

  @Test
  void namespaceAndTaskFallBackToTheDotSplitWhenTheQueueRowCarriesEmptyValues() {
    String ns = "ns" + Wire.shortId();
    String q = ns + ".tk.fallback";
    String q2 = ns + ".tk2.fallback";
    Wire.pushOne(node, q, null, 1, "fb-1");
    Wire.pushOne(node, q2, null, 2, "fb-2");
    Wire.execute("UPDATE queen.queues SET namespace = '', task = '' WHERE name = '" + q + "'");
    Wire.execute("UPDATE queen.queues SET namespace = NULL, task = NULL WHERE name = '" + q2 + "'");
    JsonObject d = detailOk(Wire.partitionId(q, "Default"), "fb-1");
    assertThat(d.getString("namespace")).isEqualTo(ns);
    assertThat(d.getString("task")).isEqualTo("tk");
    JsonObject d2 = detailOk(Wire.partitionId(q2, "Default"), "fb-2");
    assertThat(d2.getString("namespace")).isEqualTo(ns);
    assertThat(d2.getString("task")).isEqualTo("tk2");
  }

  // ---- 404s -----------------------------------------------------------------------------------------------------

  @Test
  void anUnknownTransactionAMalformedPartitionIdAndAnUnknownPartitionAre404MessageNotFound() {
    String q = Wire.queue("detail-404");
    String pid = Wire.pushToDefault(node, q, 1, "known");
    assertNotFound(detail(pid, "never-pushed"), "unknown txn");
    assertNotFound(detail("not-a-uuid", "known"), "malformed partition id");
    assertNotFound(detail("1-1-1-1-1", "known"), "short-form partition id");
    assertNotFound(detail(UUID.randomUUID().toString(), "known"), "unknown partition");
  }

  @Test
  void aMessageWhosePayloadRetentionTookIs404() {
    String q = Wire.queue("detail-seg-gone");
    String pid = Wire.pushToDefault(node, q, 1, "sg-1");
    Wire.slimBelow(pid, Long.MAX_VALUE);
    assertThat(Wire.txnRows(pid)).as("precondition: the position still resolves").isEqualTo(1);
    assertNotFound(detail(pid, "sg-1"), "deleted covering segment");
  }

  // ---- resolution fallbacks and failures ---------------------------------------------------------------------

  @Test
  void aMessageWhoseTxnsRowWasPurgedStillResolvesThroughTheSegmentScan() {
    String q = Wire.queue("detail-scan");
    JsonArray first = Wire.pushAll(node, NONE, List.of(item(q, null, new JsonObject().put("n", 0), "sc-0"),
        item(q, null, new JsonObject().put("n", 1), "sc-1")));
    Wire.pushAll(node, NONE, List.of(item(q, null, new JsonObject().put("n", 2), "sc-2")));
    String pid = Wire.partitionId(q, "Default");
    Wire.purgeHashesBelow(pid, Long.MAX_VALUE);
    JsonObject d = detailOk(pid, "sc-1");
    assertThat(d.getString("transactionId")).isEqualTo("sc-1");
    assertThat(d.getString("id")).isEqualTo(first.getJsonObject(1).getString("message_id"));
    assertThat(d.getValue("data")).isEqualTo(new JsonObject().put("n", 1));
    assertThat(d.getValue("payload")).isEqualTo(new JsonObject().put("n", 1));
    assertThat(d.fieldNames()).containsExactlyInAnyOrderElementsOf(DETAIL_KEYS);
    assertThat(detailOk(pid, "sc-2").getValue("data")).isEqualTo(new JsonObject().put("n", 2));
    assertNotFound(detail(pid, "sc-never"), "a txn the scan cannot find");
  }

  @Test
  void aCorruptSegmentBlobIs500FrameDecodeFailed() {
    String q = Wire.queue("detail-corrupt");
    String pid = Wire.pushToDefault(node, q, 1, "cr-1");
    Wire.execute("UPDATE queen.log_segments SET blob = '\\x00'::bytea WHERE partition_id = '" + pid + "'");
    Reply r = detail(pid, "cr-1");
    assertThat(r.status()).as("corrupt blob, txns row intact: %s", r.body()).isEqualTo(500);
    assertThat(r.json()).isEqualTo(io.queenvertx.testing.Wire.error(500, "frame decode failed"));
  }

  @Test
  void aCorruptSegmentBlobIs500FrameDecodeFailedAlsoWhenResolvedByTheSegmentScan() {
    String q = Wire.queue("detail-corrupt-scan");
    String pid = Wire.pushToDefault(node, q, 1, "crs-1");
    Wire.execute("UPDATE queen.log_segments SET blob = '\\x00'::bytea WHERE partition_id = '" + pid + "'");
    Wire.purgeHashesBelow(pid, Long.MAX_VALUE);
    Reply r = detail(pid, "crs-1");
    assertThat(r.status()).as("corrupt blob, txns row purged: %s", r.body()).isEqualTo(500);
    assertThat(r.json()).isEqualTo(io.queenvertx.testing.Wire.error(500, "frame decode failed"));
  }
}
