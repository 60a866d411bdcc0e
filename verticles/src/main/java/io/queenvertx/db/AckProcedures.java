package io.queenvertx.db;

import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.SqlClient;
import io.vertx.sqlclient.Tuple;
import java.util.List;
import java.util.UUID;

/**
 * The ack procedures of R__40_ack.sql: {@code log_ack} (one group's verdict, the call of {@code /ack} and of
 * {@code /transaction}), {@code log_ack_many} (several calls in one transaction, {@link AckFusion}) and
 * {@code log_renew_lease}. Errors: QV301.
 */
public final class AckProcedures {
  static final String ONE_SQL = "SELECT queen.log_ack($1, $2, $3, $4, $5::bytea[], $6::text[])";
  static final String MANY_SQL = "SELECT * FROM queen.log_ack_many($1::uuid[], $2::uuid[], $3::text[], $4::text[], "
      + "$5::int[], $6::bytea[], $7::text[])";
  static final String RENEW_SQL = "SELECT queen.log_renew_lease($1, $2, $3)";

  private final SqlClient sql;

  public AckProcedures(SqlClient sql) {
    this.sql = sql;
  }

  /** The {@code log_ack} verdict of one call (ENGINE.md §5.3), on this client (the pool or a transaction). */
  public Future<JsonObject> ack(AckCall c) {
    return sql.preparedQuery(ONE_SQL)
        .execute(Tuple.of(c.tenant(), c.partitionId(), c.group(), c.leaseId(), c.hashes(), c.statuses()))
        .map(rows -> (JsonObject) rows.iterator().next().getValue(0));
  }

  /** {@code calls} (in lock order) in one {@code log_ack_many} statement: one verdict row per call, in order. */
  Future<RowSet<Row>> ackMany(List<AckCall> calls, int hashCount) {
    int n = calls.size();
    UUID[] tenants = new UUID[n];
    UUID[] pids = new UUID[n];
    String[] groups = new String[n];
    String[] leases = new String[n];
    Integer[] counts = new Integer[n];
    Buffer[] hashes = new Buffer[hashCount];
    String[] statuses = new String[hashCount];
    int k = 0;
    for (int i = 0; i < n; i++) {
      AckCall c = calls.get(i);
      tenants[i] = c.tenant();
      pids[i] = c.partitionId();
      groups[i] = c.group();
      leases[i] = c.leaseId();
      counts[i] = c.hashes().length;
      System.arraycopy(c.hashes(), 0, hashes, k, c.hashes().length);
      System.arraycopy(c.statuses(), 0, statuses, k, c.statuses().length);
      k += c.hashes().length;
    }
    return sql.preparedQuery(MANY_SQL).execute(Tuple.of(tenants, pids, groups, leases, counts, hashes, statuses));
  }

  /** Extends the lease {@code leaseId} by {@code seconds}: {@code {renewed, expiresAt}}. */
  public Future<JsonObject> renewLease(UUID tenant, String leaseId, int seconds) {
    return sql.preparedQuery(RENEW_SQL).execute(Tuple.of(tenant, leaseId, seconds))
        .map(rows -> (JsonObject) rows.iterator().next().getValue(0));
  }
}
