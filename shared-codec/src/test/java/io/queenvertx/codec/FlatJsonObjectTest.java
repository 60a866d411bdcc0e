package io.queenvertx.codec;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class FlatJsonObjectTest {

  private static Optional<Map<String, String>> parse(String json) {
    return FlatJsonObject.parse(json.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void readsStringMembersWithWhitespaceAnywhereJsonAllowsIt() {
    assertThat(parse(" \t\r\n{ \"a\" : \"1\" ,\n\"b\":\"\" } \n")).contains(Map.of("a", "1", "b", ""));
    assertThat(parse("{}")).contains(Map.of());
    assertThat(parse(" { } ")).contains(Map.of());
  }

  @Test
  void decodesEveryEscape() {
    assertThat(parse("{\"k\":\"\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u0041\\u00e9\\u20AC\"}"))
        .contains(Map.of("k", "\" \\ / \b \f \n \r \t Aé€"));
    assertThat(parse("{\"\\u0065ncrypted\":\"x\"}")).contains(Map.of("encrypted", "x"));
  }

  @Test
  void surrogatePairEscapesFormOneCodePoint() {
    assertThat(parse("{\"k\":\"\\ud83d\\ude80\"}")).contains(Map.of("k", "🚀"));
  }

  @Test
  void rawUtf8IsDecoded() {
    assertThat(parse("{\"zażółć\":\"注文 🚀\"}")).contains(Map.of("zażółć", "注文 🚀"));
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "", "   ", "{", "}", "{\"a\"}", "{\"a\":}", "{\"a\":\"b\"", "{\"a\":\"b\",}", "{,}", "{\"a\" \"b\"}",
      "{\"a\":\"b\" \"c\":\"d\"}", "{a:\"b\"}", "{\"a\":'b'}", "{\"a\":1}", "{\"a\":true}", "{\"a\":null}",
      "{\"a\":{}}", "{\"a\":[]}", "{\"a\":\"b\"}}", "{\"a\":\"b\"}{}", "[]", "\"a\"", "1",
      "{\"a\":\"\\x\"}", "{\"a\":\"\\u12\"}", "{\"a\":\"\\u12g4\"}", "{\"a\":\"\\\"}", "{\"a\":\"tab\there\"}",
      "{\"a\":\"new\nline\"}", "{\"a\":\"b\",\"a\":\"c\"}", "\u00a0{}", "{}\u000b", "\ufeff{}",
      "{\"a\":\"b\"}//", "/*c*/{}"})
  void rejectsEverythingButAFlatObjectOfStrings(String json) {
    assertThat(parse(json)).isEmpty();
  }

  @Test
  void rejectsMalformedUtf8() {
    byte[][] bad = {
        {(byte) 0xC0, (byte) 0x80},
        {(byte) 0xC1, (byte) 0xBF},
        {(byte) 0xE0, (byte) 0x80, (byte) 0x80},
        {(byte) 0xED, (byte) 0xA0, (byte) 0x80},
        {(byte) 0xF0, (byte) 0x80, (byte) 0x80, (byte) 0x80},
        {(byte) 0xF4, (byte) 0x90, (byte) 0x80, (byte) 0x80},
        {(byte) 0xF5, (byte) 0x80, (byte) 0x80, (byte) 0x80},
        {(byte) 0x80},
        {(byte) 0xE2, (byte) 0x82},
        {(byte) 0xFF}};
    for (byte[] b : bad) {
      byte[] json = new byte[b.length + 10];
      byte[] head = "{\"k\":\"".getBytes(StandardCharsets.US_ASCII);
      System.arraycopy(head, 0, json, 0, head.length);
      System.arraycopy(b, 0, json, head.length, b.length);
      json[head.length + b.length] = '"';
      json[head.length + b.length + 1] = '}';
      byte[] exact = java.util.Arrays.copyOf(json, head.length + b.length + 2);
      assertThat(FlatJsonObject.parse(exact)).as(TxnHash.hex(b)).isEmpty();
    }
    assertThat(FlatJsonObject.parse(null)).isEmpty();
  }

  @Test
  void acceptsTheBoundariesOfEachUtf8Length() {
    for (int cp : new int[] {0x7F, 0x80, 0x7FF, 0x800, 0xD7FF, 0xE000, 0xFFFF, 0x10000, 0x10FFFF}) {
      String s = new String(Character.toChars(cp));
      assertThat(parse("{\"k\":\"" + s + "\"}")).as("U+%X", cp).contains(Map.of("k", s));
    }
  }

  /** Serialises with a random mix of raw characters and \\u escapes, as other writers might. */
  private static String write(Map<String, String> members, long style) {
    StringBuilder sb = new StringBuilder(style % 2 == 0 ? "{" : " {\n");
    boolean first = true;
    for (Map.Entry<String, String> e : members.entrySet()) {
      if (!first) {
        sb.append(style % 3 == 0 ? " , " : ",");
      }
      first = false;
      quote(sb, e.getKey(), style);
      sb.append(style % 5 == 0 ? " :\t" : ":");
      quote(sb, e.getValue(), style >>> 3);
    }
    return sb.append(style % 7 == 0 ? "\r\n}\n" : "}").toString();
  }

  private static void quote(StringBuilder sb, String s, long style) {
    sb.append('"');
    // decide per code point, so a surrogate pair is either written raw or as two escapes, never half and half
    int i = 0;
    for (int cp : s.codePoints().toArray()) {
      if (cp == '"' || cp == '\\') {
        sb.append('\\').appendCodePoint(cp);
      } else if (cp < 0x20 || ((style >>> (i++ % 60)) & 1) == 1 && cp > 0x7E) {
        for (char c : Character.toChars(cp)) {
          sb.append(String.format("\\u%04x", (int) c));
        }
      } else {
        sb.appendCodePoint(cp);
      }
    }
    sb.append('"');
  }

  @Property
  void anyFlatStringObjectRoundTrips(@ForAll("members") Map<String, String> members, @ForAll long style) {
    assertThat(parse(write(members, style))).contains(members);
  }

  @Property
  void arbitraryBytesNeverThrow(@ForAll @Size(max = 300) byte[] json) {
    FlatJsonObject.parse(json);
  }

  /**
   * Differential check against Jackson's strict streaming parser on token soup: whenever both can judge the
   * input, they agree on accept/reject and on the members.
   */
  @Property(tries = 3000)
  void agreesWithJacksonOnTokenSoup(@ForAll("tokenSoup") String json) {
    assertThat(parse(json)).isEqualTo(jackson(json.getBytes(StandardCharsets.UTF_8)));
  }

  private static final JsonFactory JACKSON = new JsonFactory();

  private static Optional<Map<String, String>> jackson(byte[] json) {
    try (JsonParser p = JACKSON.createParser(json)) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        return Optional.empty();
      }
      Map<String, String> out = new HashMap<>();
      JsonToken t;
      while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
        String key = p.currentName();
        if (p.nextToken() != JsonToken.VALUE_STRING || out.putIfAbsent(key, p.getText()) != null) {
          return Optional.empty();
        }
      }
      if (t != JsonToken.END_OBJECT || p.nextToken() != null) {
        return Optional.empty();
      }
      return Optional.of(out);
    } catch (Exception e) {
      return Optional.empty();
    }
  }

  @Provide
  Arbitrary<Map<String, String>> members() {
    return Arbitraries.maps(SampleFrames.text(12), SampleFrames.text(30)).ofMaxSize(6)
        .map(LinkedHashMap::new);
  }

  @Provide
  Arbitrary<String> tokenSoup() {
    List<String> tokens = List.of("{", "}", ":", ",", " ", "\t", "\n", "\"a\"", "\"b\"", "\"encrypted\"", "\"\"",
        "\"é注\"", "\"\\u0041\"", "\"\\ud83d\\ude80\"", "\"\\n\\\"\"", "\"\\x\"", "\"", "\\", "1", "-0.5", "true",
        "null", "[", "]", "\"a\u0001b\"", "x", "\"🚀\"");
    Arbitrary<String> body = Arbitraries.of(tokens).list().ofMaxSize(14).map(l -> String.join("", l));
    Arbitrary<String> members = Arbitraries.of("\"a\"", "\"b\"", "\"\\u0061\"", "\"é\"")
        .list().ofMinSize(1).ofMaxSize(4)
        .flatMap(keys -> Arbitraries.of(tokens).list().ofSize(keys.size()).map(values -> {
          StringBuilder sb = new StringBuilder("{");
          for (int i = 0; i < keys.size(); i++) {
            sb.append(i == 0 ? "" : ",").append(keys.get(i)).append(':').append(values.get(i));
          }
          return sb.append('}').toString();
        }));
    return Arbitraries.oneOf(body, body.map(s -> "{" + s), members);
  }
}
