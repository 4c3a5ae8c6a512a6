package probe;

import dev.ferry.rpc.*;
import java.lang.management.*;

public final class Probe {
    public record Point(int x, int y, String label) {}

    public static Point shift(Point p) { return new Point(p.x() + 1, p.y() + 1, p.label()); }
    public static int fail(int x) { throw new IllegalStateException("boom " + x); }
    public static int add(int a, int b) { return a + b; }

    public static void main(String[] args) throws Exception {
        com.sun.management.OperatingSystemMXBean os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        ClassLoadingMXBean cl = ManagementFactory.getClassLoadingMXBean();
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        Class.forName(RpcAgents.class.getName());
        long c0 = cl.getTotalLoadedClassCount(), cpu0 = os.getProcessCpuTime(), j0 = jit.getTotalCompilationTime();
        long t0 = System.nanoTime();
        Rpc.initRpc("worker" + System.getenv("RANK"));
        long t1 = System.nanoTime();
        long c1 = cl.getTotalLoadedClassCount(), cpu1 = os.getProcessCpuTime(), j1 = jit.getTotalCompilationTime();
        StringBuilder out = new StringBuilder();
        out.append(String.format("init %.1f ms cpu %.1f ms classes %d jit %d ms", (t1 - t0) / 1e6, (cpu1 - cpu0) / 1e6, c1 - c0, j1 - j0));
        if (Rpc.getWorkerInfo().id() == 0) {
            long a = System.nanoTime();
            Rpc.rpcSync("worker1", Probe::add, 1, 2);
            long b = System.nanoTime();
            Rpc.rpcSync("worker1", Probe::shift, new Point(1, 2, "p"));
            long c = System.nanoTime();
            try { Rpc.rpcSync("worker1", Probe::fail, 3); } catch (RpcException e) { }
            long d = System.nanoTime();
            try { Rpc.rpcSync("worker1", Probe::fail, 4); } catch (RpcException e) { }
            long e2 = System.nanoTime();
            Rpc.rpcSync("worker1", Probe::shift, new Point(1, 2, "p"));
            long f = System.nanoTime();
            out.append(String.format(" | first call %.1f ms, first record %.1f ms, first error %.1f ms, 2nd error %.1f ms, 2nd record %.1f ms",
                (b - a) / 1e6, (c - b) / 1e6, (d - c) / 1e6, (e2 - d) / 1e6, (f - e2) / 1e6));
        }
        System.out.println(out);
        long s0 = System.nanoTime();
        Rpc.shutdown();
        System.out.printf("shutdown %.1f ms%n", (System.nanoTime() - s0) / 1e6);
    }
}
