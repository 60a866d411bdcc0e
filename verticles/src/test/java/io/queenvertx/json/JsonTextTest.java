package io.queenvertx.json;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.junit.jupiter.api.Test;

class JsonTextTest {

  @Test
  void stringsNumbersAndRawTextRoundTripThroughAJsonParser() {
    Random rnd = new Random(7);
    String[] alphabet = {"a", "Z", "0", " ", "\"", "\\", "\n", "\r", "\t", "\b", "\f", "\u0001", "\u001f", "/",
        "é", "ß", "\u07ff", "\u0800", "€", "\uffff", "😀", "𝄞"};
    for (int round = 0; round < 500; round++) {
      StringBuilder sb = new StringBuilder();
      int n = rnd.nextInt(40);
      for (int i = 0; i < n; i++) sb.append(alphabet[rnd.nextInt(alphabet.length)]);
      String s = sb.toString();
      long v = switch (round % 5) {
        case 0 -> Long.MIN_VALUE;
        case 1 -> Long.MAX_VALUE;
        case 2 -> 0;
        default -> rnd.nextLong() >> rnd.nextInt(64);
      };
      var j = new JsonText(1).beginObject()
          .field("s", s).field("n", v).field("t", true).field("f", false)
          .key("raw").raw("{\"x\":[1,2]}".getBytes(StandardCharsets.UTF_8))
          .key("empty").raw(new byte[0])
          .key(s).nul()
          .key("arr").beginArray().str("a").num(-1).str(null).endArray()
          .endObject();
      JsonObject o = new JsonObject(j.buffer());
      assertEquals(s, o.getString("s"));
      assertEquals(v, o.getLong("n"));
      assertEquals(true, o.getBoolean("t"));
      assertEquals(false, o.getBoolean("f"));
      assertEquals(new JsonObject().put("x", new JsonArray().add(1).add(2)), o.getJsonObject("raw"));
      assertEquals(true, o.containsKey("empty") && o.getValue("empty") == null);
      assertEquals(true, o.containsKey(s) && o.getValue(s) == null);
      assertEquals(new JsonArray().add("a").add(-1).addNull(), o.getJsonArray("arr"));
      assertEquals(j.length(), j.buffer().length());
    }
  }

  @Test
  void loneSurrogatesBecomeQuestionMarksLikeStringGetBytes() {
    String s = "a\ud800b\udc00c";
    var j = new JsonText(4).str(s);
    assertEquals("\"" + new String(s.getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8) + "\"",
        j.buffer().toString(StandardCharsets.UTF_8));
  }
}
