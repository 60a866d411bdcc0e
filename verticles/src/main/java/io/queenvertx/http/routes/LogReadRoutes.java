package io.queenvertx.http.routes;

import io.queenvertx.db.ReportProcedures.Report;
import io.queenvertx.http.server.Bodies;
import io.queenvertx.http.server.IsoTime;
import io.queenvertx.http.server.RouteTable;
import io.queenvertx.http.server.Tenancy;
import io.queenvertx.kernel.ApiError;
import io.queenvertx.node.NodeContext;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.time.Instant;
import java.time.ZoneOffset;

/**
 * The reads the 2.x clients and dashboards use (queen2-contract.md §7): partitions by backlog, a queue's sizes, what
 * changed since a time, the offset of a time, a group's positions. Each validates its input here (400 naming the
 * field) and answers one SQL function's JSON (R__50_queues, R__62_log_reads, R__72_consumer_groups) on the read pool.
 * None of them leases or moves a cursor.
 */
final class LogReadRoutes {
  static final int MAX_CHANGED_ENTRIES = 64;
  static final int MAX_OFFSET_ENTRIES = 1024;

  private LogReadRoutes() {}

  static void mount(RouteTable routes, NodeContext node) {
    routes.get("/api/v1/resources/partitions", ctx -> {
      var q = new TypedQuery(ctx);
      String queue = q.str("queue");
      if (queue != null && queue.isEmpty()) queue = null;
      if (queue != null) Bodies.queueName("queue", queue);
      QueueRoutes.readThrough(ctx, node, "partitions failed: ", Report.RESOURCES_PARTITIONS, Tenancy.of(ctx), queue,
          q.i32("limit", 610));
    });
    routes.get("/api/v1/resources/queues/:queue/sizes", ctx -> QueueRoutes.readThrough(ctx, node, "sizes failed: ",
        Report.QUEUE_SIZES, Tenancy.of(ctx), Bodies.queueName("queue", ctx.pathParam("queue"))));
    routes.post("/api/v1/partitions/changed", ctx -> changed(ctx, node));
    routes.post("/api/v1/fetch/offsets", ctx -> offsets(ctx, node));
    routes.post("/api/v1/consumer-groups/positions", ctx -> positions(ctx, node));
  }

  private static void changed(RoutingContext ctx, NodeContext node) {
    JsonArray in = entries(Bodies.object(ctx), true, MAX_CHANGED_ENTRIES);
    JsonArray out = new JsonArray();
    for (int i = 0; i < in.size(); i++) {
      JsonObject e = in.getJsonObject(i);
      String at = "entries[" + i + "].";
      JsonObject n = new JsonObject().put("queue", queue(e, at));
      if (e.getValue("since") != null) {
        n.put("since", IsoTime.parse(at + "since", e.getValue("since")).toString());
      }
      Object after = e.getValue("after");
      if (after != null && !(after instanceof String)) throw ApiError.of(400, at + "after must be a cursor string");
      n.put("after", after);
      Object limit = e.getValue("limit");
      if (limit != null && !(limit instanceof Integer l && l >= 1)) {
        throw ApiError.of(400, at + "limit must be an integer of at least 1");
      }
      n.put("limit", limit);
      out.add(n);
    }
    QueueRoutes.readThrough(ctx, node, "partitions/changed failed: ", Report.PARTITIONS_CHANGED, Tenancy.of(ctx),
        out);
  }

  private static void offsets(RoutingContext ctx, NodeContext node) {
    JsonArray in = entries(Bodies.object(ctx), true, MAX_OFFSET_ENTRIES);
    JsonArray out = new JsonArray();
    for (int i = 0; i < in.size(); i++) {
      JsonObject e = in.getJsonObject(i);
      String at = "entries[" + i + "].";
      Object ts = e.getValue("timestamp");
      String time;
      if (ts instanceof Number n && n.longValue() >= 0) {
        time = Instant.ofEpochMilli(n.longValue()).atOffset(ZoneOffset.UTC).toString();
      } else if (ts instanceof String) {
        time = IsoTime.parse(at + "timestamp", ts).toString();
      } else {
        throw ApiError.of(400, at + "timestamp is required: epoch milliseconds or an ISO-8601 date-time");
      }
      out.add(new JsonObject().put("queue", queue(e, at)).put("partition", partition(e, at)).put("timestamp", time));
    }
    QueueRoutes.readThrough(ctx, node, "fetch/offsets failed: ", Report.FETCH_OFFSETS, Tenancy.of(ctx), out);
  }

  private static void positions(RoutingContext ctx, NodeContext node) {
    JsonObject b = Bodies.object(ctx);
    if (!(b.getValue("consumerGroup") instanceof String group) || group.isEmpty()) {
      throw ApiError.of(400, "consumerGroup is required");
    }
    Bodies.name("consumerGroup", group);
    JsonArray out = null;
    if (b.getValue("entries") != null) {
      JsonArray in = entries(b, true, MAX_OFFSET_ENTRIES);
      out = new JsonArray();
      for (int i = 0; i < in.size(); i++) {
        JsonObject e = in.getJsonObject(i);
        String at = "entries[" + i + "].";
        out.add(new JsonObject().put("queue", queue(e, at)).put("partition", partition(e, at)));
      }
    }
    QueueRoutes.readThrough(ctx, node, "positions failed: ", Report.CONSUMER_GROUP_POSITIONS, Tenancy.of(ctx),
        group, out);
  }

  /** {@code entries}: an array of objects, at most {@code max}; else 400 naming it. */
  static JsonArray entries(JsonObject b, boolean required, int max) {
    Object v = b.getValue("entries");
    if (!(v instanceof JsonArray a) || (required && a.isEmpty())) {
      throw ApiError.of(400, "entries must be a non-empty array");
    }
    if (a.size() > max) throw ApiError.of(400, "entries holds more than " + max + " entries");
    for (int i = 0; i < a.size(); i++) {
      if (!(a.getValue(i) instanceof JsonObject)) throw ApiError.of(400, "entries[" + i + "] must be an object");
    }
    return a;
  }

  static String queue(JsonObject e, String at) {
    if (!(e.getValue("queue") instanceof String q) || q.isEmpty()) throw ApiError.of(400, at + "queue is required");
    return Bodies.queueName(at + "queue", q);
  }

  /** {@code partition}: "Default" when absent; a number is a name. */
  static String partition(JsonObject e, String at) {
    Object p = e.getValue("partition");
    if (p == null) return "Default";
    if (p instanceof Number n) return n.toString();
    if (!(p instanceof String s) || s.isEmpty()) throw ApiError.of(400, at + "partition must be a name");
    return Bodies.name(at + "partition", s);
  }
}
