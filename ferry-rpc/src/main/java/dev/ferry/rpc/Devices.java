package dev.ferry.rpc;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Checks device names and device maps as PyTorch's {@code TensorPipeRpcBackendOptions} does. Ferry's
 * tensors live on the CPU only, so {@code "cpu"} is the one device that exists: any other device is
 * an error here rather than an option silently ignored.
 */
final class Devices {
    static final String CPU = "cpu";
    // torch.device syntax: "type" or "type:index"; a bare integer means a CUDA index.
    private static final Pattern DEVICE = Pattern.compile("(?:([a-z]+)(?::(-?\\d+))?|(-?\\d+))");

    private Devices() {
    }

    /** Checks one device name; returns it. */
    static String check(String device) {
        syntax(device);
        if (!CPU.equals(device)) {
            throw invalid("device '" + device + "' is not available: Ferry's tensors are CPU-only, so the only"
                    + " device is \"" + CPU + "\"");
        }
        return device;
    }

    /**
     * Checks a map for one destination, as {@code set_device_map}: one-to-one, including with the
     * entries already in {@code existing}; returns the merged map.
     */
    static Map<String, String> merge(String to, Map<String, String> existing, Map<String, String> added) {
        Map<String, String> merged = new LinkedHashMap<>(existing);
        Map<String, String> sourceOf = new LinkedHashMap<>();
        existing.forEach((source, target) -> sourceOf.put(target, source));
        for (Map.Entry<String, String> entry : added.entrySet()) {
            String source = syntax(entry.getKey());
            String target = syntax(entry.getValue());
            String old = merged.get(source);
            if (old != null && !old.equals(target)) {
                throw invalid("`set_device_map` only supports 1-to-1 mapping, trying to map " + source + " to "
                        + target + " and " + old + " (for " + to + ")");
            }
            String previous = sourceOf.get(target);
            if (previous != null && !previous.equals(source)) {
                throw invalid("`set_device_map` only supports 1-to-1 mapping, trying to map " + source + " and "
                        + previous + " to " + target + " (for " + to + ")");
            }
            merged.put(source, target);
            sourceOf.put(target, source);
        }
        // One-to-one first, as PyTorch checks the mapping before it looks at which devices exist.
        merged.forEach((source, target) -> {
            check(source);
            check(target);
        });
        return merged;
    }

    /** Checks a device list, as {@code set_devices}: no duplicates, only devices that exist. */
    static List<String> checkList(List<String> devices) {
        List<String> copy = List.copyOf(devices);
        if (copy.stream().distinct().count() != copy.size()) {
            throw invalid("duplicated devices in " + copy);
        }
        copy.forEach(Devices::check);
        return copy;
    }

    private static String syntax(String device) {
        if (device == null) {
            throw invalid("a device must not be null");
        }
        Matcher m = DEVICE.matcher(device.trim());
        if (!m.matches()) {
            throw invalid("invalid device string: '" + device + "'");
        }
        String index = m.group(2) != null ? m.group(2) : m.group(3);
        if (index != null && index.startsWith("-")) {
            throw invalid("Device index must not be negative, got '" + device + "'");
        }
        return device;
    }

    private static RpcException invalid(String message) {
        return new RpcException(RpcException.Code.INVALID_ARGUMENT, message);
    }
}
