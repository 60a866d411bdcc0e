package io.queenvertx.boot;

import io.queenvertx.kernel.ClusterSettings;
import com.hazelcast.config.XmlConfigBuilder;
import java.io.InputStream;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.Map;

/**
 * The Hazelcast configuration of a clustered node: {@code cluster.xml} (path from {@code QUEEN_CLUSTER_CONFIG}, else
 * the one in the working directory, else the copy packaged in the jar), then the environment's overrides for the
 * cluster name, port, interface and TCP-IP members, and {@link #LIVENESS} where nothing sets it. Multicast and
 * phone-home stay off. With {@code QUEEN_CLUSTER_INTERFACE} set, the member listens on that interface only; without
 * it Hazelcast's default applies (it listens on every interface), so a production node on a shared network sets it.
 */
final class ClusterConfig {
  /**
   * Failure detection and split-brain merge, as in the packaged {@code cluster.xml}: applied when the file in use
   * (an older copy, the Kubernetes ConfigMap of {@code deploy/}) and the JVM's system properties leave one unset, so a
   * member dropped while frozen or cut off rejoins within about 20 s of being reachable instead of Hazelcast's
   * minutes (300 s, then every 120 s).
   */
  static final Map<String, String> LIVENESS = Map.of(
      "hazelcast.heartbeat.interval.seconds", "1",
      "hazelcast.max.no.heartbeat.seconds", "10",
      "hazelcast.merge.first.run.delay.seconds", "10",
      "hazelcast.merge.next.run.delay.seconds", "10");

  private ClusterConfig() {}

  static com.hazelcast.config.Config load(ClusterSettings cluster) throws Exception {
    com.hazelcast.config.Config hz;
    if (Files.isRegularFile(cluster.xmlFile())) {
      try (InputStream in = Files.newInputStream(cluster.xmlFile())) {
        hz = new XmlConfigBuilder(in).build();
      }
    } else {
      try (InputStream in = ClusterConfig.class.getResourceAsStream("/cluster.xml")) {
        if (in == null) throw new IllegalStateException("no cluster.xml found at " + cluster.xmlFile());
        hz = new XmlConfigBuilder(in).build();
      }
    }
    hz.setClusterName(cluster.name());
    hz.setProperty("hazelcast.phone.home.enabled", "false");
    hz.setProperty("hazelcast.logging.type", "slf4j");
    LIVENESS.forEach((name, value) -> {
      if (hz.getProperty(name) == null && System.getProperty(name) == null) hz.setProperty(name, value);
    });
    var net = hz.getNetworkConfig();
    net.setPort(cluster.port()).setPortAutoIncrement(true).setPortCount(20);
    var join = net.getJoin();
    join.getMulticastConfig().setEnabled(false);
    if (!join.getKubernetesConfig().isEnabled()) {
      var tcp = join.getTcpIpConfig().setEnabled(true);
      tcp.getMembers().clear();
      Arrays.stream(cluster.members().split(",")).map(String::trim).filter(s -> !s.isEmpty())
          .forEach(tcp::addMember);
    }
    if (!cluster.networkInterface().isEmpty()) {
      // Choosing the interface only picks the member's advertised address: Hazelcast still binds its server socket
      // to every interface (0.0.0.0) unless bind-any is off (issue 18, item 9).
      net.getInterfaces().setEnabled(true).addInterface(cluster.networkInterface());
      hz.setProperty("hazelcast.socket.bind.any", "false");
      hz.setProperty("hazelcast.socket.server.bind.any", "false");
      hz.setProperty("hazelcast.socket.client.bind.any", "false");
    }
    return hz;
  }
}
