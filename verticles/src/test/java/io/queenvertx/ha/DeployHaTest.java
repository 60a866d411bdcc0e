package io.queenvertx.ha;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.kernel.Config;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/**
 * The high-availability deployments that cannot run here (no Docker, no Kubernetes) at least parse, keep the
 * settings README "High availability" relies on, and give the brokers settings their configuration accepts; the
 * local script's syntax holds and {@code down} without {@code up} is harmless.
 */
class DeployHaTest {
  static final Path HA = Path.of("..", "deploy", "ha");

  @SuppressWarnings("unchecked")
  static <T> T at(Object node, String... path) {
    Object o = node;
    for (String p : path) o = ((Map<String, Object>) o).get(p);
    return (T) o;
  }

  @Test
  void theComposeFileRunsThreePatroniMembersOnEtcdAndBrokersThatFollowThePrimary() throws Exception {
    Map<String, Object> compose = new Yaml().load(Files.readString(HA.resolve("docker-compose.yml")));
    Map<String, Object> services = at(compose, "services");
    assertThat(services).containsKeys("etcd", "pg1", "pg2", "pg3", "queen-1", "queen-2");
    for (String m : List.of("pg1", "pg2", "pg3")) {
      assertThat((String) at(services, m, "environment", "PATRONI_NAME")).isEqualTo(m);
      Map<String, Object> env = at(services, m, "environment");
      assertThat(env).containsKeys("PATRONI_SUPERUSER_PASSWORD", "PATRONI_REPLICATION_PASSWORD",
          "PATRONI_REWIND_PASSWORD");
      assertThat((String) at(services, m, "build")).isEqualTo("./patroni");
    }
    for (String b : List.of("queen-1", "queen-2")) {
      Map<String, Object> env = at(services, b, "environment");
      assertThat(env).containsEntry("PG_HOST", "pg1,pg2,pg3");
      Config.Database db = accepted(env).postgres().connection().orElseThrow();
      assertThat(db.hosts()).hasSize(3);
      assertThat(db.target()).isEqualTo(Config.Target.READ_WRITE);
    }
    assertThat(Files.exists(HA.resolve("patroni").resolve("Dockerfile"))).isTrue();
  }

  @Test
  void patroniAcknowledgesOnlyWhatASynchronousStandbyHas() throws Exception {
    Map<String, Object> conf = new Yaml().load(Files.readString(HA.resolve("patroni").resolve("patroni.yml")));
    Map<String, Object> dcs = at(conf, "bootstrap", "dcs");
    assertThat(dcs).containsEntry("synchronous_mode", true).containsEntry("synchronous_mode_strict", true);
    assertThat((String) at(dcs, "postgresql", "parameters", "synchronous_commit")).isEqualTo("on");
    // etcd's v2 API: Patroni 3.0.2's etcd3 code can hand the leader key back to a primary that wakes up late
    assertThat((String) at(conf, "etcd", "hosts")).isEqualTo("etcd:2379");
  }

  @Test
  void theCloudNativePgClusterHasThreeInstancesASynchronousStandbyAndBrokersOnItsReadWriteService()
      throws Exception {
    List<Map<String, Object>> docs = new ArrayList<>();
    for (Object d : new Yaml().loadAll(Files.readString(HA.resolve("cnpg-cluster.yaml")))) {
      docs.add(at(d));
    }
    Map<String, Object> cluster = docs.stream().filter(d -> "Cluster".equals(d.get("kind"))).findFirst().orElseThrow();
    assertThat((String) cluster.get("apiVersion")).isEqualTo("postgresql.cnpg.io/v1");
    assertThat((Integer) at(cluster, "spec", "instances")).isEqualTo(3);
    Map<String, Object> sync = at(cluster, "spec", "postgresql", "synchronous");
    assertThat(sync).containsEntry("number", 1).containsEntry("dataDurability", "required");
    Map<String, Object> sts = docs.stream().filter(d -> "StatefulSet".equals(d.get("kind"))).findFirst()
        .orElseThrow();
    List<Map<String, Object>> containers = at(sts, "spec", "template", "spec", "containers");
    Map<String, String> env = new HashMap<>();
    for (Object e : (List<?>) containers.get(0).get("env")) {
      Map<String, Object> v = at(e);
      env.put((String) v.get("name"), v.containsKey("value") ? (String) v.get("value") : "from-" + v.get("name"));
    }
    assertThat(env).containsEntry("PG_HOST", "queen-pg-rw").containsEntry("PG_READ_HOSTS", "queen-pg-ro");
    Config c = accepted(env);
    assertThat(c.postgres().connection().orElseThrow().target()).isEqualTo(Config.Target.READ_WRITE);
    assertThat(c.postgres().readHosts()).containsExactly(new Config.Host("queen-pg-ro", 5432));
  }

  @Test
  void theLocalScriptParsesAndDownWithoutUpIsHarmless() throws Exception {
    Path script = HA.resolve("local-ha.sh");
    assertThat(run(List.of("bash", "-n", script.toString()), Map.of())).isZero();
    Path parent = Files.createTempDirectory("queen-ha-none");
    Path nothing = parent.resolve("never-started");
    assertThat(run(List.of("bash", script.toString(), "down"), Map.of("HA_DIR", nothing.toString()))).isZero();
    assertThat(nothing).doesNotExist();
    Files.delete(parent);
    assertThat(run(List.of("bash", script.toString(), "nonsense"), Map.of())).isEqualTo(2);
  }

  private static int run(List<String> cmd, Map<String, String> env) throws Exception {
    var pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.environment().putAll(env);
    Process p = pb.start();
    p.getInputStream().readAllBytes();
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    return p.exitValue();
  }

  /** The broker's configuration from these variables (every value must be accepted). */
  private static Config accepted(Map<String, ?> env) {
    Map<String, String> vars = new HashMap<>();
    env.forEach((k, v) -> vars.put(k, String.valueOf(v)));
    return Config.from(vars);
  }
}
