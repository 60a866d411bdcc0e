package io.queenvertx.clients;

import static org.junit.jupiter.api.Assertions.fail;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.queenvertx.kernel.Config;
import io.queenvertx.testing.TestDatabase;
import io.queenvertx.testing.TestNode;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicContainer;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Queen's 2.x JavaScript client ({@code queen-mq} 2.0.3, whose code is 2.0.4's) against real nodes: every
 * {@code clients-test/js2/test/*.test.mjs} file runs under {@code node --test}, and each of its top-level tests is a
 * JUnit test here, failing with the message its assertion gave (node's whole output follows it).
 *
 * <p>Two nodes share one fresh database: {@code QUEEN_URL} and {@code QUEEN_URL_B}. A file may stop and start both
 * (the same ports, the same database) through {@code QUEEN_CONTROL_URL}: {@code POST /stop} answers once both are
 * down, {@code POST /start} once both answer again. Every file begins with both nodes up.
 *
 * <p>{@code -Dqueen.js2.only=kv,timers} runs only those files.
 */
class JsClient2IT {
  private static final Duration PER_FILE = Duration.ofSeconds(180);

  static JsClientProject project;
  static Nodes nodes;
  static HttpServer control;

  @BeforeAll
  static void start() throws Exception {
    project = project();
    project.install();
    nodes = new Nodes(TestDatabase.get().fresh(), TestNode.freePort(), TestNode.freePort());
    nodes.start();
    control = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    control.createContext("/stop", exchange -> answer(exchange, nodes::stop));
    control.createContext("/start", exchange -> answer(exchange, nodes::start));
    control.start();
  }

  /** The 2.x client's npm project (also installed ahead by {@link NpmPrefetch}). */
  static JsClientProject project() {
    return JsClientProject.js2();
  }

  @AfterAll
  static void stop() {
    if (control != null) control.stop(0);
    if (nodes != null) nodes.stop();
  }

  @TestFactory
  Stream<DynamicNode> everyTestOfEveryClientFilePassesAgainstRealNodes() throws Exception {
    // -Dqueen.js2.only=kv,timers runs those files alone (a developer's loop; the build runs them all)
    List<String> only = List.of(System.getProperty("queen.js2.only", "").split(",")).stream()
        .filter(s -> !s.isBlank()).toList();
    List<Path> files = project.testFiles().stream().filter(f -> only.isEmpty()
        || only.contains(f.getFileName().toString().replace(".test.mjs", ""))).toList();
    if (files.isEmpty()) fail("no *.test.mjs files in " + project.dir().resolve("test") + " (only: " + only + ")");
    // a container's children are produced when JUnit reaches it: the file runs then, and its tests become the children
    return files.stream().map(file -> DynamicContainer.dynamicContainer(file.getFileName().toString(),
        Stream.of(file).flatMap(JsClient2IT::runFile)));
  }

  private static Stream<DynamicTest> runFile(Path file) {
    try {
      nodes.start();
      Path outcomes = Files.createTempFile("js2-outcomes", ".jsonl");
      try {
        JsClientProject.Result r = project.test(file, Map.of("QUEEN_URL", nodes.url(0), "QUEEN_URL_B", nodes.url(1),
                "QUEEN_CONTROL_URL", "http://127.0.0.1:" + control.getAddress().getPort()), PER_FILE,
            "--test-reporter=./lib/outcomes-reporter.mjs", "--test-reporter-destination=" + outcomes);
        return tests(file, Files.readAllLines(outcomes), r).stream();
      } finally {
        Files.deleteIfExists(outcomes);
      }
    } catch (Exception e) {
      return Stream.of(DynamicTest.dynamicTest("(the file could not run)", () -> {
        throw e;
      }));
    }
  }

  /** One JUnit test per top-level JS test; the failures of its subtests travel in its message. */
  private static List<DynamicTest> tests(Path file, List<String> lines, JsClientProject.Result run) {
    List<DynamicTest> tests = new ArrayList<>();
    StringBuilder nested = new StringBuilder();
    boolean failed = false;
    for (String line : lines) {
      if (line.isBlank()) continue;
      JsonObject o = new JsonObject(line);
      String failure = "fail".equals(o.getString("outcome"))
          ? o.getString("name") + ": " + o.getString("message") + "\n" + o.getString("stack", "") : null;
      if (o.getInteger("nesting") > 0) {
        if (failure != null) nested.append("  subtest ").append(failure).append('\n');
        continue;
      }
      String message = failure == null ? null : failure + nested + "\n--- node --test " + file.getFileName()
          + " (exit " + run.exit() + ") ---\n" + run.output();
      nested.setLength(0);
      failed |= message != null;
      tests.add(DynamicTest.dynamicTest(o.getString("name"), () -> {
        if (message != null) fail(message);
      }));
    }
    int reported = tests.size();
    if (reported == 0 || run.exit() == -1 || (run.exit() != 0 && !failed)) {
      // no outcome, a file killed at its time limit, or a failure outside any test (an unhandled rejection)
      tests.add(DynamicTest.dynamicTest("(the file)", () -> fail("node --test " + file.getFileName() + " exit "
          + run.exit() + " with " + reported + " tests reported:\n" + run.output())));
    }
    return tests;
  }

  private static void answer(HttpExchange exchange, Runnable action) throws IOException {
    int status = 200;
    String body = "{\"ok\":true}";
    try {
      if (!"POST".equals(exchange.getRequestMethod())) {
        status = 405;
        body = "{\"error\":\"POST only\"}";
      } else {
        action.run();
      }
    } catch (RuntimeException e) {
      status = 500;
      body = new JsonObject().put("error", String.valueOf(e)).encode();
    }
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().add("Content-Type", "application/json");
    exchange.sendResponseHeaders(status, bytes.length);
    exchange.getResponseBody().write(bytes);
    exchange.close();
  }

  /** The two nodes on one database, each always on its own port, so a client keeps its URLs across a restart. */
  static final class Nodes {
    private final Config.Database db;
    private final int[] ports;
    private final TestNode[] running;

    Nodes(Config.Database db, int... ports) {
      this.db = db;
      this.ports = ports;
      this.running = new TestNode[ports.length];
    }

    String url(int i) {
      return "http://127.0.0.1:" + ports[i];
    }

    synchronized void start() {
      for (int i = 0; i < ports.length; i++) {
        if (running[i] == null) running[i] = TestNode.start(Map.of("PORT", Integer.toString(ports[i])), db);
      }
    }

    synchronized void stop() {
      for (int i = 0; i < ports.length; i++) {
        if (running[i] != null) running[i].close();
        running[i] = null;
      }
    }
  }
}
