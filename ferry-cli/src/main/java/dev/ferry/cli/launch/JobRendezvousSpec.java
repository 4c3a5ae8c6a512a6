package dev.ferry.cli.launch;

import java.time.Duration;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * What the launchers of one job agree on before they meet, from torchrun's options: {@code
 * --rdzv-backend}, {@code --rdzv-endpoint}, {@code --rdzv-id}, {@code --nnodes MIN:MAX} and (static
 * only) {@code --node-rank}. Immutable.
 *
 * <pre>
 * // ferry run --nnodes 3 --nproc-per-node 2 --rdzv-backend etcd --rdzv-endpoint 10.0.0.5:2379 --rdzv-id job42 ...
 * new JobRendezvousSpec(RendezvousBackend.ETCD, "10.0.0.5:2379", "job42", 3, 3, -1, null, token)
 * </pre>
 *
 * @param backend how the launchers meet
 * @param endpoint {@code host:port} of node 0's store (static) or of the etcd / ZooKeeper servers
 *     ({@code host:port[,host:port...]})
 * @param runId the job's id: launchers with the same id and endpoint form one job
 * @param minNodes the fewest nodes a round starts with
 * @param maxNodes the most nodes a round takes (equal to {@code minNodes} for static)
 * @param nodeRank this node's rank (static), or -1 (dynamic: by arrival)
 * @param localAddress the address other nodes reach this node's workers at, or null: the address
 *     this host uses to reach the endpoint
 * @param authToken the job's token (static store and workers), or null on a single node
 * @param lastCall with {@code MIN:MAX} nodes, how long a round stays open for more once MIN have
 *     arrived ({@link #LAST_CALL}, torchrun's 30 s, unless given)
 */
public record JobRendezvousSpec(RendezvousBackend backend, String endpoint, String runId, int minNodes, int maxNodes,
                                int nodeRank, String localAddress, String authToken, Duration lastCall) {
  private static final Pattern RUN_ID = Pattern.compile("[A-Za-z0-9_.-]{1,64}");
  /** How long a launcher waits for the other nodes of a round to arrive. */
  public static final Duration JOIN_TIMEOUT = Duration.ofMinutes(10);
  /** With {@code MIN:MAX} nodes: how long a round stays open for more once MIN have arrived (torchrun's 30 s). */
  public static final Duration LAST_CALL = Duration.ofSeconds(30);
  /** How long a node whose workers succeeded waits for the other nodes to finish. */
  public static final Duration EXIT_BARRIER = Duration.ofMinutes(5);

  /** A job whose rounds stay open {@link #LAST_CALL} for more nodes. */
  public JobRendezvousSpec(RendezvousBackend backend, String endpoint, String runId, int minNodes, int maxNodes,
                           int nodeRank, String localAddress, String authToken) {
    this(backend, endpoint, runId, minNodes, maxNodes, nodeRank, localAddress, authToken, LAST_CALL);
  }

  public JobRendezvousSpec {
    Objects.requireNonNull(backend, "backend");
    Objects.requireNonNull(lastCall, "lastCall");
    Objects.requireNonNull(endpoint, "endpoint");
    if (!RUN_ID.matcher(runId).matches()) {
      throw new IllegalArgumentException("--rdzv-id must be 1-64 letters, digits, '_', '.' or '-', got '" + runId + "'");
    }
    if (minNodes < 1 || maxNodes < minNodes) {
      throw new IllegalArgumentException("--nnodes must be N or MIN:MAX with 1 <= MIN <= MAX, got "
          + minNodes + ":" + maxNodes);
    }
    if (backend == RendezvousBackend.STATIC) {
      if (minNodes != maxNodes) {
        throw new IllegalArgumentException("--rdzv-backend static needs a fixed --nnodes N, not " + minNodes + ":"
            + maxNodes + "; use etcd or zookeeper for an elastic number of nodes");
      }
      if (nodeRank < 0 || nodeRank >= maxNodes) {
        throw new IllegalArgumentException("--node-rank must be in 0.." + (maxNodes - 1) + ", got " + nodeRank);
      }
    }
  }
}
