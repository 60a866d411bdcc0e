package io.queenvertx.http.routes;

import io.queenvertx.kernel.Defaults;
import io.queenvertx.http.server.Bodies;
import io.queenvertx.http.server.ErrorContract;
import io.queenvertx.http.server.IsoTime;
import io.queenvertx.http.server.RouteTable;
import io.queenvertx.http.server.Tenancy;
import io.queenvertx.kernel.ApiError;
import io.queenvertx.kernel.Config;
import io.queenvertx.node.NodeContext;
import io.queenvertx.bus.PopCommand;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.Locale;

/** The three pop routes (API.md §5.4): queue, queue + partition, and namespace/task discovery. */
final class PopRoutes {
  static final String QUEUE_MODE = Defaults.QUEUE_MODE_GROUP;

  private PopRoutes() {}

  static void mount(RouteTable routes, NodeContext node, Vertx vertx) {
    routes.get("/api/v1/pop/queue/:queue", ctx -> pop(ctx, vertx, node, ctx.pathParam("queue"), null, false));
    routes.get("/api/v1/pop/queue/:queue/partition/:partition",
        ctx -> pop(ctx, vertx, node, ctx.pathParam("queue"), ctx.pathParam("partition"), false));
    routes.get("/api/v1/pop", ctx -> pop(ctx, vertx, node, null, null, true));
  }

  private static void pop(RoutingContext ctx, Vertx vertx, NodeContext node, String queue, String partition,
                          boolean discovery) {
    // a name no queue can have is a 400 naming it, not the database's varchar(255) error as a 500 "pop failed"
    if (queue != null) Bodies.queueName("queue", queue);
    if (partition != null) Bodies.name("partition", partition);
    Config cfg = node.config();
    var q = new TypedQuery(ctx);
    int batch = q.i32("batch", 200);
    int partitions = q.i32("partitions", 1);
    boolean autoAck = q.bool("autoAck", false);
    boolean wait = q.bool("wait", false);
    long timeout = q.u64("timeout", cfg.pop().defaultTimeoutMs());
    int leaseSeconds = q.i32("leaseSeconds", 0);
    boolean conflation = q.bool("conflation", false);
    q.bool("autopilot", false);
    String group = q.str("consumerGroup");
    String namespace = q.str("namespace");
    String task = q.str("task");

    if (discovery && isEmpty(namespace) && isEmpty(task)) {
      throw ApiError.withBody(400, new JsonObject().put("success", false)
          .put("error", "namespace or task is required").put("messages", new JsonArray()));
    }
    if (conflation && isEmpty(group)) {
      throw ApiError.withBody(400, new JsonObject().put("success", false)
          .put("error", "conflation requires consumerGroup: last-value delivery is a named-group policy")
          .put("messages", new JsonArray()));
    }
    if (conflation && autoAck) {
      throw ApiError.withBody(400, new JsonObject().put("success", false)
          .put("error", "conflation cannot be combined with autoAck: the conflated batch must be acked")
          .put("messages", new JsonArray()));
    }

    if (node.maintenance().popMaintenance()) {
      // Pop maintenance: every pop is a 204 with no body (API.md §5.14).
      ErrorContract.noContent(ctx);
      return;
    }
    boolean queueMode = isEmpty(group) || QUEUE_MODE.equals(group);
    String effectiveGroup = queueMode ? QUEUE_MODE : group;
    String mode = "all";
    OffsetDateTime from = null;
    if (!queueMode) {
      String requested = ctx.request().getParam("subscriptionMode");
      mode = normaliseMode(requested == null ? cfg.pop().defaultSubscriptionMode() : requested);
      String sf = q.str("subscriptionFrom");
      if (sf != null && !sf.isBlank()) {
        if ("now".equalsIgnoreCase(sf.strip())) {
          mode = "new";
        } else {
          try {
            // parseable but beyond timestamptz: a 400, not a group registered from infinity that never receives
            from = IsoTime.inRange("subscriptionFrom", OffsetDateTime.parse(sf.strip()));
            mode = "timestamp";
          } catch (DateTimeParseException e) {
            // an unparseable subscriptionFrom is ignored (API.md §5.4)
          }
        }
      }
    }
    var cmd = new PopCommand(Tenancy.of(ctx), discovery ? null : queue, discovery ? null : partition,
        discovery && !isEmpty(namespace) ? namespace : null, discovery && !isEmpty(task) ? task : null,
        effectiveGroup, batch, partition != null ? 1 : partitions, autoAck, wait, timeout, leaseSeconds, mode, from);
    Bus.pop(vertx, cmd)
        .onSuccess(body -> {
          if (body == null) ErrorContract.noContent(ctx);
          else ErrorContract.send(ctx, 200, body);
        })
        .onFailure(ctx::fail);
  }

  /** {@code new}, {@code new-only}, {@code new_only}, {@code newonly} (any case) mean new; anything else means all. */
  static String normaliseMode(String m) {
    String v = m == null ? "" : m.strip().toLowerCase(Locale.ROOT);
    return switch (v) {
      case "new", "new-only", "new_only", "newonly" -> "new";
      default -> "all";
    };
  }

  private static boolean isEmpty(String s) {
    return s == null || s.isEmpty();
  }
}
