package io.queenvertx.http.server;

import io.queenvertx.codec.UuidV7;
import io.vertx.ext.web.RoutingContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A request id on every response ({@code X-Request-Id}, echoing a client's own when it sends a sane one), written in
 * the access log line and in every error log line, so an operator can find a failed call. Every request that ends
 * with a status of 400 or more is logged; with {@code QUEEN_ACCESS_LOG=true} every request is.
 */
public final class RequestIds {
  public static final String HEADER = "X-Request-Id";
  /** {@link #HEADER} pre-encoded for the response (set on every one). */
  private static final CharSequence HEADER_NAME = io.vertx.core.http.HttpHeaders.createOptimized(HEADER);
  public static final String KEY = "queen.requestId";
  private static final Logger access = LoggerFactory.getLogger("queen.access");

  private RequestIds() {}

  public static void handle(RoutingContext ctx, boolean logAll) {
    String id = ctx.request().getHeader(HEADER);
    if (id == null || id.isBlank() || id.length() > 128 || !printable(id)) id = "req_" + UuidV7.next();
    ctx.put(KEY, id);
    ctx.response().putHeader(HEADER_NAME, id);
    long start = System.nanoTime();
    String rid = id;
    ctx.addEndHandler(v -> {
      int status = ctx.response().getStatusCode();
      if (!logAll && status < 400) return;
      long ms = (System.nanoTime() - start) / 1_000_000;
      String path = loggable(ctx.request().path());
      if (status >= 500) {
        access.warn("{} {} {} {}ms request_id={}", ctx.request().method(), path, status, ms, rid);
      } else {
        access.info("{} {} {} {}ms request_id={}", ctx.request().method(), path, status, ms, rid);
      }
    });
    ctx.next();
  }

  /** The request id of the exchange (the client's {@code X-Request-Id} or a generated one); "-" before it is set. */
  public static String of(RoutingContext ctx) {
    String id = ctx.get(KEY);
    return id == null ? "-" : id;
  }

  /** A request path fit for a log line: control characters shown as '?', at most 512 characters. */
  public static String loggable(String path) {
    if (path == null) return "-";
    String p = path.length() > 512 ? path.substring(0, 512) + "..." : path;
    StringBuilder out = null;
    for (int i = 0; i < p.length(); i++) {
      char c = p.charAt(i);
      if (c < 0x20 || c == 0x7f) {
        if (out == null) out = new StringBuilder(p.substring(0, i));
        out.append('?');
      } else if (out != null) {
        out.append(c);
      }
    }
    return out == null ? p : out.toString();
  }

  private static boolean printable(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < 0x21 || c > 0x7e) return false;
    }
    return true;
  }
}
