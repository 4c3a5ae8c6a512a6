package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.internal.serial.ClassPolicy;
import dev.ferry.rpc.internal.serial.EncodedPayload;
import dev.ferry.rpc.internal.serial.ObjectCodec;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class HelloTest {

    @Test
    void aHelloCrossesTheWireWithItsHandWrittenSerializer() {
        ObjectCodec codec = new ObjectCodec(new ClassPolicy(List.of("dev.ferry")), List.of(), 64 * 1024, Hello::register, null, 1L << 20);
        Hello hello = new Hello("group-7f3a", "trainer\u00e9", 12, 1L << 40, "10.0.0.7:29501;/tmp/ferry-1/w.sock");

        EncodedPayload payload = codec.encode(hello);

        assertThat(codec.decode(ByteBuffer.wrap(payload.inBand()), List.of(), Hello.class)).isEqualTo(hello);
    }
}
