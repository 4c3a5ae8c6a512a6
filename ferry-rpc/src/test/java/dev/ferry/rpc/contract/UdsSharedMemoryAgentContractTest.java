package dev.ferry.rpc.contract;

import dev.ferry.rpc.RpcBackendOptions;
import io.netty.channel.epoll.Epoll;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The agent contract over a Unix socket with shared memory for large buffers: the defaults on one host. */
class UdsSharedMemoryAgentContractTest extends AbstractAgentContractTest {
    @Override
    protected RpcBackendOptions.Builder configure(RpcBackendOptions.Builder options) {
        return options;
    }

    @Override
    protected void checkRoute(Map<String, String> info) {
        assumeTrue(Epoll.isAvailable() && Files.isWritable(Path.of("/dev/shm")), "shared memory needs epoll and /dev/shm");
        assertThat(info).containsEntry("agent.peer.worker1.transport", "uds+shm");
    }
}
