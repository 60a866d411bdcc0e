package io.queenvertx.http.server;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.ServerWebSocket;
import io.vertx.core.net.SocketAddress;
import io.vertx.core.spi.metrics.HttpServerMetrics;
import io.vertx.core.spi.observability.HttpRequest;
import io.vertx.core.spi.observability.HttpResponse;
import io.vertx.micrometer.MetricsNaming;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * The per-request part of vertx-micrometer's HTTP server metrics, with the same series, help texts and values, but
 * with each meter looked up once per (method, status) instead of on every request: vertx-micrometer 5 resolves four
 * meters and registers the active-request gauge per request (tag lists merged and sorted, ids hashed, registry maps
 * probed), several percent of the broker's CPU on a batch-1 push. Connection-level metrics (open connections, bytes
 * read and written, errors, websockets) stay with vertx-micrometer's own instance, {@code connections}.
 *
 * <p>Valid only for the label set {method, code}: {@link RequestMetersFactory} installs it only when no path, route,
 * local or remote label and no custom request tags are configured, so the series are exactly the ones vertx-micrometer
 * would have produced (their values too: the same counter, timer, summaries and gauge, recorded at the same points).
 */
public final class RequestMeters implements HttpServerMetrics<RequestMeters.Exchange, Object, Object> {
  private final HttpServerMetrics<Object, Object, Object> connections;
  private final Meters meters;

  public RequestMeters(HttpServerMetrics<Object, Object, Object> connections, Meters meters) {
    this.connections = connections;
    this.meters = meters;
  }

  /** One request in flight; like vertx-micrometer's own, it leaves the active count when both its ends are done. */
  public static final class Exchange {
    final PerMethod meters;
    final long startNanos = System.nanoTime();
    boolean requestEnded;
    boolean responseEnded;
    boolean reset;

    Exchange(PerMethod meters) {
      this.meters = meters;
      meters.active.increment();
    }
  }

  @Override
  public Exchange requestBegin(Object socket, HttpRequest request) {
    return new Exchange(meters.of(request.method()));
  }

  @Override
  public void requestEnd(Exchange ex, HttpRequest request, long bytesRead) {
    ex.meters.requestBytes().record(bytesRead);
    ex.requestEnded = true;
    if (!ex.reset && ex.responseEnded) ex.meters.active.decrement();
  }

  @Override
  public void requestReset(Exchange ex) {
    ex.meters.resets().increment();
    ex.meters.active.decrement();
    ex.reset = true;
  }

  @Override
  public Exchange responsePushed(Object socket, HttpMethod method, String uri, HttpResponse response) {
    return new Exchange(meters.of(method));
  }

  @Override
  public void responseEnd(Exchange ex, HttpResponse response, long bytesWritten) {
    PerStatus s = ex.meters.of(response.statusCode());
    s.requests.increment();
    s.time.record(System.nanoTime() - ex.startNanos, TimeUnit.NANOSECONDS);
    s.responseBytes.record(bytesWritten);
    ex.responseEnded = true;
    if (!ex.reset && ex.requestEnded) ex.meters.active.decrement();
  }

  @Override
  public Object connected(Object socket, Exchange request, ServerWebSocket webSocket) {
    return connections.connected(socket, null, webSocket); // counted per connection, not per request
  }

  @Override
  public void disconnected(Object webSocket) {
    connections.disconnected(webSocket);
  }

  @Override
  public Object connected(SocketAddress remote, String remoteName) {
    return connections.connected(remote, remoteName);
  }

  @Override
  public void disconnected(Object socket, SocketAddress remote) {
    connections.disconnected(socket, remote);
  }

  @Override
  public void bytesRead(Object socket, SocketAddress remote, long n) {
    connections.bytesRead(socket, remote, n);
  }

  @Override
  public void bytesWritten(Object socket, SocketAddress remote, long n) {
    connections.bytesWritten(socket, remote, n);
  }

  @Override
  public void exceptionOccurred(Object socket, SocketAddress remote, Throwable t) {
    connections.exceptionOccurred(socket, remote, t);
  }

  @Override
  public void close() {
    connections.close();
  }

  /**
   * The request meters of one node (one registry), shared by its HTTP servers: vertx-micrometer keeps one active-request
   * counter per series and registry, and so does this.
   */
  public static final class Meters {
    private final MeterRegistry registry;
    private final MetricsNaming names;
    private final ConcurrentHashMap<HttpMethod, PerMethod> byMethod = new ConcurrentHashMap<>();

    /** {@code names} already carries the HTTP server base name ({@code vertx.http.server.}). */
    Meters(MeterRegistry registry, MetricsNaming names) {
      this.registry = registry;
      this.names = names;
    }

    PerMethod of(HttpMethod method) {
      PerMethod m = byMethod.get(method);
      return m != null ? m : byMethod.computeIfAbsent(method, k -> new PerMethod(this, k.toString()));
    }
  }

  /**
   * The series of one method; help texts are vertx-micrometer's, so the scrape reads the same either way, and each
   * series appears when vertx-micrometer would register it (request bytes at the first request end, resets at the first
   * reset).
   */
  public static final class PerMethod {
    private static final int FIRST = 100;
    private final Meters meters;
    private final String method;
    final LongAdder active = new LongAdder();
    private volatile DistributionSummary requestBytes;
    private volatile Counter resets;
    /** Status 100..599, filled on first use; any other status is looked up in the registry each time. */
    private final AtomicReferenceArray<PerStatus> byStatus = new AtomicReferenceArray<>(500);

    PerMethod(Meters meters, String method) {
      this.meters = meters;
      this.method = method;
      MeterRegistry r = meters.registry;
      Gauge.builder(meters.names.getHttpActiveRequests(), active, LongAdder::doubleValue)
          .description("Number of requests being processed").tags("method", method).register(r);
    }

    DistributionSummary requestBytes() {
      DistributionSummary s = requestBytes;
      if (s == null) {
        s = DistributionSummary.builder(meters.names.getHttpRequestBytes())
            .description("Size of requests in bytes").tags("method", method).register(meters.registry);
        requestBytes = s;
      }
      return s;
    }

    Counter resets() {
      Counter c = resets;
      if (c == null) {
        c = Counter.builder(meters.names.getHttpRequestResetsCount())
            .description("Number of request resets").tags("method", method).register(meters.registry);
        resets = c;
      }
      return c;
    }

    PerStatus of(int status) {
      int i = status - FIRST;
      if (i < 0 || i >= byStatus.length()) return new PerStatus(meters, method, status);
      PerStatus s = byStatus.get(i);
      if (s == null) {
        s = new PerStatus(meters, method, status); // a race registers twice: the registry answers the same meters
        byStatus.set(i, s);
      }
      return s;
    }
  }

  /** The series of one (method, status). */
  public static final class PerStatus {
    final Counter requests;
    final Timer time;
    final DistributionSummary responseBytes;

    PerStatus(Meters meters, String method, int status) {
      MeterRegistry r = meters.registry;
      String code = String.valueOf(status);
      requests = Counter.builder(meters.names.getHttpRequestsCount()).description("Number of processed requests")
          .tags("code", code, "method", method).register(r);
      time = Timer.builder(meters.names.getHttpResponseTime()).description("Request processing time")
          .tags("code", code, "method", method).register(r);
      responseBytes = DistributionSummary.builder(meters.names.getHttpResponseBytes())
          .description("Size of responses in bytes").tags("code", code, "method", method).register(r);
    }
  }
}
