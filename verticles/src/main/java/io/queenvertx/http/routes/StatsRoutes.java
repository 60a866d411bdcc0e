package io.queenvertx.http.routes;

import io.queenvertx.http.server.ErrorContract;
import io.queenvertx.http.server.RouteTable;
import io.queenvertx.kernel.ApiError;
import io.queenvertx.node.NodeContext;
import io.queenvertx.bus.Addresses;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.spi.cluster.ClusterManager;
import io.vertx.core.spi.cluster.NodeInfo;
import java.nio.file.Path;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;

/**
 * The spool side of API.md §5.12: the spool (file buffer) state of every node of the cluster,
 * {@code GET /api/v1/status/buffers}, and {@code POST /api/v1/stats/refresh} (Admin), which asks the stats flusher to
 * write the counted minutes now.
 *
 * <p>buffers answers {@code {"nodes":[{nodeId, clusterNodeId, reachable, directory, pendingEvents, files, failedEvents,
 * healthy, maintenanceMode, popMaintenanceMode}], "totals":{pendingEvents, files, failedEvents}, "healthy",
 * "reachableNodes", "unreachableNodes"}}. Each entry is one node's spool as its log writer counts it (events waiting to
 * be replayed, events the database refused and set aside in {@code failed/}, and whether replays currently succeed),
 * plus the spool files on its disk ({@code .buf} sealed and the active {@code .tmp}); {@code nodeId} is that node's
 * {@code QUEEN_SERVER_ID}. The node asked comes first, then every other cluster member in the cluster manager's order:
 * each is asked on its own clustered address ({@link Addresses#NODE_BUFFERS_PREFIX}{@code <cluster node id>.buffers}),
 * all at once, and a member that does not answer within {@value #NODE_TIMEOUT_MS} ms is listed as
 * {@code {"nodeId":null, clusterNodeId, "host", "reachable":false, "error"}}. Totals add up the reachable nodes;
 * {@code healthy} is true when every member answered and every spool is healthy. A standalone node lists itself only.
 *
 * <p>refresh answers 200 {@code {"success":true,"flushed":true,"flushedNodeRows":n,"flushedQueueRows":m,
 * "timestamp"}}, or {@code "flushed":false} with a {@code reason} when no flusher answered within
 * {@value #FLUSH_TIMEOUT_MS} ms (none registered, or it failed): the figures already flushed stay readable.
 */
final class StatsRoutes {
  static final long FLUSH_TIMEOUT_MS = 5_000;
  static final long SPOOL_TIMEOUT_MS = 5_000;
  /** How long a peer node gets to describe its spool before it is listed as unreachable. */
  static final long NODE_TIMEOUT_MS = 2_000;

  private StatsRoutes() {}

  /** Mounts both routes and, on a clustered node, answers peers asking for this node's spool entry. */
  static void mount(RouteTable routes, NodeContext node, Vertx vertx) {
    ClusterManager cluster = clusterManager(vertx);
    if (cluster != null) {
      vertx.eventBus().<Object>consumer(nodeAddress(cluster.getNodeId()), msg -> local(node, vertx)
          .onSuccess(msg::reply)
          .onFailure(e -> msg.fail(500, ApiError.describe(e))));
    }
    routes.get("/api/v1/status/buffers", ctx -> buffers(node, vertx)
        .onSuccess(b -> ErrorContract.send(ctx, 200, b))
        .onFailure(ctx::fail));
    routes.post("/api/v1/stats/refresh", ctx -> refresh(vertx)
        .onSuccess(b -> ErrorContract.send(ctx, 200, b))
        .onFailure(ctx::fail));
  }

  /** The clustered address on which the node with this Vert.x cluster node id describes its spool. */
  static String nodeAddress(String clusterNodeId) {
    return Addresses.NODE_BUFFERS_PREFIX + clusterNodeId + ".buffers";
  }

  private static ClusterManager clusterManager(Vertx vertx) {
    return vertx instanceof VertxInternal internal ? internal.clusterManager() : null;
  }

  static Future<JsonObject> buffers(NodeContext node, Vertx vertx) {
    ClusterManager cluster = clusterManager(vertx);
    Future<JsonObject> self = local(node, vertx);
    if (cluster == null) return self.map(s -> summary(List.of(s)));
    String me = cluster.getNodeId();
    List<Future<JsonObject>> entries = new ArrayList<>();
    entries.add(self);
    DeliveryOptions ask = new DeliveryOptions().setSendTimeout(NODE_TIMEOUT_MS);
    for (String id : cluster.getNodes()) {
      if (id.equals(me)) continue;
      entries.add(vertx.eventBus().<JsonObject>request(nodeAddress(id), "buffers", ask)
          .map(m -> m.body().copy().put("clusterNodeId", id).put("reachable", true))
          .recover(e -> unreachable(cluster, id, e)));
    }
    return Future.all(entries).map(v -> summary(entries.stream().map(Future::result).toList()));
  }

  /** A member that did not describe its spool: its event-bus host from the cluster manager, when it still knows it. */
  private static Future<JsonObject> unreachable(ClusterManager cluster, String id, Throwable cause) {
    Promise<NodeInfo> info = Promise.promise();
    cluster.getNodeInfo(id, info);
    return info.future()
        .map(i -> i == null ? null : i.host() + ":" + i.port())
        .otherwise((String) null)
        .map(host -> failedEntry(id, host, cause));
  }

  private static JsonObject failedEntry(String id, String host, Throwable cause) {
    String why = cause instanceof ReplyException re && re.failureType() == ReplyFailure.TIMEOUT
        ? "no answer within " + NODE_TIMEOUT_MS + " ms" : ApiError.describe(cause);
    return new JsonObject().put("nodeId", null).put("clusterNodeId", id).put("host", host).put("reachable", false)
        .put("error", why);
  }

  private static JsonObject summary(List<JsonObject> nodes) {
    long pending = 0;
    long failed = 0;
    long files = 0;
    int reachable = 0;
    boolean healthy = true;
    for (JsonObject n : nodes) {
      if (!n.getBoolean("reachable", false)) {
        healthy = false;
        continue;
      }
      reachable++;
      pending += n.getLong("pendingEvents", 0L);
      failed += n.getLong("failedEvents", 0L);
      files += n.getLong("files", 0L);
      healthy &= n.getBoolean("healthy", false);
    }
    return new JsonObject()
        .put("nodes", new JsonArray(new ArrayList<>(nodes)))
        .put("totals", new JsonObject().put("pendingEvents", pending).put("files", files).put("failedEvents", failed))
        .put("healthy", healthy)
        .put("reachableNodes", reachable)
        .put("unreachableNodes", nodes.size() - reachable);
  }

  /** This node's entry, as the log writer and the spool folder describe it. */
  static Future<JsonObject> local(NodeContext node, Vertx vertx) {
    Path dir = node.config().spool().dir();
    Future<JsonObject> stats = vertx.eventBus().<JsonObject>request(Addresses.SPOOL_STATS, "stats",
            new DeliveryOptions().setLocalOnly(true).setSendTimeout(SPOOL_TIMEOUT_MS))
        .map(Message::body)
        .otherwise(new JsonObject().put("bufferedMessages", 0L).put("bufferHealthy", false).put("failedEvents", 0L));
    Future<Integer> files = vertx.fileSystem().exists(dir.toString())
        .compose(ok -> ok ? vertx.fileSystem().readDir(dir.toString(), ".*\\.(buf|tmp)").map(l -> l.size())
            : Future.succeededFuture(0))
        .otherwise(0);
    ClusterManager cluster = clusterManager(vertx);
    return Future.all(stats, files).map(v -> {
      JsonObject s = stats.result();
      return new JsonObject()
          .put("nodeId", node.config().serverId())
          .put("clusterNodeId", cluster == null ? null : cluster.getNodeId())
          .put("reachable", true)
          .put("directory", dir.toAbsolutePath().toString())
          .put("pendingEvents", s.getLong("bufferedMessages", 0L))
          .put("files", files.result())
          .put("failedEvents", s.getLong("failedEvents", 0L))
          .put("healthy", s.getBoolean("bufferHealthy", false))
          .put("maintenanceMode", node.maintenance().pushMaintenance())
          .put("popMaintenanceMode", node.maintenance().popMaintenance());
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
