package dev.ferry.rpc;

import dev.ferry.rpc.testing.LocalCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.management.ManagementFactory;
import java.util.Arrays;
import javax.management.AttributeNotFoundException;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanServer;
import javax.management.ObjectName;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Each running agent shows its debug info as a JMX MBean, {@code dev.ferry.rpc:type=RpcAgent,name="<worker>"},
 * read live, and is gone from JMX once the agent shut down; two agents of one name get distinct MBeans.
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
}
