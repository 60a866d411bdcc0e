package io.queenvertx.http;

import io.queenvertx.boot.NodeContext;
import io.vertx.ext.web.RoutingContext;
import io.vertx.sqlclient.Tuple;

/**
 * The read-only status surface: resources overview / namespaces / tasks (API.md §5.8), the consumer-group GET routes
 * (§5.11) but the paged listing ({@link ConsumerGroupRoutes}) and status (§5.12, analytics excluded). Every route is
 * a tenant-scoped stored-procedure passthrough (§1.4); the figures and their definitions live in V5__status.sql.
 * Management parameters are read as strings and a number that does not parse falls back to its default
 * ({@code qint}, §1.7).
 */
final class StatusRoutes {
  private StatusRoutes() {}

  static void mount(RouteTable routes, NodeContext node) {
    routes.get("/api/v1/resources/overview", ctx -> QueueRoutes.readThrough(ctx, node,
        "SELECT queen.resources_overview($1)::text", Tuple.of(Tenancy.of(ctx)), "overview failed: "));
    routes.get("/api/v1/resources/namespaces", ctx -> QueueRoutes.readThrough(ctx, node,
        "SELECT queen.resources_namespaces($1)::text", Tuple.of(Tenancy.of(ctx)), "namespaces failed: "));
    routes.get("/api/v1/resources/tasks", ctx -> QueueRoutes.readThrough(ctx, node,
        "SELECT queen.resources_tasks($1)::text", Tuple.of(Tenancy.of(ctx)), "tasks failed: "));

    // Declared before /:group so "lagging" is never taken for a group name.
    routes.get("/api/v1/consumer-groups/lagging", ctx -> QueueRoutes.readThrough(ctx, node,
        "SELECT queen.consumer_groups_lagging($1, $2)::text",
        Tuple.of(Tenancy.of(ctx), qlong(ctx, "minLagSeconds", 3600)), "lagging failed: "));
    routes.get("/api/v1/consumer-groups/:group", ctx -> QueueRoutes.readThrough(ctx, node,
        "SELECT queen.consumer_group($1, $2)::text", Tuple.of(Tenancy.of(ctx), ctx.pathParam("group")),
        "consumer groups failed: "));

    routes.get("/api/v1/status", ctx -> QueueRoutes.readThrough(ctx, node,
        "SELECT queen.status($1, $2, $3, $4)::text",
        Tuple.of(Tenancy.of(ctx), param(ctx, "queue"), namespace(ctx), param(ctx, "task")), "status failed: "));
    routes.get("/api/v1/status/queues", ctx -> QueueRoutes.readThrough(ctx, node,
        "SELECT queen.status_queues($1, $2, $3, $4, $5, $6)::text",
        Tuple.of(Tenancy.of(ctx), param(ctx, "queue"), namespace(ctx), param(ctx, "task"),
            qint(ctx, "limit", 100), qint(ctx, "offset", 0)), "status queues failed: "));
    routes.get("/api/v1/status/queues/:queue", ctx -> QueueRoutes.readThrough(ctx, node,
        "SELECT queen.status_queue($1, $2)::text", Tuple.of(Tenancy.of(ctx), ctx.pathParam("queue")),
        "queue detail failed: "));
  }

  /** A filter value; absent or empty means no filter (the SQL treats NULL and '' alike). */
  static String param(RoutingContext ctx, String name) {
    String v = ctx.request().getParam(name);
    return v == null || v.isEmpty() ? null : v;
  }

  /** {@code namespace}, with {@code ns} as its alias (as on the message listing). */
  static String namespace(RoutingContext ctx) {
    String v = param(ctx, "namespace");
    return v != null ? v : param(ctx, "ns");
  }

  static int qint(RoutingContext ctx, String name, int def) {
    String v = ctx.request().getParam(name);
    if (v == null) return def;
    try {
      return Integer.parseInt(v.strip());
    } catch (NumberFormatException e) {
      return def;
    }
  }

  private static long qlong(RoutingContext ctx, String name, long def) {
    String v = ctx.request().getParam(name);
    if (v == null) return def;
    try {
      return Long.parseLong(v.strip());
    } catch (NumberFormatException e) {
      return def;
    }
  }
}
