package io.queenvertx.metrics;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.Iterator;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAccumulator;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/**
 * A node's operation counters by minute (the columns of V16's {@code stats_node_minute} and
 * {@code stats_queue_minute}), counted in memory by the request path and drained by the {@link StatsFlusher}.
 *
 * <p>Cost on the request path: no lock and no allocation per message. A count finds the bucket of the current minute
 * through one volatile read (a new bucket is made once a minute), adds to a {@link LongAdder} for the node-wide
 * figures (striped, so event loops do not contend) and to an {@link AtomicLongArray} per (tenant, queue), found by two
 * map reads with no key object made; a queue's cells are allocated once per minute on its first event. Acks and dead
 * letters only know a partition id: they count on per-partition cells the flush resolves to the queue in SQL.
 *
 * <p>Draining takes every cell with {@code getAndSet(0)} (or {@link LongAdder#sumThenReset}): an increment racing the
 * drain is never lost, it lands in this drain or stays for the next one, which adds it to the same minute row with
 * {@code +}. A bucket is dropped once it has been drained after its minute closed more than a minute ago; an
 * increment that read the bucket before that and lands after it (a thread stalled for over a minute between the two)
 * is lost. Distinct queue or partition keys of one minute are capped at {@link #MAX_KEYS_PER_MINUTE}: beyond, events
 * still count node-wide but not per queue (so made-up queue names on pops cannot grow memory without bound), and so
 * do events on a name longer than a queue name can be ({@link #storableQueue}).
 */
public final class StatsCounters {
  /** Node-wide sums, in the order of their indexes, named as the V16 columns. */
  public static final String[] NODE_SUMS = {"push_requests", "push_messages", "pop_requests", "pop_messages", "pop_empty",
      "ack_requests", "ack_success", "ack_failed", "transactions", "dlq_messages", "db_errors", "push_latency_ms_sum",
      "pop_latency_ms_sum", "ack_latency_ms_sum"};
  public static final String[] NODE_MAXES = {"push_latency_ms_max", "pop_latency_ms_max", "ack_latency_ms_max"};
  /** Per-queue cells; the last one is a maximum, the others sums. */
  public static final String[] QUEUE_CELLS = {"push_requests", "push_messages", "pop_requests", "pop_messages", "pop_empty",
      "ack_success", "ack_failed", "transactions", "conflated", "dlq_messages", "pop_lag_ms_sum", "pop_lag_ms_max"};
  public static final int MAX_KEYS_PER_MINUTE = 10_000;
  public static final int MAX_QUEUE_NAME_CHARS = 255;

  public static final int PUSH_REQUESTS = 0, PUSH_MESSAGES = 1, POP_REQUESTS = 2, POP_MESSAGES = 3, POP_EMPTY = 4,
      ACK_REQUESTS = 5, ACK_SUCCESS = 6, ACK_FAILED = 7, TRANSACTIONS = 8, DLQ = 9, DB_ERRORS = 10,
      PUSH_LATENCY = 11, POP_LATENCY = 12, ACK_LATENCY = 13;
  public static final int PUSH_LATENCY_MAX = 0, POP_LATENCY_MAX = 1, ACK_LATENCY_MAX = 2;
  public static final int Q_PUSH_REQUESTS = 0, Q_PUSH_MESSAGES = 1, Q_POP_REQUESTS = 2, Q_POP_MESSAGES = 3, Q_POP_EMPTY = 4,
      Q_ACK_SUCCESS = 5, Q_ACK_FAILED = 6, Q_TRANSACTIONS = 7, Q_CONFLATED = 8, Q_DLQ = 9, Q_LAG_SUM = 10,
      Q_LAG_MAX = 11;

  /** One minute's cells. */
  public static final class Bucket {
    final long minute;
    final LongAdder[] sums = new LongAdder[NODE_SUMS.length];
    final LongAccumulator[] maxes = new LongAccumulator[NODE_MAXES.length];
    final ConcurrentHashMap<UUID, ConcurrentHashMap<String, AtomicLongArray>> queues = new ConcurrentHashMap<>();
    final ConcurrentHashMap<String, AtomicLongArray> partitions = new ConcurrentHashMap<>();
    final AtomicInteger keys = new AtomicInteger();

    Bucket(Long minute) {
      this.minute = minute;
      for (int i = 0; i < sums.length; i++) sums[i] = new LongAdder();
      for (int i = 0; i < maxes.length; i++) maxes[i] = new LongAccumulator(Math::max, 0);
    }

    AtomicLongArray queue(UUID tenant, String queue) {
      if (!storableQueue(queue)) return null;
      var byName = queues.get(tenant);
      if (byName != null) {
        AtomicLongArray cells = byName.get(queue);
        if (cells != null) return cells;
      }
      if (keys.get() >= MAX_KEYS_PER_MINUTE) return null;
      return queues.computeIfAbsent(tenant, t -> new ConcurrentHashMap<>()).computeIfAbsent(queue, q -> newCells());
    }

    AtomicLongArray partition(String partitionId) {
      AtomicLongArray cells = partitions.get(partitionId);
      if (cells != null || keys.get() >= MAX_KEYS_PER_MINUTE) return cells;
      return partitions.computeIfAbsent(partitionId, p -> newCells());
    }

    private AtomicLongArray newCells() {
      keys.incrementAndGet();
      return new AtomicLongArray(QUEUE_CELLS.length);
    }
  }

  /**
   * A name a queue can have ({@code queen.queues.name} is {@code varchar(255)}). Pops count on the queue named in
   * their path before anyone checked it exists; a longer name names no queue, and as a key of the
   * {@code stats_queue_minute} index it could fail every flush of the node (a btree entry holds ~2.7 kB), so it counts
   * node-wide only. No allocation: the code points are counted only past 255 chars.
   */
  public static boolean storableQueue(String queue) {
    return queue.length() <= MAX_QUEUE_NAME_CHARS || queue.codePointCount(0, queue.length()) <= MAX_QUEUE_NAME_CHARS;
  }

  private final LongSupplier clock;
  private final ConcurrentHashMap<Long, Bucket> buckets = new ConcurrentHashMap<>();
  private volatile Bucket current;

  public StatsCounters() {
    this(System::currentTimeMillis);
  }

  /** With a clock in epoch milliseconds (tests move it across minutes). */
  public StatsCounters(LongSupplier clock) {
    this.clock = clock;
    this.current = buckets.computeIfAbsent(minuteNow(), Bucket::new);
  }

  /** The current minute, in whole minutes since the epoch. */
  public long minuteNow() {
    return clock.getAsLong() / 60_000;
  }

  private Bucket bucket() {
    long m = minuteNow();
    Bucket b = current;
    if (b.minute == m) return b;
    b = buckets.computeIfAbsent(m, Bucket::new);
    if (m > current.minute) current = b;
    return b;
  }

  // ---- counting (request path) ----------------------------------------------------------------------------------

  /** A node-wide sum. */
  public void add(int sum, long n) {
    bucket().sums[sum].add(n);
  }

  /** A per-queue cell (nothing when the minute's key cap is reached). */
  public void addQueue(UUID tenant, String queue, int cell, long n) {
    if (tenant == null || queue == null) return;
    AtomicLongArray cells = bucket().queue(tenant, queue);
    if (cells != null) cells.addAndGet(cell, n);
  }

  public void addPartition(String partitionId, int cell, long n) {
    if (partitionId == null) return;
    AtomicLongArray cells = bucket().partition(partitionId);
    if (cells != null) cells.addAndGet(cell, n);
  }

  /** A request latency: its sum and maximum of the minute. */
  public void latency(int sum, int max, long nanos) {
    long ms = Math.max(0, nanos / 1_000_000);
    Bucket b = bucket();
    b.sums[sum].add(ms);
    b.maxes[max].accumulate(ms);
  }

  /** The age of {@code n} popped messages of one queue, created at {@code createdAtMs}. */
  public void popLag(UUID tenant, String queue, int n, long createdAtMs) {
    if (tenant == null || queue == null || n <= 0) return;
    AtomicLongArray cells = bucket().queue(tenant, queue);
    if (cells == null) return;
    long lag = Math.max(0, clock.getAsLong() - createdAtMs);
    cells.addAndGet(Q_LAG_SUM, lag * n);
    cells.accumulateAndGet(Q_LAG_MAX, lag, Math::max);
  }

  /** A failed PostgreSQL call of the request path. */
  public void dbError() {
    add(DB_ERRORS, 1);
  }

  // ---- draining (flusher) ---------------------------------------------------------------------------------------

  /** What one drain took: node rows and queue rows, as {@code queen.stats_flush} takes them. */
  public record Drained(JsonArray nodes, JsonArray queues) {
    public boolean isEmpty() {
      return nodes.isEmpty() && queues.isEmpty();
    }
  }

  /**
   * Takes the counts of every minute before {@code upToMinute} (and of that minute too when {@code inclusive}),
   * leaving zeros; rows with nothing counted are left out. Buckets whose minute closed more than a minute before
   * {@code upToMinute} are dropped after this drain. Runs on the flusher only (one drain at a time).
   */
  public Drained drain(long upToMinute, boolean inclusive) {
    JsonArray nodes = new JsonArray();
    JsonArray queues = new JsonArray();
    for (Iterator<Bucket> it = buckets.values().iterator(); it.hasNext(); ) {
      Bucket b = it.next();
      if (b.minute > upToMinute || (b.minute == upToMinute && !inclusive)) continue;
      JsonObject node = new JsonObject().put("m", b.minute);
      boolean any = false;
      for (int i = 0; i < NODE_SUMS.length; i++) {
        long v = b.sums[i].sumThenReset();
        if (v != 0) {
          node.put(NODE_SUMS[i], v);
          any = true;
        }
      }
      for (int i = 0; i < NODE_MAXES.length; i++) {
        long v = b.maxes[i].getThenReset();
        if (v != 0) {
          node.put(NODE_MAXES[i], (int) Math.min(Integer.MAX_VALUE, v));
          any = true;
        }
      }
      if (any) nodes.add(node);
      for (var t : b.queues.entrySet()) {
        for (var q : t.getValue().entrySet()) {
          JsonObject row = cells(b.minute, q.getValue());
          if (row != null) queues.add(row.put("tenant", t.getKey().toString()).put("queue", q.getKey()));
        }
      }
      for (var p : b.partitions.entrySet()) {
        UUID pid = uuidOrNull(p.getKey());
        JsonObject row = cells(b.minute, p.getValue());
        if (row != null && pid != null) queues.add(row.put("pid", pid.toString()));
      }
      if (b.minute < upToMinute - 1 && b != current) it.remove();
    }
    return new Drained(nodes, queues);
  }

  private static JsonObject cells(long minute, AtomicLongArray cells) {
    JsonObject row = null;
    for (int i = 0; i < QUEUE_CELLS.length; i++) {
      long v = cells.getAndSet(i, 0);
      if (v == 0) continue;
      if (row == null) row = new JsonObject().put("m", minute);
      row.put(QUEUE_CELLS[i], v);
    }
    return row;
  }

  private static UUID uuidOrNull(String s) {
    try {
      return UUID.fromString(s);
    } catch (IllegalArgumentException e) {
      return null; // an ack named a partition id that is not a UUID: it counted node-wide only
    }
  }

  /** Minutes held in memory (tests). */
  public int bucketCount() {
    return buckets.size();
  }
}
