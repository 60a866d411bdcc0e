package io.queenvertx.db;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.SqlClient;
import io.vertx.sqlclient.Tuple;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.UUID;

/**
 * The consumer-group writes of R__72_consumer_groups.sql (delete, seek) and the trace record of R__74_traces.sql.
 * The group reads are {@link ReportProcedures}.
 */
public final class GroupProcedures {
  static final String DELETE = "SELECT queen.consumer_group_delete($1, $2, $3::text, $4)";
  static final String SEEK = "SELECT queen.consumer_group_seek($1, $2, $3, $4::text, $5, $6::timestamptz)";
  static final String CONFLATION = "SELECT queen.consumer_group_conflation($1, $2, $3)";
  static final String TRACE = "SELECT queen.trace_record($1, $2, $3, $4, $5, $6::text::jsonb, $7, $8)";

  private final SqlClient sql;

  public GroupProcedures(SqlClient sql) {
    this.sql = sql;
  }

  /** Deletes the group's cursors (on {@code queue}, or every queue when null), and its metadata when asked. */
  public Future<JsonObject> delete(UUID tenant, String group, String queue, boolean deleteMetadata) {
    return sql.preparedQuery(DELETE).execute(Tuple.of(tenant, group, queue, deleteMetadata))
        .map(rows -> (JsonObject) rows.iterator().next().getValue(0));
  }

  /** Moves the group's cursors on {@code queue} (one partition when named) to the end or to {@code at}. */
  public Future<JsonObject> seek(UUID tenant, String group, String queue, String partition, boolean toEnd,
                                 OffsetDateTime at) {
    return sql.preparedQuery(SEEK).execute(Tuple.of(tenant, group, queue, partition, toEnd, at))
        .map(rows -> (JsonObject) rows.iterator().next().getValue(0));
  }

  /** The group's stored conflation policy on {@code queue}; null when the group has not met the queue. */
  public Future<Boolean> conflation(UUID tenant, String queue, String group) {
    return sql.preparedQuery(CONFLATION).execute(Tuple.of(tenant, queue, group))
        .map(rows -> rows.iterator().next().getBoolean(0));
  }

  /** Records one trace event of a message ({@code data}: JSON text). */
  public Future<JsonObject> recordTrace(UUID tenant, UUID partitionId, String transactionId, String group,
                                        String eventType, String data, String workerId, List<String> names) {
    return sql.preparedQuery(TRACE)
        .execute(Tuple.of(tenant, partitionId, transactionId, group, eventType, data, workerId,
            names.toArray(new String[0])))
        .map(rows -> (JsonObject) rows.iterator().next().getValue(0));
  }
}
