package io.queenvertx.db;

import io.queenvertx.bus.PopCommand;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.shareddata.LocalMap;
import io.vertx.core.shareddata.Shareable;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.Tuple;
import java.time.OffsetDateTime;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Fuses concurrent pops that ask the same thing (ENGINE.md §4): pops with equal arguments but their own worker, sent
 * while {@link #MAX_IN_FLIGHT} statements of that kind are out (one for pops of fewer than {@link #SMALL_BATCH}
 * messages), queue and go together in the next one
 * ({@code queen.log_pop_many}: one transaction, the queue, the group's registration and the candidate scan looked up
 * once, the pops served one after the other as if each were its own transaction). There is no hold: a pop that finds
 * a free slot is sent at once, alone. A fused statement that fails is retried as separate pops, so an error only
 * reaches the pops that raise it themselves. One instance per pool (so per node) is shared by the consumer verticles of
 * all event loops: it is thread-safe, and each pop's rows are handed back on the event loop that submitted it.
 */
public final class PopFusion implements Shareable {
  static final String SQL =
      "SELECT * FROM queen.log_pop_many($1, $2, $3, $4, $5, $6, $7, $8::text[], $9, $10, $11, $12, $13, $14, $15)";
  /** At most this many pops go in one statement; the rest wait for the next. */
  static final int MAX_POPS = 32;
  /**
   * Statements of one kind in flight at once; pops of that kind queue (and fuse) only while this many are out. Two
   * keep the database busy on both sides of a round trip; pops of other kinds are never held by these.
   */
  static final int MAX_IN_FLIGHT = 2;
  /**
   * Pops of fewer messages than this keep one statement in flight instead. A small pop is mostly per-statement cost
   * (executor start-up, commit), so a pop that waits for the one statement out and shares the next costs the
   * database about half as much per message as a statement of its own; a batch-100 pop is mostly its own work, and
   * two statements in flight keep more of the machine busy.
   */
  static final int SMALL_BATCH = 10;

  /** Everything a pop asks but its lease id: pops with equal keys can share a statement. */
  private record Key(UUID tenant, String queue, String partition, String group, int batch, int partitions,
                     int leaseSeconds, boolean autoAck, String subscriptionMode, OffsetDateTime subscriptionFrom,
                     String namespace, String task, boolean conflation) {
    static Key of(PopCommand c) {
      return new Key(c.tenant(), c.queue(), c.partition(), c.consumerGroup(), Math.max(1, c.batch()), c.partitions(),
          c.leaseSeconds(), c.autoAck(), c.subscriptionMode(), c.subscriptionFrom(), c.namespace(), c.task(),
          c.conflation());
    }

    Tuple args(String[] leases, long maxBytes) {
      return Tuple.tuple().addUUID(tenant).addString(queue).addString(partition).addString(group).addInteger(batch)
          .addInteger(partitions).addInteger(leaseSeconds).addArrayOfString(leases).addBoolean(autoAck)
          .addString(subscriptionMode).addOffsetDateTime(subscriptionFrom).addString(namespace).addString(task)
          .addLong(maxBytes).addBoolean(conflation);
    }
  }

  private record Call(String leaseId, Handback<List<Row>> rows) {}

  /** The pops of one key waiting to be sent, and that key's statements in flight. */
  private static final class Lane {
    final ArrayDeque<Call> waiting = new ArrayDeque<>();
    int inFlight;
  }

  /**
   * The node's fusion: one per pool, kept in the node's Vert.x local shared data (gone when Vert.x closes). Every pop
   * it sends carries the byte budget {@code maxBytes} ({@code QUEEN_POP_MAX_BYTES}; 0: none).
   */
  public static PopFusion of(Vertx vertx, Pool pool, long maxBytes) {
    LocalMap<String, PopFusion> map = vertx.sharedData().getLocalMap("queen.pop-fusion");
    FusionTurns turns = FusionTurns.of(vertx, pool);
    return map.computeIfAbsent("pool-" + System.identityHashCode(pool), k -> new PopFusion(pool, maxBytes, turns));
  }

  private final Pool pool;
  private final long maxBytes;
  private final FusionTurns turns;
  private final Map<Key, Lane> lanes = new HashMap<>();
  private long statements;
  private long fusedPops;

  private PopFusion(Pool pool, long maxBytes, FusionTurns turns) {
    this.pool = pool;
    this.maxBytes = maxBytes;
    this.turns = turns;
    turns.onPopTurn(this::pumpSmall);
  }

  /** The slices delivered to this pop ({@code log_pop_many}'s rows, pop_idx dropped); empty when nothing was. */
  public Future<List<Row>> submit(PopCommand c, String leaseId) {
    Key key = Key.of(c);
    Handback<List<Row>> rows = Handback.here();
    synchronized (this) {
      lanes.computeIfAbsent(key, k -> new Lane()).waiting.add(new Call(leaseId, rows));
      if (small(key)) turns.popQueued();
    }
    pump(key);
    return rows.promise().future();
  }

  /** Statements sent so far, and pops that went in a statement with others (tests and diagnostics). */
  public synchronized long statements() {
    return statements;
  }

  public synchronized long fusedPops() {
    return fusedPops;
  }

  /** How many times a small-pop statement of this node waited for the acks' turn ({@link FusionTurns}). */
  public long heldForAcks() {
    return turns.popsRefused();
  }

  static int maxInFlight(Key key) {
    return small(key) ? 1 : MAX_IN_FLIGHT;
  }

  /** A pop of fewer than {@link #SMALL_BATCH} messages: one statement in flight, taking turns with acks. */
  static boolean small(Key key) {
    return key.batch() < SMALL_BATCH;
  }

  /** The turn of small pops ({@link FusionTurns}): every lane of small pops with pops waiting sends them. */
  private void pumpSmall() {
    List<Key> keys = new ArrayList<>();
    synchronized (this) {
      lanes.forEach((k, lane) -> {
        if (small(k) && !lane.waiting.isEmpty()) keys.add(k);
      });
    }
    for (Key k : keys) pump(k);
  }

  private void pump(Key key) {
    List<Call> batch;
    boolean small = small(key);
    synchronized (this) {
      Lane lane = lanes.get(key);
      if (lane == null || lane.inFlight >= maxInFlight(key) || lane.waiting.isEmpty()) return;
      int n = Math.min(lane.waiting.size(), MAX_POPS);
      if (small && !turns.startPops(n)) return;
      batch = new ArrayList<>(n);
      while (batch.size() < n) batch.add(lane.waiting.poll());
      lane.inFlight++;
      statements++;
      if (batch.size() > 1) fusedPops += batch.size();
    }
    send(key, batch).onComplete(ar -> {
      synchronized (this) {
        Lane lane = lanes.get(key);
        lane.inFlight--;
        if (lane.inFlight == 0 && lane.waiting.isEmpty()) lanes.remove(key);
      }
      if (small) turns.popsDone();
      pump(key);
    });
  }

  private Future<Void> send(Key key, List<Call> batch) {
    int n = batch.size();
    String[] leases = new String[n];
    for (int i = 0; i < n; i++) leases[i] = batch.get(i).leaseId();
    return pool.preparedQuery(SQL).execute(key.args(leases, maxBytes)).compose(rs -> {
      hand(rs, batch);
      return Future.<Void>succeededFuture();
    }, e -> {
      if (n == 1) {
        batch.get(0).rows().fail(e);
        return Future.succeededFuture();
      }
      // the whole transaction rolled back: nothing of it happened, so each pop runs again on its own
      List<Future<Void>> alone = new ArrayList<>(n);
      for (Call c : batch) alone.add(send(key, List.of(c)));
      return Future.join(alone).mapEmpty();
    });
  }

  /** Splits the rows by pop_idx (1-based, the order of {@code batch}; rows come grouped by pop, in order). */
  private static void hand(RowSet<Row> rs, List<Call> batch) {
    List<List<Row>> per = new ArrayList<>(batch.size());
    for (int i = 0; i < batch.size(); i++) per.add(new ArrayList<>(2));
    for (Row r : rs) {
      int idx = r.getInteger("pop_idx");
      if (idx >= 1 && idx <= batch.size()) per.get(idx - 1).add(r);
    }
    for (int i = 0; i < batch.size(); i++) batch.get(i).rows().complete(per.get(i));
  }
}
