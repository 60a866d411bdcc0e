package io.queenvertx.security;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.TestNode;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 18 item 8: the time claims are numbers (RFC 7519 NumericDate). A token whose {@code exp}, {@code nbf} or
 * {@code iat} is anything else cannot be read, so it is 401 {@code Bad token header} (API.md §2.5), even when the
 * signature is good: a string {@code exp} must never make a token that does not expire.
 */
class JwtClaimTypesIT {
  static final String SECRET = "claim-types-secret-0123456789abcdef";
  static final String ROUTE = "/api/v1/resources/queues";
  static TestNode node;

  @BeforeAll
  static void start() {
    node = TestNode.start(Map.of("JWT_ENABLED", "true", "JWT_SECRET", SECRET));
  }

  @AfterAll
  static void stop() {
    node.close();
  }

  static long now() {
    return System.currentTimeMillis() / 1000;
  }

  static JsonObject claims() {
    return new JsonObject().put("sub", "svc").put("role", "admin");
  }

  static TestNode.Reply call(JsonObject claims) {
    return node.get(ROUTE, Map.of("Authorization", "Bearer " + RawHttp.hs256(SECRET, claims)));
  }

  static void assertBadToken(JsonObject claims) {
    var r = call(claims);
    assertThat(r.status()).as(claims.encode()).isEqualTo(401);
    assertThat(r.json().getMap()).as(claims.encode()).isEqualTo(Map.of("error", "Bad token header", "code", "unauthorized"));
  }

  @Test
  void aStringExpLongPastIsRefusedInsteadOfNeverExpiring() {
    assertBadToken(claims().put("exp", "1700000000"));
    assertBadToken(claims().put("exp", Long.toString(now() + 600)));
  }

  @Test
  void nonNumericNbfAndIatAreRefused() {
    assertBadToken(claims().put("nbf", "0"));
    assertBadToken(claims().put("iat", "0"));
    assertBadToken(claims().put("exp", true));
    assertBadToken(claims().put("nbf", new JsonObject()));
    assertBadToken(claims().put("iat", new JsonArray().add(1)));
  }

  @Test
  void numericTimeClaimsStillWork() {
    assertThat(call(claims().put("exp", now() + 600).put("nbf", now() - 5).put("iat", now())).status())
        .isEqualTo(200);
    assertThat(call(claims().put("exp", now() + 600.5)).status()).isEqualTo(200);
    var noExp = call(claims());
    assertThat(noExp.status()).as("exp is required by default (QUEEN_JWT_REQUIRE_EXP)").isEqualTo(401);
    assertThat(noExp.json().getString("error")).isEqualTo("Token has no expiry");
    var expired = call(claims().put("exp", 1_700_000_000L));
    assertThat(expired.status()).isEqualTo(401);
    assertThat(expired.json().getString("error")).isEqualTo("Token has expired");
  }
}
