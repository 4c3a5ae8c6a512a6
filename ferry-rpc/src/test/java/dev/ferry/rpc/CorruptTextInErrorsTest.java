package dev.ferry.rpc;

import dev.ferry.rpc.testing.LocalCluster;
import org.apache.fory.serializer.StringSerializer;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * A function that fails with a message a peer's bytes made corrupt (a Fory string header with the
 * impossible coder 3, which Fory 1.6 accepts: MessageDecoderFuzzTest found it) is answered: before,
 * describing the failure threw, no answer left, and the caller timed out.
 */
class CorruptTextInErrorsTest {

    /** Fails with the string a mutated header gives (see IntactTextTest). */
    public static int failWithACorruptMessage() {
        throw new IllegalStateException(StringSerializer.newBytesStringZeroCopy((byte) 3,
                new byte[] {0x63, (byte) 0xd0, (byte) 0x93, (byte) 0x89}));
    }

    @Test
    void theCallerGetsTheRemoteErrorWithTheMessagesCharacters() {
        try (LocalCluster cluster = LocalCluster.start(2)) {
            RpcException error = catchThrowableOfType(RpcException.class, () -> cluster.agent(0)
                    .to("worker1").withTimeout(Duration.ofSeconds(20)).rpcSync(CorruptTextInErrorsTest::failWithACorruptMessage));

            assertThat(error.code()).isEqualTo(RpcException.Code.REMOTE_ERROR);
            assertThat(error.remoteClassName()).isEqualTo(IllegalStateException.class.getName());
            assertThat(error.remoteMessage()).isEqualTo("\ud063\u8993");
            assertThat(cluster.agent(0).rpcSync("worker1", Ops::add, 1, 2)).isEqualTo(3);
        }
    }
}
