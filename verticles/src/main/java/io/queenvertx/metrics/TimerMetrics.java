package io.queenvertx.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The timer series (docs/design/queen2-contract.md §9.2): counters of this node's schedules, cancels, fires and
 * failed fires, and gauges of the cluster-wide timer table as this node's sweep last probed it ({@code timers_probe}):
 * pending and due timers (capped), the oldest due timer's lateness (the timer lag), and the largest and average
 * lateness of the timers this node fired since the previous scrape.
 */
public final class TimerMetrics {
  public final Counter scheduled;
  public final Counter cancelled;
  public final Counter fired;
  public final Counter duplicates;
  public final Counter fireFailures;
  /** Cluster-wide, capped at the probe's cap (the sweep writes them after each probe). */
  public final AtomicLong pending = new AtomicLong();
  public final AtomicLong due = new AtomicLong();
  /** Milliseconds the oldest due timer is past its due time at the last probe; 0 when none is due. */
  public final AtomicLong oldestLateMs = new AtomicLong();
  private long latenessSumMs;
  private long latenessCount;
  private long latenessMaxMs;
  private double lastMax;
  private double lastAvg;

  TimerMetrics(MeterRegistry registry) {
    scheduled = Counter.builder("queen_timers_scheduled_total").description("timers scheduled or rescheduled")
        .register(registry);
    cancelled = Counter.builder("queen_timers_cancelled_total").description("pending timers cancelled")
        .register(registry);
    fired = Counter.builder("queen_timers_fired_total").description("timers whose message this node pushed")
        .tag("result", "fired").register(registry);
    duplicates = Counter.builder("queen_timers_fired_total").description("timers whose message this node pushed")
        .tag("result", "duplicate").register(registry);
    fireFailures = Counter.builder("queen_timers_fire_failures_total")
        .description("fire transactions that failed (their timers backed off)").register(registry);
    Gauge.builder("queen_timers_pending", pending::get).description("pending timers, cluster-wide (capped at 10000)")
        .register(registry);
    Gauge.builder("queen_timers_due", due::get).description("timers due now, cluster-wide (capped at 10000)")
        .register(registry);
    Gauge.builder("queen_timers_oldest_late_seconds", () -> oldestLateMs.get() / 1000.0)
        .description("how far past its due time the oldest due timer is (timer lag)").register(registry);
    Gauge.builder("queen_timers_delivery_lateness_max_seconds", this, m -> m.window(true))
        .description("largest lateness of the timers this node fired since the previous scrape").register(registry);
    Gauge.builder("queen_timers_delivery_lateness_avg_seconds", this, m -> m.window(false))
        .description("average lateness of the timers this node fired since the previous scrape").register(registry);
  }

  /** A timer fired {@code lateMs} after its due time. */
  public synchronized void lateness(long lateMs) {
    latenessSumMs += lateMs;
    latenessCount++;
    latenessMaxMs = Math.max(latenessMaxMs, lateMs);
  }

  /** The window's max or average in seconds; reading the max closes the window (a scrape reads max then avg). */
  private synchronized double window(boolean max) {
    if (latenessCount > 0) {
      lastMax = latenessMaxMs / 1000.0;
      lastAvg = latenessSumMs / 1000.0 / latenessCount;
      if (max) {
        latenessSumMs = 0;
        latenessCount = 0;
        latenessMaxMs = 0;
      }
    } else if (max) {
      lastMax = 0;
      lastAvg = 0;
    }
    return max ? lastMax : lastAvg;
  }
}
