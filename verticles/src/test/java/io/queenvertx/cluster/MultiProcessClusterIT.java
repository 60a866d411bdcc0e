package io.queenvertx.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.codec.api.AckRequest;
import io.queenvertx.codec.api.ApiAddresses;
import io.queenvertx.codec.api.ApiReply;
import io.queenvertx.codec.api.JsonRecordCodec;
import io.queenvertx.codec.api.PopRequest;
import io.queenvertx.codec.api.PushRequest;
import io.queenvertx.testing.BrokerProcess;
import io.queenvertx.testing.TestCluster;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Separate broker JVMs on loopback against one PostgreSQL, clustered with Hazelcast; this test JVM joins the same
 * cluster as an event-bus client.
 */
class MultiProcessClusterIT {
  static final HttpClient HTTP = io.queenvertx.testing.TestNode.HTTP;
  static final String CLUSTER = "queen-mp-" + UUID.randomUUID();
  static final int HZ_PORT = 5801;
  static final Map<String, String> ENV = TestCluster.with(TestCluster.with(TestCluster.settings(CLUSTER, HZ_PORT),
      "POP_WAIT_INITIAL_INTERVAL_MS", "5000"), "POP_WAIT_MAX_INTERVAL_MS", "5000");
  static BrokerProcess a;
  static BrokerProcess b;

  @BeforeAll
  static void start() throws Exception {
    var fa = CompletableFuture.supplyAsync(() -> startNode());
    var fb = CompletableFuture.supplyAsync(() -> startNode());
    a = fa.get(180, TimeUnit.SECONDS);
    b = fb.get(180, TimeUnit.SECONDS);
    // the members have met once a push through b wakes a pop parked on a (the cross-node announcement)
    org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(100))
        .until(() -> aPushThroughWakesAPopOn(b, a));
  }

  /**
   * One round: a pop parked on {@code parkedOn} (3 s timeout, under the 5 s re-poll of {@link #ENV}) answers a
   * message pushed via {@code pushedThrough} within 1 s, which only the cross-node announcement can do (its final
   * poll at the deadline would come 3 s after the push). False when it does not, or when the push is refused.
   */
  static boolean aPushThroughWakesAPopOn(BrokerProcess pushedThrough, BrokerProcess parkedOn) throws Exception {
    String q = "mp-meet-" + UUID.randomUUID();
    var parked = parkOn(parkedOn, "/api/v1/pop/queue/" + q + "?wait=true&timeout=3000&autoAck=true");
    if (post(pushedThrough, "/api/v1/push", pushBody(q, "meet")).statusCode() != 201) return false;
    long pushedAt = System.nanoTime();
    int status = parked.get(15, TimeUnit.SECONDS).statusCode();
    return status == 200 && System.nanoTime() - pushedAt < TimeUnit.SECONDS.toNanos(1);
  }

  /** The node's parked long polls, from its Prometheus exposition. */
  static double parked(BrokerProcess n) throws Exception {
    for (String line : get(n, "/metrics/prometheus").body().split("\n")) {
      if (line.startsWith("queen_parked_long_polls ")) return Double.parseDouble(line.substring(24).trim());
    }
    throw new IllegalStateException("no queen_parked_long_polls sample");
  }

  /** Starts the pop and returns once the node reports it parked (or it already answered). */
  static CompletableFuture<HttpResponse<String>> parkOn(BrokerProcess n, String path) throws Exception {
    double before = parked(n);
    var pop = CompletableFuture.supplyAsync(() -> {
      try {
        return get(n, path);
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
    org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5))
        .until(() -> pop.isDone() || parked(n) > before);
    return pop;
  }

  static BrokerProcess startNode() {
    try {
      return BrokerProcess.onSharedDatabase(ENV);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  @AfterAll
  static void stop() throws Exception {
    if (a != null) a.close();
    if (b != null) b.close();
  }

  static HttpResponse<String> get(BrokerProcess n, String path) throws Exception {
    return HTTP.send(HttpRequest.newBuilder(URI.create(n.baseUrl() + path)).timeout(Duration.ofSeconds(60)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  static HttpResponse<String> post(BrokerProcess n, String path, Object body) throws Exception {
    return HTTP.send(HttpRequest.newBuilder(URI.create(n.baseUrl() + path)).timeout(Duration.ofSeconds(60))
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body.toString())).build(), HttpResponse.BodyHandlers.ofString());
  }

  static JsonObject pushBody(String q, String txn) {
    return new JsonObject().put("items", new JsonArray().add(new JsonObject().put("queue", q).put("transactionId", txn)
        .put("payload", new JsonObject().put("txn", txn))));
  }

  @Test
  void aPopParkedOnNodeAIsAnsweredWithin100msOfAPushThroughNodeB() throws Exception {
    List<Long> micros = new ArrayList<>();
    for (int i = 0; i < 205; i++) {
      String q = "mp-wake-" + UUID.randomUUID();
      double before = parked(a);
      var parked = CompletableFuture.supplyAsync(() -> {
        try {
          var r = get(a, "/api/v1/pop/queue/" + q + "?wait=true&timeout=10000&autoAck=true");
          return new Object[] {r, System.nanoTime()};
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      });
      org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5))
          .until(() -> parked.isDone() || parked(a) > before);
      var pushed = post(b, "/api/v1/push", pushBody(q, "w" + i));
      long pushedAt = System.nanoTime();
      assertThat(pushed.statusCode()).isEqualTo(201);
      Object[] res = parked.get(15, TimeUnit.SECONDS);
      @SuppressWarnings("unchecked")
      var r = (HttpResponse<String>) res[0];
      assertThat(r.statusCode()).isEqualTo(200);
      if (i >= 5) micros.add(Math.max(0, ((long) res[1] - pushedAt) / 1000)); // the first trials warm up
    }
    Collections.sort(micros);
    long p50 = micros.get(micros.size() / 2);
    long p99 = micros.get((int) Math.ceil(micros.size() * 0.99) - 1);
    System.out.printf("cross-node wake-up over %d trials: p50 %.2f ms, p99 %.2f ms, max %.2f ms%n", micros.size(),
        p50 / 1000.0, p99 / 1000.0, micros.get(micros.size() - 1) / 1000.0);
    // The re-poll is 5 s away on these nodes, so every answer under 2 s was a cross-node wake-up. The median must
    // be inside the 100 ms bound; p99 is reported (it depends on how busy the machine is) rather than asserted.
    assertThat(micros.get(micros.size() - 1)).as("slowest wake-up in microseconds").isLessThan(2_000_000);
    assertThat(p50).as("median wake-up in microseconds").isLessThan(100_000);
  }

  @Test
  void killMinusNineLeavesOnlyLeasesThatExpireBackToTheGroup() throws Exception {
    String q = "mp-kill-" + UUID.randomUUID();
    var c = BrokerProcess.onSharedDatabase(ENV);
    try {
      for (int i = 0; i < 4; i++) assertThat(post(c, "/api/v1/push", pushBody(q, "k" + i)).statusCode()).isEqualTo(201);
      // one message consumed and acked through the doomed node
      var first = new JsonObject(get(c, "/api/v1/pop/queue/" + q + "?batch=1").body());
      var m0 = first.getJsonArray("messages").getJsonObject(0);
      var ack = new JsonArray(post(c, "/api/v1/ack", new JsonObject().put("transactionId", m0.getString("transactionId"))
          .put("partitionId", m0.getString("partitionId")).put("leaseId", first.getString("leaseId"))).body());
      assertThat(ack.getJsonObject(0).getBoolean("success")).isTrue();
      // the rest leased through it, never acked
      var leased = new JsonObject(get(c, "/api/v1/pop/queue/" + q + "?batch=10&leaseSeconds=2").body());
      assertThat(leased.getJsonArray("messages")).hasSize(3);
      c.kill9();
    } finally {
      c.close();
    }
    assertThat(get(a, "/api/v1/pop/queue/" + q + "?batch=10").statusCode()).as("still leased").isEqualTo(204);
    // the 2 s leases run out: poll until a pop through a surviving node gets the batch back
    var back = new java.util.concurrent.atomic.AtomicReference<HttpResponse<String>>();
    org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(200))
        .until(() -> {
          back.set(get(a, "/api/v1/pop/queue/" + q + "?batch=10"));
          return back.get().statusCode() == 200;
        });
    var again = new JsonObject(back.get().body());
    var txns = again.getJsonArray("messages").stream().map(o -> ((JsonObject) o).getString("transactionId")).toList();
    assertThat(txns).containsExactly("k1", "k2", "k3");
    assertThat(again.getJsonArray("messages").getJsonObject(0).getInteger("deliveryAttempt")).isEqualTo(2);
  }

  @Test
  void aClusteredVertxServicePushesPopsAndAcksOverTheEventBus() throws Exception {
    Vertx client = TestCluster.bareMember(CLUSTER, HZ_PORT);
    try {
      JsonRecordCodec.registerAll(client.eventBus());
      String q = "mp-bus-" + UUID.randomUUID();
      var timeout = new DeliveryOptions().setSendTimeout(20000);
      ApiReply pushed = awaitReply(client, ApiAddresses.PUSH, new PushRequest(List.of(
          new PushRequest.Item(q, null, "bus-1", "{\"via\":\"event-bus\"}"))), timeout);
      assertThat(pushed.status()).isEqualTo(201);
      assertThat(new JsonArray(pushed.body()).getJsonObject(0).getString("status")).isEqualTo("queued");

      ApiReply popped = awaitReply(client, ApiAddresses.POP, PopRequest.of(q, 10).waiting(5000), timeout);
      assertThat(popped.status()).isEqualTo(200);
      var pop = new JsonObject(popped.body());
      var msg = pop.getJsonArray("messages").getJsonObject(0);
      assertThat(msg.getJsonObject("data").getString("via")).isEqualTo("event-bus");

      ApiReply acked = awaitReply(client, ApiAddresses.ACK, new AckRequest(null, List.of(new AckRequest.Ack(
          msg.getString("transactionId"), msg.getString("partitionId"), "completed", pop.getString("leaseId"), null))),
          timeout);
      assertThat(acked.status()).isEqualTo(200);
      assertThat(new JsonArray(acked.body()).getJsonObject(0).getBoolean("success")).isTrue();

      ApiReply empty = awaitReply(client, ApiAddresses.POP, PopRequest.of(q, 10), timeout);
      assertThat(empty.status()).isEqualTo(204);
      assertThat(empty.body()).isNull();
    } finally {
      client.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  static ApiReply awaitReply(Vertx v, String address, Object body, DeliveryOptions o) throws Exception {
    return v.eventBus().<ApiReply>request(address, body, o).toCompletionStage().toCompletableFuture()
        .get(30, TimeUnit.SECONDS).body();
  }
}
