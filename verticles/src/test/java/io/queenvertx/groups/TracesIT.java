package io.queenvertx.groups;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestDatabase;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.TestNode.Reply;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Message traces (API.md §5.13) over real HTTP and PostgreSQL, with tenancy on so each test is its own tenant: the
 * body {@code message.trace()} of Queen's JS client sends, reading back by address and by name with paging, the
 * 400s, another tenant's partition, traces outliving their queue, and retention by their own age.
 */
class TracesIT {
  static final String HEADER = "x-queen-tenant";

  @NodeFixture(freshDatabase = true, env = {"QUEEN_TENANCY_HEADER=true", "QUEEN_KV_TRUSTED_PROXY=true",
      "RETENTION_INTERVAL=200", "QUEEN_TRACES_RETENTION_DAYS=7", "QUEEN_TRACES_PURGE_BATCH=2"})
  static TestNode node;

  static Map<String, String> tenant() {
    return Map.of(HEADER, UUID.randomUUID().toString());
  }

  /** A message of tenant h in a fresh queue: its partitionId and transactionId. */
  record Msg(String queue, String pid, String txn) {}

  static Msg message(Map<String, String> h) {
    String q = Wire.queue("trace");
    String txn = "t-" + Wire.shortId();
    JsonObject pushed = Wire.pushOne(node, h, q, null, new JsonObject().put("n", 1), txn);
    return new Msg(q, pushed.getString("partitionId"), txn);
  }

  /** The body Queen's JS client (consumer message.trace()) posts. */
  static JsonObject jsBody(Msg m, Object traceNames, String eventType, Object data) {
    return new JsonObject().put("transactionId", m.txn()).put("partitionId", m.pid())
        .put("consumerGroup", "__QUEUE_MODE__").put("traceNames", traceNames).put("eventType", eventType)
        .put("data", data);
  }

  static Reply trace(JsonObject body, Map<String, String> h) {
    return node.post("/api/v1/traces", body, h);
  }

  static JsonArray traces(Reply r) {
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    return r.json().getJsonArray("traces");
  }

  @Test
  void aTraceReadsBackByAddressAndByName() {
    var h = tenant();
    Msg m = message(h);
    String name = "order-" + Wire.shortId();
    Reply first = trace(jsBody(m, new JsonArray().add(name).add("tenant-acme"), "step",
        new JsonObject().put("text", "started")), h);
    assertThat(first.status()).as(first.body()).isEqualTo(201);
    assertThat(first.json().getBoolean("success")).isTrue();
    assertThat(first.json().getString("traceId")).matches(Wire.UUID_TEXT);
    Reply second = trace(new JsonObject().put("transactionId", m.txn()).put("partitionId", m.pid())
        .put("traceNames", name).put("data", new JsonObject().put("text", "done")).put("workerId", "w-7"), h);
    assertThat(second.status()).as(second.body()).isEqualTo(201);

    JsonArray byAddress = traces(node.get("/api/v1/traces/" + m.pid() + "/" + m.txn(), h));
    assertThat(byAddress).hasSize(2);
    JsonObject t1 = byAddress.getJsonObject(0);
    assertThat(t1.getString("id")).isEqualTo(first.json().getString("traceId"));
    assertThat(t1.getString("event_type")).isEqualTo("step");
    assertThat(t1.getJsonObject("data")).isEqualTo(new JsonObject().put("text", "started"));
    assertThat(t1.getString("consumer_group")).isEqualTo("__QUEUE_MODE__");
    assertThat(t1.getString("worker_id")).isEqualTo(node.node().config().serverId());
    assertThat(t1.getString("created_at")).endsWith("Z");
    assertThat(t1.getJsonArray("trace_names")).containsExactly(name, "tenant-acme");
    JsonObject t2 = byAddress.getJsonObject(1);
    assertThat(t2.getString("event_type")).as("default eventType").isEqualTo("info");
    assertThat(t2.getString("worker_id")).isEqualTo("w-7");
    assertThat(t2.getJsonArray("trace_names")).containsExactly(name);

    Reply byName = node.get("/api/v1/traces/by-name/" + name, h);
    assertThat(byName.status()).isEqualTo(200);
    assertThat(byName.json().getLong("total")).isEqualTo(2);
    assertThat(byName.json().getJsonObject("pagination"))
        .isEqualTo(new JsonObject().put("limit", 100).put("offset", 0));
    JsonArray named = byName.json().getJsonArray("traces");
    assertThat(named).hasSize(2);
    assertThat(named.getJsonObject(0).getString("transaction_id")).isEqualTo(m.txn());
    assertThat(named.getJsonObject(0).getString("partition_id")).isEqualTo(m.pid());
    assertThat(named.getJsonObject(0).getString("queue_name")).isEqualTo(m.queue());
    assertThat(named.getJsonObject(1).getJsonObject("data").getString("text")).isEqualTo("done");

    Reply names = node.get("/api/v1/traces/names", h);
    assertThat(names.status()).isEqualTo(200);
    assertThat(names.json().getLong("total")).isEqualTo(2);
    assertThat(names.json().getJsonObject("pagination")).isEqualTo(new JsonObject().put("limit", 50).put("offset", 0));
    JsonObject top = names.json().getJsonArray("trace_names").getJsonObject(0);
    assertThat(top.getString("trace_name")).as("most recently used first").isEqualTo(name);
    assertThat(top.getLong("trace_count")).isEqualTo(2);
    assertThat(top.getLong("message_count")).isEqualTo(1);
  }

  @Test
  void theListingsPage() {
    var h = tenant();
    Msg m = message(h);
    String name = "page-" + Wire.shortId();
    for (int i = 0; i < 5; i++) {
      assertThat(trace(jsBody(m, new JsonArray().add(name).add("n" + i), "info", new JsonObject().put("i", i)), h)
          .status()).isEqualTo(201);
    }
    Reply p1 = node.get("/api/v1/traces/by-name/" + name + "?limit=2&offset=0", h);
    assertThat(p1.json().getLong("total")).isEqualTo(5);
    assertThat(p1.json().getJsonArray("traces")).extracting(o -> ((JsonObject) o).getJsonObject("data").getInteger("i"))
        .containsExactly(0, 1);
    Reply p3 = node.get("/api/v1/traces/by-name/" + name + "?limit=2&offset=4", h);
    assertThat(p3.json().getJsonArray("traces")).extracting(o -> ((JsonObject) o).getJsonObject("data").getInteger("i"))
        .containsExactly(4);
    assertThat(p3.json().getJsonObject("pagination")).isEqualTo(new JsonObject().put("limit", 2).put("offset", 4));

    Reply n1 = node.get("/api/v1/traces/names?limit=4", h);
    assertThat(n1.json().getLong("total")).isEqualTo(6);
    assertThat(n1.json().getJsonArray("trace_names")).hasSize(4);
    Reply n2 = node.get("/api/v1/traces/names?limit=4&offset=4", h);
    assertThat(n2.json().getJsonArray("trace_names")).hasSize(2);
    Reply junk = node.get("/api/v1/traces/names?limit=abc&offset=-3", h);
    assertThat(junk.json().getJsonObject("pagination")).as("qint falls back to the defaults")
        .isEqualTo(new JsonObject().put("limit", 50).put("offset", 0));
  }

  @Test
  void badTraceBodiesAre400s() {
    var h = tenant();
    Msg m = message(h);
    assertError(trace(new JsonObject().put("data", 1), h), "transactionId and partitionId are required");
    assertError(trace(new JsonObject().put("transactionId", m.txn()).put("data", 1), h),
        "transactionId and partitionId are required");
    assertError(trace(new JsonObject().put("transactionId", "").put("partitionId", m.pid()).put("data", 1), h),
        "transactionId and partitionId are required");
    assertError(trace(new JsonObject().put("transactionId", m.txn()).put("partitionId", m.pid()), h),
        "data is required");
    assertError(trace(jsBody(m, null, "info", null), h), "data is required");
    assertError(trace(jsBody(m, 5, "info", 1), h), "traceNames must be an array of strings or a string");
    assertError(trace(jsBody(m, new JsonArray().add(1), "info", 1), h),
        "traceNames must be an array of strings or a string");
    assertError(trace(jsBody(m, null, "info", 1).put("eventType", 3), h), "eventType must be a string");
    Reply notJson = node.post("/api/v1/traces", "{oops", h);
    assertThat(notJson.status()).isEqualTo(400);
    assertThat(notJson.json().getString("error")).startsWith("bad body");
    assertThat(traces(node.get("/api/v1/traces/" + m.pid() + "/" + m.txn(), h))).isEmpty();
  }

  static void assertError(Reply r, String error) {
    assertThat(r.status()).as(r.body()).isEqualTo(400);
    assertThat(r.json()).isEqualTo(io.queenvertx.testing.Wire.error(400, error));
  }

  @Test
  void anotherTenantsPartitionIsMessageNotFoundAndItsTracesAreInvisible() {
    var a = tenant();
    var b = tenant();
    Msg m = message(a);
    String name = "secret-" + Wire.shortId();
    assertThat(trace(jsBody(m, name, "info", new JsonObject().put("s", 1)), a).status()).isEqualTo(201);

    JsonObject notFound = new JsonObject().put("success", false).put("error", "Message not found")
        .put("code", "not_found");
    for (String pid : List.of(m.pid(), UUID.randomUUID().toString(), "not-a-uuid")) {
      Reply r = trace(jsBody(new Msg(m.queue(), pid, m.txn()), name, "info", 1), b);
      assertThat(r.status()).as("%s answered %s", pid, r.body()).isEqualTo(404);
      assertThat(r.json()).isEqualTo(notFound);
    }
    assertThat(node.get("/api/v1/traces/" + m.pid() + "/" + m.txn(), b).json())
        .isEqualTo(new JsonObject().put("traces", new JsonArray()));
    assertThat(node.get("/api/v1/traces/not-a-uuid/" + m.txn(), b).json())
        .isEqualTo(new JsonObject().put("traces", new JsonArray()));
    assertThat(node.get("/api/v1/traces/by-name/" + name, b).json().getLong("total")).isZero();
    assertThat(node.get("/api/v1/traces/names", b).json().getJsonArray("trace_names")).isEmpty();
    assertThat(traces(node.get("/api/v1/traces/" + m.pid() + "/" + m.txn(), a))).hasSize(1);
  }

  @Test
  void tracesOutliveTheirQueue() {
    var h = tenant();
    Msg m = message(h);
    String name = "kept-" + Wire.shortId();
    assertThat(trace(jsBody(m, name, "info", new JsonObject().put("k", 1)), h).status()).isEqualTo(201);
    Reply del = node.delete("/api/v1/resources/queues/" + m.queue(), h);
    assertThat(del.json().getBoolean("existed")).isTrue();
    assertThat(Wire.partitionId(m.queue(), "Default")).isNull();

    assertThat(traces(node.get("/api/v1/traces/" + m.pid() + "/" + m.txn(), h))).hasSize(1);
    JsonObject named = node.get("/api/v1/traces/by-name/" + name, h).json().getJsonArray("traces").getJsonObject(0);
    assertThat(named.getString("queue_name")).isEqualTo(m.queue());
    assertThat(named.getString("partition_name")).isEqualTo("Default");
  }

  @Test
  void retentionDeletesTracesOlderThanTheSettingInBatchesAndKeepsYoungerOnes() {
    var db = node.node().config().postgres().connection().orElseThrow();
    String tenant = UUID.randomUUID().toString();
    String pid = UUID.randomUUID().toString();
    for (int i = 0; i < 5; i++) {
      int ageDays = i < 4 ? 8 : 6;
      TestDatabase.execute(db, "WITH t AS (INSERT INTO queen.message_traces (tenant_id, partition_id, transaction_id,"
          + " data, created_at) VALUES ('" + tenant + "', '" + pid + "', 'old-" + i + "', '{}', now() - interval '"
          + ageDays + " days') RETURNING id, created_at) INSERT INTO queen.message_trace_names (trace_id, trace_name,"
          + " tenant_id, created_at) SELECT id, 'aged', '" + tenant + "', created_at FROM t");
    }
    String where = " WHERE tenant_id = '" + tenant + "'";
    await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(100))
        .until(() -> TestDatabase.queryLong(db, "SELECT count(*) FROM queen.message_traces" + where) == 1);
    assertThat(TestDatabase.queryLong(db, "SELECT count(*) FROM queen.message_traces" + where
        + " AND transaction_id = 'old-4'")).as("6 days old stays").isEqualTo(1);
    assertThat(TestDatabase.queryLong(db, "SELECT count(*) FROM queen.message_trace_names" + where))
        .as("names go with their trace").isEqualTo(1);
  }
}
