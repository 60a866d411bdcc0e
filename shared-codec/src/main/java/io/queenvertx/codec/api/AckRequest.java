package io.queenvertx.codec.api;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;

/** An ack batch over the event bus ({@code POST /api/v1/ack/batch}); {@code consumerGroup} null is queue mode. */
public record AckRequest(String consumerGroup, List<Ack> acks) {
  /** One acknowledgement; {@code status} null means completed, {@code leaseId} and {@code error} may be null. */
  public record Ack(String transactionId, String partitionId, String status, String leaseId, String error) {}

  public JsonObject toJson() {
    JsonArray arr = new JsonArray();
    for (Ack a : acks) {
      arr.add(new JsonObject().put("transactionId", a.transactionId()).put("partitionId", a.partitionId())
          .put("status", a.status()).put("leaseId", a.leaseId()).put("error", a.error()));
    }
    return new JsonObject().put("consumerGroup", consumerGroup).put("acknowledgments", arr);
  }

  public static AckRequest fromJson(JsonObject o) {
    List<Ack> acks = new ArrayList<>();
    for (Object x : o.getJsonArray("acknowledgments", new JsonArray())) {
      JsonObject a = (JsonObject) x;
      acks.add(new Ack(a.getString("transactionId"), a.getString("partitionId"), a.getString("status"),
          a.getString("leaseId"), a.getString("error")));
    }
    return new AckRequest(o.getString("consumerGroup"), acks);
  }
}
