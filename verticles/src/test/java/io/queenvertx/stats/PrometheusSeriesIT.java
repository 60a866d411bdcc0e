package io.queenvertx.stats;

import static io.queenvertx.testing.Wire.item;
import static io.queenvertx.testing.Wire.push;
import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.kernel.Config;
import io.queenvertx.bus.Addresses;
import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestDatabase;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Issue 20 item 5: Queen's series of API.md §5.1 on {@code /metrics/prometheus}, with the values of the traffic
 * served, on a database of its own (so cluster-wide figures are this class's alone).
 */
class PrometheusSeriesIT {
  @NodeFixture(freshDatabase = true)
  static TestNode node;

  static Config.Database db() {
    return node.node().config().postgres().connection().orElseThrow();
  }

  static void flushNow() throws Exception {
    node.node().vertx().eventBus().request(Addresses.STATS_FLUSH, new JsonObject())
        .toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  static Map<String, Double> scrape(TestNode n) {
    var r = n.get("/metrics/prometheus");
    assertThat(r.status()).isEqualTo(200);
    return samples(r.body());
  }

  /** Sample lines by series (name and labels as written); the value after the last space. */
  static Map<String, Double> samples(String exposition) {
    Map<String, Double> out = new java.util.HashMap<>();
    exposition.lines().filter(l -> !l.isEmpty() && !l.startsWith("#")).forEach(l -> {
      int cut = l.lastIndexOf(' ');
      out.put(l.substring(0, cut), Double.valueOf(l.substring(cut + 1)));
    });
    return out;
  }

  static String q(String name) {
    return "{queue=\"" + name + "\"}";
  }

  @Test
  void clusterCountersDlqDepthAndGroupLagFollowTheTraffic() throws Exception {
    String q = Wire.queue("prom");
    assertThat(push(node, item(q, null, 1, "m1"), item(q, null, 2, "m2"), item(q, null, 3, "m3"),
        item(q, null, 4, "m4")).status()).isEqualTo(201);
    // the group's oldest unconsumed message looks 100 seconds old
    long before = System.currentTimeMillis();
    TestDatabase.execute(db(), "UPDATE queen.log_segments SET created_at = created_at - interval '100 seconds'");
    JsonObject p = Wire.popSome(node, Wire.NONE, q, null, "g1");
    assertThat(Wire.messages(p)).hasSize(4);
    for (int i = 0; i < 2; i++) {
      JsonObject m = Wire.messages(p).get(i);
      var a = Wire.ack(m.getString("transactionId"), m.getString("partitionId"), "completed", p.getString("leaseId"))
          .put("consumerGroup", "g1");
      assertThat(Wire.ackOne(node, a).getBoolean("success")).isTrue();
    }
    String d = Wire.queue("prom-dlq");
    Wire.retryLimitZero(node, Wire.NONE, d);
    Wire.deadLetter(node, d, null, 1, "x1", null, "bad");
    Wire.deadLetter(node, d, null, 2, "x2", null, "bad");
    flushNow();
    long elapsedS = (System.currentTimeMillis() - before) / 1000 + 2;

    var s = scrape(node);
    String c = "{scope=\"cluster\"}";
    assertThat(s).containsAllEntriesOf(Map.of("queen_cluster_push_requests_total" + c, 3.0,
        "queen_cluster_push_messages_total" + c, 6.0, "queen_cluster_pop_messages_total" + c, 6.0,
        "queen_cluster_ack_requests_total" + c, 4.0, "queen_cluster_ack_messages_total" + c, 4.0,
        "queen_cluster_ack_total{scope=\"cluster\",result=\"success\"}", 2.0,
        "queen_cluster_ack_total{scope=\"cluster\",result=\"failed\"}", 2.0, "queen_cluster_dlq_total" + c, 2.0,
        "queen_cluster_transactions_total" + c, 0.0, "queen_cluster_db_errors_total" + c, 0.0));
    assertThat(s).containsKey("queen_cluster_pop_requests_total{scope=\"cluster\"}");

    assertThat(s.get("queen_dlq_depth_by_queue" + q(d))).isEqualTo(2.0);
    assertThat(s.get("queen_dlq_depth_by_queue" + q(q))).isZero();
    assertThat(s.get("queen_dlq_depth{scope=\"cluster\"}")).isEqualTo(2.0);
    assertThat(s.get("queen_queue_depth" + q(q))).isEqualTo(4.0);
    // group lag = pushed - acked, and the age of its oldest unacked message
    String g = "{queue=\"" + q + "\",group=\"g1\"}";
    assertThat(s.get("queen_consumer_group_lag_messages" + g)).isEqualTo(2.0);
    assertThat(s.get("queen_consumer_group_lag_seconds" + g)).isBetween(100.0, 100.0 + elapsedS);
    assertThat(s.get("queen_db_pool_size")).isEqualTo(16.0);
    assertThat(s).containsKeys("queen_db_pool_active", "queen_db_pool_idle", "queen_maintenance_mode_enabled",
        "queen_file_buffer_pending", "queen_file_buffer_failed", "queen_file_buffer_db_healthy");

    // the purge of every minute row leaves the cluster counters where they were
    TestDatabase.queryLong(db(), "SELECT queen.stats_purge(0, 100000)");
    assertThat(TestDatabase.queryLong(db(), "SELECT count(*) FROM queen.stats_node_minute")).isZero();
    var after = scrape(node);
    assertThat(after.get("queen_cluster_push_messages_total{scope=\"cluster\"}")).isEqualTo(6.0);
    assertThat(after.get("queen_cluster_ack_total{scope=\"cluster\",result=\"success\"}")).isEqualTo(2.0);

    // queue names are label values: escaped
    String odd = "prom-\"odd\\" + Wire.shortId();
    Wire.configure(node, new JsonObject().put("queue", odd));
    assertThat(node.get("/metrics/prometheus").body())
        .contains("queen_queue_depth{queue=\"" + odd.replace("\\", "\\\\").replace("\"", "\\\"") + "\"} 0\n");
  }

  @Test
  void perQueueSeriesShowTheLastClosedMinuteSummedOverNodes() {
    String q = Wire.queue("prom-minute");
    Wire.configure(node, new JsonObject().put("queue", q));
    long m = System.currentTimeMillis() / 60_000 - 2;
    String t = Wire.DEFAULT_TENANT;
    row("node-a", m, t, q, "\"push_requests\":1,\"push_messages\":3,\"pop_messages\":4,\"pop_lag_ms_sum\":400,"
        + "\"pop_lag_ms_max\":150,\"ack_success\":2,\"ack_failed\":1,\"parked_consumers\":1");
    row("node-b", m, t, q, "\"push_requests\":2,\"push_messages\":2,\"pop_messages\":1,\"pop_lag_ms_sum\":100,"
        + "\"pop_lag_ms_max\":300,\"parked_consumers\":2,\"transactions\":1,\"conflated\":1,\"pop_empty\":5");
    row("node-a", m - 3, t, q, "\"push_messages\":100,\"pop_messages\":100"); // an older minute: not shown
    var s = scrape(node);
    assertThat(s.get("queen_queue_push_requests_per_minute" + q(q))).isEqualTo(3.0);
    assertThat(s.get("queen_queue_push_messages_per_minute" + q(q))).isEqualTo(5.0);
    assertThat(s.get("queen_queue_pop_messages_per_minute" + q(q))).isEqualTo(5.0);
    assertThat(s.get("queen_queue_pop_empty_per_minute" + q(q))).isEqualTo(5.0);
    assertThat(s.get("queen_queue_transactions_per_minute" + q(q))).isEqualTo(1.0);
    assertThat(s.get("queen_queue_conflated_per_minute" + q(q))).isEqualTo(1.0);
    assertThat(s.get("queen_queue_ack_per_minute{queue=\"" + q + "\",result=\"success\"}")).isEqualTo(2.0);
    assertThat(s.get("queen_queue_ack_per_minute{queue=\"" + q + "\",result=\"failed\"}")).isEqualTo(1.0);
    assertThat(s.get("queen_queue_parked_consumers" + q(q))).isEqualTo(3.0);
    assertThat(s.get("queen_queue_pop_lag_milliseconds{queue=\"" + q + "\",stat=\"avg\"}")).isEqualTo(100.0);
    assertThat(s.get("queen_queue_pop_lag_milliseconds{queue=\"" + q + "\",stat=\"max\"}")).isEqualTo(300.0);
    assertThat(s.get("queen_queue_metrics_age_seconds" + q(q))).isBetween(60.0, 125.0);

    // QUEEN_METRICS_HIDE_QUEUES: no queue and no group named, one scope="cluster" sample per family instead
    try (TestNode hidden = TestNode.start(Map.of("QUEEN_METRICS_HIDE_QUEUES", "true"), db())) {
      var body = hidden.get("/metrics/prometheus").body();
      assertThat(body).doesNotContain("queue=").doesNotContain("group=").doesNotContain(q);
      var h = samples(body);
      assertThat(h.get("queen_queue_push_messages_per_minute{scope=\"cluster\"}")).isGreaterThanOrEqualTo(5.0);
      assertThat(h).containsKeys("queen_consumer_group_lag_messages{scope=\"cluster\"}",
          "queen_queue_pop_lag_milliseconds{scope=\"cluster\",stat=\"max\"}", "queen_dlq_depth{scope=\"cluster\"}",
          "queen_cluster_push_messages_total{scope=\"cluster\"}");
    }
  }

  /**
   * Issue 38: a queue's per-minute series are on the page right after its first traffic, at 0, before any minute of
   * it has been flushed (here the node flushes once an hour, so none is); its age series waits for a minute.
   */
  @Test
  void aQueueHasItsPerMinuteSeriesAtZeroBeforeAnyMinuteOfItIsFlushed() {
    try (TestNode fresh = TestNode.start(Map.of("QUEEN_STATS_FLUSH_MS", "3600000"), db())) {
      String q = Wire.queue("prom-first");
      assertThat(push(fresh, item(q, null, 1, "first-1"), item(q, null, 2, "first-2")).status()).isEqualTo(201);
      var s = scrape(fresh);
      assertThat(s.get("queen_queue_push_messages_per_minute" + q(q))).isZero();
      assertThat(s.get("queen_queue_parked_consumers" + q(q))).isZero();
      assertThat(s.get("queen_queue_pop_messages_per_minute" + q(q))).isZero();
      assertThat(s.get("queen_queue_ack_per_minute{queue=\"" + q + "\",result=\"failed\"}")).isZero();
      assertThat(s.get("queen_queue_pop_lag_milliseconds{queue=\"" + q + "\",stat=\"max\"}")).isZero();
      assertThat(s.get("queen_queue_metrics_age_seconds" + q(q))).as("age of a queue with no minute").isNull();
      assertThat(s.get("queen_queue_depth" + q(q))).isEqualTo(2.0);
    }
    // hidden queues: the cluster's age is the freshest minute that has one, the figure-less queue changes nothing
    try (TestNode hidden = TestNode.start(Map.of("QUEEN_METRICS_HIDE_QUEUES", "true"), db())) {
      assertThat(scrape(hidden)).containsKeys("queen_queue_metrics_age_seconds{scope=\"cluster\"}",
          "queen_queue_parked_consumers{scope=\"cluster\"}");
    }
  }

  @Test
  void baseUnitsGiveThePopLagInSeconds() {
    String q = Wire.queue("prom-units");
    Wire.configure(node, new JsonObject().put("queue", q));
    row("node-u", System.currentTimeMillis() / 60_000 - 2, Wire.DEFAULT_TENANT, q,
        "\"pop_messages\":2,\"pop_lag_ms_sum\":3000,\"pop_lag_ms_max\":2500");
    try (TestNode units = TestNode.start(Map.of("QUEEN_METRICS_BASE_UNITS", "true"), db())) {
      var s = scrape(units);
      assertThat(s.get("queen_queue_pop_lag_seconds{queue=\"" + q + "\",stat=\"avg\"}")).isEqualTo(1.5);
      assertThat(s.get("queen_queue_pop_lag_seconds{queue=\"" + q + "\",stat=\"max\"}")).isEqualTo(2.5);
      assertThat(s.keySet()).noneMatch(k -> k.startsWith("queen_queue_pop_lag_milliseconds"));
    }
  }

  /** One queue row of a made-up node, through the flush procedure. */
  static void row(String nodeId, long minute, String tenant, String queue, String fields) {
    String rows = new JsonArray().add(new JsonObject("{\"m\":" + minute + "," + fields + "}").put("tenant", tenant)
        .put("queue", queue)).encode().replace("'", "''");
    TestDatabase.queryString(db(), "SELECT queen.stats_flush('" + nodeId + "', 'h', '[]', '" + rows + "')::text");
  }
}
