package io.queenvertx.security;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.auth.AuthHandler;
import io.queenvertx.auth.JwtVerifier;
import io.queenvertx.kernel.Config;
import io.queenvertx.kernel.JwtSettings;
import io.queenvertx.http.server.ErrorContract;
import io.queenvertx.http.server.RouteTable;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The second line of issue 18's fix on its own: every route declared through {@link RouteTable} checks the level of
 * its own template and method, so even with no path guard and no router-wide check in front of it, a spelling that
 * routes to a protected handler is judged as that handler. A router with only the table, over real HTTP.
 */
class RouteLevelAuthIT {
  static final String SECRET = "route-level-secret-0123456789abcdef";
  static Vertx vertx;
  static HttpServer server;
  static int port;
  static final AtomicInteger deletes = new AtomicInteger();
  static final AtomicInteger pushes = new AtomicInteger();

  @BeforeAll
  static void start() throws Exception {
    JwtSettings jwt = Config.from(Map.of("JWT_ENABLED", "true", "JWT_SECRET", SECRET,
        "JWT_SKIP_PATHS", "/health,/public/")).jwt();
    vertx = Vertx.vertx();
    Router router = Router.router(vertx);
    var routes = new RouteTable(router, 1 << 20, new AuthHandler(jwt, new JwtVerifier(jwt)));
    routes.delete("/api/v1/resources/queues/:queue", ctx -> {
      deletes.incrementAndGet();
      ErrorContract.send(ctx, 200, new JsonObject().put("deleted", ctx.pathParam("queue")));
    });
    routes.post("/api/v1/push", ctx -> {
      pushes.incrementAndGet();
      ErrorContract.send(ctx, 201, new JsonObject().put("pushed", true));
    });
    routes.get("/v1/endpoints", ctx -> ErrorContract.send(ctx, 200, new JsonObject().put("public", true)));
    router.route().last().handler(ErrorContract::fallback);
    router.route().failureHandler(ErrorContract::onFailure);
    server = vertx.createHttpServer().requestHandler(router).listen(0, "127.0.0.1")
        .toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    port = server.actualPort();
  }

  @AfterAll
  static void stop() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  @BeforeEach
  void reset() {
    deletes.set(0);
    pushes.set(0);
  }

  static Map<String, String> bearer(String role) {
    long now = System.currentTimeMillis() / 1000;
    return Map.of("Authorization", "Bearer " + RawHttp.hs256(SECRET, new JsonObject().put("sub", "svc")
        .put("role", role).put("exp", now + 600)));
  }

  @Test
  void anAdminRouteReachedThroughAPublicOrSkippedPrefixStillWantsAnAdmin() {
    for (String target : new String[] {"/assets/../api/v1/resources/queues/x", "/v1/../api/v1/resources/queues/x",
        "/public/../api/v1/resources/queues/x", "/health/../api/v1/resources/queues/x",
        "/assets/%2e%2e/api/v1/resources/queues/x", "//api/v1/resources/queues/x"}) {
      var none = RawHttp.send(port, "DELETE", target, Map.of(), null);
      assertThat(none.status()).as(target + " " + none.body()).isEqualTo(401);
      assertThat(none.error()).isEqualTo("Authentication required");
      var rw = RawHttp.send(port, "DELETE", target, bearer("read-write"), null);
      assertThat(rw.status()).as(target + " " + rw.body()).isEqualTo(403);
    }
    assertThat(deletes).as("the delete handler never ran").hasValue(0);
    var admin = RawHttp.send(port, "DELETE", "/api/v1/resources/queues/x", bearer("admin"), null);
    assertThat(admin.status()).isEqualTo(200);
    assertThat(deletes).hasValue(1);
  }

  @Test
  void theLevelIsTheRoutesOwnWhateverSpellingReachedIt() {
    var ro = RawHttp.send(port, "POST", "/api/v1/x/../push", bearer("read-only"), "{}");
    assertThat(ro.status()).as(ro.body()).isEqualTo(403);
    assertThat(pushes).hasValue(0);
    var wo = RawHttp.send(port, "POST", "/api/v1/x/../push", bearer("write-only"), "{}");
    assertThat(wo.status()).as(wo.body()).isEqualTo(201);
    assertThat(pushes).hasValue(1);
    assertThat(RawHttp.send(port, "GET", "/v1/endpoints", Map.of(), null).status()).isEqualTo(200);
  }
}
