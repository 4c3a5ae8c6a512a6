package dev.ferry.rpc.internal.serial;

import dev.ferry.rpc.WorkerInfo;
import dev.ferry.rpc.spi.TypeRegistry;

import java.util.List;

/**
 * The explicit, stable type ids of Ferry's own wire types. Ids are part of the wire format:
 * never renumber or reuse one; append new types with new ids below {@link TypeRegistry#FIRST_USER_ID}.
 */
public final class WireTypes {
    private static final List<Class<?>> TYPES_BY_ID_FROM_300 = List.of(
            FunctionRef.class,        // 300
            CallRequest.class,        // 301
            RemoteErrorInfo.class,    // 302
            RemoteErrorInfo.Frame.class, // 303 (written within RemoteErrorInfo now; the id stays taken)
            WorkerInfo.class          // 304
    );
    private static final int FIRST_ID = 300;
    /**
     * The id of the agent's connection handshake record, which the agent registers with its own
     * serializer (the record lives with the agent; registering it there keeps packages acyclic).
     */
    public static final int HELLO_ID = 305;
    /** The id of {@code RRef}, whose serializer is bound to each agent's RRef context. */
    public static final int RREF_ID = 399;

    private WireTypes() {
    }

    static void registerAll(TypeRegistry registry) {
        for (int i = 0; i < TYPES_BY_ID_FROM_300.size(); i++) {
            Class<?> type = TYPES_BY_ID_FROM_300.get(i);
            int id = FIRST_ID + i;
            if (type == FunctionRef.class) {
                registry.register(type, id, resolver -> new WireSerializers.FunctionRefSerializer(resolver.getConfig()));
            } else if (type == CallRequest.class) {
                registry.register(type, id, resolver -> new WireSerializers.CallRequestSerializer(resolver.getConfig()));
            } else if (type == RemoteErrorInfo.class) {
                registry.register(type, id, resolver -> new WireSerializers.RemoteErrorInfoSerializer(resolver.getConfig()));
            } else if (type == WorkerInfo.class) {
                registry.register(type, id, resolver -> new WireSerializers.WorkerInfoSerializer(resolver.getConfig()));
            } else {
                registry.register(type, id);
            }
        }
    }
}
