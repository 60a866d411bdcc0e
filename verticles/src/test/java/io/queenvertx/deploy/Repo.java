package io.queenvertx.deploy;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

/** The checkout the deploy tests read: its root, the Maven project version, YAML documents. */
final class Repo {
  static final ObjectMapper JSON = new ObjectMapper();

  private Repo() {}

  static Path root() {
    for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
      if (Files.isRegularFile(p.resolve(".ci/run")) && Files.isRegularFile(p.resolve("pom.xml"))) return p;
    }
    throw new IllegalStateException("no checkout (.ci/run + pom.xml) above " + Path.of("").toAbsolutePath());
  }

  static Path file(String relative) {
    return root().resolve(relative);
  }

  static String read(String relative) throws IOException {
    return Files.readString(file(relative));
  }

  /** The root pom's {@code <project><version>}. */
  static String projectVersion() throws Exception {
    var doc = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(file("pom.xml").toFile());
    for (Node n = doc.getDocumentElement().getFirstChild(); n != null; n = n.getNextSibling()) {
      if (n instanceof Element e && e.getTagName().equals("version")) return e.getTextContent().trim();
    }
    throw new IllegalStateException("the root pom has no version");
  }

  /** The newest released version of CHANGELOG.md: its first {@code ## x.y.z} heading (Unreleased is not one). */
  static String changelogVersion() throws IOException {
    Matcher m = Pattern.compile("(?m)^## (\\d+\\.\\d+\\.\\d+)\\b").matcher(read("CHANGELOG.md"));
    if (!m.find()) throw new IllegalStateException("CHANGELOG.md names no released version");
    return m.group(1);
  }

  /** Every YAML document of a file, as maps (SnakeYAML: anchors, aliases and {@code <<} merges resolved). */
  @SuppressWarnings("unchecked")
  static List<Map<String, Object>> yamlDocuments(String text) {
    List<Map<String, Object>> docs = new ArrayList<>();
    for (Object d : new org.yaml.snakeyaml.Yaml().loadAll(text)) {
      if (d != null) docs.add((Map<String, Object>) d);
    }
    return docs;
  }

  static Map<String, Object> yaml(String relative) throws IOException {
    List<Map<String, Object>> docs = yamlDocuments(read(relative));
    if (docs.size() != 1) throw new IllegalStateException(relative + " holds " + docs.size() + " documents");
    return docs.get(0);
  }

  /** {@code m[k1][k2]...}: maps by key, lists by index. */
  @SuppressWarnings("unchecked")
  static <T> T at(Object m, Object... path) {
    Object cur = m;
    for (Object k : path) {
      if (cur == null) return null;
      cur = k instanceof Integer i ? ((List<Object>) cur).get(i) : ((Map<String, Object>) cur).get(k);
    }
    return (T) cur;
  }
}
