package io.queenvertx.messages;

import static io.queenvertx.testing.Wire.NONE;
import static io.queenvertx.testing.Wire.list;
import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.TestNode.Reply;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonObject;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * GET /api/v1/dlq and DELETE /api/v1/dlq (seed "GET /api/v1/dlq" and "DELETE /api/v1/dlq", API.md §5.10, ENGINE.md
 * §7.2): the listing's shape, order, filters and paging, and the bulk purge's exact counts and refusals.
 */
class DlqListIT {
  static final Set<String> ROW_KEYS = Set.of("id", "transactionId", "partitionId", "queue", "partition",
      "consumerGroup", "errorMessage", "retryCount", "data", "producerSub", "createdAt", "failedAt");

  @NodeFixture
  static TestNode node;

  static JsonObject dlq(String query) {
    Reply r = node.get("/api/v1/dlq?" + query);
    assertThat(r.status()).as("GET /api/v1/dlq?%s answered %s", query, r.body()).isEqualTo(200);
    assertThat(r.header("content-type")).startsWith("application/json");
    return r.json();
  }

  static List<JsonObject> rowsOf(String query) {
    return list(dlq(query).getJsonArray("messages"));
  }

  /** Inserts dead-letter rows straight into queen.log_dlq for an existing partition (set-up for counts). */
  static void insertRows(String pid, String group, int n, String retryCount) {
    Wire.execute("INSERT INTO queen.log_dlq (partition_id, consumer_group, \"offset\", message_id, transaction_id, "
        + "payload, error, retry_count, failed_at) SELECT '" + pid + "'::uuid, '" + group + "', g, gen_random_uuid(), "
        + "'" + group + "-' || g, jsonb_build_object('g', g), 'inserted', " + retryCount + ", "
        + "now() - make_interval(secs => g) FROM generate_series(0, " + (n - 1) + ") g");
  }

  // ---- listing ---------------------------------------------------------------------------------------------------

  @Test
  void theListingIsMessagesPaginationTotalAndEachRowCarriesExactlyTheSeedsKeys() {
    String q = Wire.queue("dlq-shape");
    JsonObject payload = new JsonObject().put("amount", 41);
    String pid = Wire.deadLettered(node, q, "eu-1", payload, "order-4471", "invoicer", "Test error");
    var row = Wire.dlqRows(pid).get(0);

    JsonObject body = dlq("queue=" + q);
    // the seed's keys, plus the additive cursor of issue #10 (null on a short page)
    assertThat(body.fieldNames()).containsExactlyInAnyOrder("messages", "pagination", "total", "nextCursor");
    assertThat(body.getValue("nextCursor")).isNull();
    assertThat(body.getJsonObject("pagination")).isEqualTo(new JsonObject().put("limit", 100).put("offset", 0));
    assertThat(body.getInteger("total")).isEqualTo(1);
    JsonObject m = body.getJsonArray("messages").getJsonObject(0);
    Set<String> allowed = new HashSet<>(ROW_KEYS);
    allowed.add("isEncrypted");
    assertThat(m.fieldNames()).as("%s", m.encode()).containsAll(ROW_KEYS);
    assertThat(new HashSet<>(m.fieldNames())).as("%s", m.encode()).isSubsetOf(allowed);
    assertThat(m.getString("id")).isEqualTo(row.get("id"));
    assertThat(m.getString("transactionId")).isEqualTo("order-4471");
    assertThat(m.getString("partitionId")).isEqualTo(pid);
    assertThat(m.getString("queue")).isEqualTo(q);
    assertThat(m.getString("partition")).isEqualTo("eu-1");
    assertThat(m.getString("consumerGroup")).isEqualTo("invoicer");
    assertThat(m.getString("errorMessage")).isEqualTo("Test error");
    assertThat(m.getValue("retryCount")).isEqualTo(((Number) row.get("retry_count")).intValue());
    assertThat(m.getValue("data")).isEqualTo(payload);
    assertThat(m.containsKey("producerSub")).isTrue();
    assertThat(m.getValue("producerSub")).isNull();
    assertThat(m.getString("createdAt")).matches(Wire.ISO_MS);
    assertThat(m.getString("createdAt")).as("createdAt equals failedAt").isEqualTo(m.getString("failedAt"));
  }

  @Test
  void retryCountFallsBackToTheQueuesRetryLimitForRowsWithoutASnapshot() {
    String q = Wire.queue("dlq-retry-fallback");
    Wire.configure(node, NONE, q, new JsonObject().put("retryLimit", 4));
    String pid = Wire.pushToDefault(node, q, 1, "x");
    insertRows(pid, "legacy", 1, "NULL");
    insertRows(pid, "snap", 1, "7");
    List<JsonObject> rows = rowsOf("queue=" + q);
    assertThat(rows).filteredOn(r -> "legacy".equals(r.getString("consumerGroup")))
        .singleElement().satisfies(r -> assertThat(r.getValue("retryCount")).isEqualTo(4));
    assertThat(rows).filteredOn(r -> "snap".equals(r.getString("consumerGroup")))
        .singleElement().satisfies(r -> assertThat(r.getValue("retryCount")).isEqualTo(7));
  }

  @Test
  void rowsAreOrderedByFailedAtDescending() throws Exception {
    String q = Wire.queue("dlq-order");
    Wire.retryLimitZero(node, NONE, q);
    for (int i = 0; i < 3; i++) {
      Wire.deadLetter(node, q, null, i, "o-" + i, null, "boom-" + i);
      Wire.awaitClockPastNewestDlq(Wire.partitionId(q, "Default"));
    }
    List<JsonObject> rows = rowsOf("queue=" + q);
    assertThat(rows).extracting(r -> r.getString("transactionId")).containsExactly("o-2", "o-1", "o-0");
    assertThat(rows).extracting(r -> r.getString("errorMessage")).containsExactly("boom-2", "boom-1", "boom-0");
    for (int i = 1; i < rows.size(); i++) {
      assertThat(rows.get(i - 1).getString("failedAt")).isGreaterThanOrEqualTo(rows.get(i).getString("failedAt"));
    }
  }

  @Test
  void queueAndConsumerGroupFiltersNarrowTheListing() {
    String q = Wire.queue("dlq-filter");
    String other = Wire.queue("dlq-filter-other");
    Wire.retryLimitZero(node, NONE, q);
    Wire.retryLimitZero(node, NONE, other);
    Wire.pushOne(node, q, null, 1, "f-1");
    Wire.failUnder(node, NONE, q, null, "f-1", "ga", "boom");
    Wire.failUnder(node, NONE, q, null, "f-1", "gb", "boom");
    Wire.deadLetter(node, other, null, 2, "f-2", "ga", "boom");
    assertThat(rowsOf("queue=" + q)).extracting(r -> r.getString("consumerGroup"))
        .containsExactlyInAnyOrder("ga", "gb");
    assertThat(rowsOf("queue=" + q + "&consumerGroup=ga")).extracting(r -> r.getString("queue") + "/"
        + r.getString("consumerGroup") + "/" + r.getString("transactionId")).containsExactly(q + "/ga/f-1");
    assertThat(rowsOf("queue=" + other)).extracting(r -> r.getString("transactionId")).containsExactly("f-2");
    assertThat(rowsOf("queue=" + q + "&consumerGroup=nobody")).isEmpty();
  }

  @Test
  void limitAndOffsetPageTheRowsAndTotalIsThePageLength() {
    String q = Wire.queue("dlq-paging");
    String pid = Wire.pushToDefault(node, q, 1, "x");
    insertRows(pid, "pg", 5, "0"); // failed_at: pg-0 newest .. pg-4 oldest
    JsonObject p1 = dlq("queue=" + q + "&limit=2");
    assertThat(p1.getJsonObject("pagination")).isEqualTo(new JsonObject().put("limit", 2).put("offset", 0));
    assertThat(p1.getInteger("total")).isEqualTo(2);
    assertThat(list(p1.getJsonArray("messages"))).extracting(r -> r.getString("transactionId"))
        .containsExactly("pg-0", "pg-1");
    JsonObject p3 = dlq("queue=" + q + "&limit=2&offset=4");
    assertThat(p3.getJsonObject("pagination")).isEqualTo(new JsonObject().put("limit", 2).put("offset", 4));
    assertThat(p3.getInteger("total")).isEqualTo(1);
    assertThat(list(p3.getJsonArray("messages"))).extracting(r -> r.getString("transactionId"))
        .containsExactly("pg-4");
    assertThat(rowsOf("queue=" + q + "&limit=2&offset=2")).extracting(r -> r.getString("transactionId"))
        .containsExactly("pg-2", "pg-3");
  }

  @Test
  void theDefaultLimitIs100() {
    String q = Wire.queue("dlq-default-limit");
    Wire.pushOne(node, q, null, 1, "x");
    insertRows(Wire.partitionId(q, "Default"), "many", 105, "0");
    JsonObject body = dlq("queue=" + q);
    assertThat(body.getJsonArray("messages")).hasSize(100);
    assertThat(body.getInteger("total")).isEqualTo(100);
    assertThat(body.getJsonObject("pagination")).isEqualTo(new JsonObject().put("limit", 100).put("offset", 0));
  }

  // ---- bulk purge ------------------------------------------------------------------------------------------------

  @Test
  void aBulkPurgeWithoutAQueueIs400AndDeletesNothing() {
    String q = Wire.queue("dlq-purge-noqueue");
    String pid = Wire.pushToDefault(node, q, 1, "x");
    insertRows(pid, "g", 2, "0");
    JsonObject refusal = new JsonObject().put("success", false).put("error", "queue is required")
        .put("message", "Bulk DLQ purge requires an exact queue name").put("code", "bad_request");
    for (String path : new String[] {"/api/v1/dlq", "/api/v1/dlq?queue=", "/api/v1/dlq?consumerGroup=g"}) {
      Reply r = node.delete(path);
      assertThat(r.status()).as("DELETE %s answered %s", path, r.body()).isEqualTo(400);
      assertThat(r.json()).as(path).isEqualTo(refusal);
    }
    assertThat(Wire.dlqCount(pid)).isEqualTo(2);
  }

  @Test
  void aBulkPurgeByQueueAndGroupDeletesExactlyThoseRowsAndIsIdempotent() {
    String q = Wire.queue("dlq-purge");
    String other = Wire.queue("dlq-purge-other");
    Wire.pushOne(node, q, "p1", 1, "x");
    Wire.pushOne(node, q, "p2", 1, "x");
    Wire.pushOne(node, other, null, 1, "x");
    String p1 = Wire.partitionId(q, "p1");
    String p2 = Wire.partitionId(q, "p2");
    String po = Wire.partitionId(other, "Default");
    insertRows(p1, "ga", 3, "0");
    insertRows(p2, "ga", 2, "0");
    insertRows(p1, "gb", 4, "0");
    insertRows(po, "ga", 6, "0");

    Reply byGroup = node.delete("/api/v1/dlq?queue=" + q + "&consumerGroup=ga");
    assertThat(byGroup.status()).as("%s", byGroup.body()).isEqualTo(200);
    assertThat(byGroup.json()).isEqualTo(new JsonObject().put("success", true).put("deleted", 5).put("queue", q)
        .put("consumerGroup", "ga"));
    assertThat(Wire.dlqCount(p1) + Wire.dlqCount(p2)).as("gb's rows survive").isEqualTo(4);

    Reply byQueue = node.delete("/api/v1/dlq?queue=" + q);
    assertThat(byQueue.status()).isEqualTo(200);
    JsonObject all = byQueue.json();
    assertThat(all.containsKey("consumerGroup")).as("consumerGroup is present, null: %s", all.encode()).isTrue();
    assertThat(all).isEqualTo(new JsonObject().put("success", true).put("deleted", 4).put("queue", q)
        .putNull("consumerGroup"));

    Reply again = node.delete("/api/v1/dlq?queue=" + q + "&consumerGroup=");
    assertThat(again.status()).as("no matches is a successful delete").isEqualTo(200);
    assertThat(again.json()).isEqualTo(new JsonObject().put("success", true).put("deleted", 0).put("queue", q)
        .putNull("consumerGroup"));
    assertThat(Wire.dlqCount(po)).as("another queue's rows are untouched").isEqualTo(6);

    Reply none = node.delete("/api/v1/dlq?queue=" + Wire.queue("dlq-purge-missing"));
    assertThat(none.status()).isEqualTo(200);
    assertThat(none.json().getInteger("deleted")).isZero();
  }

  @Test
  void aBulkPurgeRemovesRowsFiledThroughTheAckPath() {
    String q = Wire.queue("dlq-purge-real");
    Wire.retryLimitZero(node, NONE, q);
    Wire.deadLetter(node, q, null, 1, "r-1", null, "boom");
    Wire.deadLetter(node, q, null, 2, "r-2", null, "boom");
    Reply r = node.delete("/api/v1/dlq?queue=" + q);
    assertThat(r.json()).isEqualTo(new JsonObject().put("success", true).put("deleted", 2).put("queue", q)
        .putNull("consumerGroup"));
    assertThat(rowsOf("queue=" + q)).isEmpty();
  }
}
