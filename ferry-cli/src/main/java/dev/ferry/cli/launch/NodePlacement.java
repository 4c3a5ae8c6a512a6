package dev.ferry.cli.launch;

/**
 * Where this node's workers sit in a world that may span several nodes, as a launcher round
 * decided it: torchrun's {@code GROUP_RANK} and global ranks. A single-node launch is {@link
 * #singleNode(int)}: node 0 of 1, ranks {@code 0 .. nproc-1}.
 *
 * <pre>
 * node 0: 2 workers   ranks 0 1
 * node 1: 3 workers   ranks 2 3 4      NodePlacement(1, 2, 2, 5)
 * </pre>
 *
 * @param nodeRank this node's rank among the nodes ({@code GROUP_RANK})
 * @param nodes the number of nodes ({@code GROUP_WORLD_SIZE})
 * @param firstRank the global rank of this node's local rank 0
 * @param worldSize the number of workers on all nodes ({@code WORLD_SIZE})
 */
public record NodePlacement(int nodeRank, int nodes, int firstRank, int worldSize) {

  public NodePlacement {
    if (nodes < 1 || nodeRank < 0 || nodeRank >= nodes) {
      throw new IllegalArgumentException("node rank " + nodeRank + " is outside 0.." + (nodes - 1));
    }
    if (firstRank < 0 || firstRank >= worldSize) {
      throw new IllegalArgumentException("first rank " + firstRank + " is outside 0.." + (worldSize - 1));
    }
  }

  /** Node 0 of 1 with {@code nproc} workers. */
  public static NodePlacement singleNode(int nproc) {
    return new NodePlacement(0, 1, 0, nproc);
  }

  /** Whether other nodes take part. */
  public boolean multiNode() {
    return nodes > 1;
  }

  /** The global rank of local worker {@code localRank}. */
  public int globalRank(int localRank) {
    return firstRank + localRank;
  }

  /**
   * How output lines and failures name local worker {@code localRank}: {@code 3} on a single
   * node, {@code node1/worker3} when the world spans nodes.
   */
  public String label(int localRank) {
    return multiNode() ? "node" + nodeRank + "/worker" + globalRank(localRank) : Integer.toString(localRank);
  }

  /**
   * How the launcher's own reports name local worker {@code localRank}: {@code rank 3} on a single
   * node, {@code node1/worker3} (as its output lines are prefixed) when the world spans nodes, so
   * that a report never names a worker by a local rank the others know by another number.
   */
  public String describe(int localRank) {
    return multiNode() ? label(localRank) : "rank " + localRank;
  }
}
