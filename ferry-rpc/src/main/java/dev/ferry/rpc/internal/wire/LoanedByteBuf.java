package dev.ferry.rpc.internal.wire;

import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.buffer.UnpooledDirectByteBuf;

import java.nio.ByteBuffer;

/**
 * A {@link ByteBuffer} of lent memory ({@link Loans}) wrapped for Netty, as {@code
 * Unpooled.wrappedBuffer} does, that unpins or releases its loan when Netty is done with it (its
 * reference count reached zero: the frame it belongs to is written or dropped).
 *
 * <p>The loan and what to do with it are fields rather than a callback: the encoder creates these
 * only once large messages are sent, and a lambda linked then would cost the JIT's compiled encoder a
 * deoptimization at that moment ({@link FrameCodec} initializes this class for the same reason).
 */
final class LoanedByteBuf extends UnpooledDirectByteBuf {
    private final Loans.Loan loan;
    private final boolean release;

    /** @param release release the loan when done (true) or unpin it (false) */
    LoanedByteBuf(ByteBuffer buffer, Loans.Loan loan, boolean release) {
        super(UnpooledByteBufAllocator.DEFAULT, buffer, buffer.remaining());
        this.loan = loan;
        this.release = release;
    }

    @Override
    protected void deallocate() {
        super.deallocate();
        if (release) {
            loan.release();
        } else {
            loan.unpin();
        }
    }
}
