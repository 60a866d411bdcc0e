package io.queenvertx.db;

import io.queenvertx.codec.TxnHash;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.SqlClient;
import io.vertx.sqlclient.Tuple;
import java.util.UUID;

/** The message inspection procedures of R__60_inspection.sql (the segment reads are {@link SegmentProcedures}). */
public final class InspectionProcedures {
  static final String LIST = "SELECT queen.list_messages($1, $2::text::jsonb)";
  static final String DETAIL = "SELECT queen.message_detail($1, $2, $3, $4)";
  static final String DELETE = "SELECT queen.delete_message($1, $2, $3)";

  private final SqlClient sql;
  private final SqlClient reads;

  /** {@code reads}: where the listing and the detail read (the read pool); the delete writes through {@code sql}. */
  public InspectionProcedures(SqlClient sql, SqlClient reads) {
    this.sql = sql;
    this.reads = reads;
  }

  /** One page of the message listing for {@code filter} (the JSON object's text). */
  public Future<JsonObject> list(UUID tenant, String filter) {
    return reads.preparedQuery(LIST).execute(Tuple.of(tenant, filter))
        .map(rows -> (JsonObject) rows.iterator().next().getValue(0));
  }

  /** Where a message is: by the hash of its transaction id, or at {@code offset} when given. */
  public Future<JsonObject> detail(UUID tenant, UUID partitionId, String transactionId, Long offset) {
    return reads.preparedQuery(DETAIL)
        .execute(Tuple.of(tenant, partitionId, Buffer.buffer(TxnHash.of(transactionId)), offset))
        .map(rows -> (JsonObject) rows.iterator().next().getValue(0));
  }

  /** Deletes an address's dead-letter rows: how many went. */
  public Future<Long> deleteDeadLetters(UUID tenant, UUID partitionId, String transactionId) {
    return sql.preparedQuery(DELETE).execute(Tuple.of(tenant, partitionId, transactionId))
        .map(rows -> ((JsonObject) rows.iterator().next().getValue(0)).getLong("deleted", 0L));
  }
}
