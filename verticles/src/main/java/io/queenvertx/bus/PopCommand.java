package io.queenvertx.bus;

import java.time.OffsetDateTime;
import java.util.UUID;

/**
 * One pop (API.md §5.4). {@code queue} is null for a discovery pop (then {@code namespace}/{@code task} select);
 * {@code partition} is null for any partition. {@code subscriptionMode} is normalised to {@code all}, {@code new}
 * or {@code timestamp} (with {@code subscriptionFrom}). {@code timeoutMs} only matters when {@code wait}.
 * {@code autoAck} is also 2.x's {@code commitOnDelivery}. {@code conflation}: the pop declares last-value delivery
 * (queen2-contract.md §6.2); {@code autopilot}: what the broker chose for the knobs the caller left to it (§6.3), or
 * null when the pop did not engage autopilot.
 */
public record PopCommand(UUID tenant, String queue, String partition, String namespace, String task,
                         String consumerGroup, int batch, int partitions, boolean autoAck, boolean longPoll,
                         long timeoutMs, int leaseSeconds, String subscriptionMode, OffsetDateTime subscriptionFrom,
                         boolean conflation, Autopilot autopilot) {
  /** The sizing an autopilot pop was given (echoed in its answer with the broker's wait advice). */
  public record Autopilot(int partitions, int batch) {}

  /** A pop with neither conflation nor autopilot. */
  public PopCommand(UUID tenant, String queue, String partition, String namespace, String task, String consumerGroup,
                    int batch, int partitions, boolean autoAck, boolean longPoll, long timeoutMs, int leaseSeconds,
                    String subscriptionMode, OffsetDateTime subscriptionFrom) {
    this(tenant, queue, partition, namespace, task, consumerGroup, batch, partitions, autoAck, longPoll, timeoutMs,
        leaseSeconds, subscriptionMode, subscriptionFrom, false, null);
  }

  /** The same pop asking for at most {@code max} messages. */
  public PopCommand atMost(int max) {
    if (batch <= max) return this;
    return new PopCommand(tenant, queue, partition, namespace, task, consumerGroup, max, partitions, autoAck, longPoll,
        timeoutMs, leaseSeconds, subscriptionMode, subscriptionFrom, conflation,
        autopilot == null ? null : new Autopilot(autopilot.partitions(), max));
  }
}
