package dev.ferry.rpc.internal.wire;

import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.buffer.UnpooledDirectByteBuf;

import java.nio.ByteBuffer;

/**
 * A {@link ByteBuffer} of lent memory ({@link Loans}) wrapped for Netty, as {@code
 * Unpooled.wrappedBuffer} does, that runs an action when Netty is done with it (its reference count
 * reached zero: the frame it belongs to is written or dropped), to unpin or release its loan.
 */
final class LoanedByteBuf extends UnpooledDirectByteBuf {
    private final Runnable done;

    LoanedByteBuf(ByteBuffer buffer, Runnable done) {
        super(UnpooledByteBufAllocator.DEFAULT, buffer, buffer.remaining());
        this.done = done;
    }

    @Override
    protected void deallocate() {
        super.deallocate();
        done.run();
    }
}
