package io.queenvertx.http.routes;

import io.queenvertx.http.server.ErrorContract;
import io.queenvertx.http.server.RouteTable;
import io.queenvertx.kernel.Config;
import io.queenvertx.node.NodeContext;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.spi.cluster.ClusterManager;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * {@code GET /api/v1/system/nodes} (ReadOnly; beyond Queen): every node of the cluster with its server id, version,
 * uptime, HTTP address (when bound to a specific host), database health, maintenance flags and the PostgreSQL servers it
 * watches with their role and lag ({@code databaseServers}, {@link io.queenvertx.db.PgServers#describe}). Each node answers on its
 * own event-bus address, {@value #ADDRESS_PREFIX} followed by its cluster node id (registered when its HTTP routes are
 * mounted); the route asks every member the cluster manager lists and waits at most {@value #TIMEOUT_MS} ms for each.
 * A member that does not answer in time is listed with {@code "reachable": false}. Standalone, the list is this node.
 */
final class NodesRoutes {
  static final String ADDRESS_PREFIX = "queen.node.info.";
  static final long TIMEOUT_MS = 2000;
  private static final long DB_TIMEOUT_MS = 1500;
  private static final String STANDALONE = "standalone";

  private NodesRoutes() {}

  static void mount(RouteTable routes, NodeContext node, Vertx vertx) {
    // one consumer per HTTP verticle instance on the same node-local address: any of them answers for the node
    long started = (Long) vertx.sharedData().getLocalMap("queen.nodes")
        .computeIfAbsent("startedAt", k -> System.currentTimeMillis());
    vertx.eventBus().<JsonObject>consumer(ADDRESS_PREFIX + nodeId(vertx),
        (Message<JsonObject> m) -> describe(node, started, nodeId(vertx)).onSuccess(m::reply));
    routes.get("/api/v1/system/nodes", ctx -> gather(vertx, node, started)
        .onSuccess(list -> ErrorContract.send(ctx, 200, new JsonObject()
            .put("clustered", manager(vertx) != null).put("self", nodeId(vertx)).put("nodes", list)))
        .onFailure(ctx::fail));
  }

  private static ClusterManager manager(Vertx vertx) {
    return ((io.vertx.core.internal.VertxInternal) vertx).clusterManager();
  }

  private static String nodeId(Vertx vertx) {
    ClusterManager cm = manager(vertx);
    return cm == null ? STANDALONE : cm.getNodeId();
  }

  private static Future<JsonArray> gather(Vertx vertx, NodeContext node, long started) {
    ClusterManager cm = manager(vertx);
    if (cm == null) return describe(node, started, STANDALONE).map(d -> new JsonArray().add(d));
    List<String> members = new ArrayList<>(cm.getNodes());
    members.sort(null);
    List<Future<JsonObject>> answers = new ArrayList<>();
    DeliveryOptions opts = new DeliveryOptions().setSendTimeout(TIMEOUT_MS);
    for (String id : members) {
      answers.add(vertx.eventBus().<JsonObject>request(ADDRESS_PREFIX + id, new JsonObject(), opts)
          .map(Message::body)
          .otherwise(e -> new JsonObject().put("nodeId", id).put("reachable", false)
              .put("error", String.valueOf(e.getMessage()))));
    }
    return Future.join(answers).otherwiseEmpty().map(v -> {
      JsonArray out = new JsonArray();
      for (Future<JsonObject> f : answers) out.add(f.result());
      return out;
    });
  }

  /** This node's own entry; the database probe is one trivial round trip with a short timeout. */
  private static Future<JsonObject> describe(NodeContext node, long started, String nodeId) {
    Config c = node.config();
    String bind = c.http().bindAddress();
    boolean wildcard = bind.equals("0.0.0.0") || bind.equals("::") || bind.equals("[::]");
    String host = bind.contains(":") && !bind.startsWith("[") ? "[" + bind + "]" : bind;
    return node.db().ping(DB_TIMEOUT_MS).map(up -> up ? "connected" : "disconnected")
        .map(db -> new JsonObject()
            .put("nodeId", nodeId)
            .put("serverId", c.serverId())
            .put("reachable", true)
            .put("version", Config.VERSION)
            .put("startedAt", java.time.Instant.ofEpochMilli(started).toString())
            .put("uptimeSeconds", (System.currentTimeMillis() - started) / 1000)
            .put("httpPort", c.http().port())
            .put("httpUrl", wildcard ? null : "http://" + host + ":" + c.http().port())
            .put("database", db)
            .put("maintenanceMode", node.maintenance().pushMaintenance())
            .put("popMaintenanceMode", node.maintenance().popMaintenance())
            .put("databaseServers", node.db().servers().describe()));
  }
}
