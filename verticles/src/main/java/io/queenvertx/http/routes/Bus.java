package io.queenvertx.http.routes;

import io.queenvertx.bus.AckCommand;
import io.queenvertx.bus.Addresses;
import io.queenvertx.bus.PopCommand;
import io.queenvertx.bus.Requests;
import io.queenvertx.consumer.ConsumerInbox;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;

/** Requests from HTTP handlers to the verticles ({@link Requests}), pops and acks straight when they can be. */
final class Bus {
  private Bus() {}

  static <T> Future<T> request(Vertx vertx, String address, Object body) {
    return Requests.request(vertx, address, body);
  }

  /** A pop: straight to the consumer on this event loop when there is one ({@link ConsumerInbox}), else the bus. */
  static Future<Buffer> pop(Vertx vertx, PopCommand cmd) {
    Future<Buffer> direct = ConsumerInbox.pop(cmd);
    return direct == null ? request(vertx, Addresses.POP, cmd) : direct.recover(Requests::failure);
  }

  /** An ack: straight to the consumer on this event loop when there is one ({@link ConsumerInbox}), else the bus. */
  static Future<JsonArray> ack(Vertx vertx, AckCommand cmd) {
    Future<JsonArray> direct = ConsumerInbox.ack(cmd);
    return direct == null ? request(vertx, Addresses.ACK, cmd) : direct.recover(Requests::failure);
  }
}
