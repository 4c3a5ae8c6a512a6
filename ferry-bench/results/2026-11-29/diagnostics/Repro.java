import dev.ferry.bench.workload.BenchFunctions;
import dev.ferry.rpc.*;
import java.time.Duration;
import java.util.concurrent.*;

/** Run as two JVMs (arg 0 and 1); shows the two Ferry bugs found by ferry-bench. */
public class Repro {
  public static void main(String[] a) throws Exception {
    RpcBackendOptions o = RpcBackendOptions.builder().initMethod("tcp://127.0.0.1:29611")
        .rpcTimeout(Duration.ofSeconds(5)).build();
    int rank = Integer.parseInt(a[0]);
    RpcAgent w0 = RpcAgents.start("worker" + rank, rank, 2, o);
    if (rank == 1) { w0.shutdown(); return; }
    // Bug A: @AsyncExecution function returning a future that succeeds never replies.
    try {
      Object v = w0.rpcAsync("worker1", BenchFunctions::asyncRelay, "worker0", 7).await();
      System.out.println("A: asyncRelay returned " + v);
    } catch (RpcException e) {
      System.out.println("A: asyncRelay failed: " + e);
    }
    // Bug B: a float[] of 128 MiB cannot be decoded (Fory's 128 MiB graph-memory limit) though maxMessageBytes is 1 GiB.
    for (int mib : new int[] {64, 127, 128}) {
      float[] t = new float[mib * 1024 * 1024 / 4];
      try {
        float[] back = w0.to("worker1").withTimeout(Duration.ofSeconds(60)).rpcSync(BenchFunctions::echo, t);
        System.out.println("B: echo " + mib + " MiB ok, " + back.length + " floats back");
      } catch (RpcException e) {
        System.out.println("B: echo " + mib + " MiB failed: " + e.toString().lines().findFirst().get());
      }
    }
    w0.shutdown();
  }
}
