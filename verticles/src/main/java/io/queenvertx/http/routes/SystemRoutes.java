package io.queenvertx.http.routes;

import io.queenvertx.http.server.Bodies;
import io.queenvertx.http.server.ErrorContract;
import io.queenvertx.http.server.RouteTable;
import io.queenvertx.kernel.ApiError;
import io.queenvertx.node.NodeContext;
import io.queenvertx.db.SystemState;
import io.queenvertx.bus.Addresses;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;

/**
 * The maintenance switches (API.md §5.14, Admin): the database rows ({@link SystemState}) are the truth shared
 * by every node; a change is applied locally and announced cluster-wide, and every node re-reads the rows
 * periodically.
 */
final class SystemRoutes {
  private SystemRoutes() {}

  static void mount(RouteTable routes, NodeContext node, Vertx vertx) {
    routes.get("/api/v1/system/maintenance", ctx -> readFlags(node).compose(f -> spoolStats(vertx).map(s ->
            new JsonObject().put("maintenanceMode", f.getBoolean("push")).put("popMaintenanceMode", f.getBoolean("pop"))
                .put("bufferedMessages", s.getLong("bufferedMessages")).put("bufferHealthy", s.getBoolean("bufferHealthy"))
                .put("bufferStats", s)))
        .onSuccess(b -> ErrorContract.send(ctx, 200, b)).onFailure(ctx::fail));
    routes.post("/api/v1/system/maintenance", ctx -> {
      boolean on = enabled(ctx);
      write(node, vertx, SystemState.Switch.PUSH, on).compose(v -> spoolStats(vertx))
          .onSuccess(s -> ErrorContract.send(ctx, 200, new JsonObject().put("maintenanceMode", on)
              .put("bufferedMessages", s.getLong("bufferedMessages")).put("bufferHealthy", s.getBoolean("bufferHealthy"))
              .put("message", on ? "Maintenance mode ENABLED. All PUSHes routing to file buffer."
                  : "Maintenance mode DISABLED. Background processor will drain buffer to DB.")))
          .onFailure(ctx::fail);
    });
    routes.get("/api/v1/system/maintenance/pop", ctx -> readFlags(node)
        .onSuccess(f -> {
          boolean on = f.getBoolean("pop");
          ErrorContract.send(ctx, 200, new JsonObject().put("popMaintenanceMode", on).put("message", on
              ? "Pop maintenance mode is ON. All POP operations return empty arrays."
              : "Pop maintenance mode is OFF. Normal operation."));
        }).onFailure(ctx::fail));
    routes.post("/api/v1/system/maintenance/pop", ctx -> {
      boolean on = enabled(ctx);
      write(node, vertx, SystemState.Switch.POP, on)
          .onSuccess(v -> ErrorContract.send(ctx, 200, new JsonObject().put("popMaintenanceMode", on).put("message", on
              ? "Pop maintenance mode ENABLED. All POP operations will return empty arrays."
              : "Pop maintenance mode DISABLED. Normal operation resumed.")))
          .onFailure(ctx::fail);
    });
    routes.get("/api/v1/system/shared-state", ctx -> readFlags(node)
        .onSuccess(f -> ErrorContract.send(ctx, 200, new JsonObject()
            .put("enabled", node.config().cluster().enabled())
            .put("reason", node.config().cluster().enabled() ? "vertx_hazelcast_cluster" : "single_node_segments_broker")
            .put("maintenance_mode", f.getBoolean("push")).put("pop_maintenance_mode", f.getBoolean("pop"))))
        .onFailure(ctx::fail));
  }

  private static boolean enabled(RoutingContext ctx) {
    JsonObject b = Bodies.object(ctx);
    if (!(b.getValue("enabled") instanceof Boolean on)) throw ApiError.of(400, "enabled (boolean) is required");
    return on;
  }

  /** Both flags, fresh from the database; also refreshes this node's copy. */
  static Future<JsonObject> readFlags(NodeContext node) {
    long seen = node.maintenance().changes();
    return node.db().system().read()
        .map(s -> {
          s.applyTo(node.maintenance(), seen);
          return new JsonObject().put("push", s.push()).put("pop", s.pop());
        })
        .recover(e -> Future.failedFuture(ApiError.prefixed(500, "maintenance failed: ", e)));
  }

  private static Future<Void> write(NodeContext node, Vertx vertx, SystemState.Switch which, boolean on) {
    return node.db().system().set(node.maintenance(), vertx, which, on)
        .recover(e -> Future.failedFuture(ApiError.prefixed(500, "maintenance failed: ", e)));
  }

  private static Future<JsonObject> spoolStats(Vertx vertx) {
    return Bus.<JsonObject>request(vertx, Addresses.SPOOL_STATS, "stats")
        .otherwise(new JsonObject().put("bufferedMessages", 0L).put("bufferHealthy", false));
  }
}
