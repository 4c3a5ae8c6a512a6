package dev.ferry.rpc.internal.rref;

import dev.ferry.rpc.GloballyUniqueId;
import dev.ferry.rpc.RRef;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.serial.ObjectCodec;
import org.apache.fory.config.Config;
import org.apache.fory.context.ReadContext;
import org.apache.fory.context.WriteContext;
import org.apache.fory.memory.MemoryBuffer;
import org.apache.fory.serializer.Serializer;

/**
 * Writes an RRef into a message as a fork ({@link RRefContext#fork}) and reads it back as this
 * worker's handle ({@link RRefContext#receive}), in the context of the agent whose codec is at
 * work on this thread ({@link ObjectCodec#currentAttachment()}).
 *
 * <pre>
 * | owner id | rref created on | rref local id | fork created on | fork local id | parent id |
 * |  int32   |      int32      |     int64     |      int32      |     int64     |   int32   |
 * </pre>
 */
@SuppressWarnings("rawtypes")
public final class RRefSerializer extends Serializer<RRef> {
    public RRefSerializer(Config config) {
        super(config, RRef.class);
    }

    /** The RRef context of the agent whose codec runs on this thread. */
    private static RRefContext context() {
        if (ObjectCodec.currentAttachment() instanceof RRefContext context) {
            return context;
        }
        throw new RpcException(RpcException.Code.SERIALIZATION_ERROR,
                "an RRef can only be serialized inside a Ferry call of the agent that holds it");
    }

    @Override
    public void write(WriteContext write, RRef value) {
        ForkData fork = context().fork(value);
        MemoryBuffer buffer = write.getBuffer();
        buffer.writeInt32(fork.ownerId());
        buffer.writeInt32(fork.rrefId().createdOn());
        buffer.writeInt64(fork.rrefId().localId());
        buffer.writeInt32(fork.forkId().createdOn());
        buffer.writeInt64(fork.forkId().localId());
        buffer.writeInt32(fork.parentId());
    }

    @Override
    public RRef read(ReadContext read) {
        MemoryBuffer buffer = read.getBuffer();
        int owner = buffer.readInt32();
        GloballyUniqueId rrefId = new GloballyUniqueId(buffer.readInt32(), buffer.readInt64());
        GloballyUniqueId forkId = new GloballyUniqueId(buffer.readInt32(), buffer.readInt64());
        int parent = buffer.readInt32();
        return context().receive(new ForkData(owner, rrefId, forkId, parent));
    }
}
