package io.queenvertx.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.spi.metrics.EventBusMetrics;
import io.vertx.micrometer.Label;
import io.vertx.micrometer.MetricsDomain;
import io.vertx.micrometer.MetricsNaming;
import io.vertx.micrometer.impl.AbstractMetrics;
import io.vertx.micrometer.impl.meters.LongGauges;
import java.lang.reflect.Field;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * vertx-micrometer's event-bus metrics with the per-message meters looked up once per (address, side) instead of on
 * every message: vertx-micrometer 5 builds a tag list, resolves a counter and registers the "pending" gauge for each
 * message sent and received (every pop and ack is an event-bus request), a few percent of the broker's CPU on batch-1
 * rows. The series, help texts and values are the same: the same counters and the same pending adder (taken from
 * vertx-micrometer's own gauge table, which its handler metrics decrement), each created on first use as before.
 * Handler registration, delivery, discards, cluster byte counts and reply failures stay with vertx-micrometer.
 */
public final class EventBusMeters implements EventBusMetrics<Object> {
  private static final String INTERNAL = "__vertx.";
  private static final int PUBLISHED = 0;
  private static final int SENT = 2;
  private static final int RECEIVED = 4;
  private static final int DELIVERED = 6;
  private static final int PENDING = 8;

  private final EventBusMetrics<Object> own;
  private final MeterRegistry registry;
  private final MetricsNaming names;
  private final LongGauges gauges;
  private final boolean addressLabel;
  private final boolean sideLabel;
  /** Per address: the five meters of each side (local at even, remote at odd indexes), resolved on first use. */
  private final ConcurrentHashMap<String, AtomicReferenceArray<Object>> byAddress = new ConcurrentHashMap<>();

  private EventBusMeters(EventBusMetrics<Object> own, MeterRegistry registry, MetricsNaming names, LongGauges gauges,
      Set<Label> labels) {
    this.own = own;
    this.registry = registry;
    this.names = names;
    this.gauges = gauges;
    this.addressLabel = labels.contains(Label.EB_ADDRESS);
    this.sideLabel = labels.contains(Label.EB_SIDE);
  }

  /**
   * vertx-micrometer's event-bus metrics {@code own} (recording in {@code registry} with {@code naming}, the options'
   * naming, and {@code labels}) with the cached per-message meters; {@code own} itself when it is not vertx-micrometer's
   * (the domain is disabled: null) or its gauge table cannot be read (another vertx-micrometer version).
   */
  @SuppressWarnings("unchecked")
  public static EventBusMetrics<?> of(EventBusMetrics<?> own, MeterRegistry registry, MetricsNaming naming,
      Set<Label> labels) {
    if (!(own instanceof AbstractMetrics metrics)) return own;
    LongGauges gauges;
    try {
      Field f = AbstractMetrics.class.getDeclaredField("longGauges");
      f.setAccessible(true);
      gauges = (LongGauges) f.get(metrics);
    } catch (ReflectiveOperationException | RuntimeException e) {
      return own;
    }
    if (gauges == null) return own;
    var names = naming.withBaseName("vertx." + MetricsDomain.EVENT_BUS.toCategory() + ".");
    return new EventBusMeters((EventBusMetrics<Object>) own, registry, names, gauges, labels);
  }

  @Override
  public void messageSent(String address, boolean publish, boolean local, boolean remote) {
    if (address.startsWith(INTERNAL)) return;
    ((Counter) meter(address, (publish ? PUBLISHED : SENT) + (local ? 0 : 1))).increment();
  }

  @Override
  public void messageReceived(String address, boolean publish, boolean local, int handlers) {
    if (address.startsWith(INTERNAL)) return;
    int side = local ? 0 : 1;
    ((Counter) meter(address, RECEIVED + side)).increment();
    if (handlers > 0) {
      ((LongAdder) meter(address, PENDING + side)).add(handlers);
      ((Counter) meter(address, DELIVERED + side)).increment();
    }
  }

  private Object meter(String address, int slot) {
    var meters = byAddress.get(address);
    if (meters == null) meters = byAddress.computeIfAbsent(address, a -> new AtomicReferenceArray<>(10));
    Object m = meters.get(slot);
    if (m == null) {
      m = resolve(address, slot);
      meters.set(slot, m); // a race resolves the same registry meter twice
    }
    return m;
  }

  /** The meter vertx-micrometer's VertxEventBusMetrics resolves for this address, side and kind. */
  private Object resolve(String address, int slot) {
    Tags tags = Tags.empty();
    if (addressLabel) tags = tags.and(Label.EB_ADDRESS.toString(), address);
    if (sideLabel) tags = tags.and(Tag.of(Label.EB_SIDE.toString(), slot % 2 == 0 ? "local" : "remote"));
    return switch (slot - slot % 2) {
      case PUBLISHED -> counter(names.getEbPublished(), "Number of messages published (publish / subscribe)", tags);
      case SENT -> counter(names.getEbSent(), "Number of messages sent (point-to-point)", tags);
      case RECEIVED -> counter(names.getEbReceived(), "Number of messages received", tags);
      case DELIVERED -> counter(names.getEbDelivered(), "Number of messages delivered to handlers", tags);
      default -> gauges.builder(names.getEbPending(), LongAdder::doubleValue)
          .description("Number of messages not processed yet").tags(tags).register(registry);
    };
  }

  private Counter counter(String name, String help, Tags tags) {
    return Counter.builder(name).description(help).tags(tags).register(registry);
  }

  @Override
  public Object handlerRegistered(String address) {
    return own.handlerRegistered(address);
  }

  @Override
  public void handlerUnregistered(Object handler) {
    own.handlerUnregistered(handler);
  }

  @Override
  public void scheduleMessage(Object handler, boolean local) {
    own.scheduleMessage(handler, local);
  }

  @Override
  public void discardMessage(Object handler, boolean local, Message<?> msg) {
    own.discardMessage(handler, local, msg);
  }

  @Override
  public void messageDelivered(Object handler, boolean local) {
    own.messageDelivered(handler, local);
  }

  @Override
  public void messageWritten(String address, int numberOfBytes) {
    own.messageWritten(address, numberOfBytes);
  }

  @Override
  public void messageRead(String address, int numberOfBytes) {
    own.messageRead(address, numberOfBytes);
  }

  @Override
  public void replyFailure(String address, ReplyFailure failure) {
    own.replyFailure(address, failure);
  }

  @Override
  public void close() {
    own.close();
  }
}
