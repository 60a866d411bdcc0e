package io.queenvertx.stats;

import io.queenvertx.db.StatsStore;
import io.vertx.core.Future;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The database block of {@code /metrics/prometheus} (API.md §5.1): Queen's cluster counters, per-queue figures of
 * the last closed minute, queue depths and dead letters, and per consumer group lag. Four independent reads; one that
 * fails leaves its families out and the others are still written (the block is best-effort). Every existing queue (up to
 * {@link StatsStore#MAX_SERIES_ROWS}) has its per-minute samples from the first scrape: 0 until a closed minute of it
 * has been flushed, and no {@code queen_queue_metrics_age_seconds} sample until then.
 *
 * <p>Cluster counters ({@code queen_cluster_*_total{scope="cluster"}}) are sums of every node's running totals
 * (V18's {@code stats_node_totals}), which the purge of old minute rows never touches: they do not go backwards.
 * With {@code hideQueues} ({@code QUEEN_METRICS_HIDE_QUEUES}) no queue or group is named: each per-queue family is
 * one {@code scope="cluster"} sample over all queues (sums; the worst lag and age; the freshest minute).
 */
public final class QueenSeries {
  private static final String[] CLUSTER = {
      "push_requests", "push_requests", "push requests, all nodes",
      "pop_requests", "pop_requests", "pop requests, all nodes",
      "ack_requests", "ack_requests", "ack and ack-batch requests, all nodes",
      "transactions", "transactions", "transactions, all nodes",
      "push_messages", "push_messages", "messages pushed (stored or spooled), all nodes",
      "pop_messages", "pop_messages", "messages delivered by pop, all nodes",
      "ack_messages", null, "acked items (success and failed), all nodes",
      "db_errors", "db_errors", "failed PostgreSQL calls of the request path, all nodes",
      "dlq", "dlq_messages", "messages filed in the dead-letter queue, all nodes"};
  /** Per-minute gauges: series suffix, column, help. */
  private static final String[] PER_MINUTE = {
      "pop_messages", "pop_messages", "messages popped",
      "push_requests", "push_requests", "push requests",
      "push_messages", "push_messages", "messages pushed",
      "pop_empty", "pop_empty", "pops that delivered nothing",
      "transactions", "transactions", "transactions",
      "conflated", "conflated", "pushes dropped as duplicates"};

  /** A read that has not answered by then is left out of the page (a scrape is not held by a slow database). */
  static final long READ_TIMEOUT_S = 5;

  private QueenSeries() {}

  /** Appends the block; the future completes (never fails) once every read has answered. */
  public static Future<Void> append(StringBuilder out, StatsStore store, boolean hideQueues, boolean baseUnits) {
    Future<Map<String, Long>> totals = store.clusterTotals().timeout(READ_TIMEOUT_S, TimeUnit.SECONDS);
    Future<RowSet<Row>> minute = store.queueLastMinute().timeout(READ_TIMEOUT_S, TimeUnit.SECONDS);
    Future<RowSet<Row>> depths = store.queueDepths().timeout(READ_TIMEOUT_S, TimeUnit.SECONDS);
    Future<RowSet<Row>> lag = store.groupLag().timeout(READ_TIMEOUT_S, TimeUnit.SECONDS);
    return Future.join(totals, minute, depths, lag).transform(x -> {
      var e = new Exposition(out);
      if (totals.succeeded()) cluster(e, totals.result());
      if (minute.succeeded()) perMinute(e, rows(minute.result()), hideQueues, baseUnits);
      if (depths.succeeded()) depths(e, rows(depths.result()), hideQueues);
      if (lag.succeeded()) groupLag(e, rows(lag.result()), hideQueues);
      return Future.succeededFuture();
    });
  }

  private static List<Row> rows(RowSet<Row> set) {
    List<Row> out = new ArrayList<>(set.size());
    for (Row r : set) out.add(r);
    return out;
  }

  private static void cluster(Exposition e, Map<String, Long> totals) {
    long ok = totals.getOrDefault("ack_success", 0L);
    long failed = totals.getOrDefault("ack_failed", 0L);
    for (int i = 0; i < CLUSTER.length; i += 3) {
      long v = CLUSTER[i + 1] == null ? ok + failed : totals.getOrDefault(CLUSTER[i + 1], 0L);
      e.single("queen_cluster_" + CLUSTER[i] + "_total", "counter", CLUSTER[i + 2], v, "scope", "cluster");
    }
    e.family("queen_cluster_ack_total", "counter", "acked items by result (completed, or failed/retry/dlq), all nodes")
        .sample("queen_cluster_ack_total", ok, "scope", "cluster", "result", "success")
        .sample("queen_cluster_ack_total", failed, "scope", "cluster", "result", "failed");
  }

  private static void perMinute(Exposition e, List<Row> rows, boolean hide, boolean baseUnits) {
    if (rows.isEmpty() && !hide) return;
    for (int i = 0; i < PER_MINUTE.length; i += 3) {
      String name = "queen_queue_" + PER_MINUTE[i] + "_per_minute";
      e.family(name, "gauge", PER_MINUTE[i + 2] + " in the queue's last closed minute, all nodes");
      perQueue(e, name, rows, hide, PER_MINUTE[i + 1]);
    }
    e.family("queen_queue_ack_per_minute", "gauge", "acked items by result in the queue's last closed minute");
    for (String result : new String[] {"success", "failed"}) {
      String col = "ack_" + result;
      if (hide) e.sample("queen_queue_ack_per_minute", sum(rows, col), "scope", "cluster", "result", result);
      for (Row r : hide ? List.<Row>of() : rows) {
        e.sample("queen_queue_ack_per_minute", r.getLong(col), "queue", r.getString("queue"), "result", result);
      }
    }
    e.family("queen_queue_parked_consumers", "gauge", "long polls parked on the queue at the end of its last minute");
    perQueue(e, "queen_queue_parked_consumers", rows, hide, "parked_consumers");
    // a queue with no closed minute yet has its figures at 0 and no age (there is no minute to be old)
    e.family("queen_queue_metrics_age_seconds", "gauge",
        "seconds since the end of the queue's last minute with figures");
    if (hide) {
      double age = rows.stream().filter(r -> r.getDouble("age_s") != null).mapToDouble(r -> r.getDouble("age_s"))
          .min().orElse(0);
      e.sample("queen_queue_metrics_age_seconds", age, "scope", "cluster");
    }
    for (Row r : hide ? List.<Row>of() : rows) {
      if (r.getDouble("age_s") == null) continue;
      e.sample("queen_queue_metrics_age_seconds", r.getDouble("age_s"), "queue", r.getString("queue"));
    }
    String lagName = baseUnits ? "queen_queue_pop_lag_seconds" : "queen_queue_pop_lag_milliseconds";
    double unit = baseUnits ? 1000.0 : 1.0;
    e.family(lagName, "gauge", "age of popped messages when handed out, in the queue's last closed minute");
    if (hide) {
      long msgs = sum(rows, "pop_messages");
      e.sample(lagName, msgs == 0 ? 0 : sum(rows, "pop_lag_ms_sum") / (double) msgs / unit, "scope", "cluster",
          "stat", "avg");
      long max = rows.stream().mapToLong(r -> r.getLong("pop_lag_ms_max")).max().orElse(0);
      e.sample(lagName, max / unit, "scope", "cluster", "stat", "max");
    }
    for (Row r : hide ? List.<Row>of() : rows) {
      long msgs = r.getLong("pop_messages");
      double avg = msgs == 0 ? 0 : r.getLong("pop_lag_ms_sum") / (double) msgs;
      e.sample(lagName, avg / unit, "queue", r.getString("queue"), "stat", "avg");
      e.sample(lagName, r.getLong("pop_lag_ms_max") / unit, "queue", r.getString("queue"), "stat", "max");
    }
  }

  private static void perQueue(Exposition e, String name, List<Row> rows, boolean hide, String col) {
    if (hide) {
      e.sample(name, sum(rows, col), "scope", "cluster");
      return;
    }
    for (Row r : rows) e.sample(name, r.getLong(col), "queue", r.getString("queue"));
  }

  private static long sum(List<Row> rows, String col) {
    long s = 0;
    for (Row r : rows) s += r.getLong(col);
    return s;
  }

  private static void depths(Exposition e, List<Row> rows, boolean hide) {
    e.family("queen_queue_depth", "gauge", "messages after the queue-mode cursor");
    if (hide) e.sample("queen_queue_depth", sum(rows, "depth"), "scope", "cluster");
    List<Row> named = hide ? List.of() : rows.subList(0, Math.min(rows.size(), StatsStore.MAX_SERIES_ROWS));
    for (Row r : named) e.sample("queen_queue_depth", r.getLong("depth"), "queue", r.getString("queue"));
    e.family("queen_queue_lag_seconds", "gauge", "age of the oldest unconsumed segment");
    if (hide) {
      double worst = rows.stream().mapToDouble(r -> r.getDouble("lag_seconds")).max().orElse(0);
      e.sample("queen_queue_lag_seconds", worst, "scope", "cluster");
    }
    for (Row r : named) e.sample("queen_queue_lag_seconds", r.getDouble("lag_seconds"), "queue", r.getString("queue"));
    if (!hide) {
      e.family("queen_dlq_depth_by_queue", "gauge", "dead-letter rows per queue");
      for (Row r : named) e.sample("queen_dlq_depth_by_queue", r.getLong("dlq"), "queue", r.getString("queue"));
    }
    e.single("queen_dlq_depth", "gauge", "dead-letter rows, all queues", sum(rows, "dlq"), "scope", "cluster");
  }

  private static void groupLag(Exposition e, List<Row> rows, boolean hide) {
    String msgs = "queen_consumer_group_lag_messages";
    String secs = "queen_consumer_group_lag_seconds";
    e.family(msgs, "gauge", "messages after the consumer group's cursors (leased but unacked included)");
    if (hide) e.sample(msgs, sum(rows, "lag_messages"), "scope", "cluster");
    for (Row r : hide ? List.<Row>of() : rows) {
      e.sample(msgs, r.getLong("lag_messages"), "queue", r.getString("queue"), "group", r.getString("consumer_group"));
    }
    e.family(secs, "gauge", "age of the oldest message after the consumer group's cursors");
    if (hide) {
      e.sample(secs, rows.stream().mapToDouble(r -> r.getDouble("lag_seconds")).max().orElse(0), "scope", "cluster");
    }
    for (Row r : hide ? List.<Row>of() : rows) {
      e.sample(secs, r.getDouble("lag_seconds"), "queue", r.getString("queue"), "group", r.getString("consumer_group"));
    }
  }
}
