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
import io.queenvertx.consumer.Autopilot;
import io.vertx.core.Future;
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
    Integer batchParam = q.str("batch") == null ? null : q.i32("batch", 200);
    Integer partitionsParam = q.str("partitions") == null ? null : q.i32("partitions", 1);
    boolean autoAckParam = q.bool("autoAck", false);
    boolean commitOnDelivery = q.bool("commitOnDelivery", false);
    boolean autoAck = autoAckParam || commitOnDelivery;   // 2.0.2's name for autoAck (queen2-contract.md §6.1)
    boolean wait = q.bool("wait", false);
    long timeout = q.u64("timeout", cfg.pop().defaultTimeoutMs());
    int leaseSeconds = q.i32("leaseSeconds", 0);
    boolean conflation = q.bool("conflation", false);
    boolean autopilotAsked = q.bool("autopilot", false);
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
          .put("error", "conflation cannot be combined with autoAck or commitOnDelivery: the conflated batch must be"
              + " acked")
          .put("messages", new JsonArray()));
    }

    if (node.maintenance().popMaintenance()) {
      // Pop maintenance: every pop is a 204 with no body (API.md §5.14), a conflating one 200 paused.
      var paused = PopModes.paused(conflation);
      if (paused == null) ErrorContract.noContent(ctx);
      else ErrorContract.send(ctx, 200, paused);
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
    var tenant = Tenancy.of(ctx);
    var controller = Autopilot.of(vertx);
    String target = discovery ? null : queue;
    var sizing = PopModes.sizing(node, controller, tenant, target, effectiveGroup, autopilotAsked, batchParam,
        partitionsParam, leaseSeconds);
    int batch = sizing != null ? sizing.batch() : batchParam != null ? batchParam : 200;
    int partitions = sizing != null ? sizing.partitions() : partitionsParam != null ? partitionsParam : 1;
    if (conflation) {
      // one message per partition: the partitions size a conflating pop (partitions when given, else the batch the
      // caller set, else the autopilot's choice), <= 64; a size the caller set is never second-guessed (the 2.x
      // client sends autopilot=true with its own batch when it names no partitions)
      int asked = partitionsParam != null ? partitionsParam : batchParam != null ? batchParam
          : sizing != null ? sizing.partitions() : batch;
      partitions = Math.min(asked, 64);
      batch = partitions;
      if (sizing != null) sizing = new PopCommand.Autopilot(partitions, batch);
    }
    var cmd = new PopCommand(tenant, target, discovery ? null : partition,
        discovery && !isEmpty(namespace) ? namespace : null, discovery && !isEmpty(task) ? task : null,
        effectiveGroup, batch, partition != null ? 1 : partitions, autoAck, wait, timeout, leaseSeconds, mode, from,
        conflation, sizing);
    Bus.pop(vertx, cmd)
        .compose(body -> body != null ? Future.succeededFuture((Object) body)
            : PopModes.empty(node, controller, cmd).map(o -> (Object) o))
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
