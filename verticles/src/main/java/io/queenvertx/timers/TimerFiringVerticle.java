package io.queenvertx.timers;

import io.queenvertx.bus.Addresses;
import io.queenvertx.codec.EnvelopeCipher;
import io.queenvertx.db.Database;
import io.queenvertx.db.SqlState;
import io.queenvertx.db.TimerProcedures;
import io.queenvertx.db.TimerProcedures.Claimed;
import io.queenvertx.kernel.MaintenanceFlags;
import io.queenvertx.metrics.TimerMetrics;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The timer sweep of a node (docs/design/queen2-contract.md §3.3, §9.1), on one event loop, every call asynchronous.
 * Every node runs one; {@code SKIP LOCKED} shares the work, so a timer fires once across the fleet, and its row stays
 * until the transaction that pushed its message commits, so it fires once across crashes and restarts. The sweep fires
 * batches ({@link TimerFire}) while timers are due (late ones at once after an outage, oldest first), then probes
 * ({@code timers_probe}) and sleeps until the next timer is due, at most {@code QUEEN_TIMER_POLL_MS}; a schedule on
 * this node that is due sooner wakes it early ({@link TimerOps#ARMED}). After each commit it announces the landed
 * partitions ({@link Addresses#LANDED}), so parked long polls wake as for a push. A failed fire rolls back and its
 * timers are backed off ({@code timers_fail}: 1 s doubling per attempt, at most 5 min), never dropped. With push
 * maintenance on it does not fire (a fire cannot be spooled).
 */
public final class TimerFiringVerticle extends VerticleBase {
  private static final Logger log = LoggerFactory.getLogger(TimerFiringVerticle.class);
  /** Timers per fire transaction. */
  static final int BATCH = 200;
  /** The cap of the probe's counts (the gauges). */
  static final int PROBE_CAP = 10_000;
  static final int MAX_BACKOFF_MS = 300_000;
  /** The longest a stop waits for the sweep in flight. */
  static final long STOP_WAIT_MS = 10_000;

  private final Database db;
  private final TimerProcedures timers;
  private final MaintenanceFlags flags;
  private final Optional<EnvelopeCipher> cipher;
  private final TimerMetrics metrics;
  private final long pollMs;
  private final int zstdLevel;
  private boolean running;
  /** The node is stopping: no sweep starts, the one in flight completes {@link #idle} and logs nothing. */
  private boolean stopping;
  private final Promise<Void> idle = Promise.promise();
  /** A wake-up came while a sweep ran: sweep again as soon as it ends. */
  private boolean rerun;
  private long timerId = -1;
  /** When the pending wake-up fires (System.currentTimeMillis), or Long.MAX_VALUE with none. */
  private long wakeAt = Long.MAX_VALUE;
  private long lastWarn;
  /**
   * Fires left to run one timer each, after a batch of several failed: one bad timer (say, for an encrypted queue on a
   * node without the key) must not hold back the others claimed with it. Each then fails or fires alone.
   */
  private int isolating;

  public TimerFiringVerticle(Database db, MaintenanceFlags flags, Optional<EnvelopeCipher> cipher,
                             TimerMetrics metrics, long pollMs, int zstdLevel) {
    this.db = db;
    this.timers = db.timers();
    this.flags = flags;
    this.cipher = cipher;
    this.metrics = metrics;
    this.pollMs = pollMs;
    this.zstdLevel = zstdLevel;
  }

  @Override
  public Future<?> start() {
    vertx.eventBus().<JsonObject>localConsumer(TimerOps.ARMED, m -> {
      long delay = Math.max(0, m.body().getLong("delayMs", 0L));
      wake(delay);
    });
    wake(0);
    return Future.succeededFuture();
  }

  @Override
  public Future<?> stop() {
    stopping = true;
    if (timerId >= 0) vertx.cancelTimer(timerId);
    // the pool closes after the verticles stop: let the sweep in flight end first (bounded, should the database hang)
    if (!running) idle.tryComplete();
    else vertx.setTimer(STOP_WAIT_MS, t -> idle.tryComplete());
    return idle.future();
  }

  /** Runs the sweep in {@code delayMs}, unless it is already due to run sooner. */
  private void wake(long delayMs) {
    if (stopping) return;
    long at = System.currentTimeMillis() + delayMs;
    if (at >= wakeAt) return;
    if (timerId >= 0) vertx.cancelTimer(timerId);
    wakeAt = at;
    timerId = vertx.setTimer(Math.max(1, delayMs), t -> {
      timerId = -1;
      wakeAt = Long.MAX_VALUE;
      sweep();
    });
  }

  private void sweep() {
    if (running) {
      rerun = true;
      return;
    }
    running = true;
    // in push maintenance nothing fires (a fire cannot be spooled), but the gauges still follow the table
    boolean fire = !flags.pushMaintenance();
    (fire ? fireWhileDue(0) : Future.<Void>succeededFuture()).compose(v -> timers.probe(PROBE_CAP)).onComplete(ar -> {
      running = false;
      boolean again = rerun;
      rerun = false;
      if (stopping) {
        idle.tryComplete();
        return;
      }
      if (ar.failed()) {
        warn("timer sweep failed: {}", SqlState.describe(ar.cause()));
        wake(pollMs);
        return;
      }
      TimerProcedures.Probe p = ar.result();
      metrics.pending.set(p.pending());
      metrics.due.set(p.due());
      metrics.oldestLateMs.set(p.oldestDueAt() == null ? 0
          : Math.max(0, Duration.between(p.oldestDueAt(), p.now()).toMillis()));
      wake(again ? 0 : fire ? nextDelay(p.nextVisibleAt(), p.now()) : pollMs);
    });
  }

  /** Milliseconds until {@code next} on the database's clock, within 0..pollMs. */
  private long nextDelay(OffsetDateTime next, OffsetDateTime now) {
    if (next == null) return pollMs;
    return Math.min(pollMs, Math.max(0, Duration.between(now, next).toMillis()));
  }

  /** Fires batches while full ones come back (and at most a bounded number in a row, so the probe still runs). */
  private Future<Void> fireWhileDue(int rounds) {
    TimerFire fire = new TimerFire(vertx, cipher, zstdLevel);
    int limit = isolating > 0 ? 1 : BATCH;
    if (isolating > 0) isolating--;
    return db.transaction(tx -> fire.run(tx, limit)).transform(ar -> {
      if (ar.failed() && fire.claimed.size() > 1 && !stopping && !SqlState.unavailable(ar.cause())) {
        // the rollback left them due: fire them again one per transaction, so only a bad one is backed off
        isolating = fire.claimed.size();
        log.debug("timer fire of {} timers failed, firing them one by one: {}", fire.claimed.size(),
            SqlState.describe(ar.cause()));
        return fireWhileDue(rounds + 1);
      }
      if (ar.failed()) {
        // a timer fired alone failed: it is backed off, and the others go on
        boolean goOn = isolating > 0 && !fire.claimed.isEmpty() && !stopping;
        return failed(fire, ar.cause()).compose(v -> goOn ? fireWhileDue(rounds + 1) : Future.failedFuture(ar.cause()));
      }
      int n = ar.result();
      for (JsonObject l : fire.landed()) vertx.eventBus().publish(Addresses.LANDED, l);
      for (Claimed c : fire.claimed) metrics.lateness(c.lateMs());
      metrics.fired.increment(n - fire.duplicates);
      metrics.duplicates.increment(fire.duplicates);
      return (n == limit || isolating > 0) && rounds < 50 && !stopping ? fireWhileDue(rounds + 1)
          : Future.succeededFuture();
    });
  }

  /** After a rolled-back fire: its timers leave the sweep for a backoff, their error kept. */
  private Future<Void> failed(TimerFire fire, Throwable cause) {
    if (fire.claimed.isEmpty()) return Future.succeededFuture();
    metrics.fireFailures.increment();
    int attempts = 0;
    for (Claimed c : fire.claimed) attempts = Math.max(attempts, c.attempts());
    int backoff = (int) Math.min(MAX_BACKOFF_MS, 1000L << Math.min(attempts, 20));
    String error = SqlState.describe(cause);
    warn("timer fire of {} timers failed, retried in {} ms: {}", fire.claimed.size(), backoff, error);
    return timers.fail(fire.claimed, backoff, error).<Void>mapEmpty().recover(e -> Future.succeededFuture());
  }

  /** At most one warning a second: a database outage would log a line per poll. */
  private void warn(String format, Object... args) {
    long now = System.currentTimeMillis();
    if (now - lastWarn < 1000) return;
    lastWarn = now;
    log.warn(format, args);
  }
}
