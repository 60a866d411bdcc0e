package io.queenvertx.boot;

import io.queenvertx.kernel.Config;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import io.queenvertx.testing.TestNode;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Issue 18, item 9: with {@code QUEEN_CLUSTER_INTERFACE=127.0.0.1} the Hazelcast member listens on 127.0.0.1 only,
 * not on every interface. Checked three ways: the member's address, the kernel's table of listening sockets, and a
 * connection attempt to another loopback address (127.0.0.2 reaches a socket bound to 0.0.0.0, not one bound to
 * 127.0.0.1).
 */
class ClusterBindIT {

  @Test
  void withAClusterInterfaceTheMemberListensOnThatAddressOnly() throws Exception {
    int port = TestNode.freePort();
    var config = Config.from(Map.of("QUEEN_CLUSTER", "true", "QUEEN_CLUSTER_INTERFACE", "127.0.0.1",
        "QUEEN_CLUSTER_MEMBERS", "127.0.0.1:" + port, "QUEEN_CLUSTER_PORT", Integer.toString(port),
        "QUEEN_CLUSTER_NAME", "bind-it-" + UUID.randomUUID()));
    HazelcastInstance hz = Hazelcast.newHazelcastInstance(ClusterConfig.load(config.cluster()));
    try {
      var address = hz.getCluster().getLocalMember().getAddress();
      assertThat(address.getHost()).isEqualTo("127.0.0.1");
      int bound = address.getPort();

      // the JDK may open an IPv6 socket for an IPv4 address: 127.0.0.1 shows as ::ffff:127.0.0.1 then
      assertThat(listeners(bound)).as("listening sockets on port %d", bound).isNotEmpty()
          .allMatch(a -> a.equals("127.0.0.1") || a.equals("::ffff:127.0.0.1"))
          .doesNotContain("0.0.0.0", "::");
      try (var s = new Socket()) {
        s.connect(new InetSocketAddress("127.0.0.1", bound), 2000);
        assertThat(s.isConnected()).isTrue();
      }
      assertThatThrownBy(() -> {
        try (var s = new Socket()) {
          s.connect(new InetSocketAddress("127.0.0.2", bound), 2000);
        }
      }).as("another local address does not reach the member").isInstanceOf(ConnectException.class);
    } finally {
      hz.shutdown();
    }
  }

  /** The local addresses of the IPv4 and IPv6 sockets listening on a TCP port, from /proc/net/tcp{,6}. */
  static List<String> listeners(int port) throws IOException {
    List<String> out = new ArrayList<>();
    String hexPort = String.format(Locale.ROOT, ":%04X", port);
    for (String file : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
      Path p = Path.of(file);
      if (!Files.exists(p)) continue;
      for (String line : Files.readAllLines(p)) {
        String[] f = line.trim().split("\\s+");
        if (f.length < 4 || !f[1].endsWith(hexPort) || !"0A".equals(f[3])) continue; // 0A: LISTEN
        String hex = f[1].substring(0, f[1].indexOf(':'));
        out.add(decode(hex));
      }
    }
    return out;
  }

  /** /proc/net/tcp writes an IPv4 address as one little-endian 32-bit word; IPv6 as four of them. */
  static String decode(String hex) {
    if (hex.length() == 8) {
      long v = Long.parseLong(hex, 16);
      return (v & 0xff) + "." + ((v >> 8) & 0xff) + "." + ((v >> 16) & 0xff) + "." + ((v >> 24) & 0xff);
    }
    if (hex.equals("00000000000000000000000000000000")) return "::";
    if (hex.equals("0000000000000000FFFF00000100007F")) return "::ffff:127.0.0.1";
    return "ipv6:" + hex;
  }
}
