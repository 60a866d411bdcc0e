package io.queenvertx.security;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.TestDatabase;
import io.queenvertx.testing.TestNode;
import io.vertx.core.json.JsonObject;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 18 item 7: input the client got wrong is a 400 whose message names the field, never a 500 carrying
 * PostgreSQL's text. Each case here was a 500 before.
 */
class ClientErrorsIT {
  static TestNode node;
  static int port;

  @BeforeAll
  static void start() {
    node = TestNode.start();
    port = Integer.parseInt(node.baseUrl().substring(node.baseUrl().lastIndexOf(':') + 1));
  }

  @AfterAll
  static void stop() {
    node.close();
  }

  static String queue() {
    return "client-errors-" + UUID.randomUUID();
  }

  static void assert400(RawHttp.Reply r, String field) {
    assertThat(r.status()).as(r.body()).isEqualTo(400);
    assertThat(r.error()).as(r.body()).contains(field).doesNotContain("ERROR:");
  }

  /** A name over its limit: 413 with the 2.x code name_too_long (queen2-contract.md §1.1), naming the field. */
  static void assertNameTooLong(TestNode.Reply r, String field) {
    assertThat(r.status()).as(r.body()).isEqualTo(413);
    assertThat(r.json().getString("error")).as(r.body()).contains(field);
    assertThat(r.json().getString("code")).isEqualTo("name_too_long");
  }

  static void assert400(TestNode.Reply r, String field) {
    assertThat(r.status()).as(r.body()).isEqualTo(400);
    assertThat(r.json().getString("error")).as(r.body()).contains(field).doesNotContain("ERROR:");
  }

  @Test
  void aNulInThePathOrTheQueryIs400() {
    assert400(RawHttp.send(port, "GET", "/api/v1/resources/queues/%00", Map.of(), null), "path");
    assert400(RawHttp.send(port, "GET", "/api/v1/resources/queues/a%00b", Map.of(), null), "path");
    assert400(RawHttp.send(port, "GET", "/api/v1/messages?queue=%00", Map.of(), null), "queue");
    assert400(RawHttp.send(port, "GET", "/api/v1/dlq?consumerGroup=x%00", Map.of(), null), "consumerGroup");
    assert400(RawHttp.send(port, "GET", "/api/v1/status/queues?x=%zz", Map.of(), null), "query");
  }

  @Test
  void aGarbageCursorOrTimestampOnTheListingsIs400() {
    assert400(node.get("/api/v1/messages?cursor=garbage"), "cursor");
    assert400(node.get("/api/v1/dlq?cursor=garbage"), "cursor");
    assert400(node.get("/api/v1/messages?from=yesterday-ish"), "from");
    assert400(node.get("/api/v1/dlq?to=later"), "to");
    assertThat(node.get("/api/v1/messages").status()).isEqualTo(200);
    assertThat(node.get("/api/v1/dlq").status()).isEqualTo(200);
  }

  @Test
  void configureChecksEveryOptionAgainstWhatTheSchemaAccepts() {
    String q = queue();
    assert400(node.post("/api/v1/configure", new JsonObject().put("queue", q).put("retryLimit", "three")),
        "retryLimit");
    assert400(node.post("/api/v1/configure", new JsonObject().put("queue", q)
        .put("options", new JsonObject().put("leaseTime", 99_999_999_999L))), "leaseTime");
    assert400(node.post("/api/v1/configure", new JsonObject().put("queue", q)
        .put("options", new JsonObject().put("priority", 1.5))), "priority");
    assert400(node.post("/api/v1/configure", new JsonObject().put("queue", q)
        .put("options", new JsonObject().put("ttl", true))), "ttl");
    assert400(node.post("/api/v1/configure", new JsonObject().put("queue", q)
        .put("options", new JsonObject().put("deadLetterQueue", "maybe"))), "deadLetterQueue");
    assert400(node.post("/api/v1/configure", new JsonObject().put("queue", q)
        .put("options", new JsonObject().put("retentionEnabled", 7))), "retentionEnabled");
    assert400(node.post("/api/v1/configure", new JsonObject().put("queue", q)
        .put("options", new JsonObject().put("namespace", "a\u0000b"))), "namespace");
    assertNameTooLong(node.post("/api/v1/configure", new JsonObject().put("queue", "x".repeat(256))), "queue");
    assert400(node.post("/api/v1/configure", new JsonObject().put("queue", "a\u0000b")), "queue");
    // a string the encryption flag would have read as "not true" is no longer a silent plaintext downgrade
    assert400(node.post("/api/v1/configure", new JsonObject().put("queue", q)
        .put("options", new JsonObject().put("encryptionEnabled", "true"))), "encryptionEnabled");
    assertThat(TestDatabase.queryLong(TestDatabase.get().shared(),
        "SELECT count(*) FROM queen.queues WHERE name = '" + q + "'")).as("nothing was written").isZero();
    // what PostgreSQL's casts accept keeps working: numeric strings, null for the default, 255 characters
    var ok = node.post("/api/v1/configure", new JsonObject().put("queue", q).put("options", new JsonObject()
        .put("retryLimit", "5").put("leaseTime", 120).put("ttl", null).put("deadLetterQueue", "false")));
    assertThat(ok.status()).as(ok.body()).isEqualTo(200);
    var opts = ok.json().getJsonObject("options");
    assertThat(opts.getInteger("retryLimit")).isEqualTo(5);
    assertThat(opts.getInteger("leaseTime")).isEqualTo(120);
    assertThat(opts.getInteger("ttl")).isEqualTo(3600);
    assertThat(opts.getBoolean("deadLetterQueue")).isFalse();
    assertThat(node.post("/api/v1/configure", new JsonObject().put("queue", "y".repeat(255))).status())
        .isEqualTo(200);
  }

  @Test
  void anOverlongNameToRedriveIs413NameTooLongAndBadTextIs400() {
    String huge = "q".repeat(1 << 20);
    assertNameTooLong(node.post("/api/v1/dlq/redrive", new JsonObject().put("queue", huge)), "queue");
    assertNameTooLong(node.post("/api/v1/dlq/redrive", new JsonObject().put("queue", queue()).put("partition", huge)),
        "partition");
    assertNameTooLong(node.post("/api/v1/dlq/redrive", new JsonObject().put("queue", queue())
        .put("destination", new JsonObject().put("queue", huge))), "destination.queue");
    assert400(node.post("/api/v1/dlq/redrive", new JsonObject().put("queue", "a\u0000")), "queue");
    assert400(node.post("/api/v1/dlq/redrive", new JsonObject().put("queue", queue()).put("consumerGroup", "g\u0000")),
        "consumerGroup");
  }

  @Test
  void garbageInputToTheManagementRoutesIsNeverA5xx() {
    String q = queue();
    String pid = UUID.randomUUID().toString();
    String longText = "t".repeat(5000);
    java.util.List<String> bodies = java.util.List.of("{}", "[]", "\"text\"", "null", "7",
        "{\"queue\":{}}", "{\"queue\":[]}", "{\"queue\":\"" + q + "\",\"options\":[]}",
        "{\"queue\":\"" + q + "\",\"options\":\"x\"}", "{\"queue\":\"" + q + "\",\"mode\":5}",
        "{\"queue\":\"" + q + "\",\"options\":{\"retentionSinkHold\":5}}",
        "{\"queue\":\"" + q + "\",\"options\":{\"retryLimit\":1e30}}",
        "{\"queue\":\"" + q + "\",\"options\":{\"retentionSinkHoldMaxSeconds\":\"x\"}}",
        "{\"queue\":\"" + q + "\",\"destination\":\"x\"}", "{\"queue\":\"" + q + "\",\"maxPerSecond\":\"x\"}",
        "{\"queue\":\"" + q + "\",\"limit\":1e30}", "{\"queue\":\"" + q + "\",\"partition\":\"" + longText + "\"}",
        "{\"queue\":\"" + q + "\",\"partition\":\"p\\u0000\"}");
    java.util.List<String> posts = java.util.List.of("/api/v1/configure", "/api/v1/dlq/redrive",
        "/api/v1/dlq/" + pid + "/replay", "/api/v1/dlq/x/replay", "/api/v1/messages/" + pid + "/t/retry",
        "/api/v1/dlq/redrive/" + pid + "/cancel", "/api/v1/dlq/redrive/x/cancel");
    java.util.List<String> failures = new java.util.ArrayList<>();
    for (String path : posts) {
      for (String body : bodies) {
        var r = node.post(path, body);
        if (r.status() >= 500) failures.add("POST " + path + " " + body + " -> " + r.status() + " " + r.body());
      }
    }
    for (String path : java.util.List.of("/api/v1/messages/x/y", "/api/v1/messages/" + pid + "/" + longText,
        "/api/v1/dlq/redrive/x", "/api/v1/resources/queues/" + longText, "/api/v1/messages?limit=x&offset=-5",
        "/api/v1/messages?status=whatever&partition=" + longText, "/api/v1/dlq?limit=99999999999&from=&to=",
        "/api/v1/dlq?queue=" + longText)) {
      var r = node.get(path);
      if (r.status() >= 500) failures.add("GET " + path + " -> " + r.status() + " " + r.body());
    }
    for (String path : java.util.List.of("/api/v1/messages/x/y", "/api/v1/messages/" + pid + "/" + longText,
        "/api/v1/resources/queues/" + longText, "/api/v1/dlq?queue=" + longText)) {
      var r = node.delete(path);
      if (r.status() >= 500) failures.add("DELETE " + path + " -> " + r.status() + " " + r.body());
    }
    assertThat(failures).isEmpty();
  }
}
