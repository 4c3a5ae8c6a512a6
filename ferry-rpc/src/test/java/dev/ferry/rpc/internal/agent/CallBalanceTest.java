package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.internal.wire.FrameCodec;
import dev.ferry.rpc.internal.wire.InboundMessage;
import dev.ferry.rpc.internal.wire.MessageKind;
import dev.ferry.rpc.spi.CallHeaders;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.List;

import static dev.ferry.rpc.internal.wire.MessageKind.CALL;
import static dev.ferry.rpc.internal.wire.MessageKind.ERROR;
import static dev.ferry.rpc.internal.wire.MessageKind.HELLO;
import static dev.ferry.rpc.internal.wire.MessageKind.REPLY;
import static org.assertj.core.api.Assertions.assertThat;

class CallBalanceTest {
    private static InboundMessage read(MessageKind kind, long id, boolean lone) {
        return new InboundMessage(kind, id, CallHeaders.empty(), ByteBuffer.allocate(0), List.of(),
                lone ? FrameCodec.FLAG_LONE : 0);
    }

    @Test
    void callsOneAtATimeAreAloneEachWay() {
        CallBalance caller = new CallBalance();
        CallBalance callee = new CallBalance();
        for (long id = 1; id <= 3; id++) {
            boolean lone = caller.sending(CALL, id);
            assertThat(lone).as("a call with none of ours waiting").isTrue();
            callee.received(read(CALL, id, lone));
            MessageKind answer = id == 3 ? ERROR : REPLY;
            assertThat(callee.sending(answer, id)).as("the answer to the peer's only, lone call").isTrue();
            caller.received(read(answer, id, false));
        }
    }

    @Test
    void aWindowOfCallsAndTheirAnswersAreNot() {
        CallBalance caller = new CallBalance();
        CallBalance callee = new CallBalance();
        assertThat(caller.sending(CALL, 0)).isTrue();
        for (int i = 1; i < 8; i++) {
            assertThat(caller.sending(CALL, i)).as("call %d of a window", i).isFalse();
        }
        callee.received(read(CALL, 0, true));
        for (int i = 1; i < 8; i++) {
            callee.received(read(CALL, i, false));
        }
        for (int i = 0; i < 8; i++) {
            assertThat(callee.sending(REPLY, i)).as("answer %d", i).isFalse();
        }
        for (int i = 0; i < 7; i++) {
            caller.received(read(REPLY, i, false));
        }
        assertThat(caller.sending(CALL, 8)).as("one of ours still waits").isFalse();
        caller.received(read(REPLY, 7, false));
        caller.received(read(REPLY, 8, false));
        assertThat(caller.sending(CALL, 9)).as("all answered").isTrue();
    }

    @Test
    void theOnlyCallOfThePeersIsAnsweredAtOnceOnlyIfItCameLone() {
        CallBalance callee = new CallBalance();
        callee.received(read(CALL, 5, false));
        assertThat(callee.sending(REPLY, 5)).as("the peer had other calls in flight").isFalse();
        callee.received(read(CALL, 6, true));
        assertThat(callee.sending(REPLY, 6)).isTrue();
    }

    @Test
    void aMessageThatWasNotSentAfterAllDoesNotCount() {
        CallBalance caller = new CallBalance();
        assertThat(caller.sending(CALL, 1)).isTrue();
        caller.withdrawn(CALL); // refused as too large, say: never answered
        assertThat(caller.sending(CALL, 2)).as("still alone").isTrue();
        CallBalance callee = new CallBalance();
        callee.received(read(CALL, 3, true));
        callee.received(read(CALL, 4, false));
        assertThat(callee.sending(REPLY, 3)).isFalse();
        callee.withdrawn(REPLY); // its error goes instead
        assertThat(callee.sending(ERROR, 3)).isFalse();
        assertThat(callee.sending(REPLY, 4)).as("the last one waiting").isFalse();
        callee.received(read(CALL, 5, true));
        assertThat(callee.sending(REPLY, 5)).isTrue();
    }

    @Test
    void helloIsNeverAlone() {
        CallBalance balance = new CallBalance();
        balance.received(read(HELLO, 0, false));
        assertThat(balance.sending(HELLO, 0)).isFalse();
        assertThat(balance.sending(CALL, 1)).isTrue();
    }
}
