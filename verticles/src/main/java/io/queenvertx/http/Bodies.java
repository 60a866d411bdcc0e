package io.queenvertx.http;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;

/** Request bodies are parsed as JSON whatever the Content-Type (API.md §1.1); a bad one is 400 {@code bad body: …}. */
public final class Bodies {
  private Bodies() {}

  /** The body as a JSON object; a non-object or unparseable body is 400. */
  public static JsonObject object(RoutingContext ctx) {
    Object v = value(ctx.body().buffer());
    if (v instanceof JsonObject o) return o;
    throw ApiError.of(400, "bad body: expected a JSON object");
  }

  /** The body as a JSON object, or {@code null} when the body is absent, empty or whitespace. */
  public static JsonObject optionalObject(RoutingContext ctx) {
    Buffer b = ctx.body().buffer();
    if (b == null || b.toString().isBlank()) return null;
    return object(ctx);
  }

  public static Object value(Buffer b) {
    if (b == null || b.length() == 0) throw ApiError.of(400, "bad body: EOF while parsing a value at line 1 column 0");
    try {
      Object v = Json.decodeValue(b);
      if (v instanceof java.util.Map<?, ?> m) return new JsonObject((java.util.Map<String, Object>) m);
      if (v instanceof java.util.List<?> l) return new JsonArray(l);
      return v;
    } catch (DecodeException e) {
      throw ApiError.of(400, "bad body: " + ApiError.describe(e));
    }
  }
}
