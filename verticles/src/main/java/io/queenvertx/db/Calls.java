package io.queenvertx.db;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The calls in flight on one server's pool, so that they can be given up on together when the server is lost. A
 * frozen or unreachable server keeps its sockets open and never answers, and closing the pool does not help: its close
 * waits behind the query in flight. Given up, each call fails at once (on its caller's context) with an error that
 * reads as "cut" ({@link Failures#cut}), while its statement is left to end with the socket.
 */
final class Calls {
  private record Entry(Context caller, Promise<?> promise) {}

  private final Set<Entry> live = ConcurrentHashMap.newKeySet();
  private volatile String abandoned;

  /** {@code call}'s outcome, unless the calls are given up on first. */
  <T> Future<T> track(Future<T> call) {
    Promise<T> p = Promise.promise();
    Entry e = new Entry(Vertx.currentContext(), p);
    live.add(e);
    String why = abandoned;
    if (why != null) {
      live.remove(e);
      return Future.failedFuture(lost(why));
    }
    call.onComplete(ar -> {
      live.remove(e);
      if (ar.succeeded()) p.tryComplete(ar.result());
      else p.tryFail(ar.cause());
    });
    return p.future();
  }

  /** Fails every call in flight, and every later one, with {@code reason}. */
  void abandon(String reason) {
    abandoned = reason;
    for (Entry e : live) {
      live.remove(e);
      if (e.caller() == null) e.promise().tryFail(lost(reason));
      else e.caller().runOnContext(v -> e.promise().tryFail(lost(reason)));
    }
  }

  int size() {
    return live.size();
  }

  private static VertxException lost(String reason) {
    return new VertxException("call given up: " + reason, true);
  }
}
