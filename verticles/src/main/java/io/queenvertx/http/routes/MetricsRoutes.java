package io.queenvertx.http.routes;

import io.queenvertx.http.server.ErrorContract;
import io.queenvertx.http.server.RouteTable;
import io.queenvertx.node.NodeContext;
import io.queenvertx.metrics.BrokerMetrics;
import io.vertx.core.json.JsonObject;
import io.queenvertx.stats.Exposition;
import io.queenvertx.stats.QueenSeries;
import io.queenvertx.db.StatsStore;

/**
 * {@code GET /metrics} (Queen's JSON document) and {@code GET /metrics/prometheus} (text exposition: the node's
 * Micrometer registry, with Vert.x HTTP, pool and event-bus series, the node's own Queen series, then a best-effort
 * database block, {@link QueenSeries}: Queen's cluster counters, per-queue figures of the last closed minute, depth,
 * lag and dead letters, and per consumer group lag). With {@code QUEEN_METRICS_HIDE_QUEUES} (on by default with
 * tenancy) the database block names no queue and no group: one {@code scope="cluster"} sample per family instead.
 * {@code /metrics} names none anyway. The page's SQL lives in {@link StatsStore} (procedures of R__92_stats.sql).
 */
final class MetricsRoutes {
  static final String PROMETHEUS_TYPE = "text/plain; version=0.0.4; charset=utf-8";

  private MetricsRoutes() {}

  static void mount(RouteTable routes, NodeContext node) {
    BrokerMetrics m = node.metrics();
    StatsStore store = node.db().stats();
    routes.get("/metrics", ctx -> ctx.vertx().executeBlocking(() -> document(node, m), false).onComplete(ar -> {
      if (ar.succeeded()) ErrorContract.send(ctx, 200, ar.result().toBuffer());
      else ctx.fail(ar.cause());
    }));
    routes.get("/metrics/prometheus", ctx -> {
      StringBuilder out = new StringBuilder(m.registry().scrape());
      inProcess(new Exposition(out), node, m);
      QueenSeries.append(out, store, node.config().exposure().hideQueueMetrics(), node.config().stats().baseUnits())
          .onComplete(ar -> ctx.response().putHeader("content-type", PROMETHEUS_TYPE)
              .putHeader("cache-control", "no-cache").end(out.toString()));
    });
  }

  /** This node's own Queen series: the push maintenance switch, the pool, heap and uptime. */
  private static void inProcess(Exposition e, NodeContext node, BrokerMetrics m) {
    int size = node.config().postgres().poolSize();
    long active = m.sqlPoolGauge("vertx.pool.in.use").orElse(0);
    // connections the pool holds open and has not lent out; never negative while the pool grows or shrinks
    long idle = Math.max(0, node.db().connections() - active);
    var heap = java.lang.management.ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
    e.single("queen_maintenance_mode_enabled", "gauge", "push maintenance switch",
            node.maintenance().pushMaintenance() ? 1 : 0)
        .single("queen_db_pool_size", "gauge", "configured pool size", size)
        .single("queen_db_pool_active", "gauge", "pool connections lent out", active)
        .single("queen_db_pool_idle", "gauge", "pool connections open and not lent out", idle)
        .single("queen_process_uptime_seconds", "gauge", "seconds since the node started", m.uptimeSeconds())
        .single("queen_process_heap_used_bytes", "gauge", "JVM heap in use", heap.getUsed())
        .single("queen_process_heap_committed_bytes", "gauge", "JVM heap committed", heap.getCommitted());
  }

  /**
   * Queen's {@code /metrics} document with every field computed from a source (API.md §5.1), and the fields this JVM
   * has no counterpart for left out. Requests and messages: push + pop + ack counts of this node and their
   * per-second rate over about the last minute. Database: the configured pool size and, from the Vert.x pool
   * metrics, requests waiting for a connection and connections lent out ({@code activeConnections}, our addition;
   * Queen's {@code idleConnections} is left out: the pool does not say how many connections it holds open).
   * Memory in bytes: process RSS (Linux {@code VmRSS}), committed and used heap, and NIO buffer memory as
   * {@code external} ({@code arrayBuffers} left out). CPU: user and kernel time of the process in microseconds
   * (Linux {@code /proc/self/stat}), like Node's {@code process.cpuUsage()}. Reads /proc files: runs on a worker.
   */
  static JsonObject document(NodeContext node, BrokerMetrics m) {
    var rt = Runtime.getRuntime();
    var database = new JsonObject().put("poolSize", node.config().postgres().poolSize());
    m.sqlPoolGauge("vertx.pool.queue.pending").ifPresent(v -> database.put("waitingRequests", v));
    m.sqlPoolGauge("vertx.pool.in.use").ifPresent(v -> database.put("activeConnections", v));
    var memory = new JsonObject();
    BrokerMetrics.residentSetBytes().ifPresent(v -> memory.put("rss", v));
    memory.put("heapTotal", rt.totalMemory()).put("heapUsed", rt.totalMemory() - rt.freeMemory())
        .put("external", BrokerMetrics.bufferPoolBytes());
    var doc = new JsonObject()
        .put("uptime", m.uptimeSeconds())
        .put("requests", new JsonObject().put("total", m.requestsTotal()).put("rate", m.requestRate()))
        .put("messages", new JsonObject().put("total", m.messagesTotal()).put("rate", m.messageRate()))
        .put("database", database)
        .put("memory", memory);
    long[] cpu = BrokerMetrics.cpuMicros();
    if (cpu != null) doc.put("cpu", new JsonObject().put("user", cpu[0]).put("system", cpu[1]));
    return doc;
  }
}
