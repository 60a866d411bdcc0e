package io.queenvertx.tenancy;

import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The ownership gate with tenancy on: one indexed EXISTS over partition → queue → tenant, positive answers cached
 * (negatives never are, so a partition created later is found). The cache is capped and cleared when full.
 */
public final class CachedOwnershipGate implements OwnershipGate {
  static final int CAPACITY = 100_000;
  private final Pool pool;
  private final Map<UUID, UUID> owners = new ConcurrentHashMap<>();
  private final AtomicLong queries = new AtomicLong();

  public CachedOwnershipGate(Pool pool) {
    this.pool = pool;
  }

  @Override
  public Future<Boolean> owns(UUID tenant, UUID partitionId) {
    UUID known = owners.get(partitionId);
    if (known != null) return Future.succeededFuture(known.equals(tenant));
    queries.incrementAndGet();
    return pool.preparedQuery("SELECT EXISTS (SELECT 1 FROM queen.log_partitions p JOIN queen.queues q "
            + "ON q.id = p.queue_id WHERE p.id = $1 AND q.tenant_id = $2)")
        .execute(Tuple.of(partitionId, tenant))
        .map(rows -> {
          boolean owned = Boolean.TRUE.equals(rows.iterator().next().getBoolean(0));
          if (owned) {
            if (owners.size() >= CAPACITY) owners.clear();
            owners.put(partitionId, tenant);
          }
          return owned;
        })
        .otherwise(false);
  }

  @Override
  public void invalidate(Iterable<UUID> partitionIds) {
    for (UUID p : partitionIds) owners.remove(p);
  }

  /** Ownership queries sent to the database since start (tests count them). */
  public long queries() {
    return queries.get();
  }
}
