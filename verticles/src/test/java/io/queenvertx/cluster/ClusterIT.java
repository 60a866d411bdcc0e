package io.queenvertx.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.tenancy.CachedOwnershipGate;
import io.queenvertx.testing.TestCluster;
import io.queenvertx.testing.TestDatabase;
import io.queenvertx.testing.TestNode;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Two Hazelcast-clustered nodes in one JVM on loopback, one PostgreSQL. */
class ClusterIT {
  static TestCluster cluster;
  static TestNode a;
  static TestNode b;
  /** Node a's event bus listens on a port set by QUEEN_CLUSTER_BUS_PORT; b's is picked at random. */
  static final int busPortA = TestNode.freePort();

  @BeforeAll
  static void start() throws Exception {
    var env = new java.util.HashMap<>(TestCluster.settings("queen-it-" + UUID.randomUUID(), 5901));
    env.putAll(Map.of("QUEEN_TENANCY_HEADER", "true",
        "POP_WAIT_INITIAL_INTERVAL_MS", "5000", "POP_WAIT_MAX_INTERVAL_MS", "5000"));
    cluster = TestCluster.start(TestCluster.with(env, "QUEEN_CLUSTER_BUS_PORT", Integer.toString(busPortA)), env,
        TestDatabase.get().shared());
    a = cluster.a();
    b = cluster.b();
  }

  @AfterAll
  static void stop() {
    if (cluster != null) cluster.close();
  }

  static JsonObject push(String queue, Object payload) {
    return new JsonObject().put("items", new JsonArray().add(new JsonObject().put("queue", queue)
        .put("payload", payload)));
  }

  @Test
  void aLongPollParkedOnOneNodeWakesOnAPushThroughTheOther() throws Exception {
    // the first cross-node message opens the event-bus connection; measure the steady state after it
    wakeOnce("cl-warm-" + UUID.randomUUID());
    long[] ms = new long[5];
    for (int i = 0; i < ms.length; i++) ms[i] = wakeOnce("cl-wake-" + UUID.randomUUID());
    java.util.Arrays.sort(ms);
    // the safety re-poll is 5 s away on these nodes: only the cross-node announcement answers this fast
    assertThat(ms[ms.length - 1]).as("no wake-up waited for the re-poll, ms").isLessThan(2000);
    assertThat(ms[ms.length / 2]).as("median wake-up after the push, ms").isLessThan(100);
  }

  private long wakeOnce(String q) throws Exception {
    double parkedBefore = b.metric("queen_parked_long_polls");
    var popped = CompletableFuture.supplyAsync(() -> {
      var r = b.get("/api/v1/pop/queue/" + q + "?wait=true&timeout=10000");
      return new Object[] {r, System.nanoTime()};
    });
    Awaitility.await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20))
        .until(() -> popped.isDone() || b.metric("queen_parked_long_polls") > parkedBefore);
    assertThat(popped).as("the pop is parked on b").isNotDone();
    var pushed = a.post("/api/v1/push", push(q, new JsonObject().put("n", 1)));
    long pushedAt = System.nanoTime();
    assertThat(pushed.status()).isEqualTo(201);
    Object[] res = popped.get();
    var reply = (TestNode.Reply) res[0];
    assertThat(reply.status()).isEqualTo(200);
    assertThat(reply.json().getJsonArray("messages").getJsonObject(0).getJsonObject("data").getInteger("n"))
        .isEqualTo(1);
    return ((long) res[1] - pushedAt) / 1_000_000;
  }

  @Test
  void ownershipConfirmedOnOneNodeIsServedOnTheOtherWithoutAQueryAndIsGoneAfterDeletion() {
    String tenant = UUID.randomUUID().toString();
    var h = Map.of("x-queen-tenant", tenant);
    String q = "cl-own-" + UUID.randomUUID();
    var pushed = a.post("/api/v1/push", push(q, new JsonObject().put("n", 1)), h);
    String pid = pushed.array().getJsonObject(0).getString("partitionId");
    String txn = pushed.array().getJsonObject(0).getString("transaction_id");
    var gateA = (CachedOwnershipGate) a.node().ownershipGate();
    var gateB = (CachedOwnershipGate) b.node().ownershipGate();

    long aBefore = gateA.queries();
    assertThat(a.get("/api/v1/messages/" + pid + "/" + txn, h).status()).isEqualTo(200);
    assertThat(gateA.queries()).isEqualTo(aBefore + 1);

    long bBefore = gateB.queries();
    Awaitility.await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
      assertThat(b.get("/api/v1/messages/" + pid + "/" + txn, h).status()).isEqualTo(200);
      assertThat(gateB.queries()).isEqualTo(bBefore);
    });
    // a foreign tenant is refused on both nodes, from the cached owner, like a missing message
    var other = Map.of("x-queen-tenant", UUID.randomUUID().toString());
    assertThat(b.get("/api/v1/messages/" + pid + "/" + txn, other).status()).isEqualTo(404);

    assertThat(a.delete("/api/v1/resources/queues/" + q, h).json().getBoolean("deleted")).isTrue();
    Awaitility.await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
      long qa = gateA.queries();
      long qb = gateB.queries();
      assertThat(a.get("/api/v1/messages/" + pid + "/" + txn, h).status()).isEqualTo(404);
      assertThat(b.get("/api/v1/messages/" + pid + "/" + txn, h).status()).isEqualTo(404);
      assertThat(gateA.queries()).isEqualTo(qa + 1);
      assertThat(gateB.queries()).isEqualTo(qb + 1);
    });
  }

  @Test
  void theEventBusListensOnTheConfiguredPort() throws Exception {
    try (var s = new java.net.Socket()) {
      s.connect(new java.net.InetSocketAddress("127.0.0.1", busPortA), 2000);
      assertThat(s.isConnected()).isTrue();
    }
  }
}
