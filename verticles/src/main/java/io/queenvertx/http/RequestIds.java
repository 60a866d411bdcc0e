package io.queenvertx.http;

import io.queenvertx.codec.UuidV7;
import io.vertx.ext.web.RoutingContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A request id on every response ({@code X-Request-Id}, echoing a client's own when it sends a sane one), written in
 * the access log line and in every error log line, so an operator can find a failed call. Every request that ends
 * with a status of 400 or more is logged; with {@code QUEEN_ACCESS_LOG=true} every request is.
 */
final class RequestIds {
  static final String HEADER = "X-Request-Id";
  static final String KEY = "queen.requestId";
  private static final Logger access = LoggerFactory.getLogger("queen.access");

  private RequestIds() {}

  static void handle(RoutingContext ctx, boolean logAll) {
    String id = ctx.request().getHeader(HEADER);
    if (id == null || id.isBlank() || id.length() > 128 || !printable(id)) id = "req_" + UuidV7.next();
    ctx.put(KEY, id);
    ctx.response().putHeader(HEADER, id);
    long start = System.nanoTime();
    String rid = id;
    ctx.addEndHandler(v -> {
      int status = ctx.response().getStatusCode();
      if (!logAll && status < 400) return;
      long ms = (System.nanoTime() - start) / 1_000_000;
      if (status >= 500) {
        access.warn("{} {} {} {}ms request_id={}", ctx.request().method(), ctx.request().path(), status, ms, rid);
      } else {
        access.info("{} {} {} {}ms request_id={}", ctx.request().method(), ctx.request().path(), status, ms, rid);
      }
    });
    ctx.next();
  }

  static String of(RoutingContext ctx) {
    String id = ctx.get(KEY);
    return id == null ? "-" : id;
  }

  private static boolean printable(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < 0x21 || c > 0x7e) return false;
    }
    return true;
  }
}
