package io.queenvertx.webhook.api;

import io.queenvertx.db.WebhookStore.EndpointSettings;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.URISyntaxException;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Locale;

/**
 * The body of {@code POST /v1/endpoints} and {@code PATCH /v1/endpoints/:id}, validated into an endpoint's settings;
 * every refusal is a 400 naming the field.
 */
final class EndpointBody {
  static final String BAD_URL = "endpoint must be a valid HTTP(S) URL";
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final int MAX_URL_LENGTH = 2048;
  private static final int MAX_SECRET_LENGTH = 1024;

  private EndpointBody() {}

  /**
   * Validates a create body ({@code current} null) or a partial update over {@code current}. An explicit null is an
   * absent key, except {@code partition}: null there means every partition.
   */
  static EndpointSettings settings(JsonObject b, EndpointSettings current) {
    boolean create = current == null;
    String queue = create ? null : current.queue();
    if (b.getValue("queue") != null || create) {
      if (!(b.getValue("queue") instanceof String s) || s.isBlank()) {
        throw WebhookError.invalid(create && b.getValue("queue") == null ? "queue is required"
            : "queue must be a non-empty string");
      }
      queue = s.strip();
    }
    String partition = create ? null : current.partition();
    if (b.containsKey("partition")) {
      Object p = b.getValue("partition");
      if (p == null) {
        partition = null;
      } else if (!(p instanceof String s) || s.isBlank()) {
        throw WebhookError.invalid("partition must be a non-empty string or null");
      } else {
        partition = s.strip();
      }
    }
    String url = create ? null : current.url();
    if (b.getValue("url") != null || create) {
      if (b.getValue("url") == null) throw WebhookError.invalid("url is required");
      url = httpUrl(b.getValue("url"));
    }
    String secret = create ? null : current.secret();
    if (b.getValue("secret") != null) {
      if (!(b.getValue("secret") instanceof String s) || s.isEmpty() || s.length() > MAX_SECRET_LENGTH) {
        throw WebhookError.invalid("secret must be a non-empty string of at most " + MAX_SECRET_LENGTH
            + " characters");
      }
      secret = s;
    }
    if (secret == null) secret = newSecret();
    int timeout = integer(b, "timeout_ms", create ? 10_000 : current.timeoutMs(), 1, 120_000);
    int attempts = integer(b, "max_attempts", create ? 5 : current.maxAttempts(), 1, 50);
    int initial = integer(b, "backoff_initial_ms", create ? 1_000 : current.backoffInitialMs(), 1, 3_600_000);
    int max = integer(b, "backoff_max_ms", create ? 60_000 : current.backoffMaxMs(), 1, 86_400_000);
    if (max < initial) {
      throw WebhookError.invalid("backoff_max_ms must be greater than or equal to backoff_initial_ms");
    }
    int concurrency = integer(b, "max_concurrency", create ? 4 : current.maxConcurrency(), 1, 64);
    boolean enabled = create || current.enabled();
    if (b.getValue("enabled") != null) {
      if (!(b.getValue("enabled") instanceof Boolean e)) throw WebhookError.invalid("enabled must be a boolean");
      enabled = e;
    }
    return new EndpointSettings(queue, partition, url, secret, timeout, attempts, initial, max, concurrency, enabled);
  }

  /** An absolute http or https URL with a host; nothing else is ever dialled. */
  static String httpUrl(Object v) {
    if (!(v instanceof String s) || s.isBlank() || s.length() > MAX_URL_LENGTH) throw WebhookError.invalid(BAD_URL);
    String text = s.strip();
    URI u;
    try {
      u = new URI(text);
    } catch (URISyntaxException e) {
      throw WebhookError.invalid(BAD_URL);
    }
    String scheme = u.getScheme() == null ? "" : u.getScheme().toLowerCase(Locale.ROOT);
    if (!u.isAbsolute() || u.isOpaque() || !(scheme.equals("http") || scheme.equals("https"))
        || u.getHost() == null || u.getHost().isEmpty() || u.getRawUserInfo() != null) {
      throw WebhookError.invalid(BAD_URL);
    }
    return text;
  }

  private static int integer(JsonObject b, String key, int def, int min, int max) {
    Object v = b.getValue(key);
    if (v == null) return def;
    String err = key + " must be an integer between " + min + " and " + max;
    if (!(v instanceof Number n) || n instanceof Double && n.doubleValue() != Math.rint(n.doubleValue())
        || n instanceof Float || n instanceof java.math.BigDecimal) {
      throw WebhookError.invalid(err);
    }
    double d = n.doubleValue();
    if (d < min || d > max) throw WebhookError.invalid(err);
    return n.intValue();
  }

  /** A signing secret for an endpoint created without one: 32 random bytes in hex. */
  static String newSecret() {
    byte[] b = new byte[32];
    RANDOM.nextBytes(b);
    return HexFormat.of().formatHex(b);
  }
}
