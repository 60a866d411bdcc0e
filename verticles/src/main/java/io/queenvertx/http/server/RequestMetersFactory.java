package io.queenvertx.http.server;

import io.micrometer.core.instrument.MeterRegistry;
import io.queenvertx.metrics.EventBusMeters;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.datagram.DatagramSocketOptions;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.core.metrics.MetricsOptions;
import io.vertx.core.net.NetClientOptions;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.net.SocketAddress;
import io.vertx.core.spi.VertxMetricsFactory;
import io.vertx.core.spi.metrics.ClientMetrics;
import io.vertx.core.spi.metrics.DatagramSocketMetrics;
import io.vertx.core.spi.metrics.EventBusMetrics;
import io.vertx.core.spi.metrics.HttpClientMetrics;
import io.vertx.core.spi.metrics.HttpServerMetrics;
import io.vertx.core.spi.metrics.PoolMetrics;
import io.vertx.core.spi.metrics.TCPMetrics;
import io.vertx.core.spi.metrics.VertxMetrics;
import io.vertx.micrometer.Label;
import io.vertx.micrometer.MetricsDomain;
import io.vertx.micrometer.MicrometerMetricsFactory;
import io.vertx.micrometer.MicrometerMetricsOptions;
import io.vertx.micrometer.impl.MicrometerMetrics;
import java.util.EnumSet;
import java.util.Set;

/**
 * vertx-micrometer's metrics, except that HTTP server requests are counted by {@link RequestMeters} (meters resolved
 * once, not per request) whenever that gives the same series: labels {@code method} and {@code code} on, no path,
 * route, local or remote label, no custom request tags; the event bus's per-message meters likewise by
 * {@link EventBusMeters}. Every other metric is vertx-micrometer's own.
 */
public final class RequestMetersFactory implements VertxMetricsFactory {
  private static final Set<Label> PER_REQUEST_LABELS = EnumSet.of(Label.HTTP_PATH, Label.HTTP_ROUTE, Label.LOCAL,
      Label.REMOTE);

  private final MicrometerMetricsFactory micrometer;

  /** Vert.x metrics in {@code registry}, the node's Prometheus registry. */
  public RequestMetersFactory(MeterRegistry registry) {
    this.micrometer = new MicrometerMetricsFactory(registry);
  }

  @Override
  public MetricsOptions newOptions() {
    return micrometer.newOptions();
  }

  @Override
  public MetricsOptions newOptions(MetricsOptions options) {
    return micrometer.newOptions(options);
  }

  @Override
  public MetricsOptions newOptions(JsonObject json) {
    return micrometer.newOptions(json);
  }

  @Override
  public VertxMetrics metrics(VertxOptions options) {
    VertxMetrics vertx = micrometer.metrics(options);
    MetricsOptions given = options.getMetricsOptions();
    MicrometerMetricsOptions o = given instanceof MicrometerMetricsOptions m ? m
        : (MicrometerMetricsOptions) micrometer.newOptions(given);
    Set<Label> labels = o.getLabels();
    boolean same = labels.contains(Label.HTTP_METHOD) && labels.contains(Label.HTTP_CODE)
        && labels.stream().noneMatch(PER_REQUEST_LABELS::contains) && o.getServerRequestTagsProvider() == null;
    // the registry vertx-micrometer records in (its backend of that registry name, which may predate ours)
    if (!same || !(vertx instanceof MicrometerMetrics used)) return vertx;
    var meters = new RequestMeters.Meters(used.registry(),
        o.getMetricsNaming().withBaseName("vertx." + MetricsDomain.HTTP_SERVER.toCategory() + "."));
    return new Delegating(vertx, meters, used.registry(), o);
  }

  /** vertx-micrometer's {@link VertxMetrics} with the HTTP server's request half replaced. */
  private static final class Delegating implements VertxMetrics {
    private final VertxMetrics d;
    private final RequestMeters.Meters meters;
    private final MeterRegistry registry;
    private final MicrometerMetricsOptions options;

    Delegating(VertxMetrics d, RequestMeters.Meters meters, MeterRegistry registry, MicrometerMetricsOptions options) {
      this.d = d;
      this.meters = meters;
      this.registry = registry;
      this.options = options;
    }

    @Override
    @SuppressWarnings("unchecked")
    public HttpServerMetrics<?, ?, ?> createHttpServerMetrics(HttpServerOptions options, SocketAddress local) {
      var own = (HttpServerMetrics<Object, Object, Object>) d.createHttpServerMetrics(options, local);
      return own == null ? null : new RequestMeters(own, meters); // null: the HTTP server category is disabled
    }

    @Override
    public EventBusMetrics<?> createEventBusMetrics() {
      // null when the event-bus category is disabled
      return EventBusMeters.of(d.createEventBusMetrics(), registry, options.getMetricsNaming(), options.getLabels());
    }

    @Override
    public ClientMetrics<?, ?, ?> createClientMetrics(SocketAddress remote, String type, String namespace) {
      return d.createClientMetrics(remote, type, namespace);
    }

    @Override
    public HttpClientMetrics<?, ?, ?> createHttpClientMetrics(HttpClientOptions options) {
      return d.createHttpClientMetrics(options);
    }

    @Override
    public TCPMetrics<?> createNetServerMetrics(NetServerOptions options, SocketAddress local) {
      return d.createNetServerMetrics(options, local);
    }

    @Override
    public TCPMetrics<?> createNetClientMetrics(NetClientOptions options) {
      return d.createNetClientMetrics(options);
    }

    @Override
    public DatagramSocketMetrics createDatagramSocketMetrics(DatagramSocketOptions options) {
      return d.createDatagramSocketMetrics(options);
    }

    @Override
    public PoolMetrics<?, ?> createPoolMetrics(String type, String name, int maxSize) {
      return d.createPoolMetrics(type, name, maxSize);
    }

    @Override
    public void vertxCreated(Vertx vertx) {
      d.vertxCreated(vertx);
    }

    @Override
    public boolean isMetricsEnabled() {
      return d.isMetricsEnabled();
    }

    @Override
    public void close() {
      d.close();
    }
  }
}
