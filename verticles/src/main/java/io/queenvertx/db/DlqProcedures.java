package io.queenvertx.db;

import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlClient;
import io.vertx.sqlclient.Tuple;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * The dead-letter procedures: filing a hand-off ({@code log_dlq_file}, {@code log_dlq_abort}, R__40_ack.sql; QV601),
 * the listing and purge, and the moves back into the log ({@code log_dlq_move}, {@code log_dlq_move_many} and the
 * redrive's row locks, R__70_dlq.sql; QV602..QV604).
 */
public final class DlqProcedures {
  static final String FILE = "SELECT queen.log_dlq_file($1, $2, $3, $4::bigint[], $5::uuid[], $6::text[], $7::text[], "
      + "$8::text[], $9::int[], $10, $11)";
  static final String ABORT = "SELECT queen.log_dlq_abort($1, $2, $3)";
  static final String LIST = "SELECT queen.get_dlq_messages($1, $2::text::jsonb)";
  static final String PURGE = "SELECT queen.purge_dlq($1, $2, $3)";
  static final String NEWEST_FOR_ADDRESS = "SELECT * FROM queen.dlq_newest_for_address($1, $2, $3)";
  static final String ROW = "SELECT * FROM queen.dlq_row($1, $2)";
  static final String MOVE = "SELECT queen.log_dlq_move($1, $2, $3, $4, $5, $6)";
  static final String REDRIVE_ROWS = "SELECT * FROM queen.dlq_redrive_rows($1, $2, $3)";
  static final String REDRIVE_ADVANCE = "SELECT queen.dlq_redrive_advance($1, $2, $3, $4, $5)";
  static final String MOVE_MANY = "SELECT queen.log_dlq_move_many($1, $2, $3, $4, $5, $6)";

  /** The poisons of one hand-off, one array element per poison, as {@code log_dlq_file} takes them. */
  public record Filing(UUID partitionId, String group, String token, Long[] offsets, UUID[] messageIds,
                       String[] transactionIds, String[] payloads, String[] errors, Integer[] retryCounts,
                       long target, int retryCount) {}

  /** One dead-letter row: where it was, its address, its stored payload text and when it failed. */
  public record DeadLetter(UUID id, String queue, String partition, String consumerGroup, String transactionId,
                           String payload, OffsetDateTime failedAt) {
    static DeadLetter of(Row r) {
      return new DeadLetter(r.getUUID("id"), r.getString("queue"), r.getString("partition"),
          column(r, "consumer_group"), column(r, "transaction_id"), r.getString("payload"), column(r, "failed_at"));
    }

    @SuppressWarnings("unchecked")
    private static <T> T column(Row r, String name) {
      return r.getColumnIndex(name) < 0 ? null : (T) r.getValue(name);
    }
  }

  private final SqlClient sql;
  private final SqlClient reads;

  /** {@code reads}: where the listing reads (the read pool); everything else goes through {@code sql}. */
  public DlqProcedures(SqlClient sql, SqlClient reads) {
    this.sql = sql;
    this.reads = reads;
  }

  /** Files the poisons and moves the cursor past them: {@code {ok, error}}. */
  public Future<JsonObject> file(Filing f) {
    return sql.preparedQuery(FILE)
        .execute(Tuple.from(new Object[] {f.partitionId(), f.group(), f.token(), f.offsets(), f.messageIds(),
            f.transactionIds(), f.payloads(), f.errors(), f.retryCounts(), f.target(), f.retryCount()}))
        .map(rows -> (JsonObject) rows.iterator().next().getValue(0));
  }

  /** Gives a held batch back while {@code holder} holds it: true when released. */
  public Future<Boolean> abort(UUID partitionId, String group, String holder) {
    return sql.preparedQuery(ABORT).execute(Tuple.of(partitionId, group, holder))
        .map(rows -> Boolean.TRUE.equals(rows.iterator().next().getBoolean(0)));
  }

  /** The DLQ listing for {@code filter} (the JSON object's text). */
  public Future<JsonObject> list(UUID tenant, String filter) {
    return reads.preparedQuery(LIST).execute(Tuple.of(tenant, filter))
        .map(rows -> (JsonObject) rows.iterator().next().getValue(0));
  }

  /** Deletes the dead letters of a queue (and group, when named). */
  public Future<JsonObject> purge(UUID tenant, String queue, String group) {
    return sql.preparedQuery(PURGE).execute(Tuple.of(tenant, queue, group))
        .map(rows -> (JsonObject) rows.iterator().next().getValue(0));
  }

  /** The newest dead letter of an address, or null. */
  public Future<DeadLetter> newestForAddress(UUID tenant, UUID partitionId, String transactionId) {
    return sql.preparedQuery(NEWEST_FOR_ADDRESS).execute(Tuple.of(tenant, partitionId, transactionId))
        .map(rows -> rows.size() == 0 ? null : DeadLetter.of(rows.iterator().next()));
  }

  /** The dead letter {@code id} of the tenant, or null. */
  public Future<DeadLetter> row(UUID tenant, String id) {
    return sql.preparedQuery(ROW).execute(Tuple.of(tenant, id))
        .map(rows -> rows.size() == 0 ? null : DeadLetter.of(rows.iterator().next()));
  }

  /** Claims the row, pushes its frame and deletes the row, in one transaction: {@code {result, ...}}. */
  public Future<JsonObject> move(UUID tenant, UUID id, String queue, String partition, byte[] hashes, byte[] blob) {
    return sql.preparedQuery(MOVE)
        .execute(Tuple.of(tenant, id, queue, partition, Buffer.buffer(hashes), Buffer.buffer(blob)))
        .map(rows -> (JsonObject) rows.iterator().next().getValue(0));
  }

  /** Locks up to {@code limit} rows of the redrive task held by {@code owner}, in keyset order. */
  public Future<List<DeadLetter>> redriveRows(UUID task, String owner, int limit) {
    return sql.preparedQuery(REDRIVE_ROWS).execute(Tuple.of(task, owner, limit)).map(rows -> {
      List<DeadLetter> out = new ArrayList<>(rows.size());
      for (Row r : rows) out.add(DeadLetter.of(r));
      return out;
    });
  }

  /** Advances the task past {@code n} rows ending at ({@code failedAt}, {@code id}); false when no longer its owner. */
  public Future<Boolean> redriveAdvance(UUID task, String owner, long n, OffsetDateTime failedAt, UUID id) {
    return sql.preparedQuery(REDRIVE_ADVANCE).execute(Tuple.of(task, owner, n, failedAt, id))
        .map(rows -> Boolean.TRUE.equals(rows.iterator().next().getBoolean(0)));
  }

  /** Moves the rows {@code ids} as one packed segment: {@code {result, partitionId, baseOffset}}. */
  public Future<JsonObject> moveMany(UUID tenant, UUID[] ids, String queue, String partition, byte[] hashes,
                                     byte[] blob) {
    return sql.preparedQuery(MOVE_MANY)
        .execute(Tuple.of(tenant, ids, queue, partition, Buffer.buffer(hashes), Buffer.buffer(blob)))
        .map(rows -> (JsonObject) rows.iterator().next().getValue(0));
  }
}
