package io.queenvertx.http.routes;

import io.queenvertx.db.Database;
import io.queenvertx.http.server.ErrorContract;
import io.queenvertx.http.server.RouteTable;
import io.queenvertx.kernel.Config;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * {@code GET /health} (and its HEAD) and {@code GET /status} (API.md §5.1), the liveness probe
 * {@code GET /health/live}: 200 {@code {"status":"alive"}} with no database round trip, so an outage of PostgreSQL
 * (while pushes spool) does not make an orchestrator restart the broker; and the readiness probe
 * {@code GET /health/ready}: 200 while the node can take pushes, that is while its database answers or its spool folder
 * is writable (pushes then answer {@code buffered}), so a PostgreSQL outage keeps the node in its Service and clients
 * reach the spool; {@code database} tells operators whether PostgreSQL answers.
 */
final class HealthRoutes {
  /** Ours is the same segment engine as Queen's, implemented on Vert.x. */
  static final String ENGINE = "segments";
  private static final long HEALTH_DB_TIMEOUT_MS = 5000;
  /** Readiness answers within a probe's usual timeout even when PostgreSQL hangs. */
  private static final long READY_DB_TIMEOUT_MS = 2000;
  /** A spool on a file system with less room than this is not writable for readiness. */
  static final long SPOOL_MIN_FREE_BYTES = 1024 * 1024;
  private static final io.vertx.core.buffer.Buffer ALIVE = new JsonObject().put("status", "alive").toBuffer();

  private HealthRoutes() {}

  public static void mount(RouteTable routes, Config config, Database db) {
    // One trivial database round trip; its failure is the only 503 of the core surface, with no "error" key. A HEAD
    // is the same check without the body (else the dashboard's page would answer it, 200 whatever the database).
    routes.getAndHead("/health", ctx -> db.ping(HEALTH_DB_TIMEOUT_MS).onComplete(ar -> {
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
    routes.get("/health/ready", ctx -> ready(ctx, config, db));
    routes.get("/status", ctx -> ErrorContract.send(ctx, 200,
        new JsonObject().put("status", "ok").put("engine", ENGINE)));
  }

  private static void ready(RoutingContext ctx, Config config, Database database) {
    Path spool = config.spool().dir();
    Future<Boolean> writable = ctx.vertx().executeBlocking(() -> spoolWritable(spool), false).otherwise(false);
    Future<Boolean> db = database.ping(READY_DB_TIMEOUT_MS);
    Future.join(writable, db).onComplete(v -> {
      boolean ready = writable.result() || db.result();
      ErrorContract.send(ctx, ready ? 200 : 503, new JsonObject()
          .put("status", ready ? "ready" : "unready")
          .put("database", db.result() ? "connected" : "disconnected")
          .put("spool", writable.result() ? "writable" : "unwritable")
          .put("version", Config.VERSION)
          .put("server", config.serverId()));
    });
  }

  /** The spool folder exists, this process may create files in it, and its file system has room. */
  static boolean spoolWritable(Path dir) throws java.io.IOException {
    return Files.isDirectory(dir) && Files.isWritable(dir)
        && Files.getFileStore(dir).getUsableSpace() >= SPOOL_MIN_FREE_BYTES;
  }
}
