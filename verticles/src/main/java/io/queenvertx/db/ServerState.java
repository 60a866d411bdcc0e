package io.queenvertx.db;

import io.queenvertx.kernel.Config;

/**
 * What one check of one PostgreSQL server found ({@link ServerProbe}).
 *
 * @param host          the server
 * @param reachable     it answered the check in time
 * @param inRecovery    {@code pg_is_in_recovery()}: a standby
 * @param readOnly      {@code transaction_read_only} of a new session
 * @param systemId      the cluster's {@code system_identifier} (the same on a primary and its standbys)
 * @param timeline      the timeline a primary writes on ({@code 0} on a standby)
 * @param lsn           the primary's current WAL position, or the standby's replayed one (bytes)
 * @param sinceReplayMs on a standby, milliseconds since the last transaction it replayed committed ({@code -1}: none)
 * @param error         why it is unreachable ({@code null} when reachable)
 * @param checkedAt     when the check began ({@link System#currentTimeMillis}): what it found was true at or after it
 */
public record ServerState(Config.Host host, boolean reachable, boolean inRecovery, boolean readOnly, String systemId,
                          int timeline, long lsn, long sinceReplayMs, String error, long checkedAt) {

  static ServerState unreachable(Config.Host host, String error) {
    return unreachable(host, error, System.currentTimeMillis());
  }

  static ServerState unreachable(Config.Host host, String error, long checkedAt) {
    return new ServerState(host, false, false, false, null, 0, 0, -1, error, checkedAt);
  }

  /** A primary that takes writes: reachable, not a standby, not read-only. */
  public boolean writable() {
    return reachable && !inRecovery && !readOnly;
  }

  /** {@code primary}, {@code standby}, {@code read-only} (a primary refusing writes) or {@code unreachable}. */
  public String role() {
    if (!reachable) return "unreachable";
    if (inRecovery) return "standby";
    return readOnly ? "read-only" : "primary";
  }
}
