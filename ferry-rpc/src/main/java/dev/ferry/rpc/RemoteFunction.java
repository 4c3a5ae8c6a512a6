package dev.ferry.rpc;

/**
 * Marker for the functions Ferry can call remotely: {@link RpcFunction0} to {@link RpcFunction6}
 * (the last for methods of an {@link RRef}'s value with five arguments).
 * Implement those through method references or lambdas; do not implement this interface directly.
 */
public interface RemoteFunction {
}
