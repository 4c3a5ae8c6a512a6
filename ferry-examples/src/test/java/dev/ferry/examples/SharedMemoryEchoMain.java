package dev.ferry.examples;

import dev.ferry.rpc.Rpc;
import dev.ferry.rpc.RpcAgent;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Map;

/**
 * A 2-process scenario for {@link MultiProcessTest}: rank 0 echoes large direct buffers through
 * rank 1, which by default travel through shared memory (both on this host); each rank reports what
 * carried them.
 */
public final class SharedMemoryEchoMain {
    private SharedMemoryEchoMain() {
    }

    public static ByteBuffer echo(ByteBuffer buffer) {
        return buffer;
    }

    public static void main(String[] args) {
        int rank = Integer.parseInt(System.getenv("RANK"));
        RpcAgent agent = Rpc.initRpc("worker" + rank);
        if (rank == 0) {
            ByteBuffer sent = ByteBuffer.allocateDirect(8 << 20).order(ByteOrder.LITTLE_ENDIAN);
            for (int i = 0; sent.hasRemaining(); i++) {
                sent.putInt(i * 7);
            }
            sent.flip();
            int intact = 0;
            for (int call = 0; call < 30; call++) {
                ByteBuffer back = Rpc.rpcSync("worker1", SharedMemoryEchoMain::echo, sent);
                intact += back.equals(sent) && back.order() == ByteOrder.LITTLE_ENDIAN ? 1 : 0;
            }
            Map<String, String> info = agent.getDebugInfo();
            System.out.println("RESULT intact " + intact);
            System.out.println("RESULT transport " + info.get("agent.peer.worker1.transport"));
            System.out.println("RESULT fallbacks " + info.get("transport.shm.fallbacks"));
            System.out.println("RESULT shm-sent " + info.get("transport.shm.sent_buffers"));
        }
        Rpc.shutdown();
        if (rank == 1) {
            System.out.println("RESULT shm-sent " + agent.getDebugInfo().get("transport.shm.sent_buffers"));
        }
    }
}
