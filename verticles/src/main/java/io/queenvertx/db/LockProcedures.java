package io.queenvertx.db;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlClient;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * Locks and semaphores of R__98_locks.sql (docs/design/queen2-contract.md §4.5): {@code locks_apply} answers each
 * operation's object (§4.2) as the route sends it; {@code locks_sweep} deletes fence rows long expired;
 * {@code locks_stats} counts the fence rows for the gauge. Errors are QV93x/QV94x SQLSTATEs ({@link SqlState}).
 */
public final class LockProcedures {
  static final String APPLY = "SELECT idx, result::text FROM queen.locks_apply($1::uuid, $2::text[], $3::text[],"
      + " $4::int8[], $5::text[], $6::int4[], $7::int8[], $8::int4[])";
  static final String SWEEP = "SELECT queen.locks_sweep($1)";
  static final String STATS = "SELECT fences, fences_capped FROM queen.locks_stats()";

  /** One operation, types already checked; absent fields are null. */
  public record Op(String op, String name, Long ttlSeconds, String owner, Integer limit, Long token, Integer slot) {}

  /** The fence rows (locks known to the cluster), counted up to the cap. */
  public record Stats(long fences, boolean capped) {}

  private final SqlClient sql;

  public LockProcedures(SqlClient sql) {
    this.sql = sql;
  }

  /** The answer object of each operation, in request order. */
  public Future<List<JsonObject>> apply(UUID tenant, List<Op> ops) {
    int n = ops.size();
    String[] kinds = new String[n];
    String[] names = new String[n];
    Long[] ttls = new Long[n];
    String[] owners = new String[n];
    Integer[] limits = new Integer[n];
    Long[] tokens = new Long[n];
    Integer[] slots = new Integer[n];
    for (int i = 0; i < n; i++) {
      Op o = ops.get(i);
      kinds[i] = o.op();
      names[i] = o.name();
      ttls[i] = o.ttlSeconds();
      owners[i] = o.owner();
      limits[i] = o.limit();
      tokens[i] = o.token();
      slots[i] = o.slot();
    }
    Tuple t = Tuple.tuple().addValue(tenant).addValue(kinds).addValue(names).addValue(ttls).addValue(owners)
        .addValue(limits).addValue(tokens).addValue(slots);
    return sql.preparedQuery(APPLY).execute(t).map(rows -> {
      List<JsonObject> out = new ArrayList<>(n);
      for (Row r : rows) out.add(new JsonObject(r.getString(1)));
      return out;
    });
  }

  /** Deletes up to {@code batch} fence rows whose leases ended over an hour ago: how many went. */
  public Future<Integer> sweep(int batch) {
    return sql.preparedQuery(SWEEP).execute(Tuple.of(batch)).map(rows -> rows.iterator().next().getInteger(0));
  }

  public Future<Stats> stats() {
    return sql.preparedQuery(STATS).execute().map(rows -> {
      Row r = rows.iterator().next();
      return new Stats(r.getLong(0), Boolean.TRUE.equals(r.getBoolean(1)));
    });
  }
}
