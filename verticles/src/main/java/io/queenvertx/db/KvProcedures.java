package io.queenvertx.db;

import io.vertx.core.Future;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlClient;
import io.vertx.sqlclient.Tuple;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * The key-value procedures of R__96_kv.sql (docs/design/queen2-contract.md §2.7): {@code kv_apply} (one call, one
 * statement, so atomic; inside a bundle's transaction when built over its connection), the console reads
 * {@code kv_list} and {@code kv_namespaces}, and the maintenance calls {@code kv_sweep_expired} and {@code kv_stats}.
 * Errors are QV8xx SQLSTATEs ({@link SqlState}); a lost {@code required} precondition is QV820 with its verdict as the
 * DETAIL ({@link SqlState#detail}).
 */
public final class KvProcedures {
  static final String APPLY = "SELECT idx, kind, key, applied, present, reason, version, value, expires_at, updated_at,"
      + " truncated, next_after FROM queen.kv_apply($1::uuid, $2::text[], $3::text[], $4::text[], $5::text[],"
      + " $6::int8[], $7::bool[], $8::int8[], $9::text[]::numeric[], $10::text[]::numeric[], $11::text[]::numeric[],"
      + " $12::bool[], $13::int4[], $14::text[], $15::bool[], $16::int4[], $17::text[], $18::bool)";
  static final String LIST = "SELECT key, value, version, expires_at, updated_at, expired, bytes, more"
      + " FROM queen.kv_list($1::uuid, $2, $3, $4, $5, $6, $7)";
  static final String NAMESPACES = "SELECT namespace, keys, keys_capped FROM queen.kv_namespaces($1::uuid)";
  static final String STATS = "SELECT entries_estimate, expired_unswept, expired_capped FROM queen.kv_stats()";
  static final String SWEEP = "SELECT queen.kv_sweep_expired($1)";

  /**
   * One operation as the wire sends it, types already checked: {@code value} is the JSON text to store, the numbers of
   * incr their decimal text, {@code keys} getMany's keys (null for the other operations).
   */
  public record Op(String op, String ns, String key, String value, Long ttlSeconds, boolean forever, Long expect,
                   String delta, String min, String max, boolean required, Integer limit, String after,
                   boolean keysOnly, List<String> keys) {}

  /** A row of {@code kv_apply}: a getMany/getPrefix row ({@code kind} row or missing) or an operation's result. */
  public record Entry(String kind, String key, Boolean applied, Boolean present, String reason, Long version,
                      String value, OffsetDateTime expiresAt, OffsetDateTime updatedAt, Boolean truncated,
                      String nextAfter) {}

  /** One operation's answer: its result row and, for getMany and getPrefix, the rows before it. */
  public record Result(int index, String op, Entry result, List<Entry> rows) {}

  /** A row of {@code kv_list}. */
  public record Listed(String key, String value, long version, OffsetDateTime expiresAt, OffsetDateTime updatedAt,
                       boolean expired, long bytes) {}

  /** A page of {@code kv_list}: its rows and whether more follow. */
  public record Page(List<Listed> rows, boolean truncated) {}

  /** A namespace of the tenant and its entries (counted up to the cap). */
  public record Namespace(String namespace, long keys, boolean capped) {}

  /** The cluster-wide gauges: estimated entries, expired entries not yet swept (capped). */
  public record Stats(long entries, long expiredUnswept, boolean expiredCapped) {}

  private final SqlClient sql;

  public KvProcedures(SqlClient sql) {
    this.sql = sql;
  }

  /** Applies {@code ops} in one statement; {@code inTxn}: a transaction's rider (smaller budgets, no getPrefix). */
  public Future<List<Result>> apply(UUID tenant, List<Op> ops, boolean inTxn) {
    int n = ops.size();
    String[] kinds = new String[n];
    String[] ns = new String[n];
    String[] keys = new String[n];
    String[] values = new String[n];
    Long[] ttls = new Long[n];
    Boolean[] forever = new Boolean[n];
    Long[] expects = new Long[n];
    String[] deltas = new String[n];
    String[] mins = new String[n];
    String[] maxs = new String[n];
    Boolean[] required = new Boolean[n];
    Integer[] limits = new Integer[n];
    String[] afters = new String[n];
    Boolean[] keysOnly = new Boolean[n];
    List<Integer> manyOf = new ArrayList<>();
    List<String> manyKeys = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Op o = ops.get(i);
      kinds[i] = o.op();
      ns[i] = o.ns();
      keys[i] = o.key();
      values[i] = o.value();
      ttls[i] = o.ttlSeconds();
      forever[i] = o.forever();
      expects[i] = o.expect();
      deltas[i] = o.delta();
      mins[i] = o.min();
      maxs[i] = o.max();
      required[i] = o.required();
      limits[i] = o.limit();
      afters[i] = o.after();
      keysOnly[i] = o.keysOnly();
      if (o.keys() != null) {
        for (String k : o.keys()) {
          manyOf.add(i);
          manyKeys.add(k);
        }
      }
    }
    Tuple t = Tuple.tuple().addValue(tenant).addValue(kinds).addValue(ns).addValue(keys).addValue(values)
        .addValue(ttls).addValue(forever).addValue(expects).addValue(deltas).addValue(mins).addValue(maxs)
        .addValue(required).addValue(limits).addValue(afters).addValue(keysOnly)
        .addValue(manyOf.toArray(new Integer[0])).addValue(manyKeys.toArray(new String[0])).addValue(inTxn);
    return sql.preparedQuery(APPLY).execute(t).map(rows -> {
      List<Result> out = new ArrayList<>(n);
      List<Entry> pending = new ArrayList<>();
      for (Row r : rows) {
        Entry e = new Entry(r.getString(1), r.getString(2), r.getBoolean(3), r.getBoolean(4), r.getString(5),
            r.getLong(6), r.getString(7), r.getOffsetDateTime(8), r.getOffsetDateTime(9), r.getBoolean(10),
            r.getString(11));
        if (!"result".equals(e.kind())) {
          pending.add(e);
          continue;
        }
        int idx = r.getInteger(0);
        out.add(new Result(idx, kinds[idx], e, pending));
        pending = new ArrayList<>();
      }
      return out;
    });
  }

  /** One page of a namespace for the console ({@code kv_list}); QV803 for a bad namespace. */
  public Future<Page> list(UUID tenant, String ns, String prefix, String after, int limit, boolean keysOnly,
                           boolean includeExpired) {
    return sql.preparedQuery(LIST).execute(Tuple.of(tenant, ns, prefix, after, limit, keysOnly, includeExpired))
        .map(rows -> {
          List<Listed> out = new ArrayList<>();
          boolean more = false;
          for (Row r : rows) {
            if (r.getString(0) == null) {
              more = Boolean.TRUE.equals(r.getBoolean(7));
              continue;
            }
            out.add(new Listed(r.getString(0), r.getString(1), r.getLong(2), r.getOffsetDateTime(3),
                r.getOffsetDateTime(4), Boolean.TRUE.equals(r.getBoolean(5)), r.getInteger(6)));
          }
          return new Page(out, more);
        });
  }

  /** The tenant's namespaces in byte order. */
  public Future<List<Namespace>> namespaces(UUID tenant) {
    return sql.preparedQuery(NAMESPACES).execute(Tuple.of(tenant)).map(rows -> {
      List<Namespace> out = new ArrayList<>();
      for (Row r : rows) out.add(new Namespace(r.getString(0), r.getLong(1), Boolean.TRUE.equals(r.getBoolean(2))));
      return out;
    });
  }

  public Future<Stats> stats() {
    return sql.preparedQuery(STATS).execute().map(rows -> {
      Row r = rows.iterator().next();
      return new Stats(r.getLong(0), r.getLong(1), Boolean.TRUE.equals(r.getBoolean(2)));
    });
  }

  /** Deletes up to {@code batch} expired entries: how many went. */
  public Future<Integer> sweepExpired(int batch) {
    return sql.preparedQuery(SWEEP).execute(Tuple.of(batch)).map(rows -> rows.iterator().next().getInteger(0));
  }
}
