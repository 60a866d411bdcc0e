package io.queenvertx.deploy;

import static io.queenvertx.deploy.Repo.at;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The container files (no Docker engine here, so they are read, not run): the image builds from the release archive
 * with a context that leaves out .git, build output and a local data folder, runs as an unprivileged user, checks its
 * health on the port it is configured with, and is labelled with its version; the compose file pins its images, keeps
 * each node's spool in a named volume, raises the open-file limit and provisions Grafana with the dashboard.
 */
class ContainerFilesTest {
  static final String DOCKERFILE = "deploy/Dockerfile";
  static final String COMPOSE = "deploy/docker-compose.yml";

  /** The Dockerfile's instructions (continuation lines joined, comments dropped), each "KEYWORD rest". */
  static List<String> instructions() throws Exception {
    List<String> out = new ArrayList<>();
    StringBuilder cur = new StringBuilder();
    for (String line : Repo.read(DOCKERFILE).lines().toList()) {
      String l = line.strip();
      if (l.startsWith("#") || (l.isEmpty() && cur.length() == 0)) continue;
      boolean more = l.endsWith("\\");
      cur.append(more ? l.substring(0, l.length() - 1) : l).append(' ');
      if (!more) {
        out.add(cur.toString().strip());
        cur.setLength(0);
      }
    }
    return out;
  }

  /** The instructions of the final (runtime) stage. */
  static List<String> finalStage() throws Exception {
    List<String> all = instructions();
    int last = 0;
    for (int i = 0; i < all.size(); i++) if (all.get(i).startsWith("FROM ")) last = i;
    return all.subList(last, all.size());
  }

  @Test
  void theBuildContextLeavesOutGitBuildOutputAndData() throws Exception {
    List<String> rules = Repo.read(".dockerignore").lines().map(String::strip)
        .filter(l -> !l.isEmpty() && !l.startsWith("#")).toList();
    assertThat(rules).contains(".git", "**/target", "data");
    assertThat(rules).noneMatch(r -> r.startsWith("!")).as("nothing excluded is brought back");
  }

  @Test
  void theImageRunsAsAnUnprivilegedUser() throws Exception {
    List<String> users = finalStage().stream().filter(i -> i.startsWith("USER ")).toList();
    assertThat(users).hasSize(1);
    String user = users.get(0).substring(5).strip().split(":")[0];
    assertThat(user).isNotIn("root", "0");
    assertThat(finalStage().indexOf(users.get(0))).as("USER comes before the entry point")
        .isLessThan(finalStage().indexOf(finalStage().stream().filter(i -> i.startsWith("ENTRYPOINT")).findFirst()
            .orElseThrow()));
    // the same uid as the Kubernetes securityContext
    Map<String, Object> set = K8sManifestsTest.one(K8sManifestsTest.resources(), "StatefulSet", "queen-vertx");
    assertThat(String.valueOf((Integer) at(set, "spec", "template", "spec", "securityContext", "runAsUser")))
        .isEqualTo(user);
  }

  @Test
  void theHealthCheckUsesTheConfiguredPort() throws Exception {
    List<String> checks = finalStage().stream().filter(i -> i.startsWith("HEALTHCHECK ")).toList();
    assertThat(checks).hasSize(1);
    String check = checks.get(0);
    // shell form (CMD "..."), so the container's PORT is expanded when the check runs
    assertThat(check).containsPattern("CMD [^\\[]").containsPattern("127\\.0\\.0\\.1:\\$\\{?PORT\\}?/health/");
    assertThat(check).doesNotContain(":6632");
    assertThat(finalStage()).anyMatch(i -> i.startsWith("ENV ") && i.contains("PORT=6632"));
  }

  @Test
  void theImageIsLabelledWithItsVersionAndBuiltFromTheReleaseArchive() throws Exception {
    List<String> all = instructions();
    Matcher arg = Pattern.compile("^ARG VERSION=(\\S+)$").matcher(all.get(0));
    assertThat(arg.matches()).as("the first instruction is ARG VERSION=<version>: %s", all.get(0)).isTrue();
    assertThat(arg.group(1)).isEqualTo(Repo.projectVersion());
    assertThat(finalStage()).contains("ARG VERSION");
    assertThat(finalStage()).anyMatch(i -> i.startsWith("LABEL ")
        && i.contains("org.opencontainers.image.version=\"${VERSION}\""));
    assertThat(all).anyMatch(i -> i.startsWith("RUN ") && i.contains("dist/target/queen-vertx-*.tar.gz"));
    assertThat(finalStage()).anyMatch(i -> i.startsWith("ENTRYPOINT") && i.contains("/opt/queen/lib/queen-vertx.jar"));
  }

  @Test
  void composePinsItsImagesKeepsSpoolsInNamedVolumesAndRaisesTheFileLimit() throws Exception {
    Map<String, Object> compose = Repo.yaml(COMPOSE);
    Map<String, Map<String, Object>> services = at(compose, "services");
    Map<String, Object> volumes = at(compose, "volumes");
    for (var e : services.entrySet()) {
      String image = (String) e.getValue().get("image");
      assertThat(image).as("image of %s", e.getKey()).isNotNull().matches(".+:[^:]*\\d[^:]*")
          .doesNotEndWith(":latest");
    }
    List<String> nodes = services.keySet().stream().filter(s -> s.startsWith("queen-")).toList();
    assertThat(nodes).hasSize(3);
    String dataDir = "/var/lib/queen";
    for (String n : nodes) {
      Map<String, Object> s = services.get(n);
      assertThat((String) s.get("image")).isEqualTo("queen-vertx:" + Repo.projectVersion());
      List<String> mounts = at(s, "volumes");
      String spool = mounts.stream().filter(m -> m.endsWith(":" + dataDir)).findFirst()
          .orElseThrow(() -> new AssertionError(n + " has no volume at " + dataDir));
      String volume = spool.substring(0, spool.indexOf(':'));
      assertThat(volumes).as("%s's spool is a named volume", n).containsKey(volume);
      assertThat((Integer) at(s, "ulimits", "nofile", "soft")).isGreaterThanOrEqualTo(65536);
      assertThat((Integer) at(s, "ulimits", "nofile", "hard")).isGreaterThanOrEqualTo(65536);
    }
    assertThat(nodes.stream().map(n -> ((List<?>) at(services.get(n), "volumes")).get(0))).doesNotHaveDuplicates();
    assertThat(Repo.read(DOCKERFILE)).contains("FILE_BUFFER_DIR=" + dataDir + "/buffers");
  }

  @Test
  void composeProvisionsGrafanaWithTheDashboardAndPrometheusScrapesEveryNode() throws Exception {
    Map<String, Object> compose = Repo.yaml(COMPOSE);
    Map<String, Object> grafana = at(compose, "services", "grafana");
    List<String> mounts = at(grafana, "volumes");
    assertThat(mounts).contains("./grafana/provisioning:/etc/grafana/provisioning:ro",
        "./grafana/dashboards:/var/lib/grafana/dashboards:ro");
    Map<String, Object> provider = at(Repo.yaml("deploy/grafana/provisioning/dashboards/queen-vertx.yml"),
        "providers", 0);
    assertThat((String) at(provider, "options", "path")).isEqualTo("/var/lib/grafana/dashboards");
    Map<String, Object> source = at(Repo.yaml("deploy/grafana/provisioning/datasources/prometheus.yml"),
        "datasources", 0);
    assertThat((String) source.get("url")).isEqualTo("http://prometheus:9090");
    var dashboard = Repo.JSON.readTree(Repo.file("deploy/grafana/dashboards/queen-vertx.json").toFile());
    assertThat(dashboard.findValuesAsText("uid")).contains((String) source.get("uid"));

    Map<String, Object> prom = Repo.yaml("deploy/prometheus.yml");
    Map<String, Object> job = at(prom, "scrape_configs", 0);
    assertThat((String) job.get("metrics_path")).isEqualTo("/metrics/prometheus");
    List<String> targets = at(job, "static_configs", 0, "targets");
    Map<String, Object> services = at(compose, "services");
    assertThat(targets).containsExactlyInAnyOrderElementsOf(services.keySet().stream()
        .filter(s -> s.startsWith("queen-")).map(s -> s + ":6632").toList());
  }
}
