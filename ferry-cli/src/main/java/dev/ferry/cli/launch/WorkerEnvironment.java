package dev.ferry.cli.launch;

import java.security.SecureRandom;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * The environment variables the launcher sets for each worker, named as in {@code torchrun} so
 * that workers rendezvous the same way ({@code init_method="env://"}):
 *
 * <pre>
 * variable            value                                example (rank 1 of 3)
 * ------------------  -----------------------------------  ---------------------
 * RANK                global rank, 0 .. WORLD_SIZE-1       1
 * LOCAL_RANK          rank on this node (= RANK: 1 node)   1
 * WORLD_SIZE          number of workers                    3
 * LOCAL_WORLD_SIZE    workers on this node (= WORLD_SIZE)  3
 * GROUP_RANK          rank of this node among the nodes    0
 * GROUP_WORLD_SIZE    number of nodes                      1
 * MASTER_ADDR         address where rank 0 listens         127.0.0.1
 * MASTER_PORT         port where rank 0 listens            41233
 * FERRY_AUTH_TOKEN    the group's authentication token     (43 random characters)
 * FERRY_STATUS_URL    where it reports for the status page http://127.0.0.1:41240/api/report/1
 *                     (only when the launcher serves one)
 * FERRY_APPLICATION_PACKAGES
 *                     the main class's package, and those  com.example.train
 *                     the variable named already
 * TORCHELASTIC_USE_AGENT_STORE
 *                     True: the launcher serves the store  True
 *                     (only with worker restarts)
 * </pre>
 *
 * <p>A worker reads them with {@code System.getenv("RANK")}; Ferry's RPC initialisation does so
 * when its init method is {@code env://}, and authenticates every connection with
 * {@code FERRY_AUTH_TOKEN}. The launcher makes a fresh token per group ({@link #newAuthToken}) unless
 * its own environment has one, which the workers then inherit: a process outside the group cannot
 * call into it. {@code FERRY_APPLICATION_PACKAGES} declares the main class's package the application's
 * code, whose functions peers may call and whose classes they may send (added to what the variable
 * already says, comma-separated; {@code .} is the unnamed package). Every other variable of the
 * launcher's environment is inherited unchanged.
 */
public final class WorkerEnvironment {

  /** Global rank of the worker. */
  public static final String RANK = "RANK";
  /** Rank of the worker on its node; equals {@link #RANK} on a single node. */
  public static final String LOCAL_RANK = "LOCAL_RANK";
  /** Number of workers in the group. */
  public static final String WORLD_SIZE = "WORLD_SIZE";
  /** Number of workers on this node; equals {@link #WORLD_SIZE} on a single node. */
  public static final String LOCAL_WORLD_SIZE = "LOCAL_WORLD_SIZE";
  /** Rank of this node among the nodes of a multi-node launch (torchrun's name). */
  public static final String GROUP_RANK = "GROUP_RANK";
  /** Number of nodes (torchrun's name). */
  public static final String GROUP_WORLD_SIZE = "GROUP_WORLD_SIZE";
  /** Host name or address of rank 0's rendezvous endpoint. */
  public static final String MASTER_ADDR = "MASTER_ADDR";
  /** Port of rank 0's rendezvous endpoint. */
  public static final String MASTER_PORT = "MASTER_PORT";
  /** The group's authentication token (see {@code RpcBackendOptions.authToken}). */
  public static final String FERRY_AUTH_TOKEN = "FERRY_AUTH_TOKEN";
  /**
   * Where the worker reports its state for the group's status page (set when the launcher serves
   * one; see {@code RpcBackendOptions.statusUrl}).
   */
  public static final String FERRY_STATUS_URL = "FERRY_STATUS_URL";
  /** The application's packages (see {@code RpcBackendOptions.applicationPackages}). */
  public static final String FERRY_APPLICATION_PACKAGES = "FERRY_APPLICATION_PACKAGES";
  /** {@code True} when the launcher serves the workers' store (with worker restarts): rank 0 is a client too. */
  public static final String USE_AGENT_STORE = "TORCHELASTIC_USE_AGENT_STORE";

  /** All variables above; {@link WorkerGroupSpec.Builder#putEnv} refuses them. */
  public static final Set<String> RESERVED = Set.of(
      RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK, GROUP_WORLD_SIZE, MASTER_ADDR, MASTER_PORT,
      USE_AGENT_STORE);

  private static final SecureRandom RANDOM = new SecureRandom();

  private WorkerEnvironment() {}

  /** Returns the variables of worker {@code rank} of a single-node group, in the order of the table above. */
  public static Map<String, String> forRank(int rank, int worldSize, String masterAddr, int masterPort) {
    if (rank < 0 || rank >= worldSize) {
      throw new IllegalArgumentException("rank " + rank + " is outside 0.." + (worldSize - 1));
    }
    return forWorker(rank, worldSize, NodePlacement.singleNode(worldSize), masterAddr, masterPort);
  }

  /** Returns the variables of local worker {@code localRank} of {@code localWorldSize} on a node placed so. */
  public static Map<String, String> forWorker(int localRank, int localWorldSize, NodePlacement placement,
      String masterAddr, int masterPort) {
    if (localRank < 0 || localRank >= localWorldSize) {
      throw new IllegalArgumentException("local rank " + localRank + " is outside 0.." + (localWorldSize - 1));
    }
    Map<String, String> env = new LinkedHashMap<>();
    env.put(RANK, Integer.toString(placement.globalRank(localRank)));
    env.put(LOCAL_RANK, Integer.toString(localRank));
    env.put(WORLD_SIZE, Integer.toString(placement.worldSize()));
    env.put(LOCAL_WORLD_SIZE, Integer.toString(localWorldSize));
    env.put(GROUP_RANK, Integer.toString(placement.nodeRank()));
    env.put(GROUP_WORLD_SIZE, Integer.toString(placement.nodes()));
    env.put(MASTER_ADDR, masterAddr);
    env.put(MASTER_PORT, Integer.toString(masterPort));
    return env;
  }

  /**
   * The value of {@link #FERRY_APPLICATION_PACKAGES} for workers running {@code mainClass}: its package
   * ({@code .} for the unnamed one) added to {@code inherited} (the variable's value already, or null).
   */
  public static String applicationPackages(String mainClass, String inherited) {
    int dot = mainClass.lastIndexOf('.');
    String own = dot < 0 ? "." : mainClass.substring(0, dot);
    if (inherited == null || inherited.isBlank()) {
      return own;
    }
    for (String entry : inherited.split(",")) {
      if (entry.strip().equals(own)) {
        return inherited;
      }
    }
    return inherited + "," + own;
  }

  /** A fresh random token for one group: 256 bits, URL-safe Base64 without padding (43 characters). */
  public static String newAuthToken() {
    byte[] bytes = new byte[32];
    RANDOM.nextBytes(bytes);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
  }
}
