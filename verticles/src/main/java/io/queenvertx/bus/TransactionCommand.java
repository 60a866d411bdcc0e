package io.queenvertx.bus;

import java.util.List;
import java.util.UUID;

/**
 * A validated {@code POST /api/v1/transaction} bundle: its operations flattened in request order (each push item
 * and each ack is one operation), plus the {@code requiredLeases} hint.
 */
public record TransactionCommand(UUID tenant, String producerSub, List<Op> ops, List<String> requiredLeases) {
  /** One flattened operation: exactly one of {@code push} and {@code ack} is set. */
  public record Op(PushItem push, UUID traceId, AckItem ack) {}
}
