package dev.ferry.rpc.internal.wire;

/**
 * How a message may travel: stated once by its sender (the agent), kept by every route a
 * transport may take, and never inferred from what the message carries.
 *
 * <ul>
 *   <li><b>ordered</b>: a barrier among the messages to its peer. Nothing sent before it arrives
 *       after it, and nothing sent after it arrives before it (the RRef protocol, RRef deletes
 *       riding on a call, system calls, interceptors' context rely on that). An unordered message
 *       may overtake a large one still in flight and may take a route of its own (a lane).</li>
 *   <li><b>alone</b>: its sender waits for this exchange and nothing else with the peer (a call
 *       with no other call of the sender in flight to that peer; the answer to such a call when
 *       the peer has no other call waiting here). Such a message is worth writing at once on the
 *       sending thread; others are left to the transport's batching. A hint: it chooses how bytes
 *       move, never what arrives.</li>
 * </ul>
 * On the wire only what the receiver uses appears: a CALL sent alone carries
 * {@link FrameCodec#FLAG_LONE} (its callee may then write the answer at once). Order needs no flag:
 * receivers deliver each connection's messages in arrival order, and the sending transport keeps
 * ordered messages in place.
 *
 * <p>Immutable.
 */
public record Delivery(boolean ordered, boolean alone) {
    /** A barrier, not alone. */
    public static final Delivery ORDERED = new Delivery(true, false);
    /** Neither. */
    public static final Delivery UNORDERED = new Delivery(false, false);
    private static final Delivery ORDERED_ALONE = new Delivery(true, true);
    private static final Delivery UNORDERED_ALONE = new Delivery(false, true);

    /** The delivery with these properties (shared instances). */
    public static Delivery of(boolean ordered, boolean alone) {
        return ordered ? (alone ? ORDERED_ALONE : ORDERED) : (alone ? UNORDERED_ALONE : UNORDERED);
    }
}
