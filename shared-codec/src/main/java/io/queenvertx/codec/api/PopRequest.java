package io.queenvertx.codec.api;

import io.vertx.core.json.JsonObject;

/**
 * A pop over the event bus, with the query parameters of {@code GET /api/v1/pop/queue/:queue[/partition/:p]}.
 * {@code partition} and {@code consumerGroup} may be null; {@code subscriptionMode} null means the broker default.
 */
public record PopRequest(String queue, String partition, String consumerGroup, int batch, boolean longPoll, long timeoutMs,
                         boolean autoAck, String subscriptionMode, int leaseSeconds) {
  public static PopRequest of(String queue, int batch) {
    return new PopRequest(queue, null, null, batch, false, 0, false, null, 0);
  }

  public PopRequest waiting(long timeout) {
    return new PopRequest(queue, partition, consumerGroup, batch, true, timeout, autoAck, subscriptionMode,
        leaseSeconds);
  }

  public JsonObject toJson() {
    return new JsonObject().put("queue", queue).put("partition", partition).put("consumerGroup", consumerGroup)
        .put("batch", batch).put("wait", longPoll).put("timeoutMs", timeoutMs).put("autoAck", autoAck)
        .put("subscriptionMode", subscriptionMode).put("leaseSeconds", leaseSeconds);
  }

  public static PopRequest fromJson(JsonObject o) {
    return new PopRequest(o.getString("queue"), o.getString("partition"), o.getString("consumerGroup"),
        o.getInteger("batch", 200), o.getBoolean("wait", false), o.getLong("timeoutMs", 30000L),
        o.getBoolean("autoAck", false), o.getString("subscriptionMode"), o.getInteger("leaseSeconds", 0));
  }
}
