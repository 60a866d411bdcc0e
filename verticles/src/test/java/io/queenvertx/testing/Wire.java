package io.queenvertx.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.kernel.Config;
import io.queenvertx.testing.TestNode.Reply;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.sql.Connection;
import java.sql.DriverManager;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * What the integration tests say to a node (push, pop, ack, configure, the dead-letter helpers) and the JDBC probes
 * (segments, txns, cursors, DLQ rows) that prove what the shared test database holds. The calls that take a header
 * map may carry headers so the tenancy tests can speak as a given tenant; {@link #NONE} is the default tenant.
 */
public final class Wire {
  public static final Map<String, String> NONE = Map.of();
  public static final String QUEUE_MODE = "__QUEUE_MODE__";
  public static final String ZERO_UUID = "00000000-0000-0000-0000-000000000000";
  public static final String DEFAULT_TENANT = "00000000-0000-0000-0000-000000000001";
  /** The seed's timestamps: ISO-8601 UTC with milliseconds, e.g. 2026-07-30T10:41:02.010Z. */
  public static final Pattern ISO_MS = Pattern.compile("\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z");
  public static final Pattern UUID_TEXT =
      Pattern.compile("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");
  public static final String GONE_ID_MESSAGE =
      "No dead-letter row with this id \u2014 it was already replayed or purged";
  public static final String NO_DLQ_ROW_DELETE =
      "No dead-letter row for this address. Live messages live in immutable segments and cannot be deleted";
  public static final String NO_DLQ_ROW_RETRY =
      "No dead-letter row for this address. Only dead-lettered messages can be replayed";

  private Wire() {}

  /** A queue name no other test uses; no dot, so it derives no namespace. */
  public static String queue(String prefix) {
    return prefix + "-" + UUID.randomUUID().toString().replace("-", "").substring(0, 16);
  }

  public static String shortId() {
    return UUID.randomUUID().toString().replace("-", "").substring(0, 10);
  }

  // ---- push --------------------------------------------------------------------------------------------------------

  public static JsonObject item(String queue, String partition, Object payload, String txn) {
    var it = new JsonObject().put("queue", queue).put("payload", payload);
    if (partition != null) it.put("partition", partition);
    if (txn != null) it.put("transactionId", txn);
    return it;
  }

  public static Reply push(TestNode node, JsonObject... items) {
    return node.post("/api/v1/push", new JsonObject().put("items", new JsonArray(List.of((Object[]) items))));
  }

  public static Reply push(TestNode node, Map<String, String> h, List<JsonObject> items) {
    return node.post("/api/v1/push", new JsonObject().put("items", new JsonArray(new ArrayList<>(items))), h);
  }

  /** Pushes one item and returns its result, asserting the 201 and {@code queued}. */
  public static JsonObject pushQueued(TestNode node, String queue, String partition, Object payload, String txn) {
    Reply r = push(node, item(queue, partition, payload, txn));
    assertThat(r.status()).as("push %s", r.body()).isEqualTo(201);
    JsonObject res = r.array().getJsonObject(0);
    assertThat(res.getString("status")).as("push %s", r.body()).isEqualTo("queued");
    return res;
  }

  /** Pushes the items in ONE request (so they share a segment) and returns the results, asserting all queued. */
  public static JsonArray pushAll(TestNode node, Map<String, String> h, List<JsonObject> items) {
    Reply r = push(node, h, items);
    assertThat(r.status()).as("push answered %s", r.body()).isEqualTo(201);
    JsonArray res = r.array();
    assertThat(res).hasSize(items.size());
    for (Object o : res) assertThat(((JsonObject) o).getString("status")).as("push %s", r.body()).isEqualTo("queued");
    return res;
  }

  public static JsonObject pushOne(TestNode node, Map<String, String> h, String queue, String partition,
                                   Object payload, String txn) {
    return pushAll(node, h, List.of(item(queue, partition, payload, txn))).getJsonObject(0);
  }

  /** Pushes one message to {@code queue}'s Default partition (asserting it is queued); returns the partition id. */
  public static String pushToDefault(TestNode node, String queue, Object payload, String txn) {
    pushOne(node, queue, null, payload, txn);
    return partitionId(queue, "Default");
  }

  public static JsonObject pushOne(TestNode node, String queue, String partition, Object payload, String txn) {
    return pushOne(node, NONE, queue, partition, payload, txn);
  }

  // ---- pop ---------------------------------------------------------------------------------------------------------

  /** {@code GET /api/v1/pop/queue/<queue>} with the raw query string (may be null or empty). */
  public static Reply pop(TestNode node, String queue, String query) {
    return node.get("/api/v1/pop/queue/" + queue + (query == null || query.isEmpty() ? "" : "?" + query));
  }

  /** Pops and asserts a 200 with at least one message. */
  public static JsonObject popSome(TestNode node, String queue, String query) {
    Reply r = pop(node, queue, query);
    assertThat(r.status()).as("pop %s?%s answered %s", queue, query, r.body()).isEqualTo(200);
    JsonObject j = r.json();
    assertThat(j.getJsonArray("messages")).as("messages of %s", r.body()).isNotEmpty();
    return j;
  }

  /** A pop path with batch=10, an optional pinned partition, and an optional group in subscription mode all. */
  public static String popPath(String queue, String partition, String group, String extra) {
    StringBuilder p = new StringBuilder("/api/v1/pop/queue/").append(queue);
    if (partition != null) p.append("/partition/").append(partition);
    p.append("?batch=10");
    if (group != null) p.append("&consumerGroup=").append(group).append("&subscriptionMode=all");
    if (extra != null && !extra.isEmpty()) p.append('&').append(extra);
    return p.toString();
  }

  public static Reply pop(TestNode node, Map<String, String> h, String queue, String partition, String group,
                          String extra) {
    return node.get(popPath(queue, partition, group, extra), h);
  }

  /** Pops (batch=10) and asserts a 200 with at least one message. */
  public static JsonObject popSome(TestNode node, Map<String, String> h, String queue, String partition,
                                   String group) {
    Reply r = pop(node, h, queue, partition, group, null);
    assertThat(r.status()).as("pop %s/%s group %s answered %s", queue, partition, group, r.body()).isEqualTo(200);
    JsonObject j = r.json();
    assertThat(j.getJsonArray("messages")).as("messages of %s", r.body()).isNotEmpty();
    return j;
  }

  /**
   * The generic error body {@code {"error":text,"code":...}}: Queen's text and the 2.x machine code of its status
   * (queen2-contract.md §1.1).
   */
  public static JsonObject error(int status, String text) {
    String code = switch (status) {
      case 400 -> "bad_request";
      case 403 -> "forbidden";
      case 404 -> "not_found";
      case 500 -> "internal";
      default -> throw new IllegalArgumentException("no expected code for " + status);
    };
    return new JsonObject().put("error", text).put("code", code);
  }

  /** The messages of a pop answer. */
  public static List<JsonObject> messages(JsonObject pop) {
    return list(pop.getJsonArray("messages"));
  }

  public static List<JsonObject> list(JsonArray a) {
    List<JsonObject> out = new ArrayList<>();
    for (Object o : a) out.add((JsonObject) o);
    return out;
  }

  // ---- ack and configure -------------------------------------------------------------------------------------------

  /** An ack body; status and leaseId are left out when null. */
  public static JsonObject ack(String txn, String partitionId, String status, String leaseId) {
    var a = new JsonObject().put("transactionId", txn).put("partitionId", partitionId);
    if (status != null) a.put("status", status);
    if (leaseId != null) a.put("leaseId", leaseId);
    return a;
  }

  /** A single ack; asserts the contract's HTTP 200 and one-element array, and returns the element. */
  public static JsonObject ackOne(TestNode node, JsonObject ack) {
    return ack(node, NONE, ack);
  }

  /** A single ack with headers; asserts the HTTP 200 and one-element array, and returns the element. */
  public static JsonObject ack(TestNode node, Map<String, String> h, JsonObject body) {
    Reply r = node.post("/api/v1/ack", body, h);
    assertThat(r.status()).as("ack %s answered %s", body.encode(), r.body()).isEqualTo(200);
    JsonArray arr = r.array();
    assertThat(arr).hasSize(1);
    return arr.getJsonObject(0);
  }

  /** Posts a whole configure body and asserts the 200. */
  public static JsonObject configure(TestNode node, JsonObject body) {
    Reply r = node.post("/api/v1/configure", body);
    assertThat(r.status()).as("configure %s answered %s", body.encode(), r.body()).isEqualTo(200);
    return r.json();
  }

  public static JsonObject configure(TestNode node, Map<String, String> h, String queue, JsonObject options) {
    JsonObject body = new JsonObject().put("queue", queue).put("options", options);
    Reply r = node.post("/api/v1/configure", body, h);
    assertThat(r.status()).as("configure %s answered %s", body.encode(), r.body()).isEqualTo(200);
    return r.json();
  }

  public static void retryLimitZero(TestNode node, Map<String, String> h, String queue) {
    configure(node, h, queue, new JsonObject().put("retryLimit", 0));
  }

  // ---- dead letters ------------------------------------------------------------------------------------------------

  /**
   * Pops {@code txn} for {@code group} (null = queue mode) and fails it with {@code error}; on a retryLimit-0 queue
   * that dead-letters it. Asserts the ack answered dlq:true. Returns the popped message.
   */
  public static JsonObject failUnder(TestNode node, Map<String, String> h, String queue, String partition, String txn,
                                     String group, String error) {
    JsonObject p = popSome(node, h, queue, partition, group);
    JsonObject m = list(p.getJsonArray("messages")).stream()
        .filter(x -> txn.equals(x.getString("transactionId"))).findFirst()
        .orElseThrow(() -> new AssertionError("pop did not deliver " + txn + ": " + p.encode()));
    JsonObject a = new JsonObject().put("transactionId", txn).put("partitionId", m.getString("partitionId"))
        .put("leaseId", m.getString("leaseId", p.getString("leaseId"))).put("status", "failed").put("error", error);
    if (group != null) a.put("consumerGroup", group);
    JsonObject r = ack(node, h, a);
    assertThat(r.getBoolean("dlq")).as("the failed ack dead-letters %s: %s", txn, r).isTrue();
    return m;
  }

  /** Pushes one message to a retryLimit-0 queue (configure it first) and dead-letters it; returns the popped message. */
  public static JsonObject deadLetter(TestNode node, Map<String, String> h, String queue, String partition,
                                      Object payload, String txn, String group, String error) {
    pushOne(node, h, queue, partition, payload, txn);
    return failUnder(node, h, queue, partition, txn, group, error);
  }

  public static JsonObject deadLetter(TestNode node, String queue, String partition, Object payload, String txn,
                                      String group, String error) {
    return deadLetter(node, NONE, queue, partition, payload, txn, group, error);
  }

  /**
   * Sets {@code queue} to retryLimit 0 and dead-letters one pushed message {@code txn} there under {@code group} (null =
   * queue mode); returns the partition id (partition null = "Default").
   */
  public static String deadLettered(TestNode node, String queue, String partition, Object payload, String txn,
                                    String group, String error) {
    retryLimitZero(node, NONE, queue);
    deadLetter(node, queue, partition, payload, txn, group, error);
    return partitionId(queue, partition == null ? "Default" : partition);
  }

  // ---- database probes (the shared test database) ------------------------------------------------------------------

  public static Config.Database db() {
    return TestDatabase.get().shared();
  }

  public static Connection connect() throws java.sql.SQLException {
    Config.Database d = db();
    return DriverManager.getConnection("jdbc:postgresql://" + d.host() + ":" + d.port() + "/" + d.database(),
        d.user(), d.password());
  }

  public static long count(String sql) {
    return TestDatabase.queryLong(db(), sql);
  }

  public static void execute(String sql) {
    TestDatabase.execute(db(), sql);
  }

  public static List<Map<String, Object>> rows(String sql) {
    try (var c = connect(); var st = c.createStatement(); var rs = st.executeQuery(sql)) {
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

  /** The partition id of (queue, partition), or null when the partition does not exist. */
  public static String partitionId(String queue, String partition) {
    var r = rows("SELECT p.id::text AS id FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id "
        + "WHERE q.name = '" + queue + "' AND p.name = '" + partition + "'");
    return r.isEmpty() ? null : (String) r.get(0).get("id");
  }

  public static long segments(String partitionId) {
    return count("SELECT count(*) FROM queen.log_segments WHERE partition_id = '" + partitionId + "'");
  }

  /**
   * What retention does to the partition's segments below {@code below} while their hashes are still needed: their
   * payload goes (blob emptied: "slim" rows, R__80_retention.sql) and log_start moves past them.
   */
  public static void slimBelow(String partitionId, long below) {
    execute("UPDATE queen.log_segments SET blob = ''::bytea WHERE partition_id = '" + partitionId
        + "' AND base_offset < " + below);
    execute("UPDATE queen.log_partitions SET log_start = GREATEST(log_start, LEAST(" + below + ", last_offset + 1)) "
        + "WHERE id = '" + partitionId + "'");
  }

  /** What the txns purge does to the partition's segments below {@code below}: hashes NULL, txns_start past them. */
  public static void purgeHashesBelow(String partitionId, long below) {
    execute("UPDATE queen.log_segments SET hashes = NULL WHERE partition_id = '" + partitionId
        + "' AND base_offset < " + below);
    execute("UPDATE queen.log_partitions SET txns_start = GREATEST(txns_start, LEAST(" + below + ", last_offset + 1)) "
        + "WHERE id = '" + partitionId + "'");
  }

  /** Segment rows that hold hashes (written with every segment; the txns purge sets them NULL). */
  public static long txnRows(String partitionId) {
    return count("SELECT count(*) FROM queen.log_segments WHERE partition_id = '" + partitionId
        + "' AND hashes IS NOT NULL");
  }

  /** Frames stored in the partition: the sum of the segment ranges. */
  public static long frames(String partitionId) {
    return count("SELECT coalesce(sum(end_offset - base_offset + 1), 0) FROM queen.log_segments WHERE partition_id = '"
        + partitionId + "'");
  }

  public static long queueRows(String queue) {
    return count("SELECT count(*) FROM queen.queues WHERE name = '" + queue + "'");
  }

  /** The consumer cursor of (partition, group), or null when it has none. */
  public static Map<String, Object> cursor(String partitionId, String group) {
    List<Map<String, Object>> r = rows("SELECT committed, batch_end, worker_id, batch_retry_count, attempt_count "
        + "FROM queen.log_consumers WHERE partition_id = '" + partitionId + "' AND consumer_group = '" + group + "'");
    return r.isEmpty() ? null : r.get(0);
  }

  public static List<Map<String, Object>> dlqRows(String partitionId) {
    return rows("SELECT id::text AS id, consumer_group, \"offset\", transaction_id, message_id::text AS message_id, "
        + "payload::text AS payload, error, retry_count, failed_at FROM queen.log_dlq WHERE partition_id = '"
        + partitionId + "' ORDER BY failed_at DESC");
  }

  public static long dlqCount(String partitionId) {
    return dlqCount(db(), partitionId);
  }

  /** Dead-letter rows of one partition in {@code db}. */
  public static long dlqCount(Config.Database db, String partitionId) {
    return TestDatabase.queryLong(db, "SELECT count(*) FROM queen.log_dlq WHERE partition_id = '" + partitionId + "'");
  }

  /** Dead-letter rows of every partition of {@code queue} in {@code db}. */
  public static long dlqCountOfQueue(Config.Database db, String queue) {
    return TestDatabase.queryLong(db, "SELECT count(*) FROM queen.log_dlq d JOIN queen.log_partitions p ON "
        + "p.id = d.partition_id JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = '" + queue + "'");
  }

  public static boolean dlqRowExists(String id) {
    return count("SELECT count(*) FROM queen.log_dlq WHERE id = '" + id + "'") == 1;
  }

  /**
   * Waits (at most 5 s) until the database clock is past the newest dead-letter row of the partition by a
   * millisecond, so a row filed next sorts strictly after it by {@code failed_at}, even at millisecond precision.
   */
  public static void awaitClockPastNewestDlq(String partitionId) {
    org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(5))
        .pollInterval(java.time.Duration.ofMillis(2))
        .until(() -> count("SELECT (clock_timestamp() > max(failed_at) + interval '1 millisecond')::int "
            + "FROM queen.log_dlq WHERE partition_id = '" + partitionId + "'") == 1);
  }

  /** The single DLQ row id of a partition (asserting there is exactly one). */
  public static String onlyDlqId(String partitionId) {
    var r = dlqRows(partitionId);
    assertThat(r).as("dlq rows of %s", partitionId).hasSize(1);
    return (String) r.get(0).get("id");
  }

  // ---- shape helpers -----------------------------------------------------------------------------------------------

  public static Set<String> keys(JsonObject o) {
    return o.fieldNames();
  }

  public static String mustBeUuid(String s) {
    assertThat(s).matches(UUID_TEXT);
    return s;
  }

  /**
   * The JSON text, exactly as written, of every value named {@code field} in the JSON document {@code json}, at any
   * depth, in document order: what a node spliced into an answer, before any parser turned it into a value.
   */
  public static List<String> rawValues(String json, String field) {
    byte[] bytes = json.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    List<String> out = new ArrayList<>();
    try (var p = new com.fasterxml.jackson.core.JsonFactory().createParser(bytes)) {
      com.fasterxml.jackson.core.JsonToken t;
      while ((t = p.nextToken()) != null) {
        if (t != com.fasterxml.jackson.core.JsonToken.FIELD_NAME || !field.equals(p.currentName())) continue;
        p.nextToken();
        int start = (int) p.currentTokenLocation().getByteOffset();
        p.skipChildren();
        p.finishToken();
        int end = (int) p.currentLocation().getByteOffset();
        out.add(new String(bytes, start, end - start, java.nio.charset.StandardCharsets.UTF_8));
      }
    } catch (java.io.IOException e) {
      throw new AssertionError("not JSON: " + json, e);
    }
    return out;
  }
}
