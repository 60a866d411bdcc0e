package io.queenvertx.db;

import io.queenvertx.bus.AckItem;
import io.queenvertx.codec.TxnHash;
import io.vertx.core.buffer.Buffer;
import java.util.List;
import java.util.UUID;

/**
 * One {@code log_ack} call: the items of one (partition, consumer group, lease) group of an ack request or of a
 * transaction, as their transaction-id hashes and statuses in item order. Built the same way for both
 * ({@link #of}), sent by {@link AckProcedures#ack} (alone, or fused by {@link AckFusion}).
 */
public record AckCall(UUID tenant, UUID partitionId, String group, String leaseId, Buffer[] hashes,
                      String[] statuses) {
  public static AckCall of(UUID tenant, UUID partitionId, String group, String leaseId, List<AckItem> items) {
    Buffer[] hashes = new Buffer[items.size()];
    String[] statuses = new String[items.size()];
    for (int j = 0; j < items.size(); j++) {
      hashes[j] = Buffer.buffer(TxnHash.of(items.get(j).transactionId()));
      statuses[j] = items.get(j).status();
    }
    return new AckCall(tenant, partitionId, group, leaseId, hashes, statuses);
  }
}
