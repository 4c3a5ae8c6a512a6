/**
 * Concurrency building blocks of Ferry's RPC core: the threads the transport runs on, ordered
 * execution, and the internal write side of {@link dev.ferry.rpc.RpcFuture}. Not public API: the
 * classes here may change in any release.
 */
package dev.ferry.rpc.internal.concurrent;
