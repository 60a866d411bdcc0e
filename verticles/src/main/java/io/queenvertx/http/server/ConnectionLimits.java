package io.queenvertx.http.server;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.LastHttpContent;
import io.queenvertx.kernel.ExposureSettings;
import io.queenvertx.metrics.BrokerMetrics;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.shareddata.Shareable;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.LoggerFactory;

/**
 * The HTTP connection limits of one node (issue 18, item 5): a cap on open connections, an idle timeout and a
 * request-header deadline, so idle or slowloris sockets cannot exhaust the node's file descriptors.
 *
 * <p>One instance per node (per Vert.x instance, kept in a local shared map) counts the connections of all HTTP
 * verticle instances. Each HTTP verticle has a {@link Guard} that watches its own connections:
 * <ul>
 *   <li><b>Idle timeout</b>: a connection with no request in flight is closed {@code idleTimeoutS} after it opened or
 *       after its last response, unless the first byte of a new request arrives. A request in flight (a parked long
 *       poll, a slow handler) suspends it, so it never cuts a long poll whatever that poll's timeout.</li>
 *   <li><b>Header deadline</b>: from the first byte of a request (the first request of a connection or a later one on
 *       keep-alive) the request line and headers must be complete within {@code headerTimeoutMs}, else the
 *       connection is closed. Sending a byte at a time does not extend it.</li>
 *   <li><b>Cap</b>: at most {@code maxConnections} open connections per node. A connection over the cap displaces
 *       the oldest connection that has not yet sent a complete request header (an idle or slowloris socket holds a
 *       slot only until a newer client needs it); connections that have sent a request (keep-alive clients, parked
 *       polls) are never displaced. When every slot is held by such a connection, the new one is answered 503 and
 *       closed. The idle timeout bounds how long a finished keep-alive connection keeps its slot.</li>
 * </ul>
 *
 * <p>Request and response boundaries are read from the connection's Netty pipeline: a handler at its head sees the
 * raw bytes, one in front of Vert.x's own handler sees the decoded request heads and the response ends. Everything a
 * connection does runs on its event loop, expiry included (the sweep only reads the volatile deadline and hands the
 * close to that loop); the race between a displacement and a connection's first request head is settled by a
 * compare-and-set.
 */
public final class ConnectionLimits implements Shareable {
  private static final String MAP = "queen.http.connection-limits";
  /** The refusal, written raw: the contract's 503 (its {@code code} and {@code Retry-After}, as ErrorContract's). */
  private static final String REFUSED_BODY = "{\"error\":\"too many connections\",\"code\":\"unavailable\"}";
  private static final byte[] REFUSED = ("HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n"
      + "retry-after: 1\r\ncontent-length: " + REFUSED_BODY.length() + "\r\nconnection: close\r\n\r\n" + REFUSED_BODY)
      .getBytes(StandardCharsets.US_ASCII);

  private final BrokerMetrics metrics;
  private final int maxConnections;
  private final long idleNanos;
  private final long headerNanos;
  /** Connections that have not yet sent a complete request header, oldest first: the ones the cap may displace. */
  private final ConcurrentSkipListMap<Long, Tracked> unproven = new ConcurrentSkipListMap<>();
  private final AtomicLong sequence = new AtomicLong();

  private ConnectionLimits(BrokerMetrics metrics, ExposureSettings exposure) {
    this.metrics = metrics;
    this.maxConnections = exposure.maxConnections();
    this.idleNanos = exposure.idleTimeoutS() * 1_000_000_000L;
    this.headerNanos = exposure.headerTimeoutMs() * 1_000_000L;
    LoggerFactory.getLogger(ConnectionLimits.class).info(
        "HTTP connections: cap {} per node, idle timeout {} s, header deadline {} ms (0: off)",
        maxConnections, exposure.idleTimeoutS(), exposure.headerTimeoutMs());
  }

  /** The node's limits, created by the first HTTP verticle instance of that Vert.x instance. */
  public static ConnectionLimits of(Vertx vertx, BrokerMetrics metrics, ExposureSettings exposure) {
    return vertx.sharedData().<String, ConnectionLimits>getLocalMap(MAP)
        .computeIfAbsent("node", k -> new ConnectionLimits(metrics, exposure));
  }

  /** How often a guard looks for expired deadlines: a quarter of the shorter timeout, within 50 ms..1 s. */
  public long sweepPeriodMs() {
    long shortest = Long.MAX_VALUE;
    if (idleNanos > 0) shortest = idleNanos;
    if (headerNanos > 0) shortest = Math.min(shortest, headerNanos);
    if (shortest == Long.MAX_VALUE) return 1000;
    return Math.max(50, Math.min(1000, shortest / 4 / 1_000_000));
  }

  /** The watcher of one HTTP verticle instance's connections. */
  public Guard guard(Vertx vertx) {
    return new Guard(vertx);
  }

  /** Closes the oldest connection that has not sent a complete request header; false when there is none. */
  private boolean displaceOne() {
    for (var e = unproven.pollFirstEntry(); e != null; e = unproven.pollFirstEntry()) {
      Tracked t = e.getValue();
      if (t.phase.compareAndSet(Tracked.UNPROVEN, Tracked.DISPLACED)) {
        metrics.connectionsEvicted.increment();
        t.channel.close();
        return true;
      }
    }
    return false;
  }

  /** Watches the connections of one HTTP server instance and sweeps their deadlines on that instance's context. */
  public final class Guard {
    private final Vertx vertx;
    private final Set<Tracked> open = ConcurrentHashMap.newKeySet();
    private final long timer;

    private Guard(Vertx vertx) {
      this.vertx = vertx;
      this.timer = idleNanos > 0 || headerNanos > 0 ? vertx.setPeriodic(sweepPeriodMs(), id -> sweep()) : -1;
    }

    /** The server's connection handler: counts the connection, applies the cap and starts watching it. */
    public void accept(HttpConnection connection) {
      if (!(connection instanceof io.vertx.core.net.impl.ConnectionBase base)) {
        // not a Netty-backed connection (never seen with the HTTP/1.1 server): counted, not watched
        metrics.httpConnections.incrementAndGet();
        connection.closeHandler(v -> metrics.httpConnections.decrementAndGet());
        return;
      }
      Channel channel = base.channel();
      int n = metrics.httpConnections.incrementAndGet();
      channel.closeFuture().addListener(f -> metrics.httpConnections.decrementAndGet());
      if (maxConnections > 0 && n > maxConnections && !displaceOne()) {
        metrics.connectionsRefused.increment();
        channel.pipeline().firstContext().writeAndFlush(Unpooled.wrappedBuffer(REFUSED))
            .addListener(ChannelFutureListener.CLOSE);
        return;
      }
      Tracked t = new Tracked(channel, sequence.incrementAndGet());
      open.add(t);
      unproven.put(t.seq, t);
      channel.closeFuture().addListener(f -> {
        open.remove(t);
        unproven.remove(t.seq);
      });
      var pipeline = channel.pipeline();
      String vertxHandler = pipeline.get("handler") != null ? "handler" : pipeline.lastContext().name();
      pipeline.addFirst("queen-raw-reads", t.rawReads);
      pipeline.addBefore(vertxHandler, "queen-boundaries", t.boundaries);
      t.idle();
    }

    private void sweep() {
      long now = System.nanoTime();
      for (Tracked t : open) {
        if (t.due(now)) t.channel.eventLoop().execute(t::expireIfDue);
      }
    }

    /** Stops the sweep; the connections themselves are closed by the server's shutdown. */
    public void stop() {
      if (timer >= 0) vertx.cancelTimer(timer);
    }
  }

  /** One watched connection. Its fields change on the connection's event loop; the sweep reads the deadline. */
  private final class Tracked {
    static final int UNPROVEN = 0;
    static final int PROVEN = 1;
    static final int DISPLACED = 2;

    final Channel channel;
    final long seq;
    final AtomicInteger phase = new AtomicInteger(UNPROVEN);
    /** System.nanoTime() after which the sweep closes the connection; 0 for none. */
    volatile long deadline;
    /** Whether {@link #deadline} is a header deadline (else an idle one). */
    volatile boolean header;
    /** Requests whose head arrived and whose response has not ended (more than one when pipelined). */
    int inFlight;
    /** Bytes arrived since the last request head or request end: the start of a request not yet decoded. */
    boolean pendingBytes;

    final ChannelInboundHandlerAdapter rawReads = new ChannelInboundHandlerAdapter() {
      @Override
      public void channelRead(ChannelHandlerContext ctx, Object msg) {
        pendingBytes = true;
        if (inFlight == 0 && !header) headerDeadline();
        ctx.fireChannelRead(msg);
      }
    };

    final ChannelDuplexHandler boundaries = new ChannelDuplexHandler() {
      @Override
      public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof HttpRequest) requestHead();
        if (msg instanceof LastHttpContent) pendingBytes = false;
        ctx.fireChannelRead(msg);
      }

      @Override
      public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (msg instanceof LastHttpContent
            && !(msg instanceof HttpResponse r && r.status().codeClass() == HttpStatusClass.INFORMATIONAL)) {
          responseEnd();
        }
        ctx.write(msg, promise);
      }
    };

    Tracked(Channel channel, long seq) {
      this.channel = channel;
      this.seq = seq;
    }

    boolean due(long now) {
      long d = deadline;
      return d != 0 && now - d >= 0;
    }

    /** On the connection's event loop, so that a request head arriving meanwhile wins over the sweep. */
    void expireIfDue() {
      if (!due(System.nanoTime()) || !channel.isOpen()) return;
      if (header) metrics.connectionsHeaderClosed.increment();
      else metrics.connectionsIdleClosed.increment();
      deadline = 0;
      channel.close();
    }

    private void requestHead() {
      inFlight++;
      pendingBytes = false;
      header = false;
      deadline = 0;
      if (phase.get() == UNPROVEN && phase.compareAndSet(UNPROVEN, PROVEN)) unproven.remove(seq);
    }

    private void responseEnd() {
      if (inFlight > 0) inFlight--;
      if (inFlight > 0) return;
      if (pendingBytes) headerDeadline();
      else idle();
    }

    void idle() {
      header = false;
      deadline = idleNanos > 0 ? System.nanoTime() + idleNanos : 0;
    }

    private void headerDeadline() {
      header = true;
      deadline = headerNanos > 0 ? System.nanoTime() + headerNanos : 0;
    }
  }
}
