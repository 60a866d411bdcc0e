package io.queenvertx.tenancy;

import io.queenvertx.kernel.OwnershipGate;
import io.queenvertx.db.QueueProcedures;
import io.vertx.core.Future;
import io.vertx.core.shareddata.AsyncMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The ownership gate with tenancy on: one indexed EXISTS over partition → queue → tenant
 * ({@code queen.partition_tenant}, R__50_queues.sql). Only positive answers are remembered (a partition created later
 * must still be found): in a local near cache, and in the cluster-wide map {@code queen.ownership} (Hazelcast
 * through the Vert.x cluster manager; a plain local map on a single node), so a confirmation on one node spares every
 * other node the round trip. Queue deletion removes the entries everywhere.
 */
public final class CachedOwnershipGate implements OwnershipGate {
  public static final String MAP = "queen.ownership";
  static final int NEAR_CAPACITY = 100_000;

  private final QueueProcedures queues;
  private final Future<AsyncMap<String, String>> shared;
  private final Map<UUID, UUID> near = new ConcurrentHashMap<>();
  private final AtomicLong queries = new AtomicLong();

  public CachedOwnershipGate(QueueProcedures queues, Future<AsyncMap<String, String>> shared) {
    this.queues = queues;
    this.shared = shared;
  }

  @Override
  public Future<Boolean> owns(UUID tenant, UUID partitionId) {
    UUID known = near.get(partitionId);
    if (known != null) return Future.succeededFuture(known.equals(tenant));
    return shared.compose(m -> m.get(partitionId.toString()))
        .otherwise((String) null)
        .compose(owner -> {
          if (owner != null) {
            remember(partitionId, UUID.fromString(owner));
            return Future.succeededFuture(owner.equals(tenant.toString()));
          }
          return query(tenant, partitionId);
        });
  }

  private Future<Boolean> query(UUID tenant, UUID partitionId) {
    queries.incrementAndGet();
    return queues.owns(tenant, partitionId)
        .map(owned -> {
          if (owned) {
            remember(partitionId, tenant);
            shared.onSuccess(m -> m.put(partitionId.toString(), tenant.toString()));
          }
          return owned;
        })
        .otherwise(false);
  }

  private void remember(UUID partitionId, UUID tenant) {
    if (near.size() >= NEAR_CAPACITY) near.clear();
    near.put(partitionId, tenant);
  }

  @Override
  public void invalidate(Iterable<UUID> partitionIds) {
    for (UUID p : partitionIds) {
      near.remove(p);
      shared.onSuccess(m -> m.remove(p.toString()));
    }
  }

  /** Ownership queries this node sent to the database since start (tests count them). */
  public long queries() {
    return queries.get();
  }
}
