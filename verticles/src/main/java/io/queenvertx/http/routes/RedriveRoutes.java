package io.queenvertx.http.routes;

import io.queenvertx.http.server.Bodies;
import io.queenvertx.http.server.ErrorContract;
import io.queenvertx.http.server.RouteTable;
import io.queenvertx.http.server.Tenancy;
import io.queenvertx.kernel.ApiError;
import io.queenvertx.db.SqlState;
import io.queenvertx.node.NodeContext;
import io.queenvertx.bus.Addresses;
import io.queenvertx.db.RedriveTasks;
import io.queenvertx.json.Timestamps;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import io.vertx.sqlclient.Row;
import java.util.UUID;

/**
 * Bulk redrive tasks (issue #10, additive to Queen's contract; Admin): start, inspect, list and cancel. The work is
 * done by {@code RedriveVerticle} on whichever node claims the task; the rows are {@link RedriveTasks}'.
 */
final class RedriveRoutes {
  /** maxPerSecond unset: no rate limit (stored as 0, rendered as null). */
  static final int NO_LIMIT = 0;
  static final int MAX_PER_SECOND = 10_000;

  private RedriveRoutes() {}

  static void mount(RouteTable routes, NodeContext node, Vertx vertx) {
    RedriveTasks tasks = node.db().redriveTasks();
    routes.post("/api/v1/dlq/redrive", ctx -> start(ctx, tasks, vertx));
    routes.get("/api/v1/dlq/redrive", ctx -> tasks.list(Tenancy.of(ctx))
        .onSuccess(rows -> {
          JsonArray list = new JsonArray();
          for (Row r : rows) list.add(render(r));
          ErrorContract.send(ctx, 200, new JsonObject().put("tasks", list));
        })
        .onFailure(e -> ctx.fail(ApiError.prefixed(500, "redrive failed: ", e))));
    routes.get("/api/v1/dlq/redrive/:taskId", ctx -> one(ctx, tasks, false));
    routes.post("/api/v1/dlq/redrive/:taskId/cancel", ctx -> one(ctx, tasks, true));
  }

  private static void start(RoutingContext ctx, RedriveTasks tasks, Vertx vertx) {
    JsonObject b = Bodies.object(ctx);
    if (!(b.getValue("queue") instanceof String queue) || queue.isBlank()) {
      throw ApiError.of(400, "queue is required");
    }
    Bodies.queueName("queue", queue.strip());
    String group = nonBlank(b, "consumerGroup", "consumerGroup", false);
    String partition = nonBlank(b, "partition", "partition", false);
    String destQueue = null;
    String destPartition = null;
    if (b.getValue("destination") instanceof JsonObject d) {
      destQueue = nonBlank(d, "queue", "destination.queue", true);
      destPartition = nonBlank(d, "partition", "destination.partition", false);
    } else if (b.getValue("destination") != null) {
      throw ApiError.of(400, "destination must be an object {queue?, partition?}");
    }
    int perSecond = NO_LIMIT;
    if (b.getValue("maxPerSecond") != null) {
      if (!(b.getValue("maxPerSecond") instanceof Number n) || n.intValue() < 1 || n.intValue() > MAX_PER_SECOND) {
        throw ApiError.of(400, "maxPerSecond must be an integer between 1 and " + MAX_PER_SECOND);
      }
      perSecond = n.intValue();
    }
    Long limit = null;
    if (b.getValue("limit") != null) {
      if (!(b.getValue("limit") instanceof Number n) || n.longValue() < 1) {
        throw ApiError.of(400, "limit must be a positive integer");
      }
      limit = n.longValue();
    }
    UUID tenant = Tenancy.of(ctx);
    tasks.create(new RedriveTasks.NewTask(tenant, queue.strip(), group, partition, destQueue, destPartition,
            perSecond, limit))
        .onSuccess(row -> {
          vertx.eventBus().send(Addresses.REDRIVE_NUDGE, "go");
          ErrorContract.send(ctx, 201, render(row));
        })
        .onFailure(e -> {
          if (SqlState.UNIQUE_VIOLATION.is(e)) {
            tasks.running(tenant, queue.strip())
                .onComplete(ar -> ErrorContract.send(ctx, 409, new JsonObject()
                    .put("error", "a redrive task is already running for this queue")
                    .put("taskId", ar.succeeded() && ar.result() != null ? ar.result().toString() : null)));
          } else {
            ctx.fail(ApiError.prefixed(500, "redrive failed: ", e));
          }
        });
  }

  /** Reads one task, cancelling it first when asked; an unknown or malformed id is 404. */
  private static void one(RoutingContext ctx, RedriveTasks tasks, boolean cancel) {
    UUID id = MessageRoutes.parseOrNull(ctx.pathParam("taskId"));
    if (id == null) throw ApiError.of(404, "Redrive task not found");
    UUID tenant = Tenancy.of(ctx);
    (cancel ? tasks.cancel(tenant, id) : tasks.get(tenant, id))
        .onSuccess(row -> {
          if (row == null) ctx.fail(ApiError.of(404, "Redrive task not found"));
          else ErrorContract.send(ctx, 200, render(row));
        })
        .onFailure(e -> ctx.fail(ApiError.prefixed(500, "redrive failed: ", e)));
  }

  /** An optional name: absent or null is null; otherwise a non-blank string within the name limits, stripped. */
  private static String nonBlank(JsonObject o, String key, String field, boolean queueName) {
    Object v = o.getValue(key);
    if (v == null) return null;
    if (!(v instanceof String s) || s.isBlank()) throw ApiError.of(400, field + " must be a non-empty name");
    String name = s.strip();
    return queueName ? Bodies.queueName(field, name) : Bodies.name(field, name);
  }

  static JsonObject render(Row r) {
    return new JsonObject()
        .put("taskId", r.getUUID("id").toString())
        .put("status", r.getString("status"))
        .put("queue", r.getString("queue"))
        .put("consumerGroup", r.getString("consumer_group"))
        .put("partition", r.getString("partition"))
        .put("destination", new JsonObject().put("queue", r.getString("dest_queue"))
            .put("partition", r.getString("dest_partition")))
        .put("maxPerSecond", r.getInteger("max_per_second") == NO_LIMIT ? null : r.getInteger("max_per_second"))
        .put("limit", r.getLong("max_rows"))
        .put("moved", r.getLong("moved"))
        .put("duplicate", r.getLong("duplicate"))
        .put("gone", r.getLong("gone"))
        .put("failed", r.getLong("failed"))
        .put("lastError", r.getString("last_error"))
        .put("owner", r.getString("owner"))
        .put("createdAt", Timestamps.millis(r.getOffsetDateTime("created_at")))
        .put("updatedAt", Timestamps.millis(r.getOffsetDateTime("updated_at")))
        .put("finishedAt", Timestamps.millis(r.getOffsetDateTime("finished_at")));
  }
}
