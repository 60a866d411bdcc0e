package io.queenvertx.kernel;

/**
 * Boot behaviour: how the node waits for what it needs at boot.
 *
 * @param dbConnectTimeoutS {@code QUEEN_DB_CONNECT_TIMEOUT_S} (180, 0..86400; 0 tries once): how long an external
 *     PostgreSQL that does not accept connections at boot is retried (backoff 0.5 s doubling to 5 s, one log line per
 *     attempt) before the node gives up and exits 1. Only when the schema is applied at boot
 *     ({@code QUEEN_APPLY_SCHEMA}, the default): a node with {@code QUEEN_APPLY_SCHEMA=false} boots without waiting
 *     and spools pushes.
 */
public record StartupSettings(int dbConnectTimeoutS) {
  public static final int DEFAULT_DB_CONNECT_TIMEOUT_S = 180;

  static StartupSettings from(ConfigReader e) {
    return new StartupSettings(e.integer("QUEEN_DB_CONNECT_TIMEOUT_S", DEFAULT_DB_CONNECT_TIMEOUT_S, 0, 86_400));
  }
}
