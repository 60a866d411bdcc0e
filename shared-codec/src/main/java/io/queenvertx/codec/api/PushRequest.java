package io.queenvertx.codec.api;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;

/** A push over the event bus; {@code payloadJson} is the message payload as JSON text. */
public record PushRequest(List<Item> items) {
  /** One message; {@code partition} and {@code transactionId} may be null (Default / minted). */
  public record Item(String queue, String partition, String transactionId, String payloadJson) {}

  public JsonObject toJson() {
    JsonArray arr = new JsonArray();
    for (Item i : items) {
      arr.add(new JsonObject().put("queue", i.queue()).put("partition", i.partition())
          .put("transactionId", i.transactionId()).put("payloadJson", i.payloadJson()));
    }
    return new JsonObject().put("items", arr);
  }

  public static PushRequest fromJson(JsonObject o) {
    List<Item> items = new ArrayList<>();
    for (Object x : o.getJsonArray("items", new JsonArray())) {
      JsonObject i = (JsonObject) x;
      items.add(new Item(i.getString("queue"), i.getString("partition"), i.getString("transactionId"),
          i.getString("payloadJson")));
    }
    return new PushRequest(items);
  }
}
