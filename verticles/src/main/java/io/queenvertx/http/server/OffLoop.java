package io.queenvertx.http.server;

import io.vertx.core.Future;
import io.vertx.ext.web.RoutingContext;
import java.util.concurrent.Callable;

/**
 * A route's parsing of its body, off the event loop when the body is large: decoding a 16 MiB key-value call takes
 * some 80 ms, a 56 MiB timer call (base64 and a JSON check of every payload) some 570 ms, and an event loop serves
 * every other connection of its share meanwhile. Up to {@link #INLINE_MAX_BYTES} the work runs at once on the loop,
 * where it costs less than the hop to a worker. Either way the future completes on the request's context.
 */
public final class OffLoop {
  /** Body bytes up to which parsing runs on the event loop (the bound the log writer uses for its CPU work). */
  public static final int INLINE_MAX_BYTES = 64 * 1024;

  private OffLoop() {}

  /** {@code work} (which may throw: a failed future) for the request's body, here or on a worker by its size. */
  public static <T> Future<T> parse(RoutingContext ctx, Callable<T> work) {
    var body = ctx.body().buffer();
    if (body == null || body.length() <= INLINE_MAX_BYTES) {
      try {
        return Future.succeededFuture(work.call());
      } catch (Exception e) {
        return Future.failedFuture(e);
      }
    }
    return ctx.vertx().executeBlocking(work, false);
  }
}
