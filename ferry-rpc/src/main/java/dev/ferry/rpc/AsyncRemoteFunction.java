package dev.ferry.rpc;

/**
 * Marker for the {@link AsyncExecution} functions whose callers receive the value of the future
 * they return: {@link AsyncRpcFunction0} to {@link AsyncRpcFunction6}. Implement those through
 * method references or lambdas; do not implement this interface directly.
 */
public interface AsyncRemoteFunction extends RemoteFunction {
}
