package dev.ferry.cli.launch;

import java.util.Locale;

/**
 * How the launchers of a multi-node job meet, torchrun's {@code --rdzv-backend}: {@link #STATIC}
 * (a TCP store that node 0's launcher serves at the endpoint; node ranks given with {@code
 * --node-rank}), or a service the cluster already runs, {@link #ETCD} or {@link #ZOOKEEPER} (node
 * ranks in order of arrival; nothing special about any node).
 */
public enum RendezvousBackend {
  STATIC, ETCD, ZOOKEEPER;

  /** The backend of a {@code --rdzv-backend} value: {@code static}, {@code etcd} or {@code zookeeper}. */
  public static RendezvousBackend fromName(String name) {
    try {
      return valueOf(name.toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("--rdzv-backend must be static, etcd or zookeeper, got '" + name + "'");
    }
  }

  /** Whether node ranks are assigned by arrival rather than given. */
  public boolean dynamic() {
    return this != STATIC;
  }
}
