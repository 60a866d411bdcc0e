package io.queenvertx.auth;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Issue 34 item 12, tokens: a token without {@code exp} never expires, so it is refused unless
 * {@code QUEEN_JWT_REQUIRE_EXP=false}; a {@code crit} header names extensions this verifier does not understand, so
 * the token is refused (RFC 7515 §4.1.11); a header or claims set that is not valid UTF-8 is refused rather than read
 * with replacement characters (its {@code sub} would be stamped on messages).
 */
class JwtHardeningIT {
  static final String SECRET = "hardening-secret-0123456789abcdef";
  static final String ROUTE = "/api/v1/resources/queues";
  static final JsonObject HEADER = new JsonObject().put("alg", "HS256").put("typ", "JWT");

  @NodeFixture(env = {"JWT_ENABLED=true", "JWT_SECRET=" + SECRET})
  static TestNode node;

  static JsonObject claims() {
    return new JsonObject().put("sub", "svc").put("role", "admin").put("exp", System.currentTimeMillis() / 1000 + 600);
  }

  static TestNode.Reply call(TestNode n, String token) {
    return n.get(ROUTE, Map.of("Authorization", "Bearer " + token));
  }

  @Test
  void aTokenWithoutExpIsRefusedByDefaultAndAcceptedWhenTheSettingIsOff() {
    String noExp = Tokens.hs(HEADER, SECRET, new JsonObject().put("sub", "svc").put("role", "admin"));
    var r = call(node, noExp);
    assertThat(r.status()).isEqualTo(401);
    assertThat(r.json().getString("error")).isEqualTo("Token has no expiry");
    assertThat(call(node, Tokens.hs(HEADER, SECRET, claims())).status()).isEqualTo(200);
    try (var lenient = TestNode.start(Map.of("JWT_ENABLED", "true", "JWT_SECRET", SECRET,
        "QUEEN_JWT_REQUIRE_EXP", "false"))) {
      assertThat(call(lenient, noExp).status()).as("Queen's behaviour, on request").isEqualTo(200);
    }
  }

  @Test
  void aCritHeaderIsRefusedWhateverItNames() {
    for (JsonArray crit : new JsonArray[] {new JsonArray().add("x-queen"), new JsonArray().add("exp"),
        new JsonArray()}) {
      String token = Tokens.hs(HEADER.copy().put("crit", crit).put("x-queen", 1), SECRET, claims());
      var r = call(node, token);
      assertThat(r.status()).as(crit.encode()).isEqualTo(401);
      assertThat(r.json().getString("error")).isEqualTo("Bad token header");
    }
  }

  @Test
  void aHeaderOrClaimsSetThatIsNotUtf8IsRefused() {
    byte[] header = HEADER.encode().getBytes(StandardCharsets.UTF_8);
    String good = claims().encode();
    // "sub":"svc" with an overlong '/' (C0 AF) after it, and then a lone surrogate (ED A0 80)
    for (byte[] bad : new byte[][] {{(byte) 0xc0, (byte) 0xaf}, {(byte) 0xed, (byte) 0xa0, (byte) 0x80}}) {
      byte[] claims = splice(good, "\"svc", bad);
      var r = call(node, Tokens.hs("HS256", SECRET, header, claims));
      assertThat(r.status()).isEqualTo(401);
      assertThat(r.json().getString("error")).isEqualTo("Bad token header");
      var h = call(node, Tokens.hs("HS256", SECRET, splice(HEADER.encode(), "\"JWT", bad), good
          .getBytes(StandardCharsets.UTF_8)));
      assertThat(h.status()).isEqualTo(401);
    }
  }

  /** The UTF-8 of {@code text} with {@code bytes} inserted right after {@code after}. */
  static byte[] splice(String text, String after, byte[] bytes) {
    int at = text.indexOf(after) + after.length();
    byte[] head = text.substring(0, at).getBytes(StandardCharsets.UTF_8);
    byte[] tail = text.substring(at).getBytes(StandardCharsets.UTF_8);
    byte[] out = new byte[head.length + bytes.length + tail.length];
    System.arraycopy(head, 0, out, 0, head.length);
    System.arraycopy(bytes, 0, out, head.length, bytes.length);
    System.arraycopy(tail, 0, out, head.length + bytes.length, tail.length);
    return out;
  }
}
