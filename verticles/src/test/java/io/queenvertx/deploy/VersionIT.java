package io.queenvertx.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import org.junit.jupiter.api.Test;

/**
 * One version everywhere: the newest released heading of CHANGELOG.md, the Maven project version (the release archive's
 * name, the image tag of deploy/), the version a running node reports on {@code /health} and qvctl's own.
 */
class VersionIT {
  @NodeFixture
  static TestNode node;

  @Test
  void theChangelogThePomTheNodeAndQvctlNameTheSameVersion() throws Exception {
    String pom = Repo.projectVersion();
    assertThat(Repo.changelogVersion()).as("CHANGELOG.md's newest release").isEqualTo(pom);
    var health = node.get("/health");
    assertThat(health.status()).isEqualTo(200);
    assertThat(health.json().getString("version")).as("/health").isEqualTo(pom);
    var out = new java.io.ByteArrayOutputStream();
    int code = io.queenvertx.cli.Qvctl.run(new String[] {"--version"}, java.io.InputStream.nullInputStream(),
        new java.io.PrintStream(out, true, java.nio.charset.StandardCharsets.UTF_8), System.err,
        java.util.Map.of(), null, false);
    assertThat(code).isZero();
    assertThat(out.toString(java.nio.charset.StandardCharsets.UTF_8).strip()).as("qvctl --version")
        .isEqualTo("qvctl " + pom);
  }
}
