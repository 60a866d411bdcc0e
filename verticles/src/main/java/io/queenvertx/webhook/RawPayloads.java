package io.queenvertx.webhook;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.vertx.core.buffer.Buffer;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The {@code data} of every message of a pop document, as the exact bytes the broker spliced in: a webhook body is
 * the stored payload verbatim (numbers keep their spelling and precision), not a re-encoding of a parsed value.
 */
final class RawPayloads {
  private static final JsonFactory JSON = new JsonFactory();

  private RawPayloads() {}

  static List<byte[]> of(Buffer popBody) throws IOException {
    byte[] bytes = popBody.getBytes();
    List<byte[]> out = new ArrayList<>();
    try (JsonParser p = JSON.createParser(bytes)) {
      if (p.nextToken() != JsonToken.START_OBJECT) return out;
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String name = p.currentName();
        JsonToken t = p.nextToken();
        if (!"messages".equals(name) || t != JsonToken.START_ARRAY) {
          p.skipChildren();
          continue;
        }
        while (p.nextToken() == JsonToken.START_OBJECT) {
          byte[] data = "null".getBytes();
          while (p.nextToken() == JsonToken.FIELD_NAME) {
            String field = p.currentName();
            p.nextToken();
            if ("data".equals(field)) {
              int start = (int) p.currentTokenLocation().getByteOffset();
              p.skipChildren();
              p.finishToken();
              data = Arrays.copyOfRange(bytes, start, (int) p.currentLocation().getByteOffset());
            } else {
              p.skipChildren();
            }
          }
          out.add(data);
        }
      }
    }
    return out;
  }
}
