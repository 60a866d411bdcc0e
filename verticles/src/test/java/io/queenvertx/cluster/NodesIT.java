package io.queenvertx.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.kernel.Config;
import io.queenvertx.testing.TestCluster;
import io.queenvertx.testing.TestDatabase;
import io.queenvertx.testing.TestNode;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * GET /api/v1/system/nodes on two Hazelcast-clustered nodes on loopback: either node lists both with their own server
 * id, version and database health (each answered on its own event-bus address); a cluster member that runs no broker
 * (so nothing answers on its address) is listed as unreachable within the 2 s bound.
 */
class NodesIT {
  static final String CLUSTER = "queen-nodes-it-" + UUID.randomUUID();
  static final int HZ_PORT = 5921;
  static TestCluster cluster;
  static TestNode a;
  static TestNode b;
  /** The wall clock (ms) just before the nodes were started, and once both served. */
  static long bootStarted;
  static long bootEnded;

  @BeforeAll
  static void start() throws Exception {
    var env = TestCluster.settings(CLUSTER, HZ_PORT);
    String suffix = "-" + CLUSTER.substring(CLUSTER.length() - 6);
    bootStarted = System.currentTimeMillis();
    cluster = TestCluster.start(TestCluster.with(env, "QUEEN_SERVER_ID", "node-a" + suffix),
        TestCluster.with(env, "QUEEN_SERVER_ID", "node-b" + suffix), TestDatabase.get().shared());
    bootEnded = System.currentTimeMillis();
    a = cluster.a();
    b = cluster.b();
  }

  @AfterAll
  static void stop() {
    if (cluster != null) cluster.close();
  }

  static List<JsonObject> nodes(TestNode via) {
    var r = via.get("/api/v1/system/nodes");
    assertThat(r.status()).as("%s", r.body()).isEqualTo(200);
    assertThat(r.json().getBoolean("clustered")).isTrue();
    return io.queenvertx.testing.Wire.list(r.json().getJsonArray("nodes"));
  }

  @Test
  void eitherNodeListsBothWithTheirOwnHealth() {
    String idA = a.node().config().serverId();
    String idB = b.node().config().serverId();
    // over a second after the boot, so that an uptime stuck at zero (or counted in another unit) shows
    Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> System.currentTimeMillis() - bootEnded >= 1_100);
    for (TestNode via : List.of(a, b)) {
      long before = System.currentTimeMillis();
      List<JsonObject> list = nodes(via);
      long after = System.currentTimeMillis();
      assertThat(list).extracting(n -> n.getString("serverId")).containsExactlyInAnyOrder(idA, idB);
      for (JsonObject n : list) {
        assertThat(n.getBoolean("reachable")).as("%s", n.encode()).isTrue();
        assertThat(n.getString("database")).isEqualTo("connected");
        assertThat(n.getString("version")).isEqualTo(Config.VERSION);
        long startedAt = Instant.parse(n.getString("startedAt")).toEpochMilli();
        assertThat(startedAt).as("started while this test booted it: %s", n.encode())
            .isBetween(bootStarted, bootEnded);
        assertThat(n.getLong("uptimeSeconds")).as("whole seconds since it started: %s", n.encode())
            .isBetween((before - startedAt) / 1000, (after - startedAt) / 1000).isPositive();
        assertThat(n.getBoolean("maintenanceMode")).isFalse();
        assertThat(n.getBoolean("popMaintenanceMode")).isFalse();
      }
      TestNode other = via == a ? b : a;
      JsonObject otherEntry = list.stream().filter(n -> n.getString("serverId").equals(other.node().config().serverId()))
          .findFirst().orElseThrow();
      assertThat(otherEntry.getInteger("httpPort")).isEqualTo(other.node().config().http().port());
    }
  }

  @Test
  void aMemberWithoutABrokerIsListedAsUnreachable() throws Exception {
    Vertx bare = TestCluster.bareMember(CLUSTER, HZ_PORT);
    try {
      TestNode.awaitMembers(3, a);
      String bareId = ((io.vertx.core.internal.VertxInternal) bare).clusterManager().getNodeId();
      long t0 = System.nanoTime();
      List<JsonObject> list = nodes(a);
      long ms = (System.nanoTime() - t0) / 1_000_000;
      assertThat(ms).as("answered within the 2 s bound (plus slack), ms").isLessThan(4000);
      assertThat(list).hasSize(3);
      JsonObject dead = list.stream().filter(n -> bareId.equals(n.getString("nodeId"))).findFirst().orElseThrow();
      assertThat(dead.getBoolean("reachable")).isFalse();
      assertThat(list).filteredOn(n -> n.getBoolean("reachable")).extracting(n -> n.getString("serverId"))
          .containsExactlyInAnyOrder(a.node().config().serverId(), b.node().config().serverId());
    } finally {
      bare.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
      TestNode.awaitMembers(2, a);
    }
  }
}
