package io.queenvertx.boot;

/**
 * The segment engine: how pushes are written and segments read back (ENGINE.md).
 *
 * @param zstdLevel {@code QUEEN_V2_ZSTD_LEVEL} (3, -7..22): zstd level of segments (log writer and DLQ mover)
 * @param segmentCacheEntries {@code QUEEN_SEGMENT_CACHE_ENTRIES} (4096): decoded segments cached per node
 * @param dedupCacheMb {@code QUEEN_DEDUP_CACHE_MB} (512; a negative value is 0), 0 when {@code QUEEN_DEDUP_CACHE} is
 *     0: the broker dedup cache's budget (ENGINE.md §3.6)
 * @param pushBundlesInFlight {@code QUEEN_PUSH_BUNDLES_IN_FLIGHT} (8, at least 1): concurrent push transactions of the
 *     log writer (each one commit)
 * @param pushPartitionsPerBundle {@code QUEEN_PUSH_PARTITIONS_PER_BUNDLE} (512, at least 1): partitions (segments)
 *     written by one push transaction at most
 * @param pushFusionHoldMicros {@code QUEEN_PUSH_FUSION_HOLD_US} (400, 0 = off, a negative value is 0): while push
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

  static EngineSettings from(ConfigReader e) {
    return new EngineSettings(
        e.integer("QUEEN_V2_ZSTD_LEVEL", DEFAULT_ZSTD_LEVEL, -7, 22),
        e.integer("QUEEN_SEGMENT_CACHE_ENTRIES", DEFAULT_SEGMENT_CACHE_ENTRIES),
        "0".equals(e.str("QUEEN_DEDUP_CACHE", "")) ? 0
            : Math.max(0, e.integer("QUEEN_DEDUP_CACHE_MB", DEFAULT_DEDUP_CACHE_MB)),
        Math.max(1, e.integer("QUEEN_PUSH_BUNDLES_IN_FLIGHT", DEFAULT_PUSH_BUNDLES_IN_FLIGHT)),
        Math.max(1, e.integer("QUEEN_PUSH_PARTITIONS_PER_BUNDLE", DEFAULT_PUSH_PARTITIONS_PER_BUNDLE)),
        Math.max(0, e.integer("QUEEN_PUSH_FUSION_HOLD_US", DEFAULT_PUSH_FUSION_HOLD_US)));
  }
}
