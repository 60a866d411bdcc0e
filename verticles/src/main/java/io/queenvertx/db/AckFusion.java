package io.queenvertx.db;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.core.shareddata.LocalMap;
import io.vertx.core.shareddata.Shareable;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Fuses the {@code log_ack} calls of concurrent ack requests (ENGINE.md §5): while one ack statement is in flight,
 * the calls that arrive queue, and when it returns they all go in the next statement ({@code queen.log_ack_many}: one
 * transaction, one commit). There is no hold: a call that finds nothing in flight is sent at once, alone, as a plain
 * {@code log_ack}. Each call still gets its own {@code log_ack} verdict. A fused statement that fails (a deadlock
 * with a pop, say) is retried as separate calls, so an error only reaches the calls that raise it themselves.
 * One instance per pool (so per node) is shared by the consumer verticles of all event loops: it is thread-safe, and
 * each verdict is handed back on the event loop that submitted its call.
 */
public final class AckFusion implements Shareable {
  /** At most this many calls / hashes go in one fused statement; the rest wait for the next. */
  static final int MAX_CALLS = 256;
  static final int MAX_HASHES = 10_000;
  /** Statements in flight at once; calls queue (and fuse) only while this many are out (2 measured no better). */
  static final int MAX_IN_FLIGHT = 1;

  /** One {@code log_ack} call and where its verdict goes. */
  private record Call(AckCall call, Handback<JsonObject> verdict) {}

  /** The node's fusion: one per pool, kept in the node's Vert.x local shared data (gone when Vert.x closes). */
  public static AckFusion of(Vertx vertx, Pool pool) {
    LocalMap<String, AckFusion> map = vertx.sharedData().getLocalMap("queen.ack-fusion");
    FusionTurns turns = FusionTurns.of(vertx, pool);
    return map.computeIfAbsent("pool-" + System.identityHashCode(pool), k -> new AckFusion(pool, turns));
  }

  private static final Comparator<Call> LOCK_ORDER = Comparator.comparing((Call c) -> c.call().partitionId())
      .thenComparing(c -> c.call().group(), Comparator.nullsFirst(Comparator.naturalOrder()));

  private final AckProcedures procedures;
  private final FusionTurns turns;
  private final ArrayDeque<Call> queue = new ArrayDeque<>();
  private int inFlight;
  private long statements;
  private long fusedCalls;

  private AckFusion(Pool pool, FusionTurns turns) {
    this.procedures = new AckProcedures(pool);
    this.turns = turns;
    turns.onAckTurn(this::pump);
  }

  /** The {@code log_ack} verdict for one (partition, group, lease) group; fails with the database error. */
  public Future<JsonObject> submit(AckCall call) {
    Handback<JsonObject> verdict = Handback.here();
    synchronized (this) {
      queue.add(new Call(call, verdict));
      turns.ackQueued();
    }
    pump();
    return verdict.promise().future();
  }

  /** Statements sent so far, and calls that went in a statement with others (tests and diagnostics). */
  public synchronized long statements() {
    return statements;
  }

  public synchronized long fusedCalls() {
    return fusedCalls;
  }

  private void pump() {
    List<Call> batch = new ArrayList<>();
    int hashes = 0;
    synchronized (this) {
      if (inFlight >= MAX_IN_FLIGHT || queue.isEmpty()) return;
      int n = 0;
      for (Call c : queue) {
        if (n == MAX_CALLS || (n > 0 && hashes + c.call().hashes().length > MAX_HASHES)) break;
        hashes += c.call().hashes().length;
        n++;
      }
      if (!turns.startAcks(n)) return;
      for (int i = 0; i < n; i++) batch.add(queue.poll());
      inFlight++;
      statements++;
      if (batch.size() > 1) fusedCalls += batch.size();
    }
    Future<Void> sent = batch.size() == 1 ? one(batch.get(0)) : many(batch, hashes);
    sent.onComplete(ar -> {
      synchronized (this) {
        inFlight--;
      }
      turns.acksDone();
      pump();
    });
  }

  private Future<Void> one(Call c) {
    return procedures.ack(c.call())
        .map(verdict -> {
          c.verdict().complete(verdict);
          return (Void) null;
        })
        .otherwise(e -> {
          c.verdict().fail(e);
          return null;
        });
  }

  private Future<Void> many(List<Call> batch, int hashCount) {
    List<Call> calls = new ArrayList<>(batch);
    calls.sort(LOCK_ORDER);
    int n = calls.size();
    List<AckCall> args = new ArrayList<>(n);
    for (Call c : calls) args.add(c.call());
    return procedures.ackMany(args, hashCount).compose(rows -> {
      int i = 0;
      for (Row r : rows) if (i < n) calls.get(i++).verdict().complete((JsonObject) r.getValue(0));
      for (; i < n; i++) {
        calls.get(i).verdict().fail(new IllegalStateException("ack rejected: no verdict from log_ack_many"));
      }
      return Future.<Void>succeededFuture();
    }, e -> {
      // the whole transaction rolled back: nothing of it happened, so each call runs again on its own
      List<Future<Void>> alone = new ArrayList<>(n);
      for (Call c : calls) alone.add(one(c));
      return Future.join(alone).mapEmpty();
    });
  }
}
