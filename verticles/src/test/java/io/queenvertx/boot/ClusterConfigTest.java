package io.queenvertx.boot;

import io.queenvertx.kernel.ClusterSettings;
import static org.assertj.core.api.Assertions.assertThat;

import com.hazelcast.config.Config;
import com.hazelcast.spi.properties.ClusterProperty;
import com.hazelcast.spi.properties.HazelcastProperties;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hazelcast's failure detection and split-brain merge as a node runs them (issue 34: with Hazelcast's merge delays, a
 * node resumed after a freeze stayed apart for about 4 minutes). {@code ClusterFreezeIT} checks the behaviour with
 * two frozen and resumed JVMs; this checks the values every configuration path ends with.
 */
class ClusterConfigTest {
  static ClusterSettings settings(Path xml) {
    return new ClusterSettings(true, "127.0.0.1", ClusterSettings.DEFAULT_PORT, 0, "", "cfg-test", xml);
  }

  /** The seconds Hazelcast will use: the configuration's value, else a system property, else its default. */
  static long seconds(Config hz, com.hazelcast.spi.properties.HazelcastProperty p) {
    return new HazelcastProperties(hz).getSeconds(p);
  }

  static void assertDropsInTenSecondsAndMergesEveryTen(Config hz) {
    assertThat(seconds(hz, ClusterProperty.HEARTBEAT_INTERVAL_SECONDS)).isEqualTo(1);
    assertThat(seconds(hz, ClusterProperty.MAX_NO_HEARTBEAT_SECONDS)).isEqualTo(10);
    assertThat(seconds(hz, ClusterProperty.MERGE_FIRST_RUN_DELAY_SECONDS)).isEqualTo(10);
    assertThat(seconds(hz, ClusterProperty.MERGE_NEXT_RUN_DELAY_SECONDS)).isEqualTo(10);
  }

  @Test
  void thePackagedClusterXmlDropsASilentMemberInTenSecondsAndLooksForOtherClustersEveryTen() throws Exception {
    Config hz = ClusterConfig.load(settings(Path.of("no-such-cluster.xml")));
    assertDropsInTenSecondsAndMergesEveryTen(hz);
    // the file says so itself, not only the fallback
    Config file;
    try (var in = ClusterConfigTest.class.getResourceAsStream("/cluster.xml")) {
      file = new com.hazelcast.config.XmlConfigBuilder(in).build();
    }
    for (String name : ClusterConfig.LIVENESS.keySet()) {
      assertThat(file.getProperty(name)).as(name).isEqualTo(ClusterConfig.LIVENESS.get(name));
    }
  }

  @Test
  void aFileThatLeavesThemOutGetsTheSameValuesAndOneThatSetsOneKeepsIt(@TempDir Path dir) throws Exception {
    // like the ConfigMap of deploy/k8s: no heartbeat nor merge property
    Path bare = dir.resolve("bare.xml");
    Files.writeString(bare, """
        <hazelcast xmlns="http://www.hazelcast.com/schema/config">
          <properties><property name="hazelcast.logging.type">slf4j</property></properties>
        </hazelcast>
        """);
    assertDropsInTenSecondsAndMergesEveryTen(ClusterConfig.load(settings(bare)));

    Path own = dir.resolve("own.xml");
    Files.writeString(own, """
        <hazelcast xmlns="http://www.hazelcast.com/schema/config">
          <properties><property name="hazelcast.merge.next.run.delay.seconds">45</property></properties>
        </hazelcast>
        """);
    Config hz = ClusterConfig.load(settings(own));
    assertThat(seconds(hz, ClusterProperty.MERGE_NEXT_RUN_DELAY_SECONDS)).isEqualTo(45);
    assertThat(seconds(hz, ClusterProperty.MERGE_FIRST_RUN_DELAY_SECONDS)).isEqualTo(10);
  }
}
