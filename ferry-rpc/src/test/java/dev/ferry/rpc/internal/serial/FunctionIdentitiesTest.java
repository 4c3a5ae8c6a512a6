package dev.ferry.rpc.internal.serial;

import org.apache.fory.memory.MemoryBuffer;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class FunctionIdentitiesTest {

    /** The identity's wire bytes at {@code offset} of a larger buffer, with other bytes around them. */
    private static MemoryBuffer at(int offset, byte[] identity) {
        byte[] bytes = new byte[offset + identity.length + 5];
        java.util.Arrays.fill(bytes, (byte) 0x5a);
        System.arraycopy(identity, 0, bytes, offset, identity.length);
        MemoryBuffer buffer = MemoryBuffer.fromByteArray(bytes);
        buffer.readerIndex(offset);
        return buffer;
    }

    @Test
    void aKnownIdentityIsRecognisedWhereverItSitsInTheMessage() {
        FunctionIdentities identities = new FunctionIdentities();
        // Names of several lengths, so the identity's length is and is not a multiple of eight.
        for (String method : new String[] {"a", "ab", "abc", "abcd", "abcde", "abcdef", "abcdefg", "abcdefgh"}) {
            byte[] wire = new FunctionRef.Identity("org.example.Calc", method, "(II)I", 0).bytes;
            MemoryBuffer first = at(3, wire);
            FunctionRef.Identity decoded = identities.read(first, wire.length);
            assertThat(decoded.key.methodName()).isEqualTo(method);
            assertThat(first.readerIndex()).isEqualTo(3 + wire.length);

            MemoryBuffer again = at(11, wire);
            assertThat(identities.read(again, wire.length)).isSameAs(decoded);
            assertThat(again.readerIndex()).isEqualTo(11 + wire.length);
        }
    }

    @Test
    void identitiesDifferingInOneByteAreNotConfused() {
        FunctionIdentities identities = new FunctionIdentities();
        byte[] add = new FunctionRef.Identity("org.example.Calc", "add", "(II)I", 0).bytes;
        byte[] sub = new FunctionRef.Identity("org.example.Calc", "sub", "(II)I", 0).bytes;
        byte[] last = new FunctionRef.Identity("org.example.Calc", "add", "(II)I", 1).bytes;
        for (int round = 0; round < 3; round++) {
            assertThat(identities.read(at(0, add), add.length).key.methodName()).isEqualTo("add");
            assertThat(identities.read(at(0, sub), sub.length).key.methodName()).isEqualTo("sub");
            assertThat(identities.read(at(0, last), last.length).key.kind()).isEqualTo(1);
            assertThat(identities.read(at(0, add), add.length).key.kind()).isEqualTo(0);
        }
    }

    @Test
    void aLengthBeyondTheMessageIsRefused() {
        byte[] wire = new FunctionRef.Identity("org.example.Calc", "add", "(II)I", 0).bytes;
        assertThatThrownBy(() -> new FunctionIdentities().read(at(0, wire), wire.length + 100))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("function identity of " + (wire.length + 100) + " bytes");
    }
}
