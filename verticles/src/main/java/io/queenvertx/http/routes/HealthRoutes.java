package io.queenvertx.http.routes;

import io.queenvertx.http.server.ErrorContract;
import io.queenvertx.http.server.RouteTable;
import io.queenvertx.kernel.Config;
import io.vertx.core.json.JsonObject;
import io.queenvertx.db.Database;

/**
 * {@code GET /health} and {@code GET /status} (API.md §5.1), and the liveness probe {@code GET /health/live}: 200
 * {@code {"status":"alive"}} with no database round trip, so an outage of PostgreSQL (while pushes spool) does not make
 * an orchestrator restart the broker; {@code /health} is the readiness probe.
 */
final class HealthRoutes {
  /** Ours is the same segment engine as Queen's, implemented on Vert.x. */
  static final String ENGINE = "segments";
  private static final long HEALTH_DB_TIMEOUT_MS = 5000;
  private static final io.vertx.core.buffer.Buffer ALIVE = new JsonObject().put("status", "alive").toBuffer();

  private HealthRoutes() {}

  public static void mount(RouteTable routes, Config config, Database db) {
    // One trivial database round trip; its failure is the only 503 of the core surface, with no "error" key.
    routes.get("/health", ctx -> db.ping(HEALTH_DB_TIMEOUT_MS)
        .onComplete(ar -> {
          boolean up = ar.result();
          var body = new JsonObject()
              .put("status", up ? "healthy" : "unhealthy")
              .put("database", up ? "connected" : "disconnected")
              .put("engine", ENGINE)
              .put("version", Config.VERSION)
              .put("server", config.serverId());
          ErrorContract.send(ctx, up ? 200 : 503, body);
        }));
    routes.get("/health/live", ctx -> ErrorContract.send(ctx, 200, ALIVE));
    routes.get("/status", ctx -> ErrorContract.send(ctx, 200,
        new JsonObject().put("status", "ok").put("engine", ENGINE)));
  }
}
