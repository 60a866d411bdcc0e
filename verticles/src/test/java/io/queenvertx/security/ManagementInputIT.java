package io.queenvertx.security;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.TestNode.Reply;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * Trust review of the consumer-group, trace and analytics routes: input the client got wrong is a 400 naming the
 * field (never a 200 acknowledging another value than the one sent, never a 500 or a statement timeout), and a seek
 * that took a lease away leaves the cursor where the seek put it when the old holder acks. Each test is its own
 * tenant; no test may log an ERROR.
 */
class ManagementInputIT {
  static final ListAppender<ILoggingEvent> LOGS = new ListAppender<>();

  @NodeFixture(env = {"QUEEN_TENANCY_HEADER=true", "QUEEN_KV_TRUSTED_PROXY=true"})
  static TestNode node;

  @BeforeAll
  static void capture() {
    LOGS.start();
    ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).addAppender(LOGS);
  }

  @AfterAll
  static void release() {
    ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).detachAppender(LOGS);
  }

  @AfterEach
  void noErrorWasLogged() {
    List<String> errors;
    synchronized (LOGS) {
      errors = LOGS.list.stream().filter(e -> e.getLevel() == Level.ERROR).map(ILoggingEvent::getFormattedMessage)
          .toList();
      LOGS.list.clear();
    }
    assertThat(errors).as("ERROR lines in the server log").isEmpty();
  }

  static Map<String, String> tenant() {
    return Map.of("x-queen-tenant", UUID.randomUUID().toString());
  }

  /** A name over its limit: 413 name_too_long (queen2-contract.md §1.1), naming the field. */
  static void assertNameTooLong(Reply r, String field) {
    assertThat(r.status()).as(r.body()).isEqualTo(413);
    assertThat(r.json().getString("error")).as(r.body()).startsWith(field + " ");
    assertThat(r.json().getString("code")).isEqualTo("name_too_long");
  }

  static void assert400(Reply r, String field) {
    assertThat(r.status()).as(r.body()).isEqualTo(400);
    assertThat(r.json().getString("error")).as(r.body()).startsWith(field + " ").doesNotContain("ERROR:");
  }

  /** Years PostgreSQL cannot hold (or that the driver turns into infinity), and year 0 which it shifts to year 1. */
  static final List<String> OUT_OF_RANGE = List.of("+300000-01-01T00:00:00Z", "+999999999-01-01T00:00:00Z",
      "-5000-01-01T00:00:00Z", "0000-06-01T00:00:00Z", "0001-01-01T00:30:00+01:00");

  @Test
  void seekAndSubscriptionRefuseTimestampsOutsideTheStorableYearsAndMoveNothing() {
    var h = tenant();
    String q = Wire.queue("range");
    Wire.pushOne(node, h, q, "p", new JsonObject().put("n", 1), "r1");
    String pid = Wire.partitionId(q, "p");
    Reply first = Wire.pop(node, h, q, "p", "g", null);
    assertThat(first.status()).as(first.body()).isEqualTo(200);
    Map<String, Object> before = Wire.cursor(pid, "g");

    String base = "/api/v1/consumer-groups/g";
    for (String ts : OUT_OF_RANGE) {
      assert400(node.post(base + "/queues/" + q + "/seek", new JsonObject().put("timestamp", ts), h), "timestamp");
      assert400(node.post(base + "/queues/" + q + "/partitions/p/seek", new JsonObject().put("timestamp", ts), h),
          "timestamp");
      assert400(node.post(base + "/subscription", new JsonObject().put("subscriptionTimestamp", ts), h),
          "subscriptionTimestamp");
    }
    assertThat(Wire.cursor(pid, "g")).as("the refused seeks kept the cursor and its lease").isEqualTo(before);
    assertThat(Wire.rows("SELECT 1 FROM queen.consumer_groups_metadata WHERE tenant_id = '"
        + h.get("x-queen-tenant") + "' AND queue_id IS NULL")).as("no group-wide subscription stored").isEmpty();

    // the edges of the range are accepted and answered as sent
    Reply last = node.post(base + "/subscription",
        new JsonObject().put("subscriptionTimestamp", "9999-12-31T23:59:59Z"), h);
    assertThat(last.status()).as(last.body()).isEqualTo(200);
    assertThat(last.json().getString("subscriptionTimestamp")).startsWith("9999-12-31T23:59:59");
    Reply earliest = node.post(base + "/queues/" + q + "/seek",
        new JsonObject().put("timestamp", "0001-01-01T00:00:00Z"), h);
    assertThat(earliest.status()).as(earliest.body()).isEqualTo(200);
    assertThat(earliest.json().getString("targetTimestamp")).startsWith("0001-01-01T00:00:00");
  }

  @Test
  void analyticsWindowsOutsideTheStorableYearsAre400NotATimeout() {
    var h = tenant();
    List<String> routes = List.of("/api/v1/status/analytics", "/api/v1/analytics/workload",
        "/api/v1/analytics/queue-ops", "/api/v1/analytics/system-metrics", "/api/v1/analytics/retention");
    for (String route : routes) {
      assert400(node.get(route + "?from=%2B300000-01-01T00:00:00Z", h), "from");
      assert400(node.get(route + "?from=%2B300000-01-01T00:00:00Z&to=%2B300000-01-01T00:00:01Z", h), "to");
      assert400(node.get(route + "?from=2026-01-01T00:00:00Z&to=%2B300000-01-01T00:00:01Z", h), "to");
      assert400(node.get(route + "?from=-5000-01-01&to=-5000-01-02", h), "to");
    }
  }

  @Test
  void aTraceOfAMessageWithAnOverlongTransactionIdIs413NameTooLongNamingIt() {
    var h = tenant();
    String q = Wire.queue("trace-long");
    // 4,000 random hex characters: a valid push transaction id, too long for the trace address index
    StringBuilder txn = new StringBuilder();
    while (txn.length() < 4000) txn.append(UUID.randomUUID().toString().replace("-", ""));
    JsonObject pushed = Wire.pushOne(node, h, q, null, new JsonObject().put("n", 1), txn.toString());
    Reply r = node.post("/api/v1/traces", new JsonObject().put("transactionId", txn.toString())
        .put("partitionId", pushed.getString("partitionId")).put("data", new JsonObject().put("x", 1)), h);
    assertNameTooLong(r, "transactionId");
  }

  @Test
  void anAckUnderTheLeaseASeekTookAwayLeavesTheCursorWhereTheSeekPutIt() {
    var h = tenant();
    String q = Wire.queue("seek-ack");
    for (String t : List.of("a1", "a2", "a3")) Wire.pushOne(node, h, q, "p", new JsonObject().put("t", t), t);
    String pid = Wire.partitionId(q, "p");
    Reply pop = Wire.pop(node, h, q, "p", "g", "batch=10");
    assertThat(pop.status()).as(pop.body()).isEqualTo(200);
    assertThat(Wire.messages(pop.json())).hasSize(3);

    Reply seek = node.post("/api/v1/consumer-groups/g/queues/" + q + "/seek",
        new JsonObject().put("timestamp", "2001-01-01T00:00:00Z"), h);
    assertThat(seek.status()).as(seek.body()).isEqualTo(200);
    Object rewound = Wire.cursor(pid, "g").get("committed");

    JsonArray acks = new JsonArray();
    for (JsonObject m : Wire.messages(pop.json())) {
      acks.add(Wire.ack(m.getString("transactionId"), pid, "completed", pop.json().getString("leaseId")));
    }
    Reply ack = node.post("/api/v1/ack/batch",
        new JsonObject().put("consumerGroup", "g").put("acknowledgments", acks), h);
    assertThat(ack.status()).as(ack.body()).isEqualTo(200);
    for (Object o : ack.array()) {
      assertThat(((JsonObject) o).getBoolean("success")).as("the stale lease's ack: %s", ack.body()).isFalse();
    }
    assertThat(Wire.cursor(pid, "g").get("committed")).as("the cursor stays where the seek put it").isEqualTo(rewound);
    Reply again = Wire.pop(node, h, q, "p", "g", "batch=10");
    assertThat(again.status()).as(again.body()).isEqualTo(200);
    assertThat(Wire.messages(again.json()).stream().map(m -> m.getString("transactionId")).toList())
        .containsExactly("a1", "a2", "a3");
  }

  @Test
  void aPopOnANameLongerThanAQueueCanHaveIs413AndTheNodesStatsStillFlush() {
    var h = tenant();
    StringBuilder longName = new StringBuilder();
    while (longName.length() < 3000) longName.append(UUID.randomUUID().toString().replace("-", ""));
    assertNameTooLong(node.get("/api/v1/pop/queue/" + longName + "?wait=false", h), "queue");
    assertNameTooLong(node.get("/api/v1/pop/queue/q/partition/" + longName + "?wait=false", h), "partition");
    String q = Wire.queue("stats-after");
    Wire.pushOne(node, h, q, null, new JsonObject().put("n", 1), "s1");

    Reply refresh = node.post("/api/v1/stats/refresh", new JsonObject(), h);
    assertThat(refresh.status()).as(refresh.body()).isEqualTo(200);
    assertThat(refresh.json().getBoolean("flushed")).as(refresh.body()).isTrue();
    assertThat(Wire.rows("SELECT sum(push_messages)::int AS n FROM queen.stats_queue_minute WHERE tenant_id = '"
        + h.get("x-queen-tenant") + "' AND queue = '" + q + "'").get(0).get("n")).isEqualTo(1);
  }

  @Test
  void aPopsSubscriptionFromOutsideTheStorableYearsIs400AndRegistersNothing() {
    var h = tenant();
    String q = Wire.queue("sub-from");
    Wire.pushOne(node, h, q, "p", new JsonObject().put("n", 1), "f1");
    assert400(Wire.pop(node, h, q, "p", "g", "subscriptionFrom=%2B300000-01-01T00:00:00Z"), "subscriptionFrom");
    Reply pop = Wire.pop(node, h, q, "p", "g", null);
    assertThat(pop.status()).as("the group was not registered from infinity: %s", pop.body()).isEqualTo(200);
    assertThat(Wire.messages(pop.json())).extracting(m -> m.getString("transactionId")).containsExactly("f1");
  }
}
