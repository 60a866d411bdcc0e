package io.queenvertx.db;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlClient;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/** The retention procedures of R__80_retention.sql and the traces purge of R__74_traces.sql. */
public final class MaintenanceProcedures {
  static final String CLAIM = "SELECT queen.maintenance_claim($1, $2, $3)";
  static final String RELEASE = "SELECT queen.maintenance_release($1, $2, $3)";
  static final String CANDIDATES = "SELECT partition_id FROM queen.retention_candidates($1)";
  static final String TRACES_PURGE = "SELECT queen.traces_purge($1, $2)";
  static final String STEP = "SELECT queen.log_retention_step($1, $2)";

  private final SqlClient sql;

  public MaintenanceProcedures(SqlClient sql) {
    this.sql = sql;
  }

  /** Claims the maintenance task for {@code holder}: its fence, or null while another node holds it. */
  public Future<Long> claim(String task, String holder, long periodMs) {
    return sql.preparedQuery(CLAIM).execute(Tuple.of(task, holder, periodMs))
        .map(rows -> rows.iterator().next().getLong(0));
  }

  public Future<Void> release(String task, Long fence, boolean succeeded) {
    return sql.preparedQuery(RELEASE).execute(Tuple.of(task, fence, succeeded)).mapEmpty();
  }

  /** Up to {@code limit} partitions due for a retention step. */
  public Future<List<UUID>> candidates(int limit) {
    return sql.preparedQuery(CANDIDATES).execute(Tuple.of(limit)).map(rows -> {
      List<UUID> out = new ArrayList<>(rows.size());
      for (Row r : rows) out.add(r.getUUID(0));
      return out;
    });
  }

  /** Deletes up to {@code batch} traces older than {@code days}: how many went. */
  public Future<Integer> purgeTraces(int days, int batch) {
    return sql.preparedQuery(TRACES_PURGE).execute(Tuple.of(days, batch))
        .map(rows -> rows.iterator().next().getInteger(0));
  }

  /** One retention step of a partition. */
  public Future<JsonObject> retentionStep(UUID partitionId, int batch) {
    return sql.preparedQuery(STEP).execute(Tuple.of(partitionId, batch))
        .map(rows -> (JsonObject) rows.iterator().next().getValue(0));
  }
}
