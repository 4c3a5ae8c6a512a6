package dev.ferry.rpc.internal.serial;

import org.apache.fory.serializer.StringSerializer;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A string with the coder a mutated Fory header gives (3) is made sound; sound strings are kept. */
class IntactTextTest {

    /** What Fory 1.6 builds for a string header whose coder bits read 3 (MessageDecoderFuzzTest's find). */
    static String corrupt() {
        return StringSerializer.newBytesStringZeroCopy((byte) 3, new byte[] {0x63, (byte) 0xd0, (byte) 0x93, (byte) 0x89});
    }

    @Test
    void aStringWithAnImpossibleCoderBecomesItsCharacters() {
        String bad = corrupt();
        assertThat(bad.length()).isZero();
        assertThatThrownBy(() -> String.valueOf("x" + bad)).isInstanceOf(IndexOutOfBoundsException.class);

        String sound = IntactText.of(bad);

        assertThat(sound).isEqualTo("\ud063\u8993").hasSize(2);
        assertThat("x" + sound).isEqualTo("x\ud063\u8993");
    }

    @Test
    void soundStringsAndNullAreKeptAsTheyAre() {
        for (String text : List.of("", "latin1", "\u00e9t\u00e9", "\u4e2d\u6587", "\ud83d\ude00")) {
            assertThat(IntactText.of(text)).isSameAs(text);
        }
        assertThat(IntactText.of(null)).isNull();
    }

    @Test
    void aFailureDescriptionIsSoundWhateverItsMessage() {
        RemoteErrorInfo info = RemoteErrorInfo.of(new IllegalStateException(corrupt()));

        assertThat(info.message()).isEqualTo("\ud063\u8993");
        assertThat(info.toException("worker1").getMessage()).contains("\ud063\u8993");
        RemoteErrorInfo received = new RemoteErrorInfo("REMOTE_ERROR", corrupt(), corrupt(),
                List.of(new RemoteErrorInfo.Frame(corrupt(), corrupt(), corrupt(), 1)), null);
        assertThat(received.toException("worker1").getMessage()).contains("\ud063\u8993");
        assertThat(received.frames().getFirst().toElement().toString()).contains("\ud063\u8993");
    }
}
