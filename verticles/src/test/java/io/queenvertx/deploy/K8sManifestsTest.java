package io.queenvertx.deploy;

import static io.queenvertx.deploy.Repo.at;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

import com.google.gson.JsonElement;
import com.google.gson.JsonParser;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * deploy/k8s, the kustomize base: every manifest is validated against the Kubernetes API schema (the models of the
 * official Java client, {@code io.kubernetes:client-java-api}, generated from Kubernetes' OpenAPI document: they refuse
 * unknown fields, missing required fields and wrong types); the kustomization is rendered by {@code kubectl kustomize}
 * (.ci/run installs Debian's kubernetes-client when kubectl is missing) and the result validated again; and the pods
 * hold in production (resources, a locked-down securityContext with a read-only root file system, probes, a
 * PodDisruptionBudget, readiness that keeps a spooling node in its Service).
 */
class K8sManifestsTest {
  static final String BASE = "deploy/k8s";

  static Map<String, Object> kustomization() throws IOException {
    return Repo.yaml(BASE + "/kustomization.yaml");
  }

  /** The resources of the base, as its files hold them. */
  static List<Map<String, Object>> resources() throws IOException {
    List<Map<String, Object>> out = new ArrayList<>();
    for (Object f : (List<?>) kustomization().get("resources")) {
      out.addAll(Repo.yamlDocuments(Repo.read(BASE + "/" + f)));
    }
    return out;
  }

  static Map<String, Object> one(List<Map<String, Object>> docs, String kind, String name) {
    return docs.stream().filter(d -> kind.equals(d.get("kind")) && name.equals(at(d, "metadata", "name")))
        .findFirst().orElseThrow(() -> new AssertionError("no " + kind + " " + name));
  }

  /**
   * Validates one manifest against the schema of its apiVersion and kind: the client model's validateJsonElement
   * (unknown fields, required fields, JSON kinds), then its fromJson (types: a port that is not a number fails).
   */
  static void validate(Map<String, Object> doc) throws Exception {
    String apiVersion = (String) doc.get("apiVersion");
    String version = apiVersion.substring(apiVersion.indexOf('/') + 1);
    String cls = "io.kubernetes.client.openapi.models." + Character.toUpperCase(version.charAt(0))
        + version.substring(1) + doc.get("kind");
    Class<?> model;
    try {
      model = Class.forName(cls);
    } catch (ClassNotFoundException e) {
      throw new AssertionError("no Kubernetes schema for " + apiVersion + " " + doc.get("kind"), e);
    }
    String json = Repo.JSON.writeValueAsString(doc);
    try {
      model.getMethod("validateJsonElement", JsonElement.class).invoke(null, JsonParser.parseString(json));
      model.getMethod("fromJson", String.class).invoke(null, json);
    } catch (InvocationTargetException e) {
      throw new IllegalArgumentException(apiVersion + " " + doc.get("kind") + " " + at(doc, "metadata", "name") + ": "
          + e.getCause().getMessage(), e.getCause());
    }
  }

  @Test
  void theKustomizationListsEveryManifestOfTheFolderAndNothingElse() throws IOException {
    Set<String> listed = new TreeSet<>();
    for (Object f : (List<?>) kustomization().get("resources")) listed.add((String) f);
    Set<String> present = new TreeSet<>();
    try (Stream<Path> s = Files.list(Repo.file(BASE))) {
      s.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".yaml") || n.endsWith(".yml"))
          .filter(n -> !n.equals("kustomization.yaml")).forEach(present::add);
    }
    assertThat(listed).isEqualTo(present);
    assertThat(kustomization()).containsKeys("namespace", "images");
  }

  @Test
  void everyManifestPassesTheKubernetesSchema() throws Exception {
    List<Map<String, Object>> docs = resources();
    assertThat(docs.stream().map(d -> (String) d.get("kind"))).contains("StatefulSet", "Service",
        "PodDisruptionBudget", "ConfigMap", "Secret");
    for (Map<String, Object> d : docs) validate(d);
  }

  @Test
  void theValidatorRefusesUnknownFieldsWrongTypesAndMissingRequiredOnes() throws Exception {
    Map<String, Object> set = one(resources(), "StatefulSet", "queen-vertx");
    Map<String, Object> container = at(set, "spec", "template", "spec", "containers", 0);

    container.put("readinesProbe", Map.of("httpGet", Map.of("path", "/health/ready", "port", "http")));
    assertThatThrownBy(() -> validate(set)).hasMessageContaining("readinesProbe");
    container.remove("readinesProbe");

    Map<String, Object> port = at(container, "ports", 0);
    port.put("containerPort", "six-six-three-two");
    assertThatThrownBy(() -> validate(set)).isInstanceOf(IllegalArgumentException.class);
    port.put("containerPort", 6632);

    Object name = container.remove("name");
    assertThatThrownBy(() -> validate(set)).hasMessageContaining("name");
    container.put("name", name);
    validate(set);
  }

  @Test
  void kustomizeRendersTheBaseIntoItsNamespaceWithItsImage() throws Exception {
    String rendered = kubectl("kustomize", Repo.file(BASE).toString());
    List<Map<String, Object>> docs = Repo.yamlDocuments(rendered);
    assertThat(docs).hasSize(resources().size());
    String namespace = (String) kustomization().get("namespace");
    Map<String, Object> image = at(kustomization(), "images", 0);
    for (Map<String, Object> d : docs) {
      validate(d);
      assertThat((String) at(d, "metadata", "namespace")).as("namespace of %s", d.get("kind")).isEqualTo(namespace);
    }
    Map<String, Object> set = one(docs, "StatefulSet", "queen-vertx");
    assertThat((String) at(set, "spec", "template", "spec", "containers", 0, "image"))
        .isEqualTo(image.get("newName") + ":" + image.get("newTag"));
    assertThat(String.valueOf(image.get("newTag"))).as("the image tag is the release's version")
        .isEqualTo(Repo.projectVersion());
  }

  @Test
  void thePodsAreLimitedLockedDownProbedAndKeptInTheServiceWhileTheySpool() throws Exception {
    List<Map<String, Object>> docs = resources();
    Map<String, Object> set = one(docs, "StatefulSet", "queen-vertx");
    Map<String, Object> pod = at(set, "spec", "template", "spec");
    Map<String, Object> c = at(pod, "containers", 0);
    Map<String, String> labels = at(set, "spec", "template", "metadata", "labels");

    for (String kind : List.of("requests", "limits")) {
      assertThat((Map<String, Object>) at(c, "resources", kind)).as(kind).containsKeys("cpu", "memory");
    }
    assertThat((Boolean) at(pod, "securityContext", "runAsNonRoot")).isTrue();
    assertThat((Integer) at(pod, "securityContext", "runAsUser")).isPositive();
    assertThat((Boolean) at(c, "securityContext", "readOnlyRootFilesystem")).isTrue();
    assertThat((Boolean) at(c, "securityContext", "allowPrivilegeEscalation")).isFalse();
    assertThat((List<String>) at(c, "securityContext", "capabilities", "drop")).contains("ALL");
    // with a read-only root, every place the node writes is a volume: the spool/data folder and /tmp
    Map<String, String> settings = at(one(docs, "ConfigMap", "queen-vertx-settings"), "data");
    List<String> mounts = ((List<Map<String, Object>>) c.get("volumeMounts")).stream()
        .filter(m -> !Boolean.TRUE.equals(m.get("readOnly"))).map(m -> (String) m.get("mountPath")).toList();
    assertThat(mounts).contains("/tmp");
    assertThat(settings.get("FILE_BUFFER_DIR")).matches(d -> mounts.stream().anyMatch(d::startsWith));
    assertThat(settings.get("QUEEN_DATA_DIR")).matches(d -> mounts.stream().anyMatch(d::startsWith));
    List<Map<String, Object>> claims = at(set, "spec", "volumeClaimTemplates");
    assertThat(claims.stream().map(v -> (String) at(v, "metadata", "name"))).contains("spool");

    assertThat((String) at(c, "readinessProbe", "httpGet", "path")).isEqualTo("/health/ready");
    assertThat((String) at(c, "livenessProbe", "httpGet", "path")).isEqualTo("/health/live");
    assertThat((String) at(c, "startupProbe", "httpGet", "path")).isEqualTo("/health/live");

    Map<String, Object> pdb = one(docs, "PodDisruptionBudget", "queen-vertx");
    assertThat(labels).containsAllEntriesOf(at(pdb, "spec", "selector", "matchLabels"));
    for (String svc : List.of("queen-vertx", "queen-vertx-hz")) {
      assertThat(labels).containsAllEntriesOf(at(one(docs, "Service", svc), "spec", "selector"));
    }
    assertThat((String) at(set, "spec", "serviceName")).isEqualTo("queen-vertx-hz");
    assertThat((String) at(one(docs, "ConfigMap", "queen-vertx-cluster"), "data", "cluster.xml"))
        .contains("<service-dns>queen-vertx-hz</service-dns>");
  }

  /** kubectl's output; fails naming how to install it when it is missing. */
  static String kubectl(String... args) throws Exception {
    List<String> cmd = new ArrayList<>(List.of("kubectl"));
    cmd.addAll(List.of(args));
    Process p;
    try {
      p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD).start();
    } catch (IOException e) {
      return fail("kubectl is not installed (Debian: apt-get install -y kubernetes-client; .ci/run installs it when "
          + "missing): " + e.getMessage());
    }
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as("%s: %s", cmd, out).isZero();
    return out;
  }
}
