package io.queenvertx.http;

import io.queenvertx.boot.NodeContext;
import io.queenvertx.bus.Addresses;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;

/**
 * The node-local side of API.md §5.12: the spool (file buffer) state, {@code GET /api/v1/status/buffers}, and
 * {@code POST /api/v1/stats/refresh} (Admin), which asks the stats flusher to write the counted minutes now.
 *
 * <p>buffers answers {@code {"nodes":[{nodeId, directory, pendingEvents, files, failedEvents, healthy,
 * maintenanceMode, popMaintenanceMode}], "totals":{pendingEvents, files, failedEvents}, "healthy"}}: this node's spool
 * as the log writer counts it (events waiting to be replayed, events the database refused and set aside in
 * {@code failed/}, and whether replays currently succeed), plus the spool files on disk ({@code .buf} sealed and the
 * active {@code .tmp}). The node id is {@code QUEEN_SERVER_ID}.
 *
 * <p>refresh answers 200 {@code {"success":true,"flushed":true,"flushedNodeRows":n,"flushedQueueRows":m,
 * "timestamp"}}, or {@code "flushed":false} with a {@code reason} when no flusher answered within
 * {@value #FLUSH_TIMEOUT_MS} ms (none registered, or it failed): the figures already flushed stay readable.
 */
final class StatsRoutes {
  static final long FLUSH_TIMEOUT_MS = 5_000;
  static final long SPOOL_TIMEOUT_MS = 5_000;

  private StatsRoutes() {}

  static void mount(RouteTable routes, NodeContext node, Vertx vertx) {
    routes.get("/api/v1/status/buffers", ctx -> buffers(node, vertx)
        .onSuccess(b -> ErrorContract.send(ctx, 200, b))
        .onFailure(ctx::fail));
    routes.post("/api/v1/stats/refresh", ctx -> refresh(vertx)
        .onSuccess(b -> ErrorContract.send(ctx, 200, b))
        .onFailure(ctx::fail));
  }

  static Future<JsonObject> buffers(NodeContext node, Vertx vertx) {
    Path dir = node.config().spool().dir();
    Future<JsonObject> stats = vertx.eventBus().<JsonObject>request(Addresses.SPOOL_STATS, "stats",
            new DeliveryOptions().setLocalOnly(true).setSendTimeout(SPOOL_TIMEOUT_MS))
        .map(Message::body)
        .otherwise(new JsonObject().put("bufferedMessages", 0L).put("bufferHealthy", false).put("failedEvents", 0L));
    Future<Integer> files = vertx.fileSystem().exists(dir.toString())
        .compose(ok -> ok ? vertx.fileSystem().readDir(dir.toString(), ".*\\.(buf|tmp)").map(l -> l.size())
            : Future.succeededFuture(0))
        .otherwise(0);
    return Future.all(stats, files).map(v -> {
      JsonObject s = stats.result();
      long pending = s.getLong("bufferedMessages", 0L);
      long failed = s.getLong("failedEvents", 0L);
      boolean healthy = s.getBoolean("bufferHealthy", false);
      int fileCount = files.result();
      JsonObject self = new JsonObject()
          .put("nodeId", node.config().serverId())
          .put("directory", dir.toAbsolutePath().toString())
          .put("pendingEvents", pending)
          .put("files", fileCount)
          .put("failedEvents", failed)
          .put("healthy", healthy)
          .put("maintenanceMode", node.maintenance().pushMaintenance())
          .put("popMaintenanceMode", node.maintenance().popMaintenance());
      return new JsonObject()
          .put("nodes", new JsonArray().add(self))
          .put("totals", new JsonObject().put("pendingEvents", pending).put("files", fileCount)
              .put("failedEvents", failed))
          .put("healthy", healthy);
    });
  }

  static Future<JsonObject> refresh(Vertx vertx) {
    String now = io.queenvertx.json.Timestamps.micros(OffsetDateTime.now(ZoneOffset.UTC));
    return vertx.eventBus().<JsonObject>request(Addresses.STATS_FLUSH, new JsonObject(),
            new DeliveryOptions().setSendTimeout(FLUSH_TIMEOUT_MS))
        .map(m -> {
          JsonObject r = m.body() == null ? new JsonObject() : m.body();
          return new JsonObject().put("success", true).put("flushed", true)
              .put("flushedNodeRows", r.getLong("flushedNodeRows", 0L))
              .put("flushedQueueRows", r.getLong("flushedQueueRows", 0L))
              .put("timestamp", now);
        })
        .otherwise(e -> new JsonObject().put("success", true).put("flushed", false)
            .put("reason", reason(e)).put("timestamp", now));
  }

  private static String reason(Throwable e) {
    if (e instanceof ReplyException re) {
      if (re.failureType() == ReplyFailure.NO_HANDLERS) return "no stats flusher is registered";
      if (re.failureType() == ReplyFailure.TIMEOUT) {
        return "the stats flusher did not answer within " + FLUSH_TIMEOUT_MS + " ms";
      }
    }
    return "the stats flush failed: " + ApiError.describe(e);
  }
}
