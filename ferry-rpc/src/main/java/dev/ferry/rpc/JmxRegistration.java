package dev.ferry.rpc;

/**
 * When an agent registers its debug info as a JMX MBean ({@code dev.ferry.rpc:type=RpcAgent,name="<worker>"};
 * see {@link RpcBackendOptions.Builder#jmx}).
 *
 * <p>Creating the JVM's platform MBean server is not free: on a 2-vCPU machine it took ~0.3 s of CPU and
 * left the JIT compiling its classes for the next seconds (~1 % of a core over 2 s), which an idle worker
 * right after {@code initRpc} should not pay for a feature nobody asked for. So by default an agent joins
 * JMX only where the JVM already runs it.
 *
 * <pre>
 * RpcBackendOptions options = RpcBackendOptions.builder().jmx(JmxRegistration.ALWAYS).build();
 * // or, for launched workers: FERRY_JMX=1 ferry run --nproc 2 my.Main
 * </pre>
 */
public enum JmxRegistration {
    /**
     * Register when the platform MBean server already runs: started by the JVM
     * ({@code -Dcom.sun.management.jmxremote}, {@code -Dcom.sun.management.jmxremote.port=…}), by a
     * monitoring agent, or by the application before {@code initRpc}. The default.
     */
    IF_RUNNING,
    /** Always register, starting the platform MBean server if needed ({@code FERRY_JMX=1}). */
    ALWAYS,
    /** Never register ({@code FERRY_JMX=0}). */
    NEVER;

    /** {@code FERRY_JMX}: {@code 1}/{@code true} for {@link #ALWAYS}, {@code 0}/{@code false} for {@link #NEVER}. */
    static JmxRegistration fromEnvironment(String value) {
        if (value == null) {
            return IF_RUNNING;
        }
        return switch (value.strip().toLowerCase(java.util.Locale.ROOT)) {
            case "1", "true" -> ALWAYS;
            case "0", "false" -> NEVER;
            default -> IF_RUNNING;
        };
    }
}
