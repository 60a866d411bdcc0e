package io.queenvertx.http.server;

import io.queenvertx.kernel.Defaults;
import io.queenvertx.kernel.ApiError;
import io.vertx.ext.web.RoutingContext;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * The tenant of a request (API.md §3): with {@code QUEEN_TENANCY_HEADER} off every request is the default tenant and
 * the header is never read; on, {@code x-queen-tenant} (trimmed) selects it, absent or empty means the default, and
 * anything but an 8-4-4-4-12 hex UUID is a 400.
 */
public final class Tenancy {
  public static final UUID DEFAULT_TENANT = Defaults.DEFAULT_TENANT;
  public static final String HEADER = "x-queen-tenant";
  private static final String KEY = "queen.tenant";
  private static final Pattern UUID_TEXT =
      Pattern.compile("[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}");

  private Tenancy() {}

  /** The router handler that resolves the tenant before any route runs. */
  public static void resolve(RoutingContext ctx, boolean enabled) {
    if (!enabled) {
      ctx.put(KEY, DEFAULT_TENANT);
      ctx.next();
      return;
    }
    try {
      ctx.put(KEY, parse(ctx.request().getHeader(HEADER), true));
    } catch (ApiError e) {
      ctx.fail(e);
      return;
    }
    ctx.next();
  }

  /** The tenant named by a header value; throws the contract's 400 for a malformed one. */
  public static UUID parse(String header, boolean enabled) {
    if (!enabled) return DEFAULT_TENANT;
    String v = header == null ? "" : header.strip();
    if (v.isEmpty()) return DEFAULT_TENANT;
    if (UUID_TEXT.matcher(v).matches()) return UUID.fromString(v.toLowerCase(java.util.Locale.ROOT));
    throw ApiError.of(400, "invalid x-queen-tenant header (must be a UUID)");
  }

  public static UUID of(RoutingContext ctx) {
    UUID t = ctx.get(KEY);
    return t == null ? DEFAULT_TENANT : t;
  }
}
