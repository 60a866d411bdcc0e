package io.queenvertx.webhook.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.kernel.ApiError;
import io.queenvertx.http.server.ErrorContract;
import io.queenvertx.http.server.RouteTable;
import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.TestNode.Reply;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The webhook API's sub-router renders every failure under /v1 in its own dialect
 * ({@code {error:{code,message}, meta:{request_id}}}) and Queen's routes keep Queen's: over a router built like the
 * node's (Queen's failure handler and fallback on the top router, the API's sub-router on /v1) with routes that fail,
 * and over a real node whose shared tenancy layer refuses a request before any route runs.
 */
class WebhookFailureIT {
  @NodeFixture(env = {"QUEEN_TENANCY_HEADER=on", "QUEEN_WEBHOOK_API_KEYS=k-f"})
  static TestNode node;

  static Vertx vertx;
  static HttpServer server;

  @BeforeAll
  static void startRouter() throws Exception {
    vertx = Vertx.vertx();
    Router router = Router.router(vertx);
    var routes = new RouteTable(router, 1024);
    routes.get("/api/v1/refused", ctx -> ctx.fail(ApiError.of(400, "queue is required")));
    routes.get("/api/v1/crash", ctx -> {
      throw new IllegalStateException("core crash");
    });
    RouteTable v1 = routes.subRouter(WebhookApi.PREFIX, WebhookApi.ORDER, WebhookApi.router(vertx));
    v1.get("/crash", ctx -> {
      throw new IllegalStateException("connection to db-secret.internal refused");
    });
    v1.get("/conflict", ctx -> ctx.fail(new WebhookError(409, "CONFLICT", "already replayed")));
    v1.get("/core-error", ctx -> ctx.fail(ApiError.of(400, "limit must be a number")));
    router.route().last().handler(ErrorContract::fallback);
    router.route().failureHandler(ErrorContract::onFailure);
    server = vertx.createHttpServer().requestHandler(router).listen(0, "127.0.0.1")
        .toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  @AfterAll
  static void stopRouter() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  static Reply get(String path) throws Exception {
    var r = TestNode.HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.actualPort() + path))
        .timeout(Duration.ofSeconds(10)).GET().build(), HttpResponse.BodyHandlers.ofString());
    return new Reply(r.statusCode(), r.body(), r.headers().map());
  }

  /** The dialect's error body; outside the node's request-id layer the id is "-". */
  static JsonObject webhookError(String code, String message, String requestId) {
    return new JsonObject()
        .put("error", new JsonObject().put("code", code).put("message", message))
        .put("meta", new JsonObject().put("request_id", requestId));
  }

  @Test
  void aFailingV1RouteAnswersTheWebhookDialectAndCoreRoutesKeepQueens() throws Exception {
    // a crash inside a /v1 handler: a 500 in the dialect that shows nothing of the cause
    Reply crash = get("/v1/crash");
    assertThat(crash.status()).isEqualTo(500);
    assertThat(crash.header("content-type")).startsWith("application/json");
    assertThat(crash.json()).isEqualTo(webhookError("INTERNAL_ERROR", "internal error", "-"));
    // the API's own error and a Queen ApiError raised under /v1 both come out in the dialect
    Reply conflict = get("/v1/conflict");
    assertThat(conflict.status()).isEqualTo(409);
    assertThat(conflict.json()).isEqualTo(webhookError("CONFLICT", "already replayed", "-"));
    Reply coreError = get("/v1/core-error");
    assertThat(coreError.status()).isEqualTo(400);
    assertThat(coreError.json()).isEqualTo(webhookError("INVALID_REQUEST", "limit must be a number", "-"));
    // no such route, a trailing slash: the sub-router's own 404s
    assertThat(get("/v1/nope").json()).isEqualTo(webhookError("NOT_FOUND", "no such route: GET /v1/nope", "-"));
    assertThat(get("/v1/conflict/").json())
        .isEqualTo(webhookError("NOT_FOUND", "no such route: GET /v1/conflict/", "-"));

    // Queen's routes beside it: Queen's bodies, untouched
    Reply refused = get("/api/v1/refused");
    assertThat(refused.status()).isEqualTo(400);
    assertThat(refused.json()).isEqualTo(io.queenvertx.testing.Wire.error(400, "queue is required"));
    Reply coreCrash = get("/api/v1/crash");
    assertThat(coreCrash.status()).isEqualTo(500);
    assertThat(coreCrash.json().fieldNames()).containsExactlyInAnyOrder("error", "code");
    assertThat(coreCrash.json().getValue("error")).isInstanceOf(String.class);
    Reply none = get("/api/v1/nope");
    assertThat(none.status()).isEqualTo(404);
    assertThat(none.json()).isEqualTo(new JsonObject().put("error", "Not Found").put("code", "no_such_route"));
  }

  @Test
  void aSharedLayersRefusalIsInTheDialectUnderV1AndQueensElsewhere() {
    Map<String, String> badTenant = Map.of("Authorization", "Bearer k-f", "x-queen-tenant", "not-a-uuid");
    Reply v1 = node.get("/v1/endpoints", badTenant);
    assertThat(v1.status()).isEqualTo(400);
    assertThat(v1.json()).isEqualTo(webhookError("INVALID_REQUEST", "invalid x-queen-tenant header (must be a UUID)",
        v1.header("X-Request-Id")));
    Reply core = node.get("/api/v1/resources/queues", badTenant);
    assertThat(core.status()).isEqualTo(400);
    assertThat(core.json())
        .isEqualTo(io.queenvertx.testing.Wire.error(400, "invalid x-queen-tenant header (must be a UUID)"));

    // the exact-path rule in each dialect
    Map<String, String> key = Map.of("Authorization", "Bearer k-f");
    Reply slash = node.get("/v1/endpoints/", key);
    assertThat(slash.status()).isEqualTo(404);
    assertThat(slash.json()).isEqualTo(webhookError("NOT_FOUND", "no such route: GET /v1/endpoints/",
        slash.header("X-Request-Id")));
    assertThat(node.get("/v1/endpoints", key).status()).isEqualTo(200);
    Reply coreSlash = node.get("/api/v1/resources/queues/");
    assertThat(coreSlash.status()).isEqualTo(404);
    assertThat(coreSlash.json()).isEqualTo(new JsonObject().put("error", "Not Found").put("code", "no_such_route"));
  }
}
