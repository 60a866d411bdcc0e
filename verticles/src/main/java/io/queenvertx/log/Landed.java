package io.queenvertx.log;

import io.vertx.core.json.JsonObject;
import java.util.UUID;

/**
 * What one push bundle landed in one (tenant, queue): one announcement, whatever the number of its partitions. Used
 * only from the log writer's event-loop thread.
 */
final class Landed {
  /** The (tenant, queue) a landing is counted under. */
  record Queue(UUID tenant, String queue) {}

  final PartitionKey first;
  final UUID pid;
  final long lastOffset;
  int partitions;

  Landed(PartitionKey first, UUID pid, long lastOffset) {
    this.first = first;
    this.pid = pid;
    this.lastOffset = lastOffset;
  }

  /** The {@code Addresses.LANDED} announcement of this landing. */
  JsonObject announcement() {
    return new JsonObject()
        .put("tenant", first.tenant().toString())
        .put("queue", first.queue())
        .put("partition", first.partition())
        .put("partitionId", pid.toString())
        .put("lastOffset", lastOffset)
        .put("partitions", partitions);
  }
}
