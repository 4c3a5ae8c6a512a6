package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.RpcBackendOptions;
import dev.ferry.rpc.RpcException;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * PyTorch's {@code _validate_device_maps}, run at initialization: every worker gathers every
 * worker's device maps and devices and checks them all, so a bad map fails every worker with the
 * same message rather than one worker at its first call. The options builder already rejected
 * non-CPU devices and maps that are not one-to-one; what is left to check needs the group.
 */
final class DeviceMapCheck {
    private static final String MAPS = "deviceMaps";
    private static final String DEVICES = "devices";

    private DeviceMapCheck() {
    }

    /** Exchanges this worker's settings with the group and checks them all. */
    static void exchangeAndCheck(RpcAgent agent, RpcBackendOptions options) {
        Map<String, Object> mine = new LinkedHashMap<>();
        // Plain JDK collections: whatever class policy the group uses lets them through.
        Map<String, Map<String, String>> maps = new LinkedHashMap<>();
        options.deviceMaps().forEach((to, map) -> maps.put(to, new LinkedHashMap<>(map)));
        mine.put(MAPS, maps);
        mine.put(DEVICES, new ArrayList<>(options.devices()));
        Map<String, Object> all = agent.allGather(mine, options.rendezvousTimeout());
        Map<String, Map<String, Map<String, String>>> mapsByWorker = new LinkedHashMap<>();
        Map<String, List<String>> devicesByWorker = new LinkedHashMap<>();
        all.forEach((worker, value) -> {
            @SuppressWarnings("unchecked")
            Map<String, Object> settings = (Map<String, Object>) value;
            @SuppressWarnings("unchecked")
            Map<String, Map<String, String>> workerMaps = (Map<String, Map<String, String>>) settings.get(MAPS);
            @SuppressWarnings("unchecked")
            List<String> workerDevices = (List<String>) settings.get(DEVICES);
            mapsByWorker.put(worker, workerMaps);
            devicesByWorker.put(worker, workerDevices);
        });
        String error = validate(mapsByWorker, devicesByWorker);
        if (error != null) {
            throw new RpcException(RpcException.Code.INVALID_ARGUMENT, error);
        }
    }

    /**
     * The first problem found, in PyTorch's words and order, or null. A worker that lists no devices
     * accepts any device of its maps, as PyTorch infers the devices from the maps then.
     */
    static String validate(Map<String, Map<String, Map<String, String>>> mapsByWorker,
                           Map<String, List<String>> devicesByWorker) {
        for (Map.Entry<String, List<String>> entry : devicesByWorker.entrySet()) {
            if (new HashSet<>(entry.getValue()).size() != entry.getValue().size()) {
                return "Node " + entry.getKey() + " has duplicated devices: " + entry.getValue();
            }
        }
        for (Map.Entry<String, Map<String, Map<String, String>>> source : mapsByWorker.entrySet()) {
            String src = source.getKey();
            if (!devicesByWorker.keySet().containsAll(source.getValue().keySet())) {
                return "Node " + src + " has invalid target node names in its device maps: "
                        + source.getValue().keySet() + ", workers are " + devicesByWorker.keySet();
            }
            for (Map.Entry<String, Map<String, String>> target : source.getValue().entrySet()) {
                String dst = target.getKey();
                Map<String, String> map = target.getValue();
                if (new HashSet<>(map.values()).size() != map.size()) {
                    return "Node " + src + " has duplicated target devices in its device map for " + dst;
                }
                if (unexpected(map.keySet(), devicesByWorker.get(src))) {
                    return "Node " + src + " has unexpected source devices in its device map for " + dst;
                }
                if (unexpected(map.values(), devicesByWorker.get(dst))) {
                    return "Node " + src + " has unexpected target devices in its device map for " + dst;
                }
            }
        }
        return null;
    }

    private static boolean unexpected(Collection<String> used, List<String> declared) {
        if (declared.isEmpty()) {
            return false;
        }
        Set<String> allowed = new HashSet<>(declared);
        return !allowed.containsAll(used);
    }
}
