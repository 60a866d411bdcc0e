package io.queenvertx.status;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.TestDatabase;
import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.TestNode.Reply;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The read-only status surface (API.md §5.8 overview/namespaces/tasks, §5.11 consumer-group GETs, §5.12 status): shapes
 * and figures after pushes, pops, acks and a dead letter, 404s, and tenant scoping. The node runs with
 * QUEEN_TENANCY_HEADER on and every test speaks as a fresh tenant, so tenant-wide figures are exact even on the
 * shared database.
 */
class StatusRoutesIT {
  static final String HEADER = "x-queen-tenant";
  static final Pattern ISO = Pattern.compile("\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{6}Z");

  @NodeFixture(env = {"QUEEN_TENANCY_HEADER=true", "QUEEN_KV_TRUSTED_PROXY=true"})
  static TestNode node;

  // ---- fixture -------------------------------------------------------------------------------------------------

  /**
   * A fresh tenant holding:
   * <ul>
   *   <li>{@code orders} = ns.billing.orders (retryLimit 0), one partition, 5 frames: m0 dead-lettered, m1 completed,
   *       m2+m3 leased (processing), m4 pending;</li>
   *   <li>{@code ship} = ns.shipping.ship, partitions p1 and p2 with one frame each; group g1 consumed p1's frame;</li>
   *   <li>{@code plain} = an undotted name (its own namespace, no task), one pending frame.</li>
   * </ul>
   */
  record Fixture(Map<String, String> h, String ns, String orders, String ship, String plain, String ordersPid) {}

  static Fixture fixture() {
    String id = shortId();
    var h = tenant();
    String ns = "stns" + id;
    String orders = ns + ".billing.orders";
    String ship = ns + ".shipping.ship";
    String plain = "stplain" + id;
    configure(h, orders, new JsonObject().put("retryLimit", 0));
    push(h, item(orders, null, 0, "m0"));
    push(h, item(orders, null, 1, "m1"));
    push(h, item(orders, null, 2, "m2"), item(orders, null, 3, "m3"), item(orders, null, 4, "m4"));
    push(h, item(ship, "p1", "a", "s1"));
    push(h, item(ship, "p2", "b", "s2"));
    push(h, item(plain, null, "c", "c1"));

    JsonObject m0 = only(pop(h, "/api/v1/pop/queue/" + orders + "?batch=1"));
    assertThat(m0.getString("transactionId")).isEqualTo("m0");
    JsonObject dl = ack(h, ackBody(m0, "failed").put("error", "boom"));
    assertThat(dl.getBoolean("dlq")).as("retryLimit 0: the failed ack dead-letters: %s", dl).isTrue();
    JsonObject m1 = only(pop(h, "/api/v1/pop/queue/" + orders + "?batch=1"));
    assertThat(m1.getString("transactionId")).isEqualTo("m1");
    ack(h, ackBody(m1, "completed"));
    List<JsonObject> leased = messages(pop(h, "/api/v1/pop/queue/" + orders + "?batch=2"));
    assertThat(leased).extracting(m -> m.getString("transactionId")).containsExactly("m2", "m3");

    JsonObject s1 = only(pop(h, "/api/v1/pop/queue/" + ship + "/partition/p1?batch=1&consumerGroup=g1"
        + "&subscriptionMode=all"));
    ack(h, ackBody(s1, "completed").put("consumerGroup", "g1"));
    return new Fixture(h, ns, orders, ship, plain, m0.getString("partitionId"));
  }

  // ---- resources ---------------------------------------------------------------------------------------------------

  @Test
  void theOverviewCountsTheTenantsQueuesAndMessages() {
    Fixture f = fixture();
    Reply r = node.get("/api/v1/resources/overview", f.h());
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    JsonObject j = r.json();
    assertThat(j.fieldNames()).containsExactlyInAnyOrder("queues", "partitions", "namespaces", "tasks", "messages",
        "lag", "throughput", "timestamp", "statsAge");
    assertThat(j.getLong("queues")).isEqualTo(3);
    assertThat(j.getLong("partitions")).isEqualTo(4);
    assertThat(j.getLong("namespaces")).as("ns and the undotted name").isEqualTo(2);
    assertThat(j.getLong("tasks")).as("billing and shipping").isEqualTo(2);
    assertThat(j.getJsonObject("messages")).isEqualTo(new JsonObject().put("total", 8).put("pending", 4)
        .put("processing", 2).put("completed", 1).put("failed", 1).put("deadLetter", 1));
    assertThat(j.getJsonObject("lag").fieldNames()).containsExactlyInAnyOrder("maxSeconds", "avgSeconds");
    // whole seconds since the oldest pending frame was stored, moments ago in fixture(); the average never exceeds it
    double lagMax = j.getJsonObject("lag").getDouble("maxSeconds");
    assertThat(lagMax).as("lag of messages pushed moments ago").isBetween(0.0, 30.0);
    assertThat(j.getJsonObject("lag").getDouble("avgSeconds")).isBetween(0.0, lagMax);
    JsonObject tp = j.getJsonObject("throughput");
    assertThat(tp.getDouble("ingestedPerSecond")).as("8 frames in the last minute / 60").isEqualTo(0.133);
    assertThat(tp.getDouble("processedPerSecond")).isZero();
    assertThat(j.getString("timestamp")).matches(ISO);
    assertThat(j.getInteger("statsAge")).isZero();

    JsonObject other = node.get("/api/v1/resources/overview", tenant()).json();
    assertThat(other.getLong("queues")).as("another tenant sees none of it").isZero();
    assertThat(other.getJsonObject("messages").getLong("total")).isZero();
    assertThat(other.getJsonObject("throughput").getDouble("ingestedPerSecond")).isZero();
  }

  @Test
  void namespacesAndTasksGroupByTheColumnsOrTheDottedName() {
    Fixture f = fixture();
    Reply r = node.get("/api/v1/resources/namespaces", f.h());
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    JsonArray nss = r.json().getJsonArray("namespaces");
    assertThat(nss).hasSize(2);
    assertThat(byKey(nss, "namespace", f.ns())).isEqualTo(new JsonObject().put("namespace", f.ns())
        .put("queues", 2).put("partitions", 3).put("messages", new JsonObject().put("total", 7).put("pending", 3)));
    assertThat(byKey(nss, "namespace", f.plain())).isEqualTo(new JsonObject().put("namespace", f.plain())
        .put("queues", 1).put("partitions", 1).put("messages", new JsonObject().put("total", 1).put("pending", 1)));

    Reply t = node.get("/api/v1/resources/tasks", f.h());
    assertThat(t.status()).as(t.body()).isEqualTo(200);
    JsonArray tasks = t.json().getJsonArray("tasks");
    assertThat(tasks).as("the undotted queue has no task").hasSize(2);
    assertThat(byKey(tasks, "task", "billing")).isEqualTo(new JsonObject().put("task", "billing")
        .put("queues", 1).put("partitions", 1).put("messages", new JsonObject().put("total", 5).put("pending", 1)));
    assertThat(byKey(tasks, "task", "shipping")).isEqualTo(new JsonObject().put("task", "shipping")
        .put("queues", 1).put("partitions", 2).put("messages", new JsonObject().put("total", 2).put("pending", 2)));

    var other = tenant();
    assertThat(node.get("/api/v1/resources/namespaces", other).json())
        .isEqualTo(new JsonObject().put("namespaces", new JsonArray()));
    assertThat(node.get("/api/v1/resources/tasks", other).json())
        .isEqualTo(new JsonObject().put("tasks", new JsonArray()));
  }

  @Test
  void aConfiguredNamespaceAndTaskWinOverTheDottedName() {
    var h = tenant();
    String q = "stcfg" + shortId() + ".x.y";
    configure(h, q, new JsonObject().put("namespace", "Payments").put("task", "Refunds"));
    JsonArray nss = node.get("/api/v1/resources/namespaces", h).json().getJsonArray("namespaces");
    assertThat(nss).extracting(o -> ((JsonObject) o).getString("namespace")).containsExactly("Payments");
    assertThat(byKey(nss, "namespace", "Payments").getInteger("partitions")).as("configured, never pushed").isZero();
    JsonArray tasks = node.get("/api/v1/resources/tasks", h).json().getJsonArray("tasks");
    assertThat(tasks).extracting(o -> ((JsonObject) o).getString("task")).containsExactly("Refunds");
  }

  // ---- consumer groups ---------------------------------------------------------------------------------------------

  @Test
  void consumerGroupsListQueueModeAndNamedGroupsWithTheirCursors() {
    Fixture f = fixture();
    Reply r = node.get("/api/v1/consumer-groups", f.h());
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    JsonArray groups = r.array();
    assertThat(groups).extracting(o -> ((JsonObject) o).getString("name"))
        .containsExactly("__QUEUE_MODE__", "g1");

    JsonObject qm = byKey(groups, "name", "__QUEUE_MODE__");
    assertThat(qm.fieldNames()).containsExactlyInAnyOrder("name", "topics", "members", "totalLag", "maxTimeLag",
        "state", "queues");
    assertThat(qm.getJsonArray("topics")).as("only the queue popped in queue mode")
        .isEqualTo(new JsonArray().add(f.orders()));
    assertThat(qm.getInteger("members")).as("one live lease (m2, m3)").isEqualTo(1);
    assertThat(qm.getLong("totalLag")).as("last offset 4, committed 1").isEqualTo(3);
    assertThat(qm.getLong("maxTimeLag")).isBetween(0L, 60L);
    assertThat(qm.getString("state")).isEqualTo("Stable");
    JsonArray parts = qm.getJsonObject("queues").getJsonObject(f.orders()).getJsonArray("partitions");
    assertThat(parts).hasSize(1);
    JsonObject p = parts.getJsonObject(0);
    assertThat(p.getString("partition")).isEqualTo("Default");
    assertThat(p.getString("partitionId")).isEqualTo(f.ordersPid());
    assertThat(p.getLong("committed")).isEqualTo(1);
    assertThat(p.getLong("lastOffset")).isEqualTo(4);
    assertThat(p.getLong("lag")).isEqualTo(3);
    assertThat(p.getString("leaseExpiresAt")).matches(ISO);

    JsonObject g1 = byKey(groups, "name", "g1");
    assertThat(g1.getJsonArray("topics")).isEqualTo(new JsonArray().add(f.ship()));
    assertThat(g1.getInteger("members")).isZero();
    assertThat(g1.getLong("totalLag")).as("p1 consumed; p2 seeded at first registration, its frame unread")
        .isEqualTo(1);
    assertThat(g1.getLong("maxTimeLag")).isBetween(0L, 60L);
    assertThat(g1.getString("state")).isEqualTo("Stable");
    JsonArray gparts = g1.getJsonObject("queues").getJsonObject(f.ship()).getJsonArray("partitions");
    assertThat(gparts).extracting(o -> ((JsonObject) o).getString("partition")).containsExactly("p1", "p2");
    JsonObject gp1 = gparts.getJsonObject(0);
    assertThat(gp1.getLong("committed")).isZero();
    assertThat(gp1.getLong("lag")).isZero();
    assertThat(gp1.getValue("leaseExpiresAt")).isNull();
    JsonObject gp2 = gparts.getJsonObject(1);
    assertThat(gp2.getLong("committed")).isEqualTo(-1);
    assertThat(gp2.getLong("lag")).isEqualTo(1);

    assertThat(node.get("/api/v1/consumer-groups", tenant()).array()).as("another tenant sees no group").isEmpty();
  }

  @Test
  void oneConsumerGroupOrA404() {
    Fixture f = fixture();
    Reply r = node.get("/api/v1/consumer-groups/g1", f.h());
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    assertThat(r.json().getString("name")).isEqualTo("g1");
    assertThat(r.json().getJsonObject("queues").fieldNames()).containsExactly(f.ship());
    Reply qm = node.get("/api/v1/consumer-groups/__QUEUE_MODE__", f.h());
    assertThat(qm.status()).isEqualTo(200);
    assertThat(qm.json().getLong("totalLag")).isEqualTo(3);

    Reply missing = node.get("/api/v1/consumer-groups/nope-" + shortId(), f.h());
    assertThat(missing.status()).isEqualTo(404);
    assertThat(missing.json()).isEqualTo(io.queenvertx.testing.Wire.error(404, "Consumer group not found"));
    Reply foreign = node.get("/api/v1/consumer-groups/g1", tenant());
    assertThat(foreign.status()).as("another tenant's group looks missing").isEqualTo(404);
    assertThat(foreign.body()).isEqualTo(missing.body());
  }

  @Test
  void laggingListsGroupsBehindTheThresholdAndStatesFollowTheAge() {
    var h = tenant();
    String q = "stlag" + shortId();
    push(h, item(q, null, 1, "l0"));
    push(h, item(q, null, 2, "l1"));
    JsonObject l0 = only(pop(h, "/api/v1/pop/queue/" + q + "?batch=1&consumerGroup=slow&subscriptionMode=all"));
    ack(h, ackBody(l0, "completed").put("consumerGroup", "slow"));
    String pid = l0.getString("partitionId");

    assertThat(node.get("/api/v1/consumer-groups/lagging", h).array()).as("fresh lag is below 3600 s").isEmpty();
    JsonArray zero = node.get("/api/v1/consumer-groups/lagging?minLagSeconds=0", h).array();
    assertThat(zero).extracting(o -> ((JsonObject) o).getString("name")).containsExactly("slow");

    // Age the unconsumed segment by two hours: the group is now behind by more than the default threshold.
    sql("UPDATE queen.log_segments SET created_at = now() - interval '2 hours' WHERE partition_id = '" + pid + "'");
    Reply r = node.get("/api/v1/consumer-groups/lagging", h);
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    JsonArray lagging = r.array();
    assertThat(lagging).hasSize(1);
    JsonObject slow = lagging.getJsonObject(0);
    assertThat(slow.getString("name")).isEqualTo("slow");
    assertThat(slow.getLong("totalLag")).isEqualTo(1);
    assertThat(slow.getLong("maxTimeLag")).isBetween(7200L, 7300L);
    assertThat(slow.getString("state")).as("a lease was taken within the hour").isEqualTo("Lagging");
    assertThat(node.get("/api/v1/consumer-groups/lagging?minLagSeconds=8000", h).array()).isEmpty();
    assertThat(node.get("/api/v1/consumer-groups/lagging?minLagSeconds=abc", h).array())
        .as("an unparsable threshold falls back to 3600").hasSize(1);

    sql("UPDATE queen.log_consumers SET lease_acquired_at = now() - interval '2 hours' WHERE partition_id = '"
        + pid + "'");
    assertThat(node.get("/api/v1/consumer-groups/slow", h).json().getString("state"))
        .as("no consumer for an hour while an hour-old message waits").isEqualTo("Dead");

    assertThat(node.get("/api/v1/consumer-groups/lagging?minLagSeconds=0", tenant()).array()).isEmpty();
  }

  // ---- status ------------------------------------------------------------------------------------------------------

  @Test
  void statusSumsTheTenantAndHonoursTheFilters() {
    Fixture f = fixture();
    Reply r = node.get("/api/v1/status", f.h());
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    JsonObject j = r.json();
    assertThat(j.getLong("queues")).isEqualTo(3);
    assertThat(j.getLong("partitions")).isEqualTo(4);
    assertThat(j.getJsonObject("messages")).isEqualTo(new JsonObject().put("total", 8).put("pending", 4)
        .put("processing", 2).put("completed", 1).put("failed", 1).put("deadLetter", 1));
    assertThat(j.getJsonObject("leases")).isEqualTo(new JsonObject().put("active", 1));
    assertThat(j.getJsonObject("dlq")).isEqualTo(new JsonObject().put("total", 1));
    assertThat(j.getString("timestamp")).matches(ISO);

    JsonObject byQueue = node.get("/api/v1/status?queue=" + f.orders(), f.h()).json();
    assertThat(byQueue.getLong("queues")).isEqualTo(1);
    assertThat(byQueue.getJsonObject("messages").getLong("total")).isEqualTo(5);
    assertThat(node.get("/api/v1/status?namespace=" + f.ns(), f.h()).json().getLong("queues")).isEqualTo(2);
    JsonObject byTask = node.get("/api/v1/status?task=shipping", f.h()).json();
    assertThat(byTask.getLong("queues")).isEqualTo(1);
    assertThat(byTask.getLong("partitions")).isEqualTo(2);
    assertThat(byTask.getJsonObject("leases").getLong("active")).isZero();

    JsonObject other = node.get("/api/v1/status", tenant()).json();
    assertThat(other.getLong("queues")).isZero();
    assertThat(other.getJsonObject("dlq").getLong("total")).isZero();
  }

  @Test
  void statusQueuesPagesByNameWithPerQueueFigures() {
    Fixture f = fixture();
    Reply r = node.get("/api/v1/status/queues", f.h());
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    JsonObject j = r.json();
    assertThat(j.getJsonObject("pagination")).isEqualTo(new JsonObject().put("limit", 100).put("offset", 0));
    JsonArray qs = j.getJsonArray("queues");
    assertThat(qs).hasSize(3);
    JsonObject orders = byKey(qs, "name", f.orders());
    assertThat(orders.getString("namespace")).isEqualTo(f.ns());
    assertThat(orders.getString("task")).isEqualTo("billing");
    assertThat(orders.getInteger("partitions")).isEqualTo(1);
    assertThat(orders.getJsonObject("messages")).isEqualTo(new JsonObject().put("total", 5).put("pending", 1)
        .put("processing", 2).put("completed", 1).put("failed", 1).put("deadLetter", 1));
    assertThat(orders.getJsonObject("lag").fieldNames()).containsExactlyInAnyOrder("maxSeconds", "avgSeconds");
    JsonObject plain = byKey(qs, "name", f.plain());
    assertThat(plain.getString("namespace")).isEqualTo(f.plain());
    assertThat(plain.getString("task")).isEmpty();

    List<String> all = new ArrayList<>();
    for (Object o : qs) all.add(((JsonObject) o).getString("name"));
    JsonObject page1 = node.get("/api/v1/status/queues?limit=2", f.h()).json();
    JsonObject page2 = node.get("/api/v1/status/queues?limit=2&offset=2", f.h()).json();
    assertThat(page1.getJsonObject("pagination")).isEqualTo(new JsonObject().put("limit", 2).put("offset", 0));
    assertThat(page2.getJsonObject("pagination")).isEqualTo(new JsonObject().put("limit", 2).put("offset", 2));
    List<String> paged = new ArrayList<>();
    for (Object o : page1.getJsonArray("queues")) paged.add(((JsonObject) o).getString("name"));
    for (Object o : page2.getJsonArray("queues")) paged.add(((JsonObject) o).getString("name"));
    assertThat(paged).as("two pages cover the list in order").isEqualTo(all);
    assertThat(node.get("/api/v1/status/queues?limit=x", f.h()).json().getJsonObject("pagination").getInteger("limit"))
        .as("an unparsable limit falls back to 100").isEqualTo(100);

    assertThat(node.get("/api/v1/status/queues?task=billing", f.h()).json().getJsonArray("queues"))
        .extracting(o -> ((JsonObject) o).getString("name")).containsExactly(f.orders());
    assertThat(node.get("/api/v1/status/queues", tenant()).json().getJsonArray("queues")).isEmpty();
  }

  @Test
  void statusQueuesGivesTheOldestDeadLetterTimeOfEachQueue() {
    String id = shortId();
    var h = tenant();
    String dlq = "stdlq" + id;
    String clean = "stclean" + id;
    configure(h, dlq, new JsonObject().put("retryLimit", 0));
    push(h, item(dlq, "p1", 1, "d1"));
    push(h, item(dlq, "p2", 2, "d2"));
    push(h, item(clean, null, 3, "c1"));
    // the first dead letter is on p2, the second (later) one on p1: the oldest is not the first partition's
    for (String part : List.of("p2", "p1")) {
      JsonObject m = only(pop(h, "/api/v1/pop/queue/" + dlq + "/partition/" + part + "?batch=1"));
      assertThat(ack(h, ackBody(m, "failed").put("error", "boom")).getBoolean("dlq")).isTrue();
    }
    String first = failedAt(dlq, "d2");
    String second = failedAt(dlq, "d1");
    assertThat(first).matches(ISO).isLessThan(second);

    JsonArray qs = node.get("/api/v1/status/queues", h).json().getJsonArray("queues");
    assertThat(byKey(qs, "name", dlq).getString("dlqOldestAt")).isEqualTo(first);
    JsonObject cleanRow = byKey(qs, "name", clean);
    assertThat(cleanRow.containsKey("dlqOldestAt")).as("the key is present, null: %s", cleanRow).isTrue();
    assertThat(cleanRow.getValue("dlqOldestAt")).isNull();
    assertThat(node.get("/api/v1/status/queues?queue=" + dlq, tenant()).json().getJsonArray("queues"))
        .as("another tenant sees no such queue").isEmpty();
  }

  /** The failed_at of a queue's dead letter, in the status routes' timestamp form. */
  static String failedAt(String queue, String txn) {
    return TestDatabase.queryString(TestDatabase.get().shared(), "SELECT queen._log_ts(d.failed_at) FROM "
        + "queen.log_dlq d JOIN queen.log_partitions p ON p.id = d.partition_id JOIN queen.queues q ON "
        + "q.id = p.queue_id WHERE q.name = '" + queue + "' AND d.transaction_id = '" + txn + "'");
  }

  @Test
  void statusQueueDetailOrA404() {
    Fixture f = fixture();
    Reply r = node.get("/api/v1/status/queues/" + f.orders(), f.h());
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    JsonObject j = r.json();
    assertThat(j.fieldNames()).containsExactlyInAnyOrder("queue", "config", "partitions", "totals");
    JsonObject queue = j.getJsonObject("queue");
    assertThat(queue.getString("name")).isEqualTo(f.orders());
    assertThat(queue.getString("namespace")).isEqualTo(f.ns());
    assertThat(queue.getString("task")).isEqualTo("billing");
    assertThat(queue.getString("createdAt")).matches(ISO);
    assertThat(j.getJsonObject("config")).isEqualTo(new JsonObject().put("leaseTime", 300).put("retryLimit", 0)
        .put("ttl", 3600).put("priority", 0).put("delayedProcessing", 0).put("windowBuffer", 0));
    JsonArray parts = j.getJsonArray("partitions");
    assertThat(parts).hasSize(1);
    JsonObject p = parts.getJsonObject(0);
    assertThat(p.getString("id")).isEqualTo(f.ordersPid());
    assertThat(p.getString("name")).isEqualTo("Default");
    assertThat(p.getLong("lastOffset")).isEqualTo(4);
    assertThat(p.getLong("committed")).isEqualTo(1);
    JsonObject totals = j.getJsonObject("totals");
    assertThat(totals.getLong("total")).isEqualTo(5);
    assertThat(totals.getLong("pending")).isEqualTo(1);
    assertThat(totals.getLong("processing")).isEqualTo(2);
    assertThat(totals.getLong("completed")).isEqualTo(1);
    assertThat(totals.getLong("failed")).isEqualTo(1);
    assertThat(totals.getLong("deadLetter")).isEqualTo(1);

    Reply missing = node.get("/api/v1/status/queues/stmissing-" + shortId(), f.h());
    assertThat(missing.status()).isEqualTo(404);
    assertThat(missing.json()).isEqualTo(io.queenvertx.testing.Wire.error(404, "Queue not found"));
    Reply foreign = node.get("/api/v1/status/queues/" + f.orders(), tenant());
    assertThat(foreign.status()).as("another tenant's queue looks missing").isEqualTo(404);
    assertThat(foreign.json()).isEqualTo(io.queenvertx.testing.Wire.error(404, "Queue not found"));
  }

  @Test
  void theDefaultTenantIsUsedWithoutAHeader() {
    String q = "stdefault" + shortId();
    push(Map.of(), item(q, null, 1, "d0"));
    Reply r = node.get("/api/v1/status/queues/" + q);
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    assertThat(r.json().getJsonObject("totals").getLong("pending")).isEqualTo(1);
    assertThat(node.get("/api/v1/status/queues/" + q, tenant()).status()).isEqualTo(404);
  }

  // ---- helpers -----------------------------------------------------------------------------------------------------

  static Map<String, String> tenant() {
    return Map.of(HEADER, UUID.randomUUID().toString());
  }

  static String shortId() {
    return UUID.randomUUID().toString().replace("-", "").substring(0, 12);
  }

  static JsonObject item(String queue, String partition, Object payload, String txn) {
    var it = new JsonObject().put("queue", queue).put("payload", payload).put("transactionId", txn);
    if (partition != null) it.put("partition", partition);
    return it;
  }

  /** One push request (its items share a segment); asserts 201 and every item queued. */
  static void push(Map<String, String> h, JsonObject... items) {
    Reply r = node.post("/api/v1/push", new JsonObject().put("items", new JsonArray(List.of((Object[]) items))), h);
    assertThat(r.status()).as("push answered %s", r.body()).isEqualTo(201);
    for (Object o : r.array()) assertThat(((JsonObject) o).getString("status")).as(r.body()).isEqualTo("queued");
  }

  static void configure(Map<String, String> h, String queue, JsonObject options) {
    Reply r = node.post("/api/v1/configure", new JsonObject().put("queue", queue).put("options", options), h);
    assertThat(r.status()).as("configure answered %s", r.body()).isEqualTo(200);
  }

  static JsonObject pop(Map<String, String> h, String path) {
    Reply r = node.get(path, h);
    assertThat(r.status()).as("pop %s answered %s", path, r.body()).isEqualTo(200);
    return r.json();
  }

  static List<JsonObject> messages(JsonObject pop) {
    List<JsonObject> out = new ArrayList<>();
    for (Object o : pop.getJsonArray("messages")) {
      JsonObject m = (JsonObject) o;
      if (m.getString("leaseId") == null && pop.getString("leaseId") != null) m.put("leaseId", pop.getString("leaseId"));
      out.add(m);
    }
    return out;
  }

  static JsonObject only(JsonObject pop) {
    List<JsonObject> ms = messages(pop);
    assertThat(ms).as("pop %s", pop.encode()).hasSize(1);
    return ms.get(0);
  }

  static JsonObject ackBody(JsonObject m, String status) {
    return new JsonObject().put("transactionId", m.getString("transactionId"))
        .put("partitionId", m.getString("partitionId")).put("leaseId", m.getString("leaseId")).put("status", status);
  }

  static JsonObject ack(Map<String, String> h, JsonObject body) {
    Reply r = node.post("/api/v1/ack", body, h);
    assertThat(r.status()).as("ack %s answered %s", body.encode(), r.body()).isEqualTo(200);
    JsonArray a = r.array();
    assertThat(a).hasSize(1);
    assertThat(a.getJsonObject(0).getBoolean("success", true)).as("ack %s", r.body()).isTrue();
    return a.getJsonObject(0);
  }

  static JsonObject byKey(JsonArray a, String key, String value) {
    return a.stream().map(o -> (JsonObject) o).filter(o -> value.equals(o.getString(key))).findFirst()
        .orElseThrow(() -> new AssertionError(key + "=" + value + " not in " + a.encode()));
  }

  static void sql(String statement) {
    TestDatabase.execute(TestDatabase.get().shared(), statement);
  }
}
