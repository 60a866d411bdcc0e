package io.queenvertx.kernel;

/**
 * Per-minute operation statistics ({@code io.queenvertx.stats}): their flush and retention.
 *
 * @param retentionDays {@code QUEEN_METRICS_RETENTION_DAYS} (Queen's {@code METRICS_RETENTION_DAYS} is read when it
 *     is unset; 90, 1..36500): minute rows of {@code stats_node_minute} / {@code stats_queue_minute} older than this
 *     are purged in batches
 * @param flushIntervalMs {@code QUEEN_STATS_FLUSH_MS} (10000, 1000..3600000): how often the node writes the minutes
 *     that have closed into PostgreSQL
 * @param baseUnits {@code QUEEN_METRICS_BASE_UNITS} (false): emit the pop lag in seconds as
 *     {@code queen_queue_pop_lag_seconds} instead of Queen's {@code queen_queue_pop_lag_milliseconds}, which
 *     {@code promtool check metrics} flags for its non-base unit
 */
public record StatsSettings(int retentionDays, long flushIntervalMs, boolean baseUnits) {
  public static final int DEFAULT_RETENTION_DAYS = 90;
  public static final long DEFAULT_FLUSH_INTERVAL_MS = 10_000;

  static StatsSettings from(ConfigReader e) {
    return new StatsSettings(
        e.integer("QUEEN_METRICS_RETENTION_DAYS",
            e.integer("METRICS_RETENTION_DAYS", DEFAULT_RETENTION_DAYS, 1, 36_500), 1, 36_500),
        e.lng("QUEEN_STATS_FLUSH_MS", DEFAULT_FLUSH_INTERVAL_MS, 1_000, 3_600_000),
        e.bool("QUEEN_METRICS_BASE_UNITS", false));
  }
}
