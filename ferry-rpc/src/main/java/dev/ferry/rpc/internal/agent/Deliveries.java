package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.internal.serial.FunctionRef;
import dev.ferry.rpc.spi.CallHeaders;
import dev.ferry.rpc.internal.wire.Delivery;

/**
 * The one place that decides which messages the agent sends are ordered ({@link Delivery#ordered}):
 *
 * <table>
 *   <caption>Ordered messages</caption>
 *   <tr><th>message</th><th>ordered</th><th>why</th></tr>
 *   <tr><td>Ferry's own calls (all-gather, RRef protocol, deletes on their own)</td><td>yes</td>
 *       <td>the RRef protocol and shutdown's all-gathers rely on arriving in the order sent</td></tr>
 *   <tr><td>Ferry's cancel of a call ({@link SystemCalls#cancelCall})</td><td>no</td><td>it must not wait behind
 *       what was sent before it, the large call it cancels still in chunks included; when it overtakes its call,
 *       the callee remembers it ({@link EarlyCancels}). It carries no RRef deletes</td></tr>
 *   <tr><td>a call creating an RRef ({@code remote()})</td><td>yes</td><td>a fetch or fork sent after it
 *       must find the RRef registered</td></tr>
 *   <tr><td>a call RRef deletes ride on (only calls ordered anyway take them: {@link UserDeletes})</td>
 *       <td>yes</td><td>a delete must not overtake the messages about that RRef sent before it</td></tr>
 *   <tr><td>a call or answer carrying interceptors' context</td><td>yes</td><td>interceptors may rely on the
 *       order of what they send (tracing, distributed autograd)</td></tr>
 *   <tr><td>a plain call, a call on an RRef's value, a plain answer</td><td>no</td><td>nothing depends on
 *       their order; the RRef a call on its value carries needs no order either: an owner that meets it
 *       before its creation keeps a place for it and the call waits for the value, and the caller keeps its
 *       reference until the owner's acceptance comes back, so a delete cannot overtake the fork</td></tr>
 * </table>
 *
 * Whether a message is sent alone comes from the channel's {@link CallBalance}.
 *
 * <p>Stateless.
 */
final class Deliveries {
    private Deliveries() {
    }

    /**
     * Whether a call of {@code function} is a barrier for being one of Ferry's own ({@code system}):
     * all are but the cancel.
     */
    static boolean systemBarrier(boolean system, FunctionRef function) {
        return system && function != SystemCalls.CANCEL;
    }

    /**
     * The delivery of a call.
     *
     * @param system             one of Ferry's own calls, a barrier ({@link #systemBarrier})
     * @param interceptorContext interceptors added headers to it
     * @param headers            everything it carries, RRef deletes riding on it included
     */
    static Delivery ofCall(boolean system, boolean interceptorContext, CallHeaders headers, boolean alone) {
        boolean ordered = system || interceptorContext || headers.contains(AgentRRefHost.CREATE)
                || headers.contains(UserDeletes.HEADER);
        return Delivery.of(ordered, alone);
    }

    /** The delivery of an answer; {@code headers} are all interceptors' context. */
    static Delivery ofAnswer(CallHeaders headers, boolean alone) {
        return Delivery.of(!headers.isEmpty(), alone);
    }
}
