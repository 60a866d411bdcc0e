package io.queenvertx.db;

import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.Tuple;

/**
 * The one Java owner of the statistics tables ({@code stats_node_minute}, {@code stats_queue_minute},
 * {@code stats_node_totals}) and of the metrics page's reads: every call is a procedure of {@code R__92_stats.sql}.
 */
public final class StatsStore {
  /** Queues (or queue/group pairs) a Prometheus page lists at most. */
  public static final int MAX_SERIES_ROWS = 1000;
  private final Pool pool;

  public StatsStore(Pool pool) {
    this.pool = pool;
  }

  /** Adds one node's drained counts; answers {@code {"nodeRows","queueRows"}}. One transaction. */
  public Future<JsonObject> flush(String nodeId, String host, JsonArray nodes, JsonArray queues) {
    return pool.preparedQuery("SELECT queen.stats_flush($1, $2, $3::jsonb, $4::jsonb)")
        .execute(Tuple.of(nodeId, host, nodes, queues))
        .map(rows -> (JsonObject) rows.iterator().next().getValue(0));
  }

  /** Deletes up to {@code batch} minute rows of each table older than {@code days}; the larger count deleted. */
  public Future<Integer> purge(int days, int batch) {
    return pool.preparedQuery("SELECT queen.stats_purge($1, $2)").execute(Tuple.of(days, batch))
        .map(rows -> rows.iterator().next().getInteger(0));
  }

  /** The cluster counters (sums of every node's running totals), by V16 column name. */
  public Future<java.util.Map<String, Long>> clusterTotals() {
    return pool.query("SELECT counter, total FROM queen.stats_cluster_totals()").execute().map(rows -> {
      java.util.Map<String, Long> out = new java.util.HashMap<>();
      for (Row r : rows) out.put(r.getString(0), r.getLong(1));
      return out;
    });
  }

  /** Per queue name: its latest closed minute's figures, summed over nodes, with the minute's age. */
  public Future<RowSet<Row>> queueLastMinute() {
    return pool.preparedQuery("SELECT * FROM queen.stats_queue_last_minute($1)").execute(Tuple.of(MAX_SERIES_ROWS));
  }

  /** Per queue name: depth after the queue-mode cursor, age of the oldest unconsumed segment, dead-letter rows. */
  public Future<RowSet<Row>> queueDepths() {
    return pool.preparedQuery("SELECT * FROM queen.stats_queue_depths($1)").execute(Tuple.of(Integer.MAX_VALUE));
  }

  /** Per (queue name, consumer group), the most lagging first: messages after the cursors and the oldest's age. */
  public Future<RowSet<Row>> groupLag() {
    return pool.preparedQuery("SELECT * FROM queen.stats_group_lag($1)").execute(Tuple.of(MAX_SERIES_ROWS));
  }
}
