package io.queenvertx.log;

import io.vertx.core.Future;
import io.queenvertx.db.PushProcedures;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Per (tenant, queue) encryption flag, read once and cached until the queue is configured or deleted (the
 * {@code queue.changed} announcement invalidates it on every clustered node) or until a push write is refused with
 * QV103. A queue that does not exist yet is not encrypted.
 *
 * <p>The cache is an optimisation, never the guarantee: the push transaction checks each segment against the flag it
 * reads itself ({@code queen.log_push_multi}), which covers nodes that are not clustered and announcements that
 * arrive late. A failed lookup is a failed future, never "not encrypted".
 */
final class QueueSettings {
  private final PushProcedures pushes;
  private final Map<String, Boolean> encryption = new ConcurrentHashMap<>();
  /** Bumped by every invalidation: a lookup that was in flight across one does not cache what it read. */
  private final AtomicLong generation = new AtomicLong();

  QueueSettings(PushProcedures pushes) {
    this.pushes = pushes;
  }

  Future<Boolean> encryptionEnabled(UUID tenant, String queue) {
    String k = key(tenant.toString(), queue);
    Boolean cached = encryption.get(k);
    if (cached != null) return Future.succeededFuture(cached);
    long gen = generation.get();
    return pushes.encryptionEnabled(tenant, queue)
        .map(on -> {
          // A read that may predate an invalidation is used once but not remembered.
          if (generation.get() == gen) encryption.put(k, on);
          return on;
        });
  }

  void invalidate(String tenant, String queue) {
    generation.incrementAndGet();
    if (tenant == null || queue == null) encryption.clear();
    else encryption.remove(key(tenant, queue));
  }

  private static String key(String tenant, String queue) {
    return tenant + "\u001f" + queue;
  }
}
