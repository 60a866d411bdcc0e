package io.queenvertx.kernel;

/**
 * Message traces (API.md §5.13): how long they are kept.
 *
 * @param retentionDays {@code QUEEN_TRACES_RETENTION_DAYS} (7, 0..36500; 0 keeps traces forever): traces recorded
 *     longer ago than this are deleted by the retention cycle, whatever happened to their queue.
 * @param purgeBatch {@code QUEEN_TRACES_PURGE_BATCH} (1000, 1..100000): traces deleted per statement; a retention
 *     cycle runs at most {@link #MAX_PURGE_BATCHES} of them.
 */
public record TracesSettings(int retentionDays, int purgeBatch) {
  public static final int DEFAULT_RETENTION_DAYS = 7;
  public static final int DEFAULT_PURGE_BATCH = 1000;
  public static final int MAX_PURGE_BATCHES = 20;

  static TracesSettings from(ConfigReader e) {
    return new TracesSettings(e.integer("QUEEN_TRACES_RETENTION_DAYS", DEFAULT_RETENTION_DAYS, 0, 36_500),
        e.integer("QUEEN_TRACES_PURGE_BATCH", DEFAULT_PURGE_BATCH, 1, 100_000));
  }
}
