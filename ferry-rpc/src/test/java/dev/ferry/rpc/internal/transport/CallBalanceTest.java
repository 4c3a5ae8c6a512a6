package dev.ferry.rpc.internal.transport;

import org.junit.jupiter.api.Test;

import static dev.ferry.rpc.internal.wire.MessageKind.CALL;
import static dev.ferry.rpc.internal.wire.MessageKind.ERROR;
import static dev.ferry.rpc.internal.wire.MessageKind.HELLO;
import static dev.ferry.rpc.internal.wire.MessageKind.REPLY;
import static org.assertj.core.api.Assertions.assertThat;

class CallBalanceTest {
    @Test
    void callsOneAtATimeAreAloneEachWay() {
        CallBalance caller = new CallBalance();
        CallBalance callee = new CallBalance();
        for (int i = 0; i < 3; i++) {
            assertThat(caller.sending(CALL)).as("a call with none of ours waiting").isTrue();
            callee.received(CALL);
            assertThat(callee.sending(i == 2 ? ERROR : REPLY)).as("the answer to the peer's only call").isTrue();
            caller.received(i == 2 ? ERROR : REPLY);
        }
    }

    @Test
    void aWindowOfCallsAndABacklogOfAnswersAreNot() {
        CallBalance caller = new CallBalance();
        CallBalance callee = new CallBalance();
        assertThat(caller.sending(CALL)).isTrue();
        for (int i = 1; i < 8; i++) {
            assertThat(caller.sending(CALL)).as("call %d of a window", i).isFalse();
        }
        for (int i = 0; i < 8; i++) {
            callee.received(CALL);
        }
        for (int i = 0; i < 7; i++) {
            assertThat(callee.sending(REPLY)).as("answer %d with more to answer", i).isFalse();
        }
        assertThat(callee.sending(REPLY)).as("the last answer").isTrue();
        for (int i = 0; i < 7; i++) {
            caller.received(REPLY);
        }
        assertThat(caller.sending(CALL)).as("one of ours still waits").isFalse();
        caller.received(REPLY);
        caller.received(REPLY);
        assertThat(caller.sending(CALL)).as("all answered").isTrue();
    }

    @Test
    void helloIsNeverAlone() {
        CallBalance balance = new CallBalance();
        balance.received(HELLO);
        assertThat(balance.sending(HELLO)).isFalse();
        assertThat(balance.sending(CALL)).isTrue();
    }
}
