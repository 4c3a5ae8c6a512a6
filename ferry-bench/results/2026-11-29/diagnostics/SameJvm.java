import dev.ferry.rpc.*;
import java.time.Duration;
import java.util.concurrent.*;

/** Two agents in one JVM with a tcp:// init method never meet: each gets its own store key prefix. */
public class SameJvm {
  public static void main(String[] a) throws Exception {
    RpcBackendOptions o = RpcBackendOptions.builder().initMethod("tcp://127.0.0.1:29612")
        .rpcTimeout(Duration.ofSeconds(5)).build();
    ExecutorService ex = Executors.newSingleThreadExecutor();
    Future<RpcAgent> f1 = ex.submit(() -> RpcAgents.start("worker1", 1, 2, o));
    RpcAgent w0 = RpcAgents.start("worker0", 0, 2, o);
    System.out.println("joined: " + f1.get().getWorkerInfos());
    ex.submit(() -> { try { f1.get().shutdown(); } catch (Exception e) { } });
    w0.shutdown();
    ex.shutdown();
  }
}
