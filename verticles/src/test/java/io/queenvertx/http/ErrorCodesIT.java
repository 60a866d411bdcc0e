package io.queenvertx.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestDatabase;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.TestNode.Reply;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpRequest;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * Errors as the 2.x clients read them (queen2-contract.md §1.1): every error body keeps Queen's {@code error} text and
 * its status, and carries the 2.x machine {@code code}; a 503 carries {@code Retry-After}.
 */
class ErrorCodesIT {
  @NodeFixture
  static TestNode node;

  private record Case(String what, Supplier<Reply> call, int status, String errorContains, String code) {}

  @Test
  void representativeErrorsCarryTheirStatusTheirTextAndTheirCode() {
    String q = Wire.queue("codes");
    var cases = new Case[] {
        new Case("a configure without its queue", () -> node.post("/api/v1/configure", new JsonObject()), 400,
            "queue is required", "bad_request"),
        new Case("a pop body of its own keeps its keys", () -> node.get("/api/v1/pop/queue/" + q + "?conflation=true"),
            400, "conflation requires consumerGroup", "bad_request"),
        new Case("a cross-site consuming GET", () -> node.get("/api/v1/pop/queue/" + q,
            Map.of("Sec-Fetch-Site", "cross-site")), 403, "Sec-Fetch-Site", "forbidden"),
        new Case("a queue that does not exist", () -> node.get("/api/v1/resources/queues/" + q), 404,
            "Queue not found", "not_found"),
        new Case("an unknown route keeps its own code", () -> node.get("/api/v1/no-such-thing"), 404, "Not Found",
            "no_such_route"),
        new Case("a queue name over its limit", () -> node.post("/api/v1/configure",
            new JsonObject().put("queue", "n".repeat(256))), 413, "at most 255 characters", "name_too_long"),
        new Case("a partition name over its limit", () -> node.get("/api/v1/pop/queue/" + q + "/partition/"
            + "p".repeat(1025)), 413, "partition", "name_too_long"),
        new Case("a body not declared JSON", () -> node.send(HttpRequest.newBuilder(
            URI.create(node.baseUrl() + "/api/v1/configure")).POST(HttpRequest.BodyPublishers.ofString("{}"))
            .header("Content-Type", "text/plain"), Map.of()), 415, "Content-Type", "unsupported_media_type"),
    };
    for (Case c : cases) {
      Reply r = c.call().get();
      assertThat(r.status()).as("%s: %s", c.what(), r.body()).isEqualTo(c.status());
      JsonObject body = r.json();
      assertThat(body.getString("error")).as(c.what()).contains(c.errorContains());
      assertThat(body.getString("code")).as(c.what()).isEqualTo(c.code());
    }
  }

  @Test
  void a503CarriesRetryAfterAndItsCode() throws Exception {
    // push maintenance is node-wide state in the database: a node of its own
    try (var own = TestNode.start(Map.of(), TestDatabase.get().fresh())) {
      String id = java.util.UUID.randomUUID().toString();   // refused before any lookup
      assertThat(own.post("/api/v1/system/maintenance", new JsonObject().put("enabled", true)).status())
          .isEqualTo(200);
      Reply r = own.post("/api/v1/dlq/" + id + "/replay", "{}");
      assertThat(r.status()).as(r.body()).isEqualTo(503);
      assertThat(r.header("Retry-After")).isEqualTo("1");
      assertThat(r.json().getString("error")).isEqualTo("push maintenance is on");
      assertThat(r.json().getString("code")).isEqualTo("unavailable");
    }
  }
}
