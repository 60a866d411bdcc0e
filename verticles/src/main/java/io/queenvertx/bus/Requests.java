package io.queenvertx.bus;

import io.queenvertx.kernel.ApiError;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;

/** Requests to the verticles over the event bus; a verticle's {@code fail(code, text)} becomes that status. */
public final class Requests {
  /** Long enough for the longest long poll plus its final claim. */
  public static final long TIMEOUT_MS = 15 * 60_000L;

  private Requests() {}

  public static <T> Future<T> request(Vertx vertx, String address, Object body) {
    return vertx.eventBus().<T>request(address, body, LocalCodec.options(TIMEOUT_MS))
        .map(Message::body)
        .recover(Requests::failure);
  }

  /** A failed request as an {@link ApiError}: the recipient's code when it failed the request, else 500. */
  public static <T> Future<T> failure(Throwable e) {
    if (e instanceof ReplyException re && re.failureType() == ReplyFailure.RECIPIENT_FAILURE) {
      int code = re.failureCode() >= 400 && re.failureCode() < 600 ? re.failureCode() : 500;
      return Future.failedFuture(ApiError.of(code, ApiError.describe(re)));
    }
    return Future.failedFuture(ApiError.of(500, ApiError.describe(e)));
  }
}
