package dev.ferry.rpc.internal.observe;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * A JDK Flight Recorder event per request this worker ran: decoding, the function and sending the
 * answer, on the thread that ran it (an {@code @AsyncExecution} function's event ends when it returns
 * its future). Off unless a recording enables {@value #NAME}.
 */
@Name(RpcHandleEvent.NAME)
@Label("Ferry RPC Request")
@Category({"Ferry", "RPC"})
@Description("A request this worker ran for a caller")
@StackTrace(false)
public final class RpcHandleEvent extends Event {
    /** The event's name in recordings. */
    public static final String NAME = "dev.ferry.rpc.Request";

    @Label("Caller")
    public String caller;

    @Label("Function")
    public String function;

    @Label("Request Size")
    @DataAmount
    public long requestBytes;

    @Label("Asynchronous")
    @Description("An @AsyncExecution function: the answer follows when its future completes")
    public boolean asynchronous;

    @Label("Outcome")
    @Description("ok, or the class of what the function threw")
    public String outcome;
}
