package io.queenvertx.faults;

import io.queenvertx.testing.BrokerProcess;
import io.queenvertx.testing.TestNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One broker of the fault suite as a child JVM ({@link BrokerProcess}) on a fixed port, spool folder and PostgreSQL,
 * so producers keep one URL while it is killed and started again. Each start writes its own log file beside the spool
 * ({@code broker-<n>.log}).
 */
final class FaultBroker implements AutoCloseable {
  static final Duration BOOT = Duration.ofSeconds(120);

  private final Path home;
  private final Path spool;
  private final int port;
  private final int pgPort;
  private volatile BrokerProcess process;
  private int starts;

  FaultBroker(Path home, int pgPort) throws IOException {
    this(home, home.resolve("spool"), pgPort);
  }

  /** A broker whose spool lives in {@code spool} (a small file system of its own, say). */
  FaultBroker(Path home, Path spool, int pgPort) throws IOException {
    this.home = home;
    this.spool = spool;
    this.port = TestNode.freePort();
    this.pgPort = pgPort;
    Files.createDirectories(home);
  }

  String baseUrl() {
    return "http://127.0.0.1:" + port;
  }

  Path spoolDir() {
    return spool;
  }

  int starts() {
    return starts;
  }

  /**
   * Starts a new JVM on the same port and spool. With {@code databaseUp} it is ready when {@code /health} answers 200
   * (schema applied at boot); without, PostgreSQL is down, the schema is not applied, and it is ready once it answers
   * HTTP at all ({@code /status}).
   */
  synchronized void start(boolean databaseUp) throws Exception {
    if (process != null && process.alive()) throw new IllegalStateException("broker already running");
    Map<String, String> env = new HashMap<>();
    env.put("PORT", Integer.toString(port));
    env.put("PG_HOST", "127.0.0.1");
    env.put("PG_PORT", Integer.toString(pgPort));
    env.put("PG_DATABASE", "postgres");
    env.put("PG_USER", "postgres");
    env.put("PG_PASSWORD", "postgres");
    env.put("DB_POOL_SIZE", "8");
    env.put("QUEEN_HTTP_INSTANCES", "1");
    env.put("QUEEN_DATA_DIR", home.resolve("data").toString());
    env.put("FILE_BUFFER_DIR", spoolDir().toString());
    env.put("QUEEN_APPLY_SCHEMA", Boolean.toString(databaseUp));
    process = BrokerProcess.launch(BrokerProcess.Launch.of(env).heap("384m")
        .log(home.resolve("broker-" + (++starts) + ".log")));
    process.awaitAnswering(databaseUp ? "/health" : "/status", BOOT);
  }

  /** The status code of a GET, or -1 when the broker does not answer. */
  int status(String path) {
    try {
      return Http.get(baseUrl() + path, Duration.ofSeconds(5)).statusCode();
    } catch (Exception e) {
      return -1;
    }
  }

  /**
   * The spool's {@code queen_file_buffer_pending} gauge from {@code /metrics/prometheus}, or empty when the broker
   * does not answer or does not export it.
   */
  java.util.OptionalLong spoolPending() {
    try {
      HttpResponse<String> r = Http.get(baseUrl() + "/metrics/prometheus", Duration.ofSeconds(10));
      if (r.statusCode() != 200) return java.util.OptionalLong.empty();
      for (String line : r.body().split("\n")) {
        if (line.startsWith("queen_file_buffer_pending")) {
          return java.util.OptionalLong.of((long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)));
        }
      }
      return java.util.OptionalLong.empty();
    } catch (Exception e) {
      return java.util.OptionalLong.empty();
    }
  }

  /**
   * Events the spool gave up on: records in {@code .buf} files under {@code spool/failed/} (the spool's own format, a
   * little-endian u32 length before each JSON record). Diagnostic only: 0 when there is no such folder.
   */
  long spoolFailedEvents() throws IOException {
    Path failed = spoolDir().resolve("failed");
    if (!Files.isDirectory(failed)) return 0;
    long n = 0;
    try (var files = Files.list(failed)) {
      for (Path f : files.filter(x -> x.getFileName().toString().endsWith(".buf")).toList()) {
        var b = java.nio.ByteBuffer.wrap(Files.readAllBytes(f)).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        while (b.remaining() >= 4) {
          int len = b.getInt();
          if (len < 0 || len > b.remaining()) break;
          b.position(b.position() + len);
          n++;
        }
      }
    }
    return n;
  }

  /** SIGKILL: no shutdown hook runs, nothing is drained. */
  synchronized void kill9() throws InterruptedException {
    if (process != null) process.kill9();
  }

  /** SIGTERM: the node's shutdown hook runs; SIGKILL after 60 s. */
  synchronized void stop() throws InterruptedException {
    if (process != null) process.stop();
  }

  /** The end of the newest log, for failure messages. */
  String lastLog() {
    return process == null ? "(never started)" : process.tail();
  }

  @Override
  public void close() throws InterruptedException {
    stop();
  }

  /** HTTP/1.1 with a deadline on every call, connection included. */
  static final class Http {
    private Http() {}

    static HttpResponse<String> get(String url, Duration timeout) throws Exception {
      return send(HttpRequest.newBuilder(URI.create(url)).GET(), timeout);
    }

    static HttpResponse<String> post(String url, String body, Duration timeout) throws Exception {
      return send(HttpRequest.newBuilder(URI.create(url)).header("content-type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString(body)), timeout);
    }

    private static HttpResponse<String> send(HttpRequest.Builder b, Duration timeout) throws Exception {
      // The request timeout covers the wait for headers; the outer deadline also bounds the body.
      return TestNode.HTTP.sendAsync(b.timeout(timeout).build(), HttpResponse.BodyHandlers.ofString())
          .get(timeout.toMillis() + 5000, TimeUnit.MILLISECONDS);
    }
  }
}
