package io.queenvertx.http.routes;

import io.vertx.ext.web.RoutingContext;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;

/**
 * The key a wildcard route ({@code /api/v1/kv/:namespace/*}, {@code /api/v1/timers/:queue/*}) names: the rest of the
 * path after the route's prefix and its one parameter segment, percent-decoded once, so {@code order/9f1/items} and
 * {@code order%2F9f1%2Fitems} name the same key. The path read is the one the router matched and the access check
 * judged: {@code PathGuard} refuses every request whose path differs from its normalised form (dot segments,
 * {@code //}, escaped unreserved characters, malformed or non-UTF-8 escapes), so the raw path here is that path.
 */
final class PathTail {
  private PathTail() {}

  /** The decoded rest after {@code prefix} (ending in {@code /}) and the next segment; null when it does not decode. */
  static String after(RoutingContext ctx, String prefix) {
    String raw = ctx.request().path();
    int start = raw.indexOf('/', prefix.length());
    String rest = start < 0 ? "" : raw.substring(start + 1);
    try {
      // a '+' in a path is a plus, not a space (URLDecoder decodes form encoding)
      return URLDecoder.decode(rest.replace("+", "%2B"), StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      return null;
    }
  }
}
