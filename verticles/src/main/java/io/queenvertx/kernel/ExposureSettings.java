package io.queenvertx.kernel;

import java.lang.management.ManagementFactory;

/**
 * Network exposure of a node: HTTP connection limits and what the public metrics reveal.
 *
 * @param idleTimeoutS {@code QUEEN_HTTP_IDLE_TIMEOUT_S} (60, at least 0; 0 turns it off): a connection
 *     with no request in flight and no bytes arriving is closed after this many seconds. A parked long poll is a
 *     request in flight, so it is never cut by this timeout, whatever its own timeout.
 * @param headerTimeoutMs {@code QUEEN_HTTP_HEADER_TIMEOUT_MS} (10000, 0..2^31-1; 0 turns it off): once
 *     the first byte of a request arrives, its request line and headers must be complete within this time, else the
 *     connection is closed (slowloris); re-armed for every request of a keep-alive connection.
 * @param maxConnections {@code QUEEN_HTTP_MAX_CONNECTIONS} (default three quarters of the process's open-file limit,
 *     10000 when unknown; at least 0, 0 means no cap): open HTTP connections per node.
 * @param hideQueueMetrics {@code QUEEN_METRICS_HIDE_QUEUES} (default: on when {@code QUEEN_TENANCY_HEADER} is on,
 *     else off): the public {@code /metrics/prometheus} leaves out the per-queue series (queue names) and gives
 *     node-wide totals instead.
 */
public record ExposureSettings(int idleTimeoutS, long headerTimeoutMs, int maxConnections, boolean hideQueueMetrics) {
  public static final int DEFAULT_IDLE_TIMEOUT_S = 60;
  public static final long DEFAULT_HEADER_TIMEOUT_MS = 10_000;
  /** Used when the open-file limit cannot be read. */
  public static final int FALLBACK_MAX_CONNECTIONS = 10_000;

  static ExposureSettings from(ConfigReader e) {
    return new ExposureSettings(
        e.integer("QUEEN_HTTP_IDLE_TIMEOUT_S", DEFAULT_IDLE_TIMEOUT_S, 0, Integer.MAX_VALUE),
        e.lng("QUEEN_HTTP_HEADER_TIMEOUT_MS", DEFAULT_HEADER_TIMEOUT_MS, 0, Integer.MAX_VALUE),
        e.integer("QUEEN_HTTP_MAX_CONNECTIONS", defaultMaxConnections(), 0, Integer.MAX_VALUE),
        e.bool("QUEEN_METRICS_HIDE_QUEUES", e.bool("QUEEN_TENANCY_HEADER", false)));
  }

  /** Three quarters of the open-file limit: the rest stays for the pool, the spool, jars and the cluster. */
  static int defaultMaxConnections() {
    if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.UnixOperatingSystemMXBean os) {
      long max = os.getMaxFileDescriptorCount();
      if (max > 0) return (int) Math.max(64, Math.min(Integer.MAX_VALUE, max / 4 * 3));
    }
    return FALLBACK_MAX_CONNECTIONS;
  }
}
