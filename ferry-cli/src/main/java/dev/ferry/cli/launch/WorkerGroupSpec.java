package dev.ferry.cli.launch;

import java.nio.charset.Charset;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * What a {@link WorkerGroup} launches: {@code nproc} JVMs running the same main class, one per
 * rank, on this machine. Immutable; build one with {@link #builder()} and derive variants with
 * {@link #toBuilder()}.
 *
 * <p>Each worker runs
 * <pre>
 * JAVA  JVM_FLAGS  JVM_ARGS  -cp CLASSPATH  MAIN_CLASS  ARGS
 * </pre>
 * with the launcher's environment plus {@link #env()} plus the rendezvous variables described in
 * {@link WorkerEnvironment}.
 *
 * <pre>
 * WorkerGroupSpec spec = WorkerGroupSpec.builder()
 *     .nproc(3)
 *     .mainClass("dev.ferry.examples.HelloCluster")
 *     .args(List.of("--rounds", "10"))
 *     .addJvmArg("-Xmx512m")
 *     .build();
 * </pre>
 *
 * <p>Defaults: the class path and {@code java} binary of this JVM, the flags of {@link
 * JvmFlags#defaults()}, {@code MASTER_ADDR=127.0.0.1}, a free port picked at start, stdout and
 * stderr forwarded to {@link ConsoleLineSink#prefixed()}, stdin closed (workers see end of input),
 * output decoded with the platform's {@code native.encoding}, and a 5 s grace period between
 * asking a worker to stop and killing it.
 */
public final class WorkerGroupSpec {

  // A binary class name: dotted Java identifiers, '$' allowed for nested classes.
  private static final Pattern CLASS_NAME =
      Pattern.compile("\\p{javaJavaIdentifierStart}\\p{javaJavaIdentifierPart}*"
          + "(\\.\\p{javaJavaIdentifierStart}\\p{javaJavaIdentifierPart}*)*");

  private final int nproc;
  private final String mainClass;
  private final List<String> args;
  private final String classpath;
  private final Path javaExecutable;
  private final List<String> jvmFlags;
  private final List<String> jvmArgs;
  private final Map<String, String> env;
  private final String masterAddr;
  private final int masterPort;
  private final Path directory;
  private final OutputMode stdout;
  private final OutputMode stderr;
  private final LineSink sink;
  private final Charset outputCharset;
  private final boolean pipeStdin;
  private final Duration terminationGrace;
  private final AotCache aotCache;
  private final NodePlacement placement;
  private final int statusPort;
  private final int workerRestarts;

  private WorkerGroupSpec(Builder b) {
    this.nproc = b.nproc;
    this.mainClass = b.mainClass;
    this.args = List.copyOf(b.args);
    this.classpath = b.classpath != null ? b.classpath : System.getProperty("java.class.path");
    this.javaExecutable = b.javaExecutable != null ? b.javaExecutable : JavaExecutable.current();
    this.jvmFlags = b.jvmFlags != null ? List.copyOf(b.jvmFlags) : JvmFlags.defaults();
    this.jvmArgs = List.copyOf(b.jvmArgs);
    this.env = Map.copyOf(b.env);
    this.masterAddr = b.masterAddr;
    this.masterPort = b.masterPort;
    this.directory = b.directory;
    this.stdout = b.stdout;
    this.stderr = b.stderr;
    this.sink = b.sink != null ? b.sink : ConsoleLineSink.prefixed();
    this.outputCharset = b.outputCharset != null ? b.outputCharset : nativeCharset();
    this.pipeStdin = b.pipeStdin;
    this.terminationGrace = b.terminationGrace;
    this.aotCache = b.aotCache;
    this.placement = b.placement != null ? b.placement : NodePlacement.singleNode(b.nproc);
    if (placement.firstRank() + nproc > placement.worldSize()) {
      throw new IllegalArgumentException("ranks " + placement.firstRank() + ".." + (placement.firstRank() + nproc - 1)
          + " of this node do not fit in world size " + placement.worldSize());
    }
    this.statusPort = b.statusPort;
    this.workerRestarts = b.workerRestarts;
    if (workerRestarts > 0 && placement.multiNode()) {
      throw new IllegalArgumentException("workerRestarts is for a group on one node (a multi-node run restarts the"
          + " world: --max-restarts)");
    }
  }

  /** Returns a builder with all defaults; {@link Builder#mainClass} must be set. */
  public static Builder builder() {
    return new Builder();
  }

  /** Returns a builder initialised with this spec's values. */
  public Builder toBuilder() {
    return new Builder(this);
  }

  /** Number of workers on this node; their local ranks are {@code 0 .. nproc-1}. */
  public int nproc() {
    return nproc;
  }

  /**
   * Where these workers sit in the world: by default node 0 of 1 (global ranks = local ranks);
   * a multi-node launch places each node's workers after those of the nodes before it.
   */
  public NodePlacement placement() {
    return placement;
  }

  /** Fully qualified name of the class whose {@code main} every worker runs. */
  public String mainClass() {
    return mainClass;
  }

  /** Program arguments, the same for every rank (a worker tells ranks apart by {@code RANK}). */
  public List<String> args() {
    return args;
  }

  /** Class path of the workers, in the platform's path-separator syntax. */
  public String classpath() {
    return classpath;
  }

  /** The {@code java} binary that runs the workers. */
  public Path javaExecutable() {
    return javaExecutable;
  }

  /** JVM flags every Ferry JVM needs (by default {@link JvmFlags#defaults()}), before {@link #jvmArgs()}. */
  public List<String> jvmFlags() {
    return jvmFlags;
  }

  /** Additional JVM options such as {@code -Xmx1g} or {@code -Dkey=value}, after {@link #jvmFlags()}. */
  public List<String> jvmArgs() {
    return jvmArgs;
  }

  /** The ahead-of-time cache workers start from and train (see {@link AotCache}); empty: none. */
  public Optional<AotCache> aotCache() {
    return Optional.ofNullable(aotCache);
  }

  /**
   * The port of the group's status page on 127.0.0.1 ({@code 0}: a free one), or -1 for none (the
   * default; {@code ferry run} serves one). See {@link WorkerGroup#statusPage()}.
   */
  public int statusPort() {
    return statusPort;
  }

  /**
   * How many times each rank is started again alone when its worker fails, while the others run on
   * (0, the default: a failure stops the group). See {@link Builder#workerRestarts}.
   */
  public int workerRestarts() {
    return workerRestarts;
  }

  /** Environment variables added to the launcher's environment for every worker. */
  public Map<String, String> env() {
    return env;
  }

  /** Address of rank 0's rendezvous endpoint ({@code MASTER_ADDR}). */
  public String masterAddr() {
    return masterAddr;
  }

  /** Rendezvous port ({@code MASTER_PORT}), or 0 to pick a free port when the group starts. */
  public int masterPort() {
    return masterPort;
  }

  /** Working directory of the workers; empty means the launcher's. */
  public Optional<Path> directory() {
    return Optional.ofNullable(directory);
  }

  /** What happens to the workers' stdout. */
  public OutputMode stdout() {
    return stdout;
  }

  /** What happens to the workers' stderr. */
  public OutputMode stderr() {
    return stderr;
  }

  /** Where {@link OutputMode#FORWARD forwarded} lines go. */
  public LineSink sink() {
    return sink;
  }

  /** Charset used to decode forwarded output. */
  public Charset outputCharset() {
    return outputCharset;
  }

  /**
   * Whether the workers' stdin is a pipe the caller writes to through {@link
   * WorkerGroup#process(int)}; when false it is closed at start, so a worker reading it sees end
   * of input instead of waiting forever.
   */
  public boolean pipeStdin() {
    return pipeStdin;
  }

  /** How long a worker may take to exit after SIGTERM before it is killed. */
  public Duration terminationGrace() {
    return terminationGrace;
  }

  @Override
  public String toString() {
    return "WorkerGroupSpec{nproc=" + nproc + ", mainClass=" + mainClass + ", args=" + args
        + ", jvmFlags=" + jvmFlags + ", jvmArgs=" + jvmArgs + ", env=" + env.keySet()
        + ", master=" + masterAddr + ":" + (masterPort == 0 ? "<free>" : masterPort) + "}";
  }

  private static Charset nativeCharset() {
    String name = System.getProperty("native.encoding");
    try {
      return name != null ? Charset.forName(name) : Charset.defaultCharset();
    } catch (IllegalArgumentException e) {
      return Charset.defaultCharset();
    }
  }

  /** Builder of {@link WorkerGroupSpec}. Not thread-safe. */
  public static final class Builder {
    private int nproc = 1;
    private String mainClass;
    private List<String> args = List.of();
    private String classpath;
    private Path javaExecutable;
    private List<String> jvmFlags;
    private final List<String> jvmArgs = new ArrayList<>();
    private final Map<String, String> env = new LinkedHashMap<>();
    private String masterAddr = "127.0.0.1";
    private int masterPort;
    private Path directory;
    private OutputMode stdout = OutputMode.FORWARD;
    private OutputMode stderr = OutputMode.FORWARD;
    private LineSink sink;
    private Charset outputCharset;
    private boolean pipeStdin;
    private Duration terminationGrace = Duration.ofSeconds(5);
    private AotCache aotCache;
    private NodePlacement placement;
    private int statusPort = -1;
    private int workerRestarts;

    private Builder() {}

    private Builder(WorkerGroupSpec s) {
      nproc = s.nproc;
      mainClass = s.mainClass;
      args = s.args;
      classpath = s.classpath;
      javaExecutable = s.javaExecutable;
      jvmFlags = s.jvmFlags;
      jvmArgs.addAll(s.jvmArgs);
      env.putAll(s.env);
      masterAddr = s.masterAddr;
      masterPort = s.masterPort;
      directory = s.directory;
      stdout = s.stdout;
      stderr = s.stderr;
      sink = s.sink;
      outputCharset = s.outputCharset;
      pipeStdin = s.pipeStdin;
      terminationGrace = s.terminationGrace;
      aotCache = s.aotCache;
      // the single-node default follows nproc; only a multi-node placement is kept as given
      placement = s.placement.multiNode() ? s.placement : null;
      statusPort = s.statusPort;
      workerRestarts = s.workerRestarts;
    }

    /** Number of workers, at least 1 (default 1). */
    public Builder nproc(int nproc) {
      if (nproc < 1) {
        throw new IllegalArgumentException("nproc must be at least 1, got " + nproc);
      }
      this.nproc = nproc;
      return this;
    }

    /** Fully qualified main class, e.g. {@code dev.ferry.examples.HelloCluster} (required). */
    public Builder mainClass(String mainClass) {
      Objects.requireNonNull(mainClass, "mainClass");
      if (!CLASS_NAME.matcher(mainClass).matches()) {
        throw new IllegalArgumentException("'" + mainClass + "' is not a Java class name "
            + "(expected something like dev.ferry.examples.HelloCluster)");
      }
      this.mainClass = mainClass;
      return this;
    }

    /** Program arguments (default none). */
    public Builder args(List<String> args) {
      this.args = List.copyOf(args);
      return this;
    }

    /** Worker class path (default: this JVM's {@code java.class.path}). */
    public Builder classpath(String classpath) {
      this.classpath = Objects.requireNonNull(classpath, "classpath");
      return this;
    }

    /** The {@code java} binary (default: {@link JavaExecutable#current()}). */
    public Builder javaExecutable(Path javaExecutable) {
      this.javaExecutable = Objects.requireNonNull(javaExecutable, "javaExecutable");
      return this;
    }

    /** Replaces the mandatory Ferry flags (default: {@link JvmFlags#defaults()}); rarely needed. */
    public Builder jvmFlags(List<String> jvmFlags) {
      this.jvmFlags = List.copyOf(jvmFlags);
      return this;
    }

    /** Replaces the additional JVM options. */
    public Builder jvmArgs(List<String> jvmArgs) {
      this.jvmArgs.clear();
      jvmArgs.forEach(this::addJvmArg);
      return this;
    }

    /**
     * Starts workers from, and trains, an ahead-of-time cache of classes and method profiles
     * (default: none; {@code ferry run} uses one under {@code ~/.cache/ferry/aot}); null for none.
     */
    public Builder aotCache(AotCache aotCache) {
      this.aotCache = aotCache;
      return this;
    }

    /**
     * Serves the group's live status page on 127.0.0.1:{@code port} ({@code 0}: a free port; -1,
     * the default: none); the workers report to it through {@link WorkerEnvironment#FERRY_STATUS_URL}.
     */
    public Builder statusPort(int port) {
      if (port < -1 || port > 65535) {
        throw new IllegalArgumentException("statusPort must be -1 (none), 0 (a free port) or 1..65535, got " + port);
      }
      this.statusPort = port;
      return this;
    }

    /** Adds one JVM option, e.g. {@code -Xmx1g}. */
    public Builder addJvmArg(String jvmArg) {
      jvmArgs.add(Objects.requireNonNull(jvmArg, "jvmArg"));
      return this;
    }

    /**
     * Adds an environment variable for every worker.
     *
     * @throws IllegalArgumentException for the variables the launcher sets itself ({@link
     *     WorkerEnvironment#RESERVED}); use {@link #masterAddr}/{@link #masterPort} instead
     */
    public Builder putEnv(String name, String value) {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(value, "value");
      if (WorkerEnvironment.RESERVED.contains(name)) {
        throw new IllegalArgumentException(name + " is set by the launcher for each rank and cannot be overridden");
      }
      env.put(name, value);
      return this;
    }

    /** This node's place in a multi-node world (default: node 0 of 1 with this spec's nproc). */
    public Builder placement(NodePlacement placement) {
      this.placement = Objects.requireNonNull(placement, "placement");
      return this;
    }

    /** Rendezvous address (default {@code 127.0.0.1}). */
    public Builder masterAddr(String masterAddr) {
      Objects.requireNonNull(masterAddr, "masterAddr");
      if (masterAddr.isBlank()) {
        throw new IllegalArgumentException("masterAddr must not be blank");
      }
      this.masterAddr = masterAddr;
      return this;
    }

    /** Rendezvous port, 1..65535, or 0 (the default) to pick a free one at start. */
    public Builder masterPort(int masterPort) {
      if (masterPort < 0 || masterPort > 65535) {
        throw new IllegalArgumentException("masterPort must be in 1..65535 (or 0 for a free port), got " + masterPort);
      }
      this.masterPort = masterPort;
      return this;
    }

    /** Working directory of the workers (default: the launcher's). */
    public Builder directory(Path directory) {
      this.directory = Objects.requireNonNull(directory, "directory");
      return this;
    }

    /** What to do with the workers' stdout (default {@link OutputMode#FORWARD}). */
    public Builder stdout(OutputMode mode) {
      this.stdout = Objects.requireNonNull(mode, "mode");
      return this;
    }

    /** What to do with the workers' stderr (default {@link OutputMode#FORWARD}). */
    public Builder stderr(OutputMode mode) {
      this.stderr = Objects.requireNonNull(mode, "mode");
      return this;
    }

    /** Receiver of forwarded lines (default {@link ConsoleLineSink#prefixed()}). */
    public Builder sink(LineSink sink) {
      this.sink = Objects.requireNonNull(sink, "sink");
      return this;
    }

    /** Charset of the workers' output (default: {@code native.encoding}, what workers write). */
    public Builder outputCharset(Charset charset) {
      this.outputCharset = Objects.requireNonNull(charset, "charset");
      return this;
    }

    /** Whether the caller writes to the workers' stdin (default false: stdin is closed). */
    public Builder pipeStdin(boolean pipeStdin) {
      this.pipeStdin = pipeStdin;
      return this;
    }

    /**
     * A worker that fails (exits with a non-zero code on its own, or is killed) is started again
     * alone, under its rank, up to {@code restarts} times per rank, while the others run on; it
     * rejoins the running world as a new incarnation of itself (see {@code RpcAgents.start}). The
     * launcher then serves the workers' rendezvous store ({@code TORCHELASTIC_USE_AGENT_STORE=True}),
     * so no worker holds it. A rank that fails once more than that stops the group, and so does a
     * failure when no other rank runs: there is no running world to rejoin. Default 0: a
     * failure stops the group (torchrun's way; it restarts whole worlds instead).
     */
    public Builder workerRestarts(int restarts) {
      if (restarts < 0) {
        throw new IllegalArgumentException("workerRestarts must not be negative, got " + restarts);
      }
      this.workerRestarts = restarts;
      return this;
    }

    /** Time between SIGTERM and SIGKILL when workers are stopped (default 5 s). */
    public Builder terminationGrace(Duration grace) {
      Objects.requireNonNull(grace, "grace");
      if (grace.isNegative()) {
        throw new IllegalArgumentException("terminationGrace must not be negative, got " + grace);
      }
      this.terminationGrace = grace;
      return this;
    }

    /**
     * Builds the spec.
     *
     * @throws IllegalStateException if no main class was set
     */
    public WorkerGroupSpec build() {
      if (mainClass == null) {
        throw new IllegalStateException("mainClass is required");
      }
      return new WorkerGroupSpec(this);
    }
  }
}
