package dev.ferry.rpc;

/**
 * Marker for the functions Ferry can call remotely: {@link RpcFunction0} to {@link RpcFunction5}.
 * Implement those through method references or lambdas; do not implement this interface directly.
 */
public interface RemoteFunction {
}
