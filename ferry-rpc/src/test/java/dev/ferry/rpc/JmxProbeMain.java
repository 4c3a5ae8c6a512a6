package dev.ferry.rpc;

import dev.ferry.rpc.testing.LocalCluster;

import javax.management.MBeanServer;
import javax.management.MBeanServerFactory;
import javax.management.ObjectName;

/**
 * Runs a one-worker group in a fresh JVM with {@code jmx(args[0])} and prints whether the JVM then has
 * a platform MBean server, and whether the agent's MBean is in it ({@link AgentMBeanTest}).
 */
public final class JmxProbeMain {
    private JmxProbeMain() {
    }

    public static void main(String[] args) throws Exception {
        JmxRegistration when = JmxRegistration.valueOf(args[0]);
        try (LocalCluster cluster = LocalCluster.start(1, options -> options.jmx(when))) {
            boolean platform = false;
            boolean registered = false;
            for (MBeanServer server : MBeanServerFactory.findMBeanServer(null)) {
                if (server.isRegistered(new ObjectName("java.lang:type=Runtime"))) {
                    platform = true;
                    registered = server.isRegistered(new ObjectName("dev.ferry.rpc:type=RpcAgent,name=\"worker0\""));
                }
            }
            System.out.println("platform=" + platform + " registered=" + registered);
        }
    }
}
