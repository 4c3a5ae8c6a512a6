package dev.ferry.rpc.internal.agent;

import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The group-wide device map rules, in PyTorch's words. Device names here are arbitrary strings:
 * the rules do not depend on which devices exist (the options builder checks that).
 */
class DeviceMapCheckTest {
    private static Map<String, List<String>> devices(List<String> w0, List<String> w1) {
        Map<String, List<String>> all = new LinkedHashMap<>();
        all.put("worker0", w0);
        all.put("worker1", w1);
        return all;
    }

    private static Map<String, Map<String, Map<String, String>>> maps(Map<String, Map<String, String>> ofWorker0) {
        Map<String, Map<String, Map<String, String>>> all = new LinkedHashMap<>();
        all.put("worker0", ofWorker0);
        all.put("worker1", Map.of());
        return all;
    }

    @Test
    void consistentMapsPass() {
        assertThat(DeviceMapCheck.validate(maps(Map.of("worker1", Map.of("cpu", "cpu"))),
                devices(List.of(), List.of()))).isNull();
        assertThat(DeviceMapCheck.validate(maps(Map.of("worker1", Map.of("a", "b"))),
                devices(List.of("a"), List.of("b")))).isNull();
        assertThat(DeviceMapCheck.validate(maps(Map.of()), devices(List.of(), List.of()))).isNull();
    }

    @Test
    void eachRuleHasPyTorchsMessage() {
        assertThat(DeviceMapCheck.validate(maps(Map.of()), devices(List.of("a", "a"), List.of())))
                .startsWith("Node worker0 has duplicated devices");
        assertThat(DeviceMapCheck.validate(maps(Map.of("worker9", Map.of("a", "a"))), devices(List.of(), List.of())))
                .startsWith("Node worker0 has invalid target node names in its device maps");
        assertThat(DeviceMapCheck.validate(maps(Map.of("worker1", Map.of("a", "c", "b", "c"))),
                devices(List.of(), List.of())))
                .isEqualTo("Node worker0 has duplicated target devices in its device map for worker1");
        assertThat(DeviceMapCheck.validate(maps(Map.of("worker1", Map.of("x", "b"))), devices(List.of("a"), List.of())))
                .isEqualTo("Node worker0 has unexpected source devices in its device map for worker1");
        assertThat(DeviceMapCheck.validate(maps(Map.of("worker1", Map.of("a", "x"))), devices(List.of(), List.of("b"))))
                .isEqualTo("Node worker0 has unexpected target devices in its device map for worker1");
    }
}
