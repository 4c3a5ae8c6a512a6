package dev.ferry.rpc.internal.transport;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Identifies this host for choosing a same-host channel: the hostname plus the kernel's boot id
 * ({@code /proc/sys/kernel/random/boot_id}), so two containers or machines that share a hostname
 * but not a kernel are told apart. Thread-safe (stateless).
 */
public final class HostIdentity {
    private static final Path BOOT_ID = Path.of("/proc/sys/kernel/random/boot_id");

    private HostIdentity() {
    }

    /** {@code hostname/boot-id}; {@code hostname/?} where the boot id cannot be read. */
    public static String local() {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            host = "unknown-host";
        }
        String boot;
        try {
            boot = Files.readString(BOOT_ID, StandardCharsets.US_ASCII).trim();
        } catch (IOException | UnsupportedOperationException e) {
            boot = "?";
        }
        return (host + "/" + boot).replace(';', '_');
    }
}
