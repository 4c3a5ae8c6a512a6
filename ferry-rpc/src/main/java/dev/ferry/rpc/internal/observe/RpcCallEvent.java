package dev.ferry.rpc.internal.observe;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * A JDK Flight Recorder event per call this worker made: from the send to the answer (or the
 * failure: timeout, lost connection, remote error). Off unless a recording enables
 * {@value #NAME}; then it costs an event object per call.
 *
 * <pre>
 *   java -XX:StartFlightRecording=filename=calls.jfr,settings=profile ...  (or jcmd PID JFR.start)
 *   jfr print --events dev.ferry.rpc.Call calls.jfr
 * </pre>
 */
@Name(RpcCallEvent.NAME)
@Label("Ferry RPC Call")
@Category({"Ferry", "RPC"})
@Description("A call this worker sent, from the send to its outcome")
@StackTrace(false)
public final class RpcCallEvent extends Event {
    /** The event's name in recordings. */
    public static final String NAME = "dev.ferry.rpc.Call";

    @Label("Caller")
    public String caller;

    @Label("Callee")
    public String callee;

    @Label("Function")
    public String function;

    @Label("Request Size")
    @Description("Encoded arguments, in band and out of band")
    @DataAmount
    public long requestBytes;

    @Label("Ferry Internal")
    @Description("One of Ferry's own calls (RRef protocol, gathers), not the application's")
    public boolean system;

    @Label("Outcome")
    @Description("ok, or the RpcException code (TIMEOUT, REMOTE_ERROR, UNAVAILABLE, ...)")
    public String outcome;
}
