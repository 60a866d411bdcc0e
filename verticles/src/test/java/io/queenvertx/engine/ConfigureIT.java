package io.queenvertx.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.TestNode.Reply;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

/** POST /api/v1/configure (API.md §5.2): defaults, merge, null reset, replace, and the 400s. */
class ConfigureIT {
  /** The 19 echoed option keys with the values a create, a null or a replace lands on. */
  static final JsonObject DEFAULTS = new JsonObject()
      .put("priority", 0).put("leaseTime", 300).put("retryLimit", 3).put("retryDelay", 1000).put("maxSize", 0)
      .put("ttl", 3600).put("deadLetterQueue", true).put("dlqAfterMaxRetries", true).put("delayedProcessing", 0)
      .put("windowBuffer", 0).put("retentionSeconds", 0).put("completedRetentionSeconds", 0)
      .put("retentionEnabled", false).put("encryptionEnabled", false).put("maxWaitTimeSeconds", 0)
      .put("minPopWaitTime", 0).put("dedupWindowSeconds", 3600).put("retentionSinkHold", "")
      .put("retentionSinkHoldMaxSeconds", 604800);

  @NodeFixture
  static TestNode node;

  @Test
  void configuringANewQueueEchoesEveryDefault() {
    String q = Wire.queue("cfg-defaults");
    Reply r = node.post("/api/v1/configure", new JsonObject().put("queue", q));
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.header("content-type")).startsWith("application/json");
    JsonObject j = r.json();
    assertThat(j.getBoolean("configured")).isTrue();
    assertThat(j.getString("queueId")).matches(PushIT.UUID_RE);
    assertThat(j.containsKey("partitionId")).isTrue();
    assertThat(j.getValue("partitionId")).isNull();
    assertThat(j.getString("queue")).isEqualTo(q);
    assertThat(j.getString("storage")).isEqualTo("segments");
    assertThat(j.getJsonObject("options")).isEqualTo(DEFAULTS);
    assertThat(j.getJsonObject("options").size()).isEqualTo(19);
    assertThat(Wire.count("SELECT lease_time FROM queen.queues WHERE name = '" + q + "'")).isEqualTo(300);
    assertThat(j.getString("queueId"))
        .isEqualTo(Wire.rows("SELECT id::text AS id FROM queen.queues WHERE name = '" + q + "'").get(0).get("id"));
  }

  @Test
  void mergeKeepsEveryKeyTheRequestLeftOut() {
    String q = Wire.queue("cfg-merge");
    Wire.configure(node, body(q, new JsonObject().put("retryLimit", 5).put("ttl", 99)));
    JsonObject j = Wire.configure(node, body(q, new JsonObject().put("leaseTime", 120)));
    assertThat(j.getJsonObject("options")).isEqualTo(DEFAULTS.copy().put("retryLimit", 5).put("ttl", 99)
        .put("leaseTime", 120));
    JsonObject same = Wire.configure(node, new JsonObject().put("queue", q).put("mode", "merge"));
    assertThat(same.getJsonObject("options").getInteger("retryLimit")).isEqualTo(5);
  }

  @Test
  void anExplicitNullResetsAKeyToItsDefault() {
    String q = Wire.queue("cfg-null");
    Wire.configure(node, body(q, new JsonObject().put("retryLimit", 5).put("leaseTime", 42)));
    JsonObject j = Wire.configure(node, body(q, new JsonObject().putNull("retryLimit")));
    assertThat(j.getJsonObject("options").getInteger("retryLimit")).isEqualTo(3);
    assertThat(j.getJsonObject("options").getInteger("leaseTime")).as("untouched").isEqualTo(42);
  }

  @Test
  void replaceModeResetsEveryKeyTheRequestLeftOut() {
    String q = Wire.queue("cfg-replace");
    Wire.configure(node, body(q, new JsonObject().put("retryLimit", 5).put("leaseTime", 120)
        .put("deadLetterQueue", false)));
    JsonObject j = Wire.configure(node, body(q, new JsonObject().put("ttl", 100)).put("mode", "replace"));
    assertThat(j.getJsonObject("options")).isEqualTo(DEFAULTS.copy().put("ttl", 100));
  }

  @Test
  void optionsMayBeSentAtTheTopLevel() {
    String q = Wire.queue("cfg-top");
    JsonObject j = Wire.configure(node, new JsonObject().put("queue", q).put("retryLimit", 7)
        .put("dedupWindowSeconds", 600));
    assertThat(j.getJsonObject("options").getInteger("retryLimit")).isEqualTo(7);
    assertThat(j.getJsonObject("options").getInteger("dedupWindowSeconds")).isEqualTo(600);
  }

  @Test
  void aTopLevelNamespaceAndTaskAreStoredButANullOneIsIgnored() {
    String q = Wire.queue("cfg-ns");
    JsonObject j = Wire.configure(node, new JsonObject().put("queue", q).put("namespace", "billing")
        .put("task", "invoice").put("options", new JsonObject().put("priority", 2)));
    assertThat(j.getString("namespace")).isEqualTo("billing");
    assertThat(j.getString("task")).isEqualTo("invoice");
    JsonObject again = Wire.configure(node, new JsonObject().put("queue", q).putNull("namespace")
        .put("options", new JsonObject()));
    assertThat(again.getString("namespace")).isEqualTo("billing");
  }

  @Test
  void aMissingOrNonStringQueueIs400QueueIsRequired() {
    for (String body : new String[] {"{}", "{\"queue\":5}", "{\"queue\":null,\"options\":{}}"}) {
      Reply r = node.post("/api/v1/configure", body);
      assertThat(r.status()).as(body).isEqualTo(400);
      assertThat(r.json()).isEqualTo(io.queenvertx.testing.Wire.error(400, "queue is required"));
    }
  }

  @Test
  void anUnknownModeIs400WithTheExactMessageAndWritesNothing() {
    String q = Wire.queue("cfg-mode");
    Reply r = node.post("/api/v1/configure", new JsonObject().put("queue", q).put("mode", "upsert"));
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.json()).isEqualTo(io.queenvertx.testing.Wire.error(400, "mode must be \"merge\" or \"replace\", got \"upsert\""));
    Reply n = node.post("/api/v1/configure", new JsonObject().put("queue", q).put("mode", 3));
    assertThat(n.status()).isEqualTo(400);
    assertThat(n.json().getString("error")).isEqualTo("mode must be \"merge\" or \"replace\", got 3");
    assertThat(Wire.queueRows(q)).isZero();
  }

  @Test
  void anInvalidRetentionSinkHoldIs400NamingTheKey() {
    String q = Wire.queue("cfg-sink");
    Reply r = node.post("/api/v1/configure", body(q, new JsonObject().put("retentionSinkHold", "no spaces!")));
    assertThat(r.status()).isEqualTo(400);
    JsonObject j = r.json();
    assertThat(j.getString("invalid")).isEqualTo("retentionSinkHold");
    assertThat(j.getString("error")).startsWith("retentionSinkHold must match");
    assertThat(Wire.queueRows(q)).isZero();
    JsonObject ok = Wire.configure(node, body(q, new JsonObject().put("retentionSinkHold", "s3.archive-1")));
    assertThat(ok.getJsonObject("options").getString("retentionSinkHold")).isEqualTo("s3.archive-1");
  }

  @Test
  void invalidJsonIs400BadBody() {
    Reply r = node.post("/api/v1/configure", "{\"queue\":");
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.json().getMap()).containsOnlyKeys("error", "code");
    assertThat(r.json().getString("error")).startsWith("bad body: ");
  }

  @Test
  void configuringAQueueThatAPushCreatedKeepsItsMessages() {
    String q = Wire.queue("cfg-after-push");
    Wire.pushQueued(node, q, null, new JsonObject().put("k", 1), "kept");
    JsonObject j = Wire.configure(node, body(q, new JsonObject().put("retryLimit", 9)));
    assertThat(j.getJsonObject("options").getInteger("retryLimit")).isEqualTo(9);
    assertThat(Wire.messages(Wire.popSome(node, q, "batch=5"))).extracting(m -> m.getString("transactionId"))
        .containsExactly("kept");
  }

  @Test
  void aNewLeaseTimeReachesTheNextPopOfAQueueInUse() {
    String q = Wire.queue("cfg-lease-cache");
    Wire.pushQueued(node, q, null, 1, "c0");
    JsonObject p = Wire.popSome(node, q, "batch=1"); // the node now knows the push-created lease time, 60 s
    String pid = p.getString("partitionId");
    assertThat(leaseSpan(pid)).isEqualTo(60);
    Wire.ackOne(node, Wire.ack("c0", pid, "completed", p.getString("leaseId")));
    Wire.configure(node, body(q, new JsonObject().put("leaseTime", 777)));
    Wire.pushQueued(node, q, null, 2, "c1");
    Wire.popSome(node, q, "batch=1");
    assertThat(leaseSpan(pid)).as("configure drops the cached lease time").isEqualTo(777);
  }

  @Test
  void turningDedupOffOnAQueueInUseTakesEffectAtOnce() {
    String q = Wire.queue("cfg-dedup-off");
    Wire.pushQueued(node, q, null, 1, "same");
    assertThat(Wire.push(node, Wire.item(q, null, 2, "same")).array().getJsonObject(0).getString("status"))
        .isEqualTo("duplicate");
    Wire.configure(node, body(q, new JsonObject().put("dedupWindowSeconds", 0)));
    assertThat(Wire.push(node, Wire.item(q, null, 3, "same")).array().getJsonObject(0).getString("status"))
        .isEqualTo("queued");
  }

  @Test
  void delayedProcessingHidesANewMessageUntilItIsOldEnough() throws Exception {
    String q = Wire.queue("cfg-delayed");
    Wire.configure(node, body(q, new JsonObject().put("delayedProcessing", 2)));
    long pushed = System.nanoTime();
    Wire.pushQueued(node, q, null, 1, "later");
    assertThat(Wire.pop(node, q, "batch=1").status()).as("a 2 s old-enough rule hides a fresh message")
        .isEqualTo(204);
    // the message shows once it is 2 s old, not before: poll until a pop delivers it, then check when that was
    var delivered = new java.util.concurrent.atomic.AtomicReference<TestNode.Reply>();
    org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(8))
        .pollInterval(java.time.Duration.ofMillis(100))
        .until(() -> {
          Reply r = Wire.pop(node, q, "batch=1");
          delivered.set(r);
          return r.status() == 200;
        });
    long shownAfterMs = (System.nanoTime() - pushed) / 1_000_000;
    assertThat(shownAfterMs).as("hidden until it was 2 s old").isGreaterThanOrEqualTo(1900);
    assertThat(Wire.messages(delivered.get().json())).extracting(m -> m.getString("transactionId"))
        .containsExactly("later");
  }

  private static long leaseSpan(String pid) {
    return Wire.count("SELECT round(extract(epoch FROM lease_expires_at - lease_acquired_at))::bigint "
        + "FROM queen.log_consumers WHERE partition_id = '" + pid + "' AND consumer_group = '__QUEUE_MODE__'");
  }

  private static JsonObject body(String q, JsonObject options) {
    return new JsonObject().put("queue", q).put("options", options);
  }
}
