package io.queenvertx.clients;

import static org.junit.jupiter.api.Assertions.fail;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Queen's JavaScript client ({@code queen-mq} 1.0.6) against a real node: every {@code clients-test/js/test/*.test.mjs}
 * file runs under {@code node --test}, one JUnit test per file, and a failing file fails here with node's output.
 *
 */
class JsClientIT {
  private static final Duration PER_FILE = Duration.ofSeconds(120);

  @NodeFixture(freshDatabase = true) // the files list consumer groups and trace names: no other test's rows
  static TestNode node;
  static JsClientProject project;

  @BeforeAll
  static void install() throws Exception {
    project = JsClientProject.find();
    project.install();
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
