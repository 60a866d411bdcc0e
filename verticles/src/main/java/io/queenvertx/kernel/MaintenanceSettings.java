package io.queenvertx.kernel;

/**
 * Periodic background work of a node.
 *
 * @param retentionIntervalMs {@code RETENTION_INTERVAL} (5000, at least 100): period of the retention cycle (one node
 *     at a time)
 * @param retentionBatchSize {@code RETENTION_BATCH_SIZE} (1000, at least 1): the batch size one retention step
 *     passes to PostgreSQL
 * @param cacheRefreshIntervalMs {@code QUEEN_CACHE_REFRESH_INTERVAL_MS} (60000, at least 1000): how often a node
 *     re-reads the maintenance switches
 * @param redriveStaleMs {@code QUEEN_REDRIVE_STALE_MS} (10000, at least 1000): a redrive task whose node stopped
 *     heart-beating this long is taken over by another node
 * @param timerPollMs {@code QUEEN_TIMER_POLL_MS} (1000, 10..60000): the longest the timer sweep sleeps between two
 *     looks at the timers (it wakes at the next due time when that is sooner, and at once when this node arms a timer
 *     due sooner)
 * @param timerSweep {@code QUEEN_TIMERS_SWEEP} (true): whether this node fires due timers (the other nodes do when off)
 */
public record MaintenanceSettings(long retentionIntervalMs, int retentionBatchSize, long cacheRefreshIntervalMs,
                                  long redriveStaleMs, long timerPollMs, boolean timerSweep) {
  public static final long DEFAULT_RETENTION_INTERVAL_MS = 5000;
  public static final int DEFAULT_RETENTION_BATCH_SIZE = 1000;
  public static final long DEFAULT_CACHE_REFRESH_INTERVAL_MS = 60_000;
  public static final long DEFAULT_REDRIVE_STALE_MS = 10_000;
  public static final long DEFAULT_TIMER_POLL_MS = 1000;

  static MaintenanceSettings from(ConfigReader e) {
    return new MaintenanceSettings(
        e.lng("RETENTION_INTERVAL", DEFAULT_RETENTION_INTERVAL_MS, 100, Long.MAX_VALUE),
        e.integer("RETENTION_BATCH_SIZE", DEFAULT_RETENTION_BATCH_SIZE, 1, Integer.MAX_VALUE),
        e.lng("QUEEN_CACHE_REFRESH_INTERVAL_MS", DEFAULT_CACHE_REFRESH_INTERVAL_MS, 1000, Long.MAX_VALUE),
        e.lng("QUEEN_REDRIVE_STALE_MS", DEFAULT_REDRIVE_STALE_MS, 1000, Long.MAX_VALUE),
        e.lng("QUEEN_TIMER_POLL_MS", DEFAULT_TIMER_POLL_MS, 10, 60_000),
        e.bool("QUEEN_TIMERS_SWEEP", true));
  }
}
