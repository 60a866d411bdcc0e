package io.queenvertx.kernel;

/**
 * The segment engine: how pushes are written and segments read back (ENGINE.md).
 *
 * @param zstdLevel {@code QUEEN_V2_ZSTD_LEVEL} (3, -7..22): zstd level of segments (log writer and DLQ mover)
 * @param segmentCacheEntries {@code QUEEN_SEGMENT_CACHE_ENTRIES} (4096, at least 16): decoded segments cached per node
 * @param dedupCacheMb {@code QUEEN_DEDUP_CACHE_MB} (512, at least 0; 0 turns the cache off), 0 when the boolean
 *     {@code QUEEN_DEDUP_CACHE} (on) is off: the broker dedup cache's budget (ENGINE.md §3.6)
 * @param pushBundlesInFlight {@code QUEEN_PUSH_BUNDLES_IN_FLIGHT} (8, at least 1): concurrent push transactions of the
 *     log writer (each one commit)
 * @param pushPartitionsPerBundle {@code QUEEN_PUSH_PARTITIONS_PER_BUNDLE} (512, at least 1): partitions (segments)
 *     written by one push transaction at most
 * @param pushFusionHoldMicros {@code QUEEN_PUSH_FUSION_HOLD_US} (400, at least 0; 0 = off): while push
 *     transactions are in flight, how long the log writer may hold a small bundle for more pushes to join it; never
 *     applied while none is in flight (log/FusionGate)
 */
public record EngineSettings(int zstdLevel, int segmentCacheEntries, int dedupCacheMb, int pushBundlesInFlight,
                             int pushPartitionsPerBundle, int pushFusionHoldMicros) {
  public static final int DEFAULT_ZSTD_LEVEL = 3;
  public static final int DEFAULT_SEGMENT_CACHE_ENTRIES = 4096;
  public static final int DEFAULT_DEDUP_CACHE_MB = 512;
  public static final int DEFAULT_PUSH_BUNDLES_IN_FLIGHT = 8;
  public static final int DEFAULT_PUSH_PARTITIONS_PER_BUNDLE = 512;
  public static final int DEFAULT_PUSH_FUSION_HOLD_US = 400;
  /** The floor of {@code QUEEN_SEGMENT_CACHE_ENTRIES} (the cache's own minimum). */
  public static final int MIN_SEGMENT_CACHE_ENTRIES = 16;

  static EngineSettings from(ConfigReader e) {
    return new EngineSettings(
        e.integer("QUEEN_V2_ZSTD_LEVEL", DEFAULT_ZSTD_LEVEL, -7, 22),
        e.integer("QUEEN_SEGMENT_CACHE_ENTRIES", DEFAULT_SEGMENT_CACHE_ENTRIES, MIN_SEGMENT_CACHE_ENTRIES,
            Integer.MAX_VALUE),
        dedupCacheMb(e),
        e.integer("QUEEN_PUSH_BUNDLES_IN_FLIGHT", DEFAULT_PUSH_BUNDLES_IN_FLIGHT, 1, Integer.MAX_VALUE),
        e.integer("QUEEN_PUSH_PARTITIONS_PER_BUNDLE", DEFAULT_PUSH_PARTITIONS_PER_BUNDLE, 1, Integer.MAX_VALUE),
        e.integer("QUEEN_PUSH_FUSION_HOLD_US", DEFAULT_PUSH_FUSION_HOLD_US, 0, Integer.MAX_VALUE));
  }

  /** Both variables are read (and checked) whether or not the switch is on. */
  private static int dedupCacheMb(ConfigReader e) {
    boolean on = e.bool("QUEEN_DEDUP_CACHE", true);
    int mb = e.integer("QUEEN_DEDUP_CACHE_MB", DEFAULT_DEDUP_CACHE_MB, 0, Integer.MAX_VALUE);
    return on ? mb : 0;
  }
}
