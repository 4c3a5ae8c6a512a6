package com.example.peek;

import dev.ferry.rpc.internal.agent.DefaultRpcAgent;

/** Does not compile: Ferry's internal packages are not exported. */
public final class Peek {
    private Peek() {
    }

    public static Class<?> agent() {
        return DefaultRpcAgent.class;
    }
}
