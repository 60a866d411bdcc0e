package io.queenvertx.kernel;

import io.vertx.core.Future;
import java.util.UUID;

/**
 * Does this partition belong to this tenant? Routes addressed by a raw partition id ask before they read anything,
 * and answer a foreign partition exactly like a missing one (seed "Ownership gating"). A database failure counts as
 * "not owned".
 */
public interface OwnershipGate {
  Future<Boolean> owns(UUID tenant, UUID partitionId);

  /** Forgets what is known about these partitions (queue deletion). */
  void invalidate(Iterable<UUID> partitionIds);

  /** Tenancy off: every partition is the default tenant's, and the gate costs no query. */
  OwnershipGate OPEN = new OwnershipGate() {
    @Override
    public Future<Boolean> owns(UUID tenant, UUID partitionId) {
      return Future.succeededFuture(true);
    }

    @Override
    public void invalidate(Iterable<UUID> partitionIds) {}
  };
}
