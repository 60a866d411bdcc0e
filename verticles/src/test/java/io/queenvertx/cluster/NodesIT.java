package io.queenvertx.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import com.hazelcast.config.XmlConfigBuilder;
import io.queenvertx.kernel.Config;
import io.queenvertx.testing.TestNode;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.io.InputStream;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
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
  static TestNode a;
  static TestNode b;

  @BeforeAll
  static void start() throws Exception {
    var env = Map.of("QUEEN_CLUSTER", "true", "QUEEN_CLUSTER_NAME", CLUSTER, "QUEEN_CLUSTER_MEMBERS", "127.0.0.1",
        "QUEEN_CLUSTER_PORT", "5921");
    var fa = CompletableFuture.supplyAsync(() -> TestNode.start(withId(env, "node-a")));
    var fb = CompletableFuture.supplyAsync(() -> TestNode.start(withId(env, "node-b")));
    a = fa.get();
    b = fb.get();
    TestNode.awaitMembers(2, a, b);
  }

  static Map<String, String> withId(Map<String, String> env, String id) {
    var m = new java.util.HashMap<>(env);
    m.put("QUEEN_SERVER_ID", id + "-" + CLUSTER.substring(CLUSTER.length() - 6));
    return m;
  }

  @AfterAll
  static void stop() {
    if (b != null) b.close();
    if (a != null) a.close();
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
    for (TestNode via : List.of(a, b)) {
      List<JsonObject> list = nodes(via);
      assertThat(list).extracting(n -> n.getString("serverId")).containsExactlyInAnyOrder(idA, idB);
      for (JsonObject n : list) {
        assertThat(n.getBoolean("reachable")).as("%s", n.encode()).isTrue();
        assertThat(n.getString("database")).isEqualTo("connected");
        assertThat(n.getString("version")).isEqualTo(Config.VERSION);
        assertThat(n.getLong("uptimeSeconds")).isNotNegative();
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
    com.hazelcast.config.Config hz;
    try (InputStream in = NodesIT.class.getResourceAsStream("/cluster.xml")) {
      hz = new XmlConfigBuilder(in).build();
    }
    hz.setClusterName(CLUSTER);
    hz.setProperty("hazelcast.phone.home.enabled", "false");
    hz.getNetworkConfig().setPort(5921).setPortAutoIncrement(true).setPortCount(20);
    var join = hz.getNetworkConfig().getJoin();
    join.getMulticastConfig().setEnabled(false);
    join.getTcpIpConfig().setEnabled(true).getMembers().clear();
    join.getTcpIpConfig().addMember("127.0.0.1");
    var options = new VertxOptions();
    options.getEventBusOptions().setHost("127.0.0.1").setPort(0);
    Vertx bare = Vertx.builder().with(options).withClusterManager(new HazelcastClusterManager(hz)).buildClustered()
        .toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
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
