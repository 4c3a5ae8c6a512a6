package dev.ferry.rpc.internal.transport;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.util.UncheckedBooleanSupplier;

/**
 * The read-buffer policy of one connection: Netty's adaptive sizing, except that while a chunk's
 * data is expected, the read goes straight into the message's own buffer ({@link UnitReader#directTarget}).
 */
final class DirectReadAllocator implements RecvByteBufAllocator {
    private final RecvByteBufAllocator sizes = new AdaptiveRecvByteBufAllocator();
    private final UnitReader reader;

    DirectReadAllocator(UnitReader reader) {
        this.reader = reader;
    }

    @Override
    public Handle newHandle() {
        return new DirectHandle((ExtendedHandle) sizes.newHandle());
    }

    private final class DirectHandle extends DelegatingHandle implements ExtendedHandle {
        DirectHandle(ExtendedHandle delegate) {
            super(delegate);
        }

        @Override
        public ByteBuf allocate(ByteBufAllocator alloc) {
            ByteBuf target = reader.directTarget();
            return target != null ? target : super.allocate(alloc);
        }

        @Override
        public boolean continueReading(UncheckedBooleanSupplier maybeMoreDataSupplier) {
            return ((ExtendedHandle) delegate()).continueReading(maybeMoreDataSupplier);
        }
    }
}
