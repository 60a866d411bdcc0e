package io.queenvertx.db;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.SqlClient;
import io.vertx.sqlclient.Tuple;
import java.util.UUID;

/**
 * The queue procedures of R__50_queues.sql: configure (errors QV401), delete, and which tenant owns a partition.
 */
public final class QueueProcedures {
  static final String CONFIGURE = "SELECT queen.configure_queue($1, $2, $3::text::jsonb, $4)::text";
  static final String DELETE = "SELECT queen.delete_queue($1, $2)";
  static final String OWNED = "SELECT EXISTS (SELECT 1 FROM queen.partition_tenant($1) WHERE tenant_id = $2)";

  private final SqlClient sql;

  public QueueProcedures(SqlClient sql) {
    this.sql = sql;
  }

  /** Creates or changes the queue; its JSON answer as text. {@code options} is the JSON object's text. */
  public Future<String> configure(UUID tenant, String queue, String options, String mode) {
    return sql.preparedQuery(CONFIGURE).execute(Tuple.of(tenant, queue, options, mode))
        .map(rows -> rows.iterator().next().getString(0));
  }

  /** Deletes the queue: {@code {existed, partitionIds}}. */
  public Future<JsonObject> delete(UUID tenant, String queue) {
    return sql.preparedQuery(DELETE).execute(Tuple.of(tenant, queue))
        .map(rows -> (JsonObject) rows.iterator().next().getValue(0));
  }

  /** Whether {@code tenant} owns the partition (false for one that does not exist). */
  public Future<Boolean> owns(UUID tenant, UUID partitionId) {
    return sql.preparedQuery(OWNED).execute(Tuple.of(partitionId, tenant))
        .map(rows -> Boolean.TRUE.equals(rows.iterator().next().getBoolean(0)));
  }
}
