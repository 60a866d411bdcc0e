package io.queenvertx.bus;

import java.util.UUID;

/**
 * A replay (a move) of one dead-letter row. By row id ({@code dlqId} set; the id route) or by address (the newest row
 * of {@code partitionId}/{@code transactionId}; the retry route). Null overrides keep the source row's queue or
 * partition.
 */
public record DlqMoveCommand(UUID tenant, String dlqId, UUID partitionId, String transactionId, String queueOverride,
                             String partitionOverride) {
  public boolean byAddress() {
    return dlqId == null;
  }
}
