package io.queenvertx.bus;

import java.util.UUID;

/**
 * The verdict on one pushed item. {@code status} is {@code queued}, {@code duplicate}, {@code buffered} or
 * {@code failed}; for a duplicate {@code messageId} is the original's id or the all-zero uuid when it is unknown.
 * {@code partitionId} is null when the partition is unknown (spooled or failed items); {@code offset} is -1 then.
 */
public record PushOutcome(int index, UUID messageId, String transactionId, String queue, String status,
                          UUID partitionId, long offset) {}
