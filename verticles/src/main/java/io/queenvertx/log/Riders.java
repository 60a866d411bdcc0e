package io.queenvertx.log;

import io.queenvertx.bus.TransactionCommand;
import io.queenvertx.codec.EnvelopeCipher;
import io.queenvertx.db.Database;
import io.queenvertx.db.KvProcedures;
import io.queenvertx.db.TimerProcedures;
import io.queenvertx.db.Transaction;
import io.queenvertx.kernel.ApiError;
import io.queenvertx.metrics.BrokerMetrics;
import io.queenvertx.state.KvAnswers;
import io.queenvertx.state.KvInput;
import io.queenvertx.state.StateCodes;
import io.queenvertx.state.StateRefused;
import io.queenvertx.timers.TimerOps;
import io.queenvertx.json.JsonText;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A transaction's riders (docs/design/queen2-contract.md §5): its top-level {@code kv} operations ({@code kv_apply}
 * with {@code p_in_txn}) and {@code timers} operations ({@code timers_apply}), run in the bundle's own PostgreSQL
 * transaction before its pushes and acks (the lock order), so they commit together or not at all. Their results follow
 * the operations' in one flat index space: {@code [opsFlat, opsFlat + kvN)} the kv results, then the timers'. A lost
 * {@code required} precondition (QV820) rolls everything back and is answered {@code kv_precondition} with
 * {@code failedIndex} in that flat space.
 */
public final class Riders {
  /** Operations of a rider per call, as {@code kv_apply} allows inside a transaction (QV811 there too). */
  static final int MAX_KV_OPS = 64;

  final List<KvProcedures.Op> kv;
  final List<TimerProcedures.Op> timers;
  private final JsonObject[] results;

  private Riders(List<KvProcedures.Op> kv, List<TimerProcedures.Op> timers) {
    this.kv = kv;
    this.timers = timers;
    this.results = new JsonObject[kv.size() + timers.size()];
  }

  /**
   * Checks the riders of a bundle before it is sent to the log writer (the route's pre-flight): a refusal is a
   * {@link StateRefused} (kv) or an {@link ApiError} carrying the timers envelope.
   */
  static Riders of(JsonArray kv, JsonArray timers, List<Map<String, String>> kvValues) {
    List<KvProcedures.Op> k = kv == null ? List.of() : KvInput.parse(kv, kvValues);
    if (k.size() > MAX_KV_OPS) {
      throw new StateRefused(400, "kv_too_many_ops", k.size() + " kv operations in a transaction, the most is "
          + MAX_KV_OPS);
    }
    for (int i = 0; i < k.size(); i++) {
      if ("getPrefix".equals(k.get(i).op())) {
        throw new StateRefused(400, "kv_get_prefix_not_allowed_in_transaction", "kv operation " + i
            + ": getPrefix is not allowed inside a transaction (only on POST /api/v1/kv)");
      }
    }
    List<TimerProcedures.Op> t = timers == null ? List.of() : TimerOps.parse(timers);
    return new Riders(k, t);
  }

  /** The route's pre-flight check of a bundle's riders; throws the refusal. */
  public static void check(JsonArray kv, JsonArray timers, List<Map<String, String>> kvValues) {
    of(kv, timers, kvValues);
  }

  static Riders of(TransactionCommand cmd) {
    return of(cmd.kv(), cmd.timers(), cmd.kvValues());
  }

  boolean isEmpty() {
    return kv.isEmpty() && timers.isEmpty();
  }

  /** The timers with their payloads encrypted for queues that are encrypted now (before the transaction begins). */
  Future<Riders> sealed(Vertx vertx, Database db, Optional<EnvelopeCipher> cipher, TransactionCommand cmd) {
    if (timers.isEmpty()) return Future.succeededFuture(this);
    return TimerOps.sealed(vertx, db.pushes(), cipher, cmd.tenant(), timers).map(ops -> new Riders(kv, ops));
  }

  /** kv then timers, inside {@code t}; {@code opsFlat}: how many results the operations hold before the riders. */
  Future<Void> apply(Transaction t, TransactionCommand cmd, int opsFlat) {
    Future<Void> chain = Future.succeededFuture();
    if (!kv.isEmpty()) {
      chain = t.kv().apply(cmd.tenant(), kv, true).map(rs -> {
        for (KvProcedures.Result r : rs) {
          int flat = opsFlat + r.index();
          JsonText j = KvAnswers.result(new JsonText(256), r, flat, "kv");
          results[r.index()] = new JsonObject(j.buffer());
        }
        return null;
      });
    }
    if (!timers.isEmpty()) {
      chain = chain.compose(v -> t.timers().apply(cmd.tenant(), cmd.producerSub(), timers)).map(applied -> {
        for (TimerProcedures.Applied a : applied) {
          int local = kv.size() + a.index();
          results[local] = new JsonObject().put("index", opsFlat + local).put("type", "timer")
              .mergeIn(a.toJson());
        }
        return null;
      });
    }
    return chain;
  }

  /** The riders' results, in flat order after the operations'. */
  List<JsonObject> results() {
    List<JsonObject> out = new ArrayList<>(results.length);
    for (JsonObject r : results) out.add(r);
    return out;
  }

  /** After the commit: the counters, and this node's timer sweep woken for what was armed. */
  void committed(Vertx vertx, BrokerMetrics metrics) {
    for (JsonObject r : results) {
      if ("kv".equals(r.getString("type"))) {
        metrics.state().kvOp(r.getString("op"), Boolean.FALSE.equals(r.getBoolean("applied")) ? "rejected" : "applied");
      } else if ("scheduled".equals(r.getString("status")) || "rescheduled".equals(r.getString("status"))) {
        metrics.timers.scheduled.increment();
      } else if (Boolean.TRUE.equals(r.getBoolean("ok"))) {
        metrics.timers.cancelled.increment();
      }
    }
    if (!timers.isEmpty()) TimerOps.armed(vertx, timers);
  }

  /**
   * The answer of a bundle that failed in a rider, or null when the failure is not a rider's: a lost precondition
   * ({@code kv_precondition}, {@code failedIndex} flat), or a refusal of {@code kv_apply} / {@code timers_apply}
   * (reason {@code bad_request}, or the timers' {@code timer_horizon_exceeded} / {@code payload_too_large}; its
   * {@code code} the registry's reason), which carries {@value #STATUS}: the 4xx the route answers instead of 200.
   */
  JsonObject failure(Throwable err, String txId, int opsFlat, BrokerMetrics metrics) {
    JsonObject out = new JsonObject().put("transactionId", txId).put("success", false);
    JsonObject verdict = StateCodes.verdict(err);
    if (verdict != null) {
      KvAnswers.count(metrics.state(), kv, "rejected");
      out.put("reason", "kv_precondition").put("failedIndex", opsFlat + verdict.getInteger("index", 0));
      JsonObject env = StateCodes.preconditionEnvelope(verdict, 0);
      for (String f : new String[] {"kvReason", "version", "value", "valueOmitted"}) {
        if (env.containsKey(f)) out.put(f, env.getValue(f));
      }
      return out.put("error", "kv precondition failed").put("results", new JsonArray());
    }
    StateCodes.Code code = StateCodes.of(err);
    if (code != null && code.status() < 500) {
      return refused(out, code.status(), code.status() == 413 ? "payload_too_large" : "bad_request", code.reason(),
          io.queenvertx.db.SqlState.errorText(err));
    }
    if (!timers.isEmpty() && io.queenvertx.db.SqlState.of(err).broker()) {
      ApiError a = TimerOps.refusal(err);
      if (a.status() < 500) {
        JsonObject body = new JsonObject(a.body());
        String error = body.getString("error");
        return refused(out, a.status(), error.equals("timer_horizon_exceeded") || error.equals("payload_too_large")
            ? error : "bad_request", body.getString("reason"), body.getString("detail"));
      }
    }
    return null;
  }

  /** The marker field of a rider refusal's status (removed by the route before it answers). */
  public static final String STATUS = "_status";

  private static JsonObject refused(JsonObject out, int status, String reason, String code, String text) {
    return out.put("reason", reason).put("code", code).put("error", text).put("results", new JsonArray())
        .put(STATUS, status);
  }
}
