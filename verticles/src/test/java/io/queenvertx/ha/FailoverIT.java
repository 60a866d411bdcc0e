package io.queenvertx.ha;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.TestNode;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Issue 37, the short version that runs with every {@code mvn test}: a real Patroni cluster (etcd and three
 * PostgreSQL 15 servers, synchronous replication) on loopback, started by {@code deploy/ha/local-ha.sh}, and two
 * broker nodes given all three hosts. A node whose first host is a standby writes to the primary; kill -9 of the
 * primary's postmaster and a planned switchover under push (batch 1 and 100) and pop+ack load lose nothing, undo no
 * ack, and the switchover costs no 5xx; read replicas serve the listing until they lag. The long scenarios (a frozen
 * primary, a lost machine, more load) are {@link FailoverSuiteIT}.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class FailoverIT {
  static final FailoverRun.Shape SHAPE = new FailoverRun.Shape(
      List.of(new FailoverRun.Push(2, 1, 20), new FailoverRun.Push(1, 100, 250)), 2, 400, 300);
  static PatroniCluster pg;
  static TestNode a;
  static TestNode b;

  @BeforeAll
  static void up() throws Exception {
    PatroniCluster.assumeInstalled();
    pg = PatroniCluster.up();
    a = node(Map.of(), "pg1", "pg2", "pg3");
    b = node(Map.of(), "pg3", "pg2", "pg1");
  }

  @AfterAll
  static void down() {
    if (a != null) a.close();
    if (b != null) b.close();
    if (pg != null) pg.close();
  }

  static TestNode node(Map<String, String> extra, String... order) {
    return pg.node(extra, order);
  }

  /** The node's view of one server ({@code databaseServers} of /api/v1/system/nodes). */
  static JsonObject server(TestNode n, String member) {
    JsonArray nodes = n.get("/api/v1/system/nodes").json().getJsonArray("nodes");
    for (Object s : nodes.getJsonObject(0).getJsonArray("databaseServers")) {
      if (((JsonObject) s).getString("server").equals(pg.host(member).toString())) return (JsonObject) s;
    }
    throw new AssertionError("no server " + member + " in " + nodes);
  }

  @Test
  @Order(1)
  void aNodeWhoseFirstHostIsAStandbyWritesToThePrimary() throws Exception {
    String leader = pg.leader();
    List<String> standbys = PatroniCluster.MEMBERS.stream().filter(m -> !m.equals(leader)).toList();
    String q = "ha-first-standby";
    try (TestNode n = node(Map.of(), standbys.get(0), standbys.get(1), leader)) {
      var r = n.post("/api/v1/push", new JsonObject().put("items", new JsonArray().add(new JsonObject()
          .put("queue", q).put("transactionId", "t1").put("payload", new JsonObject().put("n", 1)))));
      assertThat(r.array().getJsonObject(0).getString("status")).isEqualTo("queued");
      assertThat(pg.sql(leader, "SELECT count(*) FROM queen.queues WHERE name = '" + q + "'")).isEqualTo("1");
      assertThat(server(n, standbys.get(0)).getString("role")).isEqualTo("standby");
      assertThat(server(n, leader).getString("use")).isEqualTo("writes");
    }
    // running up again on a running cluster is harmless: the same members, the same primary
    assertThat(pg.script("up")).contains("PG_HOST=127.0.0.1,127.0.0.1,127.0.0.1");
    assertThat(pg.leader()).isEqualTo(leader);
  }

  @Test
  @Order(2)
  void killingThePrimaryPostmasterUnderPushAndPopLoadLosesNothingAndUndoesNoAck() throws Exception {
    FailoverRun.run("kill -9 postmaster", pg, List.of(a, b), SHAPE, Faults.KILL_POSTMASTER)
        .assertNothingLostOrUndone();
    pg.awaitHealthy(Duration.ofMinutes(2));
  }

  @Test
  @Order(3)
  void aPlannedSwitchoverUnderLoadLosesNothingAndAnswersNo5xx() throws Exception {
    var row = FailoverRun.run("switchover", pg, List.of(a, b), SHAPE, Faults.SWITCHOVER).assertNothingLostOrUndone();
    assertThat(row.serverErrors()).as("5xx answers during a planned switchover").isZero();
  }

  @Test
  @Order(4)
  void aReplicaServesTheListingUntilItLagsThenThePrimaryDoes() throws Exception {
    pg.awaitHealthy(Duration.ofMinutes(2));
    String leader = pg.leader();
    String replica = PatroniCluster.MEMBERS.stream().filter(m -> !m.equals(leader)).findFirst().orElseThrow();
    String readHost = pg.host(replica).toString();
    String q = "ha-replica-" + Long.toHexString(System.nanoTime());
    try (TestNode patient = node(Map.of("PG_READ_HOSTS", readHost, "QUEEN_READ_MAX_LAG_MS", "600000"),
        "pg1", "pg2", "pg3");
         TestNode strict = node(Map.of("PG_READ_HOSTS", readHost, "QUEEN_READ_MAX_LAG_MS", "2500"),
             "pg1", "pg2", "pg3")) {
      push(a, q, "before");
      Awaitility.await("the replica has the first message").atMost(Duration.ofSeconds(30))
          .until(() -> listed(patient, q).contains("before"));
      assertThat(server(patient, replica).getString("use")).isEqualTo("reads");
      pg.stopReplay(replica);
      try {
        push(a, q, "after");
        // the primary has it, the paused replica does not: the patient node keeps reading from the replica
        assertThat(pg.sql(leader, "SELECT count(*) FROM queen.queues WHERE name = '" + q + "'")).isEqualTo("1");
        assertThat(listed(patient, q)).contains("before").doesNotContain("after");
        // the strict node sees the replica fall more than 2.5 s behind and reads from the primary
        Awaitility.await("the lagging replica bypassed").atMost(Duration.ofSeconds(30))
            .pollInterval(Duration.ofMillis(300)).until(() -> listed(strict, q).contains("after"));
        JsonObject seen = server(strict, replica);
        assertThat(seen.getString("use")).isNull();
        assertThat(seen.getLong("lagMs")).isGreaterThan(2500L);
        assertThat(listed(patient, q)).doesNotContain("after");
      } finally {
        pg.resumeReplay(replica);
      }
      Awaitility.await("the replica caught up and serves again").atMost(Duration.ofSeconds(30))
          .pollInterval(Duration.ofMillis(300))
          .until(() -> listed(patient, q).contains("after") && "reads".equals(server(strict, replica).getString("use")));
    }
  }

  /**
   * A node given only the standbys: no server takes writes. Pushes are answered buffered, pops (long polls too),
   * acks and reads 503 with Retry-After within their own time, the liveness probe stays 200.
   */
  @Test
  @Order(5)
  void withNoWritableServerPushesAreBufferedAndPopsAcksAndReadsAnswer503WithRetryAfter() {
    String leader = pg.leader();
    List<String> standbys = PatroniCluster.MEMBERS.stream().filter(m -> !m.equals(leader)).toList();
    String q = "ha-no-primary";
    try (TestNode n = node(Map.of("QUEEN_APPLY_SCHEMA", "false", "QUEEN_PG_FAILOVER_WAIT_MS", "300"),
        standbys.get(0), standbys.get(1))) {
      var pushed = n.post("/api/v1/push", new JsonObject().put("items", new JsonArray().add(new JsonObject()
          .put("queue", q).put("transactionId", "t1").put("payload", new JsonObject().put("n", 1)))));
      assertThat(pushed.status()).isEqualTo(201);
      assertThat(pushed.array().getJsonObject(0).getString("status")).isEqualTo("buffered");
      long t = System.nanoTime();
      var pop = n.get("/api/v1/pop/queue/" + q + "?batch=1&wait=true&timeout=2000&consumerGroup=g");
      assertThat(System.nanoTime() - t).as("a long poll answered within its timeout")
          .isLessThan(Duration.ofSeconds(4).toNanos());
      String pid = java.util.UUID.randomUUID().toString();
      var ack = n.post("/api/v1/ack/batch", new JsonObject().put("consumerGroup", "g").put("acknowledgments",
          new JsonArray().add(new JsonObject().put("transactionId", "t1").put("partitionId", pid)
              .put("leaseId", java.util.UUID.randomUUID().toString()).put("status", "completed"))));
      var list = n.get("/api/v1/messages?queue=" + q);
      for (var r : List.of(pop, ack, list)) {
        assertThat(r.status()).as(r.body()).isEqualTo(503);
        assertThat(r.header("Retry-After")).isEqualTo("2");
        assertThat(r.json().getString("error")).startsWith("database unavailable (PostgreSQL failover), retry later");
      }
      assertThat(n.get("/health/live").status()).isEqualTo(200);
      assertThat(n.get("/health").status()).isEqualTo(503);
    }
  }

  private static void push(TestNode n, String q, String txn) {
    var r = n.post("/api/v1/push", new JsonObject().put("items", new JsonArray().add(new JsonObject()
        .put("queue", q).put("transactionId", txn).put("payload", new JsonObject().put("t", txn)))));
    assertThat(r.array().getJsonObject(0).getString("status")).isEqualTo("queued");
  }

  /** Transaction ids of the queue's messages as the node's listing shows them. */
  private static List<String> listed(TestNode n, String q) {
    var r = n.get("/api/v1/messages?queue=" + q + "&limit=100");
    assertThat(r.status()).as("listing: %s", r.body()).isEqualTo(200);
    return r.json().getJsonArray("messages").stream().map(m -> ((JsonObject) m).getString("transactionId")).toList();
  }
}
