package io.queenvertx.webhook;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.bus.Addresses;
import io.queenvertx.kernel.Config;
import io.queenvertx.testing.TestDatabase;
import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Webhook delivery against real HTTP receivers on loopback (issue #9). */
class DeliveryIT {
  static final Config.Database DB = TestDatabase.get().shared();
  @NodeFixture(env = "QUEEN_WEBHOOK_API_KEYS=k-d")
  static TestNode node;
  static Vertx receivers;
  /** How soon a message of a subscription nothing holds up reaches its receiver, at the most (ms). */
  static final long UNSTALLED_MS = 2_000;

  @BeforeAll
  static void start() {
    receivers = Vertx.vertx();
  }

  @AfterAll
  static void stop() throws Exception {
    // the endpoints live in the shared database: remove them so nodes of later test classes do not deliver them
    TestDatabase.execute(DB, "DELETE FROM queen.webhook_endpoints WHERE queue LIKE 'wh-%'");
    receivers.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  /** One request a receiver saw. */
  record Received(String body, Map<String, String> headers, long atNanos) {}

  static HttpServer receiver(List<Received> seen, BiConsumer<HttpServerRequest, Integer> answer) throws Exception {
    AtomicInteger n = new AtomicInteger();
    return receivers.createHttpServer().requestHandler(req -> req.body().onSuccess(b -> {
      Map<String, String> h = new java.util.HashMap<>();
      req.headers().forEach(e -> h.put(e.getKey().toLowerCase(), e.getValue()));
      seen.add(new Received(b.toString(StandardCharsets.UTF_8), h, System.nanoTime()));
      answer.accept(req, n.incrementAndGet());
    })).listen(0, "127.0.0.1").toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  /**
   * Inserts an endpoint and announces it. No wait is needed before pushing: the subscription starts at the row's
   * creation time, so a message pushed after this returns is delivered whenever the lanes start.
   */
  static String endpoint(String queue, String url, int maxAttempts, int backoffMs, int timeoutMs) {
    String id = UUID.randomUUID().toString();
    TestDatabase.execute(DB, "INSERT INTO queen.webhook_endpoints(id, tenant_id, queue, url, secret, timeout_ms, "
        + "max_attempts, backoff_initial_ms, backoff_max_ms, max_concurrency) VALUES ('" + id + "', "
        + "'00000000-0000-0000-0000-000000000001', '" + queue + "', '" + url + "', 'shh-" + id + "', " + timeoutMs
        + ", " + maxAttempts + ", " + backoffMs + ", 5000, 2)");
    node.node().vertx().eventBus().publish(Addresses.WEBHOOK_CHANGED, new JsonObject().put("id", id));
    return id;
  }

  static void push(String queue, String partition, String txn, JsonObject payload) {
    var r = node.post("/api/v1/push", new JsonObject().put("items", new JsonArray().add(new JsonObject()
        .put("queue", queue).put("partition", partition).put("transactionId", txn).put("payload", payload))));
    assertThat(r.array().getJsonObject(0).getString("status")).isEqualTo("queued");
  }

  static String hmac(String secret, String timestamp, String body) throws Exception {
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
    return "sha256=" + HexFormat.of().formatHex(mac.doFinal((timestamp + "." + body).getBytes(StandardCharsets.UTF_8)));
  }

  static long deliveryLong(String endpoint, String txn, String column) {
    return TestDatabase.queryLong(DB, "SELECT " + column + " FROM queen.webhook_deliveries WHERE endpoint_id = '"
        + endpoint + "' AND transaction_id = '" + txn + "'");
  }

  @Test
  void messagesArriveInOrderWithASignatureTheReceiverCanVerify() throws Exception {
    List<Received> seen = new CopyOnWriteArrayList<>();
    var server = receiver(seen, (req, n) -> req.response().setStatusCode(200).end());
    String q = "wh-order-" + UUID.randomUUID();
    String id = endpoint(q, "http://127.0.0.1:" + server.actualPort() + "/hook", 3, 100, 2000);
    for (int i = 0; i < 5; i++) push(q, "p", "o-" + i, new JsonObject().put("n", i));
    Awaitility.await().atMost(Duration.ofSeconds(15)).until(() -> seen.size() >= 5);
    for (int i = 0; i < 5; i++) {
      Received r = seen.get(i);
      assertThat(new JsonObject(r.body()).getInteger("n")).isEqualTo(i);
      assertThat(r.headers().get("x-queen-transaction-id")).isEqualTo("o-" + i);
      assertThat(r.headers().get("x-queen-signature"))
          .isEqualTo(hmac("shh-" + id, r.headers().get("x-queen-timestamp"), r.body()));
    }
    Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> TestDatabase.queryLong(DB,
        "SELECT count(*) FROM queen.webhook_deliveries WHERE endpoint_id = '" + id + "' AND status = 'succeeded'") == 5);
    assertThat(deliveryLong(id, "o-0", "attempt_count")).isEqualTo(1);
    assertThat(deliveryLong(id, "o-0", "response_status")).isEqualTo(200);
    server.close();
  }

  @Test
  void fiveHundredsAreRetriedWithGrowingBackoffUntilTheReceiverRecovers() throws Exception {
    List<Received> seen = new CopyOnWriteArrayList<>();
    var server = receiver(seen, (req, n) -> req.response().setStatusCode(n <= 2 ? 500 : 200).end());
    String q = "wh-retry-" + UUID.randomUUID();
    String id = endpoint(q, "http://127.0.0.1:" + server.actualPort() + "/hook", 5, 200, 2000);
    push(q, "p", "r-1", new JsonObject().put("x", 1));
    Awaitility.await().atMost(Duration.ofSeconds(15)).until(() -> TestDatabase.queryLong(DB,
        "SELECT count(*) FROM queen.webhook_deliveries WHERE endpoint_id = '" + id + "' AND status = 'succeeded'") == 1);
    assertThat(seen).hasSize(3);
    long gap1 = (seen.get(1).atNanos() - seen.get(0).atNanos()) / 1_000_000;
    long gap2 = (seen.get(2).atNanos() - seen.get(1).atNanos()) / 1_000_000;
    assertThat(gap1).as("first backoff ~200 ms ±20 %").isGreaterThanOrEqualTo(150);
    assertThat(gap2).as("second backoff ~400 ms ±20 %").isGreaterThanOrEqualTo(300);
    assertThat(deliveryLong(id, "r-1", "attempt_count")).isEqualTo(3);
    assertThat(seen.get(2).headers().get("x-queen-attempt")).isEqualTo("3");
    server.close();
  }

  @Test
  void retryAfterOn429IsHonoured() throws Exception {
    List<Received> seen = new CopyOnWriteArrayList<>();
    var server = receiver(seen, (req, n) -> {
      if (n == 1) req.response().setStatusCode(429).putHeader("Retry-After", "1").end();
      else req.response().setStatusCode(204).end();
    });
    String q = "wh-429-" + UUID.randomUUID();
    String id = endpoint(q, "http://127.0.0.1:" + server.actualPort() + "/hook", 3, 50, 2000);
    push(q, "p", "ra-1", new JsonObject());
    Awaitility.await().atMost(Duration.ofSeconds(15)).until(() -> seen.size() >= 2);
    long gap = (seen.get(1).atNanos() - seen.get(0).atNanos()) / 1_000_000;
    assertThat(gap).as("waited for Retry-After: 1 s, not the 50 ms backoff").isGreaterThanOrEqualTo(900);
    Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> TestDatabase.queryLong(DB,
        "SELECT count(*) FROM queen.webhook_deliveries WHERE endpoint_id = '" + id + "' AND status = 'succeeded'") == 1);
    server.close();
  }

  @Test
  void afterTheLastAttemptTheMessageIsDeadLetteredWithItsTelemetry() throws Exception {
    List<Received> seen = new CopyOnWriteArrayList<>();
    var server = receiver(seen, (req, n) -> req.response().setStatusCode(500).end("nope"));
    String q = "wh-dlq-" + UUID.randomUUID();
    String id = endpoint(q, "http://127.0.0.1:" + server.actualPort() + "/hook", 3, 50, 2000);
    push(q, "p", "d-1", new JsonObject().put("order", 7));
    push(q, "p", "d-2", new JsonObject().put("order", 8));
    Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> TestDatabase.queryLong(DB,
        "SELECT count(*) FROM queen.webhook_deliveries WHERE endpoint_id = '" + id
            + "' AND status = 'failed_permanent'") == 2);
    assertThat(seen).hasSize(6);
    assertThat(deliveryLong(id, "d-1", "attempt_count")).isEqualTo(3);
    assertThat(deliveryLong(id, "d-1", "response_status")).isEqualTo(500);
    // the telemetry is recorded, not left NULL: the latency within the 2 s timeout, the queue wait within the total
    assertThat(TestDatabase.queryLong(DB, "SELECT count(*) FROM queen.webhook_deliveries WHERE endpoint_id = '" + id
        + "' AND transaction_id = 'd-1' AND response_latency_ms BETWEEN 0 AND 2000 AND queue_wait_ms IS NOT NULL "
        + "AND queue_wait_ms BETWEEN 0 AND total_delivery_ms")).as("latency and queue wait of d-1").isEqualTo(1);
    assertThat(deliveryLong(id, "d-1", "total_delivery_ms")).isGreaterThanOrEqualTo(100);
    assertThat(TestDatabase.queryLong(DB, "SELECT count(*) FROM queen.webhook_deliveries WHERE endpoint_id = '" + id
        + "' AND transaction_id = 'd-1' AND last_error = 'HTTP 500' AND first_attempt_at IS NOT NULL "
        + "AND failed_at IS NOT NULL AND dlq_id IS NOT NULL")).isEqualTo(1);
    // the engine holds the dead letter under the subscription's consumer group, with its payload snapshot
    assertThat(TestDatabase.queryLong(DB, "SELECT count(*) FROM queen.log_dlq WHERE consumer_group = 'webhook:" + id
        + "' AND transaction_id = 'd-1' AND payload::jsonb->>'order' = '7' AND error = 'HTTP 500'")).isEqualTo(1);
    // order held: d-2 was only tried after d-1 was given up
    assertThat(seen.subList(0, 3)).allMatch(r -> "d-1".equals(r.headers().get("x-queen-transaction-id")));
    server.close();
  }

  @Test
  void aReplayedDeadLetterIsDeliveredAgainOnceTheReceiverRecovers() throws Exception {
    List<Received> seen = new CopyOnWriteArrayList<>();
    java.util.concurrent.atomic.AtomicBoolean healthy = new java.util.concurrent.atomic.AtomicBoolean();
    var server = receiver(seen, (req, n) -> req.response().setStatusCode(healthy.get() ? 200 : 503).end());
    String q = "wh-replay-" + UUID.randomUUID();
    String url = "http://127.0.0.1:" + server.actualPort() + "/hook";
    String id = endpoint(q, url, 2, 50, 2000);
    push(q, "p", "rp-1", new JsonObject().put("invoice", 99));
    Awaitility.await().atMost(Duration.ofSeconds(15)).until(() -> TestDatabase.queryLong(DB,
        "SELECT count(*) FROM queen.webhook_deliveries WHERE endpoint_id = '" + id
            + "' AND transaction_id = 'rp-1' AND status = 'failed_permanent'") == 1);
    assertThat(seen).hasSize(2);

    // the seed's listing shows it; replay it through the API once the receiver is back
    Map<String, String> key = Map.of("Authorization", "Bearer k-d");
    var listing = node.get("/v1/dlq/messages?limit=1000", key);
    assertThat(listing.status()).as("%s", listing.body()).isEqualTo(200);
    JsonObject row = listing.json().getJsonObject("data").getJsonArray("messages").stream()
        .map(o -> (JsonObject) o).filter(o -> url.equals(o.getString("endpoint"))).findFirst()
        .orElseThrow(() -> new AssertionError("dead letter of " + id + " not listed: " + listing.body()));
    assertThat(row.getString("status")).isEqualTo("failed_permanent");
    assertThat(row.getInteger("attempt_count")).isEqualTo(2);
    healthy.set(true);
    var replay = node.post("/v1/dlq/replay/" + row.getString("id"), "", key);
    assertThat(replay.status()).as("%s", replay.body()).isEqualTo(200);
    String replayedTxn = replay.json().getJsonObject("data").getJsonObject("replayed_as").getString("transaction_id");
    assertThat(replayedTxn).startsWith("dlq:");

    // delivered again, same payload, under the replay's transaction id, and recorded as a fresh success
    Awaitility.await().atMost(Duration.ofSeconds(15)).until(() -> seen.size() >= 3);
    Received again = seen.get(2);
    assertThat(again.headers().get("x-queen-transaction-id")).isEqualTo(replayedTxn);
    assertThat(new JsonObject(again.body()).getInteger("invoice")).isEqualTo(99);
    assertThat(again.headers().get("x-queen-signature"))
        .isEqualTo(hmac("shh-" + id, again.headers().get("x-queen-timestamp"), again.body()));
    Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> TestDatabase.queryLong(DB,
        "SELECT count(*) FROM queen.webhook_deliveries WHERE endpoint_id = '" + id + "' AND transaction_id = '"
            + replayedTxn + "' AND status = 'succeeded' AND attempt_count = 1") == 1);
    assertThat(TestDatabase.queryLong(DB, "SELECT count(*) FROM queen.log_dlq WHERE consumer_group = 'webhook:" + id
        + "'")).as("the dead letter was moved, not copied").isZero();
    // delivered exactly once more: the count stays at 3 for half a second after the success was recorded
    Awaitility.await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(2)).until(() -> seen.size() == 3);
    server.close();
  }

  /**
   * A receiver that never answers holds only its own endpoint's lanes: while both of them hang on it (a 30 s request
   * timeout, so for the whole test), each message pushed to another subscription, one at a time, reaches its receiver
   * within {@link #UNSTALLED_MS} of its push. A stall of the other subscription, even of a few seconds, fails it.
   */
  @Test
  void aHangingReceiverNeverStallsAnotherSubscription() throws Exception {
    List<Received> hung = new CopyOnWriteArrayList<>();
    var hanging = receiver(hung, (req, n) -> { /* never answers */ });
    List<Received> good = new CopyOnWriteArrayList<>();
    var ok = receiver(good, (req, n) -> req.response().setStatusCode(200).end());
    String qa = "wh-hang-" + UUID.randomUUID();
    String qb = "wh-fine-" + UUID.randomUUID();
    endpoint(qa, "http://127.0.0.1:" + hanging.actualPort() + "/hook", 50, 100, 30_000);
    endpoint(qb, "http://127.0.0.1:" + ok.actualPort() + "/hook", 3, 100, 3000);
    for (int i = 0; i < 4; i++) push(qa, "p" + i, "h-" + i, new JsonObject());
    // both lanes of the hanging endpoint (max_concurrency 2) wait on their requests
    Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> hung.size() >= 2);
    List<Long> latencies = new java.util.ArrayList<>();
    for (int i = 0; i < 5; i++) {
      int n = i + 1;
      long pushedAt = System.nanoTime();
      push(qb, "p", "g-" + i, new JsonObject().put("i", i));
      Awaitility.await().atMost(Duration.ofSeconds(40)).until(() -> good.size() >= n);
      latencies.add((good.get(i).atNanos() - pushedAt) / 1_000_000);
    }
    System.out.printf("other subscription: push-to-delivery %s ms while a receiver hangs%n", latencies);
    assertThat(latencies).as("ms from each push to its delivery").allMatch(ms -> ms < UNSTALLED_MS);
    assertThat(hung).as("the hanging requests were still pending throughout (no retry yet)").hasSize(2);
    hanging.close();
    ok.close();
  }

  @Test
  void theBodyIsTheStoredPayloadVerbatim() throws Exception {
    List<Received> seen = new CopyOnWriteArrayList<>();
    var server = receiver(seen, (req, n) -> req.response().setStatusCode(200).end());
    String q = "wh-raw-" + UUID.randomUUID();
    endpoint(q, "http://127.0.0.1:" + server.actualPort() + "/hook", 3, 100, 2000);
    String payload = "{\"amount\":12345678901234567.89,\"e\":1.5e3,\"s\":\"\\u00e9\"}";
    node.post("/api/v1/push", "{\"items\":[{\"queue\":\"" + q + "\",\"payload\":" + payload + "}]}");
    Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> seen.size() >= 1);
    assertThat(seen.get(0).body()).isEqualTo(payload);
    server.close();
  }

  @Test
  void onlyHttpUrlsAreEverCalled() {
    assertThat(DeliveryVerticle.allowedUrl("https://example.test/h")).isTrue();
    assertThat(DeliveryVerticle.allowedUrl("http://127.0.0.1:8080/h")).isTrue();
    assertThat(DeliveryVerticle.allowedUrl("ftp://example.test/h")).isFalse();
    assertThat(DeliveryVerticle.allowedUrl("file:///etc/passwd")).isFalse();
    assertThat(DeliveryVerticle.allowedUrl("gopher://x")).isFalse();
    assertThat(DeliveryVerticle.allowedUrl("not a url")).isFalse();
  }
}
