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
 */
public record MaintenanceSettings(long retentionIntervalMs, int retentionBatchSize, long cacheRefreshIntervalMs,
                                  long redriveStaleMs) {
  public static final long DEFAULT_RETENTION_INTERVAL_MS = 5000;
  public static final int DEFAULT_RETENTION_BATCH_SIZE = 1000;
  public static final long DEFAULT_CACHE_REFRESH_INTERVAL_MS = 60_000;
  public static final long DEFAULT_REDRIVE_STALE_MS = 10_000;

  static MaintenanceSettings from(ConfigReader e) {
    return new MaintenanceSettings(
        e.lng("RETENTION_INTERVAL", DEFAULT_RETENTION_INTERVAL_MS, 100, Long.MAX_VALUE),
        e.integer("RETENTION_BATCH_SIZE", DEFAULT_RETENTION_BATCH_SIZE, 1, Integer.MAX_VALUE),
        e.lng("QUEEN_CACHE_REFRESH_INTERVAL_MS", DEFAULT_CACHE_REFRESH_INTERVAL_MS, 1000, Long.MAX_VALUE),
        e.lng("QUEEN_REDRIVE_STALE_MS", DEFAULT_REDRIVE_STALE_MS, 1000, Long.MAX_VALUE));
  }
}
