package io.queenvertx.boot;

import com.hazelcast.config.XmlConfigBuilder;
import java.io.InputStream;
import java.nio.file.Files;
import java.util.Arrays;

/**
 * The Hazelcast configuration of a clustered node: {@code cluster.xml} (path from {@code QUEEN_CLUSTER_CONFIG}, else
 * the one in the working directory, else the copy packaged in the jar), then the environment's overrides for the
 * cluster name, port, interface and TCP-IP members. Multicast and phone-home stay off. With
 * {@code QUEEN_CLUSTER_INTERFACE} set, the member listens on that interface only; without it Hazelcast's default
 * applies (it listens on every interface), so a production node on a shared network sets it.
 */
final class ClusterConfig {
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
