package io.queenvertx.testing;

import java.io.File;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** A broker node in its own JVM (a real separate process), started from the test classpath. */
public final class BrokerProcess implements AutoCloseable {
  /** The module flags a broker JVM needs on Java 17 (Hazelcast, Netty, JVM metrics); the heap is the caller's. */
  public static final List<String> MODULE_FLAGS = List.of("--add-modules", "java.se",
      "--add-exports", "java.base/jdk.internal.ref=ALL-UNNAMED", "--add-opens", "java.base/java.lang=ALL-UNNAMED",
      "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED", "--add-opens", "java.management/sun.management=ALL-UNNAMED",
      "--add-opens", "jdk.management/com.sun.management.internal=ALL-UNNAMED");

  private final Process process;
  private final int port;
  private final Path log;

  private BrokerProcess(Process process, int port, Path log) {
    this.process = process;
    this.port = port;
    this.log = log;
  }

  public static BrokerProcess start(Map<String, String> env) throws Exception {
    var p = launch(env);
    p.awaitHealthy(Duration.ofSeconds(120));
    return p;
  }

  /** The command line of a broker JVM on this test classpath: this JDK, the module flags, heap {@code -Xmx<heap>}. */
  public static List<String> command(String heap) {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(MODULE_FLAGS);
    cmd.add("-Xmx" + heap);
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add("io.queenvertx.boot.Main");
    return cmd;
  }

  /** Starts the process without waiting for it to serve (boot tests watch it fail or wait themselves). */
  public static BrokerProcess launch(Map<String, String> env) throws Exception {
    // a PORT that is not a number is passed on as it is (boot tests); the handle then keeps a free port of its own
    int port = env.getOrDefault("PORT", "").matches("[0-9]{1,5}") ? Integer.parseInt(env.get("PORT")) : TestNode.freePort();
    Path log = Files.createTempFile("queen-node-" + port, ".log");
    var pb = new ProcessBuilder(command("512m")).redirectErrorStream(true).redirectOutput(log.toFile());
    pb.environment().put("PORT", Integer.toString(port));
    pb.environment().put("QUEEN_BIND_ADDR", "127.0.0.1"); // loopback only, unless the test says otherwise
    pb.environment().putAll(env);
    Process process = pb.start();
    // a test JVM that ends without closing it (a test's timeout, a crash) must not leave the node running, nor
    // stopped: SIGKILL ends a frozen (SIGSTOP) process too
    Runtime.getRuntime().addShutdownHook(new Thread(process::destroyForcibly, "broker-process-reaper"));
    return new BrokerProcess(process, port, log);
  }

  /** The exit code, once the process has ended within {@code max}; fails with the log when it is still running. */
  public int awaitExit(Duration max) throws Exception {
    if (!process.waitFor(max.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)) {
      throw new IllegalStateException("node still running after " + max + ":\n" + Files.readString(log));
    }
    return process.exitValue();
  }

  public boolean alive() {
    return process.isAlive();
  }

  /** The node's process id (to signal it: freeze with SIGSTOP, resume with SIGCONT). */
  public long pid() {
    return process.pid();
  }

  /** A node that shares the test PostgreSQL. */
  public static BrokerProcess onSharedDatabase(Map<String, String> extra) throws Exception {
    var db = TestDatabase.get().shared();
    var env = new java.util.HashMap<String, String>(Map.of("PG_HOST", db.host(), "PG_PORT", Integer.toString(db.port()),
        "PG_DATABASE", db.database(), "PG_USER", db.user(), "PG_PASSWORD", db.password(), "DB_POOL_SIZE", "16",
        "QUEEN_HTTP_INSTANCES", "1"));
    env.put("FILE_BUFFER_DIR", Files.createTempDirectory("queen-proc-spool").toString());
    env.putAll(extra);
    return start(env);
  }

  /** Waits until {@code /health} answers 200; fails with the log when the process dies or time runs out. */
  public void awaitHealthy(Duration max) throws Exception {
    var http = TestNode.HTTP;
    try {
      org.awaitility.Awaitility.await().atMost(max).pollInterval(Duration.ofMillis(200)).until(() -> {
        if (!process.isAlive()) return true;
        try {
          return http.send(HttpRequest.newBuilder(URI.create(baseUrl() + "/health")).timeout(Duration.ofSeconds(2))
              .build(), HttpResponse.BodyHandlers.ofString()).statusCode() == 200;
        } catch (java.io.IOException e) {
          return false; // not listening yet
        }
      });
    } catch (org.awaitility.core.ConditionTimeoutException e) {
      throw new IllegalStateException("node not healthy in " + max + ":\n" + Files.readString(log));
    }
    if (!process.isAlive()) throw new IllegalStateException("node died at boot:\n" + Files.readString(log));
  }

  public String baseUrl() {
    return "http://127.0.0.1:" + port;
  }

  public TestNode.Reply get(String path) {
    return TestNode.exchange(HttpRequest.newBuilder(URI.create(baseUrl() + path)).GET(), Map.of());
  }

  public TestNode.Reply post(String path, Object body) {
    return TestNode.exchange(HttpRequest.newBuilder(URI.create(baseUrl() + path))
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(io.vertx.core.json.Json.encode(body))), Map.of());
  }

  /** The JVM's child processes alive now (the embedded PostgreSQL's watchdog is one). */
  public java.util.List<ProcessHandle> children() {
    return process.children().filter(ProcessHandle::isAlive).toList();
  }

  public int port() {
    return port;
  }

  /** SIGKILL: no shutdown hook runs, nothing is drained. */
  public void kill9() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor();
  }

  public String log() throws Exception {
    return Files.readString(log);
  }

  @Override
  public void close() throws Exception {
    if (process.isAlive()) {
      process.destroy();
      if (!process.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)) process.destroyForcibly().waitFor();
    }
    new File(log.toString()).delete();
  }
}
