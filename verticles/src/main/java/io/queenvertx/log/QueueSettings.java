package io.queenvertx.log;

import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Per (tenant, queue) encryption flag, read once and cached until the queue is configured or deleted (the
 * {@code queue.changed} announcement invalidates it on every node). A queue that does not exist yet is not encrypted.
 */
final class QueueSettings {
  private final Pool pool;
  private final Map<String, Boolean> encryption = new ConcurrentHashMap<>();

  QueueSettings(Pool pool) {
    this.pool = pool;
  }

  Future<Boolean> encryptionEnabled(UUID tenant, String queue) {
    String k = tenant + "\u001f" + queue;
    Boolean cached = encryption.get(k);
    if (cached != null) return Future.succeededFuture(cached);
    return pool.preparedQuery("SELECT encryption_enabled FROM queen.queues WHERE tenant_id = $1 AND name = $2")
        .execute(Tuple.of(tenant, queue))
        .map(rows -> {
          var it = rows.iterator();
          boolean on = it.hasNext() && Boolean.TRUE.equals(it.next().getBoolean(0));
          // A later configure announces the change, so caching "off" for a queue that does not exist yet is safe.
          encryption.put(k, on);
          return on;
        });
  }

  void invalidate(String tenant, String queue) {
    if (tenant == null || queue == null) encryption.clear();
    else encryption.remove(tenant + "\u001f" + queue);
  }
}
