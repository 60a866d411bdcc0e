package io.queenvertx.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * The broker's own series, in the node's Micrometer registry next to the Vert.x HTTP, pool and event-bus metrics
 * that vertx-micrometer-metrics records. One instance per node (tests run several nodes in one JVM).
 */
public final class BrokerMetrics {
  private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final long startedAt = System.currentTimeMillis();
  public final Counter pushRequests = counter("queen_push_requests_total", "push requests");
  public final Counter pushedMessages = counter("queen_messages_pushed_total", "messages stored by push");
  public final Counter bufferedMessages = counter("queen_messages_buffered_total", "messages written to the spool");
  public final Counter popRequests = counter("queen_pop_requests_total", "pop requests");
  public final Counter poppedMessages = counter("queen_messages_popped_total", "messages delivered by pop");
  public final Counter emptyPops = counter("queen_pop_empty_total", "pops answered 204");
  public final Counter ackRequests = counter("queen_ack_requests_total", "ack and ack-batch requests");
  public final Counter ackedMessages = counter("queen_messages_acked_total", "acks that succeeded");
  public final Counter failedAcks = counter("queen_ack_failed_total", "acks that reported success:false");
  public final Counter deadLettered = counter("queen_messages_dead_lettered_total", "messages filed in the DLQ");
  public final Counter replayed = counter("queen_dlq_replayed_total", "dead-letter rows moved back to the log");
  public final AtomicLong parkedPolls = new AtomicLong();
  /** Open HTTP connections of this node (all HTTP verticle instances together). */
  public final AtomicInteger httpConnections = new AtomicInteger();
  /** Connections refused at the cap: every slot was held by a connection that had sent a request. */
  public final Counter connectionsRefused = closedConnections("refused");
  /** Connections closed at the cap to make room: the oldest that had not yet sent a complete request header. */
  public final Counter connectionsEvicted = closedConnections("evicted");
  /** Connections closed after the idle timeout with no request in flight. */
  public final Counter connectionsIdleClosed = closedConnections("idle_timeout");
  /** Connections closed because a request's headers did not complete within the header deadline. */
  public final Counter connectionsHeaderClosed = closedConnections("header_timeout");
  /** One log_push_multi call: from the call to its result, commit included. */
  public final Timer pushWrites = Timer.builder("queen_push_write_seconds")
      .description("log writes (one SQL transaction each), call to result").register(registry);
  /** Segments per log write: how much concurrent pushes fuse. */
  public final DistributionSummary pushWriteSegments = DistributionSummary.builder("queen_push_write_segments")
      .description("segments per log write").register(registry);
  /** A push request inside the log writer: accepted to answered (every frame written or spooled). */
  public final Timer pushLatency = Timer.builder("queen_push_request_seconds")
      .description("push requests in the log writer, accepted to answered").register(registry);

  private Counter counter(String name, String help) {
    return Counter.builder(name).description(help).register(registry);
  }

  private Counter closedConnections(String reason) {
    return Counter.builder("queen_http_connections_closed_total")
        .description("HTTP connections the node refused or closed itself, by reason").tag("reason", reason)
        .register(registry);
  }

  public void gauge(String name, String help, Supplier<Number> value) {
    Gauge.builder(name, value).description(help).register(registry);
  }

  public BrokerMetrics() {
    gauge("queen_parked_long_polls", "long polls parked on this node", parkedPolls::get);
    gauge("queen_http_connections", "open HTTP connections on this node", httpConnections::get);
  }

  public PrometheusMeterRegistry registry() {
    return registry;
  }

  public long uptimeSeconds() {
    return (System.currentTimeMillis() - startedAt) / 1000;
  }
}
