package io.queenvertx.http.routes;

import io.queenvertx.kernel.Defaults;
import io.queenvertx.http.server.Bodies;
import io.queenvertx.http.server.ErrorContract;
import io.queenvertx.http.server.IsoTime;
import io.queenvertx.http.server.RouteTable;
import io.queenvertx.http.server.Tenancy;
import io.queenvertx.kernel.ApiError;
import io.queenvertx.kernel.ProcedureResult;
import io.queenvertx.node.NodeContext;
import io.queenvertx.bus.Addresses;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import io.queenvertx.db.ReportProcedures.Listing;
import io.queenvertx.db.ReportProcedures.Report;
import java.time.OffsetDateTime;
import java.util.UUID;

/**
 * Consumer groups (API.md §5.11): the listing, paged by name ({@link Paging}: {@value #LIST_PAGE} groups unless
 * {@code limit} says otherwise, at most {@value #LIST_MAX}; the next page's cursor in {@code X-Next-Cursor}; the body
 * stays Queen's array), and control: delete a group's cursors (Admin), store its durable subscription timestamp, and
 * seek it on a queue or one partition (ReadWrite). The listing is {@code queen.consumer_groups} (R__90_status.sql),
 * the control the procedures of R__72_consumer_groups.sql, all tenant-scoped by name; the other GET routes of the
 * same prefix are in {@link StatusRoutes}.
 *
 * <p>A seek or delete moves cursors backwards or away, so the long polls parked on the queue are woken (the same
 * announcement a push makes) and retry at once instead of after their back-off.
 */
final class ConsumerGroupRoutes {
  static final String SEEK_TARGET_REQUIRED = "Must specify toEnd=true or a timestamp";
  static final String SUBSCRIPTION_REQUIRED = "subscriptionTimestamp is required";
  static final String QUEUE_MODE = Defaults.QUEUE_MODE_GROUP;
  static final int LIST_PAGE = 100;
  static final int LIST_MAX = 1000;

  private ConsumerGroupRoutes() {}

  static void mount(RouteTable routes, NodeContext node, Vertx vertx) {
    routes.get("/api/v1/consumer-groups", ctx -> Paging.passthrough(ctx, node, "consumer groups failed: ",
        Listing.CONSUMER_GROUPS, Tenancy.of(ctx), Paging.after(ctx), Paging.limit(ctx, LIST_PAGE, LIST_MAX)));
    routes.delete("/api/v1/consumer-groups/:group", ctx -> delete(ctx, node, vertx, null));
    routes.post("/api/v1/consumer-groups/:group/subscription", ctx -> subscription(ctx, node));
    routes.delete("/api/v1/consumer-groups/:group/queues/:queue",
        ctx -> delete(ctx, node, vertx, Bodies.queueName("queue", ctx.pathParam("queue"))));
    routes.post("/api/v1/consumer-groups/:group/queues/:queue/seek", ctx -> seek(ctx, node, vertx, null));
    routes.post("/api/v1/consumer-groups/:group/queues/:queue/partitions/:partition/seek",
        ctx -> seek(ctx, node, vertx, Bodies.name("partition", ctx.pathParam("partition"))));
  }

  private static String group(RoutingContext ctx) {
    return Bodies.name("consumerGroup", ctx.pathParam("group"));
  }

  // ---- delete -----------------------------------------------------------------------------------------------

  private static void delete(RoutingContext ctx, NodeContext node, Vertx vertx, String queue) {
    UUID tenant = Tenancy.of(ctx);
    String group = group(ctx);
    boolean deleteMetadata = flag(ctx.request().getParam("deleteMetadata"), true);
    node.db().groups().delete(tenant, group, queue, deleteMetadata)
        .onSuccess(r -> {
          Object touched = r.remove("queues");
          if (touched instanceof JsonArray names) {
            for (Object q : names) wake(vertx, tenant, (String) q);
          }
          // Always 200 with a body: the JS client reads a 204 as null (API.md §5.11).
          ErrorContract.send(ctx, 200, r);
        })
        .onFailure(e -> ctx.fail(ApiError.prefixed(500, "delete failed: ", e)));
  }

  /** {@code qbool} of API.md §1.7: true/1/yes, false/0/no; anything else is the default. */
  static boolean flag(String v, boolean def) {
    if (v == null) return def;
    return switch (v.strip().toLowerCase(java.util.Locale.ROOT)) {
      case "true", "1", "yes" -> true;
      case "false", "0", "no" -> false;
      default -> def;
    };
  }

  // ---- subscription -----------------------------------------------------------------------------------------

  private static void subscription(RoutingContext ctx, NodeContext node) {
    String group = group(ctx);
    JsonObject b = Bodies.optionalObject(ctx);
    Object ts = b == null ? null : b.getValue("subscriptionTimestamp");
    if (ts == null || (ts instanceof String s && s.isBlank())) throw ApiError.of(400, SUBSCRIPTION_REQUIRED);
    OffsetDateTime at = IsoTime.parse("subscriptionTimestamp", ts);
    if (QUEUE_MODE.equals(group)) {
      throw ApiError.of(400, "consumerGroup " + QUEUE_MODE
          + " takes no subscription: queue mode always starts at the oldest retained message");
    }
    node.db().reports().text(Report.CONSUMER_GROUP_SUBSCRIPTION, Tenancy.of(ctx), group, at)
        .onSuccess(text -> {
          ErrorContract.send(ctx, ProcedureResult.statusOf(text), Buffer.buffer(text));
        })
        .onFailure(e -> ctx.fail(ApiError.prefixed(500, "subscription failed: ", e)));
  }

  // ---- seek -------------------------------------------------------------------------------------------------

  /**
   * {@code {"toEnd":true}} or {@code {"timestamp":"<ISO>"}} (toEnd wins when both are given). On the partition route
   * ({@code partition} set) an empty body means toEnd; on the queue route it is not JSON, so "bad body".
   */
  private static void seek(RoutingContext ctx, NodeContext node, Vertx vertx, String partition) {
    UUID tenant = Tenancy.of(ctx);
    String group = group(ctx);
    String queue = Bodies.queueName("queue", ctx.pathParam("queue"));
    JsonObject b = seekBody(ctx.body().buffer(), partition != null);
    Object toEnd = b.getValue("toEnd");
    if (toEnd != null && !(toEnd instanceof Boolean)) throw ApiError.of(400, "toEnd must be a boolean");
    Object ts = b.getValue("timestamp");
    boolean end = Boolean.TRUE.equals(toEnd);
    OffsetDateTime at = end || ts == null ? null : IsoTime.parse("timestamp", ts);
    if (!end && at == null) throw ApiError.of(400, SEEK_TARGET_REQUIRED);
    node.db().groups().seek(tenant, group, queue, partition, end, at)
        .onSuccess(r -> {
          int status = ProcedureResult.statusOf(r.encode());
          if (status == 200) wake(vertx, tenant, queue);
          ErrorContract.send(ctx, status, r);
        })
        .onFailure(e -> ctx.fail(ApiError.prefixed(500, "seek failed: ", e)));
  }

  /** The seek body as an object; anything that is not a JSON object is 400 {@code bad body} (API.md §5.11). */
  static JsonObject seekBody(Buffer raw, boolean emptyMeansToEnd) {
    if (raw == null || raw.toString().isBlank()) {
      if (emptyMeansToEnd) return new JsonObject().put("toEnd", true);
      throw ApiError.of(400, "bad body");
    }
    Object v;
    try {
      v = Bodies.value(raw);
    } catch (ApiError notJson) {
      throw ApiError.of(400, "bad body");
    }
    if (v instanceof JsonObject o) return o;
    throw ApiError.of(400, "bad body");
  }

  /** Wakes every long poll parked on (tenant, queue), on every node, as a push landing there would. */
  private static void wake(Vertx vertx, UUID tenant, String queue) {
    vertx.eventBus().publish(Addresses.LANDED,
        new JsonObject().put("tenant", tenant.toString()).put("queue", queue).put("cursorMoved", true));
  }
}
