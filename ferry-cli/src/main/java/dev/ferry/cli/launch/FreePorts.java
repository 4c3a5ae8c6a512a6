package dev.ferry.cli.launch;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;

/**
 * Picks a TCP port that is currently free, for the workers' rendezvous ({@code MASTER_PORT}).
 *
 * <p>The port is found by binding port 0 and closing the socket, so another process may take it
 * before rank 0 binds it; that race is inherent (torchrun has it too) and rare on a single node.
 * Pass an explicit port when it matters.
 *
 * <pre>
 * int port = FreePorts.pick(); // e.g. 41233, free on 127.0.0.1 a moment ago
 * </pre>
 *
 * <p>This class is thread-safe.
 */
public final class FreePorts {

  private FreePorts() {}

  /** Returns a port that was free on 127.0.0.1. */
  public static int pick() {
    return pick(InetAddress.getLoopbackAddress());
  }

  /** Returns a port that was free on {@code address}, which must be a local address. */
  public static int pick(InetAddress address) {
    try (ServerSocket socket = new ServerSocket()) {
      // Without SO_REUSEADDR the kernel will not hand out a port that still has TIME_WAIT sockets.
      socket.setReuseAddress(false);
      socket.bind(new InetSocketAddress(address, 0));
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot find a free port on " + address.getHostAddress(), e);
    }
  }
}
