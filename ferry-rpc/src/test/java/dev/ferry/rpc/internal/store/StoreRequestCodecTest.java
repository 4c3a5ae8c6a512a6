package dev.ferry.rpc.internal.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The store protocol codec, exercised on byte arrays without any socket. */
class StoreRequestCodecTest {

    private static Frame readFrame(byte[] bytes) throws IOException {
        return Frame.read(new DataInputStream(new ByteArrayInputStream(bytes)), StoreProtocol.MAX_FRAME_BYTES);
    }

    private static StoreRequest roundTrip(StoreRequest request, int id) throws IOException {
        Frame frame = readFrame(request.encode(id));
        assertThat(frame.id()).isEqualTo(id);
        assertThat(frame.type()).isEqualTo(request.op());
        return StoreRequest.decode(frame);
    }

    @Test
    void everyRequestSurvivesARoundTrip() throws IOException {
        assertThat(roundTrip(new StoreRequest.Get("k", 1500), 7)).isEqualTo(new StoreRequest.Get("k", 1500));
        assertThat(roundTrip(new StoreRequest.Add("counter", -3), 8)).isEqualTo(new StoreRequest.Add("counter", -3));
        assertThat(roundTrip(new StoreRequest.Wait(List.of("a", "ü"), 0), 9))
                .isEqualTo(new StoreRequest.Wait(List.of("a", "ü"), 0));
        assertThat(roundTrip(new StoreRequest.Check(List.of()), 10)).isEqualTo(new StoreRequest.Check(List.of()));
        assertThat(roundTrip(new StoreRequest.Delete("d"), 11)).isEqualTo(new StoreRequest.Delete("d"));
        assertThat(roundTrip(new StoreRequest.Cancel(41), 12)).isEqualTo(new StoreRequest.Cancel(41));
        assertThat(roundTrip(new StoreRequest.NumKeys(), Integer.MAX_VALUE)).isEqualTo(new StoreRequest.NumKeys());

        StoreRequest.Set set = (StoreRequest.Set) roundTrip(new StoreRequest.Set("s", new byte[] {0, -1, 5}), 1);
        assertThat(set.key()).isEqualTo("s");
        assertThat(set.value()).containsExactly(0, -1, 5);

        StoreRequest.CompareSet cas = (StoreRequest.CompareSet) roundTrip(
                new StoreRequest.CompareSet("c", new byte[0], new byte[] {9}), 2);
        assertThat(cas.key()).isEqualTo("c");
        assertThat(cas.expected()).isEmpty();
        assertThat(cas.desired()).containsExactly(9);
    }

    @Test
    void frameLayoutMatchesTheDocumentedByteTable() {
        byte[] frame = new StoreRequest.Delete("ab").encode(0x01020304);
        // length=5+4+2, id, op DELETE, str "ab"
        assertThat(frame).containsExactly(0, 0, 0, 11, 1, 2, 3, 4, 7, 0, 0, 0, 2, 'a', 'b');
    }

    @Test
    void aCleanEndOfStreamIsAnEofNotAProtocolError() {
        assertThatThrownBy(() -> readFrame(new byte[0])).isExactlyInstanceOf(EOFException.class);
    }

    @Test
    void lengthsOutsideTheLimitsAreRejectedBeforeReadingTheBody() {
        assertThatThrownBy(() -> readFrame(new byte[] {0, 0, 0, 4, 0, 0, 0, 0}))
                .isInstanceOf(ProtocolException.class).hasMessageContaining("frame length 4");
        assertThatThrownBy(() -> readFrame(new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff}))
                .isInstanceOf(ProtocolException.class).hasMessageContaining("4294967295");
        assertThatThrownBy(() -> readFrame(new byte[] {0x04, 0, 0, 1}))
                .isInstanceOf(ProtocolException.class).hasMessageContaining("outside");
    }

    @Test
    void malformedBodiesAreProtocolErrors() throws IOException {
        assertDecodeFails(frame(99, new byte[0]), "unknown store opcode 99");
        // GET with a negative timeout
        assertDecodeFails(frame(StoreProtocol.OP_GET, new byte[] {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0}),
                "negative timeout");
        // DELETE whose key length is negative
        assertDecodeFails(frame(StoreProtocol.OP_DELETE, new byte[] {-1, -1, -1, -1}), "length -1");
        // DELETE whose key is not UTF-8
        assertDecodeFails(frame(StoreProtocol.OP_DELETE, new byte[] {0, 0, 0, 1, (byte) 0xff}), "UTF-8");
        // NUM_KEYS with trailing bytes
        assertDecodeFails(frame(StoreProtocol.OP_NUM_KEYS, new byte[] {1}), "trailing");
        // CHECK claiming a billion keys
        assertDecodeFails(frame(StoreProtocol.OP_CHECK, new byte[] {0x40, 0, 0, 0}), "key count");
        // ADD cut short in its delta
        byte[] add = new StoreRequest.Add("k", 1).encode(1);
        byte[] truncatedBody = Arrays.copyOfRange(add, 9, add.length - 3);
        assertDecodeFails(frame(StoreProtocol.OP_ADD, truncatedBody), "int64");
    }

    private static byte[] frame(int type, byte[] body) {
        byte[] frame = new byte[9 + body.length];
        int length = 5 + body.length;
        frame[0] = (byte) (length >>> 24);
        frame[1] = (byte) (length >>> 16);
        frame[2] = (byte) (length >>> 8);
        frame[3] = (byte) length;
        frame[7] = 1;
        frame[8] = (byte) type;
        System.arraycopy(body, 0, frame, 9, body.length);
        return frame;
    }

    private static void assertDecodeFails(byte[] bytes, String message) throws IOException {
        Frame frame = readFrame(bytes);
        assertThatThrownBy(() -> StoreRequest.decode(frame))
                .isInstanceOf(ProtocolException.class).hasMessageContaining(message);
    }
}
