package io.queenvertx.maintenance;

import io.queenvertx.kernel.Config;
import io.queenvertx.db.KvProcedures;
import io.queenvertx.db.LockProcedures;
import io.queenvertx.db.MaintenanceProcedures;
import io.queenvertx.metrics.StateMetrics;
import io.vertx.core.Future;
import io.vertx.core.Promise;
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
 * expired lease as free, so its batch returns to the group. The same cycle deletes expired message traces, then
 * expired key-value entries ({@code kv_sweep_expired}) and lock fence rows long unused ({@code locks_sweep}), a batch
 * per statement until a batch comes back short. Every node, claim or not, reads the key-value and lock gauges
 * ({@code kv_stats}, {@code locks_stats}: capped counts) once per cycle.
 */
public final class RetentionVerticle extends VerticleBase {
  private static final Logger log = LoggerFactory.getLogger(RetentionVerticle.class);
  static final String TASK = "retention";
  static final int CANDIDATES_PER_CYCLE = 1000;
  static final int MAX_STEPS_PER_PARTITION = 50;
  /** Rows per sweep statement, and statements per cycle, of the key-value and lock sweeps. */
  static final int SWEEP_BATCH = 1000;
  static final int MAX_SWEEPS = 50;

  private final Config config;
  private final MaintenanceProcedures procedures;
  private final KvProcedures kv;
  private final LockProcedures locks;
  private final StateMetrics state;
  private final String holder;
  private final AtomicLong framesDeleted = new AtomicLong();
  private boolean running;
  /** The node is stopping: no cycle starts, the one in flight completes {@link #idle} and logs nothing. */
  private boolean stopping;
  private final Promise<Void> idle = Promise.promise();
  private long periodic = -1;

  public RetentionVerticle(Config config, MaintenanceProcedures procedures, KvProcedures kv, LockProcedures locks,
                           StateMetrics state) {
    this.config = config;
    this.procedures = procedures;
    this.kv = kv;
    this.locks = locks;
    this.state = state;
    this.holder = config.serverId() + "#" + ProcessHandle.current().pid();
  }

  @Override
  public Future<?> start() {
    periodic = vertx.setPeriodic(config.maintenance().retentionIntervalMs(), t -> cycle());
    return Future.succeededFuture();
  }

  /** The pool closes after the verticles stop: the cycle in flight ends first (at most 10 s, should it hang). */
  @Override
  public Future<?> stop() {
    stopping = true;
    vertx.cancelTimer(periodic);
    if (!running) idle.tryComplete();
    else vertx.setTimer(10_000, t -> idle.tryComplete());
    return idle.future();
  }

  private void cycle() {
    if (running || stopping) return;
    running = true;
    long period = config.maintenance().retentionIntervalMs();
    procedures.claim(TASK, holder, period)
        .compose(fence -> {
          if (fence == null) return Future.succeededFuture();
          return runCycle().transform(ar -> procedures.release(TASK, fence, ar.succeeded()));
        })
        .transform(ar -> refreshGauges().transform(x -> ar.failed() ? Future.failedFuture(ar.cause())
            : Future.succeededFuture()))
        .onComplete(ar -> {
          running = false;
          if (stopping) idle.tryComplete();
          else if (ar.failed()) log.warn("retention cycle failed: {}", ar.cause().getMessage());
        });
  }

  private Future<Void> runCycle() {
    return procedures.candidates(CANDIDATES_PER_CYCLE)
        .compose(pids -> {
          Future<Void> chain = Future.succeededFuture();
          for (UUID pid : pids) chain = chain.compose(v -> stopping ? Future.succeededFuture() : steps(pid, 0));
          return chain;
        })
        .compose(v -> purgeTraces(0))
        .compose(v -> sweep(kv::sweepExpired, state::kvExpired, 0))
        .compose(v -> sweep(locks::sweep, state::lockFencesSwept, 0));
  }

  /** One sweep, a batch per statement until a short one (or {@value #MAX_SWEEPS} of them), each counted. */
  private Future<Void> sweep(java.util.function.IntFunction<Future<Integer>> call, java.util.function.LongConsumer count,
                             int n) {
    if (n >= MAX_SWEEPS || stopping) return Future.succeededFuture();
    return call.apply(SWEEP_BATCH).compose(deleted -> {
      count.accept(deleted);
      return deleted < SWEEP_BATCH ? Future.succeededFuture() : sweep(call, count, n + 1);
    });
  }

  /** The cluster-wide key-value and lock gauges; a failure leaves the last values. */
  private Future<Void> refreshGauges() {
    return kv.stats().compose(s -> {
      state.kvEntries.set(s.entries());
      state.kvExpiredNotSwept.set(s.expiredUnswept());
      state.kvExpiredNotSweptCapped.set(s.expiredCapped() ? 1 : 0);
      return locks.stats();
    }).map(l -> {
      state.lockFences.set(l.fences());
      return (Void) null;
    }).otherwiseEmpty();
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
