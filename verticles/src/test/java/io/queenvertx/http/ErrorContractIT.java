package io.queenvertx.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The parts of shared/seeds/status-codes-and-errors.txt that need no engine, over real HTTP. */
class ErrorContractIT {
  @NodeFixture(env = {"QUEEN_MAX_BODY_BYTES=1024"})
  static TestNode node;

  @Test
  void unknownApiPathIs404NoSuchRoute() {
    var r = node.get("/api/v1/does-not-exist");
    assertThat(r.status()).isEqualTo(404);
    assertThat(r.header("content-type")).startsWith("application/json");
    assertThat(r.json().getMap()).containsExactlyInAnyOrderEntriesOf(
        Map.of("error", "Not Found", "code", "no_such_route"));
    assertThat(node.get("/api").json().getString("code")).isEqualTo("no_such_route");
    assertThat(node.get("/auth/whatever").json().getString("code")).isEqualTo("no_such_route");
    // Queen 2's streams API is not offered: a 2.x client gets the JSON 404, not the dashboard's page
    var streams = node.get("/streams/v1/streams");
    assertThat(streams.status()).isEqualTo(404);
    assertThat(streams.json().getString("code")).isEqualTo("no_such_route");
  }

  @Test
  void aBodyOverTheLimitOnTheWebhookApiIs413InItsOwnEnvelope() {
    var r = node.post("/v1/endpoints", "{\"url\":\"" + "x".repeat(4096) + "\"}");
    assertThat(r.status()).isEqualTo(413);
    assertThat(r.header("content-type")).startsWith("application/json");
    assertThat(r.json().getJsonObject("error").getString("code")).isEqualTo("PAYLOAD_TOO_LARGE");
    assertThat(r.json().getJsonObject("meta").getString("request_id")).isEqualTo(r.header("X-Request-Id"));
    // Queen's routes keep the body-limit layer's plain 413
    var q = node.post("/api/v1/push", "{\"items\":[{\"payload\":\"" + "x".repeat(4096) + "\"}]}");
    assertThat(q.status()).isEqualTo(413);
    assertThat(q.header("content-type")).startsWith("text/plain");
  }

  @Test
  void anyNonGetMethodReachingTheFallbackIs404NoSuchRoute() {
    var r = node.post("/not-api-at-all", "{}");
    assertThat(r.status()).isEqualTo(404);
    assertThat(r.json().getString("code")).isEqualTo("no_such_route");
    var d = node.delete("/somewhere");
    assertThat(d.status()).isEqualTo(404);
    assertThat(d.json().getString("code")).isEqualTo("no_such_route");
  }

  @Test
  void anExistingPathWithAnotherMethodIsTheJson404NotA405() {
    var r = node.post("/health", "{}");
    assertThat(r.status()).isEqualTo(404);
    assertThat(r.json().getString("code")).isEqualTo("no_such_route");
  }

  @Test
  void aTrailingSlashDoesNotMatchARoute() {
    var r = node.get("/api/v1/resources/queues/");
    assertThat(r.status()).isEqualTo(404);
    assertThat(r.json().getString("code")).isEqualTo("no_such_route");
  }

  @Test
  void aNonApiGetIsServedByTheDashboardApp() {
    var r = node.get("/some/page");
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.header("content-type")).startsWith("text/html");
    assertThat(r.body()).contains("<title>Queen");
  }

  @Test
  void healthIs200WithItsOwnDocument() {
    var r = node.get("/health");
    assertThat(r.status()).isEqualTo(200);
    var j = r.json();
    assertThat(j.getString("status")).isEqualTo("healthy");
    assertThat(j.getString("database")).isEqualTo("connected");
    assertThat(j.getString("version")).isNotBlank();
    assertThat(j.containsKey("error")).isFalse();
  }

  /**
   * A HEAD of /health (a load balancer's probe) is the health check without its body: GET's status and JSON content
   * type, no body bytes on the wire; not the dashboard's page, which would answer 200 whatever the database.
   */
  @Test
  void headOfHealthAnswers() throws Exception {
    var get = node.get("/health");
    assertThat(get.status()).isEqualTo(200);
    String raw;
    try (var s = new java.net.Socket("127.0.0.1", node.node().config().http().port())) {
      s.setSoTimeout(10_000);
      s.getOutputStream().write("HEAD /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
          .getBytes(java.nio.charset.StandardCharsets.US_ASCII));
      raw = new String(s.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    }
    int end = raw.indexOf("\r\n\r\n");
    assertThat(end).as("a complete response head: %s", raw).isPositive();
    String head = raw.substring(0, end).toLowerCase(java.util.Locale.ROOT);
    assertThat(head).startsWith("http/1.1 200 ").contains("content-type: " + get.header("content-type"));
    assertThat(get.header("content-type")).startsWith("application/json");
    assertThat(raw.substring(end + 4)).as("no body after the head").isEmpty();
  }
}
