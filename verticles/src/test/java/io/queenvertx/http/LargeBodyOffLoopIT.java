package io.queenvertx.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * A large body is decoded and checked on a worker, not on the event loop that serves the other connections
 * ({@code http.server.OffLoop}): on a node with ONE event loop, a liveness probe keeps answering while a 27 MB
 * transaction or timer call is parsed (its 20 base64 payloads of 1 MB decoded and checked as JSON, some 0.5 s of CPU).
 * The call is refused at its last operation, so nothing reaches the database and only the parse is measured.
 */
class LargeBodyOffLoopIT {
  @NodeFixture(env = {"QUEEN_EVENT_LOOPS=1", "QUEEN_HTTP_INSTANCES=1"})
  static TestNode node;

  /**
   * The probe's worst answer time as a share of the time from the body's last byte sent to the answer (the parse, then
   * the refusal): a load-independent measure, since a busy machine slows the parse and the probes alike. With the
   * parse on the loop, a probe sent after the body waits for the parse's end (a share near 1); with the parse on a
   * worker, the probes are answered while it runs (the worker competes with the loop for the 2 cores, no more).
   */
  static final double PROBE_SHARE_BOUND = 0.5;

  /** The worst probe's wait and the time from the last byte of the body to the answer, both in milliseconds. */
  record Waits(long worstProbe, long afterBody) {
    double share() {
      return (double) worstProbe / Math.max(1, afterBody);
    }
  }

  /** 20 timer operations with a 1,000,000-byte JSON payload each, then one the parse refuses (a 400 naming it). */
  static String timerOps() {
    String payload = Base64.getEncoder().encodeToString(
        ("\"" + "a".repeat(999_998) + "\"").getBytes(StandardCharsets.UTF_8));
    StringBuilder b = new StringBuilder("[");
    for (int i = 0; i < 20; i++) {
      b.append("{\"op\":\"schedule\",\"queue\":\"big\",\"timerKey\":\"k").append(i)
          .append("\",\"delayMs\":60000,\"txn\":\"t").append(i).append("\",\"payload\":\"").append(payload).append("\"},");
    }
    return b.append("{\"op\":\"nonsense\",\"queue\":\"big\",\"timerKey\":\"last\"}]").toString();
  }

  static final HttpClient PROBE = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  /**
   * Sends {@code body} to {@code path} on a plain socket (so the test knows when its last byte left), then probes
   * liveness until the answer comes; asserts the 400 naming the refused operation.
   */
  static Waits worstProbeWhileParsing(String path, String body) throws Exception {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    try (Socket socket = new Socket("127.0.0.1", node.port())) {
      OutputStream out = socket.getOutputStream();
      out.write(("POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + node.port()
          + "\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: " + bytes.length
          + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
      out.write(bytes);
      out.flush();
      long sent = System.nanoTime();
      CompletableFuture<String> answer = CompletableFuture.supplyAsync(() -> {
        try {
          return new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      });
      long worst = 0;
      HttpRequest live = HttpRequest.newBuilder(URI.create(node.baseUrl() + "/health/live")).build();
      while (!answer.isDone()) {
        long t0 = System.nanoTime();
        assertThat(PROBE.send(live, HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(200);
        worst = Math.max(worst, (System.nanoTime() - t0) / 1_000_000);
      }
      String reply = answer.join();
      long afterBody = (System.nanoTime() - sent) / 1_000_000;
      assertThat(reply).startsWith("HTTP/1.1 400").contains("nonsense");
      return new Waits(worst, afterBody);
    }
  }

  @Test
  void aLargeTransactionOrTimerBodyIsParsedOffTheEventLoop() throws Exception {
    String ops = timerOps();
    worstProbeWhileParsing("/api/v1/timers", "{\"operations\":" + ops + "}"); // warm-up: class loading, JIT
    Waits transaction = worstProbeWhileParsing("/api/v1/transaction", "{\"operations\":[],\"timers\":" + ops + "}");
    Waits timers = worstProbeWhileParsing("/api/v1/timers", "{\"operations\":" + ops + "}");
    System.out.println("[LargeBodyOffLoopIT] worst probe / time after the body, ms: transaction " + transaction + ", timers " + timers);
    assertThat(transaction.share()).as("the probe waited on the transaction's parse: %s", transaction)
        .isLessThan(PROBE_SHARE_BOUND);
    assertThat(timers.share()).as("the probe waited on the timers' parse: %s", timers).isLessThan(PROBE_SHARE_BOUND);
  }
}
