package io.queenvertx.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queenvertx.testing.TestNode;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Connection exhaustion (issue 18, item 5): thousands of idle sockets and slowloris sockets neither stop
 * {@code /health} nor a push from answering; idle sockets are closed after the idle timeout, slowloris sockets after
 * the header deadline (also on a keep-alive connection's later request); over the cap a newcomer displaces a socket
 * that never sent a request, and is answered 503 when every slot holds a connection that did; a parked long poll
 * outlives the idle timeout. Every socket goes to 127.0.0.1 and every wait is bounded.
 */
class ConnectionLimitsIT {
  static final int IDLE_SOCKETS = 5000;
  static final int SLOWLORIS_SOCKETS = 20;
  /**
   * Long enough that opening 5,000 sockets (about a second, on a busy two-core machine) and the slowloris checks end
   * well before the first one expires, and well above the 1.5 s header deadline the slowloris sockets meet.
   */
  static final int IDLE_TIMEOUT_S = 12;

  @Test
  void idleAndSlowlorisSocketsDoNotStopTheNodeAndAreClosedByTheirDeadlines() throws Exception {
    try (var node = TestNode.start(Map.of("QUEEN_HTTP_IDLE_TIMEOUT_S", Integer.toString(IDLE_TIMEOUT_S),
        "QUEEN_HTTP_HEADER_TIMEOUT_MS", "1500", "QUEEN_HTTP_MAX_CONNECTIONS", "8000"));
        var selector = Selector.open()) {
      int port = node.node().config().http().port();
      List<SocketChannel> idle = new ArrayList<>();
      ScheduledExecutorService drip = null;
      try {
        long t0 = System.nanoTime();
        for (int i = 0; i < IDLE_SOCKETS; i++) {
          SocketChannel ch = SocketChannel.open(new InetSocketAddress("127.0.0.1", port));
          ch.configureBlocking(false);
          ch.register(selector, SelectionKey.OP_READ, ch);
          idle.add(ch);
        }
        long idleOpened = System.nanoTime();
        System.out.println("[ConnectionLimitsIT] " + IDLE_SOCKETS + " idle sockets opened in "
            + TimeUnit.NANOSECONDS.toMillis(idleOpened - t0) + " ms");
        // slowloris: a request head one byte every 100 ms, never finished within the test
        List<Socket> slow = new ArrayList<>();
        for (int i = 0; i < SLOWLORIS_SOCKETS; i++) slow.add(new Socket("127.0.0.1", port));
        Set<Socket> slowClosed = java.util.concurrent.ConcurrentHashMap.newKeySet();
        long slowStarted = System.nanoTime();
        drip = trickle(("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Filler: " + "a".repeat(4000))
            .getBytes(StandardCharsets.US_ASCII), slow, slowClosed, 100);

        // Under the attack the node answers /health and a push, and counts the open connections.
        var health = node.get("/health");
        assertThat(health.status()).isEqualTo(200);
        String q = "conn-" + UUID.randomUUID();
        var push = node.post("/api/v1/push", new JsonObject().put("items", new JsonArray()
            .add(new JsonObject().put("queue", q).put("payload", 1))));
        assertThat(push.status()).as(push.body()).isEqualTo(201);
        double open = MetricsIT.parse(node.get("/metrics/prometheus").body()).get("queen_http_connections");
        assertThat(open).isGreaterThanOrEqualTo(IDLE_SOCKETS);

        // Slowloris sockets are closed by the header deadline, long before the idle timeout.
        for (Socket s : slow) {
          s.setSoTimeout(10_000);
          assertThat(readsEof(s.getInputStream())).as("a slowloris socket is closed by the server").isTrue();
        }
        long slowSeconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - slowStarted);
        System.out.println("[ConnectionLimitsIT] slowloris closed after " + slowSeconds + " s, "
            + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0) + " ms after the first idle socket");
        assertThat(slowSeconds).as("closed by the 1.5 s header deadline, not by the %d s idle timeout", IDLE_TIMEOUT_S)
            .isLessThan(IDLE_TIMEOUT_S - 4);
        assertThat(openIdle(selector)).as("idle sockets are still open when the slowloris ones are closed")
            .isEqualTo(IDLE_SOCKETS);

        // Idle sockets are closed after the idle timeout (counted from when they opened), all of them.
        await().atMost(Duration.ofSeconds(IDLE_TIMEOUT_S + 40)).pollInterval(Duration.ofMillis(200))
            .until(() -> openIdle(selector) == 0);
        long idleMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - idleOpened);
        assertThat(idleMs).as("not before the idle timeout").isGreaterThanOrEqualTo(IDLE_TIMEOUT_S * 1000L - 2000);
        var closed = MetricsIT.parse(node.get("/metrics/prometheus").body());
        assertThat(closed.get("queen_http_connections_closed_total{reason=\"idle_timeout\"}"))
            .isGreaterThanOrEqualTo(IDLE_SOCKETS);
        assertThat(closed.get("queen_http_connections_closed_total{reason=\"header_timeout\"}"))
            .isGreaterThanOrEqualTo(SLOWLORIS_SOCKETS);
        assertThat(closed.get("queen_http_connections")).isLessThan(10);
        for (Socket s : slow) s.close();
      } finally {
        if (drip != null) drip.shutdownNow();
        for (SocketChannel ch : idle) ch.close();
      }
    }
  }

  @Test
  void aLaterRequestOnAKeepAliveConnectionHasItsOwnHeaderDeadline() throws Exception {
    try (var node = TestNode.start(Map.of("QUEEN_HTTP_IDLE_TIMEOUT_S", "60", "QUEEN_HTTP_HEADER_TIMEOUT_MS", "1000"));
        var s = new Socket("127.0.0.1", node.node().config().http().port())) {
      s.setSoTimeout(10_000);
      var in = s.getInputStream();
      OutputStream out = s.getOutputStream();
      // Three complete requests on one connection, with pauses longer than the header deadline between them: the
      // deadline runs from a request's first byte, not from the previous response.
      // The first one offers an h2c upgrade: declined (HTTP/1.1 only), or the connection would leave these limits.
      for (int i = 0; i < 3; i++) {
        String upgrade = i > 0 ? ""
            : "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n";
        out.write(("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n" + upgrade + "\r\n")
            .getBytes(StandardCharsets.US_ASCII));
        out.flush();
        assertThat(readResponse(in).status).isEqualTo(200);
        // the stimulus, not a synchronisation: an idle gap longer than the 1 s header deadline between two requests
        // of one connection (with the deadline counted from the previous response, the next request would be cut)
        if (i < 2) Thread.sleep(1500);
      }
      long t0 = System.nanoTime();
      byte[] head = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Filler: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
          .getBytes(StandardCharsets.US_ASCII);
      var drip = trickle(head, List.of(s), java.util.concurrent.ConcurrentHashMap.newKeySet(), 200);
      try {
        assertThat(readsEof(in)).as("the trickled second request is cut").isTrue();
      } finally {
        drip.shutdownNow();
      }
      long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
      assertThat(ms).as("closed by the 1 s header deadline, well before the 60 s idle timeout and before the "
          + "trickle (%d bytes at 200 ms) ended", head.length).isBetween(900L, 6_000L);
    }
  }

  @Test
  void overTheCapANewcomerDisplacesASocketThatNeverSentARequestAndIsRefusedWhenAllSlotsServe() throws Exception {
    int cap = 20;
    try (var node = TestNode.start(Map.of("QUEEN_HTTP_MAX_CONNECTIONS", Integer.toString(cap),
        "QUEEN_HTTP_IDLE_TIMEOUT_S", "60", "QUEEN_HTTP_HEADER_TIMEOUT_MS", "10000"))) {
      int port = node.node().config().http().port();
      List<Socket> all = new ArrayList<>();
      try {
        // 5 keep-alive clients that have each been served once
        List<Socket> clients = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
          Socket s = open(port, all);
          assertThat(request(s, "/health").status).isEqualTo(200);
          clients.add(s);
        }
        // 15 sockets that never send anything: the cap is reached
        List<Socket> silent = new ArrayList<>();
        for (int i = 0; i < cap - clients.size(); i++) silent.add(open(port, all));
        await().atMost(Duration.ofSeconds(10)).until(() -> gauge(clients.get(0), "queen_http_connections") == cap);

        // A newcomer displaces the oldest silent socket and is served.
        Socket newcomer = open(port, all);
        assertThat(request(newcomer, "/health").status).isEqualTo(200);
        // Exactly one silent socket is closed to make room: the oldest in the server's order. With two event loops
        // accepting, the server may register near-simultaneous sockets in another order than the client opened them.
        List<Socket> closed = new ArrayList<>();
        await().atMost(Duration.ofSeconds(10)).until(() -> {
          closed.clear();
          for (Socket s : silent) if (!isOpen(s)) closed.add(s);
          return !closed.isEmpty();
        });
        assertThat(closed).as("one silent socket is closed, the others stay open").hasSize(1);
        silent.remove(closed.get(0));
        silent.add(0, closed.get(0)); // the displaced one first, so silent.subList(1, …) are the survivors
        assertThat(metric(clients.get(0), "queen_http_connections_closed_total{reason=\"evicted\"}")).isEqualTo(1.0);

        // Every slot now serves: the silent sockets send a request too.
        for (Socket s : silent.subList(1, silent.size())) assertThat(request(s, "/health").status).isEqualTo(200);
        await().atMost(Duration.ofSeconds(10)).until(() -> gauge(clients.get(0), "queen_http_connections") == cap);
        long t0 = System.nanoTime();
        Socket refused = open(port, all);
        refused.setSoTimeout(10_000);
        Response r = readResponse(refused.getInputStream());
        assertThat(r.status).isEqualTo(503);
        assertThat(r.body).isEqualTo("{\"error\":\"too many connections\",\"code\":\"unavailable\"}");
        assertThat(readsEof(refused.getInputStream())).isTrue();
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)).as("refused quickly").isLessThan(3_000);

        // The connections already open keep working, and the refusal is counted.
        for (Socket s : clients) assertThat(request(s, "/health").status).isEqualTo(200);
        for (Socket s : silent.subList(1, silent.size())) assertThat(request(s, "/health").status).isEqualTo(200);
        assertThat(request(newcomer, "/health").status).isEqualTo(200);
        assertThat(metric(clients.get(0), "queen_http_connections_closed_total{reason=\"refused\"}"))
            .isEqualTo(1.0);

        // A slot freed by a client leaving is available again.
        clients.get(4).close();
        await().atMost(Duration.ofSeconds(10)).until(() -> gauge(clients.get(0), "queen_http_connections") == cap - 1);
        Socket later = open(port, all);
        assertThat(request(later, "/health").status).isEqualTo(200);
      } finally {
        for (Socket s : all) s.close();
      }
    }
  }

  @Test
  void aParkedLongPollOutlivesTheIdleTimeoutAndTheConnectionIsClosedWhenIdleAfterwards() throws Exception {
    try (var node = TestNode.start(Map.of("QUEEN_HTTP_IDLE_TIMEOUT_S", "1", "QUEEN_HTTP_HEADER_TIMEOUT_MS", "1000"));
        var s = new Socket("127.0.0.1", node.node().config().http().port())) {
      String q = "conn-lp-" + UUID.randomUUID().toString().substring(0, 8);
      s.setSoTimeout(15_000);
      long t0 = System.nanoTime();
      Response r = request(s, "/api/v1/pop/queue/" + q + "?wait=true&timeout=4000");
      long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
      assertThat(r.status).as("the parked pop answers at its own deadline").isEqualTo(204);
      assertThat(ms).as("it waited its 4 s, four times the idle timeout").isGreaterThanOrEqualTo(3_500);
      // the same connection still serves, then is closed once idle
      assertThat(request(s, "/health").status).isEqualTo(200);
      long idleFrom = System.nanoTime();
      assertThat(readsEof(s.getInputStream())).isTrue();
      assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - idleFrom)).isBetween(700L, 6_000L);
    }
  }

  // --- raw HTTP/1.1 over one socket, so that which connection a request uses is certain ---

  record Response(int status, String body) {}

  static Socket open(int port, List<Socket> all) throws IOException {
    Socket s = new Socket("127.0.0.1", port);
    s.setSoTimeout(10_000);
    all.add(s);
    return s;
  }

  static Response request(Socket s, String path) throws IOException {
    s.getOutputStream().write(("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .getBytes(StandardCharsets.US_ASCII));
    s.getOutputStream().flush();
    return readResponse(s.getInputStream());
  }

  static double metric(Socket s, String series) throws IOException {
    Response r = request(s, "/metrics/prometheus");
    assertThat(r.status).isEqualTo(200);
    Double v = MetricsIT.parse(r.body).get(series);
    return v == null ? 0 : v;
  }

  static double gauge(Socket s, String name) throws IOException {
    return metric(s, name);
  }

  /** Reads one response with a content-length body (every answer of these paths has one). */
  static Response readResponse(InputStream in) throws IOException {
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    while (!head.toString(StandardCharsets.US_ASCII).endsWith("\r\n\r\n")) {
      int b = in.read();
      if (b < 0) throw new IOException("connection closed inside a response head: " + head);
      head.write(b);
    }
    String[] lines = head.toString(StandardCharsets.US_ASCII).split("\r\n");
    int status = Integer.parseInt(lines[0].split(" ")[1]);
    int length = 0;
    for (String l : lines) {
      if (l.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:")) {
        length = Integer.parseInt(l.substring(15).trim());
      }
    }
    byte[] body = in.readNBytes(length);
    return new Response(status, new String(body, StandardCharsets.UTF_8));
  }

  /** True when the peer closed (EOF or reset) before the socket's read timeout; false on timeout. */
  static boolean readsEof(InputStream in) throws IOException {
    try {
      while (true) {
        int b = in.read();
        if (b < 0) return true;
      }
    } catch (SocketTimeoutException e) {
      return false;
    } catch (IOException e) {
      return true; // connection reset
    }
  }

  static boolean isOpen(Socket s) throws IOException {
    int before = s.getSoTimeout();
    s.setSoTimeout(50);
    try {
      return s.getInputStream().read() >= 0;
    } catch (SocketTimeoutException e) {
      return true;
    } catch (IOException e) {
      return false;
    } finally {
      s.setSoTimeout(before);
    }
  }

  /** Idle client channels the server has not closed yet; a closed one is cancelled from the selector. */
  static int openIdle(Selector selector) throws IOException {
    selector.selectNow();
    ByteBuffer buf = ByteBuffer.allocate(64);
    Set<SelectionKey> ready = new HashSet<>(selector.selectedKeys());
    selector.selectedKeys().clear();
    for (SelectionKey k : ready) {
      SocketChannel ch = (SocketChannel) k.attachment();
      buf.clear();
      int n;
      try {
        n = ch.read(buf);
      } catch (IOException e) {
        n = -1;
      }
      if (n < 0) {
        k.cancel();
        ch.close();
      }
    }
    selector.selectNow(); // flushes the cancelled keys
    return selector.keys().size();
  }

  /**
   * The slow client under test: writes {@code bytes} one byte every {@code periodMs} to each socket, on a fixed-rate
   * schedule, and drops a socket once the server has closed it (its write fails); it stops when the bytes are out or
   * every socket is gone.
   */
  static ScheduledExecutorService trickle(byte[] bytes, List<Socket> sockets, Set<Socket> closed, long periodMs) {
    ScheduledExecutorService ses = Executors.newSingleThreadScheduledExecutor();
    AtomicInteger next = new AtomicInteger();
    ses.scheduleAtFixedRate(() -> {
      int b = next.getAndIncrement();
      if (b >= bytes.length || closed.size() == sockets.size()) {
        ses.shutdown();
        return;
      }
      for (Socket s : sockets) {
        if (closed.contains(s)) continue;
        try {
          s.getOutputStream().write(bytes[b]);
          s.getOutputStream().flush();
        } catch (IOException e) {
          closed.add(s);
        }
      }
    }, 0, periodMs, TimeUnit.MILLISECONDS);
    return ses;
  }

}
