package io.queenvertx.consumer;

import io.queenvertx.bus.PopCommand;
import io.vertx.core.Vertx;
import io.vertx.core.shareddata.LocalMap;
import io.vertx.core.shareddata.Shareable;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The pop autopilot's controller (queen2-contract.md §6.3), one per node, shared by the HTTP edge (which sizes an
 * autopilot pop) and the consumers (which report its answer and the ack that settles its lease). Per (tenant, queue,
 * group), in node memory: an EWMA of the processing time per message, measured from a leased autopilot pop's answer to
 * the ack that releases its lease (time over the messages the pop delivered). A batch then takes at most a quarter of
 * the lease or 2 s of processing, 10 before any measurement, 1..1000; partitions are a tenth of the batch, 1..64. The
 * wait advice is 0 for a waiting pop, else 100 ms doubling per consecutive empty answer up to 2 s. Thread-safe.
 */
public final class Autopilot implements Shareable {
  static final double ALPHA = 0.2;
  static final int START_BATCH = 10;
  static final int MAX_BATCH = 1000;
  static final int MAX_PARTITIONS = 64;
  static final int MAX_WAIT_MS = 2000;
  /** Leases tracked at once; past it a pop is not measured (its sizing still works from what was measured). */
  static final int MAX_OPEN = 10_000;

  private record Key(UUID tenant, String queue, String group) {}

  private static final class State {
    double perMessageMs = -1;
    int empties;
  }

  private record Open(Key key, long nanos, int messages) {}

  private final Map<Key, State> states = new ConcurrentHashMap<>();
  private final Map<String, Open> open = new ConcurrentHashMap<>();

  /** The node's controller, kept in the node's Vert.x local shared data. */
  public static Autopilot of(Vertx vertx) {
    LocalMap<String, Autopilot> map = vertx.sharedData().getLocalMap("queen.pop-autopilot");
    return map.computeIfAbsent("autopilot", k -> new Autopilot());
  }

  /**
   * The sizing of a pop on (tenant, queue, group) under a lease of {@code leaseSeconds}; {@code batchPin} and
   * {@code partitionsPin} are the caller's own values (0 when unset), which are never changed.
   */
  public PopCommand.Autopilot decide(UUID tenant, String queue, String group, int leaseSeconds, int batchPin,
                                     int partitionsPin) {
    State s = states.get(new Key(tenant, queue, group));
    double per;
    synchronized (this) {
      per = s == null ? -1 : s.perMessageMs;
    }
    int batch = batchPin > 0 ? batchPin : batchFor(per, leaseSeconds);
    int partitions = partitionsPin > 0 ? partitionsPin : clamp((int) Math.ceil(batch / 10.0), 1, MAX_PARTITIONS);
    return new PopCommand.Autopilot(partitions, batch);
  }

  static int batchFor(double perMessageMs, int leaseSeconds) {
    if (perMessageMs <= 0) return START_BATCH;
    double window = Math.min(leaseSeconds * 1000.0 / 4, 2000);
    return clamp((int) Math.min(Math.round(window / perMessageMs), MAX_BATCH), 1, MAX_BATCH);
  }

  /** The pause advice after the latest answer on (tenant, queue, group): 0 for a waiting pop or after messages. */
  public int waitMs(UUID tenant, String queue, String group, boolean longPoll) {
    if (longPoll) return 0;
    State s = states.get(new Key(tenant, queue, group));
    int empties;
    synchronized (this) {
      empties = s == null ? 0 : s.empties;
    }
    return empties == 0 ? 0 : (int) Math.min(100L << Math.min(empties - 1, 10), MAX_WAIT_MS);
  }

  /** An autopilot pop answered {@code messages} messages under {@code leaseId} (none for a commit at delivery). */
  void answered(PopCommand c, String leaseId, int messages) {
    Key key = new Key(c.tenant(), c.queue(), c.consumerGroup());
    State s = states.computeIfAbsent(key, k -> new State());
    synchronized (this) {
      s.empties = messages == 0 ? s.empties + 1 : 0;
    }
    if (messages > 0 && !c.autoAck()) {
      if (open.size() >= MAX_OPEN) {
        long stale = System.nanoTime() - 3_600_000_000_000L;   // leases never settled within an hour are forgotten
        open.values().removeIf(o -> o.nanos() < stale);
        if (open.size() >= MAX_OPEN) return;
      }
      open.put(leaseId, new Open(key, System.nanoTime(), messages));
    }
  }

  /** An ack released {@code leaseId}: when it was an autopilot pop's, its time per message feeds the average. */
  void settled(String leaseId) {
    if (open.isEmpty()) return;
    Open o = open.remove(leaseId);
    if (o == null) return;
    double per = Math.max((System.nanoTime() - o.nanos()) / 1e6 / o.messages(), 0.001);
    State s = states.computeIfAbsent(o.key(), k -> new State());
    synchronized (this) {
      s.perMessageMs = s.perMessageMs <= 0 ? per : ALPHA * per + (1 - ALPHA) * s.perMessageMs;
    }
  }

  /** The current average processing time per message, -1 before any measurement (tests). */
  double perMessageMs(UUID tenant, String queue, String group) {
    State s = states.get(new Key(tenant, queue, group));
    synchronized (this) {
      return s == null ? -1 : s.perMessageMs;
    }
  }

  private static int clamp(int v, int lo, int hi) {
    return Math.max(lo, Math.min(hi, v));
  }
}
