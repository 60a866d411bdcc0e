package io.queenvertx.db;

import io.vertx.core.Future;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlClient;
import io.vertx.sqlclient.Tuple;

/**
 * The read-only procedures whose JSON text the HTTP routes answer verbatim (status, resources, analytics, traces,
 * consumer-group reads) and the keyset-paged listings (a queue's partitions, the consumer groups, a message's traces).
 * Each is named by a constant of {@link Report} or {@link Listing}, which holds its SQL; the caller passes the
 * arguments in the procedure's order.
 */
public final class ReportProcedures {
  /** A procedure returning one JSON text. */
  public enum Report {
    GET_QUEUES("get_queues", 1),
    QUEUE_DEPTH("queue_depth", 3),
    RESOURCES_OVERVIEW("resources_overview", 1),
    RESOURCES_NAMESPACES("resources_namespaces", 1),
    RESOURCES_TASKS("resources_tasks", 1),
    CONSUMER_GROUPS_LAGGING("consumer_groups_lagging", 2),
    CONSUMER_GROUP("consumer_group", 2),
    CONSUMER_GROUP_SUBSCRIPTION("consumer_group_subscription", 3),
    STATUS("status", 4),
    STATUS_QUEUES("status_queues", 6),
    STATUS_QUEUE("status_queue", 2),
    STATUS_ANALYTICS("status_analytics", 7),
    ANALYTICS_SYSTEM_METRICS("analytics_system_metrics", 5),
    ANALYTICS_WORKER_METRICS("analytics_worker_metrics", 7),
    ANALYTICS_QUEUE_OPS("analytics_queue_ops", 8),
    ANALYTICS_WORKLOAD("analytics_workload", 7),
    ANALYTICS_PARKED_REPLICAS("analytics_parked_replicas", 5),
    ANALYTICS_RETENTION("analytics_retention", 6),
    ANALYTICS_DLQ_SIGNATURES("analytics_dlq_signatures", 6),
    ANALYTICS_QUEUE_LAG("analytics_queue_lag", 4),
    ANALYTICS_PARTITION_LIVENESS("analytics_partition_liveness", 4),
    ANALYTICS_POSTGRES_STATS("analytics_postgres_stats", 0),
    TRACE_NAMES("trace_names", 3),
    TRACES_BY_NAME("traces_by_name", 4),
    RESOURCES_PARTITIONS("resources_partitions", 3),
    QUEUE_SIZES("queue_sizes", 2),
    CONSUMER_GROUP_POSITIONS("consumer_group_positions", 3),
    PARTITIONS_CHANGED("partitions_changed", 2),
    FETCH_OFFSETS("fetch_offsets", 2);

    final String sql;
    final int arity;

    Report(String function, int arity) {
      this.sql = "SELECT queen." + function + "(" + params(arity) + ")::text";
      this.arity = arity;
    }
  }

  /** A paged listing: one row of (the page's JSON text, the key of its last row when more rows follow, else null). */
  public enum Listing {
    QUEUE_PARTITIONS("get_queue", 4),
    CONSUMER_GROUPS("consumer_groups", 3),
    TRACES_OF_MESSAGE("traces_of_message", 5);

    final String sql;
    final int arity;

    Listing(String function, int arity) {
      this.sql = "SELECT body, next_after FROM queen." + function + "(" + params(arity) + ")";
      this.arity = arity;
    }
  }

  /** One page of a {@link Listing}: its JSON text and the next page's key (null on the last page). */
  public record Page(String body, String nextKey) {}

  private final SqlClient sql;

  public ReportProcedures(SqlClient sql) {
    this.sql = sql;
  }

  /** The procedure's JSON text (null when it answered SQL NULL). */
  public Future<String> text(Report r, Object... args) {
    if (args.length != r.arity) throw new IllegalArgumentException(r + " takes " + r.arity + " arguments");
    return sql.preparedQuery(r.sql).execute(Tuple.from(args)).map(rows -> rows.iterator().next().getString(0));
  }

  /** One page of the listing. */
  public Future<Page> page(Listing l, Object... args) {
    if (args.length != l.arity) throw new IllegalArgumentException(l + " takes " + l.arity + " arguments");
    return sql.preparedQuery(l.sql).execute(Tuple.from(args)).map(rows -> {
      Row r = rows.iterator().next();
      return new Page(r.getString(0), r.getString(1));
    });
  }

  static String params(int n) {
    StringBuilder b = new StringBuilder();
    for (int i = 1; i <= n; i++) b.append(i > 1 ? ", $" : "$").append(i);
    return b.toString();
  }
}
