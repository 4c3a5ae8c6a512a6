package dev.ferry.rpc.internal.serial;

/**
 * What travels for a remote function: the method that implements it, named by class, method name
 * and JVM descriptor, how to invoke it ({@code kind}, a {@link java.lang.invoke.MethodHandleInfo}
 * reference kind), and the values a lambda or bound method reference captured. Never code.
 */
public record FunctionRef(String className, String methodName, String descriptor, int kind, Object[] captured) {
    /** A readable name, {@code Class::method}, for messages and interceptors. */
    public String displayName() {
        int dot = className.lastIndexOf('.');
        return className.substring(dot + 1) + "::" + methodName;
    }

    /**
     * Wraps a reply value the way the method's declared return type needs: an asynchronous
     * function returns a future, and the reply carries that future's value, so the caller gets it
     * back as a completed future of the declared kind.
     */
    public Object asDeclaredResult(Object value) {
        if (descriptor.endsWith(")Ldev/ferry/rpc/RpcFuture;")) {
            return dev.ferry.rpc.RpcFuture.completed(value);
        }
        if (descriptor.endsWith(")Ljava/util/concurrent/CompletionStage;")
                || descriptor.endsWith(")Ljava/util/concurrent/CompletableFuture;")) {
            return java.util.concurrent.CompletableFuture.completedFuture(value);
        }
        return value;
    }

    /** The part that identifies the method, without the captured values. */
    public MethodKey key() {
        return new MethodKey(className, methodName, descriptor, kind);
    }

    /** Identifies a method independent of captured values; used to cache resolutions. */
    public record MethodKey(String className, String methodName, String descriptor, int kind) {
    }
}
