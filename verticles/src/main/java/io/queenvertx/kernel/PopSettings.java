package io.queenvertx.kernel;

/**
 * Defaults of a pop, and the safety re-poll of a parked long poll (a landing wakes it at once; the re-poll is the
 * fallback): the initial interval for the first {@code waitBackoffThreshold} empty checks, then the initial interval
 * times the number of empty checks times the multiplier, capped at the maximum.
 *
 * @param defaultTimeoutMs {@code DEFAULT_TIMEOUT}, else {@code POP_DEFAULT_TIMEOUT_MS} (30000, 0..2^31-1): long-poll
 *     timeout of a pop that gives none
 * @param defaultSubscriptionMode {@code DEFAULT_SUBSCRIPTION_MODE} ("new"): where a named group starts on its first
 *     contact
 * @param waitInitialIntervalMs {@code POP_WAIT_INITIAL_INTERVAL_MS} (100, at least 1)
 * @param waitBackoffThreshold {@code POP_WAIT_BACKOFF_THRESHOLD} (3, at least 0)
 * @param waitBackoffMultiplier {@code POP_WAIT_BACKOFF_MULTIPLIER} (2.0, a number of at least 1)
 * @param waitMaxIntervalMs {@code POP_WAIT_MAX_INTERVAL_MS} (1000, at least 1)
 * @param maxBatch {@code QUEEN_POP_MAX_BATCH} (10000, at least 1): a pop asking for a larger {@code batch} is served
 *     as if it asked for this many (a pop may always return fewer messages than its batch)
 * @param maxBytes {@code QUEEN_POP_MAX_BYTES} (64 MiB; 0 = no budget): a pop stops taking messages once its answer
 *     would pass about this many bytes, delivering at least one message per partition it claims
 * @param autopilot {@code QUEEN_POP_AUTOPILOT} (on): a pop with {@code autopilot=true} has the knobs it left unset
 *     (batch, partitions) chosen by the broker (queen2-contract.md §6.3); off: they take the ordinary defaults
 */
public record PopSettings(long defaultTimeoutMs, String defaultSubscriptionMode, long waitInitialIntervalMs,
                          int waitBackoffThreshold, double waitBackoffMultiplier, long waitMaxIntervalMs,
                          int maxBatch, long maxBytes, boolean autopilot) {
  public static final long DEFAULT_TIMEOUT_MS = 30_000;
  public static final String DEFAULT_SUBSCRIPTION_MODE = "new";
  public static final long DEFAULT_WAIT_INITIAL_INTERVAL_MS = 100;
  public static final int DEFAULT_WAIT_BACKOFF_THRESHOLD = 3;
  public static final double DEFAULT_WAIT_BACKOFF_MULTIPLIER = 2.0;
  public static final long DEFAULT_WAIT_MAX_INTERVAL_MS = 1000;
  public static final int DEFAULT_MAX_BATCH = 10_000;
  public static final long DEFAULT_MAX_BYTES = 64L * 1024 * 1024;

  static PopSettings from(ConfigReader e) {
    return new PopSettings(
        e.lng("DEFAULT_TIMEOUT", e.lng("POP_DEFAULT_TIMEOUT_MS", DEFAULT_TIMEOUT_MS, 0, Integer.MAX_VALUE), 0,
            Integer.MAX_VALUE),
        e.str("DEFAULT_SUBSCRIPTION_MODE", DEFAULT_SUBSCRIPTION_MODE),
        e.lng("POP_WAIT_INITIAL_INTERVAL_MS", DEFAULT_WAIT_INITIAL_INTERVAL_MS, 1, Long.MAX_VALUE),
        e.integer("POP_WAIT_BACKOFF_THRESHOLD", DEFAULT_WAIT_BACKOFF_THRESHOLD, 0, Integer.MAX_VALUE),
        e.dbl("POP_WAIT_BACKOFF_MULTIPLIER", DEFAULT_WAIT_BACKOFF_MULTIPLIER, 1),
        e.lng("POP_WAIT_MAX_INTERVAL_MS", DEFAULT_WAIT_MAX_INTERVAL_MS, 1, Long.MAX_VALUE),
        e.integer("QUEEN_POP_MAX_BATCH", DEFAULT_MAX_BATCH, 1, Integer.MAX_VALUE),
        e.lng("QUEEN_POP_MAX_BYTES", DEFAULT_MAX_BYTES, 0, Long.MAX_VALUE),
        e.bool("QUEEN_POP_AUTOPILOT", true));
  }
}
