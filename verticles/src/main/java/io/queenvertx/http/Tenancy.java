package io.queenvertx.http;

import io.vertx.ext.web.RoutingContext;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * The tenant of a request (API.md §3): with {@code QUEEN_TENANCY_HEADER} off every request is the default tenant and
 * the header is never read; on, {@code x-queen-tenant} (trimmed) selects it, absent or empty means the default, and
 * anything but an 8-4-4-4-12 hex UUID is a 400.
 */
public final class Tenancy {
  public static final UUID DEFAULT_TENANT = UUID.fromString("00000000-0000-0000-0000-000000000001");
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
    String h = ctx.request().getHeader(HEADER);
    String v = h == null ? "" : h.strip();
    if (v.isEmpty()) {
      ctx.put(KEY, DEFAULT_TENANT);
    } else if (UUID_TEXT.matcher(v).matches()) {
      ctx.put(KEY, UUID.fromString(v.toLowerCase(java.util.Locale.ROOT)));
    } else {
      ctx.fail(ApiError.of(400, "invalid x-queen-tenant header (must be a UUID)"));
      return;
    }
    ctx.next();
  }

  public static UUID of(RoutingContext ctx) {
    UUID t = ctx.get(KEY);
    return t == null ? DEFAULT_TENANT : t;
  }
}
