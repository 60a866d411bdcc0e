package io.queenvertx.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The Prometheus series of key-value state and locks (docs/design/queen2-contract.md §9.2): per-operation counters
 * labelled by operation and outcome (the label values are closed sets: no per-tenant or per-key label), the entries the
 * sweep expired, and gauges of the cluster-wide state read by the maintenance cycle ({@code kv_stats},
 * {@code locks_stats}).
 */
public final class StateMetrics {
  private static final Set<String> KV_OPS =
      Set.of("get", "getMany", "getPrefix", "put", "putIfAbsent", "delete", "incr", "check");
  private static final Set<String> LOCK_OPS = Set.of("acquire", "renew", "release", "get");

  private final MeterRegistry registry;
  private final Counter kvExpired;
  private final Counter lockFencesSwept;
  /** Estimated entries ({@code kv_stats}). */
  public final AtomicLong kvEntries = new AtomicLong();
  /** Expired entries the sweep has not deleted yet, counted up to a cap. */
  public final AtomicLong kvExpiredNotSwept = new AtomicLong();
  /** 1 when {@link #kvExpiredNotSwept} hit its cap. */
  public final AtomicLong kvExpiredNotSweptCapped = new AtomicLong();
  /** Fence rows: locks acquired within the last hour of their leases. */
  public final AtomicLong lockFences = new AtomicLong();

  StateMetrics(MeterRegistry registry) {
    this.registry = registry;
    this.kvExpired = Counter.builder("queen_kv_expired_total").description("key-value entries deleted by the sweep"
        + " after their expiry").register(registry);
    this.lockFencesSwept = Counter.builder("queen_lock_fences_swept_total").description("lock fence rows deleted an"
        + " hour after their last lease ended").register(registry);
    gauge("queen_kv_entries", "key-value entries, the planner's estimate", kvEntries);
    gauge("queen_kv_expired_not_swept", "expired key-value entries waiting for the sweep (capped)", kvExpiredNotSwept);
    gauge("queen_kv_expired_not_swept_capped", "1 when queen_kv_expired_not_swept hit its cap",
        kvExpiredNotSweptCapped);
    gauge("queen_lock_fences", "locks known to the cluster (fence rows, capped)", lockFences);
  }

  private void gauge(String name, String help, AtomicLong value) {
    Gauge.builder(name, value, AtomicLong::get).description(help).register(registry);
  }

  /** One key-value operation answered: {@code result} is applied, rejected or error. */
  public void kvOp(String op, String result) {
    Counter.builder("queen_kv_ops_total").description("key-value operations by outcome (applied: written or read;"
        + " rejected: a lost precondition; error: the call failed)")
        .tags("op", KV_OPS.contains(op) ? op : "other", "result", result).register(registry).increment();
  }

  /** One lock operation answered: acquired, held, renewed, released, lost, read or error. */
  public void lockOp(String op, String result) {
    Counter.builder("queen_locks_ops_total").description("lock and semaphore operations by outcome")
        .tags("op", LOCK_OPS.contains(op) ? op : "other", "result", result).register(registry).increment();
  }

  public void kvExpired(long n) {
    kvExpired.increment(n);
  }

  public void lockFencesSwept(long n) {
    lockFencesSwept.increment(n);
  }
}
