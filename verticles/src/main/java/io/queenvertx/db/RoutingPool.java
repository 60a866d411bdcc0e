package io.queenvertx.db;

import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PrepareOptions;
import io.vertx.sqlclient.PreparedQuery;
import io.vertx.sqlclient.Query;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;

/** A {@link Pool} whose queries run on the pool its {@link Router#execute} chooses when they run ({@link RoutedQuery}). */
abstract class RoutingPool implements Pool, Router {
  @Override
  public Query<RowSet<Row>> query(String sql) {
    return RoutedQuery.of(this, p -> p.query(sql));
  }

  @Override
  public PreparedQuery<RowSet<Row>> preparedQuery(String sql) {
    return RoutedQuery.of(this, p -> p.preparedQuery(sql));
  }

  @Override
  public PreparedQuery<RowSet<Row>> preparedQuery(String sql, PrepareOptions options) {
    return RoutedQuery.of(this, p -> p.preparedQuery(sql, options));
  }
}
