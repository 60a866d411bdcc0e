package io.queenvertx.timers;

import static io.queenvertx.timers.TimerIT.arm;
import static io.queenvertx.timers.TimerIT.drain;
import static io.queenvertx.timers.TimerIT.schedule;
import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.kernel.Config;
import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestDatabase;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * How the timer sweep wakes and what a fire looks like from outside: woken at once by a schedule on its node (its
 * poll is a minute here), waking a parked long poll like a push, deduplicated against the log, encrypted for an
 * encrypted queue, and the Prometheus series following the timer table (pending, due, the timer lag) and the fires.
 */
class TimerFiringIT {
  static final String KEY = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

  @NodeFixture(env = {"QUEEN_TIMER_POLL_MS=60000", "POP_WAIT_INITIAL_INTERVAL_MS=30000",
      "POP_WAIT_MAX_INTERVAL_MS=30000", "QUEEN_ENCRYPTION_KEY=" + KEY})
  static TestNode node;

  static List<JsonObject> awaitMessages(TestNode n, String q, int count, Duration within) {
    List<JsonObject> got = new ArrayList<>();
    Awaitility.await().atMost(within).pollInterval(Duration.ofMillis(50)).until(() -> {
      got.addAll(drain(n, q));
      return got.size() >= count;
    });
    return got;
  }

  @Test
  void aScheduleWakesTheSweepLongBeforeItsPoll() {
    String q = Wire.queue("tmf-wake");
    long t0 = System.nanoTime();
    arm(node, schedule(q, "k", 300, "soon"));
    // the sweep polls once a minute: only the local wake-up fires this within seconds
    assertThat(awaitMessages(node, q, 1, Duration.ofSeconds(10))).hasSize(1);
    assertThat((System.nanoTime() - t0) / 1_000_000).as("ms to the fire").isLessThan(5000);
  }

  @Test
  void aFireWakesAParkedLongPoll() throws Exception {
    String q = Wire.queue("tmf-landed");
    double parked = node.metric("queen_parked_long_polls");
    var popped = CompletableFuture.supplyAsync(() -> {
      var r = node.get("/api/v1/pop/queue/" + q + "?wait=true&timeout=25000");
      return new Object[] {r, System.nanoTime()};
    });
    Awaitility.await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20))
        .until(() -> popped.isDone() || node.metric("queen_parked_long_polls") > parked);
    assertThat(popped).as("parked").isNotDone();
    var armed = arm(node, schedule(q, "k", 200, new JsonObject().put("v", 7)));
    long armedAt = System.nanoTime();
    Object[] res = popped.get();
    var reply = (TestNode.Reply) res[0];
    assertThat(reply.status()).as(reply.body()).isEqualTo(200);
    assertThat(reply.json().getJsonArray("messages").getJsonObject(0).getString("id"))
        .isEqualTo(armed.getJsonObject(0).getString("messageId"));
    // the pop's own re-poll is 30 s away: the fire's LANDED announcement woke it
    assertThat(((long) res[1] - armedAt) / 1_000_000).as("ms from schedule to delivery").isLessThan(8000);
  }

  @Test
  void aTimerWhoseTransactionIsAlreadyInTheLogIsDeduplicated() {
    String q = Wire.queue("tmf-dup");
    Wire.configure(node, new JsonObject().put("queue", q).put("options",
        new JsonObject().put("dedupWindowSeconds", 600)));
    Wire.pushOne(node, q, "Default", new JsonObject().put("by", "push"), "txn-" + q + "-k");
    double dupBefore = node.metric("queen_timers_fired_total{result=\"duplicate\"}");
    arm(node, schedule(q, "k", 0, new JsonObject().put("by", "timer")), schedule(q, "other", 0, "second"));
    List<JsonObject> got = awaitMessages(node, q, 2, Duration.ofSeconds(10));
    Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> TestDatabase.queryLong(Wire.db(),
        "SELECT count(*) FROM queen.timers WHERE queue = '" + q + "'") == 0);
    got.addAll(drain(node, q));
    assertThat(got).extracting(m -> m.getString("transactionId"))
        .containsExactlyInAnyOrder("txn-" + q + "-k", "txn-" + q + "-other");
    assertThat(got.stream().filter(m -> m.getString("transactionId").endsWith("-k")).findFirst().orElseThrow()
        .getJsonObject("data").getString("by")).isEqualTo("push");
    assertThat(node.metric("queen_timers_fired_total{result=\"duplicate\"}")).isEqualTo(dupBefore + 1);
  }

  @Test
  void anEncryptedQueuesTimerWaitsEncryptedAndIsDeliveredInClear() {
    String q = Wire.queue("tmf-enc");
    Wire.configure(node, new JsonObject().put("queue", q).put("options",
        new JsonObject().put("encryptionEnabled", true)));
    arm(node, schedule(q, "k", 3_600_000, new JsonObject().put("secret", "s3")));
    var peek = node.get("/api/v1/timers/" + q + "/k").json();
    assertThat(peek.getBoolean("encrypted")).isTrue();
    String stored = TestDatabase.queryString(Wire.db(),
        "SELECT convert_from(payload, 'UTF8') FROM queen.timers WHERE queue = '" + q + "'");
    assertThat(stored).doesNotContain("s3").contains("authTag");
    arm(node, schedule(q, "k", 0, new JsonObject().put("secret", "s3")));
    List<JsonObject> got = awaitMessages(node, q, 1, Duration.ofSeconds(10));
    assertThat(got.get(0).getJsonObject("data").getString("secret")).isEqualTo("s3");
  }

  @Test
  void theTimerSeriesFollowTheTableAndTheFires() {
    Config.Database db = TestDatabase.get().fresh();
    String q = Wire.queue("tmf-metrics");
    try (TestNode n = TestNode.start(Map.of("QUEEN_TIMER_POLL_MS", "100"), db)) {
      assertThat(n.post("/api/v1/system/maintenance", new JsonObject().put("enabled", true)).status())
          .isEqualTo(200);
      arm(n, schedule(q, "late", -5000, "x"), schedule(q, "later", 3_600_000, "y"));
      assertThat(n.metric("queen_timers_scheduled_total")).isEqualTo(2.0);
      // push maintenance holds the fire; the probe still reads the table
      Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> n.metric("queen_timers_pending") == 2.0
          && n.metric("queen_timers_due") == 1.0 && n.metric("queen_timers_oldest_late_seconds") >= 5.0);
      assertThat(n.metric("queen_timers_fired_total{result=\"fired\"}")).isZero();
      assertThat(n.post("/api/v1/system/maintenance", new JsonObject().put("enabled", false)).status())
          .isEqualTo(200);
      Map<String, Double> seen = new HashMap<>();
      Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> {
        Map<String, Double> s = scrape(n);
        s.forEach((k, v) -> seen.merge(k, v, Math::max));
        return s.get("queen_timers_fired_total{result=\"fired\"}") == 1.0 && s.get("queen_timers_pending") == 1.0
            && s.get("queen_timers_due") == 0.0 && s.get("queen_timers_oldest_late_seconds") == 0.0;
      });
      assertThat(seen.get("queen_timers_delivery_lateness_max_seconds")).as("the fired timer was 5 s late")
          .isGreaterThanOrEqualTo(5.0);
      assertThat(n.delete("/api/v1/timers/" + q + "/later").json().getString("status")).isEqualTo("cancelled");
      assertThat(n.metric("queen_timers_cancelled_total")).isEqualTo(1.0);
    }
  }

  @Test
  void aTenantSeesAndFiresOnlyItsOwnTimers() {
    String q = Wire.queue("tmf-tenant");
    Map<String, String> ta = Map.of("x-queen-tenant", java.util.UUID.randomUUID().toString());
    Map<String, String> tb = Map.of("x-queen-tenant", java.util.UUID.randomUUID().toString());
    try (TestNode n = TestNode.start(Map.of("QUEEN_TENANCY_HEADER", "true", "QUEEN_TIMER_POLL_MS", "100"))) {
      var body = new JsonObject().put("operations", new io.vertx.core.json.JsonArray()
          .add(schedule(q, "k", 3_600_000, "a's")));
      assertThat(n.post("/api/v1/timers", body, ta).status()).isEqualTo(200);
      assertThat(n.get("/api/v1/timers/" + q + "/k", tb).json().getBoolean("found")).isFalse();
      assertThat(n.get("/api/v1/timers/" + q, tb).json().getJsonArray("rows")).isEmpty();
      assertThat(n.delete("/api/v1/timers/" + q + "/k", tb).json().getString("status")).isEqualTo("absent");
      assertThat(n.get("/api/v1/timers/" + q + "/k", ta).json().getBoolean("found")).as("b's cancel left it")
          .isTrue();
      var now = new JsonObject().put("operations", new io.vertx.core.json.JsonArray().add(schedule(q, "k", 0, "a's")));
      assertThat(n.post("/api/v1/timers", now, ta).status()).isEqualTo(200);
      Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> TestDatabase.queryLong(Wire.db(),
          "SELECT count(*) FROM queen.timers WHERE queue = '" + q + "'") == 0);
      assertThat(n.get("/api/v1/pop/queue/" + q + "?batch=10&autoAck=true", tb).status()).as("b's queue")
          .isEqualTo(204);
      var popped = n.get("/api/v1/pop/queue/" + q + "?batch=10&autoAck=true", ta);
      assertThat(popped.status()).as("a's queue").isEqualTo(200);
      assertThat(popped.json().getJsonArray("messages").getJsonObject(0).getString("data")).isEqualTo("a's");
    }
  }

  /** Every {@code queen_timers_*} sample of one scrape. */
  static Map<String, Double> scrape(TestNode n) {
    Map<String, Double> out = new HashMap<>();
    for (String line : n.get("/metrics/prometheus").body().split("\n")) {
      if (!line.startsWith("queen_timers_")) continue;
      int sp = line.lastIndexOf(' ');
      out.put(line.substring(0, sp), Double.parseDouble(line.substring(sp + 1)));
    }
    return out;
  }
}
