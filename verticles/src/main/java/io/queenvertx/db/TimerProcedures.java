package io.queenvertx.db;

import io.queenvertx.json.Timestamps;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.SqlClient;
import io.vertx.sqlclient.Tuple;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.UUID;

/**
 * The timer procedures of R__97_timers.sql (docs/design/queen2-contract.md §3.5; errors QV902..QV914, QV950, read
 * through {@link SqlState}). Built over the pool ({@link Database#timers()}), each call is its own transaction (one
 * statement); built over an open transaction ({@link Transaction#timers()}), {@link #apply} rides it (a transaction's
 * {@code timers} rider) and {@link #claim} / {@link #fired} make the fire's claim, push and delete one commit.
 */
public final class TimerProcedures {
  static final String APPLY = "SELECT idx, ok, status, queue, timer_key, txn, message_id, deliver_at FROM "
      + "queen.timers_apply($1, $2, $3::text[], $4::text[], $5::text[], $6::text[], $7::bigint[], $8::text[], "
      + "$9::uuid[], $10::bytea[], $11::boolean[])";
  static final String CLAIM = "SELECT tenant_id, queue, timer_key, partition, due_at, transaction_id, message_id, "
      + "payload, encrypted, producer_sub, attempts, late_ms FROM queen.timers_claim($1)";
  static final String FIRED = "SELECT queen.timers_fired($1::uuid[], $2::text[], $3::text[], $4::uuid[])";
  static final String FAIL = "SELECT queen.timers_fail($1::uuid[], $2::text[], $3::text[], $4::uuid[], $5, $6)";
  static final String PEEK = "SELECT * FROM queen.timers_peek($1, $2, $3)";
  static final String LIST = "SELECT * FROM queen.timers_list($1, $2, $3, $4)";
  static final String PROBE = "SELECT next_visible_at, oldest_due_at, pending, pending_capped, due, due_capped, "
      + "clock_timestamp() AS now FROM queen.timers_probe($1)";

  /**
   * One operation of a call, as the route or the rider parsed it: {@code op} schedule, reschedule or cancel. For a
   * cancel only queue and key count ({@code txn}: the caller's, echoed on {@code absent}; may be null). For a schedule
   * the broker minted {@code messageId}; {@code payload} is the message's JSON bytes (the envelope when
   * {@code encrypted}).
   */
  public record Op(String op, String queue, String timerKey, String partition, Long delayMs, String txn,
                   UUID messageId, byte[] payload, boolean encrypted) {
    public static Op cancel(String queue, String timerKey, String txn) {
      return new Op("cancel", queue, timerKey, null, null, txn, null, null, false);
    }
  }

  /** The result of one operation, in request order (§3.4); {@link #toJson} is the wire object. */
  public record Applied(int index, boolean ok, String status, String queue, String timerKey, String txn,
                        UUID messageId, OffsetDateTime deliverAt) {
    public boolean scheduled() {
      return "scheduled".equals(status) || "rescheduled".equals(status);
    }

    /** {@code {ok, status, queue, timerKey, txn}} plus {@code messageId, deliverAt} for a schedule. */
    public JsonObject toJson() {
      JsonObject o = new JsonObject().put("ok", ok).put("status", status).put("queue", queue)
          .put("timerKey", timerKey).put("txn", txn);
      if (scheduled()) {
        o.put("messageId", messageId == null ? null : messageId.toString())
            .put("deliverAt", Timestamps.micros(deliverAt));
      }
      return o;
    }
  }

  /** A claimed timer: the message to push now. {@code lateMs} is how far past its due time it is. */
  public record Claimed(UUID tenant, String queue, String timerKey, String partition, OffsetDateTime dueAt,
                        String txn, UUID messageId, byte[] payload, boolean encrypted, String producerSub,
                        int attempts, long lateMs) {}

  /**
   * The sweep's probe: when the next timer becomes visible (null: none pending), the due time of the oldest due one
   * (null: none late), the capped counts, and the database's clock at the probe.
   */
  public record Probe(OffsetDateTime nextVisibleAt, OffsetDateTime oldestDueAt, long pending, boolean pendingCapped,
                      long due, boolean dueCapped, OffsetDateTime now) {}

  private final SqlClient sql;

  public TimerProcedures(SqlClient sql) {
    this.sql = sql;
  }

  /**
   * Schedules, reschedules or cancels (timers_apply): one result per operation in request order. On the pool it is
   * one transaction of its own; on a {@link Transaction} it commits with the rest of it. Fails with QV9xx.
   */
  public Future<List<Applied>> apply(UUID tenant, String producerSub, List<Op> ops) {
    int n = ops.size();
    String[] kinds = new String[n];
    String[] queues = new String[n];
    String[] keys = new String[n];
    String[] partitions = new String[n];
    Long[] delays = new Long[n];
    String[] txns = new String[n];
    UUID[] ids = new UUID[n];
    Buffer[] payloads = new Buffer[n];
    Boolean[] encrypted = new Boolean[n];
    for (int i = 0; i < n; i++) {
      Op o = ops.get(i);
      kinds[i] = o.op();
      queues[i] = o.queue();
      keys[i] = o.timerKey();
      partitions[i] = o.partition();
      delays[i] = o.delayMs();
      txns[i] = o.txn();
      ids[i] = o.messageId();
      payloads[i] = o.payload() == null ? null : Buffer.buffer(o.payload());
      encrypted[i] = o.encrypted();
    }
    Tuple args = Tuple.of(tenant, producerSub, kinds, queues, keys, partitions).addValue(delays).addValue(txns)
        .addValue(ids).addValue(payloads).addValue(encrypted);
    return sql.preparedQuery(APPLY).execute(args).map(rows -> {
      List<Applied> out = new ArrayList<>(n);
      for (Row r : rows) {
        out.add(new Applied(r.getInteger("idx"), Boolean.TRUE.equals(r.getBoolean("ok")), r.getString("status"),
            r.getString("queue"), r.getString("timer_key"), r.getString("txn"), r.getUUID("message_id"),
            r.getOffsetDateTime("deliver_at")));
      }
      return out;
    });
  }

  /** Claims up to {@code limit} due timers, due order, SKIP LOCKED. Meaningful only on a {@link Transaction}. */
  public Future<List<Claimed>> claim(int limit) {
    return sql.preparedQuery(CLAIM).execute(Tuple.of(limit)).map(rows -> {
      List<Claimed> out = new ArrayList<>(rows.size());
      for (Row r : rows) {
        out.add(new Claimed(r.getUUID("tenant_id"), r.getString("queue"), r.getString("timer_key"),
            r.getString("partition"), r.getOffsetDateTime("due_at"), r.getString("transaction_id"),
            r.getUUID("message_id"), r.getBuffer("payload").getBytes(), Boolean.TRUE.equals(r.getBoolean("encrypted")),
            r.getString("producer_sub"), r.getInteger("attempts"), r.getLong("late_ms")));
      }
      return out;
    });
  }

  /** Deletes the claimed timers whose messages this transaction pushed; fails (QV950) unless all were deleted. */
  public Future<Integer> fired(List<Claimed> timers) {
    return sql.preparedQuery(FIRED).execute(identities(timers)).map(rows -> rows.iterator().next().getInteger(0));
  }

  /** After a failed fire: backs the timers off for {@code backoffMs} and keeps {@code error}; the count. */
  public Future<Integer> fail(List<Claimed> timers, int backoffMs, String error) {
    return sql.preparedQuery(FAIL).execute(identities(timers).addValue(backoffMs).addValue(error))
        .map(rows -> rows.iterator().next().getInteger(0));
  }

  /** The peek object (§3.4): {@code found:true} with the timer, or {@code {found:false, queue, timerKey}}. */
  public Future<JsonObject> peek(UUID tenant, String queue, String timerKey) {
    return sql.preparedQuery(PEEK).execute(Tuple.of(tenant, queue, timerKey)).map(rows -> {
      if (rows.size() == 0) return new JsonObject().put("found", false).put("queue", queue).put("timerKey", timerKey);
      Row r = rows.iterator().next();
      JsonObject o = new JsonObject().put("found", true);
      describe(r, o);
      return o.put("payload", Base64.getEncoder().encodeToString(r.getBuffer("payload").getBytes()))
          .put("payloadZstd", false);
    });
  }

  /** A page of the queue's timers in key order: {@code {rows, truncated, nextAfter}} (§3.1). */
  public Future<JsonObject> list(UUID tenant, String queue, String after, int limit) {
    return sql.preparedQuery(LIST).execute(Tuple.of(tenant, queue, after, limit)).map(TimerProcedures::page);
  }

  /** The cluster-wide probe (the sweep's wake-up and the gauges), counts capped at {@code cap}. */
  public Future<Probe> probe(int cap) {
    return sql.preparedQuery(PROBE).execute(Tuple.of(cap)).map(rows -> {
      Row r = rows.iterator().next();
      return new Probe(r.getOffsetDateTime("next_visible_at"), r.getOffsetDateTime("oldest_due_at"),
          r.getLong("pending"), Boolean.TRUE.equals(r.getBoolean("pending_capped")), r.getLong("due"),
          Boolean.TRUE.equals(r.getBoolean("due_capped")), r.getOffsetDateTime("now"));
    });
  }

  private static JsonObject page(RowSet<Row> rows) {
    JsonArray out = new JsonArray();
    boolean more = false;
    String last = null;
    for (Row r : rows) {
      JsonObject o = new JsonObject();
      describe(r, o);
      out.add(o);
      more = Boolean.TRUE.equals(r.getBoolean("more"));
      last = r.getString("timer_key");
    }
    return new JsonObject().put("rows", out).put("truncated", more).put("nextAfter", more ? last : null);
  }

  private static void describe(Row r, JsonObject o) {
    o.put("queue", r.getString("queue")).put("timerKey", r.getString("timer_key"))
        .put("partition", r.getString("partition")).put("deliverAt", Timestamps.micros(r.getOffsetDateTime(
            "deliver_at")))
        .put("txn", r.getString("transaction_id")).put("messageId", String.valueOf(r.getUUID("message_id")))
        .put("encrypted", Boolean.TRUE.equals(r.getBoolean("encrypted"))).put("producerSub", r.getString(
            "producer_sub"))
        .put("attempts", r.getInteger("attempts")).put("lastError", r.getString("last_error")).put("claimed", false)
        .put("createdAt", Timestamps.micros(r.getOffsetDateTime("created_at")))
        .put("updatedAt", Timestamps.micros(r.getOffsetDateTime("updated_at")));
  }

  private static Tuple identities(List<Claimed> timers) {
    int n = timers.size();
    UUID[] tenants = new UUID[n];
    String[] queues = new String[n];
    String[] keys = new String[n];
    UUID[] ids = new UUID[n];
    for (int i = 0; i < n; i++) {
      Claimed c = timers.get(i);
      tenants[i] = c.tenant();
      queues[i] = c.queue();
      keys[i] = c.timerKey();
      ids[i] = c.messageId();
    }
    return Tuple.of(tenants, queues, keys, ids);
  }
}
