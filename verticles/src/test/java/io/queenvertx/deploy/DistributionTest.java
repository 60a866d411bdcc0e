package io.queenvertx.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Element;

/**
 * The release archive `mvn package` builds (dist/target/queen-vertx-VERSION.tar.gz): its assembly names the broker jar,
 * qvctl (script and jar), the deploy files, LICENSE and README, each as a file that must exist when the archive is
 * made; bin/qvctl is an executable POSIX sh script.
 */
class DistributionTest {
  static Element xml(String relative) throws Exception {
    return DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(Repo.file(relative).toFile())
        .getDocumentElement();
  }

  static List<String> texts(Element root, String tag) {
    List<String> out = new ArrayList<>();
    var nodes = root.getElementsByTagName(tag);
    for (int i = 0; i < nodes.getLength(); i++) out.add(nodes.item(i).getTextContent().trim());
    return out;
  }

  @Test
  void theArchiveHoldsTheBrokerQvctlTheDeployFilesTheLicenseAndTheReadme() throws Exception {
    Element assembly = xml("dist/src/assembly/release.xml");
    assertThat(texts(assembly, "format")).containsExactly("tar.gz");
    assertThat(texts(assembly, "baseDirectory")).containsExactly("queen-vertx-${project.version}");
    List<String> files = texts(assembly, "source").stream()
        .map(s -> s.replace("${project.basedir}/../", "")).toList();
    assertThat(files).contains("verticles/target/queen-vertx.jar", "cli/target/qvctl.jar", "bin/qvctl", "LICENSE",
        "README.md", "CHANGELOG.md", "cluster.xml");
    for (String f : files) {
      if (!f.contains("/target/")) assertThat(Repo.file(f)).as("%s exists", f).isRegularFile();
    }
    assertThat(texts(assembly, "directory")).contains("${project.basedir}/../deploy");
    assertThat(texts(assembly, "exclude")).contains("bench/**");

    Element pom = xml("dist/pom.xml");
    assertThat(texts(pom, "finalName")).containsExactly("queen-vertx-${project.version}");
    assertThat(texts(pom, "appendAssemblyId")).containsExactly("false");
    assertThat(texts(xml("pom.xml"), "module")).contains("cli", "dist");
  }

  @Test
  void binQvctlIsAnExecutablePosixShellScript() throws Exception {
    var script = Repo.file("bin/qvctl");
    assertThat(Files.readString(script)).startsWith("#!/bin/sh\n");
    assertThat(Files.getPosixFilePermissions(script)).contains(PosixFilePermission.OWNER_EXECUTE,
        PosixFilePermission.OTHERS_EXECUTE);
    // dash is Debian's /bin/sh: a strict POSIX shell
    Process p = new ProcessBuilder("sh", "-n", script.toString()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(out).isZero();
  }
}
