package io.queenvertx.db;

import io.vertx.core.Context;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;

/**
 * A result promise and the context that asked for it. The fusions ({@link AckFusion}, {@link PopFusion}) are shared by
 * the consumer verticles of every event loop and complete their calls wherever the database answers: each call's
 * result is handed back on the event loop that submitted it.
 */
record Handback<T>(Context context, Promise<T> promise) {
  static <T> Handback<T> here() {
    return new Handback<>(Vertx.currentContext(), Promise.promise());
  }

  void complete(T value) {
    if (context == null || context == Vertx.currentContext()) promise.complete(value);
    else context.runOnContext(x -> promise.complete(value));
  }

  void fail(Throwable e) {
    if (context == null || context == Vertx.currentContext()) promise.fail(e);
    else context.runOnContext(x -> promise.fail(e));
  }
}
