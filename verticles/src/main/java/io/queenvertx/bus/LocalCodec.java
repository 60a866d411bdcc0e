package io.queenvertx.bus;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.MessageCodec;

/**
 * Passes immutable Java objects between the verticles of one node by reference. Internal requests never leave the
 * node ({@code localConsumer}), so nothing is ever written to the wire; a JsonObject would be deep-copied on every
 * hop instead.
 */
public final class LocalCodec implements MessageCodec<Object, Object> {
  public static final String NAME = "queen-local";
  public static final DeliveryOptions OPTIONS = new DeliveryOptions().setCodecName(NAME).setLocalOnly(true);

  @Override
  public void encodeToWire(Buffer buffer, Object o) {
    throw new IllegalStateException("local-only message sent to the wire: " + o.getClass());
  }

  @Override
  public Object decodeFromWire(int pos, Buffer buffer) {
    throw new IllegalStateException("local-only message read from the wire");
  }

  @Override
  public Object transform(Object o) {
    return o;
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public byte systemCodecID() {
    return -1;
  }

  public static DeliveryOptions options(long timeoutMs) {
    return new DeliveryOptions(OPTIONS).setSendTimeout(timeoutMs);
  }
}
