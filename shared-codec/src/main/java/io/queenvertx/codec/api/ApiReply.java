package io.queenvertx.codec.api;

import io.vertx.core.json.JsonObject;

/**
 * The answer to an event-bus API request: the HTTP status the same request would have had over HTTP, and the same
 * JSON body as text ({@code null} for a 204).
 */
public record ApiReply(int status, String body) {
  public JsonObject toJson() {
    return new JsonObject().put("status", status).put("body", body);
  }

  public static ApiReply fromJson(JsonObject o) {
    return new ApiReply(o.getInteger("status"), o.getString("body"));
  }
}
