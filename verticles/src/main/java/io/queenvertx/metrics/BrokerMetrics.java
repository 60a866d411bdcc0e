package io.queenvertx.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * The broker's own series, in the node's Micrometer registry next to the Vert.x HTTP, pool and event-bus metrics
 * that vertx-micrometer-metrics records. One instance per node (tests run several nodes in one JVM).
 */
public final class BrokerMetrics {
  private final PrometheusMeterRegistry registry =
      io.queenvertx.metrics.MeterNaming.apply(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT));
  private final long startedAt = System.currentTimeMillis();
  private final StateMetrics state = new StateMetrics(registry);
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
  /** Per-minute operation counters, written to PostgreSQL by the stats flusher. */
  public final io.queenvertx.metrics.OpStats stats = new io.queenvertx.metrics.OpStats();
  /** The timer series (schedules, fires, pending, lag). */
  public final TimerMetrics timers = new TimerMetrics(registry);

  /** A push answered {@code out}, accepted at {@code t0} (nanoTime): its latency and statistics; returns {@code out}. */
  public <T extends java.util.List<io.queenvertx.bus.PushOutcome>> T pushAnswered(java.util.UUID tenant, T out, long t0) {
    long nanos = System.nanoTime() - t0;
    pushLatency.record(nanos, java.util.concurrent.TimeUnit.NANOSECONDS);
    stats.push(tenant, out, nanos);
    return out;
  }

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

  /** The key-value and lock series. */
  public StateMetrics state() {
    return state;
  }

  public PrometheusMeterRegistry registry() {
    return registry;
  }

  public long uptimeSeconds() {
    return (System.currentTimeMillis() - startedAt) / 1000;
  }

  /** Push, pop and ack requests handled by this node since it started. */
  public long requestsTotal() {
    return (long) (pushRequests.count() + popRequests.count() + ackRequests.count());
  }

  /** Messages pushed, delivered by pop and acked (successfully) by this node since it started. */
  public long messagesTotal() {
    return (long) (pushedMessages.count() + poppedMessages.count() + ackedMessages.count());
  }

  private final RateWindow requestRate = new RateWindow(startedAt);
  private final RateWindow messageRate = new RateWindow(startedAt);

  /** {@link #requestsTotal()} per second over about the last minute (since the start when the node is younger). */
  public double requestRate() {
    return requestRate.perSecond(requestsTotal(), System.currentTimeMillis());
  }

  /** {@link #messagesTotal()} per second over about the last minute (since the start when the node is younger). */
  public double messageRate() {
    return messageRate.perSecond(messagesTotal(), System.currentTimeMillis());
  }

  /**
   * Sum of a Vert.x pool gauge over this node's SQL client pools, as vertx-micrometer-metrics records it
   * ({@code vertx.pool.queue.pending}: requests waiting for a connection; {@code vertx.pool.in.use}: connections
   * lent out). Empty when no such series is registered (metrics off).
   */
  public OptionalLong sqlPoolGauge(String name) {
    var meters = registry.find(name).tag("pool_type", "sql").meters();
    if (meters.isEmpty()) return OptionalLong.empty();
    double sum = 0;
    for (Meter meter : meters) {
      for (var m : meter.measure()) sum += m.getValue();
    }
    return OptionalLong.of(Math.round(sum));
  }

  /**
   * Resident set size of this process in bytes, from {@code VmRSS} in {@code /proc/self/status}; empty where that
   * file is not there (not Linux). Reads a file: call it off the event loop.
   */
  public static OptionalLong residentSetBytes() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
        if (line.startsWith("VmRSS:")) {
          String kb = line.substring(6).trim().split("\\s+")[0];
          return OptionalLong.of(Long.parseLong(kb) * 1024);
        }
      }
    } catch (IOException | RuntimeException e) {
      // not Linux, or an unexpected layout: the field is left out
    }
    return OptionalLong.empty();
  }

  /**
   * CPU time this process spent in user and in kernel mode, in microseconds, from fields 14 and 15 (utime, stime,
   * in clock ticks of 1/100 s) of {@code /proc/self/stat}; null where that file is not there. Reads a file: call it
   * off the event loop.
   */
  public static long[] cpuMicros() {
    try {
      String stat = Files.readString(Path.of("/proc/self/stat"));
      // the command name (field 2) is in parentheses and may hold spaces: count fields after its closing paren
      String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split("\\s+");
      // f[0] is field 3 (state), so utime (field 14) is f[11] and stime (field 15) is f[12]
      return new long[] {Long.parseLong(f[11]) * 10_000L, Long.parseLong(f[12]) * 10_000L};
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  /** Bytes held by the JVM's direct and mapped NIO buffers (memory outside the heap). */
  public static long bufferPoolBytes() {
    long sum = 0;
    for (BufferPoolMXBean b : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
      sum += Math.max(0, b.getMemoryUsed());
    }
    return sum;
  }

  /**
   * A per-second rate of a growing total over a sliding window of about a minute. A reading is kept as a sample when
   * the last kept one is a second old or more; the oldest kept sample is the newest one at least {@link #WINDOW_MS} old (or the start), so the rate spans at
   * least a minute once the node is that old.
   */
  static final class RateWindow {
    static final long WINDOW_MS = 60_000;
    private final ArrayDeque<long[]> samples = new ArrayDeque<>();

    RateWindow(long startedAt) {
      samples.add(new long[] {startedAt, 0});
    }

    synchronized double perSecond(long total, long now) {
      // at most one sample a second: the window holds about sixty whatever the polling rate
      if (now - samples.peekLast()[0] >= 1000) samples.addLast(new long[] {now, total});
      while (samples.size() > 2) {
        var it = samples.iterator();
        it.next();
        if (it.next()[0] > now - WINDOW_MS) break;
        samples.removeFirst();
      }
      long[] first = samples.peekFirst();
      long span = now - first[0];
      return span <= 0 ? 0.0 : (total - first[1]) * 1000.0 / span;
    }
  }
}
