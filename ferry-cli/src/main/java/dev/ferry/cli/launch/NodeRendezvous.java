package dev.ferry.cli.launch;

import static java.nio.charset.StandardCharsets.UTF_8;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.spi.StoreProvider;
import dev.ferry.rpc.store.PrefixStore;
import dev.ferry.rpc.store.Store;
import dev.ferry.rpc.store.StoreTimeoutException;
import dev.ferry.rpc.store.TcpStore;
import dev.ferry.rpc.store.TcpStoreOptions;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * How the launchers of one job meet, round after round (one round per attempt: the first start
 * and each restart of the whole world), in a {@link Store} under {@code ferry-run/<run id>}:
 *
 * <pre>
 *   join(round)      slot = node rank (static) or add("r/joined", 1) - 1 (by arrival)
 *                    a node that finds the round started without it, with room for more (MIN:MAX), sets
 *                    "r/over" = "grow": every node stops its workers and all meet in the next round
 *                    (torchrun's way to take a node that arrives late; not counted as a restart)
 *                    set "r/node/slot" = "address|nproc|master port"     (ephemeral where the store has sessions)
 *                    slot 0 (dynamic) closes the round: "r/closed" = nodes, once MAX arrived or MIN
 *                    arrived and the last call passed; static rounds hold exactly N
 *                    read every node: this node's first global rank, the world size, node 0's master
 *   watch(round)     get "r/over" in the background: another node's failure stops this node's workers,
 *                    and so does losing the store (static: node 0's launcher died)
 *                    a node whose launcher died without "r/done/slot" fails the round too: with sessions
 *                    its registration expires; without (static) every node adds to "r/beat/slot" each
 *                    second, and one not heard from for {@link #LAUNCHER_SILENCE} is gone ("r/gone/slot")
 *                    until it leaves: a launcher that dies after "r/over" is found gone too
 *   succeeded(round) set "r/done/slot"; add("r/finished", 1); the last node sets "r/over" = "ok"; wait for "r/over"
 *   failed(round)    compareSet "r/over" = "failed|code|what" (the first failure wins)
 *   leave(round)     set "r/left/slot"; static node 0 waits until every node has left or is found gone (one
 *                    still stopping its workers beats on), then stops serving
 * </pre>
 *
 * <p>Node 0 of a static job serves the TCP store at the endpoint, so it must run on that host; its
 * store and the token ({@code FERRY_AUTH_TOKEN}) authenticate every launcher. Not thread-safe but
 * for {@link #watch}, whose callback runs on its own thread.
 */
public final class NodeRendezvous implements AutoCloseable {
  /** The exit code of a round that ended because the job's store went away. */
  static final int EXIT_STORE_LOST = 1;

  /** How often a launcher says it is alive where the store cannot tell (no sessions: static). */
  static final Duration BEAT_INTERVAL = Duration.ofSeconds(1);
  /**
   * A launcher that has not said it is alive for this long, and has not finished, is gone (SIGKILL,
   * a crashed host): ten beats, so that a launcher on a loaded host is not declared gone by mistake.
   */
  public static final Duration LAUNCHER_SILENCE = Duration.ofSeconds(10);
  /** How long a launcher waits for the other nodes before it says it is waiting, and for whom. */
  public static final Duration FIRST_NOTICE = Duration.ofSeconds(5);
  /** How often it says so again while it waits. */
  public static final Duration NOTICE_INTERVAL = Duration.ofMinutes(1);

  private final JobRendezvousSpec spec;
  private final Store store;
  private final String localAddress;
  private final Duration beatInterval;
  private final Duration launcherSilence;
  private volatile boolean closed;
  private volatile boolean lost;
  /** The last round this node left: that round's beats and watch of the other nodes end. */
  private volatile int leftRound = -1;

  /** One round's agreement: where this node's workers sit and where rank 0 listens. */
  public record RoundPlan(int round, NodePlacement placement, int slot, String masterAddr, int masterPort,
                          String localAddress) {
  }

  /**
   * How a round ended for the whole job: success, the first failure with its exit code, or (grows)
   * a node arrived late and the world restarts with it.
   */
  public record RoundOutcome(boolean succeeded, int exitCode, String description, boolean grows) {
    RoundOutcome(boolean succeeded, int exitCode, String description) {
      this(succeeded, exitCode, description, false);
    }

    static RoundOutcome parse(String text) {
      if (text.equals("ok")) {
        return new RoundOutcome(true, 0, "all nodes succeeded");
      }
      String[] parts = text.split("\\|", 3);
      return new RoundOutcome(false, Integer.parseInt(parts[1]), parts[2], parts[0].equals("grow"));
    }

    String encode() {
      return succeeded ? "ok" : (grows ? "grow|" : "failed|") + exitCode + "|" + description;
    }
  }

  private NodeRendezvous(JobRendezvousSpec spec, Store store, String localAddress, Duration beatInterval,
      Duration launcherSilence) {
    this.spec = spec;
    this.store = store;
    this.localAddress = localAddress;
    this.beatInterval = beatInterval;
    this.launcherSilence = launcherSilence;
  }

  /**
   * Connects to the job's store (node 0 of a static job starts serving it). The other nodes of a
   * static job tell {@code waiting} while node 0's store does not answer yet (after {@link
   * #FIRST_NOTICE}, then every {@link #NOTICE_INTERVAL}): a wrong {@code --rdzv-endpoint} would
   * otherwise look like a hang.
   *
   * @throws RpcException if the store cannot be served or reached within {@link JobRendezvousSpec#JOIN_TIMEOUT}
   */
  public static NodeRendezvous open(JobRendezvousSpec spec, Consumer<String> waiting) {
    return open(spec, waiting, BEAT_INTERVAL, LAUNCHER_SILENCE);
  }

  /** As {@link #open(JobRendezvousSpec, Consumer)}, with the beat and the silence (static) given: tests shorten them. */
  static NodeRendezvous open(JobRendezvousSpec spec, Consumer<String> waiting, Duration beatInterval,
      Duration launcherSilence) {
    String first = spec.endpoint().split(",")[0];
    int colon = first.lastIndexOf(':');
    if (colon <= 0) {
      throw new IllegalArgumentException("--rdzv-endpoint must be host:port, got '" + spec.endpoint() + "'");
    }
    String host = first.substring(0, colon);
    int port;
    try {
      port = Integer.parseInt(first.substring(colon + 1));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("--rdzv-endpoint must be host:port, got '" + spec.endpoint() + "'");
    }
    String local = spec.localAddress() != null ? spec.localAddress() : addressTowards(host, port);
    String namespace = "ferry-run/" + spec.runId();
    Store store = switch (spec.backend()) {
      case STATIC -> new PrefixStore(namespace, staticStore(spec, host, port, waiting));
      case ETCD -> StoreProvider.openUrl("etcd://" + spec.endpoint() + "/" + namespace, JobRendezvousSpec.JOIN_TIMEOUT);
      case ZOOKEEPER -> StoreProvider.openUrl("zookeeper://" + spec.endpoint() + "/" + namespace,
          JobRendezvousSpec.JOIN_TIMEOUT);
    };
    return new NodeRendezvous(spec, store, local, beatInterval, launcherSilence);
  }

  /** Node 0 serves the job's TCP store; the others connect to it, retrying until the join timeout. */
  private static Store staticStore(JobRendezvousSpec spec, String host, int port, Consumer<String> waiting) {
    TcpStoreOptions.Builder options = TcpStoreOptions.builder().host(host).port(port).server(spec.nodeRank() == 0)
        .timeout(JobRendezvousSpec.JOIN_TIMEOUT).authToken(spec.authToken());
    if (spec.nodeRank() == 0) {
      return TcpStore.create(options.build());
    }
    WaitingNotices notices = new WaitingNotices();
    while (true) {
      try {
        return TcpStore.create(options.timeout(notices.slice()).build()).withTimeout(JobRendezvousSpec.JOIN_TIMEOUT);
      } catch (RpcException e) {
        if (e.code() != RpcException.Code.RENDEZVOUS_FAILED || notices.overdue()) {
          throw e; // a wrong token or TLS fails at once; no answer within the join timeout fails too
        }
        if (notices.due()) {
          waiting.accept("waiting for node 0's launcher to serve job " + spec.runId() + "'s store at " + host + ":"
              + port + " " + notices.progress());
        }
      }
    }
  }

  /**
   * The local address this host would use to reach {@code host:port}: the interface other nodes
   * can reach it on, found by connecting a UDP socket (which sends nothing).
   */
  static String addressTowards(String host, int port) {
    try (DatagramSocket probe = new DatagramSocket()) {
      probe.connect(new InetSocketAddress(host, port));
      InetAddress local = probe.getLocalAddress();
      return local.isAnyLocalAddress() ? InetAddress.getLoopbackAddress().getHostAddress() : local.getHostAddress();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot find the local address towards " + host + ":" + port, e);
    }
  }

  /** The address this node's workers listen on and advertise. */
  public String localAddress() {
    return localAddress;
  }

  /**
   * Joins round {@code round}, or a later one, with {@code nproc} workers and returns once the
   * round's nodes are known ({@link RoundPlan#round()} says which). A node that finds a round
   * started without it and with room for more (MIN:MAX) has that round end for every node and joins
   * the next one with them; one that finds a round over joins the next.
   *
   * <p>While the other nodes have not all arrived it tells {@code waiting} so, with who is missing
   * (after {@link #FIRST_NOTICE}, then every {@link #NOTICE_INTERVAL}): a launcher whose peers never
   * come would otherwise say nothing for the whole {@link JobRendezvousSpec#JOIN_TIMEOUT}.
   *
   * @throws RpcException RENDEZVOUS_FAILED if the round does not form in time, already has its MAX
   *     nodes, or the job finished before this node arrived
   */
  public RoundPlan join(int round, int nproc, Consumer<String> waiting) {
    for (int r = round; ; r++) {
      RoundPlan plan = tryJoin(r, nproc, waiting);
      if (plan != null) {
        return plan;
      }
    }
  }

  /** Joins round {@code round}; null when it started without this node and the next one is the place. */
  private RoundPlan tryJoin(int round, int nproc, Consumer<String> waiting) {
    String r = "r" + round + "/";
    int slot = spec.backend().dynamic() ? (int) (store.add(r + "joined", 1) - 1) : spec.nodeRank();
    if (spec.backend().dynamic() && store.check(List.of(r + "closed"))
        && slot >= Integer.parseInt(new String(store.get(r + "closed"), UTF_8))) {
      return arrivedLate(round, Integer.parseInt(new String(store.get(r + "closed"), UTF_8)));
    }
    if (slot >= spec.maxNodes()) {
      throw new RpcException(RpcException.Code.RENDEZVOUS_FAILED, "round " + round + " of job " + spec.runId()
          + " already has its " + spec.maxNodes() + " nodes (--nnodes); this node is one too many");
    }
    int masterPort = slot == 0 ? FreePorts.pick(inetAddress(localAddress)) : 0;
    byte[] registration = (localAddress + "|" + nproc + "|" + masterPort).getBytes(UTF_8);
    if (store.hasSessions()) {
      store.setEphemeral(r + "node/" + slot, registration);
    } else {
      store.set(r + "node/" + slot, registration);
    }
    int nodes = spec.backend().dynamic() ? closedSize(r, slot, waiting) : spec.maxNodes();
    if (slot >= nodes) {
      store.deleteKey(r + "node/" + slot);
      return arrivedLate(round, nodes);
    }
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < nodes; i++) {
      keys.add(r + "node/" + i);
    }
    WaitingNotices notices = new WaitingNotices();
    while (true) {
      try {
        store.waitFor(keys, notices.slice());
        break;
      } catch (StoreTimeoutException e) {
        List<String> missing = e.missingKeys().stream().map(k -> k.substring(k.lastIndexOf('/') + 1)).toList();
        if (notices.overdue()) {
          throw new RpcException(RpcException.Code.RENDEZVOUS_FAILED, "round " + round + " of job " + spec.runId()
              + ": nodes " + missing + " did not arrive within " + JobRendezvousSpec.JOIN_TIMEOUT.toMinutes() + " min", e);
        }
        if (notices.due()) {
          waiting.accept("waiting for node" + (missing.size() == 1 ? " " : "s ") + String.join(", ", missing)
              + " of job " + spec.runId() + " to arrive at " + spec.endpoint() + " " + notices.progress());
        }
      }
    }
    int firstRank = 0;
    int worldSize = 0;
    String[] master = null;
    for (int i = 0; i < nodes; i++) {
      String[] node = new String(store.get(keys.get(i)), UTF_8).split("\\|");
      if (i == 0) {
        master = node;
      }
      if (i < slot) {
        firstRank += Integer.parseInt(node[1]);
      }
      worldSize += Integer.parseInt(node[1]);
    }
    return new RoundPlan(round, new NodePlacement(slot, nodes, firstRank, worldSize), slot, master[0],
        Integer.parseInt(master[2]), localAddress);
  }

  /**
   * This node found round {@code round} started with {@code nodes} nodes without it: if there is
   * room, the round ends for every node ("grow") and this node meets them in the next; if the round
   * is over already, the next is the place too, unless the job finished.
   */
  private RoundPlan arrivedLate(int round, int nodes) {
    String over = "r" + round + "/over";
    if (nodes >= spec.maxNodes()) {
      throw new RpcException(RpcException.Code.RENDEZVOUS_FAILED, "round " + round + " of job " + spec.runId()
          + " already has its " + spec.maxNodes() + " nodes (--nnodes); this node is one too many");
    }
    RoundOutcome grow = new RoundOutcome(false, 0, "a node arrived at " + localAddress + " after round " + round
        + " started with " + nodes + " node" + (nodes == 1 ? "" : "s"), true);
    RoundOutcome outcome = RoundOutcome.parse(new String(store.compareSet(over, new byte[0],
        grow.encode().getBytes(UTF_8)), UTF_8));
    if (!outcome.grows()) { // the round had ended otherwise: the job may be over, this node must not run it alone
      throw new RpcException(RpcException.Code.RENDEZVOUS_FAILED, "round " + round + " of job " + spec.runId()
          + " ended before this node arrived (" + outcome.description() + ")");
    }
    return null;
  }

  /** The number of nodes round {@code r} started with; slot 0 decides it, the others wait for it. */
  private int closedSize(String r, int slot, Consumer<String> waiting) {
    if (slot == 0) {
      long deadline = System.nanoTime() + JobRendezvousSpec.JOIN_TIMEOUT.toNanos();
      WaitingNotices notices = new WaitingNotices();
      long lastCallEnds = Long.MAX_VALUE;
      while (true) {
        long arrived = store.add(r + "joined", 0);
        long now = System.nanoTime();
        if (arrived >= spec.minNodes() && lastCallEnds == Long.MAX_VALUE) {
          lastCallEnds = spec.minNodes() == spec.maxNodes() ? now : now + spec.lastCall().toNanos();
          if (arrived < spec.maxNodes() && !spec.lastCall().isZero()) {
            // else the launcher is silent for the whole last call, which looks like a hang
            waiting.accept(arrived + " of " + spec.minNodes() + ".." + spec.maxNodes() + " nodes of job "
                + spec.runId() + " are here; the round starts in " + Elapsed.format(spec.lastCall())
                + " (the last call for more) or when " + spec.maxNodes() + " are");
          }
        }
        if (arrived >= spec.maxNodes() || now - lastCallEnds >= 0) {
          // nodes counted in but not yet registered are waited for below, like the others
          store.compareSet(r + "closed", new byte[0], Long.toString(Math.min(arrived, spec.maxNodes())).getBytes(UTF_8));
          break;
        }
        if (now - deadline > 0) {
          throw new RpcException(RpcException.Code.RENDEZVOUS_FAILED, "only " + arrived + " of at least "
              + spec.minNodes() + " nodes joined job " + spec.runId() + " within "
              + JobRendezvousSpec.JOIN_TIMEOUT.toMinutes() + " min");
        }
        if (arrived < spec.minNodes() && notices.due()) {
          waiting.accept("waiting for nodes of job " + spec.runId() + " to arrive at " + spec.endpoint() + ": "
              + arrived + " of at least " + spec.minNodes() + " " + notices.progress());
        }
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100)); // a store counter has no watch: poll it
      }
    }
    return Integer.parseInt(new String(store.get(r + "closed", JobRendezvousSpec.JOIN_TIMEOUT), UTF_8));
  }

  /**
   * Calls {@code onOutcome} on a background thread once round {@code plan.round()} is over for the
   * job (another node failed, or every node finished), or the job's store is lost before that (a
   * failure: static, node 0's launcher is gone); ends quietly when this rendezvous closes. Until the
   * round is over this node also tells the others it is alive, and fails the round for every node if
   * another node's launcher is gone before its workers finished.
   */
  public void watch(RoundPlan plan, Consumer<RoundOutcome> onOutcome) {
    String over = "r" + plan.round() + "/over";
    Thread.ofPlatform().daemon().name("ferry-run-round-" + plan.round()).start(() -> {
      RoundOutcome outcome;
      try {
        outcome = RoundOutcome.parse(new String(store.get(over, Duration.ZERO), UTF_8));
      } catch (RpcException e) {
        if (closed) {
          return; // the launcher is done
        }
        outcome = storeLost(e);
      }
      onOutcome.accept(outcome);
    });
    Thread.ofPlatform().daemon().name("ferry-run-nodes-" + plan.round()).start(() -> watchNodes(plan));
  }

  /**
   * Checks every beat interval, until this node leaves the round, that the other nodes' launchers
   * are alive, and marks one gone ("r/gone/slot") when it is not, unless it left. Before the round
   * is over that fails the round for every node (as if one of its workers had failed); after, it only
   * tells node 0 of a static job not to wait for it in {@link #leave}. Where registrations are
   * ephemeral, one that expired says so; elsewhere this node adds to its own beat counter and watches
   * the others' (a store has no watch for deletions or counters: poll).
   */
  private void watchNodes(RoundPlan plan) {
    String r = "r" + plan.round() + "/";
    int nodes = plan.placement().nodes();
    long[] beats = new long[nodes];
    long[] heardNanos = new long[nodes];
    Arrays.fill(heardNanos, System.nanoTime()); // every node gets the whole silence to beat once
    try {
      while (leftRound < plan.round()) {
        boolean over = store.check(List.of(r + "over"));
        if (!store.hasSessions()) {
          store.add(r + "beat/" + plan.slot(), 1);
        }
        long now = System.nanoTime();
        for (int node = 0; node < nodes; node++) {
          // a node that finished waits for the outcome, and may lose its registration meanwhile; after the
          // outcome it beats on until it leaves
          if ((!over && store.check(List.of(r + "done/" + node))) || store.check(List.of(r + "left/" + node))
              || store.check(List.of(r + "gone/" + node))) {
            continue;
          }
          String gone = null;
          if (store.hasSessions()) {
            if (!store.check(List.of(r + "node/" + node))) {
              gone = "its registration in the " + spec.backend().name().toLowerCase() + " store expired";
            }
          } else if (node != plan.slot()) {
            long beat = store.add(r + "beat/" + node, 0);
            if (beat != beats[node]) {
              beats[node] = beat;
              heardNanos[node] = now;
            } else if (now - heardNanos[node] > launcherSilence.toNanos()) {
              gone = "not heard from for " + Elapsed.format(launcherSilence);
            }
          }
          if (gone != null) {
            store.set(r + "gone/" + node, new byte[0]); // node 0 of a static job waits in leave() for all but these
            if (!over) {
              failed(plan, 1, "node" + node + "'s launcher is gone (" + gone + " before its workers finished)");
            }
          }
        }
        LockSupport.parkNanos(beatInterval.toNanos());
      }
    } catch (RpcException lost) {
      // the rendezvous closed (the launcher is done), or the store is lost, which the round's watch reports
    }
  }

  /**
   * The round's outcome when the job's store went away before the round was over: every node's
   * launcher must stop its workers, since it can neither hear of the others nor tell them.
   */
  private RoundOutcome storeLost(RpcException e) {
    lost = true;
    return new RoundOutcome(false, EXIT_STORE_LOST, "lost the job's rendezvous store at " + spec.endpoint()
        + (spec.backend() == RendezvousBackend.STATIC ? ", which node0's launcher served: it is gone" : "")
        + " (" + e.getMessage() + ")");
  }

  /** Reports that this node's workers all succeeded, and waits (bounded) for the job's outcome. */
  public RoundOutcome succeeded(RoundPlan plan) {
    String r = "r" + plan.round() + "/";
    try {
      store.set(r + "done/" + plan.slot(), new byte[0]); // before leaving: its registration may go, it did not fail
      if (store.add(r + "finished", 1) == plan.placement().nodes()) {
        store.compareSet(r + "over", new byte[0], "ok".getBytes(UTF_8));
      }
      return RoundOutcome.parse(new String(store.get(r + "over", JobRendezvousSpec.EXIT_BARRIER), UTF_8));
    } catch (StoreTimeoutException e) {
      return new RoundOutcome(false, 1, "other nodes did not finish within "
          + JobRendezvousSpec.EXIT_BARRIER.toMinutes() + " min of node " + plan.slot());
    } catch (RpcException e) {
      return storeLost(e);
    }
  }

  /**
   * Reports a failure on this node; returns the job's outcome (an earlier failure elsewhere wins).
   * Without the store this node's own failure is the outcome, though the other nodes cannot be told.
   */
  public RoundOutcome failed(RoundPlan plan, int exitCode, String description) {
    String mine = new RoundOutcome(false, exitCode, description).encode();
    try {
      byte[] held = store.compareSet("r" + plan.round() + "/over", new byte[0], mine.getBytes(UTF_8));
      return RoundOutcome.parse(new String(held, UTF_8));
    } catch (RpcException e) {
      return new RoundOutcome(false, exitCode, description + "; " + storeLost(e).description());
    }
  }

  /**
   * Says this node is done with the round (its workers stopped) and with the store. Node 0 of a
   * static job then waits, since closing ends the store the others read, until every other node has
   * left or was found gone: a node still stopping its workers beats on and is waited for, one whose
   * launcher died is not heard from for the silence. While it waits it tells {@code waiting} for whom
   * (after {@link #FIRST_NOTICE}); it gives up after {@link JobRendezvousSpec#EXIT_BARRIER}, a
   * launcher that beats but never leaves.
   */
  public void leave(RoundPlan plan, Consumer<String> waiting) {
    String r = "r" + plan.round() + "/";
    try {
      store.set(r + "left/" + plan.slot(), new byte[0]);
      if (spec.backend() == RendezvousBackend.STATIC && plan.slot() == 0) {
        WaitingNotices notices = new WaitingNotices(JobRendezvousSpec.EXIT_BARRIER);
        for (List<Integer> staying = staying(plan); !staying.isEmpty() && !notices.overdue(); staying = staying(plan)) {
          if (notices.due()) {
            waiting.accept("waiting for node" + (staying.size() == 1 ? " " : "s ") + staying.stream().map(String::valueOf)
                .collect(Collectors.joining(", ")) + " of job " + spec.runId() + " to finish before closing the job's"
                + " store " + notices.progress());
          }
          LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50)); // the keys have no watch for "any of": poll
        }
      }
    } catch (RpcException lost) {
      // the store is gone: there is no one left to tell, and the round's outcome already says so
    } finally {
      leftRound = plan.round(); // ends this node's beats for the round
    }
  }

  /**
   * When a launcher waiting for the other nodes says so: after {@link #FIRST_NOTICE}, then every
   * {@link #NOTICE_INTERVAL}, until its limit ({@link JobRendezvousSpec#JOIN_TIMEOUT} unless given) has passed.
   */
  private static final class WaitingNotices {
    private final long startNanos = System.nanoTime();
    private final Duration limit;
    private final long deadlineNanos;
    private long nextNanos = startNanos + FIRST_NOTICE.toNanos();

    WaitingNotices() {
      this(JobRendezvousSpec.JOIN_TIMEOUT);
    }

    WaitingNotices(Duration limit) {
      this.limit = limit;
      this.deadlineNanos = startNanos + limit.toNanos();
    }

    /** How long to wait before looking again: until the next notice or the deadline, at least 1 ms. */
    Duration slice() {
      long until = Math.min(nextNanos, deadlineNanos) - System.nanoTime();
      return Duration.ofNanos(Math.max(until, TimeUnit.MILLISECONDS.toNanos(1)));
    }

    /** Whether a notice is due now; if so the next one is due an interval later. */
    boolean due() {
      long now = System.nanoTime();
      if (now - nextNanos < 0) {
        return false;
      }
      nextNanos = now + NOTICE_INTERVAL.toNanos();
      return true;
    }

    boolean overdue() {
      return System.nanoTime() - deadlineNanos >= 0;
    }

    String progress() {
      return "(" + Elapsed.format(Elapsed.since(startNanos, System.nanoTime())) + " of " + limit.toMinutes() + " min)";
    }
  }

  /** The round's nodes that have neither left nor been found gone (which will never leave). */
  private List<Integer> staying(RoundPlan plan) {
    String r = "r" + plan.round() + "/";
    List<Integer> staying = new ArrayList<>();
    for (int node = 0; node < plan.placement().nodes(); node++) {
      if (!store.check(List.of(r + "left/" + node)) && !store.check(List.of(r + "gone/" + node))) {
        staying.add(node);
      }
    }
    return staying;
  }

  private static InetAddress inetAddress(String address) {
    try {
      return InetAddress.getByName(address);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot resolve this node's address " + address, e);
    }
  }

  /** Whether the job's store went away under this node: no later round can meet there. */
  public boolean lost() {
    return lost;
  }

  /** Leaves the job's store (node 0 of a static job stops serving it). */
  @Override
  public void close() {
    closed = true;
    store.close();
  }
}
