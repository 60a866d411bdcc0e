package io.queenvertx.state;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The {@code value} of key-value operations exactly as the request's text holds it (docs/design/queen2-contract.md
 * §2.5: the stored JSON must be lossless, and the decoded body holds floating-point numbers as doubles: {@code 1.10}
 * or a 30-digit decimal would not survive a re-encoding). Read from the body bytes with a streaming parser, by
 * operation index; the decoded operations still decide everything else. A key repeated in an object counts with its
 * last occurrence, as in the decoded body.
 */
public final class RawValues {
  private static final JsonFactory JSON = new JsonFactory();

  private RawValues() {}

  /**
   * The raw {@code value} of each element of the operations array: the body itself when it is an array, else its
   * field {@code field} ({@code operations}, or a transaction's {@code kv}); null entries where an element has none;
   * null when there is no such array or the text does not parse (the decoded body then decides).
   */
  public static List<String> of(byte[] body, String field) {
    try (JsonParser p = JSON.createParser(body)) {
      JsonToken t = p.nextToken();
      if (t == JsonToken.START_ARRAY) return elements(p, body);
      if (t != JsonToken.START_OBJECT) return null;
      List<String> found = null;
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String name = p.currentName();
        JsonToken v = p.nextToken();
        if (name.equals(field) && v == JsonToken.START_ARRAY) found = elements(p, body);
        else if (name.equals(field)) found = null;
        else p.skipChildren();
      }
      return found;
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  /** The raw {@code value} of a body that is one object (the PUT path route), or null. */
  public static String ofObject(byte[] body) {
    try (JsonParser p = JSON.createParser(body)) {
      return p.nextToken() == JsonToken.START_OBJECT ? value(p, body) : null;
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  private static List<String> elements(JsonParser p, byte[] body) throws IOException {
    List<String> out = new ArrayList<>();
    for (JsonToken t = p.nextToken(); t != JsonToken.END_ARRAY; t = p.nextToken()) {
      if (t == JsonToken.START_OBJECT) {
        out.add(value(p, body));
      } else {
        p.skipChildren();
        out.add(null);
      }
    }
    return out;
  }

  /** Inside an object just opened: its field {@code value}'s text, the parser left on the object's end. */
  private static String value(JsonParser p, byte[] body) throws IOException {
    String raw = null;
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      String name = p.currentName();
      JsonToken v = p.nextToken();
      if (!name.equals("value")) {
        p.skipChildren();
        continue;
      }
      int start = (int) p.currentTokenLocation().getByteOffset();
      if (v.isStructStart()) p.skipChildren();
      else p.getText(); // a string token is read lazily: finish it so the location is past its end
      int end = (int) p.currentLocation().getByteOffset();
      raw = new String(body, start, end - start, StandardCharsets.UTF_8);
    }
    return raw;
  }
}
