package dev.ferry.rpc.internal.serial;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Objects;

/**
 * What travels for a remote function: the method that implements it, named by class, method name
 * and JVM descriptor, how to invoke it ({@code kind}, a {@link java.lang.invoke.MethodHandleInfo}
 * reference kind), and the values a lambda or bound method reference captured. Never code.
 *
 * <p>Immutable. What is derived from the method's identity (its {@link #displayName()}, {@link
 * #key()} and wire form) is computed once per identity: the caller keeps one instance per
 * non-capturing lambda class ({@link FunctionRefs}), the callee one per identity it has decoded
 * ({@link FunctionIdentities}), so a call allocates none of it.
 */
public final class FunctionRef {
    private final String className;
    private final String methodName;
    private final String descriptor;
    private final int kind;
    private final Object[] captured;
    /**
     * The handle the callee gave this function when it was bound there ({@link FunctionHandles}),
     * written instead of the identity; {@link #NO_HANDLE} for a reference that names the method.
     */
    private final int handle;
    private static final String RPC_FUTURE = ")Ldev/ferry/rpc/RpcFuture;";
    private static final String COMPLETION_STAGE = ")Ljava/util/concurrent/CompletionStage;";
    private static final String COMPLETABLE_FUTURE = ")Ljava/util/concurrent/CompletableFuture;";

    /** Shared by every reference to the same method. */
    private final Identity identity;

    /** The {@link #handle()} of a reference that travels as the method's identity. */
    public static final int NO_HANDLE = -1;

    public FunctionRef(String className, String methodName, String descriptor, int kind, Object[] captured) {
        this(new Identity(Objects.requireNonNull(className, "className"), Objects.requireNonNull(methodName, "methodName"),
                Objects.requireNonNull(descriptor, "descriptor"), kind), captured, NO_HANDLE);
    }

    private FunctionRef(Identity identity, Object[] captured, int handle) {
        this.handle = handle;
        this.className = identity.key.className();
        this.methodName = identity.key.methodName();
        this.descriptor = identity.key.descriptor();
        this.kind = identity.key.kind();
        this.identity = identity;
        this.captured = captured;
    }

    public String className() {
        return className;
    }

    public String methodName() {
        return methodName;
    }

    public String descriptor() {
        return descriptor;
    }

    public int kind() {
        return kind;
    }

    public Object[] captured() {
        return captured;
    }

    /** The callee's handle for this function ({@link FunctionHandles}), or {@link #NO_HANDLE}. */
    public int handle() {
        return handle;
    }

    /**
     * This reference as it travels to the one worker that bound the function as {@code handle}:
     * the handle instead of the method's identity, the same captured values.
     */
    public FunctionRef withHandle(int handle) {
        if (handle < 0) {
            throw new IllegalArgumentException("function handle " + handle);
        }
        return new FunctionRef(identity, captured, handle);
    }

    /** A readable name, {@code Class::method}, for messages and interceptors. */
    public String displayName() {
        return identity.displayName;
    }

    /**
     * Wraps a reply value the way the caller's static type needs: an asynchronous function returns
     * a future, and the reply carries that future's value. Called through an
     * {@link dev.ferry.rpc.AsyncRemoteFunction} the caller's type is the value's, and it gets the
     * value; called through an {@code RpcFunctionN} its type is the declared future, and it gets the
     * value as a completed future of that kind.
     */
    public Object asDeclaredResult(Object value) {
        return identity.futureValue ? value : asDeclaredResult(descriptor, value);
    }

    /** Whether the method's declared result is a future ({@link dev.ferry.rpc.RpcFuture} or a {@code CompletionStage}). */
    public boolean declaresFuture() {
        return descriptor.endsWith(RPC_FUTURE) || descriptor.endsWith(COMPLETION_STAGE)
                || descriptor.endsWith(COMPLETABLE_FUTURE);
    }

    /** Whether the caller's static type is the value of the future the function returns (see {@link #asDeclaredResult}). */
    public boolean futureValue() {
        return identity.futureValue;
    }

    /** Notes that the caller called through an {@link dev.ferry.rpc.AsyncRemoteFunction} (before it is shared). */
    void markFutureValue() {
        identity.futureValue = true;
    }

    /** {@link #asDeclaredResult(Object)} for the method of JVM descriptor {@code descriptor}. */
    public static Object asDeclaredResult(String descriptor, Object value) {
        if (descriptor.endsWith(RPC_FUTURE)) {
            return dev.ferry.rpc.RpcFuture.completed(value);
        }
        if (descriptor.endsWith(COMPLETION_STAGE) || descriptor.endsWith(COMPLETABLE_FUTURE)) {
            return java.util.concurrent.CompletableFuture.completedFuture(value);
        }
        return value;
    }

    /** The part that identifies the method, without the captured values. */
    public MethodKey key() {
        return identity.key;
    }

    /** The same method with other captured values (sharing everything derived from the method). */
    FunctionRef withCaptured(Object[] values) {
        return new FunctionRef(identity, values, handle);
    }

    /** A reference to the method {@code identity} names (as decoded by {@link FunctionIdentities}). */
    static FunctionRef of(Identity identity, Object[] captured) {
        return new FunctionRef(identity, captured, NO_HANDLE);
    }

    /** The method's identity and what is derived from it. */
    Identity identity() {
        return identity;
    }

    /** The method's identity as {@link WireSerializers} writes it, encoded once. */
    byte[] identityBytes() {
        return identity.bytes;
    }

    @Override
    public boolean equals(Object o) {
        // as the record this class was: captured values compared by reference
        return o instanceof FunctionRef other && identity.key.equals(other.identity.key) && captured == other.captured;
    }

    @Override
    public int hashCode() {
        return identity.key.hashCode() * 31 + System.identityHashCode(captured);
    }

    @Override
    public String toString() {
        return "FunctionRef[" + displayName() + descriptor + ", kind " + kind + ", " + (captured == null ? 0 : captured.length)
                + " captured" + (handle == NO_HANDLE ? "" : ", handle " + handle) + "]";
    }

    /** Identifies a method independent of captured values; used to cache resolutions. */
    public record MethodKey(String className, String methodName, String descriptor, int kind) {
        // Written out for the reason WorkerInfo gives: the generated ones link method handles.
        @Override
        public boolean equals(Object other) {
            return other instanceof MethodKey that && kind == that.kind && className.equals(that.className)
                    && methodName.equals(that.methodName) && descriptor.equals(that.descriptor);
        }

        @Override
        public int hashCode() {
            return ((className.hashCode() * 31 + methodName.hashCode()) * 31 + descriptor.hashCode()) * 31 + kind;
        }
    }

    /** The identity of a method and what is derived from it. */
    static final class Identity {
        final MethodKey key;
        final String displayName;
        final byte[] bytes;
        /** Set once, before the identity is shared, by the caller that made it: see {@link #asDeclaredResult}. */
        boolean futureValue;

        Identity(String className, String methodName, String descriptor, int kind) {
            this.key = new MethodKey(className, methodName, descriptor, kind);
            int dot = className.lastIndexOf('.');
            this.displayName = className.substring(dot + 1) + "::" + methodName;
            this.bytes = encode(className, methodName, descriptor, kind);
        }

        /** {@code | class | method | descriptor | kind |}, strings in modified UTF-8 with 2-byte lengths. */
        private static byte[] encode(String className, String methodName, String descriptor, int kind) {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream(64 + className.length() + descriptor.length());
            try (DataOutputStream out = new DataOutputStream(bytes)) {
                out.writeUTF(className);
                out.writeUTF(methodName);
                out.writeUTF(descriptor);
                out.writeInt(kind);
            } catch (IOException e) {
                // writeUTF refuses strings over 64 KiB encoded; no class or method name is that long
                throw new UncheckedIOException("cannot encode the function " + className + "::" + methodName, e);
            }
            return bytes.toByteArray();
        }

        static Identity decode(byte[] bytes, int length) {
            try (java.io.DataInputStream in = new java.io.DataInputStream(new java.io.ByteArrayInputStream(bytes, 0, length))) {
                Identity identity = new Identity(in.readUTF(), in.readUTF(), in.readUTF(), in.readInt());
                if (in.available() != 0) {
                    throw new IllegalArgumentException("function identity has " + in.available() + " bytes too many");
                }
                return identity;
            } catch (IOException e) {
                throw new IllegalArgumentException("malformed function identity: " + e, e);
            }
        }
    }
}
