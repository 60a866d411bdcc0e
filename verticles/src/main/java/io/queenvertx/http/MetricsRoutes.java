package io.queenvertx.http;

import io.queenvertx.boot.NodeContext;
import io.queenvertx.metrics.BrokerMetrics;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;

/**
 * {@code GET /metrics} (Queen's JSON document) and {@code GET /metrics/prometheus} (text exposition: the node's
 * Micrometer registry, with Vert.x HTTP, pool and event-bus series, plus a best-effort database block of per-queue
 * depth and lag and the DLQ depth). With {@code QUEEN_METRICS_HIDE_QUEUES} (on by default with tenancy) the database
 * block names no queue: depth and DLQ rows summed over all queues, the worst lag. {@code /metrics} names none anyway.
 */
final class MetricsRoutes {
  static final String PROMETHEUS_TYPE = "text/plain; version=0.0.4; charset=utf-8";
  /** Per queue: name, depth after the queue-mode cursor, age of the oldest unconsumed segment, DLQ rows. */
  private static final String PER_QUEUE = """
      SELECT q.name,
             COALESCE(sum(GREATEST(p.last_offset - GREATEST(c.committed, p.log_start - 1), 0)), 0) AS depth,
             COALESCE(EXTRACT(EPOCH FROM now() - min(s.created_at)), 0) AS lag_seconds,
             (SELECT count(*) FROM queen.log_dlq d JOIN queen.log_partitions dp ON dp.id = d.partition_id
               WHERE dp.queue_id = q.id) AS dlq
        FROM queen.queues q
        LEFT JOIN queen.log_partitions p ON p.queue_id = q.id
        LEFT JOIN queen.log_consumers c ON c.partition_id = p.id AND c.consumer_group = '__QUEUE_MODE__'
        LEFT JOIN LATERAL (SELECT created_at FROM queen.log_segments s WHERE s.partition_id = p.id
                             AND s.end_offset > COALESCE(c.committed, -1) ORDER BY s.base_offset LIMIT 1) s ON true
       GROUP BY q.id, q.name""";
  private static final String DB_BLOCK = PER_QUEUE + "\n ORDER BY q.name\n LIMIT 1000";
  /** The same figures summed over every queue (depth and DLQ rows) or at their worst (lag), without names. */
  private static final String TOTALS = "SELECT COALESCE(sum(depth), 0)::int8, COALESCE(max(lag_seconds), 0)::float8,"
      + " COALESCE(sum(dlq), 0)::int8 FROM (" + PER_QUEUE + ") per_queue";

  private MetricsRoutes() {}

  static void mount(RouteTable routes, NodeContext node) {
    BrokerMetrics m = node.metrics();
    routes.get("/metrics", ctx -> ctx.vertx().executeBlocking(() -> document(node, m), false).onComplete(ar -> {
      if (ar.succeeded()) ErrorContract.send(ctx, 200, ar.result().toBuffer());
      else ctx.fail(ar.cause());
    }));
    routes.get("/metrics/prometheus", ctx -> {
      StringBuilder out = new StringBuilder(m.registry().scrape());
      out.append("# HELP queen_maintenance_mode_enabled push maintenance switch\n")
          .append("# TYPE queen_maintenance_mode_enabled gauge\n")
          .append("queen_maintenance_mode_enabled ").append(node.maintenance().pushMaintenance() ? 1 : 0).append('\n')
          .append("# HELP queen_db_pool_size configured pool size\n# TYPE queen_db_pool_size gauge\n")
          .append("queen_db_pool_size ").append(node.config().postgres().poolSize()).append('\n');
      boolean hideQueues = node.config().exposure().hideQueueMetrics();
      node.pool().query(hideQueues ? TOTALS : DB_BLOCK).execute().onComplete(ar -> {
        if (ar.succeeded() && hideQueues) {
          // QUEEN_METRICS_HIDE_QUEUES: the page is public, queue names (other tenants' among them) are not
          Row r = ar.result().iterator().next();
          out.append("# HELP queen_queue_depth messages after the queue-mode cursor, all queues\n")
              .append("# TYPE queen_queue_depth gauge\n")
              .append("queen_queue_depth{scope=\"cluster\"} ").append(r.getLong(0)).append('\n')
              .append("# HELP queen_queue_lag_seconds age of the oldest unconsumed segment, all queues\n")
              .append("# TYPE queen_queue_lag_seconds gauge\n")
              .append("queen_queue_lag_seconds{scope=\"cluster\"} ").append(r.getDouble(1)).append('\n')
              .append("# HELP queen_dlq_depth dead-letter rows\n# TYPE queen_dlq_depth gauge\n")
              .append("queen_dlq_depth{scope=\"cluster\"} ").append(r.getLong(2)).append('\n');
        } else if (ar.succeeded()) {
          long dlqTotal = 0;
          StringBuilder depth = new StringBuilder("# HELP queen_queue_depth messages after the queue-mode cursor\n"
              + "# TYPE queen_queue_depth gauge\n");
          StringBuilder lag = new StringBuilder("# HELP queen_queue_lag_seconds age of the oldest unconsumed segment\n"
              + "# TYPE queen_queue_lag_seconds gauge\n");
          StringBuilder dlq = new StringBuilder("# HELP queen_dlq_depth_by_queue dead-letter rows per queue\n"
              + "# TYPE queen_dlq_depth_by_queue gauge\n");
          for (Row r : ar.result()) {
            String label = "{queue=\"" + escape(r.getString(0)) + "\"}";
            depth.append("queen_queue_depth").append(label).append(' ').append(r.getLong(1)).append('\n');
            lag.append("queen_queue_lag_seconds").append(label).append(' ')
                .append(r.getNumeric(2).doubleValue()).append('\n');
            dlq.append("queen_dlq_depth_by_queue").append(label).append(' ').append(r.getLong(3)).append('\n');
            dlqTotal += r.getLong(3);
          }
          out.append(depth).append(lag).append(dlq)
              .append("# HELP queen_dlq_depth dead-letter rows\n# TYPE queen_dlq_depth gauge\n")
              .append("queen_dlq_depth{scope=\"cluster\"} ").append(dlqTotal).append('\n');
        }
        ctx.response().putHeader("content-type", PROMETHEUS_TYPE).putHeader("cache-control", "no-cache")
            .end(out.toString());
      });
    });
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

  /** Label values escape backslash, double quote and newline. */
  static String escape(String v) {
    return v.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
  }
}
