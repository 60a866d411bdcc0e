package io.queenvertx.stats;

import static io.queenvertx.testing.Wire.item;
import static io.queenvertx.testing.Wire.push;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queenvertx.bus.Addresses;
import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestDatabase;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Issue 20: the per-minute counters of a node land in {@code stats_node_minute} / {@code stats_queue_minute} (and the
 * node's running totals) when the flusher is asked to flush over {@link Addresses#STATS_FLUSH}, with the numbers of
 * the traffic that was served; flushes add with {@code +}; the purge leaves the running totals alone.
 */
class StatsFlushIT {
  @NodeFixture
  static TestNode node;

  static JsonObject flushNow() throws Exception {
    return (JsonObject) node.node().vertx().eventBus().request(Addresses.STATS_FLUSH, new JsonObject())
        .toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS).body();
  }

  static Map<String, Object> queueSums(String queue) {
    return Wire.rows("SELECT sum(push_requests) AS push_requests, sum(push_messages) AS push_messages,"
        + " sum(pop_requests) AS pop_requests, sum(pop_messages) AS pop_messages, sum(pop_empty) AS pop_empty,"
        + " sum(ack_success) AS ack_success, sum(ack_failed) AS ack_failed, sum(transactions) AS transactions,"
        + " sum(dlq_messages) AS dlq_messages, sum(conflated) AS conflated, sum(pop_lag_ms_sum) AS lag_sum,"
        + " max(pop_lag_ms_max) AS lag_max FROM queen.stats_queue_minute WHERE queue = '" + queue + "' AND node_id = '"
        + node.node().config().serverId() + "'").get(0);
  }

  static long n(Object o) {
    return o == null ? -1 : ((Number) o).longValue();
  }

  @Test
  void servedTrafficLandsInTheMinuteRowsAndTheNodeTotals() throws Exception {
    String id = node.node().config().serverId();
    flushNow();
    var base = nodeSums(id);
    String q = Wire.queue("stats");
    long before = System.currentTimeMillis();
    assertThat(push(node, item(q, null, 1, "a"), item(q, null, 2, "b"), item(q, null, 3, "c")).status()).isEqualTo(201);
    assertThat(push(node, item(q, null, 4, "d"), item(q, null, 5, "e"), item(q, null, 5, "a")).status()).isEqualTo(201);
    // the stored messages look five seconds old when popped: the pop lag is the age at hand-out
    Wire.execute("UPDATE queen.log_segments SET created_at = created_at - interval '5 seconds' WHERE partition_id = '"
        + Wire.partitionId(q, "Default") + "'");
    JsonObject p = Wire.popSome(node, q, "batch=10");
    long elapsed = System.currentTimeMillis() - before;
    JsonArray acks = new JsonArray();
    for (JsonObject m : Wire.messages(p)) {
      acks.add(Wire.ack(m.getString("transactionId"), m.getString("partitionId"), "completed", p.getString("leaseId")));
    }
    assertThat(acks).hasSize(5);
    assertThat(node.post("/api/v1/ack/batch", new JsonObject().put("acknowledgments", acks)).status()).isEqualTo(200);
    assertThat(Wire.pop(node, q, "batch=10").status()).isEqualTo(204);

    String t = Wire.queue("stats-txn");
    var txn = node.post("/api/v1/transaction", new JsonObject().put("operations", new JsonArray()
        .add(new JsonObject().put("type", "push").put("items", new JsonArray()
            .add(item(t, null, 1, "t1")).add(item(t, null, 2, "t2"))))));
    assertThat(txn.json().getBoolean("success")).as(txn.body()).isTrue();

    String d = Wire.queue("stats-dlq");
    Wire.retryLimitZero(node, Wire.NONE, d);
    Wire.deadLetter(node, d, null, 1, "x1", null, "bad");
    Wire.deadLetter(node, d, null, 2, "x2", null, "bad");

    JsonObject reply = flushNow();
    assertThat(reply.getInteger("flushedNodeRows")).isPositive();
    assertThat(reply.getInteger("flushedQueueRows")).isGreaterThanOrEqualTo(3);

    await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
      var s = queueSums(q);
      assertThat(n(s.get("push_requests"))).isEqualTo(2);
      assertThat(n(s.get("push_messages"))).isEqualTo(5);
      assertThat(n(s.get("conflated"))).isEqualTo(1); // "a" again: a duplicate
      assertThat(n(s.get("pop_requests"))).isEqualTo(2);
      assertThat(n(s.get("pop_messages"))).isEqualTo(5);
      assertThat(n(s.get("pop_empty"))).isEqualTo(1);
      assertThat(n(s.get("ack_success"))).isEqualTo(5);
      assertThat(n(s.get("ack_failed"))).isZero();
      assertThat(n(s.get("lag_max"))).isBetween(5_000L, 5_000L + elapsed + 1_000);
      assertThat(n(s.get("lag_sum"))).isBetween(5 * 5_000L, 5 * n(s.get("lag_max")));
    });
    var ts = queueSums(t);
    assertThat(n(ts.get("transactions"))).isEqualTo(1);
    assertThat(n(ts.get("push_messages"))).isEqualTo(2);
    var ds = queueSums(d);
    assertThat(n(ds.get("dlq_messages"))).isEqualTo(2);
    assertThat(n(ds.get("ack_failed"))).isEqualTo(2);

    // node-wide, as a difference: the other tests of this class use the same node
    var after = nodeSums(id);
    assertThat(n(after.get("pr")) - n(base.get("pr"))).isEqualTo(4); // two pushes here, one per dead letter
    assertThat(n(after.get("pm")) - n(base.get("pm"))).isEqualTo(5 + 2 + 2);
    assertThat(n(after.get("pop")) - n(base.get("pop"))).isEqualTo(5 + 2);
    assertThat(n(after.get("ok")) - n(base.get("ok"))).isEqualTo(5);
    assertThat(n(after.get("dlq")) - n(base.get("dlq"))).isEqualTo(2);
    assertThat(n(after.get("tx")) - n(base.get("tx"))).isEqualTo(1);
    assertThat(n(after.get("pool"))).isEqualTo(16);
    assertThat(n(after.get("heap"))).isPositive();
    assertThat(n(after.get("total_pm")) - n(base.get("total_pm"))).isEqualTo(9);

    // nothing new: a second flush adds nothing to the counters
    flushNow();
    assertThat(n(queueSums(q).get("push_messages"))).isEqualTo(5);
    assertThat(nodeSums(id).get("total_pm")).isEqualTo(after.get("total_pm"));
  }

  static Map<String, Object> nodeSums(String id) {
    return Wire.rows("SELECT COALESCE(sum(push_requests), 0) AS pr, COALESCE(sum(push_messages), 0) AS pm,"
        + " COALESCE(sum(pop_messages), 0) AS pop, COALESCE(sum(ack_success), 0) AS ok,"
        + " COALESCE(sum(dlq_messages), 0) AS dlq, COALESCE(sum(transactions), 0) AS tx, max(db_pool_size) AS pool,"
        + " max(heap_used_bytes) AS heap, " + totalPushed(id) + " AS total_pm"
        + " FROM queen.stats_node_minute WHERE node_id = '" + id + "'").get(0);
  }

  /** The node's running total of pushed messages (V18). */
  static long totalPushed(String nodeId) {
    return Wire.count("SELECT COALESCE(max((counts->>'push_messages')::bigint), 0) FROM queen.stats_node_totals"
        + " WHERE node_id = '" + nodeId + "'");
  }

  @Test
  void aFlushAddsToTheRowsItFindsAndResolvesPartitionsToTheirQueue() {
    String fake = "flush-test-" + Wire.shortId();
    String q = Wire.queue("stats-pid");
    Wire.pushQueued(node, q, null, 1, "p1");
    String pid = Wire.partitionId(q, "Default");
    long m = System.currentTimeMillis() / 60_000 - 3;
    String nodes = "[{\"m\":" + m + ",\"push_messages\":3,\"push_latency_ms_max\":7,\"heap_used_bytes\":10}]";
    String queues = "[{\"m\":" + m + ",\"tenant\":\"" + Wire.DEFAULT_TENANT + "\",\"queue\":\"" + q
        + "\",\"push_messages\":3,\"pop_lag_ms_max\":10},{\"m\":" + m + ",\"pid\":\"" + pid
        + "\",\"ack_success\":2},{\"m\":" + m + ",\"pid\":\"" + Wire.ZERO_UUID + "\",\"ack_success\":9}]";
    String call = "SELECT queen.stats_flush('" + fake + "', 'h', '" + nodes + "', '" + queues + "')::text";
    // the same snapshot twice (a retry after a commit whose answer was lost): counters add, maxima do not
    assertThat(new JsonObject(sql(call))).isEqualTo(new JsonObject().put("nodeRows", 1)
        .put("queueRows", 1));
    sql(call.replace("\"push_latency_ms_max\":7", "\"push_latency_ms_max\":5")
        .replace("\"heap_used_bytes\":10", "\"heap_used_bytes\":20"));
    var row = Wire.rows("SELECT push_messages, push_latency_ms_max, heap_used_bytes FROM queen.stats_node_minute"
        + " WHERE node_id = '" + fake + "'");
    assertThat(row).singleElement().satisfies(r -> {
      assertThat(n(r.get("push_messages"))).isEqualTo(6);
      assertThat(n(r.get("push_latency_ms_max"))).isEqualTo(7);
      assertThat(n(r.get("heap_used_bytes"))).isEqualTo(20); // a gauge: the newest value
    });
    var qrow = Wire.rows("SELECT push_messages, ack_success, pop_lag_ms_max FROM queen.stats_queue_minute"
        + " WHERE node_id = '" + fake + "'");
    assertThat(qrow).singleElement().satisfies(r -> {
      assertThat(n(r.get("push_messages"))).isEqualTo(6);
      assertThat(n(r.get("ack_success"))).isEqualTo(4); // by partition id, resolved to the queue; the unknown dropped
      assertThat(n(r.get("pop_lag_ms_max"))).isEqualTo(10);
    });
    assertThat(totalPushed(fake)).isEqualTo(6);
  }

  @Test
  void thePurgeDeletesOldMinuteRowsInBatchesButNeverTheTotals() {
    String fake = "purge-test-" + Wire.shortId();
    long now = System.currentTimeMillis() / 60_000;
    StringBuilder nodes = new StringBuilder("[");
    for (int i = 0; i < 5; i++) {
      nodes.append(i == 0 ? "" : ",").append("{\"m\":").append(now - 100L * 1440 - i).append(",\"push_messages\":1}");
    }
    nodes.append(",{\"m\":").append(now - 2).append(",\"push_messages\":1}]");
    sql("SELECT queen.stats_flush('" + fake + "', 'h', '" + nodes + "', '[]')::text");
    String rows = "SELECT count(*) FROM queen.stats_node_minute WHERE node_id = '" + fake + "'";
    assertThat(Wire.count(rows)).isEqualTo(6);
    // batches of 2 (other tests' old rows may share the table): repeat until a batch comes back short
    for (int i = 0; i < 1000 && Wire.count("SELECT queen.stats_purge(90, 2)") >= 2; i++) {
      assertThat(i).isLessThan(999);
    }
    assertThat(Wire.count(rows)).isEqualTo(1);
    assertThat(totalPushed(fake)).isEqualTo(6);
  }

  static String sql(String query) {
    return TestDatabase.queryString(Wire.db(), query);
  }
}
