package dev.ferry.rpc.internal.transport;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Array;
import java.util.Optional;

/**
 * Duplicates a socket's file descriptor ({@code fcntl(fd, F_DUPFD_CLOEXEC, 0)}) through the
 * Foreign Function API, so that {@link DirectWriter} writes through a descriptor number of its own.
 * Netty closes its descriptor whenever the channel closes, on its event loop, with no hook: a
 * sending thread that wrote through Netty's number could, after such a close, write into whatever
 * file or socket reused that number. A duplicate stays valid until this side closes it.
 *
 * <p>The Foreign Function API is final from JDK 22 and Ferry compiles for 21, so it is reached by
 * reflection; on JDK 21 (or without native access) {@link #available()} is false and nothing is
 * duplicated.
 *
 * <p>Thread-safe.
 */
final class DuplicateDescriptors {
    private static final Logger log = LoggerFactory.getLogger(DuplicateDescriptors.class);
    /** Linux's {@code F_DUPFD_CLOEXEC}: a duplicate that a child process does not inherit. */
    private static final int F_DUPFD_CLOEXEC = 1030;
    /** {@code (int fd, int cmd, int arg) -> int}, or null when unavailable. */
    private static final MethodHandle FCNTL = link();

    private DuplicateDescriptors() {
    }

    /** Whether descriptors can be duplicated in this JVM. */
    static boolean available() {
        return FCNTL != null;
    }

    /** Runs the call once on no descriptor (it fails with EBADF), so that its first real use is cheap. */
    static void warmUp() {
        duplicate(-1);
    }

    /** A new descriptor for the same open socket as {@code fd}, or -1 when that cannot be had. */
    static int duplicate(int fd) {
        if (FCNTL == null) {
            return -1;
        }
        try {
            return (int) FCNTL.invokeExact(fd, F_DUPFD_CLOEXEC, 0);
        } catch (Throwable e) {
            log.debug("cannot duplicate descriptor {}: {}", fd, e.toString());
            return -1;
        }
    }

    private static MethodHandle link() {
        if (Runtime.version().feature() < 22 || !"Linux".equals(System.getProperty("os.name"))) {
            return null;
        }
        try {
            Class<?> linker = Class.forName("java.lang.foreign.Linker");
            Class<?> option = Class.forName("java.lang.foreign.Linker$Option");
            Class<?> lookup = Class.forName("java.lang.foreign.SymbolLookup");
            Class<?> layout = Class.forName("java.lang.foreign.MemoryLayout");
            Class<?> descriptor = Class.forName("java.lang.foreign.FunctionDescriptor");
            Class<?> segment = Class.forName("java.lang.foreign.MemorySegment");
            Object javaInt = Class.forName("java.lang.foreign.ValueLayout").getField("JAVA_INT").get(null);
            Object nativeLinker = linker.getMethod("nativeLinker").invoke(null);
            Object defaults = linker.getMethod("defaultLookup").invoke(nativeLinker);
            Optional<?> symbol = (Optional<?>) lookup.getMethod("find", String.class).invoke(defaults, "fcntl");
            if (symbol.isEmpty()) {
                return null;
            }
            Object[] arguments = (Object[]) Array.newInstance(layout, 3);
            arguments[0] = javaInt;
            arguments[1] = javaInt;
            arguments[2] = javaInt;
            Object signature = descriptor.getMethod("of", layout, arguments.getClass()).invoke(null, javaInt, arguments);
            // fcntl is variadic after its command: the third argument is passed as a variadic one.
            Object[] options = (Object[]) Array.newInstance(option, 1);
            options[0] = option.getMethod("firstVariadicArg", int.class).invoke(null, 2);
            // Restricted: looked up from here (Ferry's JVM flags grant native access).
            MethodHandle downcall = MethodHandles.lookup().findVirtual(linker, "downcallHandle",
                    MethodType.methodType(MethodHandle.class, segment, descriptor, options.getClass())).asFixedArity();
            MethodHandle fcntl = (MethodHandle) downcall.invoke(nativeLinker, symbol.get(), signature, options);
            return fcntl.asType(MethodType.methodType(int.class, int.class, int.class, int.class));
        } catch (Throwable e) {
            log.debug("descriptors cannot be duplicated here (senders will not write to sockets themselves): {}",
                    e.toString());
            return null;
        }
    }
}
