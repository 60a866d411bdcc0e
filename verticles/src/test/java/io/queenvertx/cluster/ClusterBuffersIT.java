package io.queenvertx.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.bus.Addresses;
import io.queenvertx.testing.TestDatabase;
import io.queenvertx.testing.TestCluster;
import io.queenvertx.testing.TestNode;
import io.vertx.core.Vertx;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code GET /api/v1/status/buffers} across a cluster: two Hazelcast-clustered nodes in one JVM on loopback, on a
 * database of their own (push maintenance, which fills a spool, is shared by every node of a database). Each node lists
 * both spools, its own first; a member that never answers is listed as unreachable after the 2 s limit.
 */
class ClusterBuffersIT {
  static final String CLUSTER = "queen-buffers-it-" + UUID.randomUUID();
  static final int HZ_PORT = 6101;
  static TestCluster cluster;
  static TestNode a;
  static TestNode b;

  @BeforeAll
  static void start() throws Exception {
    var env = TestCluster.settings(CLUSTER, HZ_PORT);
    cluster = TestCluster.start(TestCluster.with(env, "QUEEN_SERVER_ID", "buffers-a"),
        TestCluster.with(env, "QUEEN_SERVER_ID", "buffers-b"), TestDatabase.get().fresh());
    a = cluster.a();
    b = cluster.b();
  }

  @AfterAll
  static void stop() {
    if (cluster != null) cluster.close();
  }

  static JsonObject entry(JsonObject buffers, String nodeId) {
    for (Object o : buffers.getJsonArray("nodes")) {
      if (nodeId.equals(((JsonObject) o).getString("nodeId"))) return (JsonObject) o;
    }
    throw new AssertionError("no entry for " + nodeId + " in " + buffers.encode());
  }

  @Test
  void eachNodeListsBothSpoolsAndTheirPendingEvents() {
    // both views of the membership hold exactly the two nodes (a member of another test has left them)
    TestNode.awaitMembers(2, a, b);
    for (TestNode n : new TestNode[] {a, b}) {
      JsonObject idle = n.get("/api/v1/status/buffers").json();
      JsonArray nodes = idle.getJsonArray("nodes");
      assertThat(nodes).as(idle.encode()).hasSize(2);
      assertThat(nodes.getJsonObject(0).getString("nodeId")).as("the node asked comes first")
          .isEqualTo(n.node().config().serverId());
      assertThat(idle.getInteger("reachableNodes")).isEqualTo(2);
      assertThat(idle.getInteger("unreachableNodes")).isZero();
      assertThat(idle.getBoolean("healthy")).isTrue();
      for (TestNode other : new TestNode[] {a, b}) {
        JsonObject e = entry(idle, other.node().config().serverId());
        assertThat(e.getBoolean("reachable")).isTrue();
        assertThat(e.getString("directory")).as("each node describes its own spool folder")
            .isEqualTo(other.node().config().spool().dir().toAbsolutePath().toString());
        assertThat(e.getString("clusterNodeId"))
            .isEqualTo(((VertxInternal) other.node().vertx()).clusterManager().getNodeId());
      }
    }

    // push maintenance (cluster-wide): a push through b spools on b only, and a sees it in b's entry
    assertThat(a.post("/api/v1/system/maintenance", new JsonObject().put("enabled", true)).status()).isEqualTo(200);
    try {
      Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> {
        JsonObject s = a.get("/api/v1/status/buffers").json();
        return entry(s, "buffers-a").getBoolean("maintenanceMode") && entry(s, "buffers-b").getBoolean("maintenanceMode");
      });
      String q = "cl-buf-" + UUID.randomUUID();
      for (String txn : new String[] {"cb-1", "cb-2", "cb-3"}) {
        var r = b.post("/api/v1/push", new JsonObject().put("items", new JsonArray().add(new JsonObject()
            .put("queue", q).put("payload", 1).put("transactionId", txn))));
        assertThat(r.array().getJsonObject(0).getString("status")).as(r.body()).isEqualTo("buffered");
      }
      JsonObject full = a.get("/api/v1/status/buffers").json();
      assertThat(entry(full, "buffers-b").getLong("pendingEvents")).as(full.encode()).isEqualTo(3);
      assertThat(entry(full, "buffers-b").getBoolean("maintenanceMode")).isTrue();
      assertThat(entry(full, "buffers-a").getLong("pendingEvents")).isZero();
      assertThat(full.getJsonObject("totals").getLong("pendingEvents")).isEqualTo(3);
      assertThat(full.getJsonObject("totals").getLong("files")).as("b's active spool file").isEqualTo(1);
    } finally {
      a.post("/api/v1/system/maintenance", new JsonObject().put("enabled", false));
    }
    Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> {
      JsonObject t = a.get("/api/v1/status/buffers").json().getJsonObject("totals");
      return t.getLong("pendingEvents") == 0 && t.getLong("files") == 0;
    });
  }

  @Test
  void aMemberThatDoesNotAnswerIsListedUnreachableAfterTwoSeconds() throws Exception {
    Vertx silent = TestCluster.bareMember(CLUSTER, HZ_PORT);
    try {
      String id = ((VertxInternal) silent).clusterManager().getNodeId();
      // it takes the request and never replies, like a node stuck on a blocked event loop
      silent.eventBus().consumer(Addresses.NODE_BUFFERS_PREFIX + id + ".buffers", m -> { })
          .completion().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
      TestNode.awaitMembers(3, a);

      long t0 = System.nanoTime();
      var r = a.get("/api/v1/status/buffers");
      long ms = (System.nanoTime() - t0) / 1_000_000;
      assertThat(r.status()).as(r.body()).isEqualTo(200);
      JsonObject j = r.json();
      assertThat(ms).as("answered once the 2 s limit passed, ms").isBetween(1_900L, 4_500L);
      assertThat(j.getJsonArray("nodes")).as(j.encode()).hasSize(3);
      assertThat(j.getInteger("reachableNodes")).isEqualTo(2);
      assertThat(j.getInteger("unreachableNodes")).isEqualTo(1);
      assertThat(j.getBoolean("healthy")).as("a member's spool is unknown").isFalse();
      JsonObject gone = null;
      for (Object o : j.getJsonArray("nodes")) {
        if (id.equals(((JsonObject) o).getString("clusterNodeId"))) gone = (JsonObject) o;
      }
      assertThat(gone).as(j.encode()).isNotNull();
      assertThat(gone.getBoolean("reachable")).isFalse();
      assertThat(gone.getString("nodeId")).isNull();
      assertThat(gone.getString("error")).isEqualTo("no answer within 2000 ms");
      assertThat(gone.getString("host")).startsWith("127.0.0.1:");
      assertThat(entry(j, "buffers-a").getBoolean("reachable")).isTrue();
      assertThat(entry(j, "buffers-b").getBoolean("reachable")).isTrue();
    } finally {
      silent.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
    TestNode.awaitMembers(2, a, b);
    assertThat(a.get("/api/v1/status/buffers").json().getInteger("unreachableNodes")).isZero();
  }
}
