package io.queenvertx.http;

import io.queenvertx.boot.NodeContext;
import io.queenvertx.bus.Addresses;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import io.vertx.sqlclient.Tuple;
import java.util.Set;
import java.util.regex.Pattern;

/** Queue configuration (API.md §5.2) and the queue resources routes (§5.8). */
final class QueueRoutes {
  private static final Set<String> NOT_OPTIONS = Set.of("queue", "options", "mode");
  private static final Pattern SINK_HOLD = Pattern.compile("^[A-Za-z0-9._-]{0,64}$");

  private QueueRoutes() {}

  static void mount(RouteTable routes, NodeContext node, Vertx vertx) {
    routes.post("/api/v1/configure", ctx -> configure(ctx, node, vertx));
    routes.get("/api/v1/resources/queues", ctx -> passthrough(ctx, node,
        "SELECT queen.get_queues_v1($1)::text", Tuple.of(Tenancy.of(ctx)), "list failed: "));
    routes.get("/api/v1/resources/queues/:queue", ctx -> passthrough(ctx, node,
        "SELECT queen.get_queue_v1($1, $2)::text", Tuple.of(Tenancy.of(ctx), ctx.pathParam("queue")), "get failed: "));
    routes.delete("/api/v1/resources/queues/:queue", ctx -> deleteQueue(ctx, node, vertx));
  }

  private static void configure(RoutingContext ctx, NodeContext node, Vertx vertx) {
    JsonObject b = Bodies.object(ctx);
    if (!(b.getValue("queue") instanceof String queue)) throw ApiError.of(400, "queue is required");
    Object modeValue = b.getValue("mode");
    String mode;
    if (modeValue == null) mode = "merge";
    else if ("merge".equals(modeValue) || "replace".equals(modeValue)) mode = (String) modeValue;
    else {
      throw ApiError.of(400, "mode must be \"merge\" or \"replace\", got " + io.vertx.core.json.Json.encode(modeValue));
    }
    JsonObject options;
    if (b.getValue("options") instanceof JsonObject o) {
      options = o.copy();
    } else {
      options = new JsonObject();
      for (String k : b.fieldNames()) if (!NOT_OPTIONS.contains(k)) options.put(k, b.getValue(k));
    }
    // A top-level namespace/task folds in only as a non-empty string the bag lacks (the JS client sends null).
    for (String k : new String[] {"namespace", "task"}) {
      if (b.getValue(k) instanceof String s && !s.isEmpty() && !options.containsKey(k)) options.put(k, s);
    }
    options.remove("replace");
    if (options.containsKey("retentionSinkHold") && options.getValue("retentionSinkHold") != null) {
      Object v = options.getValue("retentionSinkHold");
      if (!(v instanceof String s) || !SINK_HOLD.matcher(s).matches()) {
        throw ApiError.withBody(400, new JsonObject()
            .put("error", "retentionSinkHold must match ^[A-Za-z0-9._-]{0,64}$").put("invalid", "retentionSinkHold"));
      }
    }
    if (options.getValue("retentionSinkHoldMaxSeconds") instanceof Number n
        && (n.longValue() < 60 || n.longValue() > 31_536_000L)) {
      throw ApiError.withBody(400, new JsonObject()
          .put("error", "retentionSinkHoldMaxSeconds must be between 60 and 31536000")
          .put("invalid", "retentionSinkHoldMaxSeconds"));
    }
    if (Boolean.TRUE.equals(options.getValue("encryptionEnabled")) && node.cipher().isEmpty()) {
      // Never a silent downgrade to plaintext (issue #5): refuse the flag when the broker has no key.
      throw ApiError.of(400, "encryptionEnabled requires QUEEN_ENCRYPTION_KEY (64 hex characters) on the broker");
    }
    var tenant = Tenancy.of(ctx);
    node.pool().preparedQuery("SELECT queen.configure_queue_v1($1, $2, $3::text::jsonb, $4)::text")
        .execute(Tuple.of(tenant, queue, options.encode(), mode))
        .onSuccess(rows -> {
          vertx.eventBus().publish(Addresses.QUEUE_CHANGED,
              new JsonObject().put("tenant", tenant.toString()).put("queue", queue));
          String text = rows.iterator().next().getString(0);
          ErrorContract.send(ctx, ProcedureResult.statusOf(text), Buffer.buffer(text));
        })
        .onFailure(e -> ctx.fail(ApiError.prefixed(500, "configure failed: ", e)));
  }

  private static void deleteQueue(RoutingContext ctx, NodeContext node, Vertx vertx) {
    var tenant = Tenancy.of(ctx);
    String queue = ctx.pathParam("queue");
    node.pool().preparedQuery("SELECT queen.delete_queue_v1($1, $2)")
        .execute(Tuple.of(tenant, queue))
        .onSuccess(rows -> {
          JsonObject r = (JsonObject) rows.iterator().next().getValue(0);
          boolean existed = r.getBoolean("existed", false);
          vertx.eventBus().publish(Addresses.QUEUE_CHANGED, new JsonObject().put("tenant", tenant.toString())
              .put("queue", queue).put("partitionIds", r.getJsonArray("partitionIds", new JsonArray())));
          // The SDKs delete before create: never 204 or 404 here (API.md §5.8).
          var body = new JsonObject().put("deleted", existed).put("queue", queue).put("existed", existed);
          if (!existed) body.put("message", "Queue not found, nothing was deleted");
          ErrorContract.send(ctx, 200, body);
        })
        .onFailure(e -> ctx.fail(ApiError.prefixed(500, "delete failed: ", e)));
  }

  /** A stored procedure's JSON, verbatim, with its status derived by {@link ProcedureResult}. */
  static void passthrough(RoutingContext ctx, NodeContext node, String sql, Tuple args, String prefix) {
    node.pool().preparedQuery(sql).execute(args)
        .onSuccess(rows -> {
          String text = rows.iterator().next().getString(0);
          ErrorContract.send(ctx, ProcedureResult.statusOf(text), Buffer.buffer(text == null ? "null" : text));
        })
        .onFailure(e -> ctx.fail(ApiError.prefixed(500, prefix, e)));
  }

}
