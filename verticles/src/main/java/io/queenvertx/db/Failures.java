package io.queenvertx.db;

import io.vertx.pgclient.PgException;

/** How a failed database call reads to the failover logic. */
final class Failures {
  private Failures() {}

  /**
   * Whether a call failed because its server went away or stopped taking writes, not because of the statement: a
   * refused write on a read-only server (SQLSTATE 25006), a connection failure (class 08), the server shutting down,
   * crashing or starting (57P01, 57P02, 57P03), or anything that is not a PostgreSQL error at all (the socket closed or
   * refused, the pool closed under it) except a timeout, which an overloaded server gives too. Such a call asks for a
   * check of the servers at once, and is run once more on the primary the check finds ({@link PrimaryPool}).
   */
  static boolean cut(Throwable e) {
    if (e instanceof NoWritableServer || e instanceof java.util.concurrent.TimeoutException) return false;
    // not a PostgreSQL error at all: the socket closed or refused, the pool closed under it
    if (!(e instanceof PgException)) return true;
    return switch (SqlState.of(e)) {
      case READ_ONLY_SQL_TRANSACTION, CONNECTION_EXCEPTION, ADMIN_SHUTDOWN, CRASH_SHUTDOWN, CANNOT_CONNECT_NOW -> true;
      default -> false;
    };
  }
}
