package dev.ferry.rpc.internal.transport;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.Optional;

import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * Duplicates a socket's file descriptor ({@code fcntl(fd, F_DUPFD_CLOEXEC, 0)}) through the
 * Foreign Function API, so that {@link DirectWriter} writes through a descriptor number of its own.
 * Netty closes its descriptor whenever the channel closes, on its event loop, with no hook: a
 * sending thread that wrote through Netty's number could, after such a close, write into whatever
 * file or socket reused that number. A duplicate stays valid until this side closes it.
 *
 * <p>Off Linux, or where the JVM refuses the native call, {@link #available()} is false and
 * nothing is duplicated.
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
        if (!"Linux".equals(System.getProperty("os.name"))) {
            return null;
        }
        try {
            Linker linker = Linker.nativeLinker();
            Optional<MemorySegment> fcntl = linker.defaultLookup().find("fcntl");
            if (fcntl.isEmpty()) {
                return null;
            }
            FunctionDescriptor signature = FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT);
            // fcntl is variadic after its command: the third argument is passed as a variadic one.
            // Restricted: Ferry's JVM flags grant native access.
            return linker.downcallHandle(fcntl.get(), signature, Linker.Option.firstVariadicArg(2));
        } catch (RuntimeException e) {
            log.debug("descriptors cannot be duplicated here (senders will not write to sockets themselves): {}",
                    e.toString());
            return null;
        }
    }
}
