package io.queenvertx.http.routes;

import io.queenvertx.kernel.ApiError;
import io.vertx.core.buffer.Buffer;
import io.vertx.ext.web.RoutingContext;

/**
 * Typed message-plane query parameters (API.md §1.7): a value that does not parse is rejected with 400 before the
 * handler runs, in axum's plain-text style; booleans accept only {@code true}/{@code false}.
 */
final class TypedQuery {
  private final RoutingContext ctx;

  TypedQuery(RoutingContext ctx) {
    this.ctx = ctx;
  }

  String str(String name) {
    return ctx.request().getParam(name);
  }

  int i32(String name, int def) {
    String v = str(name);
    if (v == null) return def;
    try {
      return Integer.parseInt(v);
    } catch (NumberFormatException e) {
      throw reject(name, "invalid digit found in string");
    }
  }

  long u64(String name, long def) {
    String v = str(name);
    if (v == null) return def;
    try {
      long l = Long.parseLong(v);
      if (l < 0) throw reject(name, "invalid digit found in string");
      return l;
    } catch (NumberFormatException e) {
      throw reject(name, "invalid digit found in string");
    }
  }

  boolean bool(String name, boolean def) {
    String v = str(name);
    if (v == null) return def;
    return switch (v) {
      case "true" -> true;
      case "false" -> false;
      default -> throw reject(name, "provided string was not `true` or `false`");
    };
  }

  private static ApiError reject(String name, String why) {
    return ApiError.raw(400, Buffer.buffer("Failed to deserialize query string: " + name + ": " + why),
        "text/plain; charset=utf-8");
  }
}
