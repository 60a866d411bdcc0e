package io.queenvertx.codec.api;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.MessageCodec;
import io.vertx.core.json.JsonObject;
import java.util.function.Function;

/**
 * Wire codec of the event-bus API types: a length-prefixed JSON object. The same codecs are registered by the
 * brokers and by client services ({@link #registerAll}), so both ends agree on the bytes.
 */
public final class JsonRecordCodec<T> implements MessageCodec<T, T> {
  private final String name;
  private final Function<T, JsonObject> toJson;
  private final Function<JsonObject, T> fromJson;

  JsonRecordCodec(String name, Function<T, JsonObject> toJson, Function<JsonObject, T> fromJson) {
    this.name = name;
    this.toJson = toJson;
    this.fromJson = fromJson;
  }

  /** Registers the default codecs of {@link PushRequest}, {@link PopRequest}, {@link AckRequest}, {@link ApiReply}. */
  public static void registerAll(EventBus bus) {
    bus.registerDefaultCodec(PushRequest.class,
        new JsonRecordCodec<>("queen-api-push", PushRequest::toJson, PushRequest::fromJson));
    bus.registerDefaultCodec(PopRequest.class,
        new JsonRecordCodec<>("queen-api-pop", PopRequest::toJson, PopRequest::fromJson));
    bus.registerDefaultCodec(AckRequest.class,
        new JsonRecordCodec<>("queen-api-ack", AckRequest::toJson, AckRequest::fromJson));
    bus.registerDefaultCodec(ApiReply.class,
        new JsonRecordCodec<>("queen-api-reply", ApiReply::toJson, ApiReply::fromJson));
  }

  @Override
  public void encodeToWire(Buffer buffer, T t) {
    Buffer json = toJson.apply(t).toBuffer();
    buffer.appendInt(json.length()).appendBuffer(json);
  }

  @Override
  public T decodeFromWire(int pos, Buffer buffer) {
    int len = buffer.getInt(pos);
    return fromJson.apply(new JsonObject(buffer.getBuffer(pos + 4, pos + 4 + len)));
  }

  @Override
  public T transform(T t) {
    return t;
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public byte systemCodecID() {
    return -1;
  }
}
