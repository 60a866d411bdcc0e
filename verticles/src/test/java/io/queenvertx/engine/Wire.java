package io.queenvertx.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.boot.Config;
import io.queenvertx.testing.TestDatabase;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.TestNode.Reply;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.sql.DriverManager;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * What the engine integration tests say to a node and read back from its database: push and pop bodies, and the
 * few JDBC probes (segments, txns, cursors, DLQ rows) that prove what was or was not written.
 */
final class Wire {
  static final String QUEUE_MODE = "__QUEUE_MODE__";
  static final String ZERO_UUID = "00000000-0000-0000-0000-000000000000";

  private Wire() {}

  /** A queue name no other test uses; no dot, so it derives no namespace. */
  static String queue(String prefix) {
    return prefix + "-" + UUID.randomUUID().toString().replace("-", "").substring(0, 16);
  }

  static JsonObject item(String queue, String partition, Object payload, String txn) {
    var it = new JsonObject().put("queue", queue).put("payload", payload);
    if (partition != null) it.put("partition", partition);
    if (txn != null) it.put("transactionId", txn);
    return it;
  }

  static Reply push(TestNode node, JsonObject... items) {
    return node.post("/api/v1/push", new JsonObject().put("items", new JsonArray(List.of((Object[]) items))));
  }

  /** Pushes one item and returns its result, asserting the 201 and {@code queued}. */
  static JsonObject pushQueued(TestNode node, String queue, String partition, Object payload, String txn) {
    Reply r = push(node, item(queue, partition, payload, txn));
    assertThat(r.status()).as("push %s", r.body()).isEqualTo(201);
    JsonObject res = r.array().getJsonObject(0);
    assertThat(res.getString("status")).as("push %s", r.body()).isEqualTo("queued");
    return res;
  }

  static Reply pop(TestNode node, String queue, String query) {
    return node.get("/api/v1/pop/queue/" + queue + (query == null || query.isEmpty() ? "" : "?" + query));
  }

  /** Pops and asserts a 200 with at least one message. */
  static JsonObject popSome(TestNode node, String queue, String query) {
    Reply r = pop(node, queue, query);
    assertThat(r.status()).as("pop %s?%s answered %s", queue, query, r.body()).isEqualTo(200);
    JsonObject j = r.json();
    assertThat(j.getJsonArray("messages")).as("messages of %s", r.body()).isNotEmpty();
    return j;
  }

  static List<JsonObject> messages(JsonObject pop) {
    List<JsonObject> out = new ArrayList<>();
    for (Object o : pop.getJsonArray("messages")) out.add((JsonObject) o);
    return out;
  }

  static JsonObject ack(String txn, String partitionId, String status, String leaseId) {
    var a = new JsonObject().put("transactionId", txn).put("partitionId", partitionId);
    if (status != null) a.put("status", status);
    if (leaseId != null) a.put("leaseId", leaseId);
    return a;
  }

  /** A single ack; asserts the contract's HTTP 200 and one-element array, and returns the element. */
  static JsonObject ackOne(TestNode node, JsonObject ack) {
    Reply r = node.post("/api/v1/ack", ack);
    assertThat(r.status()).as("ack %s answered %s", ack.encode(), r.body()).isEqualTo(200);
    JsonArray arr = r.array();
    assertThat(arr).hasSize(1);
    return arr.getJsonObject(0);
  }

  static JsonObject configure(TestNode node, JsonObject body) {
    Reply r = node.post("/api/v1/configure", body);
    assertThat(r.status()).as("configure %s answered %s", body.encode(), r.body()).isEqualTo(200);
    return r.json();
  }

  // ---- database probes -------------------------------------------------------------------------------------------

  static Config.Database db() {
    return TestDatabase.get().shared();
  }

  static long count(String sql) {
    return TestDatabase.queryLong(db(), sql);
  }

  /** The partition id of (queue, partition), or null when the partition does not exist. */
  static String partitionId(String queue, String partition) {
    List<Map<String, Object>> r = rows("SELECT p.id::text AS id FROM queen.log_partitions p JOIN queen.queues q "
        + "ON q.id = p.queue_id WHERE q.name = '" + queue + "' AND p.name = '" + partition + "'");
    return r.isEmpty() ? null : (String) r.get(0).get("id");
  }

  static long segments(String partitionId) {
    return count("SELECT count(*) FROM queen.log_segments WHERE partition_id = '" + partitionId + "'");
  }

  static long txnRows(String partitionId) {
    return count("SELECT count(*) FROM queen.log_txns WHERE partition_id = '" + partitionId + "'");
  }

  /** Frames stored in the partition: the sum of the segment ranges. */
  static long frames(String partitionId) {
    return count("SELECT coalesce(sum(end_offset - base_offset + 1), 0) FROM queen.log_segments WHERE partition_id = '"
        + partitionId + "'");
  }

  static long queueRows(String queue) {
    return count("SELECT count(*) FROM queen.queues WHERE name = '" + queue + "'");
  }

  static Map<String, Object> cursor(String partitionId, String group) {
    List<Map<String, Object>> r = rows("SELECT committed, batch_end, worker_id, batch_retry_count, attempt_count "
        + "FROM queen.log_consumers WHERE partition_id = '" + partitionId + "' AND consumer_group = '" + group + "'");
    return r.isEmpty() ? null : r.get(0);
  }

  static List<Map<String, Object>> rows(String sql) {
    Config.Database d = db();
    try (var c = DriverManager.getConnection("jdbc:postgresql://" + d.host() + ":" + d.port() + "/" + d.database(),
        d.user(), d.password()); var st = c.createStatement(); var rs = st.executeQuery(sql)) {
      List<Map<String, Object>> out = new ArrayList<>();
      var md = rs.getMetaData();
      while (rs.next()) {
        Map<String, Object> row = new LinkedHashMap<>();
        for (int i = 1; i <= md.getColumnCount(); i++) row.put(md.getColumnLabel(i), rs.getObject(i));
        out.add(row);
      }
      return out;
    } catch (Exception e) {
      throw new IllegalStateException(sql, e);
    }
  }
}
