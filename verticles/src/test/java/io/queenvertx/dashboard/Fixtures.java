package io.queenvertx.dashboard;

import io.queenvertx.kernel.Config;
import io.queenvertx.testing.TestDatabase;
import io.queenvertx.testing.TestNode;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/** Data the dashboard tests put in place through the API (and, for dead letters, SQL). */
final class Fixtures {
  private Fixtures() {}

  static Config.Database db(TestNode node) {
    return node.node().config().postgres().connection().orElseThrow();
  }

  /** Pushes one message; returns its partition id. */
  static String push(TestNode node, String queue, String txn, JsonObject payload, Map<String, String> headers) {
    var r = node.post("/api/v1/push", new JsonObject().put("items", new JsonArray().add(new JsonObject()
        .put("queue", queue).put("transactionId", txn).put("payload", payload))), headers);
    if (r.status() != 201) throw new IllegalStateException("push answered " + r.status() + ": " + r.body());
    return r.array().getJsonObject(0).getString("partitionId");
  }

  /**
   * Files {@code n} dead letters on a new partition of {@code queue} (one pushed message creates it); the rows are
   * ids and transactions {@code <prefix>-1..n}, newest last. Returns the partition id.
   */
  static String deadLetters(TestNode node, String queue, int n, Map<String, String> headers) {
    String pid = push(node, queue, queue + "-seed", new JsonObject().put("seed", true), headers);
    TestDatabase.execute(db(node), "INSERT INTO queen.log_dlq(partition_id, consumer_group, \"offset\", message_id, "
        + "transaction_id, payload, error, retry_count, failed_at) SELECT '" + pid + "', '__QUEUE_MODE__', g, "
        + "gen_random_uuid(), '" + queue + "-' || g, jsonb_build_object('order', g, 'queue', '" + queue + "'), "
        + "'handler threw: timeout after ' || (g * 10) || ' ms', 3, now() - interval '1 hour' + g * interval '1 ms' "
        + "FROM generate_series(1, " + n + ") g");
    return pid;
  }

  static String dlqId(TestNode node, String txn) {
    return TestDatabase.queryString(db(node), "SELECT id::text FROM queen.log_dlq WHERE transaction_id = '" + txn + "'");
  }

  static long dlqRows(TestNode node, String queue) {
    return io.queenvertx.testing.Wire.dlqCountOfQueue(db(node), queue);
  }

  static String hex32() {
    return java.util.UUID.randomUUID().toString().replace("-", "");
  }

  /** One POST /api/v1/kv with these operations; its results (the call must answer 200). */
  static JsonArray kv(TestNode node, JsonObject... ops) {
    var r = node.post("/api/v1/kv", new JsonObject().put("operations", new JsonArray(java.util.List.of((Object[]) ops))));
    if (r.status() != 200) throw new IllegalStateException("kv answered " + r.status() + ": " + r.body());
    return r.json().getJsonArray("results");
  }

  /**
   * Writes a supervision record as Queen's 2.x JavaScript consumer does (consumer/Supervision.js): one POST /api/v1/kv
   * with the head and one chunk, 60 s TTL, both of which must be applied; the heartbeat is {@code updatedAt}.
   */
  static void supervise(TestNode node, String group, String instance, String hostname, long updatedAt, String state,
      int busy) {
    JsonObject doc = new JsonObject().put("schema", "queen.consumer.status/v1").put("instance_id", instance)
        .put("engine", "js").put("execution_model", "async-tasks").put("hostname", hostname)
        .put("pid", 4242).put("state", state).put("updated_at_epoch", updatedAt).put("started_at_epoch", updatedAt - 600)
        .put("uptime_seconds", 600).put("configuration", new JsonObject().put("heartbeat_timeout", 30))
        .put("pool_status", new JsonArray().add(new JsonObject().put("name", "consumer").put("queue", "orders-" + group)
            .putNull("namespace").putNull("task").put("consumer_group", "billing").put("desired", 8).put("running", 8)
            .put("busy", busy).put("completed", 1234).put("failed", 5).put("last_completed_at_epoch", updatedAt)
            .putNull("oldest_inflight_seconds")));
    byte[] bytes = doc.encode().getBytes(StandardCharsets.UTF_8);
    String write = hex32();
    String slot = group + "/" + instance;
    JsonArray results = kv(node,
        new JsonObject().put("op", "put").put("ns", "queen-supervisor").put("key", slot + "/head").put("value",
            new JsonObject().put("format", "queen.supervisor.remote-status/v1").put("write", write).put("chunks", 1)
                .put("bytes", bytes.length)).put("ttlSeconds", 60),
        new JsonObject().put("op", "put").put("ns", "queen-supervisor").put("key", slot + "/chunk/0000").put("value",
            new JsonObject().put("write", write).put("index", 0).put("data", Base64.getEncoder().encodeToString(bytes)))
            .put("ttlSeconds", 60));
    if (results.size() != 2 || !results.stream().allMatch(r -> ((JsonObject) r).getBoolean("applied"))) {
      throw new IllegalStateException("supervision write not applied: " + results);
    }
  }

  /** An HS256 token with the given role. */
  static String token(String secret, String role) {
    String header = b64("{\"alg\":\"HS256\",\"typ\":\"JWT\"}");
    String claims = b64(new JsonObject().put("sub", "dashboard-test").put("role", role)
        .put("exp", System.currentTimeMillis() / 1000 + 3600).encode());
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
      String signing = header + "." + claims;
      return signing + "." + Base64.getUrlEncoder().withoutPadding()
          .encodeToString(mac.doFinal(signing.getBytes(StandardCharsets.US_ASCII)));
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static String b64(String s) {
    return Base64.getUrlEncoder().withoutPadding().encodeToString(s.getBytes(StandardCharsets.UTF_8));
  }
}
