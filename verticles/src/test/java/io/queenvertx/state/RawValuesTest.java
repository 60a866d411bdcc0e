package io.queenvertx.state;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RawValuesTest {
  static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  static List<String> values(List<Map<String, String>> raw) {
    return raw.stream().map(m -> m.get("value")).toList();
  }

  @Test
  void eachOperationsValueIsItsTextAsSent() {
    String body = "{\"x\":[1,{\"value\":2}],\"operations\":[{\"op\":\"put\",\"value\":1.10,\"ns\":\"a\"},"
        + "{\"op\":\"get\"},{\"value\":{\"n\": [1e400, \"é\\u0000\"]},\"k\":1},{\"value\":\"s\\\"q\"},7,"
        + "{\"value\":null},{\"value\":123456789012345678901234567890.5}]}";
    assertThat(values(RawValues.of(b(body), "operations"))).containsExactly("1.10", null,
        "{\"n\": [1e400, \"é\\u0000\"]}", "\"s\\\"q\"", null, "null", "123456789012345678901234567890.5");
    assertThat(values(RawValues.of(b("[{\"value\":true}]"), "operations"))).containsExactly("true");
    assertThat(values(RawValues.of(b("{\"kv\":[{\"value\":0.30}]}"), "kv"))).containsExactly("0.30");
    assertThat(values(RawValues.of(b("{\"operations\":[{\"value\":1},{\"value\":2}], \"operations\":[{\"value\":3}]}"),
        "operations"))).as("the last occurrence, as the decoded body").containsExactly("3");
    assertThat(RawValues.of(b("{\"operations\":"), "operations")).isNull();
    assertThat(RawValues.ofObject(b("{\"ttlSeconds\":5,\"value\":[1.50, 2]}")).get("value")).isEqualTo("[1.50, 2]");
    assertThat(RawValues.ofObject(b("{\"ttlSeconds\":5}"))).doesNotContainKey("value");
    assertThat(RawValues.ofObject(b("[]"))).isNull();
  }

  @Test
  void incrNumbersAreTheirLiterals() {
    String body = "{\"operations\":[{\"op\":\"incr\",\"delta\":9007199254740993.0,\"min\":-1E+3,\"max\":1e400,"
        + "\"ttlSeconds\":5}]}";
    assertThat(RawValues.of(b(body), "operations")).containsExactly(
        Map.of("delta", "9007199254740993.0", "min", "-1E+3", "max", "1e400"));
  }
}
