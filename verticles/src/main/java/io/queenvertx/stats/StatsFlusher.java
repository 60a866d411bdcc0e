package io.queenvertx.stats;

import io.queenvertx.db.Database;
import io.queenvertx.kernel.Config;
import io.queenvertx.metrics.OpStats;
import io.queenvertx.metrics.StatsCounters;
import io.queenvertx.db.StatsStore;
import io.queenvertx.bus.Addresses;
import io.queenvertx.metrics.BrokerMetrics;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes a node's per-minute counters ({@link StatsCounters}) into PostgreSQL in the background, never on a request
 * path. Deployed as one worker verticle per node, so its handlers run one at a time.
 *
 * <p>Every {@code QUEEN_STATS_FLUSH_MS} it drains the minutes that have closed and adds them with
 * {@code queen.stats_flush} (one transaction: minute rows and the node's running totals). Once per closed minute it
 * samples the gauges (heap, process CPU, pool size and connections in use, parked long polls, and per queue the long
 * polls parked on it) into that minute's rows. A flush that fails is kept and sent again with the next one (its rows
 * are added with {@code +}, so a retry after a commit whose answer was lost counts twice: the price of never
 * losing counts); at most {@link #MAX_UNSENT} flushes wait, the oldest dropped beyond. Every {@link #PURGE_EVERY_MS}
 * (and once at start) minute rows older than {@code QUEEN_METRICS_RETENTION_DAYS} are deleted in batches of
 * {@link #PURGE_BATCH}, at most {@link #PURGE_BATCHES_PER_CYCLE} batches a cycle.
 *
 * <p>{@link Addresses#STATS_FLUSH} (a local consumer: it flushes the node that receives it) drains the current,
 * partial minute too, and answers {@code {"flushedNodeRows":n,"flushedQueueRows":m}} once the rows are committed.
 */
public final class StatsFlusher extends VerticleBase {
  private static final Logger log = LoggerFactory.getLogger(StatsFlusher.class);
  static final int MAX_UNSENT = 60;
  static final long PURGE_EVERY_MS = 3_600_000;
  static final int PURGE_BATCH = 5000;
  static final int PURGE_BATCHES_PER_CYCLE = 20;
  static final long STOP_FLUSH_TIMEOUT_S = 3;

  private final Config config;
  private final Database db;
  private final BrokerMetrics metrics;
  private final OpStats stats;
  private final StatsStore store;
  private final ArrayDeque<StatsCounters.Drained> unsent = new ArrayDeque<>();
  private Future<JsonObject> last = Future.succeededFuture();
  private String host = "";
  private long gaugedMinute = -1;
  private boolean purging;

  public StatsFlusher(Config config, Database db, BrokerMetrics metrics) {
    this.config = config;
    this.db = db;
    this.metrics = metrics;
    this.stats = metrics.stats;
    this.store = db.stats();
  }

  @Override
  public Future<?> start() {
    try {
      host = InetAddress.getLocalHost().getHostName();
    } catch (Exception e) {
      host = "";
    }
    gaugedMinute = stats.counters().minuteNow() - 1;
    vertx.setPeriodic(config.stats().flushIntervalMs(), t -> flush(false));
    vertx.setPeriodic(PURGE_EVERY_MS, t -> purge());
    vertx.setTimer(5_000, t -> purge());
    return vertx.eventBus().<Object>localConsumer(Addresses.STATS_FLUSH, m -> flush(true).onComplete(ar -> {
      if (ar.succeeded()) {
        m.reply(new JsonObject().put("flushedNodeRows", ar.result().getInteger("nodeRows", 0))
            .put("flushedQueueRows", ar.result().getInteger("queueRows", 0)));
      } else {
        m.fail(500, "stats flush failed: " + ar.cause().getMessage());
      }
    })).completion();
  }

  @Override
  public Future<?> stop() {
    // what this node counted last is written before it goes (best effort, bounded: the database may be away)
    return flush(true).timeout(STOP_FLUSH_TIMEOUT_S, java.util.concurrent.TimeUnit.SECONDS).otherwiseEmpty();
  }

  /** One flush after the one in progress; {@code now}: the current, partial minute too. */
  Future<JsonObject> flush(boolean now) {
    last = last.transform(x -> flushOnce(now));
    return last;
  }

  private Future<JsonObject> flushOnce(boolean now) {
    StatsCounters counters = stats.counters();
    long minute = counters.minuteNow();
    StatsCounters.Drained drained = counters.drain(minute, now);
    long gaugeMinute = now ? minute : minute - 1;
    Future<StatsCounters.Drained> batch = Future.succeededFuture(drained);
    if (now || gaugeMinute > gaugedMinute) {
      gaugedMinute = Math.max(gaugedMinute, gaugeMinute);
      batch = stats.parkedByQueue().map(parked -> withGauges(drained, gaugeMinute, parked));
    }
    return batch.compose(d -> {
      if (!d.isEmpty()) unsent.addLast(d);
      while (unsent.size() > MAX_UNSENT) {
        log.warn("stats: dropping an unsent flush of {} node rows (PostgreSQL unavailable)",
            unsent.removeFirst().nodes().size());
      }
      if (unsent.isEmpty()) return Future.succeededFuture(new JsonObject().put("nodeRows", 0).put("queueRows", 0));
      JsonArray nodes = new JsonArray();
      JsonArray queues = new JsonArray();
      for (var u : unsent) {
        nodes.addAll(u.nodes());
        queues.addAll(u.queues());
      }
      return store.flush(config.serverId(), host, nodes, queues).onSuccess(r -> unsent.clear())
          .onFailure(e -> log.warn("stats flush failed ({} waiting): {}", unsent.size(), e.getMessage()));
    });
  }

  /** The drained rows plus this node's gauges on the row of {@code minute}, and each queue's parked long polls. */
  private StatsCounters.Drained withGauges(StatsCounters.Drained d, long minute,
                                           Map<UUID, Map<String, Integer>> parked) {
    JsonObject row = null;
    for (Object o : d.nodes()) {
      if (o instanceof JsonObject j && j.getLong("m") == minute) row = j;
    }
    if (row == null) {
      row = new JsonObject().put("m", minute);
      d.nodes().add(row);
    }
    var heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
    row.put("heap_used_bytes", heap.getUsed());
    if (heap.getMax() > 0) row.put("heap_max_bytes", heap.getMax());
    if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
      double load = os.getProcessCpuLoad();
      if (load >= 0) row.put("cpu_process_pct", (float) (load * 100));
    }
    BrokerMetrics m = metrics;
    row.put("db_pool_size", config.postgres().poolSize());
    JsonObject target = row;
    m.sqlPoolGauge("vertx.pool.in.use").ifPresent(v -> target.put("db_pool_active", (int) v));
    row.put("parked_pops", (int) m.parkedPolls.get());
    for (var t : parked.entrySet()) {
      for (var q : t.getValue().entrySet()) {
        if (q.getValue() <= 0) continue;
        d.queues().add(new JsonObject().put("m", minute).put("tenant", t.getKey().toString()).put("queue", q.getKey())
            .put("parked_consumers", q.getValue()));
      }
    }
    return d;
  }

  private void purge() {
    if (purging) return;
    purging = true;
    purgeBatches(0).onComplete(ar -> {
      purging = false;
      if (ar.failed()) log.warn("stats purge failed: {}", ar.cause().getMessage());
    });
  }

  private Future<Void> purgeBatches(int done) {
    if (done >= PURGE_BATCHES_PER_CYCLE) return Future.succeededFuture();
    return store.purge(config.stats().retentionDays(), PURGE_BATCH)
        .compose(n -> n >= PURGE_BATCH ? purgeBatches(done + 1) : Future.succeededFuture());
  }
}
