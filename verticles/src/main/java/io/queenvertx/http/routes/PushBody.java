package io.queenvertx.http.routes;

import io.queenvertx.kernel.ApiError;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import io.queenvertx.bus.PushItem;
import io.vertx.core.buffer.Buffer;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Streams a push body and slices each item's {@code payload} out of the request bytes verbatim: the payload is stored
 * as the client sent it (ENGINE.md §3.1 "payload is kept as raw JSON text"), so numbers keep their precision and
 * spelling, and the payload is never parsed into objects and re-encoded. An {@code items} array longer than the
 * node's {@code QUEEN_MAX_PUSH_ITEMS} is refused with 413 as soon as the parser reaches the first item past it, before
 * anything is stored.
 */
final class PushBody {
  private static final JsonFactory JSON = new JsonFactory();

  private PushBody() {}

  static List<PushItem> parse(Buffer body, int maxItems) {
    if (body == null || body.length() == 0) throw ApiError.of(400, "bad body: EOF while parsing a value");
    byte[] bytes = body.getBytes();
    try (JsonParser p = JSON.createParser(bytes)) {
      if (p.nextToken() != JsonToken.START_OBJECT) throw ApiError.of(400, "bad body: expected a JSON object");
      List<PushItem> items = null;
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String name = p.currentName();
        JsonToken t = p.nextToken();
        if ("items".equals(name)) {
          if (t == JsonToken.VALUE_NULL) continue;
          if (t != JsonToken.START_ARRAY) throw ApiError.of(400, "bad body: invalid type for `items`, expected a sequence");
          items = items(p, bytes, maxItems);
        } else {
          p.skipChildren();
        }
      }
      if (p.nextToken() != null) throw ApiError.of(400, "bad body: trailing characters after the JSON value");
      if (items == null) throw PushRoutes.missing("items");
      return items;
    } catch (JsonProcessingException e) {
      throw ApiError.of(400, "bad body: " + e.getOriginalMessage());
    } catch (IOException e) {
      throw ApiError.of(400, "bad body: " + ApiError.describe(e));
    }
  }

  private static List<PushItem> items(JsonParser p, byte[] bytes, int maxItems) throws IOException {
    List<PushItem> out = new ArrayList<>();
    JsonToken t;
    while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
      int index = out.size();
      if (index >= maxItems) throw tooMany(maxItems);
      if (t != JsonToken.START_OBJECT) throw ApiError.of(400, "bad body: item " + index + " must be an object");
      String queue = null;
      String partition = null;
      String txn = null;
      byte[] payload = null;
      boolean queueSeen = false;
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String name = p.currentName();
        JsonToken v = p.nextToken();
        switch (name) {
          case "queue" -> {
            queue = text(p, v, name);
            queueSeen = queue != null;
          }
          case "partition" -> partition = text(p, v, name);
          case "transactionId" -> txn = text(p, v, name);
          case "payload" -> {
            int start = (int) p.currentTokenLocation().getByteOffset();
            p.skipChildren();
            p.finishToken(); // strings are read lazily: consume the closing quote before taking the end offset
            int end = (int) p.currentLocation().getByteOffset();
            payload = Arrays.copyOfRange(bytes, start, end);
          }
          default -> p.skipChildren();
        }
      }
      if (!queueSeen) throw PushRoutes.missing("queue");
      if (payload == null) throw PushRoutes.missing("payload");
      out.add(PushRoutes.validated(queue, partition, txn, payload, index));
    }
    return out;
  }

  /** 413, naming the field and the limit: the push is well formed but larger than one request may be. */
  static ApiError tooMany(int maxItems) {
    return ApiError.of(413, "`items` holds more than " + maxItems
        + " items, the most one push may carry (QUEEN_MAX_PUSH_ITEMS): split it into several pushes");
  }

  private static String text(JsonParser p, JsonToken v, String field) throws IOException {
    if (v == JsonToken.VALUE_NULL) return null;
    if (v != JsonToken.VALUE_STRING) {
      throw ApiError.of(400, "bad body: invalid type for `" + field + "`, expected a string");
    }
    return p.getText();
  }
}
