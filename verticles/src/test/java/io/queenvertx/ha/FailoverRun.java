package io.queenvertx.ha;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.faults.PushLoad;
import io.queenvertx.testing.Census;
import io.queenvertx.testing.TestNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.LongSupplier;
import org.awaitility.Awaitility;

/**
 * One failover scenario: push load (and optionally pop+ack load) through every broker node, a fault injected into the
 * Patroni cluster while it runs, more pushes answered {@code queued} after it, then the count: every acknowledged
 * item ({@code queued}, {@code buffered}, {@code duplicate}) must be found (delivered to the consumers during the load,
 * or popped by the same group afterwards), none stored twice, and no message whose ack was answered
 * {@code success:true} delivered again.
 */
final class FailoverRun {
  static final String HEADER = String.format(
      "%-24s | %-36s | %9s | %9s | %7s | %7s | %5s | %5s | %6s | %8s | %5s | %s", "scenario", "load", "ack:queued",
      "ack:buffer", "ack:dup", "found", "lost", "dupl", "undone", "queued@", "5xx", "notes");
  static final Duration PHASE = Duration.ofMinutes(3);
  static final int LEASE_SECONDS = 5;
  static final String GROUP = "ha";

  /** Producers pushing batches of {@code batch} items every {@code periodMs}. */
  record Push(int producers, int batch, int periodMs) {
    @Override
    public String toString() {
      return producers + "x batch " + batch;
    }
  }

  /**
   * The load of a scenario.
   *
   * @param pushes     the producers
   * @param consumers  pop+ack consumers of one group (0: none; the count then pops with a group of its own)
   * @param warmup     acknowledged items before the fault
   * @param after      items answered queued after the fault before the load stops
   */
  record Shape(List<Push> pushes, int consumers, int warmup, int after) {
    String describe() {
      List<String> parts = new ArrayList<>();
      for (Push p : pushes) parts.add(p.toString());
      if (consumers > 0) parts.add(consumers + " pop+ack");
      return String.join(" + ", parts);
    }
  }

  /**
   * The fault: does its harm to the cluster, calling {@code harm} at the moment it strikes (from which the first
   * {@code queued} answer is timed), and returns notes for the row.
   */
  interface Fault {
    String inject(PatroniCluster pg, List<TestNode> nodes, Runnable harm) throws Exception;
  }

  /** The counts of one scenario. */
  record Row(String scenario, String load, long queued, long buffered, long duplicateAcks, long found, long lost,
             long duplicated, long undone, long queuedAfterMs, long serverErrors, List<String> lostSample,
             String notes) {
    String line() {
      return String.format("%-24s | %-36s | %9d | %9d | %7d | %7d | %5d | %5d | %6d | %8s | %5d | %s", scenario,
          load, queued, buffered, duplicateAcks, found, lost, duplicated, undone,
          queuedAfterMs < 0 ? "-" : String.format("%.1f s", queuedAfterMs / 1000.0), serverErrors, notes);
    }

    /** Nothing acknowledged lost or stored twice, no ack undone. */
    Row assertNothingLostOrUndone() {
      assertThat(lost).as("%s: acknowledged items not found, e.g. %s", scenario, lostSample).isZero();
      assertThat(duplicated).as("%s: transaction ids stored twice", scenario).isZero();
      assertThat(undone).as("%s: messages delivered again after their ack was answered success", scenario).isZero();
      assertThat(found).as("%s: found", scenario).isEqualTo(queued + buffered + duplicateAcks);
      return this;
    }
  }

  private FailoverRun() {}

  static Row run(String scenario, PatroniCluster pg, List<TestNode> nodes, Shape shape, Fault fault)
      throws Exception {
    long t0 = System.nanoTime();
    String q = "ha-" + scenario.replaceAll("[^a-z0-9]+", "-") + "-" + Long.toHexString(System.nanoTime() & 0xffffff);
    List<String> urls = nodes.stream().map(TestNode::baseUrl).toList();
    List<PushLoad> pushes = new ArrayList<>();
    ConsumeLoad consume = null;
    String notes;
    try {
      int tag = 0;
      for (Push p : shape.pushes()) {
        pushes.add(PushLoad.start(urls, q, "p" + tag++, p.producers(), p.batch(), p.periodMs(), 4));
      }
      if (shape.consumers() > 0) consume = ConsumeLoad.start(urls, q, GROUP, shape.consumers(), 50, LEASE_SECONDS);
      awaitAtLeast("warm-up of " + scenario, () -> sum(pushes, PushLoad::acknowledgedCount), shape.warmup());
      long queuedBefore = sum(pushes, PushLoad::queued);
      phase(t0, scenario + ": fault with " + queuedBefore + " queued");
      notes = fault.inject(pg, nodes, () -> pushes.forEach(PushLoad::markFault));
      phase(t0, scenario + ": fault done (" + notes + ")");
      awaitAtLeast("queued after the fault in " + scenario, () -> sum(pushes, PushLoad::queued),
          queuedBefore + shape.after());
    } finally {
      for (PushLoad p : pushes) p.close();
      if (consume != null) consume.close();
    }
    phase(t0, scenario + ": load stopped; waiting for the spools to empty");
    for (TestNode n : nodes) {
      Awaitility.await("spool of " + n.baseUrl() + " empty").atMost(PHASE).pollInterval(Duration.ofMillis(300))
          .until(() -> n.get("/health").status() == 200 && n.metric("queen_file_buffer_pending") == 0.0);
    }
    if (consume != null) {
      // the leases of batches whose ack got no answer expire, so the group gets them again
      long ready = System.nanoTime() + Duration.ofSeconds(LEASE_SECONDS + 1).toNanos();
      Awaitility.await("leases of " + scenario + " expired").atMost(Duration.ofSeconds(LEASE_SECONDS + 30))
          .pollInterval(Duration.ofMillis(200)).until(() -> System.nanoTime() >= ready);
    }
    Census census = Census.popAll(urls.get(0), q, consume != null ? GROUP : "census", PHASE);
    Row row = count(scenario, shape, pushes, consume, census, notes);
    phase(t0, "\n[ha] " + HEADER + "\n[ha] " + row.line());
    return row;
  }

  private static Row count(String scenario, Shape shape, List<PushLoad> pushes, ConsumeLoad consume, Census census,
                           String notes) {
    Map<String, String> promised = new HashMap<>();
    for (PushLoad p : pushes) promised.putAll(p.acknowledged());
    Map<String, Set<String>> ids = new HashMap<>();
    census.delivered().forEach((t, s) -> ids.computeIfAbsent(t, k -> new HashSet<>()).addAll(s));
    if (consume != null) consume.delivered().forEach((t, s) -> ids.computeIfAbsent(t, k -> new HashSet<>()).addAll(s));
    List<String> lost = new ArrayList<>();
    long found = 0;
    for (String txn : promised.keySet()) {
      if (ids.containsKey(txn)) found++;
      else lost.add(txn + " (" + promised.get(txn) + ")");
    }
    long duplicated = 0;
    for (Set<String> s : ids.values()) duplicated += s.size() - 1;
    Set<String> undone = new HashSet<>();
    if (consume != null) {
      undone.addAll(consume.undone());
      for (String t : consume.acked()) if (census.found(t)) undone.add(t);
    }
    long queuedAfter = -1;
    for (PushLoad p : pushes) {
      long ms = p.queuedAfterFaultMs();
      if (ms >= 0 && (queuedAfter < 0 || ms < queuedAfter)) queuedAfter = ms;
    }
    long errors = sum(pushes, PushLoad::serverErrors) + (consume == null ? 0 : consume.serverErrors());
    String extra = consume == null ? "" : "; pops " + consume.pops() + ", pop/ack statuses " + consume.statuses();
    java.util.Collections.sort(lost);
    return new Row(scenario, shape.describe(), sum(pushes, PushLoad::queued), sum(pushes, PushLoad::buffered),
        sum(pushes, PushLoad::duplicates), found, lost.size(), duplicated, undone.size(), queuedAfter, errors,
        lost.subList(0, Math.min(5, lost.size())), notes + extra);
  }

  private static long sum(List<PushLoad> loads, java.util.function.ToLongFunction<PushLoad> f) {
    long n = 0;
    for (PushLoad p : loads) n += f.applyAsLong(p);
    return n;
  }

  static void awaitAtLeast(String what, LongSupplier value, long target) {
    Awaitility.await(what + " (" + target + ")").atMost(PHASE).pollInterval(Duration.ofMillis(100))
        .until(() -> value.getAsLong() >= target);
  }

  static void phase(long t0, String what) {
    System.out.printf("[ha] %6.1f s  %s%n", (System.nanoTime() - t0) / 1e9, what);
  }
}
