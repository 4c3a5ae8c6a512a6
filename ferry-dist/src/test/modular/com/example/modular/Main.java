package com.example.modular;

import dev.ferry.rpc.RRef;
import dev.ferry.rpc.RemoteMethod1;
import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.RpcAgents;
import dev.ferry.rpc.RpcBackendOptions;
import dev.ferry.rpc.RpcException;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;

/** Two workers in this JVM call each other the ways a program does; then Ferry's internals are tried. */
public final class Main {
    public record Point(int x, int y) {
    }

    public static final class Counter {
        private int value;

        public Counter(int start) {
            value = start;
        }

        public synchronized int add(int delta) {
            return value += delta;
        }
    }

    private Main() {
    }

    public static Point shift(Point p, int by) {
        return new Point(p.x() + by, p.y() + by);
    }

    public static int fail(String why) {
        throw new IllegalStateException(why);
    }

    public static void main(String[] args) throws Exception {
        RpcBackendOptions options = RpcBackendOptions.builder()
                .initMethod("file://" + Files.createTempDirectory("modular").resolve("store"))
                .applicationPackage("com.example.modular").build();
        CompletableFuture<RpcAgent> starting = CompletableFuture.supplyAsync(() -> RpcAgents.start("worker1", 1, 2, options));
        RpcAgent zero = RpcAgents.start("worker0", 0, 2, options);
        RpcAgent one = starting.join();
        try {
            Point shifted = zero.rpcSync("worker1", Main::shift, new Point(1, 2), 10);
            int offset = 5;
            int captured = zero.rpcSync("worker1", (Integer x) -> x + offset, 1);
            RRef<Counter> counter = zero.remote("worker1", Counter::new, 1);
            RemoteMethod1<Integer, Integer> add = counter.method(Counter::add);
            add.rpcSync(1);
            System.out.println("calls: " + shifted + " " + captured + " " + add.rpcSync(1) + " "
                    + counter.ownerName() + " " + zero.getDebugInfo().get("agent.transport"));
            try {
                zero.rpcSync("worker1", Main::fail, "boom");
            } catch (RpcException e) {
                System.out.println("error: " + e.code() + " " + e.remoteClassName() + " " + e.remoteMessage());
            }

            Module ferry = RpcAgent.class.getModule();
            System.out.println("module: " + ferry.getName() + " exports dev.ferry.rpc.internal.agent: "
                    + ferry.isExported("dev.ferry.rpc.internal.agent"));
            try {
                Class.forName("dev.ferry.rpc.internal.serial.FunctionRef").getConstructors()[0]
                        .newInstance("a", "b", "()V", 6, null);
                System.out.println("internal: reachable");
            } catch (IllegalAccessException e) {
                System.out.println("internal: " + e.getMessage());
            }
        } finally {
            CompletableFuture<Void> closing = CompletableFuture.runAsync(one::shutdown);
            zero.shutdown();
            closing.join();
        }
    }
}
