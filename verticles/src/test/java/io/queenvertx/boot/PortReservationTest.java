package io.queenvertx.boot;

import io.queenvertx.kernel.BootException;
import io.queenvertx.kernel.HttpSettings;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queenvertx.testing.TestNode;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import org.junit.jupiter.api.Test;

/**
 * Issue 34: the HTTP port is checked, and held, before PostgreSQL starts. A listener on it refuses the node; while it
 * is held nothing else binds it; connections of an earlier process lingering in TIME_WAIT do not count as busy (the
 * HTTP server could bind such a port).
 */
class PortReservationTest {

  private static HttpSettings on(int port) {
    return new HttpSettings(port, "127.0.0.1", 1024, 1, false, 1, HttpSettings.DEFAULT_MAX_PUSH_ITEMS);
  }

  private static ServerSocket listener(int port) throws Exception {
    var s = new ServerSocket();
    s.setReuseAddress(true); // as Vert.x binds
    s.bind(new InetSocketAddress("127.0.0.1", port));
    return s;
  }

  @Test
  void aPortWithAListenerIsRefusedInOneLineNamingItWithExitTwo() throws Exception {
    try (var holder = listener(TestNode.freePort())) {
      int port = holder.getLocalPort();
      assertThatThrownBy(() -> PortReservation.hold(on(port)))
          .isInstanceOfSatisfying(BootException.class, e -> assertThat(e.exitCode()).isEqualTo(2))
          .hasMessage("port " + port + " on 127.0.0.1 is already in use (PORT)");
    }
  }

  @Test
  void aHeldPortCannotBeBoundByAnotherListenerUntilReleased() throws Exception {
    int port = TestNode.freePort();
    var reservation = PortReservation.hold(on(port));
    assertThatThrownBy(() -> listener(port).close()).isInstanceOf(BindException.class);
    assertThatThrownBy(() -> PortReservation.hold(on(port))).isInstanceOf(BootException.class);
    reservation.close();
    listener(port).close();
  }

  @Test
  void connectionsLingeringInTimeWaitDoNotMakeThePortBusy() throws Exception {
    int port = TestNode.freePort();
    try (var server = listener(port); var client = new Socket("127.0.0.1", port); var accepted = server.accept()) {
      accepted.close(); // the server side closes first: its end of the connection stays in TIME_WAIT on the port
      assertThat(client.getInputStream().read()).isEqualTo(-1);
    }
    // the situation is real: a bind without SO_REUSEADDR is refused now
    try (var plain = new ServerSocket()) {
      plain.setReuseAddress(false);
      assertThatThrownBy(() -> plain.bind(new InetSocketAddress("127.0.0.1", port)))
          .isInstanceOf(BindException.class);
    }
    PortReservation.hold(on(port)).close();
    listener(port).close();
  }
}
