package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.spi.HeaderKey;

import java.util.Map;

/**
 * Ferry's own remote functions (the all-gather protocol behind {@code allGather}, {@code barrier}
 * and graceful shutdown). They travel like any function but carry {@link #MARKER}, so they are not
 * counted as application work when shutdown waits for the group to become idle.
 */
public final class SystemCalls {
    /** Header marking a call as Ferry's own. */
    static final HeaderKey<String> MARKER = HeaderKey.ofString("ferry-system");

    private SystemCalls() {
    }

    /** Runs on the leader: records one worker's contribution to gather {@code id}. */
    static Boolean gatherToLeader(String id, String name, Object value) {
        agent().allGathers().contribute(id, name, value);
        return Boolean.TRUE;
    }

    /** Runs on a follower: delivers the gathered values of {@code id}. */
    static Boolean broadcastToFollowers(String id, Map<String, Object> gathered) {
        agent().allGathers().deliver(id, gathered);
        return Boolean.TRUE;
    }

    private static DefaultRpcAgent agent() {
        if (CurrentAgent.handling() instanceof DefaultRpcAgent agent) {
            return agent;
        }
        throw new RpcException(RpcException.Code.ILLEGAL_STATE, "system call outside of a Ferry request handler");
    }
}
