package io.queenvertx.state;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class RawValuesTest {
  static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void eachOperationsValueIsItsTextAsSent() {
    String body = "{\"x\":[1,{\"value\":2}],\"operations\":[{\"op\":\"put\",\"value\":1.10,\"ns\":\"a\"},"
        + "{\"op\":\"get\"},{\"value\":{\"n\": [1e400, \"é\\u0000\"]},\"k\":1},{\"value\":\"s\\\"q\"},7,"
        + "{\"value\":null},{\"value\":123456789012345678901234567890.5}]}";
    assertThat(RawValues.of(b(body), "operations")).containsExactly("1.10", null, "{\"n\": [1e400, \"é\\u0000\"]}",
        "\"s\\\"q\"", null, "null", "123456789012345678901234567890.5");
    assertThat(RawValues.of(b("[{\"value\":true}]"), "operations")).containsExactly("true");
    assertThat(RawValues.of(b("{\"kv\":[{\"value\":0.30}]}"), "kv")).containsExactly("0.30");
    assertThat(RawValues.of(b("{\"operations\":[{\"value\":1},{\"value\":2}], \"operations\":[{\"value\":3}]}"),
        "operations")).as("the last occurrence, as the decoded body").containsExactly("3");
    assertThat(RawValues.of(b("{\"operations\":"), "operations")).isNull();
    assertThat(RawValues.ofObject(b("{\"ttlSeconds\":5,\"value\":[1.50, 2]}"))).isEqualTo("[1.50, 2]");
    assertThat(RawValues.ofObject(b("{\"ttlSeconds\":5}"))).isNull();
    assertThat(Arrays.asList(RawValues.ofObject(b("[]")))).containsOnlyNulls();
  }
}
