package dev.ferry.rpc.internal.transport;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

/**
 * The classes a transport initializes at start so that their first use does not deoptimize
 * compiled code ({@code NettyTransport.RARE_PATH_CLASSES}) all exist: a rename in Netty or here
 * would otherwise only show as a debug log line and deoptimizations in benchmarks.
 */
class RarePathClassesTest {
    @Test
    void everyNamedClassExists() {
        assertThat(NettyTransport.RARE_PATH_CLASSES).isNotEmpty().doesNotHaveDuplicates();
        for (String name : NettyTransport.RARE_PATH_CLASSES) {
            assertThatCode(() -> Class.forName(name, false, NettyTransport.class.getClassLoader()))
                    .as(name).doesNotThrowAnyException();
        }
    }
}
