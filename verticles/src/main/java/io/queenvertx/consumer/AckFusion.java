package io.queenvertx.consumer;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.core.shareddata.LocalMap;
import io.vertx.core.shareddata.Shareable;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;

/**
 * Fuses the {@code log_ack} calls of concurrent ack requests (ENGINE.md §5): while one ack statement is in flight,
 * the calls that arrive queue, and when it returns they all go in the next statement ({@code queen.log_ack_many}: one
 * transaction, one commit). There is no hold: a call that finds nothing in flight is sent at once, alone, as a plain
 * {@code log_ack}. Each call still gets its own {@code log_ack} verdict. A fused statement that fails (a deadlock
 * with a pop, say) is retried as separate calls, so an error only reaches the calls that raise it themselves.
 * One instance per pool (so per node) is shared by the consumer verticles of all event loops: it is thread-safe, and
 * each verdict is handed back on the event loop that submitted its call.
 */
final class AckFusion implements Shareable {
  static final String ONE_SQL = "SELECT queen.log_ack($1, $2, $3, $4, $5::bytea[], $6::text[])";
  static final String MANY_SQL = "SELECT * FROM queen.log_ack_many($1::uuid[], $2::uuid[], $3::text[], $4::text[], "
      + "$5::int[], $6::bytea[], $7::text[])";
  /** At most this many calls / hashes go in one fused statement; the rest wait for the next. */
  static final int MAX_CALLS = 256;
  static final int MAX_HASHES = 10_000;
  /** Statements in flight at once; calls queue (and fuse) only while this many are out (2 measured no better). */
  static final int MAX_IN_FLIGHT = 1;

  /** One {@code log_ack} call and where its verdict goes. */
  private record Call(UUID tenant, UUID pid, String group, String worker, Buffer[] hashes, String[] statuses,
                      Handback<JsonObject> verdict) {}

  /** The node's fusion: one per pool, kept in the node's Vert.x local shared data (gone when Vert.x closes). */
  static AckFusion of(Vertx vertx, Pool pool) {
    LocalMap<String, AckFusion> map = vertx.sharedData().getLocalMap("queen.ack-fusion");
    return map.computeIfAbsent("pool-" + System.identityHashCode(pool), k -> new AckFusion(pool));
  }

  private static final Comparator<Call> LOCK_ORDER =
      Comparator.comparing(Call::pid).thenComparing(Call::group, Comparator.nullsFirst(Comparator.naturalOrder()));

  private final Pool pool;
  private final ArrayDeque<Call> queue = new ArrayDeque<>();
  private int inFlight;
  private long statements;
  private long fusedCalls;

  private AckFusion(Pool pool) {
    this.pool = pool;
  }

  /** The {@code log_ack} verdict for one (partition, group, lease) group; fails with the database error. */
  Future<JsonObject> submit(UUID tenant, UUID pid, String group, String worker, Buffer[] hashes, String[] statuses) {
    Handback<JsonObject> verdict = Handback.here();
    synchronized (this) {
      queue.add(new Call(tenant, pid, group, worker, hashes, statuses, verdict));
    }
    pump();
    return verdict.promise().future();
  }

  /** Statements sent so far, and calls that went in a statement with others (tests and diagnostics). */
  synchronized long statements() {
    return statements;
  }

  synchronized long fusedCalls() {
    return fusedCalls;
  }

  private void pump() {
    List<Call> batch = new ArrayList<>();
    int hashes = 0;
    synchronized (this) {
      if (inFlight >= MAX_IN_FLIGHT || queue.isEmpty()) return;
      while (!queue.isEmpty() && batch.size() < MAX_CALLS
          && (batch.isEmpty() || hashes + queue.peek().hashes().length <= MAX_HASHES)) {
        Call c = queue.poll();
        batch.add(c);
        hashes += c.hashes().length;
      }
      inFlight++;
      statements++;
      if (batch.size() > 1) fusedCalls += batch.size();
    }
    Future<Void> sent = batch.size() == 1 ? one(batch.get(0)) : many(batch, hashes);
    sent.onComplete(ar -> {
      synchronized (this) {
        inFlight--;
      }
      pump();
    });
  }

  private Future<Void> one(Call c) {
    return pool.preparedQuery(ONE_SQL)
        .execute(Tuple.of(c.tenant(), c.pid(), c.group(), c.worker(), c.hashes(), c.statuses()))
        .map(rows -> {
          c.verdict().complete((JsonObject) rows.iterator().next().getValue(0));
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
    UUID[] tenants = new UUID[n];
    UUID[] pids = new UUID[n];
    String[] groups = new String[n];
    String[] workers = new String[n];
    Integer[] counts = new Integer[n];
    Buffer[] hashes = new Buffer[hashCount];
    String[] statuses = new String[hashCount];
    int k = 0;
    for (int i = 0; i < n; i++) {
      Call c = calls.get(i);
      tenants[i] = c.tenant();
      pids[i] = c.pid();
      groups[i] = c.group();
      workers[i] = c.worker();
      counts[i] = c.hashes().length;
      System.arraycopy(c.hashes(), 0, hashes, k, c.hashes().length);
      System.arraycopy(c.statuses(), 0, statuses, k, c.statuses().length);
      k += c.hashes().length;
    }
    Tuple args = Tuple.of(tenants, pids, groups, workers, counts, hashes, statuses);
    return pool.preparedQuery(MANY_SQL).execute(args).compose(rows -> {
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
