package dev.ferry.rpc.internal.transport;

/**
 * What a connection does with the control units of bulk connections ({@code BulkUnits}), and with
 * the sign that its peer sends large messages. Called on the connection's event loop.
 */
interface BulkControl {
    /**
     * A connection without bulk connections: offers are ignored (the peer has them, this side not),
     * the other units are a protocol error.
     */
    BulkControl NONE = new BulkControl() {
        @Override
        public void offer(long token, int port) {
        }
    };

    /** The peer accepts bulk connections for this connection at {@code port}, naming them {@code token}. */
    default void offer(long token, int port) {
        throw unexpected("offer");
    }

    /** This (accepted) connection is lane {@code lane} of the main connection the peer knows as {@code token}. */
    default void laneHello(long token, int lane) {
        throw unexpected("lane hello");
    }

    /** The peer received spread message {@code stream} whole. */
    default void done(int stream) {
        throw unexpected("done");
    }

    /** The peer gave up sending spread message {@code stream}. */
    default void abort(int stream) {
        throw unexpected("abort");
    }

    /** A chunk of a large message arrived (the peer sends large messages: bulk connections may pay). */
    default void largeArriving() {
    }

    private static dev.ferry.rpc.RpcException unexpected(String unit) {
        return new dev.ferry.rpc.RpcException(dev.ferry.rpc.RpcException.Code.PROTOCOL_ERROR,
                "unexpected bulk-connection unit (" + unit + ") on this connection");
    }
}
