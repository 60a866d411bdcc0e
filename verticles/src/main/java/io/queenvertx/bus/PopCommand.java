package io.queenvertx.bus;

import java.time.OffsetDateTime;
import java.util.UUID;

/**
 * One pop (API.md §5.4). {@code queue} is null for a discovery pop (then {@code namespace}/{@code task} select);
 * {@code partition} is null for any partition. {@code subscriptionMode} is normalised to {@code all}, {@code new}
 * or {@code timestamp} (with {@code subscriptionFrom}). {@code timeoutMs} only matters when {@code wait}.
 */
public record PopCommand(UUID tenant, String queue, String partition, String namespace, String task,
                         String consumerGroup, int batch, int partitions, boolean autoAck, boolean longPoll,
                         long timeoutMs, int leaseSeconds, String subscriptionMode, OffsetDateTime subscriptionFrom) {
  /** The same pop asking for at most {@code max} messages. */
  public PopCommand atMost(int max) {
    if (batch <= max) return this;
    return new PopCommand(tenant, queue, partition, namespace, task, consumerGroup, max, partitions, autoAck, longPoll,
        timeoutMs, leaseSeconds, subscriptionMode, subscriptionFrom);
  }
}
