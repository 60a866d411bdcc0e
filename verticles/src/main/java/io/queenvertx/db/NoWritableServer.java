package io.queenvertx.db;

/**
 * A database call refused by the node itself because none of its PostgreSQL servers takes writes now (a failover in
 * progress, or every server gone): a push is spooled ({@code buffered}), a pop, an ack or a read answers 503 with
 * {@code Retry-After}. No stack trace: it is an expected state, not a bug.
 */
public final class NoWritableServer extends io.vertx.core.VertxException {
  public NoWritableServer(String message) {
    super(message, true);
  }
}
