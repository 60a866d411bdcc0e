package io.queenvertx.boot;

import io.queenvertx.kernel.BootException;
import io.queenvertx.kernel.HttpSettings;
import java.io.IOException;
import java.net.BindException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.net.UnknownHostException;
import java.nio.channels.SocketChannel;

/**
 * The HTTP port, checked and held from before PostgreSQL starts until the HTTP verticles are about to listen
 * ({@link Node#start}), so a busy {@code PORT} stops the boot at once (one line, exit 2) instead of after the embedded
 * PostgreSQL was initialised and migrated.
 *
 * <p>The hold is a TCP socket bound to the address and port but never listening: no connection can queue on it (a
 * client is refused as if nothing were there). It is bound without {@code SO_REUSEADDR} when it can be, which keeps
 * every other socket off the port meanwhile (another node booting with the same {@code PORT} is refused at its own
 * check). A port that only has connections of an earlier process lingering in {@code TIME_WAIT} (a restart right
 * after a stop) refuses that bind but is free for a listener; it is then held with {@code SO_REUSEADDR}, as the HTTP
 * server binds, which a listening socket still refuses. The hold is released just before Vert.x binds (Vert.x cannot
 * adopt a socket): in that gap of milliseconds another process could still take the port, and the HTTP deployment
 * reports that the same way.
 */
final class PortReservation implements AutoCloseable {
  private final SocketChannel socket;

  private PortReservation(SocketChannel socket) {
    this.socket = socket;
  }

  /**
   * Holds {@code http}'s port on its bind address, or throws {@link #busy}. A bind address that does not resolve is
   * not checked here (an empty reservation): the HTTP server reports it.
   */
  static PortReservation hold(HttpSettings http) throws IOException {
    InetAddress address;
    try {
      address = InetAddress.getByName(http.bindAddress());
    } catch (UnknownHostException e) {
      return new PortReservation(null);
    }
    var where = new InetSocketAddress(address, http.port());
    var family = address instanceof Inet4Address ? StandardProtocolFamily.INET : StandardProtocolFamily.INET6;
    for (boolean reuse : new boolean[] {false, true}) {
      SocketChannel socket = SocketChannel.open(family);
      try {
        socket.setOption(StandardSocketOptions.SO_REUSEADDR, reuse);
        socket.bind(where);
        return new PortReservation(socket);
      } catch (BindException e) {
        socket.close();
      } catch (IOException | RuntimeException e) {
        socket.close();
        throw e;
      }
    }
    throw busy(http);
  }

  /** The one-line boot error of a busy {@code PORT} (exit 2). */
  static BootException busy(HttpSettings http) {
    return new BootException("port " + http.port() + " on " + http.bindAddress() + " is already in use (PORT)", 2);
  }

  /** Releases the port; idempotent. */
  @Override
  public void close() throws IOException {
    if (socket != null) socket.close();
  }
}
