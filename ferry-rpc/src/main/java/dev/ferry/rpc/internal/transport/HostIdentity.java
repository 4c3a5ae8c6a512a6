package dev.ferry.rpc.internal.transport;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Identifies this host for choosing a same-host channel: the hostname plus the kernel's boot id
 * ({@code /proc/sys/kernel/random/boot_id}), so two containers or machines that share a hostname
 * but not a kernel are told apart, plus the network namespace ({@code /proc/self/ns/net}), so that
 * processes in different network namespaces of one kernel (pods on one Kubernetes node, test hosts)
 * talk over their network as separate hosts do instead of through a socket file that may not be
 * shared. Thread-safe (stateless).
 */
public final class HostIdentity {
    private static final Path BOOT_ID = Path.of("/proc/sys/kernel/random/boot_id");
    private static final Path NET_NAMESPACE = Path.of("/proc/self/ns/net");

    private HostIdentity() {
    }

    /** {@code hostname/boot-id/net-namespace}; {@code ?} for a part that cannot be read. */
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
        String network;
        try {
            network = Files.readSymbolicLink(NET_NAMESPACE).toString(); // e.g. net:[4026531840]
        } catch (IOException | UnsupportedOperationException e) {
            network = "?";
        }
        return (host + "/" + boot + "/" + network).replace(';', '_');
    }
}
