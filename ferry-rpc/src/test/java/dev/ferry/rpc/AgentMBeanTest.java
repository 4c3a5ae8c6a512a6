package dev.ferry.rpc;

import dev.ferry.rpc.testing.LocalCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import javax.management.AttributeNotFoundException;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanServer;
import javax.management.ObjectName;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Each running agent shows its debug info as a JMX MBean, {@code dev.ferry.rpc:type=RpcAgent,name="<worker>"},
 * read live, and is gone from JMX once the agent shut down; two agents of one name get distinct MBeans. Here
 * the platform MBean server runs (this class starts it), so agents register by default; without it they
 * do not start it unless asked ({@link JmxRegistration}).
 * Debug info counts the application's calls on both sides by how they ended.
 */
@Timeout(60)
class AgentMBeanTest {
    private final MBeanServer server = ManagementFactory.getPlatformMBeanServer();

    @Test
    void aRunningAgentsDebugInfoIsReadableOverJmxUntilItShutsDown() throws Exception {
        ObjectName worker1 = new ObjectName("dev.ferry.rpc:type=RpcAgent,name=\"worker1\"");
        try (LocalCluster cluster = LocalCluster.start(2)) {
            assertThat(server.isRegistered(worker1)).isTrue();
            assertThat(server.getAttribute(worker1, "agent.name")).isEqualTo("worker1");
            assertThat(server.getAttribute(worker1, "agent.state")).isEqualTo("RUNNING");
            assertThat(server.getAttribute(worker1, "agent.world_size")).isEqualTo("2");
            assertThat(Arrays.stream(server.getMBeanInfo(worker1).getAttributes()).map(MBeanAttributeInfo::getName))
                    .contains("agent.rank", "agent.client_active_calls", "rref.num_owner_rrefs");
            assertThat(cluster.agent(0).rpcSync("worker1", Ops::add, 1, 2)).isEqualTo(3);
            assertThatThrownBy(() -> server.getAttribute(worker1, "no.such.key"))
                    .isInstanceOf(AttributeNotFoundException.class).hasMessageContaining("no.such.key");
        }
        assertThat(server.isRegistered(worker1)).isFalse();
    }

    @Test
    void callsAreCountedOnBothSidesByHowTheyEnded() throws Exception {
        RpcAgent callee;
        Map<String, String> caller;
        try (LocalCluster cluster = LocalCluster.start(2)) {
            RpcAgent w0 = cluster.agent(0);
            callee = cluster.agent(1);
            assertThat(w0.rpcSync("worker1", Ops::add, 40, 2)).isEqualTo(42);
            assertThat(w0.rpcSync("worker1", Ops::concat, "a", "b")).isEqualTo("ab");
            assertThatThrownBy(() -> w0.rpcSync("worker1", Ops::fail, "on purpose")).isInstanceOf(RpcException.class);
            RpcFuture<Long> slow = w0.to("worker1").withTimeout(Duration.ofMillis(100)).rpcAsync(Ops::sleepMillis, 5_000L);
            assertThatThrownBy(slow::await).isInstanceOfSatisfying(RpcException.class,
                    e -> assertThat(e.code()).isEqualTo(RpcException.Code.TIMEOUT));
            // A call is counted before its caller sees how it ended.
            caller = w0.getDebugInfo();
            assertThat(caller).containsEntry("agent.calls_sent", "4").containsEntry("agent.calls_succeeded", "2")
                    .containsEntry("agent.calls_failed", "2").containsEntry("agent.calls_timed_out", "1");
            assertThat(Long.parseLong(caller.get("agent.call_request_bytes_sent"))).isPositive();
            assertThat(server.getAttribute(new ObjectName("dev.ferry.rpc:type=RpcAgent,name=\"worker0\""),
                    "agent.calls_sent")).isEqualTo("4");
        }
        // The slow call timed out, so its caller cancelled it on the callee: the handler, interrupted, failed.
        assertThat(callee.getDebugInfo()).containsEntry("agent.requests_received", "4")
                .containsEntry("agent.requests_succeeded", "2").containsEntry("agent.requests_failed", "2")
                .containsEntry("agent.server_cancelled_calls", "1")
                .containsEntry("agent.request_bytes_received", caller.get("agent.call_request_bytes_sent"));
    }

    @Test
    void callAndHandlerTimesAreReportedAsPercentiles() throws Exception {
        RpcAgent callee;
        Map<String, String> caller;
        try (LocalCluster cluster = LocalCluster.start(2)) {
            RpcAgent w0 = cluster.agent(0);
            callee = cluster.agent(1);
            assertThat(w0.getDebugInfo()).containsEntry("agent.call_time_us_p50", "0.0")
                    .containsEntry("agent.call_time_us_max", "0.0");
            for (int i = 0; i < 20; i++) {
                assertThat(w0.rpcSync("worker1", Ops::add, i, 1)).isEqualTo(i + 1);
            }
            // One call in 21 takes at least 300 ms: above the 90th percentile, at the 99th and the max.
            assertThat(w0.rpcSync("worker1", Ops::sleepMillis, 300L)).isEqualTo(300L);
            caller = w0.getDebugInfo();
        }
        assertThat(micros(caller, "agent.call_time_us_p50")).isPositive()
                .isLessThanOrEqualTo(micros(caller, "agent.call_time_us_p90")).isLessThan(300_000);
        assertThat(micros(caller, "agent.call_time_us_p99")).isGreaterThanOrEqualTo(300_000)
                .isLessThanOrEqualTo(micros(caller, "agent.call_time_us_max"));
        Map<String, String> handled = callee.getDebugInfo();
        assertThat(micros(handled, "agent.request_time_us_p90")).isLessThan(300_000);
        assertThat(micros(handled, "agent.request_time_us_max")).isGreaterThanOrEqualTo(300_000)
                .isLessThanOrEqualTo(micros(caller, "agent.call_time_us_max"));
    }

    private static double micros(Map<String, String> info, String key) {
        assertThat(info).containsKey(key);
        return Double.parseDouble(info.get(key));
    }

    @Test
    void twoAgentsOfOneNameInOneJvmGetTheirOwnMBeans() throws Exception {
        ObjectName all = new ObjectName("dev.ferry.rpc:type=RpcAgent,name=\"worker0\",*");
        try (LocalCluster first = LocalCluster.start(1); LocalCluster second = LocalCluster.start(1)) {
            assertThat(server.queryNames(all, null)).hasSize(2);
            for (ObjectName name : server.queryNames(all, null)) {
                assertThat(server.getAttribute(name, "agent.name")).isEqualTo("worker0");
            }
        }
        assertThat(server.queryNames(all, null)).isEmpty();
    }

    @Test
    void withJmxNeverTheAgentStaysOutOfJmx() throws Exception {
        ObjectName all = new ObjectName("dev.ferry.rpc:type=RpcAgent,*");
        int before = server.queryNames(all, null).size();
        try (LocalCluster cluster = LocalCluster.start(1, options -> options.jmx(JmxRegistration.NEVER))) {
            assertThat(server.queryNames(all, null)).hasSize(before);
            assertThat(cluster.agent(0).getDebugInfo()).containsEntry("agent.state", "RUNNING");
        }
    }

    /**
     * By default an agent does not start the platform MBean server (it costs an idle worker CPU right
     * after init); asked to, it does and registers. Each case in a JVM of its own, since this one has
     * the server already.
     */
    @Test
    void byDefaultTheAgentDoesNotStartThePlatformMBeanServer(@TempDir Path dir)
            throws Exception {
        assertThat(probe(dir, JmxRegistration.IF_RUNNING)).isEqualTo("platform=false registered=false");
        assertThat(probe(dir, JmxRegistration.ALWAYS)).isEqualTo("platform=true registered=true");
        assertThat(probe(dir, JmxRegistration.NEVER)).isEqualTo("platform=false registered=false");
    }

    private static String probe(Path dir, JmxRegistration when) throws Exception {
        String output = FreshJvm.run(dir.resolve(when + ".log"), List.of(), JmxProbeMain.class, when.name());
        return output.lines().filter(line -> line.startsWith("platform=")).findFirst().orElse(output);
    }
}
