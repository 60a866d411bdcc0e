package io.queenvertx.http.routes;

import io.queenvertx.http.server.RouteTable;
import io.queenvertx.http.server.Tenancy;
import io.queenvertx.kernel.ApiError;
import static io.queenvertx.http.routes.StatusRoutes.namespace;
import static io.queenvertx.http.routes.StatusRoutes.param;
import static io.queenvertx.http.routes.StatusRoutes.qint;

import io.queenvertx.node.NodeContext;
import io.vertx.core.Vertx;
import io.vertx.ext.web.RoutingContext;
import io.queenvertx.db.ReportProcedures.Listing;
import io.queenvertx.db.ReportProcedures.Report;
import java.util.Set;

/**
 * Queue depth (API.md §5.8), status analytics and the analytics views (§5.12). Every route is a tenant-scoped
 * stored-procedure passthrough (§1.4) over R__94_analytics.sql, which defines the figures; history comes from the
 * per-minute counter tables of V16. Windows are read by {@link Window}: {@code from} / {@code to} (ISO-8601, default
 * the last hour), refused with a 400 naming the field when unreadable or reversed. Management parameters such as
 * {@code limit} are read as strings, falling back to their default when they do not parse (§1.7), and are clamped to
 * a maximum so every answer stays bounded. The spool and refresh routes of §5.12 are in {@link StatsRoutes}.
 */
final class AnalyticsRoutes {
  static final Set<String> INTERVALS = Set.of("hour", "day", "week", "month");
  /** Calendar buckets one status/analytics answer may hold. */
  static final long MAX_INTERVAL_BUCKETS = 10_000;
  private static final String FAILED = "analytics failed: ";

  private AnalyticsRoutes() {}

  static void mount(RouteTable routes, NodeContext node, Vertx vertx) {
    routes.get("/api/v1/resources/queues/:queue/depth", ctx -> QueueRoutes.readThrough(ctx, node, "depth failed: ",
        Report.QUEUE_DEPTH, Tenancy.of(ctx), ctx.pathParam("queue"), param(ctx, "group")));
    routes.get("/api/v1/status/analytics", ctx -> statusAnalytics(ctx, node));

    routes.get("/api/v1/analytics/system-metrics", ctx -> {
      Window w = Window.of(ctx);
      sp(ctx, node, Report.ANALYTICS_SYSTEM_METRICS, w.from(), w.to(), w.bucketSeconds(), param(ctx, "hostname"),
          param(ctx, "workerId"));
    });
    routes.get("/api/v1/analytics/worker-metrics", ctx -> {
      Window w = Window.of(ctx);
      sp(ctx, node, Report.ANALYTICS_WORKER_METRICS, Tenancy.of(ctx), w.from(), w.to(), w.bucketSeconds(), param(ctx,
          "hostname"), param(ctx, "workerId"), param(ctx, "queue"));
    });
    routes.get("/api/v1/analytics/queue-ops", ctx -> {
      Window w = Window.of(ctx);
      sp(ctx, node, Report.ANALYTICS_QUEUE_OPS, Tenancy.of(ctx), w.from(), w.to(), w.bucketSeconds(), param(ctx,
          "queue"), namespace(ctx), param(ctx, "task"), limit(ctx, 50, 500));
    });
    routes.get("/api/v1/analytics/workload", ctx -> {
      Window w = Window.of(ctx);
      sp(ctx, node, Report.ANALYTICS_WORKLOAD, Tenancy.of(ctx), w.from(), w.to(), w.bucketSeconds(), param(ctx,
          "queue"), namespace(ctx), param(ctx, "task"));
    });
    routes.get("/api/v1/analytics/queue-parked-replicas", ctx -> {
      Window w = Window.of(ctx);
      sp(ctx, node, Report.ANALYTICS_PARKED_REPLICAS, Tenancy.of(ctx), w.from(), w.to(), w.bucketSeconds(), param(ctx,
          "queue"));
    });
    routes.get("/api/v1/analytics/retention", ctx -> {
      Window w = Window.of(ctx);
      sp(ctx, node, Report.ANALYTICS_RETENTION, Tenancy.of(ctx), w.from(), w.to(), w.bucketSeconds(), param(ctx,
          "queue"), limit(ctx, 50, 500));
    });
    routes.get("/api/v1/analytics/dlq-signatures", ctx -> {
      Window w = Window.of(ctx);
      sp(ctx, node, Report.ANALYTICS_DLQ_SIGNATURES, Tenancy.of(ctx), w.from(), w.to(), param(ctx, "queue"),
          group(ctx), limit(ctx, 50, 500));
    });
    routes.get("/api/v1/analytics/queue-lag", ctx -> {
      Window.of(ctx); // current figures: the window is checked for the contract's sake, not applied
      sp(ctx, node, Report.ANALYTICS_QUEUE_LAG, Tenancy.of(ctx), param(ctx, "queue"), group(ctx), limit(ctx, 100,
          1000));
    });
    routes.get("/api/v1/analytics/partition-liveness", ctx -> {
      Window.of(ctx);
      sp(ctx, node, Report.ANALYTICS_PARTITION_LIVENESS, Tenancy.of(ctx), param(ctx, "queue"), Math.max(1, qint(ctx,
          "idleSeconds", 300)), limit(ctx, 100, 1000));
    });
    // the primary's own figures (a replica would describe itself)
    routes.get("/api/v1/analytics/postgres-stats", ctx -> QueueRoutes.passthrough(ctx, node, FAILED,
        Report.ANALYTICS_POSTGRES_STATS));

    StatsRoutes.mount(routes, node, vertx);
  }

  private static void statusAnalytics(RoutingContext ctx, NodeContext node) {
    Window w = Window.of(ctx);
    String interval = param(ctx, "interval");
    if (interval == null) interval = "hour";
    if (!INTERVALS.contains(interval)) {
      throw ApiError.of(400, "interval must be one of hour, day, week, month");
    }
    long unitSeconds = switch (interval) {
      case "hour" -> 3_600L;
      case "day" -> 86_400L;
      case "week" -> 604_800L;
      default -> 2_419_200L; // 28 days: the shortest month, so the count is an upper bound
    };
    if (w.spanSeconds() / unitSeconds > MAX_INTERVAL_BUCKETS) {
      throw ApiError.of(400, "interval " + interval + " gives more than " + MAX_INTERVAL_BUCKETS
          + " buckets between from and to: choose a longer interval or a shorter window");
    }
    sp(ctx, node, Report.STATUS_ANALYTICS, Tenancy.of(ctx), w.from(), w.to(), interval, param(ctx, "queue"),
        namespace(ctx), param(ctx, "task"));
  }

  /** A read-only analytics procedure, on the read pool. */
  private static void sp(RoutingContext ctx, NodeContext node, Report report, Object... args) {
    QueueRoutes.readThrough(ctx, node, FAILED, report, args);
  }

  /** {@code consumerGroup}, with {@code group} as its alias. */
  private static String group(RoutingContext ctx) {
    String v = param(ctx, "consumerGroup");
    return v != null ? v : param(ctx, "group");
  }

  /** {@code limit}: its default when absent or unreadable, else clamped to [1, max]. */
  private static int limit(RoutingContext ctx, int def, int max) {
    return Math.min(Math.max(qint(ctx, "limit", def), 1), max);
  }
}
