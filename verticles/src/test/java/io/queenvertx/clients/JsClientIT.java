package io.queenvertx.clients;

import static org.junit.jupiter.api.Assertions.fail;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Queen's JavaScript client ({@code queen-mq} 1.0.6) against a real node: every {@code clients-test/js/test/*.test.mjs}
 * file runs under {@code node --test}, one JUnit test per file, and a failing file fails here with node's output.
 *
 * <p>Without the client tarball (beside the checkout or at {@code QUEEN_JS_CLIENT_TGZ}) this fails, naming both
 * places; only {@code QUEEN_JS_CLIENT_SKIP=1}, which {@code .ci/run} sets after warning loudly, turns that into a skip.
 */
class JsClientIT {
  private static final Duration PER_FILE = Duration.ofSeconds(120);

  @NodeFixture(freshDatabase = true) // the files list consumer groups and trace names: no other test's rows
  static TestNode node;
  static JsClientProject project;

  @BeforeAll
  static void install() throws Exception {
    project = JsClientProject.find();
    String envPath = System.getenv("QUEEN_JS_CLIENT_TGZ");
    Optional<Path> tarball = project.tarball(envPath);
    if (tarball.isEmpty()) {
      String missing = "Queen's JavaScript client " + JsClientProject.TARBALL + " is neither at "
          + project.besideCheckout() + " nor at QUEEN_JS_CLIENT_TGZ ("
          + (envPath == null ? "unset" : "'" + envPath + "'") + ")";
      if ("1".equals(System.getenv("QUEEN_JS_CLIENT_SKIP"))) {
        System.err.println("!!!!! JsClientIT SKIPPED: " + missing + " (QUEEN_JS_CLIENT_SKIP=1) !!!!!");
        Assumptions.abort(missing + "; skipped because QUEEN_JS_CLIENT_SKIP=1");
      }
      fail(missing + ". Put the contract folder beside the checkout or point QUEEN_JS_CLIENT_TGZ at the tarball.");
    }
    project.install(tarball.get());
  }

  @TestFactory
  List<DynamicTest> everyClientTestFilePassesAgainstARealNode() throws Exception {
    List<Path> files = project.testFiles();
    if (files.isEmpty()) fail("no *.test.mjs files in " + project.dir().resolve("test"));
    return files.stream().map(file -> DynamicTest.dynamicTest(file.getFileName().toString(), () -> {
      JsClientProject.Result r = project.test(file, node.baseUrl(), PER_FILE);
      if (r.exit() != 0) fail("node --test " + file.getFileName() + " failed (exit " + r.exit() + "):\n" + r.output());
    })).toList();
  }
}
