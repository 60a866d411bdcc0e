package io.queenvertx.http;

import io.queenvertx.bus.AckCommand;
import io.queenvertx.bus.Addresses;
import io.queenvertx.bus.LocalCodec;
import io.queenvertx.bus.PopCommand;
import io.queenvertx.consumer.ConsumerInbox;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonArray;

/** Requests from HTTP handlers to the verticles; a verticle's {@code fail(code, text)} becomes that status. */
final class Bus {
  /** Long enough for the longest long poll plus its final claim. */
  static final long TIMEOUT_MS = 15 * 60_000L;

  private Bus() {}

  static <T> Future<T> request(Vertx vertx, String address, Object body) {
    return vertx.eventBus().<T>request(address, body, LocalCodec.options(TIMEOUT_MS))
        .map(Message::body)
        .recover(Bus::failure);
  }

  /** A pop: straight to the consumer on this event loop when there is one ({@link ConsumerInbox}), else the bus. */
  static Future<Buffer> pop(Vertx vertx, PopCommand cmd) {
    Future<Buffer> direct = ConsumerInbox.pop(cmd);
    return direct == null ? request(vertx, Addresses.POP, cmd) : direct.recover(Bus::failure);
  }

  /** An ack: straight to the consumer on this event loop when there is one ({@link ConsumerInbox}), else the bus. */
  static Future<JsonArray> ack(Vertx vertx, AckCommand cmd) {
    Future<JsonArray> direct = ConsumerInbox.ack(cmd);
    return direct == null ? request(vertx, Addresses.ACK, cmd) : direct.recover(Bus::failure);
  }

  private static <T> Future<T> failure(Throwable e) {
    if (e instanceof ReplyException re && re.failureType() == ReplyFailure.RECIPIENT_FAILURE) {
      int code = re.failureCode() >= 400 && re.failureCode() < 600 ? re.failureCode() : 500;
      return Future.failedFuture(ApiError.of(code, ApiError.describe(re)));
    }
    return Future.failedFuture(ApiError.of(500, ApiError.describe(e)));
  }
}
