package dev.ferry.rpc;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a short function that never blocks: the callee may run it on the transport thread that
 * read its request, saving the hand-off to a request thread (a microsecond or more, and one
 * thread fewer that polls; W1 on a 2-vCPU VM: ~3 µs of ~15). grpc-java's {@code directExecutor()}
 * makes the same trade.
 *
 * <pre>{@code
 * @DirectExecution
 * static int add(int a, int b) {
 *     return a + b;
 * }
 * }</pre>
 *
 * <p>Ferry runs it there when the caller had no other call in flight on the connection (calls made
 * one at a time, where the hand-off is most of the cost) and the request is small (at most
 * {@value #MAX_REQUEST_BYTES} bytes) with no RRef argument still unconfirmed; otherwise, and for
 * calls that come in batches, on a request thread as usual. Its contract:
 * <ul>
 *   <li>it must not wait: awaiting an {@link RpcFuture} (an {@code rpcSync}, a nested call's
 *       result) fails at once with {@link RpcException.Code#ILLEGAL_STATE}, as on any transport
 *       thread; making calls with {@code rpcAsync} and returning, or chaining with {@code then},
 *       is fine;</li>
 *   <li>it must be short: while it runs, that transport thread reads and writes for no other
 *       connection. Locks held long, sleeps and I/O belong in ordinary functions.</li>
 * </ul>
 * With {@link AsyncExecution} as well, the future it returns is what must come back at once.
 *
 * <p>An {@code rpcSync} usually goes over a synchronous-exchange lane
 * ({@link RpcBackendOptions.Builder#syncLanes}), where the callee runs every request, marked or
 * not, on the lane's own thread with no hand-off at all (and the contract above does not apply
 * there); the mark pays for calls over the connection: {@code rpcAsync} one at a time, or an
 * {@code rpcSync} that found every lane busy.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
public @interface DirectExecution {
    /** The largest request (payload bytes) run on the transport thread; larger ones are decoded elsewhere. */
    int MAX_REQUEST_BYTES = 16 * 1024;
}
