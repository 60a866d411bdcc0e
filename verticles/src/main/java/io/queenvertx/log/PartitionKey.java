package io.queenvertx.log;

import java.util.Objects;
import java.util.UUID;

/**
 * A partition by name, (tenant, queue, partition): the key of the log writer's maps (waiting frames, writes in flight,
 * known partition ids, the dedup cache). Its hash is computed once: a push spread over thousands of partitions looks
 * each key up about ten times on its way through the writer, and a record recomputed it from the three fields (their
 * strings mostly out of cache by then) at every lookup.
 */
final class PartitionKey {
  private final UUID tenant;
  private final String queue;
  private final String partition;
  private final int hash;

  PartitionKey(UUID tenant, String queue, String partition) {
    this.tenant = Objects.requireNonNull(tenant, "tenant");
    this.queue = Objects.requireNonNull(queue, "queue");
    this.partition = Objects.requireNonNull(partition, "partition");
    this.hash = (tenant.hashCode() * 31 + queue.hashCode()) * 31 + partition.hashCode();
  }

  UUID tenant() {
    return tenant;
  }

  String queue() {
    return queue;
  }

  String partition() {
    return partition;
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) return true;
    return o instanceof PartitionKey k && hash == k.hash && partition.equals(k.partition) && queue.equals(k.queue)
        && tenant.equals(k.tenant);
  }

  @Override
  public int hashCode() {
    return hash;
  }

  @Override
  public String toString() {
    return "PartitionKey[tenant=" + tenant + ", queue=" + queue + ", partition=" + partition + "]";
  }
}
