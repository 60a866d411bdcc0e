package io.queenvertx.webhook.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Base64;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The listing's opaque cursor and the API-key check: pure logic, no server. */
class WebhookCursorAndKeyTest {
  @Test
  void aCursorRoundTripsToTheMicrosecondAndTheId() {
    UUID id = UUID.randomUUID();
    OffsetDateTime at = OffsetDateTime.of(2026, 12, 4, 21, 30, 5, 123_456_000, ZoneOffset.ofHours(2));
    DlqCursor c = DlqCursor.decode(DlqCursor.of(at, id).encode());
    assertThat(c.id()).isEqualTo(id);
    assertThat(c.failedAt().toInstant()).isEqualTo(at.toInstant());
    // before the epoch too
    OffsetDateTime old = OffsetDateTime.of(1969, 7, 20, 20, 17, 40, 999_999_000, ZoneOffset.UTC);
    assertThat(DlqCursor.decode(DlqCursor.of(old, id).encode()).failedAt().toInstant()).isEqualTo(old.toInstant());
    assertThat(DlqCursor.of(at, id).encode()).matches("[A-Za-z0-9_-]+");
  }

  @Test
  void anythingTheApiDidNotEncodeIsA400NamingTheCursor() {
    String id = UUID.randomUUID().toString();
    for (String text : new String[] {"!!!", "abc", b64("v1:x:" + id), b64("v2:1:" + id), b64("v1:1:" + id + ":x"),
        b64("v1:1:not-a-uuid-but-thirty-six-chars-long"), b64("v1:99999999999999999999:" + id),
        b64("v1:253402300800000000:" + id), ""}) {
      assertThatThrownBy(() -> DlqCursor.decode(text)).as(text)
          .isInstanceOfSatisfying(WebhookError.class, e -> {
            assertThat(e.status).isEqualTo(400);
            assertThat(e.code).isEqualTo("INVALID_REQUEST");
            assertThat(e.getMessage()).isEqualTo("cursor is malformed");
          });
    }
  }

  @Test
  void anApiKeyNamesItsTenantAndOnlyAnExactBearerKeyCounts() {
    UUID a = UUID.randomUUID();
    UUID b = UUID.randomUUID();
    Map<String, UUID> keys = Map.of("k-a", a, "k-b", b);
    assertThat(WebhookApi.tenantOf("Bearer k-a", keys)).isEqualTo(a);
    assertThat(WebhookApi.tenantOf("bearer  k-b ", keys)).isEqualTo(b);
    for (String h : new String[] {null, "", "k-a", "Bearer", "Bearer ", "Basic k-a", "Bearer K-A", "Bearer k-a2",
        "Bearer k-"}) {
      assertThat(WebhookApi.tenantOf(h, keys)).as("%s", h).isNull();
    }
  }

  private static String b64(String s) {
    return Base64.getUrlEncoder().withoutPadding().encodeToString(s.getBytes(StandardCharsets.US_ASCII));
  }
}
