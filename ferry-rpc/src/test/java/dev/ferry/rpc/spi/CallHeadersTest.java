package dev.ferry.rpc.spi;

import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class CallHeadersTest {
    private static final HeaderKey<Long> CONTEXT = HeaderKey.ofLong("ctx");
    private static final HeaderKey<String> TRACE = HeaderKey.ofString("trace");

    @Test
    void withReplacesKeepsOrderAndLeavesTheOriginalUntouched() {
        CallHeaders one = CallHeaders.empty().with(CONTEXT, 1L);
        CallHeaders two = one.with(TRACE, "t").with(CONTEXT, 2L);
        assertThat(one.get(CONTEXT)).isEqualTo(1L);
        assertThat(one.contains(TRACE)).isFalse();
        assertThat(two.get(CONTEXT)).isEqualTo(2L);
        assertThat(two.get(TRACE)).isEqualTo("t");
        assertThat(two.size()).isEqualTo(2);
        assertThat(two.nameAt(0)).isEqualTo("ctx");
        assertThat(two.nameAt(1)).isEqualTo("trace");
        assertThat(two.raw().keySet()).containsExactly("ctx", "trace");
    }

    @Test
    void withoutRemovesOnlyThatKey() {
        CallHeaders both = CallHeaders.empty().with(CONTEXT, 1L).with(TRACE, "t");
        assertThat(both.without(CONTEXT).raw().keySet()).containsExactly("trace");
        assertThat(both.without(CONTEXT).without(TRACE)).isSameAs(CallHeaders.empty());
        assertThat(both.without(HeaderKey.ofString("absent"))).isSameAs(both);
    }

    @Test
    void rawEntriesFromTheWireKeepTheLastOfARepeatedName() {
        CallHeaders headers = CallHeaders.ofRaw(new String[] {"trace", "ctx", "trace"},
                new byte[][] {{'a'}, {0, 0, 0, 0, 0, 0, 0, 7}, {'b'}});
        assertThat(headers.size()).isEqualTo(2);
        assertThat(headers.get(TRACE)).isEqualTo("b");
        assertThat(headers.get(CONTEXT)).isEqualTo(7L);
        Map<String, byte[]> map = new LinkedHashMap<>();
        map.put("trace", new byte[] {'c'});
        assertThat(CallHeaders.ofRaw(map).get(TRACE)).isEqualTo("c");
        assertThatThrownBy(() -> CallHeaders.ofRaw(new String[] {"a"}, new byte[0][]))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("1 names but 0 values");
    }
}
