package io.queenvertx.security;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.TestNode.Reply;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpRequest;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 34 item 8: with auth off (the default) a web page on another site must not drive the broker. A body not
 * declared as JSON is 415 (a cross-site form or {@code text/plain} fetch can send no other kind without a preflight
 * the broker never grants); a foreign {@code Origin}, or a {@code Sec-Fetch-Site: cross-site} request without one (an
 * {@code <img>} on a pop URL), is 403 on every route that changes state or consumes; the dashboard's pages stay
 * reachable from links. The side effects prove no refused request ran. Requests are sent as a browser would send them
 * (a plain {@code text/plain} POST and an image GET cannot be told from these by the broker).
 */
class CrossSiteIT {
  static final String EVIL = "https://evil.example";

  @NodeFixture(freshDatabase = true)
  static TestNode node;

  @AfterAll
  static void popMaintenanceOff() {
    node.post("/api/v1/system/maintenance/pop", new JsonObject().put("enabled", false));
  }

  static Map<String, String> headers(String... kv) {
    Map<String, String> h = new HashMap<>();
    for (int i = 0; i < kv.length; i += 2) h.put(kv[i], kv[i + 1]);
    return h;
  }

  static String ownOrigin() {
    return node.baseUrl();
  }

  static boolean popMaintenance() {
    return node.get("/api/v1/system/maintenance/pop").json().getBoolean("popMaintenanceMode");
  }

  static String pushBody(String queue) {
    return new JsonObject().put("items", new io.vertx.core.json.JsonArray().add(Wire.item(queue, null,
        new JsonObject().put("n", 1), null))).encode();
  }

  /** A pop that takes nothing: 204 when the queue holds nothing visible. */
  static int popStatus(String queue) {
    return Wire.pop(node, queue, "wait=false").status();
  }

  @Test
  void aBodyNotDeclaredAsJsonIs415AndChangesNothing() {
    String on = new JsonObject().put("enabled", true).encode();
    for (String type : new String[] {"text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x", "application/json; charset=iso-8859-1", "application/jsonp"}) {
      Reply r = node.post("/api/v1/system/maintenance/pop", on, headers("Content-Type", type));
      assertThat(r.status()).as(type + ": " + r.body()).isEqualTo(415);
      assertThat(r.json().getString("error")).as(type).contains("Content-Type");
    }
    Reply none = node.send(HttpRequest.newBuilder(URI.create(node.baseUrl() + "/api/v1/system/maintenance/pop"))
        .POST(HttpRequest.BodyPublishers.ofString(on)), Map.of());
    assertThat(none.status()).as("a body without any Content-Type: " + none.body()).isEqualTo(415);
    assertThat(popMaintenance()).as("no refused request switched pop maintenance on").isFalse();

    String queue = Wire.queue("xsite-415");
    assertThat(node.post("/api/v1/push", pushBody(queue), headers("Content-Type", "text/plain")).status())
        .isEqualTo(415);
    assertThat(node.post("/api/v1/configure", new JsonObject().put("queue", queue), headers("Content-Type",
        "text/plain")).status()).isEqualTo(415);
    assertThat(node.get("/api/v1/resources/queues/" + queue).status()).as("nothing was configured or pushed")
        .isEqualTo(404);

    // what Queen's clients and the dashboard send is accepted: JSON with parameters, +json types, no type without body
    assertThat(node.post("/api/v1/push", pushBody(queue), headers("Content-Type", "application/json; charset=utf-8"))
        .status()).isEqualTo(201);
    assertThat(node.post("/api/v1/push", pushBody(queue), headers("Content-Type", "application/vnd.queen+json"))
        .status()).isEqualTo(201);
    Reply bodiless = node.send(HttpRequest.newBuilder(URI.create(node.baseUrl() + "/api/v1/stats/refresh"))
        .POST(HttpRequest.BodyPublishers.noBody()), Map.of());
    assertThat(bodiless.status()).as("an empty body needs no Content-Type: " + bodiless.body()).isEqualTo(200);
  }

  @Test
  void theWebhookApiRefusesANonJsonBodyInItsOwnDialect() {
    Reply r = node.post("/v1/endpoints", "{}", headers("Content-Type", "text/plain"));
    assertThat(r.status()).isEqualTo(415);
    assertThat(r.json().getJsonObject("error").getString("code")).isEqualTo("INVALID_REQUEST");
    assertThat(r.json().getJsonObject("error").getString("message")).contains("Content-Type");
    assertThat(r.json().getJsonObject("meta").getString("request_id")).isNotBlank();
    Reply foreign = node.post("/v1/endpoints", "{}", headers("Origin", EVIL));
    assertThat(foreign.status()).isEqualTo(403);
    assertThat(foreign.json().getJsonObject("error").getString("code")).isEqualTo("FORBIDDEN");
  }

  @Test
  void aForeignOriginIsRefusedOnEveryRouteThatChangesState() {
    String queue = Wire.queue("xsite-origin");
    Map<String, String> evil = headers("Origin", EVIL);
    Reply maintenance = node.post("/api/v1/system/maintenance/pop", new JsonObject().put("enabled", true), evil);
    assertThat(maintenance.status()).isEqualTo(403);
    assertThat(maintenance.json().getString("error")).contains("Origin").contains(EVIL)
        .contains("QUEEN_ALLOWED_ORIGINS");
    assertThat(popMaintenance()).isFalse();
    assertThat(node.post("/api/v1/push", pushBody(queue), evil).status()).isEqualTo(403);
    assertThat(node.post("/api/v1/configure", new JsonObject().put("queue", queue), evil).status()).isEqualTo(403);
    assertThat(node.post("/api/v1/dlq/redrive", new JsonObject().put("queue", queue), evil).status()).isEqualTo(403);
    assertThat(node.post("/api/v1/push", pushBody(queue), headers("Origin", "null")).status())
        .as("a sandboxed page's opaque origin").isEqualTo(403);
    assertThat(node.post("/api/v1/push", pushBody(queue), headers("Origin", "http://localhost:1")).status())
        .as("another port is another origin").isEqualTo(403);
    assertThat(node.get("/api/v1/resources/queues/" + queue).status()).isEqualTo(404);

    // the broker's own pages send their own origin: same scheme, host and port as the Host header
    assertThat(node.post("/api/v1/push", pushBody(queue), headers("Origin", ownOrigin())).status()).isEqualTo(201);
    assertThat(node.delete("/api/v1/resources/queues/" + queue, evil).status()).isEqualTo(403);
    assertThat(node.get("/api/v1/resources/queues/" + queue).status()).isEqualTo(200);
    assertThat(node.delete("/api/v1/resources/queues/" + queue, headers("Origin", ownOrigin())).status())
        .isEqualTo(200);
  }

  @Test
  void aCrossSiteGetThatConsumesIsRefusedAndLinksToThePagesStillWork() {
    String queue = Wire.queue("xsite-img");
    Wire.pushOne(node, queue, null, new JsonObject().put("n", 1), null);
    Reply img = node.get("/api/v1/pop/queue/" + queue + "?autoAck=true&wait=false",
        headers("Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "no-cors", "Sec-Fetch-Dest", "image"));
    assertThat(img.status()).isEqualTo(403);
    assertThat(img.json().getString("error")).contains("Sec-Fetch-Site").contains("QUEEN_ALLOWED_ORIGINS");
    assertThat(node.get("/api/v1/pop/queue/" + queue + "?autoAck=true&wait=false",
        headers("Sec-Fetch-Site", "same-site")).status()).as("a sibling subdomain's image").isEqualTo(403);
    assertThat(node.get("/api/v1/status", headers("Sec-Fetch-Site", "cross-site")).status()).isEqualTo(403);

    for (String page : new String[] {"/", "/docs", "/health", "/metrics", "/openapi.json"}) {
      assertThat(node.get(page, headers("Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "navigate")).status())
          .as("a link to " + page + " from another site").isEqualTo(200);
    }
    Reply own = node.get("/api/v1/pop/queue/" + queue + "?autoAck=true&wait=false",
        headers("Sec-Fetch-Site", "same-origin"));
    assertThat(own.status()).as("the message was still there for the dashboard's own call").isEqualTo(200);
    assertThat(popStatus(queue)).isEqualTo(204);
  }

  @Test
  void allowedOriginsAndHostsAreSettingsAndHoldWithJwtOn() {
    String secret = "cross-site-secret-0123456789abcdef";
    try (var n = TestNode.start(Map.of(
        "QUEEN_ALLOWED_ORIGINS", "https://App.Example.com:443, http://tools.example:8080",
        "QUEEN_ALLOWED_HOSTS", "localhost,queen.example:6632", "JWT_ENABLED", "true", "JWT_SECRET", secret))) {
      int port = n.port();
      long now = System.currentTimeMillis() / 1000;
      String token = "Bearer " + RawHttp.hs256(secret, new JsonObject().put("sub", "svc").put("role", "admin")
          .put("exp", now + 600));
      String queue = Wire.queue("xsite-allowed");
      String body = pushBody(queue);

      var wrongHost = RawHttp.send(port, "POST", "/api/v1/push", Map.of("Authorization", token), body);
      assertThat(wrongHost.status()).as("Host 127.0.0.1 is not on the list").isEqualTo(421);
      assertThat(wrongHost.error()).contains("Host").contains("QUEEN_ALLOWED_HOSTS");
      assertThat(RawHttp.send(port, "GET", "/health", Map.of("Host", "queen.example:1"), null).status())
          .as("an entry with a port accepts that port only").isEqualTo(421);
      assertThat(RawHttp.send(port, "GET", "/health", Map.of("Host", "queen.example:6632"), null).status())
          .isEqualTo(200);

      Map<String, String> localhost = new HashMap<>(Map.of("Host", "localhost:" + port, "Authorization", token));
      localhost.put("Origin", EVIL);
      var refused = RawHttp.send(port, "POST", "/api/v1/push", localhost, body);
      assertThat(refused.status()).isEqualTo(403);
      localhost.remove("Authorization");
      assertThat(RawHttp.send(port, "POST", "/api/v1/push", localhost, body).error())
          .as("the cross-site refusal comes before the token is even asked for").contains("Origin");
      localhost.put("Authorization", token);
      for (String allowed : new String[] {"https://app.example.com", "http://tools.example:8080",
          "http://localhost:" + port}) {
        localhost.put("Origin", allowed);
        assertThat(RawHttp.send(port, "POST", "/api/v1/push", localhost, body).status()).as(allowed)
            .isEqualTo(201);
      }
      localhost.put("Origin", "http://tools.example");
      assertThat(RawHttp.send(port, "POST", "/api/v1/push", localhost, body).status())
          .as("the listed origin's port only").isEqualTo(403);
    }
    try (var any = TestNode.start(Map.of("QUEEN_ALLOWED_ORIGINS", "*"))) {
      assertThat(any.post("/api/v1/push", pushBody(Wire.queue("xsite-any")), headers("Origin", EVIL)).status())
          .as("* accepts every origin").isEqualTo(201);
    }
  }
}
