package io.queenvertx.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JsonTest {
  @Test
  void parsesEveryKindOfValueKeepingKeyOrder() {
    Object v = Json.parse(" {\"b\":1,\"a\":[true,false,null,\"x\\u00e9\\n\"],\"n\":-2.5e3,\"big\":123456789012345678901} ");
    assertThat(Json.object(v).keySet()).containsExactly("b", "a", "n", "big");
    assertThat(Json.get(v, "b")).isEqualTo(1L);
    assertThat(Json.array(Json.get(v, "a"))).containsExactly(true, false, null, "xé\n");
    assertThat(Json.get(v, "n")).isEqualTo(new BigDecimal("-2.5e3"));
    assertThat(Json.get(v, "big")).isEqualTo(new BigDecimal("123456789012345678901"));
  }

  @Test
  void writesWhatItParses() {
    String text = "{\"q\":\"a\\\"b\\\\c\\u0001\",\"l\":[1,{\"e\":{}},[]],\"z\":null}";
    assertThat(Json.write(Json.parse(text))).isEqualTo(text);
    assertThat(Json.pretty(Map.of("k", List.of(1)))).isEqualTo("{\n  \"k\": [\n    1\n  ]\n}");
  }

  @Test
  void refusesWhatIsNotJson() {
    for (String bad : List.of("", "hello", "{\"a\":1", "[1,]", "01", "1.", "\"\\x\"", "{} x", "tru")) {
      assertThatThrownBy(() -> Json.parse(bad)).as(bad).isInstanceOf(IllegalArgumentException.class);
    }
    boolean[] ok = {true};
    assertThat(Json.tryParse("plain text", ok)).isNull();
    assertThat(ok[0]).isFalse();
  }
}
