package io.queenvertx;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * A clone of the repository with nothing beside it must build and pass (issue 34, item 2): no build file, CI script,
 * test or test project may reach outside the checkout, and every package a test project installs from a file is a file
 * of the repository.
 *
 * <p>How it checks: it walks the checkout (not {@code .git}, build output or installed {@code node_modules}) and reads
 * every file that a build or a test run reads (poms, {@code .ci/}, test sources and resources, the test projects of
 * {@code clients-test/}, {@code deploy/}); none may name the contract folder beside the checkout (the pattern
 * {@link #OUTSIDE}). Then it resolves each {@code file:} dependency of each {@code package.json} and
 * {@code package-lock.json} under {@code clients-test/} and requires the file to exist inside the checkout.
 */
class RepositoryIsSelfContainedTest {
  private static final Pattern OUTSIDE = Pattern.compile("\\.\\./shared|shared[/]clients");
  private static final Set<String> SKIPPED_DIRS = Set.of(".git", "target", "node_modules", "data", ".idea");
  private static final Pattern FILE_DEP = Pattern.compile("\"file:([^\"]+)\"");

  static Path root() {
    for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
      if (Files.isRegularFile(p.resolve(".ci/run")) && Files.isRegularFile(p.resolve("pom.xml"))) return p;
    }
    throw new IllegalStateException("no checkout (.ci/run + pom.xml) above " + Path.of("").toAbsolutePath());
  }

  private static boolean readByBuildOrTests(Path root, Path file) {
    String rel = root.relativize(file).toString().replace('\\', '/');
    if (rel.endsWith(".tgz") || rel.endsWith(".png")) return false;
    return rel.equals("pom.xml") || rel.endsWith("/pom.xml") || rel.startsWith(".ci/") || rel.contains("/src/test/")
        || rel.startsWith("clients-test/") || rel.startsWith("deploy/") || rel.endsWith(".xml");
  }

  private static List<Path> files(Path root) throws IOException {
    List<Path> out = new ArrayList<>();
    try (Stream<Path> walk = Files.walk(root)) {
      walk.filter(Files::isRegularFile)
          .filter(f -> root.relativize(f).toString().isEmpty()
              || Stream.iterate(root.relativize(f), p -> p != null, Path::getParent)
                  .noneMatch(p -> SKIPPED_DIRS.contains(p.getFileName().toString())))
          .forEach(out::add);
    }
    return out;
  }

  @Test
  void noBuildFileScriptOrTestReachesBesideTheCheckout() throws IOException {
    Path root = root();
    List<String> offenders = new ArrayList<>();
    int read = 0;
    for (Path f : files(root)) {
      if (!readByBuildOrTests(root, f)) continue;
      read++;
      String text = Files.readString(f, java.nio.charset.StandardCharsets.ISO_8859_1);
      var m = OUTSIDE.matcher(text);
      if (m.find()) {
        offenders.add(root.relativize(f) + ": " + m.group());
      }
    }
    assertThat(read).as("files a build or a test run reads").isGreaterThan(100);
    assertThat(offenders).as("files that name a path beside the checkout").isEmpty();
  }

  @Test
  void everyPackageATestProjectInstallsFromAFileIsInTheRepository() throws IOException {
    Path root = root();
    List<String> deps = new ArrayList<>();
    for (Path f : files(root)) {
      String name = f.getFileName().toString();
      if (!root.relativize(f).startsWith("clients-test")) continue;
      if (!name.equals("package.json") && !name.equals("package-lock.json")) continue;
      new JsonObject(Files.readString(f)); // a parse error fails here, naming the file
      var m = FILE_DEP.matcher(Files.readString(f));
      while (m.find()) {
        Path target = f.getParent().resolve(m.group(1)).normalize();
        deps.add(root.relativize(f) + " -> " + m.group(1));
        assertThat(target.startsWith(root)).as("%s names %s, outside the checkout", f, m.group(1)).isTrue();
        assertThat(target).as("%s names %s", f, m.group(1)).isRegularFile();
      }
    }
    assertThat(deps).as("the JS client tests install queen-mq from the repository")
        .anyMatch(d -> d.contains("vendor/queen-mq-1.0.6.tgz"));
  }
}
