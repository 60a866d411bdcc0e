package io.queenvertx.clients;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * An npm project under {@code clients-test/}: {@code clients-test/js} (Queen's JavaScript client 1.0.6) and
 * {@code clients-test/js2} (2.0.3), each installing {@code queen-mq} from the repository's own copy under
 * {@code clients-test/vendor/} and driving a broker from {@code node --test} files, as an application would;
 * {@code clients-test/openapi} uses the same install and run machinery.
 *
 * <p>{@code npm ci} runs only when the lock, the client tarball or the node version changed since the last install (a
 * stamp file in {@code node_modules}); {@link NpmPrefetch} starts it in the background when a test JVM starts.
 * Public for the tests of other packages that run a client script beside them ({@link #js2()}, {@link #start}).
 */
public final class JsClientProject {
  static final String TARBALL = "queen-mq-1.0.6.tgz";
  private static final String STAMP = ".queen-vertx-install-stamp";

  /** Child processes still running: killed with their descendants if this JVM exits first (npm, node). */
  private static final java.util.Set<Process> RUNNING = java.util.concurrent.ConcurrentHashMap.newKeySet();

  static {
    Runtime.getRuntime().addShutdownHook(new Thread(() -> RUNNING.forEach(p -> {
      p.descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly();
    }), "js-client-reaper"));
  }

  private final Path dir;
  private final String tarball;

  private JsClientProject(Path dir, String tarball) {
    this.dir = dir;
    this.tarball = tarball;
  }

  /** The 1.0.6 client's project of the checkout holding the working directory (Maven runs tests in the module folder). */
  static JsClientProject find() {
    return find("clients-test/js", TARBALL);
  }

  /** The 2.x client's project, {@code clients-test/js2} ({@code queen-mq} 2.0.3, whose code is 2.0.4's). */
  public static JsClientProject js2() {
    return find("clients-test/js2", "queen-mq-2.0.3.tgz");
  }

  /** The project at {@code relative} whose {@code package.json} installs the client tarball {@code tarball}. */
  static JsClientProject find(String relative, String tarball) {
    return new JsClientProject(find(relative).dir, tarball);
  }

  /**
   * The npm project at {@code relative} (e.g. {@code clients-test/openapi}) of the checkout holding the working
   * directory; {@link #ci} and {@link #run} work for any such project, the tarball methods only for the JS client's.
   */
  static JsClientProject find(String relative) {
    for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
      if (Files.isRegularFile(p.resolve(relative).resolve("package.json"))) {
        return new JsClientProject(p.resolve(relative), null);
      }
    }
    throw new IllegalStateException("no " + relative + "/package.json above " + Path.of("").toAbsolutePath());
  }

  Path dir() {
    return dir;
  }

  /** The client tarball the project's {@code package.json} names, inside the repository. */
  Path tarball() {
    if (tarball == null) throw new IllegalStateException(dir + " installs no client tarball");
    return dir.getParent().resolve("vendor").resolve(tarball);
  }

  /** The {@code *.test.mjs} files under {@code test/}, sorted. */
  List<Path> testFiles() throws IOException {
    try (Stream<Path> files = Files.list(dir.resolve("test"))) {
      return files.filter(f -> f.getFileName().toString().endsWith(".test.mjs")).sorted().toList();
    }
  }

  /** Runs {@code npm ci} unless the installed tree is already this lock and client tarball on this node. */
  public void install() throws Exception {
    ci(Files.readAllBytes(tarball()));
  }

  /**
   * Runs {@code npm ci} unless the installed tree is already this lock (and these extra inputs) on this node. One
   * install of a folder at a time, across the test JVMs of one build and within each (an OS lock on a file named
   * after the folder in the temp directory): a JVM that waited finds the tree installed.
   */
  void ci(byte[]... inputs) throws Exception {
    String key = sha256(dir.toString().getBytes(StandardCharsets.UTF_8)).substring(0, 16);
    Path lockFile = Path.of(System.getProperty("java.io.tmpdir"), "queen-npm-" + key + ".lock");
    synchronized (JsClientProject.class) {
      try (var channel = FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
           var lock = channel.lock()) {
        ciLocked(inputs);
      }
    }
  }

  private void ciLocked(byte[]... inputs) throws Exception {
    byte[][] parts = new byte[inputs.length + 2][];
    parts[0] = Files.readAllBytes(dir.resolve("package-lock.json"));
    parts[1] = run(List.of("node", "--version"), Map.of(), Duration.ofSeconds(30)).output().trim()
        .getBytes(StandardCharsets.UTF_8);
    System.arraycopy(inputs, 0, parts, 2, inputs.length);
    String want = sha256(parts);
    Path stamp = dir.resolve("node_modules").resolve(STAMP);
    if (Files.isRegularFile(stamp) && Files.readString(stamp).equals(want)) return;
    Result ci = run(List.of("npm", "ci", "--no-audit", "--no-fund"), Map.of(), Duration.ofMinutes(5));
    if (ci.exit() != 0) throw new IllegalStateException("npm ci failed in " + dir + ":\n" + ci.output());
    Files.writeString(stamp, want);
  }

  /** Runs one test file with {@code node --test}, the broker's URL in {@code QUEEN_URL}. */
  Result test(Path file, String brokerUrl, Duration limit) throws Exception {
    return test(file, Map.of("QUEEN_URL", brokerUrl), limit);
  }

  /** Runs one test file with {@code node --test} and {@code env} added (the spec reporter's output). */
  Result test(Path file, Map<String, String> env, Duration limit, String... reporters) throws Exception {
    List<String> command = new ArrayList<>(List.of("node", "--test", "--test-reporter=spec",
        "--test-reporter-destination=stdout"));
    command.addAll(List.of(reporters));
    command.add(dir.relativize(file).toString());
    return run(command, env, limit);
  }

  /** What a child process printed (stdout and stderr interleaved) and how it ended; -1 when it ran out of time. */
  record Result(int exit, String output) {}

  /** Runs {@code command} in the project folder with {@code env} added, killed after {@code limit}. */
  Result run(List<String> command, Map<String, String> env, Duration limit) throws Exception {
    try (Child c = start(command, env)) {
      c.process.getOutputStream().close();
      if (!c.process.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
        c.kill();
        return new Result(-1, "`" + String.join(" ", command) + "` still running after " + limit.toSeconds()
            + " s, killed; its output:\n" + c.output());
      }
      return new Result(c.process.exitValue(), c.output());
    }
  }

  /**
   * Starts {@code command} in the project folder with {@code env} added and returns while it runs (e.g. {@code node
   * scripts/supervised-consumer.mjs}): its stdin a pipe, its stdout and stderr interleaved in a temp file. Close the
   * child (try-with-resources) to kill it and its descendants; the reaper kills those still running at JVM exit.
   */
  public Child start(List<String> command, Map<String, String> env) throws IOException {
    Path log = Files.createTempFile("js-client", ".log");
    ProcessBuilder pb = new ProcessBuilder(new ArrayList<>(command)).directory(dir.toFile())
        .redirectErrorStream(true).redirectOutput(log.toFile()).redirectInput(ProcessBuilder.Redirect.PIPE);
    pb.environment().putAll(env);
    pb.environment().put("NO_COLOR", "1");
    Process p;
    try {
      p = pb.start();
    } catch (IOException e) {
      Files.deleteIfExists(log);
      throw new IllegalStateException("cannot run `" + command.get(0) + "` (is Node.js with npm installed? "
          + ".ci/run installs it): " + e.getMessage(), e);
    }
    RUNNING.add(p);
    p.onExit().thenRun(() -> RUNNING.remove(p));
    return new Child(p, log);
  }

  /** A child process of {@link #start}: what it printed so far, a line to its stdin, its end. */
  public static final class Child implements AutoCloseable {
    private final Process process;
    private final Path log;

    private Child(Process process, Path log) {
      this.process = process;
      this.log = log;
    }

    /** Its process id. */
    public long pid() {
      return process.pid();
    }

    /** Everything it printed so far (stdout and stderr interleaved). */
    public String output() throws IOException {
      return Files.readString(log);
    }

    /** Writes {@code line} and a newline to its stdin. */
    public void send(String line) throws IOException {
      process.getOutputStream().write((line + "\n").getBytes(StandardCharsets.UTF_8));
      process.getOutputStream().flush();
    }

    /** Waits up to {@code limit} for it to end; its exit code, or -1 if it still runs. */
    public int waitFor(Duration limit) throws InterruptedException {
      return process.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS) ? process.exitValue() : -1;
    }

    /** Kills it and its descendants and waits (10 s at most) for it to end. */
    void kill() throws InterruptedException {
      process.descendants().forEach(ProcessHandle::destroyForcibly);
      process.destroyForcibly();
      process.waitFor(10, TimeUnit.SECONDS);
    }

    /** Kills it (and its descendants) if it still runs, and deletes its output. */
    @Override
    public void close() throws IOException, InterruptedException {
      if (process.isAlive()) kill();
      Files.deleteIfExists(log);
    }
  }

  private static String sha256(byte[]... parts) throws Exception {
    MessageDigest md = MessageDigest.getInstance("SHA-256");
    for (byte[] part : parts) {
      md.update(part);
      md.update((byte) 0);
    }
    return HexFormat.of().formatHex(md.digest());
  }
}
