package io.queenvertx.status;

import static io.queenvertx.testing.Wire.item;
import static io.queenvertx.testing.Wire.shortId;
import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestDatabase;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.TestNode.Reply;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Queue depth (API.md §5.8), status analytics and the analytics views (§5.12) over real HTTP and PostgreSQL. The
 * node runs with QUEEN_TENANCY_HEADER on and each test speaks as a fresh tenant. History figures come from rows the
 * tests write into the V16 counter tables themselves, in 2098 (far from anything a flusher writes, and in the future, so that no node's stats purge on the shared database deletes them mid-test) and under their own
 * tenant or node id, so the expected sums are exact on the shared database.
 */
class AnalyticsRoutesIT {
  static final Pattern ISO = Pattern.compile("\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{6}Z");

  @NodeFixture(env = {"QUEEN_TENANCY_HEADER=true", "QUEEN_KV_TRUSTED_PROXY=true"})
  static TestNode node;

  // ---- depth ----------------------------------------------------------------------------------------------------

  @Test
  void depthCountsPendingProcessingAndReadyPerPartition() {
    var h = tenant();
    String q = "depth" + shortId();
    Wire.pushAll(node, h, List.of(item(q, "p1", 1, "a1"), item(q, "p1", 2, "a2"), item(q, "p1", 3, "a3")));
    Wire.pushAll(node, h, List.of(item(q, "p2", 4, "b1"), item(q, "p2", 5, "b2")));

    JsonObject before = depth(h, q, null);
    assertThat(before.getLong("pending")).isEqualTo(5);
    assertThat(before.getLong("ready")).isEqualTo(5);
    assertThat(before.getLong("processing")).isZero();

    // p1: one acked, one leased (processing), one pending behind the lease; p2 untouched
    JsonObject a1 = popOne(h, "/api/v1/pop/queue/" + q + "/partition/p1?batch=1");
    ackAs(h, a1, null);
    JsonObject a2 = popOne(h, "/api/v1/pop/queue/" + q + "/partition/p1?batch=1");
    assertThat(a2.getString("transactionId")).isEqualTo("a2");

    JsonObject d = depth(h, q, null);
    assertThat(d.fieldNames()).containsExactlyInAnyOrder("queue", "group", "pending", "processing", "ready",
        "partitionsPending", "partitionsReady", "conflation", "effectivePending", "effectiveReady", "partitions");
    assertThat(d.getString("queue")).isEqualTo(q);
    assertThat(d.getString("group")).isEqualTo("__QUEUE_MODE__");
    assertThat(d.getLong("pending")).as("a3 and b1, b2").isEqualTo(3);
    assertThat(d.getLong("processing")).as("a2 under its lease").isEqualTo(1);
    assertThat(d.getLong("ready")).as("p1 is leased: only p2's two can be handed out").isEqualTo(2);
    assertThat(d.getLong("partitionsPending")).isEqualTo(2);
    assertThat(d.getLong("partitionsReady")).isEqualTo(1);
    assertThat(d.getBoolean("conflation")).isFalse();
    assertThat(d.getLong("effectivePending")).isEqualTo(3);
    assertThat(d.getLong("effectiveReady")).isEqualTo(2);
    assertThat(d.getJsonArray("partitions")).containsExactly(
        new JsonObject().put("partition", "p1").put("pending", 1).put("processing", 1).put("ready", 0),
        new JsonObject().put("partition", "p2").put("pending", 2).put("processing", 0).put("ready", 2));

    // acking the lease moves p1 on: a3 becomes ready
    ackAs(h, a2, null);
    JsonObject after = depth(h, q, null);
    assertThat(after.getLong("pending")).isEqualTo(3);
    assertThat(after.getLong("processing")).isZero();
    assertThat(after.getLong("ready")).isEqualTo(3);
    assertThat(after.getLong("partitionsReady")).isEqualTo(2);

    // a named group has its own cursor: g1 consumed p2 entirely and never touched p1
    JsonObject g = Wire.popSome(node, h, q, "p2", "g1");
    List<JsonObject> got = Wire.messages(g);
    assertThat(got).hasSize(2);
    ackAs(h, withLease(got.get(1), g), "g1");
    JsonObject dg = depth(h, q, "g1");
    assertThat(dg.getString("group")).isEqualTo("g1");
    assertThat(dg.getLong("pending")).as("all of p1, none of p2").isEqualTo(3);
    assertThat(dg.getLong("partitionsPending")).isEqualTo(1);
    assertThat(dg.getJsonArray("partitions").getJsonObject(1).getLong("pending")).isZero();
  }

  @Test
  void depthOfAMissingOrForeignQueueIs404() {
    var h = tenant();
    String q = "depthmine" + shortId();
    Wire.pushOne(node, h, q, null, 1, "x1");
    Reply missing = node.get("/api/v1/resources/queues/nope" + shortId() + "/depth", h);
    assertThat(missing.status()).isEqualTo(404);
    assertThat(missing.json()).isEqualTo(io.queenvertx.testing.Wire.error(404, "Queue not found"));
    Reply foreign = node.get("/api/v1/resources/queues/" + q + "/depth", tenant());
    assertThat(foreign.status()).as("another tenant's queue looks missing").isEqualTo(404);
    assertThat(foreign.json()).isEqualTo(io.queenvertx.testing.Wire.error(404, "Queue not found"));
  }

  // ---- status/analytics and the history views ---------------------------------------------------------------------

  @Test
  void statusAnalyticsSumsTheCounterRowsPerBucket() {
    String t = UUID.randomUUID().toString();
    var h = Map.of("x-queen-tenant", t);
    String qa = "an" + shortId() + ".billing.a";
    String qb = "bn" + shortId();
    sql("INSERT INTO queen.stats_queue_minute (minute, node_id, tenant_id, queue, push_requests, push_messages,"
        + " pop_requests, pop_messages, ack_success, ack_failed, dlq_messages, pop_lag_ms_sum, pop_lag_ms_max,"
        + " parked_consumers) VALUES"
        + " ('2098-02-03 10:05Z', 'n1', '" + t + "', '" + qa + "', 2, 10, 3, 4, 3, 1, 1, 400, 150, 2),"
        + " ('2098-02-03 10:05Z', 'n2', '" + t + "', '" + qa + "', 1, 5, 2, 6, 2, 0, 0, 300, 90, 1),"
        + " ('2098-02-03 10:59Z', 'n1', '" + t + "', '" + qb + "', 1, 7, 0, 0, 0, 0, 0, 0, 0, 0),"
        + " ('2098-02-03 11:30Z', 'n1', '" + t + "', '" + qa + "', 4, 4, 1, 1, 1, 0, 0, 20, 20, 0),"
        + " ('2098-02-04 09:00Z', 'n1', '" + t + "', '" + qa + "', 9, 9, 0, 0, 0, 0, 0, 0, 0, 0)");

    Reply r = node.get("/api/v1/status/analytics?from=2098-02-03T10:00:00Z&to=2098-02-03T12:00:00Z", h);
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    JsonObject j = r.json();
    assertThat(j.getString("interval")).as("the default").isEqualTo("hour");
    JsonArray series = j.getJsonArray("series");
    assertThat(series).hasSize(2);
    JsonObject h10 = series.getJsonObject(0);
    assertThat(h10.getString("t")).isEqualTo("2098-02-03T10:00:00.000000Z");
    assertThat(h10.getLong("pushRequests")).isEqualTo(4);
    assertThat(h10.getLong("pushMessages")).isEqualTo(22);
    assertThat(h10.getLong("popMessages")).isEqualTo(10);
    assertThat(h10.getLong("ackSuccess")).isEqualTo(5);
    assertThat(h10.getLong("ackFailed")).isEqualTo(1);
    assertThat(h10.getLong("dlq")).isEqualTo(1);
    assertThat(h10.getLong("popLagAvgMs")).as("(400 + 300) / 10 popped").isEqualTo(70);
    assertThat(h10.getLong("popLagMaxMs")).isEqualTo(150);
    JsonObject h11 = series.getJsonObject(1);
    assertThat(h11.getString("t")).isEqualTo("2098-02-03T11:00:00.000000Z");
    assertThat(h11.getLong("pushMessages")).isEqualTo(4);
    assertThat(j.getJsonObject("totals").getLong("pushMessages")).isEqualTo(26);
    assertThat(j.getJsonObject("totals").getLong("queues")).isEqualTo(2);

    JsonArray days = node.get("/api/v1/status/analytics?from=2098-02-03T00:00:00Z&to=2098-02-05T00:00:00Z"
        + "&interval=day&queue=" + qa, h).json().getJsonArray("series");
    assertThat(days).hasSize(2);
    assertThat(days.getJsonObject(0).getLong("pushMessages")).as("qa on the 3rd: 10 + 5 + 4").isEqualTo(19);
    assertThat(days.getJsonObject(1).getLong("pushMessages")).isEqualTo(9);
    JsonArray byNs = node.get("/api/v1/status/analytics?from=2098-02-03T00:00:00Z&to=2098-02-04T00:00:00Z"
        + "&interval=day&task=billing", h).json().getJsonArray("series");
    assertThat(byNs.getJsonObject(0).getLong("pushMessages")).as("billing is qa's task").isEqualTo(19);

    JsonObject other = node.get("/api/v1/status/analytics?from=2098-02-03T10:00:00Z&to=2098-02-03T12:00:00Z",
        tenant()).json();
    assertThat(other.getJsonObject("totals").getLong("pushMessages")).as("another tenant sees none").isZero();

    // the analytics views over the same rows (bucket width from the window: 2 h / 2 points = 1 h)
    String win = "from=2098-02-03T10:00:00Z&to=2098-02-03T12:00:00Z&points=2";
    JsonObject ops = node.get("/api/v1/analytics/queue-ops?" + win, h).json();
    assertThat(ops.getInteger("bucketSeconds")).isEqualTo(3600);
    assertThat(ops.getJsonArray("queues")).containsExactlyInAnyOrder(qa, qb);
    JsonObject qa10 = find(ops.getJsonArray("series"), "2098-02-03T10:00:00.000000Z", "queue", qa);
    assertThat(qa10.getLong("pushMessages")).isEqualTo(15);
    assertThat(qa10.getLong("acked")).isEqualTo(6);

    JsonArray work = node.get("/api/v1/analytics/workload?" + win, h).json().getJsonArray("series");
    assertThat(work).hasSize(2);
    assertThat(work.getJsonObject(0).getLong("activeQueues")).isEqualTo(2);
    assertThat(work.getJsonObject(0).getLong("backlogDelta")).as("22 pushed - 6 acked").isEqualTo(16);

    JsonArray parked = node.get("/api/v1/analytics/queue-parked-replicas?" + win + "&queue=" + qa, h).json()
        .getJsonArray("series");
    JsonObject p10 = find(parked, "2098-02-03T10:00:00.000000Z", "queue", qa);
    assertThat(p10.getLong("parkedConsumers")).as("2 + 1 over two nodes").isEqualTo(3);
    assertThat(p10.getLong("replicas")).isEqualTo(2);

    JsonArray perNode = node.get("/api/v1/analytics/worker-metrics?" + win + "&queue=" + qa, h).json()
        .getJsonArray("series");
    assertThat(find(perNode, "2098-02-03T10:00:00.000000Z", "nodeId", "n2").getLong("popMessages")).isEqualTo(6);
  }

  @Test
  void systemAndWorkerMetricsChartTheNodeRows() {
    String n = "ana-" + shortId();
    sql("INSERT INTO queen.stats_node_minute (minute, node_id, hostname, push_requests, push_latency_ms_sum,"
        + " push_latency_ms_max, heap_used_bytes, cpu_process_pct, db_pool_size, db_pool_active) VALUES"
        + " ('2098-02-03 10:05Z', '" + n + "', 'h1', 2, 20, 15, 1000, 10, 16, 3),"
        + " ('2098-02-03 10:06Z', '" + n + "', 'h1', 4, 40, 25, 2000, 20, 16, 5)");
    String win = "from=2098-02-03T10:00:00Z&to=2098-02-03T11:00:00Z&workerId=" + n;
    Reply sys = node.get("/api/v1/analytics/system-metrics?" + win, tenant());
    assertThat(sys.status()).as(sys.body()).isEqualTo(200);
    JsonArray s = sys.json().getJsonArray("series");
    assertThat(sys.json().getInteger("bucketSeconds")).as("1 h / 360 points, in whole minutes").isEqualTo(60);
    assertThat(s).hasSize(2);
    assertThat(s.getJsonObject(1).getLong("heapUsedBytes")).isEqualTo(2000);
    assertThat(s.getJsonObject(1).getInteger("dbPoolActive")).isEqualTo(5);
    assertThat(s.getJsonObject(0).getString("hostname")).isEqualTo("h1");

    JsonArray w = node.get("/api/v1/analytics/worker-metrics?" + win + "&points=1", tenant()).json()
        .getJsonArray("series");
    assertThat(w).hasSize(1);
    assertThat(w.getJsonObject(0).getLong("pushRequests")).isEqualTo(6);
    assertThat(w.getJsonObject(0).getDouble("pushLatencyAvgMs")).as("60 ms over 6 requests").isEqualTo(10.0);
    assertThat(w.getJsonObject(0).getLong("pushLatencyMaxMs")).isEqualTo(25);
    assertThat(node.get("/api/v1/analytics/system-metrics?" + win + "&hostname=other", tenant()).json()
        .getJsonArray("series")).isEmpty();
  }

  @Test
  void badWindowsAndIntervalsAre400sNamingTheField() {
    var h = tenant();
    assertError(node.get("/api/v1/status/analytics?interval=minute", h), "interval");
    assertError(node.get("/api/v1/status/analytics?from=yesterday", h), "from");
    assertError(node.get("/api/v1/status/analytics?to=2024-13-45T00:00:00Z", h), "to");
    Reply reversed = node.get("/api/v1/status/analytics?from=2024-02-01T00:00:00Z&to=2024-01-01T00:00:00Z", h);
    assertThat(reversed.status()).isEqualTo(400);
    assertThat(reversed.json()).isEqualTo(io.queenvertx.testing.Wire.error(400, "from must not be after to"));
    assertError(node.get("/api/v1/status/analytics?from=2000-01-01T00:00:00Z&to=2005-01-01T00:00:00Z", h),
        "interval");
    assertError(node.get("/api/v1/analytics/queue-ops?from=x", h), "from");
    assertError(node.get("/api/v1/analytics/dlq-signatures?to=x", h), "to");
    assertThat(node.get("/api/v1/status/analytics?from=2024-01-01&to=2024-01-02T00:00:00", h).status())
        .as("a bare date and a local date-time read as UTC").isEqualTo(200);
    assertThat(node.get("/api/v1/analytics/workload", h).status()).as("no window: the last hour").isEqualTo(200);
    Reply empty = node.get("/api/v1/status/analytics?from=2024-01-01T00:00:00Z&to=2024-01-01T00:00:00Z", h);
    assertThat(empty.json().getJsonObject("totals").getLong("pushMessages")).as("an empty window totals zero")
        .isZero();
  }

  // ---- current-state views ----------------------------------------------------------------------------------------

  @Test
  void dlqSignaturesGroupDeadLettersByTheirMaskedErrorText() {
    var h = tenant();
    String q = "sig" + shortId();
    Wire.retryLimitZero(node, h, q);
    String[] errors = {"timeout after 30s on order 17", "invalid payload", "timeout after 45s on order 9912"};
    for (int i = 0; i < errors.length; i++) Wire.deadLetter(node, h, q, null, i, "s" + (i + 1), null, errors[i]);
    Reply r = node.get("/api/v1/analytics/dlq-signatures?queue=" + q, h);
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    assertThat(r.json().getLong("deadLetters")).isEqualTo(3);
    JsonArray sigs = r.json().getJsonArray("signatures");
    assertThat(sigs).hasSize(2);
    JsonObject timeout = sigs.getJsonObject(0);
    assertThat(timeout.getString("signature")).isEqualTo("timeout after <n>s on order <n>");
    assertThat(timeout.getLong("count")).isEqualTo(2);
    assertThat(timeout.getJsonArray("queues")).containsExactly(q);
    assertThat(timeout.getJsonObject("example").getString("error")).isEqualTo(errors[2]);
    assertThat(timeout.getJsonObject("example").getString("transactionId")).isEqualTo("s3");
    assertThat(timeout.getString("firstSeen")).isLessThanOrEqualTo(timeout.getString("lastSeen"));
    assertThat(sigs.getJsonObject(1).getString("signature")).isEqualTo("invalid payload");
    assertThat(sigs.getJsonObject(1).getLong("count")).isEqualTo(1);

    assertThat(node.get("/api/v1/analytics/dlq-signatures?limit=1&queue=" + q, h).json().getJsonArray("signatures"))
        .hasSize(1);
    assertThat(node.get("/api/v1/analytics/dlq-signatures", tenant()).json().getLong("deadLetters"))
        .as("another tenant sees none").isZero();
  }

  @Test
  void queueLagAndPartitionLivenessReadTheCursors() {
    var h = tenant();
    String q = "lag" + shortId();
    Wire.pushAll(node, h, List.of(item(q, "p1", 1, "l1"), item(q, "p1", 2, "l2"), item(q, "p1", 3, "l3")));
    Wire.pushOne(node, h, q, "p2", 4, "l4");
    ackAs(h, popOne(h, "/api/v1/pop/queue/" + q + "/partition/p1?batch=1"), null);
    ackAs(h, popOne(h, "/api/v1/pop/queue/" + q + "/partition/p2?batch=1"), null);
    Wire.pushOne(node, h, q, "p2", 5, "l5");
    Wire.pushOne(node, h, q, "p3", 6, "l6"); // created after the pops: no cursor, never popped

    Reply lag = node.get("/api/v1/analytics/queue-lag?queue=" + q, h);
    assertThat(lag.status()).as(lag.body()).isEqualTo(200);
    JsonArray lags = lag.json().getJsonArray("lags");
    assertThat(lags).hasSize(1);
    JsonObject l = lags.getJsonObject(0);
    assertThat(l.getString("group")).isEqualTo("__QUEUE_MODE__");
    assertThat(l.getLong("lagMessages")).as("l2, l3 behind the cursor of p1, l5 behind p2's").isEqualTo(3);
    assertThat(l.getLong("lagSeconds")).isBetween(0L, 60L);
    assertThat(l.getLong("partitions")).isEqualTo(2);
    assertThat(l.getLong("partitionsLagging")).isEqualTo(2);
    assertThat(l.getLong("members")).as("no live lease").isZero();

    Reply live = node.get("/api/v1/analytics/partition-liveness?queue=" + q + "&idleSeconds=3600", h);
    assertThat(live.status()).as(live.body()).isEqualTo(200);
    assertThat(live.json().getLong("total")).isEqualTo(3);
    assertThat(live.json().getLong("idle")).as("both written moments ago").isZero();
    JsonArray parts = live.json().getJsonArray("partitions");
    JsonObject p2 = parts.stream().map(o -> (JsonObject) o).filter(o -> o.getString("partition").equals("p2"))
        .findFirst().orElseThrow();
    assertThat(p2.getString("lastPushAt")).matches(ISO);
    assertThat(p2.getString("lastPopAt")).matches(ISO);
    assertThat(p2.getLong("pending")).isEqualTo(1);
    JsonObject p1 = parts.stream().map(o -> (JsonObject) o).filter(o -> o.getString("partition").equals("p1"))
        .findFirst().orElseThrow();
    assertThat(p1.getString("lastPopAt")).matches(ISO);
    JsonObject p3 = parts.stream().map(o -> (JsonObject) o).filter(o -> o.getString("partition").equals("p3"))
        .findFirst().orElseThrow();
    assertThat(p3.getValue("lastPopAt")).as("never popped").isNull();
    assertThat(p3.getLong("pending")).isEqualTo(1);

    assertThat(node.get("/api/v1/analytics/queue-lag", tenant()).json().getJsonArray("lags")).isEmpty();
    assertThat(node.get("/api/v1/analytics/partition-liveness", tenant()).json().getLong("total")).isZero();
  }

  @Test
  void postgresStatsReportsTheRealDatabase() {
    Reply r = node.get("/api/v1/analytics/postgres-stats", tenant());
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    JsonObject j = r.json();
    assertThat(j.getString("version")).matches("\\d+(\\.\\d+)?.*");
    JsonObject db = j.getJsonObject("database");
    assertThat(db.getLong("sizeBytes")).isGreaterThan(1_000_000L);
    assertThat(db.getDouble("cacheHitRatio")).isBetween(0.01, 1.0);
    JsonObject conns = j.getJsonObject("connections");
    assertThat(conns.getLong("total")).as("this node's pool at least").isPositive();
    assertThat(conns.getLong("active")).as("the connection running this query").isPositive();
    assertThat(conns.getInteger("max")).isPositive();
    JsonObject partitions = j.getJsonArray("tables").stream().map(o -> (JsonObject) o)
        .filter(o -> o.getString("table").equals("log_partitions")).findFirst().orElseThrow();
    assertThat(partitions.getLong("totalBytes")).isPositive();
    assertThat(j.getJsonObject("totals").getLong("tables")).isGreaterThan(10);
  }

  // ---- helpers -----------------------------------------------------------------------------------------------------

  static Map<String, String> tenant() {
    return Map.of("x-queen-tenant", UUID.randomUUID().toString());
  }

  /** Pops with the given path and returns its one message, carrying the lease id. */
  static JsonObject popOne(Map<String, String> h, String path) {
    Reply r = node.get(path, h);
    assertThat(r.status()).as("pop %s answered %s", path, r.body()).isEqualTo(200);
    List<JsonObject> ms = Wire.messages(r.json());
    assertThat(ms).as(r.body()).hasSize(1);
    return withLease(ms.get(0), r.json());
  }

  static JsonObject withLease(JsonObject m, JsonObject pop) {
    return m.copy().put("leaseId", m.getString("leaseId", pop.getString("leaseId")));
  }

  /** Acks {@code m} completed for {@code group} (null = queue mode). */
  static void ackAs(Map<String, String> h, JsonObject m, String group) {
    JsonObject a = Wire.ack(m.getString("transactionId"), m.getString("partitionId"), "completed",
        m.getString("leaseId"));
    if (group != null) a.put("consumerGroup", group);
    assertThat(Wire.ack(node, h, a).getBoolean("success", true)).isTrue();
  }

  static JsonObject depth(Map<String, String> h, String q, String group) {
    Reply r = node.get("/api/v1/resources/queues/" + q + "/depth" + (group == null ? "" : "?group=" + group), h);
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    return r.json();
  }

  static void sql(String statement) {
    TestDatabase.execute(TestDatabase.get().shared(), statement);
  }

  static JsonObject find(JsonArray series, String t, String key, String value) {
    return series.stream().map(o -> (JsonObject) o)
        .filter(o -> o.getString("t").equals(t) && value.equals(o.getString(key))).findFirst()
        .orElseThrow(() -> new AssertionError("no point " + t + " " + key + "=" + value + " in " + series.encode()));
  }

  static void assertError(Reply r, String field) {
    assertThat(r.status()).as(r.body()).isEqualTo(400);
    assertThat(r.json().fieldNames()).containsExactlyInAnyOrder("error", "code");
    assertThat(r.json().getString("error")).startsWith(field + " ");
  }
}
