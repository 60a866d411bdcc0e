package io.queenvertx.testing;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * A broker node in its own JVM (a real separate process), started from the test classpath: the one launcher of the
 * tests that need a process of their own (boot errors, kill -9, several JVMs in a cluster, the fault suite).
 *
 * <p>Every launch gets the same command line ({@link #command}: this JDK, Hazelcast's module flags, C1 only, the
 * serial collector, a heap), a copy of the test classpath taken once per test JVM (a rebuild of the working tree while
 * a child JVM still loads classes lazily cannot pull them from under it), and an environment holding no broker setting
 * of the test JVM's own environment: the broker sees only what the test gives it (plus
 * {@code QUEEN_BIND_ADDR=127.0.0.1} unless told otherwise). A process still running when the test JVM exits is killed.
 */
public final class BrokerProcess implements AutoCloseable {
  /** The module flags a broker JVM needs on Java 17 (Hazelcast, Netty, JVM metrics); the heap is the caller's. */
  public static final List<String> MODULE_FLAGS = List.of("--add-modules", "java.se",
      "--add-exports", "java.base/jdk.internal.ref=ALL-UNNAMED", "--add-opens", "java.base/java.lang=ALL-UNNAMED",
      "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED", "--add-opens", "java.management/sun.management=ALL-UNNAMED",
      "--add-opens", "jdk.management/com.sun.management.internal=ALL-UNNAMED");
  /** Inherited variables with these prefixes (or these names) are broker settings: never passed on unasked. */
  private static final List<String> SETTING_PREFIXES = List.of("PG_", "QUEEN_", "JWT_", "FILE_BUFFER_", "DB_", "POP_",
      "RETENTION_", "METRICS_", "DEFAULT_");
  private static final Set<String> SETTING_NAMES = Set.of("PORT", "HOST");
  private static final Set<Process> RUNNING = ConcurrentHashMap.newKeySet();
  private static String classpath;

  static {
    Runtime.getRuntime().addShutdownHook(new Thread(() -> RUNNING.forEach(Process::destroyForcibly),
        "broker-process-reaper"));
  }

  private final Process process;
  private final int port;
  private final Path log;
  private final boolean ownLog;

  private BrokerProcess(Process process, int port, Path log, boolean ownLog) {
    this.process = process;
    this.port = port;
    this.log = log;
    this.ownLog = ownLog;
    RUNNING.add(process);
    process.onExit().thenRun(() -> RUNNING.remove(process));
  }

  /**
   * One launch: the broker's whole configuration {@code env}, its heap, and where its output goes ({@code null}: a
   * temporary file deleted on {@link #close}).
   */
  public record Launch(Map<String, String> env, String heap, Path log) {
    public static Launch of(Map<String, String> env) {
      return new Launch(env, "512m", null);
    }

    public Launch heap(String heap) {
      return new Launch(env, heap, log);
    }

    public Launch log(Path log) {
      return new Launch(env, heap, log);
    }
  }

  /** Launches with {@code env} and waits (at most 120 s) until {@code /health} answers 200. */
  public static BrokerProcess start(Map<String, String> env) throws Exception {
    var p = launch(env);
    p.awaitHealthy(Duration.ofSeconds(120));
    return p;
  }

  /** Starts the process without waiting for it to serve (boot tests watch it fail or wait themselves). */
  public static BrokerProcess launch(Map<String, String> env) throws Exception {
    return launch(Launch.of(env));
  }

  /**
   * Starts the process without waiting for it to serve, on the {@code PORT} of its environment when that is a
   * number, else on a free port (a {@code PORT} that is not a number is passed on as it is, for the boot tests; the
   * handle then keeps a free port of its own).
   */
  public static BrokerProcess launch(Launch launch) throws Exception {
    Map<String, String> env = launch.env();
    int port = env.getOrDefault("PORT", "").matches("[0-9]{1,5}") ? Integer.parseInt(env.get("PORT"))
        : TestNode.freePort();
    boolean ownLog = launch.log() == null;
    Path log = ownLog ? Files.createTempFile("queen-node-" + port, ".log") : launch.log();
    var pb = new ProcessBuilder(command(launch.heap())).redirectErrorStream(true).redirectOutput(log.toFile());
    Map<String, String> childEnv = pb.environment();
    childEnv.keySet().removeIf(k -> SETTING_NAMES.contains(k) || SETTING_PREFIXES.stream().anyMatch(k::startsWith));
    childEnv.put("PORT", Integer.toString(port));
    childEnv.put("QUEEN_BIND_ADDR", "127.0.0.1"); // loopback only, unless the test says otherwise
    childEnv.putAll(env);
    return new BrokerProcess(pb.start(), port, log, ownLog);
  }

  /**
   * The command line of a JVM running {@code io.queenvertx.boot.Main} on the test classpath (a copy of it): this JDK,
   * the module flags, heap {@code -Xmx<heap>}. The main class is the last element.
   */
  public static List<String> command(String heap) {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(MODULE_FLAGS);
    // C1 only: a test broker lives seconds to a minute, and C2's compiler threads would take a core from the tests
    // while it boots (a broker on the shared database served in about 1.4 s instead of 3-6 s on a busy two-core box)
    cmd.add("-XX:TieredStopAtLevel=1");
    // the serial collector: a heap of a few hundred MB needs no parallel GC threads, and a boot costs about 10 %
    // less CPU than with G1 (measured on a loaded two-core box: 2.4 s instead of 2.6 s until /health answered)
    cmd.add("-XX:+UseSerialGC");
    cmd.add("-Xmx" + heap);
    cmd.add("-cp");
    cmd.add(classpath());
    cmd.add("io.queenvertx.boot.Main");
    return cmd;
  }

  /**
   * The test classpath with every directory entry (the modules' {@code target/classes}) copied aside, once per test
   * JVM; jar entries are used where they are.
   */
  private static synchronized String classpath() {
    if (classpath == null) classpath = snapshotClasspath();
    return classpath;
  }

  private static String snapshotClasspath() {
    try {
      Path into = Files.createTempDirectory("queen-test-classpath");
      List<String> out = new ArrayList<>();
      int n = 0;
      for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
        Path src = Path.of(entry);
        if (!Files.isDirectory(src)) {
          out.add(entry);
          continue;
        }
        Path dst = into.resolve(Integer.toString(n++));
        try (var walk = Files.walk(src)) {
          for (Path p : walk.toList()) {
            Path target = dst.resolve(src.relativize(p).toString());
            if (Files.isDirectory(p)) Files.createDirectories(target);
            else Files.copy(p, target);
          }
        }
        out.add(dst.toString());
      }
      Runtime.getRuntime().addShutdownHook(new Thread(() -> deleteTree(into), "test-classpath-cleanup"));
      return String.join(File.pathSeparator, out);
    } catch (IOException e) {
      throw new IllegalStateException("could not copy the test classpath", e);
    }
  }

  private static void deleteTree(Path root) {
    try (var walk = Files.walk(root)) {
      walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException ignored) {
      // the JVM is going away; a temp folder left behind is harmless
    }
  }

  /** The settings of a node that shares the test PostgreSQL (no embedded server), with {@code extra} over them. */
  public static Map<String, String> sharedDatabaseEnv(Map<String, String> extra) throws IOException {
    var db = TestDatabase.get().shared();
    var env = new HashMap<String, String>(Map.of("PG_HOST", db.host(), "PG_PORT", Integer.toString(db.port()),
        "PG_DATABASE", db.database(), "PG_USER", db.user(), "PG_PASSWORD", db.password(), "DB_POOL_SIZE", "16",
        "QUEEN_HTTP_INSTANCES", "1"));
    env.put("FILE_BUFFER_DIR", Files.createTempDirectory("queen-proc-spool").toString());
    env.put("QUEEN_DATA_DIR", Files.createTempDirectory("queen-proc-data").toString());
    env.putAll(extra);
    return env;
  }

  /**
   * A node on the shared test database, serving; that database is migrated already, so the node boots with
   * {@code QUEEN_APPLY_SCHEMA=false} unless {@code extra} says otherwise.
   */
  public static BrokerProcess onSharedDatabase(Map<String, String> extra) throws Exception {
    var env = new HashMap<>(Map.of("QUEEN_APPLY_SCHEMA", "false"));
    env.putAll(extra);
    return start(sharedDatabaseEnv(env));
  }

  /** The exit code, once the process has ended within {@code max}; fails with the log when it is still running. */
  public int awaitExit(Duration max) throws Exception {
    if (!process.waitFor(max.toMillis(), TimeUnit.MILLISECONDS)) {
      throw new IllegalStateException("node still running after " + max + ":\n" + tail());
    }
    return process.exitValue();
  }

  public boolean alive() {
    return process.isAlive();
  }

  /** Waits until {@code /health} answers 200; fails with the log when the process dies or time runs out. */
  public void awaitHealthy(Duration max) throws Exception {
    awaitAnswering("/health", max);
  }

  /**
   * Waits until {@code GET path} answers 200 (e.g. {@code /status} of a node booted without its database); fails
   * with the end of the log when the process dies or time runs out.
   */
  public void awaitAnswering(String path, Duration max) throws Exception {
    try {
      org.awaitility.Awaitility.await("node answering 200 on " + path).atMost(max)
          .pollInterval(Duration.ofMillis(200)).until(() -> !process.isAlive() || status(path) == 200);
    } catch (org.awaitility.core.ConditionTimeoutException e) {
      throw new IllegalStateException("node not answering 200 on " + path + " within " + max + ":\n" + tail(), e);
    }
    if (!process.isAlive()) {
      throw new IllegalStateException("node exited with " + process.exitValue() + " at boot:\n" + tail());
    }
  }

  /** The status code of {@code GET path} within 5 s, or -1 when the node does not answer. */
  public int status(String path) {
    try {
      return TestNode.HTTP.sendAsync(HttpRequest.newBuilder(URI.create(baseUrl() + path))
              .timeout(Duration.ofSeconds(5)).build(), java.net.http.HttpResponse.BodyHandlers.discarding())
          .get(10, TimeUnit.SECONDS).statusCode();
    } catch (Exception e) {
      return -1;
    }
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

  /** The JVM's process id (what a node names when it holds a data folder). */
  public long pid() {
    return process.pid();
  }

  /** The JVM's child processes alive now (the embedded PostgreSQL's watchdog is one). */
  public List<ProcessHandle> children() {
    return process.children().filter(ProcessHandle::isAlive).toList();
  }

  public int port() {
    return port;
  }

  /** SIGKILL: no shutdown hook runs, nothing is drained. */
  public void kill9() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor(60, TimeUnit.SECONDS);
  }

  /** SIGTERM: the node's shutdown hook runs (it drains and stops); SIGKILL after 60 s. */
  public void stop() throws InterruptedException {
    if (!process.isAlive()) return;
    process.destroy();
    if (!process.waitFor(60, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      process.waitFor(30, TimeUnit.SECONDS);
    }
  }

  public String log() throws IOException {
    return Files.readString(log);
  }

  /** The last 8,000 characters of the log, for failure messages. */
  public String tail() {
    try {
      String s = Files.readString(log);
      return s.length() > 8000 ? s.substring(s.length() - 8000) : s;
    } catch (IOException e) {
      return "(no log at " + log + ")";
    }
  }

  /**
   * Stops the embedded PostgreSQL a killed node left running on {@code dataDir} (its {@code pg/postmaster.pid}), so
   * a failed test leaves no server behind; nothing when there is none.
   */
  public static void stopPostgresLeftIn(Path dataDir) throws IOException, InterruptedException {
    Path pidFile = dataDir.resolve("pg/postmaster.pid");
    if (!Files.exists(pidFile)) return;
    long pid = Long.parseLong(Files.readAllLines(pidFile).get(0).trim());
    var orphan = ProcessHandle.of(pid).filter(ProcessHandle::isAlive)
        .filter(h -> h.info().command().orElse("").contains("postgres"));
    if (orphan.isEmpty()) return;
    orphan.get().destroy();
    try {
      orphan.get().onExit().get(30, TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      orphan.get().destroyForcibly();
    }
  }

  /** Stops the process (SIGTERM, then SIGKILL) and deletes its log unless the test named the file. */
  @Override
  public void close() throws Exception {
    stop();
    if (ownLog) Files.deleteIfExists(log);
  }
}
