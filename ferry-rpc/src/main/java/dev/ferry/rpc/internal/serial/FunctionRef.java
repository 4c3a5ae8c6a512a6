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

    /** The part that identifies the method, without the captured values. */
    public MethodKey key() {
        return new MethodKey(className, methodName, descriptor, kind);
    }

    /** Identifies a method independent of captured values; used to cache resolutions. */
    public record MethodKey(String className, String methodName, String descriptor, int kind) {
    }
}
