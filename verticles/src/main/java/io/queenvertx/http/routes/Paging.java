package io.queenvertx.http.routes;

import io.queenvertx.http.server.ErrorContract;
import io.queenvertx.kernel.ApiError;
import io.queenvertx.kernel.ProcedureResult;
import io.queenvertx.db.ReportProcedures.Listing;
import io.queenvertx.node.NodeContext;
import io.vertx.core.buffer.Buffer;
import io.vertx.ext.web.RoutingContext;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.regex.Pattern;

/**
 * Keyset paging of the listings that Queen answers whole and that grow without bound (issue 34): the consumer-group
 * listing, a queue's partitions, a message's trace timeline. {@code limit} sets the page size (a default when absent,
 * at most a maximum; larger values are clamped); {@code cursor} is the opaque token of the previous page. The token
 * of the next page travels in the {@value #NEXT_HEADER} response header, absent on the last page, so the body keeps
 * Queen's shape and a client that knows nothing of paging reads the first page as it read the whole list.
 *
 * <p>A cursor is the base64url form (no padding) of the listing's key of the last row served (a group or partition
 * name; for traces, the time and id of the last trace). It is not signed: a forged one only moves where a listing of
 * the caller's own tenant starts.
 */
final class Paging {
  static final String NEXT_HEADER = "X-Next-Cursor";

  private Paging() {}

  /** {@code limit}: absent means {@code def}, above {@code max} means {@code max}; not a whole number >= 1 is 400. */
  static int limit(RoutingContext ctx, int def, int max) {
    String v = ctx.request().getParam("limit");
    if (v == null || v.isBlank()) return def;
    long n;
    try {
      n = Long.parseLong(v.strip());
    } catch (NumberFormatException e) {
      n = 0;
    }
    if (n < 1) throw ApiError.of(400, "limit must be a whole number from 1 to " + max + ", got " + quoted(v));
    return (int) Math.min(n, max);
  }

  /** {@link #after(RoutingContext)} for a listing whose keys have the given form. */
  static String after(RoutingContext ctx, Pattern form) {
    String key = after(ctx);
    if (key != null && !form.matcher(key).matches()) throw notOurs(ctx.request().getParam("cursor"));
    return key;
  }

  /** The key the {@code cursor} parameter carries, or null without one; a cursor this server never made is 400. */
  static String after(RoutingContext ctx) {
    String v = ctx.request().getParam("cursor");
    if (v == null || v.isEmpty()) return null;
    try {
      String key = new String(Base64.getUrlDecoder().decode(v), StandardCharsets.UTF_8);
      if (!key.isEmpty() && key.indexOf('\0') < 0 && Base64.getUrlEncoder().withoutPadding().encodeToString(
          key.getBytes(StandardCharsets.UTF_8)).equals(v)) {
        return key;
      }
    } catch (IllegalArgumentException e) {
      // reported below
    }
    throw notOurs(v);
  }

  private static ApiError notOurs(String cursor) {
    return ApiError.of(400, "cursor is not one this listing gave out: " + quoted(cursor));
  }

  /** The cursor of a page that ends at {@code key}. */
  static String cursor(String key) {
    return Base64.getUrlEncoder().withoutPadding().encodeToString(key.getBytes(StandardCharsets.UTF_8));
  }

  /**
   * Runs a listing function that returns one row of (the body's JSON text, the key of the page's last row when more
   * rows follow, else null) and answers the body verbatim, its status derived by {@link ProcedureResult}, with the
   * next page's cursor in {@value #NEXT_HEADER}.
   */
  public static void passthrough(RoutingContext ctx, NodeContext node, String prefix, Listing listing, Object... args) {
    node.db().reports().page(listing, args)
        .onSuccess(page -> {
          String text = page.body();
          String next = page.nextKey();
          if (next != null) ctx.response().putHeader(NEXT_HEADER, cursor(next));
          ErrorContract.send(ctx, ProcedureResult.statusOf(text), Buffer.buffer(text == null ? "null" : text));
        })
        .onFailure(e -> ctx.fail(ApiError.prefixed(500, prefix, e)));
  }

  private static String quoted(String v) {
    String shown = v.length() > 80 ? v.substring(0, 80) + "..." : v;
    return io.vertx.core.json.Json.encode(shown);
  }
}
