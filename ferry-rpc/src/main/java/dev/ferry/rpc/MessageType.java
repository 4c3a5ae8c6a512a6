package dev.ferry.rpc;

/**
 * The kinds of messages an agent sends, as {@link FaultInjection} names them (PyTorch's
 * {@code MessageType}, as its faulty agent's {@code messages_to_fail} and
 * {@code messages_to_delay} name them). Each message has exactly one kind.
 *
 * <table>
 *   <caption>Message kinds</caption>
 *   <tr><th>kind</th><th>what sends it</th><th>PyTorch</th></tr>
 *   <tr><td>{@link #CALL}</td><td>{@code rpcSync}, {@code rpcAsync}, calls by name, calls on an RRef's value
 *       ({@code rref.rpcSync()}, {@code rref.rpcAsync()}, {@code RRef.proxy}), libraries' calls
 *       (distributed autograd's gradients, but its releases)</td><td>{@code PYTHON_CALL}, {@code SCRIPT_CALL}</td></tr>
 *   <tr><td>{@link #REMOTE_CALL}</td><td>{@code remote()}, {@code rref.remote()}: the call that creates an RRef on
 *       its owner</td><td>{@code PYTHON_REMOTE_CALL}, {@code SCRIPT_REMOTE_CALL}</td></tr>
 *   <tr><td>{@link #RREF_FETCH_CALL}</td><td>{@code toHere()} of a user RRef</td>
 *       <td>{@code PYTHON_RREF_FETCH_CALL}, {@code SCRIPT_RREF_FETCH_CALL}</td></tr>
 *   <tr><td>{@link #RREF_FORK_REQUEST}</td><td>a user that received an RRef from another user, to the owner</td>
 *       <td>{@code RREF_FORK_REQUEST}</td></tr>
 *   <tr><td>{@link #RREF_CHILD_ACCEPT}</td><td>the receiver of an RRef, to the user that sent it</td>
 *       <td>{@code RREF_CHILD_ACCEPT}</td></tr>
 *   <tr><td>{@link #RREF_USER_DELETE}</td><td>a user RRef released ({@code close()}, collected, shutdown), to
 *       the owner, when its delete travels on its own; a delete riding on another call travels as that call's
 *       kind</td><td>{@code RREF_USER_DELETE}</td></tr>
 *   <tr><td>{@link #AUTOGRAD_CLEANUP}</td><td>distributed autograd (ferry-distributed): the release of a context,
 *       from its creator to the workers it reached and on from them; sent again when its send fails, as the
 *       RRef protocol's messages are</td><td>{@code CLEANUP_AUTOGRAD_CONTEXT_REQ}</td></tr>
 *   <tr><td>{@link #RESPONSE}</td><td>the answer (result or error) to a {@link #CALL} or a {@link #REMOTE_CALL}</td>
 *       <td>{@code PYTHON_RET}, {@code SCRIPT_RET}, {@code REMOTE_RET}, ...</td></tr>
 *   <tr><td>{@link #CONTROL}</td><td>Ferry's other own calls: heartbeats, the all-gathers of {@code barrier},
 *       {@code allGather} and graceful shutdown, function binding, profiles; and the answers to all of Ferry's
 *       own calls (a fetched RRef value, the RRef protocol's acknowledgements)</td><td>(internal)</td></tr>
 * </table>
 *
 * The handshake that opens a connection has no kind: fault injection never touches it (use
 * {@link FaultInjection.Builder#failConnectionsTo} to cut a peer off).
 */
public enum MessageType {
    /** A call whose answer the caller waits for. */
    CALL,
    /** A call that creates an RRef on the callee ({@code remote()}). */
    REMOTE_CALL,
    /** A user RRef's fetch of its value from the owner ({@code toHere()}). */
    RREF_FETCH_CALL,
    /** A user announcing to the owner the fork it received from another user. */
    RREF_FORK_REQUEST,
    /** The receiver of a fork telling its sender the fork is confirmed. */
    RREF_CHILD_ACCEPT,
    /** A user RRef's delete, to its owner. */
    RREF_USER_DELETE,
    /**
     * Distributed autograd's release of a context on a worker it reached: a library's call that
     * names its kind ({@link dev.ferry.rpc.spi.MessageKinds}).
     */
    AUTOGRAD_CLEANUP,
    /** The answer to a {@link #CALL} or {@link #REMOTE_CALL}: its result or its error. */
    RESPONSE,
    /** Ferry's other own messages, and the answers to all its own: heartbeats, all-gathers, fetched values. */
    CONTROL
}
