package dev.ferry.rpc.internal.serial;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.WorkerInfo;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class WireSerializersTest {
    record Point(int x, int y) {
    }

    private static final ObjectCodec CODEC = new ObjectCodec(new ClassPolicy(List.of("dev.ferry")), List.of(), 64 * 1024);

    private static Object roundTrip(Object value) {
        EncodedPayload payload = CODEC.encode(value);
        assertThat(payload.outOfBand()).isEmpty();
        return CODEC.decode(ByteBuffer.wrap(payload.inBand()), List.of());
    }

    private static FunctionRef function(Object[] captured) {
        return new FunctionRef("com.example.Functions", "add", "(II)I", 6, captured);
    }

    @Test
    void aCallRequestComesBackWithItsFunctionAndArguments() {
        CallRequest request = new CallRequest(function(new Object[] {"prefix", 7L}), new Object[] {1, "two", null, 3.5});

        CallRequest back = (CallRequest) roundTrip(request);

        FunctionRef f = back.function();
        assertThat(f.className()).isEqualTo("com.example.Functions");
        assertThat(f.methodName()).isEqualTo("add");
        assertThat(f.descriptor()).isEqualTo("(II)I");
        assertThat(f.kind()).isEqualTo(6);
        assertThat(f.captured()).containsExactly("prefix", 7L);
        assertThat(back.args()).containsExactly(1, "two", null, 3.5);
    }

    @Test
    void nullAndEmptyValueArraysStayDistinct() {
        CallRequest back = (CallRequest) roundTrip(new CallRequest(function(null), new Object[0]));
        assertThat(back.function().captured()).isNull();
        assertThat(back.args()).isEmpty();

        back = (CallRequest) roundTrip(new CallRequest(function(new Object[0]), null));
        assertThat(back.function().captured()).isEmpty();
        assertThat(back.args()).isNull();
    }

    @Test
    void anArgumentPassedTwiceArrivesAsOneObject() {
        Point shared = new Point(1, 2);
        int[] array = {4, 5};
        CallRequest back = (CallRequest) roundTrip(
                new CallRequest(function(new Object[] {shared}), new Object[] {shared, array, array}));

        assertThat(back.args()[0]).isEqualTo(shared).isSameAs(back.function().captured()[0]);
        assertThat(back.args()[1]).isSameAs(back.args()[2]);
        assertThat((int[]) back.args()[1]).containsExactly(4, 5);
    }

    @Test
    void workerInfoRoundTrips() {
        assertThat(roundTrip(new WorkerInfo("trainer", 3))).isEqualTo(new WorkerInfo("trainer", 3));
        assertThat(roundTrip(List.of(new WorkerInfo("a", 0), new WorkerInfo("b", 1))))
                .isEqualTo(List.of(new WorkerInfo("a", 0), new WorkerInfo("b", 1)));
    }

    @Test
    void aCorruptArgumentCountFailsThatMessageClearly() {
        // No arguments: the stream ends with the argument count, zig-zag varint 0. Make it claim
        // 100 arguments (zig-zag 200: 0xc8 0x01) with no bytes left for them.
        byte[] bytes = CODEC.encode(new CallRequest(function(null), new Object[0])).inBand();
        assertThat(bytes[bytes.length - 1]).isZero();
        byte[] corrupt = Arrays.copyOf(bytes, bytes.length + 1);
        corrupt[bytes.length - 1] = (byte) 0xc8;
        corrupt[bytes.length] = 0x01;

        assertThatThrownBy(() -> CODEC.decode(ByteBuffer.wrap(corrupt), List.of()))
                .isInstanceOf(RpcException.class)
                .hasMessageContaining("value count 100");
        // the codec still works for the next message
        assertThat(((CallRequest) roundTrip(new CallRequest(function(null), new Object[] {9}))).args()).containsExactly(9);
    }

    @Test
    void aFunctionDecodedAgainSharesItsNamesAndKey() {
        FunctionRef first = ((CallRequest) roundTrip(new CallRequest(function(null), new Object[] {1}))).function();
        FunctionRef second = ((CallRequest) roundTrip(new CallRequest(function(new Object[] {"c"}), new Object[] {2}))).function();

        assertThat(second.className()).isSameAs(first.className());
        assertThat(second.displayName()).isEqualTo("Functions::add").isSameAs(first.displayName());
        assertThat(second.key()).isSameAs(first.key());
        assertThat(second.captured()).containsExactly("c");
        assertThat(first.captured()).isNull();
    }

    @Test
    void manyDistinctFunctionsAllComeBackAsThemselves() {
        // more than the identity table has slots: collisions and evictions decode again
        for (int i = 0; i < 3000; i++) {
            FunctionRef f = new FunctionRef("com.example.F" + i, "m" + (i % 7), "(I)I", 6, null);
            FunctionRef back = ((CallRequest) roundTrip(new CallRequest(f, new Object[0]))).function();
            assertThat(back.key()).isEqualTo(f.key());
        }
    }

    @Test
    void aCorruptFunctionIdentityFailsThatMessageClearly() {
        byte[] bytes = CODEC.encode(new CallRequest(function(null), new Object[0])).inBand();
        byte[] identity = function(null).identityBytes();
        int at = indexOf(bytes, identity);
        byte[] corrupt = Arrays.copyOf(bytes, bytes.length);
        corrupt[at] = (byte) (corrupt[at] + 1); // the class name's length now runs into the next name

        assertThatThrownBy(() -> CODEC.decode(ByteBuffer.wrap(corrupt), List.of()))
                .isInstanceOf(RpcException.class)
                .hasMessageContaining("function identity");
    }

    @Test
    void aBoundFunctionTravelsAsItsHandleAndComesBackAsItself() {
        ObjectCodec callee = new ObjectCodec(new ClassPolicy(List.of()), List.of(), 64 * 1024);
        FunctionRef function = function(new Object[] {"prefix"});
        int handle = callee.bind(function);
        assertThat(callee.bind(new FunctionRef("com.example.Functions", "add", "(II)I", 6, null))).isEqualTo(handle);
        assertThat(callee.boundFunctions()).isEqualTo(1);

        CallRequest request = new CallRequest(function.withHandle(handle), new Object[] {1, 2});
        byte[] bound = callee.encode(request).inBand();
        byte[] byReference = callee.encode(new CallRequest(function, new Object[] {1, 2})).inBand();
        // the handle (two bytes: a zero length, then the handle) in place of the identity and its length
        assertThat(bound.length).isEqualTo(byReference.length - (function.identityBytes().length + 1) + 2);

        CallRequest back = (CallRequest) callee.decode(ByteBuffer.wrap(bound), List.of());
        assertThat(back.function().key()).isEqualTo(function.key());
        assertThat(back.function().displayName()).isEqualTo("Functions::add");
        assertThat(back.function().captured()).containsExactly("prefix");
        assertThat(back.args()).containsExactly(1, 2);
    }

    @Test
    void aHandleTheWorkerNeverGaveOutFailsThatMessageClearly() {
        ObjectCodec callee = new ObjectCodec(new ClassPolicy(List.of()), List.of(), 64 * 1024);
        ObjectCodec other = new ObjectCodec(new ClassPolicy(List.of()), List.of(), 64 * 1024);
        FunctionRef function = function(null);
        byte[] forged = callee.encode(new CallRequest(function.withHandle(other.bind(function) + 5), new Object[0])).inBand();

        assertThatThrownBy(() -> callee.decode(ByteBuffer.wrap(forged), List.of()))
                .isInstanceOfSatisfying(RpcException.class,
                        e -> assertThat(e.code()).isEqualTo(RpcException.Code.SERIALIZATION_ERROR))
                .hasMessageContaining("function handle 5, which this worker never gave out");
        // handles are the worker's own: another codec's handle means nothing here
        byte[] elsewhere = callee.encode(new CallRequest(function.withHandle(other.bind(function)), new Object[0])).inBand();
        assertThatThrownBy(() -> callee.decode(ByteBuffer.wrap(elsewhere), List.of()))
                .hasMessageContaining("function handle 0, which this worker never gave out");
    }

    @Test
    void aRemoteErrorComesBackWithItsFramesAndCauses() {
        IllegalStateException root = new IllegalStateException("disk full");
        RuntimeException error = new RuntimeException("cannot save", new IllegalArgumentException(null, root));
        RemoteErrorInfo info = RemoteErrorInfo.of(error);
        RemoteErrorInfo withNulls = new RemoteErrorInfo(null, "com.example.Failure", null,
                List.of(new RemoteErrorInfo.Frame("com.example.Gen", "run", null, -2)), info);

        assertThat(roundTrip(info)).isEqualTo(info);
        assertThat(roundTrip(withNulls)).isEqualTo(withNulls);
        assertThat(((RemoteErrorInfo) roundTrip(info)).cause().cause().message()).isEqualTo("disk full");
    }

    @Test
    void aRemoteErrorWithTooManyCausesOrAFalseFrameCountFailsThatMessageClearly() {
        RemoteErrorInfo chain = null;
        for (int i = 0; i < 40; i++) {
            chain = new RemoteErrorInfo("REMOTE_ERROR", "E" + i, null, List.of(), chain);
        }
        byte[] deep = CODEC.encode(chain).inBand();
        assertThatThrownBy(() -> CODEC.decode(ByteBuffer.wrap(deep), List.of()))
                .hasMessageContaining("a remote error with more than 32 causes");

        // No frames and no cause: the stream ends with frame count 0 and cause flag 0. Claim 127 frames.
        byte[] bytes = CODEC.encode(new RemoteErrorInfo("REMOTE_ERROR", "E", "m", List.of(), null)).inBand();
        assertThat(bytes[bytes.length - 2]).isZero();
        bytes[bytes.length - 2] = 0x7f;
        assertThatThrownBy(() -> CODEC.decode(ByteBuffer.wrap(bytes), List.of()))
                .hasMessageContaining("frame count 127 exceeds");
        // the codec still works for the next message
        assertThat(roundTrip(new RemoteErrorInfo("REMOTE_ERROR", "E", "m", List.of(), null))).isNotNull();
    }

    private static int indexOf(byte[] bytes, byte[] part) {
        outer:
        for (int i = 0; i + part.length <= bytes.length; i++) {
            for (int j = 0; j < part.length; j++) {
                if (bytes[i + j] != part[j]) {
                    continue outer;
                }
            }
            return i;
        }
        throw new AssertionError("not found");
    }
}
