package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.internal.serial.WireTypes;
import dev.ferry.rpc.spi.TypeRegistry;
import org.apache.fory.config.Config;
import org.apache.fory.context.ReadContext;
import org.apache.fory.context.WriteContext;
import org.apache.fory.serializer.Serializer;

/**
 * The first message on a connection: the group it belongs to and the worker that opened it, which
 * incarnation of it (a restarted worker's new process has a higher one) and where it listens. A
 * worker that does not know the sender yet learns it from here: a Hello is how a worker that joins
 * a running group introduces itself.
 */
record Hello(String groupId, String name, int rank, long incarnation, String address) {

    /** Registers Hello under its wire id ({@link WireTypes#HELLO_ID}) with {@link WireSerializer}. */
    static void register(TypeRegistry registry) {
        registry.register(Hello.class, WireTypes.HELLO_ID, resolver -> new WireSerializer(resolver.getConfig()));
    }

    /**
     * {@code | groupId | name | rank | incarnation | address |}, written by hand for the reason WireSerializers gives: Fory
     * would generate a serializer class with Janino during {@code init}, and the JIT would then
     * compile Janino and the class-loading code it drove right after {@code init} returned.
     */
    static final class WireSerializer extends Serializer<Hello> {
        WireSerializer(Config config) {
            super(config, Hello.class, false, true);
        }

        @Override
        public void write(WriteContext write, Hello value) {
            write.writeString(value.groupId());
            write.writeString(value.name());
            write.writeVarInt32(value.rank());
            write.writeVarInt64(value.incarnation());
            write.writeString(value.address());
        }

        @Override
        public Hello read(ReadContext read) {
            String groupId = read.readString();
            String name = read.readString();
            int rank = read.readVarInt32();
            long incarnation = read.readVarInt64();
            return new Hello(groupId, name, rank, incarnation, read.readString());
        }
    }
}
