package io.queenvertx.db;

import io.queenvertx.kernel.Config;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * Asks one PostgreSQL server, over a connection of its own, whether it is a primary that takes writes, on which
 * timeline, and how far its WAL is. A check not answered within the timeout counts as unreachable and drops the
 * connection (a frozen server keeps a socket open and never answers), so the next check opens a new one. Used from
 * one context only ({@link Topology}).
 */
final class ServerProbe {
  /**
   * One round trip: role, read-only, cluster identity, the timeline a primary writes on (from its current WAL file
   * name), its WAL position or the standby's replayed one, and how long ago the standby's last replayed commit was.
   */
  static final String SQL = "SELECT pg_is_in_recovery(), current_setting('transaction_read_only') = 'on', "
      + "(SELECT system_identifier FROM pg_control_system())::text, "
      + "CASE WHEN pg_is_in_recovery() THEN 0 "
      + "ELSE ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int END, "
      + "((CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_lsn() END) "
      + "- '0/0'::pg_lsn)::bigint, "
      + "(extract(epoch FROM clock_timestamp() - pg_last_xact_replay_timestamp()) * 1000)::bigint";

  private final Config.Host host;
  private final Function<Config.Host, Pool> connect;
  private final long timeoutMs;
  private Pool pool;
  private Future<ServerState> inFlight;
  private ServerState last;

  ServerProbe(Config.Host host, Function<Config.Host, Pool> connect, long timeoutMs) {
    this.host = host;
    this.connect = connect;
    this.timeoutMs = timeoutMs;
  }

  Config.Host host() {
    return host;
  }

  /**
   * One check, or the one still in flight; never fails: an error or a timeout (the check timeout) is an unreachable
   * state.
   */
  Future<ServerState> check() {
    if (inFlight != null) return inFlight;
    if (pool == null) pool = connect.apply(host);
    Pool p = pool;
    long begun = System.currentTimeMillis();
    Future<ServerState> f = p.query(SQL).execute()
        .timeout(timeoutMs, TimeUnit.MILLISECONDS)
        .map(rows -> state(rows.iterator().next(), begun))
        .recover(e -> {
          // a late answer or a socket to a frozen server must not be reused: start over next time
          if (pool == p) {
            pool = null;
            p.close();
          }
          return Future.succeededFuture(ServerState.unreachable(host, describe(e), begun));
        });
    inFlight = f;
    f.onComplete(ar -> {
      last = ar.result();
      inFlight = null;
    });
    return f;
  }

  /** What the last finished check found ("not checked yet" before the first). */
  ServerState last() {
    return last != null ? last : ServerState.unreachable(host, "not checked yet", 0);
  }

  private ServerState state(Row r, long begun) {
    boolean recovery = Boolean.TRUE.equals(r.getBoolean(0));
    Long lsn = r.getLong(4);
    Long since = r.getLong(5);
    Integer timeline = r.getInteger(3);
    return new ServerState(host, true, recovery, Boolean.TRUE.equals(r.getBoolean(1)), r.getString(2),
        timeline == null ? 0 : timeline, lsn == null ? 0 : lsn, since == null ? -1 : Math.max(0, since), null,
        begun);
  }

  void close() {
    if (pool != null) pool.close();
    pool = null;
  }

  static String describe(Throwable e) {
    if (e instanceof java.util.concurrent.TimeoutException) {
      return "no answer within the check timeout";
    }
    String m = e.getMessage();
    if (m == null || m.isBlank()) return e.getClass().getSimpleName();
    int nl = m.indexOf('\n');
    return nl < 0 ? m : m.substring(0, nl);
  }
}
