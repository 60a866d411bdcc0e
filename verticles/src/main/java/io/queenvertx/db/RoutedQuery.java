package io.queenvertx.db;

import io.vertx.core.Future;
import io.vertx.sqlclient.PreparedQuery;
import io.vertx.sqlclient.Query;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.SqlResult;
import io.vertx.sqlclient.Tuple;
import java.util.List;
import java.util.function.Function;
import java.util.stream.Collector;

/**
 * A query (plain or prepared) whose pool is chosen when it is executed, not when it is built: the
 * {@link Router} picks the pool, this builds the query on it ({@code make}) and runs it. So a query built before a
 * failover runs on the new primary, and one built while no server takes writes fails at once.
 */
final class RoutedQuery<T> implements PreparedQuery<T> {
  private final Router router;
  private final Function<io.vertx.sqlclient.Pool, Query<T>> make;

  RoutedQuery(Router router, Function<io.vertx.sqlclient.Pool, Query<T>> make) {
    this.router = router;
    this.make = make;
  }

  static RoutedQuery<RowSet<Row>> of(Router router, Function<io.vertx.sqlclient.Pool, Query<RowSet<Row>>> make) {
    return new RoutedQuery<>(router, make);
  }

  @Override
  public Future<T> execute() {
    return router.execute(p -> make.apply(p).execute());
  }

  @Override
  public Future<T> execute(Tuple tuple) {
    return router.execute(p -> prepared(make.apply(p)).execute(tuple));
  }

  @Override
  public Future<T> executeBatch(List<Tuple> batch) {
    return router.execute(p -> prepared(make.apply(p)).executeBatch(batch));
  }

  @Override
  public <R> PreparedQuery<SqlResult<R>> collecting(Collector<Row, ?, R> collector) {
    return new RoutedQuery<>(router, p -> {
      Query<T> q = make.apply(p);
      return q instanceof PreparedQuery<T> pq ? pq.collecting(collector) : q.collecting(collector);
    });
  }

  @Override
  public <U> PreparedQuery<RowSet<U>> mapping(Function<Row, U> mapper) {
    return new RoutedQuery<>(router, p -> {
      Query<T> q = make.apply(p);
      return q instanceof PreparedQuery<T> pq ? pq.mapping(mapper) : q.mapping(mapper);
    });
  }

  private static <T> PreparedQuery<T> prepared(Query<T> q) {
    if (q instanceof PreparedQuery<T> pq) return pq;
    throw new IllegalStateException("a plain query takes no parameters: use preparedQuery");
  }
}
