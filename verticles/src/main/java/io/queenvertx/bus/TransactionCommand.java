package io.queenvertx.bus;

import io.vertx.core.json.JsonArray;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * A validated {@code POST /api/v1/transaction} bundle: its operations flattened in request order (each push item
 * and each ack is one operation), plus the {@code requiredLeases} hint, and the top-level riders {@code kv} and
 * {@code timers} (null when absent; checked by the route, parsed again by the log writer), with the text of each kv
 * operation's {@code value}, {@code delta}, {@code min} and {@code max} as the request held it ({@code kvValues},
 * {@code RawValues}; null when unknown): lossless storage and exact counting.
 */
public record TransactionCommand(UUID tenant, String producerSub, List<Op> ops, List<String> requiredLeases,
                                 JsonArray kv, JsonArray timers, List<Map<String, String>> kvValues) {
  /** One flattened operation: exactly one of {@code push} and {@code ack} is set. */
  public record Op(PushItem push, UUID traceId, AckItem ack) {}
}
