package io.queenvertx.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
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
 * ({@code http.server.OffLoop}): on a node with ONE event loop, a liveness probe keeps answering while a 53 MB
 * transaction or timer call is parsed (its 40 base64 payloads of 1 MB decoded and checked as JSON, some 1 s of CPU).
 * The call is refused at its last operation, so nothing reaches the database and only the parse is measured.
 */
class LargeBodyOffLoopIT {
  @NodeFixture(env = {"QUEEN_EVENT_LOOPS=1", "QUEEN_HTTP_INSTANCES=1"})
  static TestNode node;

  /**
   * The probe's worst answer time while a body is parsed. Measured on 2 shared cores: 136-265 ms with the parse on a
   * worker (which then competes with the loop for the cores), 1,049 ms with the transaction parsed on the loop.
   */
  static final long PROBE_BOUND_MS = 600;

  /** 40 timer operations with a 1,000,000-byte JSON payload each, then one the parse refuses (a 400 naming it). */
  static String timerOps() {
    String payload = Base64.getEncoder().encodeToString(
        ("\"" + "a".repeat(999_998) + "\"").getBytes(StandardCharsets.UTF_8));
    StringBuilder b = new StringBuilder("[");
    for (int i = 0; i < 40; i++) {
      b.append("{\"op\":\"schedule\",\"queue\":\"big\",\"timerKey\":\"k").append(i)
          .append("\",\"delayMs\":60000,\"txn\":\"t").append(i).append("\",\"payload\":\"").append(payload).append("\"},");
    }
    return b.append("{\"op\":\"nonsense\",\"queue\":\"big\",\"timerKey\":\"last\"}]").toString();
  }

  /** The probes' own client: the shared one's selector thread is busy sending the large body. */
  static final HttpClient PROBE = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  /** The most milliseconds a liveness probe waited while {@code path} parsed {@code body}; asserts the 400. */
  static long worstProbeWhileParsing(String path, String body) throws Exception {
    CompletableFuture<TestNode.Reply> call = CompletableFuture.supplyAsync(() -> node.post(path, body));
    long worst = 0;
    HttpRequest live = HttpRequest.newBuilder(URI.create(node.baseUrl() + "/health/live")).build();
    while (!call.isDone()) {
      long t0 = System.nanoTime();
      assertThat(PROBE.send(live, HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(200);
      worst = Math.max(worst, (System.nanoTime() - t0) / 1_000_000);
    }
    TestNode.Reply r = call.join();
    assertThat(r.status()).as(r.body()).isEqualTo(400);
    assertThat(r.body()).contains("nonsense");
    return worst;
  }

  @Test
  void aLargeTransactionOrTimerBodyIsParsedOffTheEventLoop() throws Exception {
    String ops = timerOps();
    worstProbeWhileParsing("/api/v1/timers", "{\"operations\":" + ops + "}"); // warm-up: class loading, JIT
    long transaction = worstProbeWhileParsing("/api/v1/transaction", "{\"operations\":[],\"timers\":" + ops + "}");
    long timers = worstProbeWhileParsing("/api/v1/timers", "{\"operations\":" + ops + "}");
    System.out.println("[LargeBodyOffLoopIT] worst probe, ms: transaction " + transaction + ", timers " + timers);
    assertThat(transaction).as("the probe waited on the transaction's parse").isLessThan(PROBE_BOUND_MS);
    assertThat(timers).as("the probe waited on the timers' parse").isLessThan(PROBE_BOUND_MS);
  }
}
