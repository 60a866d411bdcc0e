package io.queenvertx.maintenance;

import io.queenvertx.kernel.Config;
import io.queenvertx.db.MaintenanceProcedures;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Retention, run by one node of the cluster at a time (ENGINE.md §9): every {@code RETENTION_INTERVAL} each node
 * tries to claim the {@code retention} row of {@code queen.maintenance_leases}; the winner walks the partitions with
 * work due and loops {@code log_retention_step} on each until done, then releases the fenced claim. A node that
 * dies holding the claim loses it when the lease runs out. Expired consumer leases need no reclaim: a pop treats an
 * expired lease as free, so its batch returns to the group. The same cycle deletes expired message traces.
 */
public final class RetentionVerticle extends VerticleBase {
  private static final Logger log = LoggerFactory.getLogger(RetentionVerticle.class);
  static final String TASK = "retention";
  static final int CANDIDATES_PER_CYCLE = 1000;
  static final int MAX_STEPS_PER_PARTITION = 50;

  private final Config config;
  private final MaintenanceProcedures procedures;
  private final String holder;
  private final AtomicLong framesDeleted = new AtomicLong();
  private boolean running;

  public RetentionVerticle(Config config, MaintenanceProcedures procedures) {
    this.config = config;
    this.procedures = procedures;
    this.holder = config.serverId() + "#" + ProcessHandle.current().pid();
  }

  @Override
  public Future<?> start() {
    vertx.setPeriodic(config.maintenance().retentionIntervalMs(), t -> cycle());
    return Future.succeededFuture();
  }

  private void cycle() {
    if (running) return;
    running = true;
    long period = config.maintenance().retentionIntervalMs();
    procedures.claim(TASK, holder, period)
        .compose(fence -> {
          if (fence == null) return Future.succeededFuture();
          return runCycle().transform(ar -> procedures.release(TASK, fence, ar.succeeded()));
        })
        .onComplete(ar -> {
          running = false;
          if (ar.failed()) log.warn("retention cycle failed: {}", ar.cause().getMessage());
        });
  }

  private Future<Void> runCycle() {
    return procedures.candidates(CANDIDATES_PER_CYCLE)
        .compose(pids -> {
          Future<Void> chain = Future.succeededFuture();
          for (UUID pid : pids) chain = chain.compose(v -> steps(pid, 0));
          return chain;
        })
        .compose(v -> purgeTraces(0));
  }

  /**
   * Message traces older than {@code QUEEN_TRACES_RETENTION_DAYS} (0 keeps them), a bounded batch per statement and
   * a bounded number of statements per cycle; traces are removed by their own age only, never with their queue.
   */
  private Future<Void> purgeTraces(int batches) {
    var t = config.traces();
    if (t.retentionDays() <= 0 || batches >= io.queenvertx.kernel.TracesSettings.MAX_PURGE_BATCHES) {
      return Future.succeededFuture();
    }
    return procedures.purgeTraces(t.retentionDays(), t.purgeBatch())
        .compose(n -> n < t.purgeBatch() ? Future.succeededFuture()
            : purgeTraces(batches + 1));
  }

  private Future<Void> steps(UUID pid, int n) {
    if (n >= MAX_STEPS_PER_PARTITION) return Future.succeededFuture();
    return procedures.retentionStep(pid, config.maintenance().retentionBatchSize())
        .compose(r -> {
          framesDeleted.addAndGet(r.getLong("deleted", 0L));
          return r.getBoolean("done", true) ? Future.succeededFuture() : steps(pid, n + 1);
        });
  }
}
