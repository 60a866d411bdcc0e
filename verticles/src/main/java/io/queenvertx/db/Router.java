package io.queenvertx.db;

import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import java.util.function.Function;

/** Runs one database call on the pool the router chooses now ({@link PrimaryPool}, {@link ReadPool}). */
interface Router {
  <T> Future<T> execute(Function<Pool, Future<T>> call);
}
