package io.queenvertx.state;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The {@code value} of key-value operations, and the numbers {@code delta}, {@code min} and {@code max} of incr,
 * exactly as the request's text holds them (docs/design/queen2-contract.md §2.5: the stored JSON must be lossless, and
 * the decoded body holds floating-point numbers as doubles: {@code 1.10}, a 30-digit decimal or
 * {@code 9007199254740993.0} would not survive a re-encoding, and a counter would move by a wrong amount). Read from the
 * body bytes with a streaming parser, by operation index: each operation's map of those fields to their text (absent
 * fields absent); the decoded operations still decide everything else. A key repeated in an object counts with its
 * last occurrence, as in the decoded body.
 */
public final class RawValues {
  private static final JsonFactory JSON = new JsonFactory();
  /** The fields read as text: the value stored verbatim, and incr's numbers (a number token's literal text). */
  private static final Set<String> FIELDS = Set.of("value", "delta", "min", "max");

  private RawValues() {}

  /**
   * The raw fields of each element of the operations array: the body itself when it is an array, else its field
   * {@code field} ({@code operations}, or a transaction's {@code kv}); an empty map where an element is no object; null
   * when there is no such array or the text does not parse (the decoded body then decides).
   */
  public static List<Map<String, String>> of(byte[] body, String field) {
    try (JsonParser p = JSON.createParser(body)) {
      JsonToken t = p.nextToken();
      if (t == JsonToken.START_ARRAY) return elements(p, body);
      if (t != JsonToken.START_OBJECT) return null;
      List<Map<String, String>> found = null;
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

  /** The raw fields of a body that is one object (the PUT path route), or null. */
  public static Map<String, String> ofObject(byte[] body) {
    try (JsonParser p = JSON.createParser(body)) {
      return p.nextToken() == JsonToken.START_OBJECT ? fields(p, body) : null;
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  private static List<Map<String, String>> elements(JsonParser p, byte[] body) throws IOException {
    List<Map<String, String>> out = new ArrayList<>();
    for (JsonToken t = p.nextToken(); t != JsonToken.END_ARRAY; t = p.nextToken()) {
      if (t == JsonToken.START_OBJECT) {
        out.add(fields(p, body));
      } else {
        p.skipChildren();
        out.add(Map.of());
      }
    }
    return out;
  }

  /** Inside an object just opened: the text of its {@link #FIELDS}, the parser left on the object's end. */
  private static Map<String, String> fields(JsonParser p, byte[] body) throws IOException {
    Map<String, String> raw = new HashMap<>(4);
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      String name = p.currentName();
      JsonToken v = p.nextToken();
      if (!FIELDS.contains(name)) {
        p.skipChildren();
        continue;
      }
      int start = (int) p.currentTokenLocation().getByteOffset();
      if (v.isStructStart()) p.skipChildren();
      else p.getText(); // a string token is read lazily: finish it so the location is past its end
      int end = (int) p.currentLocation().getByteOffset();
      raw.put(name, new String(body, start, end - start, StandardCharsets.UTF_8));
    }
    return raw;
  }
}
